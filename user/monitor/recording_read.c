// SPDX-License-Identifier: GPL-2.0
/* recording_read.c - read recording files (recording_read.h; the format in
 * recording.h): gzip members one by one, each member's lines handed out once
 * its CRC checked, each line parsed into an event or an object-sampling line. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "monitor/recording_read.h"
#include "monitor/sequencer.h"
#include "lib/jsoncur.h"
#include "lib/util.h"

#define IN_CAP (64u << 10)      /* compressed bytes read at a time */


enum rd_state {
	RD_BETWEEN,                 /* before a member (or the end) */
	RD_MEMBER,                  /* decoding a member */
	RD_VERIFIED,                /* buf holds a whole member, CRC checked */
	RD_TORN,                    /* the input ended inside the member */
	RD_END,                     /* nothing more: cut says why */
};

struct recording_reader {
	int fd;
	z_stream z;
	bool z_init;
	unsigned char *in;          /* compressed input, in[0] at file offset in_off */
	size_t in_len;
	uint64_t in_off;
	uint64_t data_end;          /* read no further than this (UINT64_MAX: the end) */
	uint64_t zero_at;           /* zeros from here to the end (UINT64_MAX: none) */
	bool redone;                /* the member at the zeros was read again before them */
	bool eof;
	char *dec;                  /* decoded bytes of the member; lines from dpos */
	size_t dlen, dpos, dcap;
	bool stream;                /* a member over REC_VERIFY_BYTES: lines as decoded */
	enum rd_state st;
	uint64_t member_off;        /* where the member being read began */
	char *line;                 /* the line handed out (NUL-terminated) */
	uint64_t lineno;
	char *text;
	struct recording_trailer trailer;
	struct recording_cut cut;
	recording_side_fn side_fn;
	void *side_ctx;
	char error[160];
};

/* ---- lines: the header, events, object-sampling lines ---- */

static void header_member(struct jsoncur *c, const char *key, void *arg)
{
	struct recording_header *h = arg;

	if (!strcmp(key, "pid"))
		h->pid = (int)jsoncur_num(c, NULL);
	else if (!strcmp(key, "nspid"))
		h->nspid = (int)jsoncur_num(c, NULL);
	else if (!strcmp(key, "start_mono_ns"))
		h->start_mono_ns = jsoncur_num(c, NULL);
	else if (!strcmp(key, "mono_to_real_ns"))
		h->mono_to_real_ns = jsoncur_num(c, NULL);
	else if (!strcmp(key, "jdk"))
		jsoncur_str(c, h->jdk, sizeof(h->jdk));
	else if (!strcmp(key, "libjvm"))
		jsoncur_str(c, h->libjvm, sizeof(h->libjvm));
	else if (!strcmp(key, "filter"))
		jsoncur_str(c, h->filter, sizeof(h->filter));
	else
		jsoncur_skip_value(c);
}

struct ev_parse {
	struct recording_reader *r;
	struct mt_ev *e;
	char kind[32];
	bool is_end;
};

static void ev_member(struct jsoncur *c, const char *key, void *arg)
{
	struct ev_parse *ep = arg;
	struct mt_ev *e = ep->e;
	struct recording_trailer *t = &ep->r->trailer;

	if (!strcmp(key, "k")) {
		jsoncur_str(c, ep->kind, sizeof(ep->kind));
	} else if (!strcmp(key, "s")) {
		jsoncur_str(c, ep->r->text, REC_LINE_MAX);
	} else if (!strcmp(key, "t")) {
		e->ts = t->ts = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "f")) {
		e->flags = (uint16_t)jsoncur_num(c, NULL);
	} else if (!strcmp(key, "a")) {
		e->aux = (uint32_t)jsoncur_num(c, NULL);
	} else if (!strcmp(key, "th")) {
		e->thread = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "id")) {
		e->id = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "ref")) {
		e->ref = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "n")) {
		e->name = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "n2")) {
		e->name2 = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "u")) {
		e->uid = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "v")) {
		if (*c->p != '[') {
			c->bad = true;
			return;
		}
		c->p++;
		for (int i = 0; i < 4 && !c->bad; i++) {
			jsoncur_skip_ws(c);
			e->v[i] = jsoncur_num(c, NULL);
			jsoncur_skip_ws(c);
			if (*c->p == ',')
				c->p++;
		}
		jsoncur_skip_ws(c);
		if (*c->p != ']')
			c->bad = true;
		else
			c->p++;
	} else if (!strcmp(key, "lost")) {
		t->lost = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "duration_s")) {
		jsoncur_num(c, &t->duration_s);
	} else if (!strcmp(key, "attached")) {
		t->attached_ns = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "events_in")) {
		t->events_in = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "events_out")) {
		t->events_out = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "dropped")) {
		t->dropped = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "error")) {
		jsoncur_str(c, t->error, sizeof(t->error));
	} else if (!strcmp(key, "jvm_exited")) {
		t->jvm_exited = !strncmp(c->p, "true", 4);
		jsoncur_skip_value(c);
	} else {
		jsoncur_skip_value(c);
	}
}


struct side_parse {
	struct recording_reader *r;
	struct recording_side *sd;
};

static void side_member(struct jsoncur *c, const char *key, void *arg)
{
	struct side_parse *sp = arg;
	struct recording_side *sd = sp->sd;
	int64_t vals[2 * MT_AP_MAX_DEPTH];
	unsigned n;

	if (!strcmp(key, "t")) {
		sd->ts = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "id")) {
		sd->id = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "st")) {
		sd->st = jsoncur_num(c, NULL);
	} else if (!strcmp(key, "sec")) {
		jsoncur_num(c, &sd->sec);
	} else if (!strcmp(key, "s")) {
		jsoncur_str(c, sp->r->text, REC_LINE_MAX);
		sd->s = sp->r->text;
	} else if (!strcmp(key, "v")) {
		jsoncur_ints(c, vals, REC_SIDE_MAXV, &n);
		for (unsigned i = 0; i < n; i++)
			sd->v[i] = (uint64_t)vals[i];
		sd->nv = n;
	} else if (!strcmp(key, "fr")) {
		jsoncur_ints(c, vals, 2 * MT_AP_MAX_DEPTH, &n);
		if (n % 2)
			c->bad = true;
		for (unsigned i = 0; i + 1 < n; i += 2) {
			sd->fr[i / 2].method = (uint32_t)vals[i];
			sd->fr[i / 2].line = (int32_t)vals[i + 1];
		}
		sd->nfr = n / 2;
	} else {
		jsoncur_skip_value(c);
	}
}

/* The kind of a line whose first member is "k" (every line we write), or "". */
static void line_kind(const char *line, char *out, size_t n)
{
	size_t k = 0;

	out[0] = '\0';
	if (strncmp(line, "{\"k\":\"", 6))
		return;
	for (line += 6; *line && *line != '"' && k + 1 < n; line++)
		out[k++] = *line;
	out[k] = '\0';
}

/* An object-sampling line: hand it to the handler. 0 or -EINVAL. */
static int side_line(struct recording_reader *r, enum recording_side_kind kind)
{
	struct recording_side *sd = calloc(1, sizeof(*sd));
	struct side_parse sp = { .r = r, .sd = sd };
	struct jsoncur c = { .p = r->line };

	if (!sd) {
		snprintf(r->error, sizeof(r->error), "out of memory at line %llu",
			 (unsigned long long)r->lineno);
		return -ENOMEM;
	}
	sd->kind = kind;
	r->text[0] = '\0';
	jsoncur_object(&c, side_member, &sp);
	if (c.bad) {
		snprintf(r->error, sizeof(r->error), "line %llu is not a valid \"%s\" line",
			 (unsigned long long)r->lineno, recording_side_name(kind));
		free(sd);
		return -EINVAL;
	}
	if (!sd->s)
		sd->s = r->text; /* a line without its "s": "", never NULL (found by fuzz_recording) */
	if (r->side_fn)
		r->side_fn(r->side_ctx, sd);
	free(sd);
	return 0;
}

void recording_on_side(struct recording_reader *r, recording_side_fn fn, void *ctx)
{
	r->side_fn = fn;
	r->side_ctx = ctx;
}

/* ---- the framing: members, lines ---- */

/* More compressed input: keep the unread tail, read after it. 1 if some
 * came, 0 at the end of the file, -errno. */
static int rd_fill(struct recording_reader *r)
{
	size_t keep = r->z.avail_in, want;
	ssize_t k;

	if (r->eof)
		return 0;
	if (keep && r->z.next_in != r->in)
		memmove(r->in, r->z.next_in, keep);
	r->in_off += r->in_len - keep;
	r->in_len = keep;
	want = IN_CAP - keep;
	if (r->data_end - (r->in_off + keep) < want)
		want = (size_t)(r->data_end - (r->in_off + keep));
	do
		k = want ? read(r->fd, r->in + keep, want) : 0;
	while (k < 0 && errno == EINTR);
	if (k < 0)
		return -errno;
	r->z.next_in = r->in;
	r->in_len += (size_t)k;
	r->z.avail_in = (uInt)r->in_len;
	if (!k)
		r->eof = true;
	return k > 0;
}

/* The file offset of the next compressed byte not consumed. */
static uint64_t rd_pos(const struct recording_reader *r)
{
	return r->in_off + (uint64_t)(r->in_len - r->z.avail_in);
}

/* The input ends here, for reason @kind (a cut unless REC_CUT_NONE). */
static void rd_stop(struct recording_reader *r, enum recording_cut_kind kind, uint64_t at)
{
	r->st = RD_END;
	r->cut.kind = kind;
	r->cut.at = at;
	if (r->cut.size < at)
		r->cut.size = at;
}

/* Where the run of zeros that ends the file open on r->fd begins, if it is
 * REC_ZERO_TAIL bytes or longer (what a host that crashed before its file
 * system wrote the data leaves), into r->zero_at; the file's size into
 * r->cut.size. A file that is not a regular one has neither. */
static void rd_find_zeros(struct recording_reader *r)
{
	unsigned char buf[4096];
	struct stat st;
	uint64_t end;

	r->zero_at = r->data_end = UINT64_MAX;
	if (fstat(r->fd, &st) || !S_ISREG(st.st_mode))
		return;
	r->cut.size = (uint64_t)st.st_size;
	end = r->cut.size;
	while (end) {
		size_t n = end < sizeof(buf) ? (size_t)end : sizeof(buf), i;
		ssize_t k = pread(r->fd, buf, n, (off_t)(end - n));

		if (k != (ssize_t)n)
			return; /* unreadable: the reads that follow say so */
		for (i = n; i && !buf[i - 1]; i--)
			;
		end -= n - i;
		if (i)
			break;
	}
	if (r->cut.size - end >= REC_ZERO_TAIL)
		r->zero_at = end;
}

/* The member being decoded did not end whole and its bytes ran into the
 * zeros that end the file: inflating zeros as deflate data makes up lines
 * (the all-zero bit string is a valid code that copies earlier text; seen in
 * e2e record_cut), and a member's last bytes may be zeros too (its length's
 * high bytes), so where its data ends is only known now. Read it again from
 * its start, up to the zeros only: a torn member, its lines a prefix of what
 * was written (a deflate error before the zeros stays one). 1 if it is read
 * again, 0 if not (no zeros, lines of it handed out already, or read again
 * once), -errno. */
static int rd_redo_before_zeros(struct recording_reader *r)
{
	if (r->redone || r->stream || r->member_off >= r->zero_at)
		return 0;
	r->redone = true;
	if (lseek(r->fd, (off_t)r->member_off, SEEK_SET) != (off_t)r->member_off)
		return -errno;
	r->data_end = r->zero_at;
	r->in_off = r->member_off;
	r->in_len = 0;
	r->z.next_in = r->in;
	r->z.avail_in = 0;
	r->eof = false;
	inflateReset(&r->z);
	r->dlen = r->dpos = 0;
	return 1;
}

/* Between members: the next one begins (1), or the file ends (0, with the
 * cut set when the bytes there are not a member). -errno. */
static int rd_begin_member(struct recording_reader *r)
{
	int err;

	while (r->z.avail_in < 2 && !r->eof)
		if ((err = rd_fill(r)) < 0)
			return err;
	if (!r->z.avail_in) {
		rd_stop(r, REC_CUT_NONE, rd_pos(r));
		return 0;
	}
	if ((r->z.avail_in == 1 || rd_pos(r) + 1 == r->zero_at) && r->z.next_in[0] == 0x1f) {
		rd_stop(r, REC_CUT_TORN, rd_pos(r)); /* cut after a member's first byte */
		return 0;
	}
	if (r->z.avail_in < 2 || r->z.next_in[0] != 0x1f || r->z.next_in[1] != 0x8b) {
		rd_stop(r, REC_CUT_GARBAGE, rd_pos(r));
		return 0;
	}
	inflateReset(&r->z);
	r->member_off = rd_pos(r);
	r->dlen = r->dpos = 0;
	r->stream = false;
	r->st = RD_MEMBER;
	return 1;
}

/* Decode more of the member. 0 (progress or a new state) or -errno. */
static int rd_decode(struct recording_reader *r)
{
	int zr, err;

	if (r->dpos && (r->stream || r->dpos == r->dlen)) {
		/* lines handed out already: drop them */
		memmove(r->dec, r->dec + r->dpos, r->dlen - r->dpos);
		r->dlen -= r->dpos;
		r->dpos = 0;
	}
	if (r->dlen == r->dcap) {
		size_t ncap = r->dcap * 2;
		char *d;

		if (r->dcap >= REC_VERIFY_BYTES) {
			/* too large to hold whole (a recording from before the
			 * framing): hand its lines out as they come */
			r->stream = true;
			if (r->dpos == 0 && !memchr(r->dec, '\n', r->dlen)) {
				snprintf(r->error, sizeof(r->error), "line %llu is longer than %u bytes",
					 (unsigned long long)r->lineno + 1, REC_VERIFY_BYTES);
				return -EINVAL;
			}
			return 0;
		}
		d = realloc(r->dec, ncap + 1);
		if (!d)
			return -ENOMEM;
		r->dec = d;
		r->dcap = ncap;
	}
	if (!r->z.avail_in) {
		err = rd_fill(r);
		if (err < 0) {
			snprintf(r->error, sizeof(r->error), "read error after line %llu: %s",
				 (unsigned long long)r->lineno, strerror(-err));
			return -EIO;
		}
		if (!err) {
			err = rd_redo_before_zeros(r);
			if (err)
				return err < 0 ? err : 0;
			/* the file ends inside this member: its start is all there is */
			rd_stop(r, REC_CUT_TORN, r->member_off);
			r->st = RD_TORN;
			return 0;
		}
	}
	r->z.next_out = (Bytef *)r->dec + r->dlen;
	r->z.avail_out = (uInt)(r->dcap - r->dlen);
	zr = inflate(&r->z, Z_NO_FLUSH);
	r->dlen = r->dcap - r->z.avail_out;
	switch (zr) {
	case Z_STREAM_END:
		r->st = RD_VERIFIED;
		r->cut.members++;
		return 0;
	case Z_OK:
	case Z_BUF_ERROR:
		return 0;
	case Z_MEM_ERROR:
		return -ENOMEM;
	default:
		err = rd_redo_before_zeros(r);
		if (err)
			return err < 0 ? err : 0;
		/* bad deflate data or CRC: none of this member is trusted */
		r->dlen = r->dpos = 0;
		rd_stop(r, REC_CUT_CORRUPT, r->member_off);
		return 0;
	}
}

/* The next line into r->line (newline stripped). 1, 0 at the end (clean or
 * cut), -errno with r->error. */
static int read_line(struct recording_reader *r)
{
	int err;

	for (;;) {
		if (r->st == RD_VERIFIED || r->st == RD_TORN || r->stream) {
			char *p = r->dec + r->dpos;
			char *nl = memchr(p, '\n', r->dlen - r->dpos);

			if (nl) {
				*nl = '\0';
				r->dpos = (size_t)(nl + 1 - r->dec);
				r->line = p;
				r->lineno++;
				return 1;
			}
			if (r->st == RD_VERIFIED && r->dpos < r->dlen) {
				/* never written so: a member ends with its last line's newline */
				r->dec[r->dlen] = '\0';
				r->dpos = r->dlen;
				r->line = p;
				r->lineno++;
				return 1;
			}
			if (r->st == RD_TORN) {
				r->st = RD_END; /* a partial last line is part of the cut */
				return 0;
			}
		}
		switch (r->st) {
		case RD_END:
			return 0;
		case RD_VERIFIED:
			r->st = RD_BETWEEN;
			/* fallthrough */
		case RD_BETWEEN:
			err = rd_begin_member(r);
			if (err < 0) {
				snprintf(r->error, sizeof(r->error), "read error after line %llu: %s",
					 (unsigned long long)r->lineno, strerror(-err));
				return -EIO;
			}
			break;
		case RD_MEMBER:
			err = rd_decode(r);
			if (err < 0)
				return err;
			break;
		case RD_TORN:
			return 0;
		}
	}
}

/* read_line() returned 0: what kind of end it was. */
static void recording_end(struct recording_reader *r)
{
	if (r->cut.kind == REC_CUT_NONE && !r->trailer.present)
		r->cut.kind = REC_CUT_NO_TRAILER;
	else if (r->cut.kind == REC_CUT_NONE && r->trailer.error[0])
		r->cut.kind = REC_CUT_WRITER_ERROR;
	r->cut.line = r->lineno;
}

/* A line of a torn member that does not parse (what a crashed host left
 * there, not what was written): the cut is before it. Returns 0. */
static int rd_torn_junk(struct recording_reader *r)
{
	r->st = RD_END;
	r->lineno--;
	recording_end(r);
	return 0;
}

struct recording_reader *recording_open(const char *path, struct recording_header *h)
{
	struct recording_reader *r = calloc(1, sizeof(*r));
	struct jsoncur c;
	int err = ENOMEM;

	if (!r)
		return NULL;
	r->fd = -1;
	r->dcap = 1u << 20;
	r->dec = malloc(r->dcap + 1);
	r->in = malloc(IN_CAP);
	r->text = malloc(REC_LINE_MAX);
	if (!r->dec || !r->in || !r->text)
		goto fail;
	if (inflateInit2(&r->z, 31) != Z_OK) /* 31: gzip members */
		goto fail;
	r->z_init = true;
	r->st = RD_BETWEEN;
	r->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (r->fd < 0) {
		err = errno;
		goto fail;
	}
	rd_find_zeros(r);
	memset(h, 0, sizeof(*h));
	err = read_line(r);
	if (err <= 0 || strncmp(r->line, "{\"memtrace_recording\":1", 23)) {
		/* a gzip file cut before its first line ended is a cut recording */
		err = err == 0 && r->cut.kind == REC_CUT_TORN ? ENODATA : EINVAL;
		goto fail;
	}
	c.p = r->line;
	c.bad = false;
	jsoncur_object(&c, header_member, h);
	if (c.bad) {
		err = EINVAL;
		goto fail;
	}
	return r;
fail:
	recording_close_read(r);
	errno = err;
	return NULL;
}

int recording_next(struct recording_reader *r, struct mt_ev *e, const char **text, uint64_t *line)
{
	for (;;) {
		struct ev_parse ep = { .r = r, .e = e };
		bool unverified = r->st == RD_TORN;
		struct jsoncur c;
		int rc;

		rc = read_line(r);
		if (rc <= 0) {
			if (!rc)
				recording_end(r);
			return rc;
		}
		if (!r->line[0])
			continue;
		{
			char k[32];
			enum recording_side_kind sk;
			int err;

			line_kind(r->line, k, sizeof(k));
			sk = recording_side_kind(k);
			if (sk != REC_SIDE_NONE) {
				err = side_line(r, sk);
				if (err == -EINVAL && unverified)
					return rd_torn_junk(r);
				if (err) {
					*line = r->lineno;
					return err;
				}
				continue;
			}
		}
		memset(e, 0, sizeof(*e));
		r->text[0] = '\0';
		c.p = r->line;
		c.bad = false;
		jsoncur_object(&c, ev_member, &ep);
		*line = r->lineno;
		if (c.bad && unverified)
			return rd_torn_junk(r);
		if (c.bad) {
			snprintf(r->error, sizeof(r->error), "line %llu is not a JSON object of the "
				 "recording format", (unsigned long long)r->lineno);
			return -EINVAL;
		}
		if (!strcmp(ep.kind, "end")) {
			r->trailer.present = true;
			continue;
		}
		e->kind = (uint16_t)sequencer_ev_kind_parse(ep.kind);
		if (e->kind == MT_EV_NONE) {
			snprintf(r->error, sizeof(r->error), "line %llu: unknown event kind \"%s\"",
				 (unsigned long long)r->lineno, ep.kind);
			return -EINVAL;
		}
		r->cut.line = r->lineno;
		*text = r->text;
		return 1;
	}
}

const char *recording_error(const struct recording_reader *r)
{
	return r->error;
}

const struct recording_cut *recording_cut(const struct recording_reader *r)
{
	return &r->cut;
}

const char *recording_cut_name(enum recording_cut_kind k)
{
	static const char *const names[] = {
		[REC_CUT_NONE] = "", [REC_CUT_TORN] = "torn", [REC_CUT_CORRUPT] = "corrupt",
		[REC_CUT_GARBAGE] = "garbage", [REC_CUT_NO_TRAILER] = "no_trailer",
		[REC_CUT_WRITER_ERROR] = "writer_error",
	};

	return (unsigned)k < MT_ARRAY_SIZE(names) ? names[k] : "";
}

void recording_cut_explain(const struct recording_reader *r, char *buf, size_t n)
{
	const struct recording_cut *c = &r->cut;

	switch (c->kind) {
	case REC_CUT_NONE:
		snprintf(buf, n, "complete");
		break;
	case REC_CUT_TORN:
		snprintf(buf, n, "cut at byte %llu of %llu: the file ends inside a block (the "
			 "writer was killed, the disk filled up or the file was truncated); read "
			 "up to line %llu", (unsigned long long)c->at, (unsigned long long)c->size,
			 (unsigned long long)c->line);
		break;
	case REC_CUT_CORRUPT:
		snprintf(buf, n, "cut at byte %llu of %llu: the block there fails its check "
			 "(corrupt data); read up to line %llu, nothing after it",
			 (unsigned long long)c->at, (unsigned long long)c->size,
			 (unsigned long long)c->line);
		break;
	case REC_CUT_GARBAGE:
		snprintf(buf, n, "cut at byte %llu of %llu: what follows is not a block of the "
			 "recording (zeros: the host crashed before writing it?); read up to line %llu",
			 (unsigned long long)c->at, (unsigned long long)c->size,
			 (unsigned long long)c->line);
		break;
	case REC_CUT_NO_TRAILER:
		snprintf(buf, n, "no trailer after byte %llu: the writer stopped between two "
			 "blocks (killed, or the disk was full); read up to line %llu",
			 (unsigned long long)c->at, (unsigned long long)c->line);
		break;
	case REC_CUT_WRITER_ERROR:
		snprintf(buf, n, "the writer stopped early: %s; read up to line %llu",
			 r->trailer.error, (unsigned long long)c->line);
		break;
	}
}

const struct recording_trailer *recording_trailer(const struct recording_reader *r)
{
	return &r->trailer;
}

void recording_close_read(struct recording_reader *r)
{
	if (!r)
		return;
	if (r->z_init)
		inflateEnd(&r->z);
	if (r->fd >= 0)
		close(r->fd);
	free(r->in);
	free(r->dec);
	free(r->text);
	free(r);
}
