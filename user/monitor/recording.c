// SPDX-License-Identifier: GPL-2.0
/* recording.c - write recording files (the format in recording.h; reading
 * them is recording_read.c). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "monitor/recording.h"
#include "monitor/sequencer.h"
#include "lib/util.h"

#define OUT_CAP (256u << 10)    /* compressed bytes buffered before a write */
#define PEND_CAP (64u << 10)    /* JSON gathered before a deflate() call */

struct recording_writer {
	int fd;
	z_stream z;
	bool z_init;
	char *buf;                  /* one line */
	size_t cap;
	char *pend;                 /* whole lines not given to deflate yet */
	size_t pend_n;
	unsigned char *out;         /* compressed, not yet written */
	size_t out_n;
	uint64_t off;               /* bytes written to the file */
	uint64_t good;              /* end of the last complete member */
	uint64_t synced;            /* writeback started up to here */
	uint64_t member_in;         /* JSON bytes in the open member */
	uint64_t member_t0;         /* when its first line came */
	uint64_t members;
	int err;                    /* the first write error, -errno */
};

/* Write @n bytes at the end of the file. 0 or -errno (a short write is
 * -ENOSPC: what the kernel took is cut off again by w_fail). */
static int w_out(struct recording_writer *w, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t k = write(w->fd, c, n);

		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -errno;
		if (k == 0)
			return -ENOSPC;
		w->off += (uint64_t)k;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The first write error: remember it, and cut the file back to its last
 * complete member so what is there stays whole. Returns @err. */
static int w_fail(struct recording_writer *w, int err)
{
	if (!w->err) {
		w->err = err;
		if (!ftruncate(w->fd, (off_t)w->good) &&
		    lseek(w->fd, (off_t)w->good, SEEK_SET) == (off_t)w->good)
			w->off = w->good;
		w->out_n = 0;
		w->pend_n = 0;
		deflateReset(&w->z);   /* the member it was in is gone */
		w->member_in = 0;
	}
	return w->err;
}

/* Write out the compressed bytes held. 0 or -errno. */
static int w_drain(struct recording_writer *w)
{
	int err;

	if (!w->out_n)
		return 0;
	err = w_out(w, w->out, w->out_n);
	w->out_n = 0;
	return err ? w_fail(w, err) : 0;
}

/* Run deflate on the pending input with @flush, draining the output buffer
 * as it fills. 0 or -errno. */
static int w_deflate(struct recording_writer *w, int flush)
{
	for (;;) {
		int zr, err;

		w->z.next_out = w->out + w->out_n;
		w->z.avail_out = (uInt)(OUT_CAP - w->out_n);
		zr = deflate(&w->z, flush);
		w->out_n = OUT_CAP - w->z.avail_out;
		if (zr == Z_STREAM_ERROR)
			return w_fail(w, -EINVAL);
		if (flush == Z_FINISH ? zr == Z_STREAM_END : !w->z.avail_in && w->z.avail_out)
			return 0;
		err = w_drain(w);
		if (err)
			return err;
	}
}

/* Finish the open member (if it holds anything): deflate's end and the gzip
 * trailer, written out; writeback of the new member started. 0 or -errno. */
static int w_end_member(struct recording_writer *w)
{
	int err;

	if (w->err)
		return w->err;
	if (!w->member_in)
		return 0;
	w->z.next_in = (Bytef *)w->pend;
	w->z.avail_in = (uInt)w->pend_n;
	w->pend_n = 0;
	err = w_deflate(w, Z_FINISH);
	if (!err)
		err = w_drain(w);
	if (err)
		return err;
	deflateReset(&w->z);
	w->good = w->off;
	w->member_in = 0;
	w->members++;
	/* start the writeback now (no wait): a host crash loses seconds, not minutes */
	if (w->good > w->synced) {
		sync_file_range(w->fd, (off_t)w->synced, (off_t)(w->good - w->synced),
				SYNC_FILE_RANGE_WRITE);
		w->synced = w->good;
	}
	return 0;
}

/* Append one whole line (@n bytes, '\n' included) to the open member; end
 * the member when it is full. 0 or -errno. */
static int w_line(struct recording_writer *w, const char *line, size_t n)
{
	int err;

	if (w->err)
		return w->err;
	if (!w->member_in)
		w->member_t0 = mono_ns();
	if (w->pend_n + n > PEND_CAP) {
		/* deflate in large steps, as gzwrite does: per line costs more */
		w->z.next_in = (Bytef *)w->pend;
		w->z.avail_in = (uInt)w->pend_n;
		w->pend_n = 0;
		err = w_deflate(w, Z_NO_FLUSH);
		if (err)
			return err;
	}
	if (n > PEND_CAP) {
		w->z.next_in = (Bytef *)line;
		w->z.avail_in = (uInt)n;
		err = w_deflate(w, Z_NO_FLUSH);
		if (err)
			return err;
	} else {
		memcpy(w->pend + w->pend_n, line, n);
		w->pend_n += n;
	}
	w->member_in += n;
	return w->member_in >= REC_MEMBER_BYTES ? w_end_member(w) : 0;
}

static void w_free(struct recording_writer *w)
{
	if (w->z_init)
		deflateEnd(&w->z);
	if (w->fd >= 0)
		close(w->fd);
	free(w->buf);
	free(w->pend);
	free(w->out);
	free(w);
}

struct recording_writer *recording_create(const char *path, const struct recording_header *h)
{
	struct recording_writer *w = calloc(1, sizeof(*w));
	char line[4096];
	size_t n;
	int err;

	if (!w)
		return NULL;
	w->fd = -1;
	w->cap = REC_LINE_MAX;
	w->buf = malloc(w->cap);
	w->out = malloc(OUT_CAP);
	w->pend = malloc(PEND_CAP);
	if (!w->buf || !w->out || !w->pend) {
		err = ENOMEM;
		goto fail;
	}
	/* level 6 as gzopen's default "wb6"; 31: a gzip wrapper, 8: memLevel default */
	if (deflateInit2(&w->z, 6, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		err = ENOMEM;
		goto fail;
	}
	w->z_init = true;
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0) {
		err = errno;
		goto fail;
	}
	n = (size_t)snprintf(line, sizeof(line),
			     "{\"memtrace_recording\":1,\"pid\":%d,\"nspid\":%d,\"start_mono_ns\":%llu,"
			     "\"mono_to_real_ns\":%llu,\"jdk\":",
			     h->pid, h->nspid, (unsigned long long)h->start_mono_ns,
			     (unsigned long long)h->mono_to_real_ns);
	n += json_str_put(line + n, sizeof(line) - n, h->jdk);
	n += (size_t)snprintf(line + n, sizeof(line) - n, ",\"libjvm\":");
	n += json_str_put(line + n, sizeof(line) - n, h->libjvm);
	n += (size_t)snprintf(line + n, sizeof(line) - n, ",\"filter\":");
	n += json_str_put(line + n, sizeof(line) - n, h->filter);
	n += (size_t)snprintf(line + n, sizeof(line) - n, "}\n");
	/* the header is a member of its own: whatever happens later, it is whole */
	err = w_line(w, line, n);
	if (!err)
		err = w_end_member(w);
	if (err) {
		err = -err;
		goto fail;
	}
	return w;
fail:
	w_free(w);
	errno = err;
	return NULL;
}

#define PUT(key, val)                                                                   \
	do {                                                                            \
		if (val)                                                                \
			n += (size_t)snprintf(p + n, room - n, ",\"" key "\":%llu",     \
					      (unsigned long long)(val));               \
	} while (0)

/* Close the JSON object of @n bytes in w->buf and write the line. 0 or -errno. */
static int end_line(struct recording_writer *w, size_t n)
{
	w->buf[n++] = '}';
	w->buf[n++] = '\n';
	return w_line(w, w->buf, n);
}

int recording_write(struct recording_writer *w, const struct mt_ev *e, const char *text)
{
	char *p = w->buf;
	size_t room = w->cap - 2, n;
	const char *k = sequencer_ev_kind_name(e->kind);

	if (!k)
		return -EINVAL;
	if (e->kind == MT_EV_NAME) {
		n = (size_t)snprintf(p, room, "{\"k\":\"name\",\"id\":%llu,\"s\":",
				     (unsigned long long)e->id);
		n += json_str_put(p + n, room - n, text ? text : "");
	} else {
		n = (size_t)snprintf(p, room, "{\"k\":\"%s\",\"t\":%llu", k,
				     (unsigned long long)e->ts);
		PUT("f", e->flags);
		PUT("a", e->aux);
		PUT("th", e->thread);
		PUT("id", e->id);
		PUT("ref", e->ref);
		PUT("n", e->name);
		PUT("n2", e->name2);
		if (e->v[0] | e->v[1] | e->v[2] | e->v[3])
			n += (size_t)snprintf(p + n, room - n, ",\"v\":[%llu,%llu,%llu,%llu]",
					      (unsigned long long)e->v[0],
					      (unsigned long long)e->v[1],
					      (unsigned long long)e->v[2],
					      (unsigned long long)e->v[3]);
		PUT("u", e->uid);
	}
	return end_line(w, n);
}

static const char *const side_names[] = {
	[REC_SIDE_OSESSION] = "osession", [REC_SIDE_METHOD] = "method",
	[REC_SIDE_STACK] = "stack",       [REC_SIDE_OSTACK] = "ostack",
	[REC_SIDE_OGC] = "ogc",           [REC_SIDE_OSTATS] = "ostats",
	[REC_SIDE_SITEVOL] = "sitevol",   [REC_SIDE_SITEVOLS] = "sitevols",
};

const char *recording_side_name(enum recording_side_kind k)
{
	return k > REC_SIDE_NONE && (unsigned)k < MT_ARRAY_SIZE(side_names) ? side_names[k] : "";
}

enum recording_side_kind recording_side_kind(const char *k)
{
	for (size_t i = 1; i < MT_ARRAY_SIZE(side_names); i++)
		if (!strcmp(k, side_names[i]))
			return (enum recording_side_kind)i;
	return REC_SIDE_NONE;
}

int recording_write_side(struct recording_writer *w, const struct recording_side *sd)
{
	char *p = w->buf;
	size_t room = w->cap - 2, n;

	if (sd->kind <= REC_SIDE_NONE || sd->kind >= (int)MT_ARRAY_SIZE(side_names) ||
	    sd->nv > REC_SIDE_MAXV || sd->nfr > MT_AP_MAX_DEPTH)
		return -EINVAL;
	n = (size_t)snprintf(p, room, "{\"k\":\"%s\"", side_names[sd->kind]);
	if (sd->kind == REC_SIDE_OSESSION || sd->kind == REC_SIDE_OGC)
		n += (size_t)snprintf(p + n, room - n, ",\"t\":%llu", (unsigned long long)sd->ts);
	if (sd->kind == REC_SIDE_METHOD || sd->kind == REC_SIDE_STACK ||
	    sd->kind == REC_SIDE_OSTACK)
		n += (size_t)snprintf(p + n, room - n, ",\"id\":%llu", (unsigned long long)sd->id);
	if (sd->kind == REC_SIDE_OSTACK)
		n += (size_t)snprintf(p + n, room - n, ",\"st\":%llu", (unsigned long long)sd->st);
	if (sd->kind == REC_SIDE_METHOD || sd->kind == REC_SIDE_SITEVOL) {
		n += (size_t)snprintf(p + n, room - n, ",\"s\":");
		n += json_str_put(p + n, room - n, sd->s ? sd->s : "");
	}
	if (sd->kind == REC_SIDE_SITEVOLS)
		n += (size_t)snprintf(p + n, room - n, ",\"sec\":%.3f", sd->sec);
	if (sd->kind == REC_SIDE_STACK) {
		n += (size_t)snprintf(p + n, room - n, ",\"fr\":[");
		for (unsigned i = 0; i < sd->nfr; i++)
			n += (size_t)snprintf(p + n, room - n, "%s%u,%d", i ? "," : "",
					      sd->fr[i].method, sd->fr[i].line);
		n += (size_t)snprintf(p + n, room - n, "]");
	}
	if (sd->nv) {
		n += (size_t)snprintf(p + n, room - n, ",\"v\":[");
		for (unsigned i = 0; i < sd->nv; i++)
			n += (size_t)snprintf(p + n, room - n, "%s%llu", i ? "," : "",
					      (unsigned long long)sd->v[i]);
		n += (size_t)snprintf(p + n, room - n, "]");
	}
	return end_line(w, n);
}

uint64_t recording_written(const struct recording_writer *w)
{
	return w ? w->good : 0;
}

uint64_t recording_members(const struct recording_writer *w)
{
	return w ? w->members : 0;
}

int recording_tick(struct recording_writer *w, uint64_t now_ns)
{
	if (w->err)
		return w->err;
	if (w->member_in && now_ns - w->member_t0 >= REC_MEMBER_NS)
		return w_end_member(w);
	return 0;
}

int recording_close(struct recording_writer *w, const struct recording_trailer *t)
{
	char line[512];
	int err;

	if (!w)
		return 0;
	err = w_end_member(w);
	if (t) {
		size_t n = (size_t)snprintf(line, sizeof(line),
			 "{\"k\":\"end\",\"t\":%llu,\"lost\":%llu,\"duration_s\":%.3f,"
			 "\"jvm_exited\":%s,\"events_in\":%llu,\"events_out\":%llu,\"dropped\":%llu",
			 (unsigned long long)t->ts, (unsigned long long)t->lost, t->duration_s,
			 t->jvm_exited ? "true" : "false", (unsigned long long)t->events_in,
			 (unsigned long long)t->events_out, (unsigned long long)t->dropped);

		if (t->attached_ns)
			n += (size_t)snprintf(line + n, sizeof(line) - n, ",\"attached\":%llu",
					      (unsigned long long)t->attached_ns);

		if (err) {
			/* say why it ends early, if the disk takes these few bytes */
			n += (size_t)snprintf(line + n, sizeof(line) - n, ",\"error\":");
			n += json_str_put(line + n, sizeof(line) - n - 3, strerror(-err));
			w->err = 0;
		}
		n += (size_t)snprintf(line + n, sizeof(line) - n, "}\n");
		if (!w_line(w, line, n))
			w_end_member(w);
		if (!err)
			err = w->err;
	}
	if (close(w->fd) && !err)
		err = -errno;
	w->fd = -1;
	w_free(w);
	return err;
}
