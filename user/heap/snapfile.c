// SPDX-License-Identifier: GPL-2.0
/* snapfile.c - the snapshot file format (described in snapfile.h): save the
 * agent's records with a header and a checksummed trailer, read them back. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "heap/snapfile.h"
#include "heap/snaprec.h"
#include "heap/walkids.h"
#include "lib/util.h"

/* The file being written: its descriptor, the body's checksum and length. */
struct writer {
	int fd;
	uLong crc;
	uint64_t body;
	int err;
};

static void wr(struct writer *w, const void *p, size_t n)
{
	for (size_t i = 0; i < n && !w->err; i += 1u << 30) { /* crc32 takes a uInt */
		uInt k = (uInt)(n - i < (1u << 30) ? n - i : (1u << 30));

		w->crc = crc32(w->crc, (const Bytef *)p + i, k);
	}
	if (!w->err)
		w->err = write_all(w->fd, p, n);
	w->body += n;
}

/* @k entries of @esz bytes as records of @kind, as many as fit in each. */
static void wr_batch(struct writer *w, unsigned kind, const void *src, size_t k, size_t esz)
{
	static char buf[0x10000];
	size_t per = (0xfff0 - 8) / esz;

	for (size_t i = 0; i < k && !w->err; i += per) {
		size_t m = k - i < per ? k - i : per, off = 0;

		mt_ap_rec_put(buf, sizeof(buf), &off, kind, (uint32_t)m, (const char *)src + i * esz,
			      m * esz);
		wr(w, buf, off);
	}
}

/* A snapshot of the copy's own mark: its records are arrays, not raw (the
 * agent never sent them); and the classes memtrace named from their Klass. */
static void wr_mark_arrays(struct writer *w, const struct mt_snapshot *s)
{
	static char buf[8 + 8 + MT_AP_HSTR_MAX + 8];

	for (size_t i = 0; i < s->nclasses && !w->err; i++) {
		const struct mt_snap_class *c = &s->classes[i];
		struct mt_ap_hclass h = { .id = c->id,
					  .flags = MT_AP_HCLASS_EXT | MT_AP_HCLASS_NOIFACES };
		struct mt_ap_hclass_ext x = { 0 };
		size_t sl = strlen(c->sig), off = 0;
		char body[sizeof(h) + 1024 + 1 + sizeof(x)];

		if (!c->by_klass)
			continue;
		sl = sl > 1024 ? 1024 : sl;
		memcpy(body, &h, sizeof(h));
		memcpy(body + sizeof(h), c->sig, sl);
		body[sizeof(h) + sl] = '\0';
		memcpy(body + sizeof(h) + sl + 1, &x, sizeof(x));
		mt_ap_rec_put(buf, sizeof(buf), &off, MT_AP_HREC_CLASS, 0, body,
			      sizeof(h) + sl + 1 + sizeof(x));
		wr(w, buf, off);
	}
	wr_batch(w, MT_AP_HREC_OBJS, s->objs, s->nobjs, sizeof(*s->objs));
	wr_batch(w, MT_AP_HREC_REFS, s->refs, s->nrefs, sizeof(*s->refs));
	wr_batch(w, MT_AP_HREC_ROOTS, s->roots, s->nroots, sizeof(*s->roots));
	wr_batch(w, MT_AP_HREC_PRIMS, s->prims, s->nprims, sizeof(*s->prims));
	wr_batch(w, MT_AP_HREC_SAMPLED, s->sampled, s->nsampled, sizeof(*s->sampled));
	for (size_t i = 0; i < s->nstrings && !w->err; i++) {
		size_t l = strlen(s->strings[i].s), off = 0;
		char body[8 + MT_AP_HSTR_MAX + 1];

		l = l > MT_AP_HSTR_MAX ? MT_AP_HSTR_MAX : l;
		memcpy(body, &s->strings[i].obj, 8);
		memcpy(body + 8, s->strings[i].s, l);
		body[8 + l] = '\0';
		mt_ap_rec_put(buf, sizeof(buf), &off, MT_AP_HREC_STRING, (uint32_t)l, body, 8 + l + 1);
		wr(w, buf, off);
	}
}

int snapfile_write(const struct mt_snapshot *s, const char *path, char *why, size_t wn)
{
	char hdr[MT_SNAP_HDR] = { 0 }, trl[MT_SNAP_TRAILER], done[8 + sizeof(s->info)];
	uint32_t v = MT_SNAP_VERSION, flags = s->info.flags, pid = (uint32_t)s->pid;
	uint64_t now = real_ns();
	struct writer w = { .crc = crc32(0L, Z_NULL, 0) };
	size_t off = 0;

	mt_ap_rec_put(done, sizeof(done), &off, MT_AP_HREC_DONE, 0, &s->info, sizeof(s->info));
	memcpy(hdr, MT_SNAP_MAGIC, 8);
	memcpy(hdr + 8, &v, 4);
	memcpy(hdr + 12, &flags, 4);
	memcpy(hdr + 16, &now, 8);
	memcpy(hdr + 24, &pid, 4);
	w.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w.fd < 0) {
		w.err = -errno;
		snprintf(why, wn, "cannot create %s: %s", path, strerror(-w.err));
		return w.err;
	}
	w.err = write_all(w.fd, hdr, sizeof(hdr));
	wr(&w, s->raw, s->raw_len);
	if (s->has_mark && !s->mark.status)
		wr_mark_arrays(&w, s);
	wr(&w, done, off);
	/* the trailer: the body's length and checksum */
	memcpy(trl, &w.body, 8);
	v = (uint32_t)w.crc;
	memcpy(trl + 8, &v, 4);
	memcpy(trl + 12, MT_SNAP_END, 4);
	if (!w.err)
		w.err = write_all(w.fd, trl, sizeof(trl));
	if (close(w.fd) && !w.err)
		w.err = -errno;
	if (w.err) {
		snprintf(why, wn, "cannot write %s: %s", path, strerror(-w.err));
		unlink(path);
	}
	return w.err;
}

int snapfile_read_mem(const void *vbuf, size_t n, struct mt_snapshot *s, char *why, size_t wn)
{
	const char *buf = vbuf;
	uint32_t v, crc_file, pid;
	uint64_t body;
	uLong crc;
	int err;

	snapshot_init(s);
	s->source = "snapshot";
	if (n < 8 || memcmp(buf, MT_SNAP_MAGIC, 8)) {
		snprintf(why, wn, "not a memtrace snapshot (bad magic)");
		return -EINVAL;
	}
	if (n < MT_SNAP_HDR + MT_SNAP_TRAILER) {
		snprintf(why, wn, "truncated: %zu bytes, shorter than header and trailer", n);
		return -EINVAL;
	}
	memcpy(&v, buf + 8, 4);
	if (v != MT_SNAP_VERSION) {
		snprintf(why, wn, "snapshot format version %u; this memtrace reads version %d", v,
			 MT_SNAP_VERSION);
		return -EINVAL;
	}
	memcpy(&s->created_ns, buf + 16, 8);
	memcpy(&pid, buf + 24, 4);
	s->pid = (int)pid;
	memcpy(&body, buf + n - MT_SNAP_TRAILER, 8);
	memcpy(&crc_file, buf + n - 8, 4);
	if (memcmp(buf + n - 4, MT_SNAP_END, 4) ||
	    body != n - MT_SNAP_HDR - MT_SNAP_TRAILER) {
		snprintf(why, wn, "truncated or extended: the trailer does not match the file's "
			 "size (%zu bytes)", n);
		return -EINVAL;
	}
	crc = crc32(0L, Z_NULL, 0);
	for (size_t i = 0; i < body; i += 1u << 30)
		crc = crc32(crc, (const Bytef *)buf + MT_SNAP_HDR + i,
			    (uInt)(body - i < (1u << 30) ? body - i : (1u << 30)));
	if ((uint32_t)crc != crc_file) {
		snprintf(why, wn, "checksum mismatch (file %08x, computed %08x): the file is "
			 "corrupt", crc_file, (uint32_t)crc);
		return -EINVAL;
	}
	err = snaprec_add(s, buf + MT_SNAP_HDR, (size_t)body, false, why, wn);
	if (!err) /* an untagged walk's records: ids now */
		err = walkids_resolve(s, NULL, 0, why, wn);
	if (err == -EBADMSG || err == -EPROTO)
		err = -EINVAL;
	if (err == -ENOMEM)
		snprintf(why, wn, "out of memory");
	if (err) {
		snapshot_free(s);
	} else {
		s->source = "snapshot";
		s->has_mark = false; /* its records are in the file: nothing to read elsewhere */
	}
	return err;
}
