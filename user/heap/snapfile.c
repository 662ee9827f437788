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

int snapfile_write(const struct mt_snapshot *s, const char *path, char *why, size_t wn)
{
	char hdr[MT_SNAP_HDR] = { 0 }, trl[MT_SNAP_TRAILER], done[8 + sizeof(s->info)];
	uint32_t v = MT_SNAP_VERSION, flags = s->info.flags, pid = (uint32_t)s->pid;
	uint64_t now = real_ns(), body;
	size_t off = 0;
	uLong crc;
	int fd, err;

	mt_ap_rec_put(done, sizeof(done), &off, MT_AP_HREC_DONE, 0, &s->info, sizeof(s->info));
	memcpy(hdr, MT_SNAP_MAGIC, 8);
	memcpy(hdr + 8, &v, 4);
	memcpy(hdr + 12, &flags, 4);
	memcpy(hdr + 16, &now, 8);
	memcpy(hdr + 24, &pid, 4);
	body = s->raw_len + off;
	crc = crc32(0L, Z_NULL, 0);
	for (size_t i = 0; i < s->raw_len; i += 1u << 30) /* crc32 takes a uInt length */
		crc = crc32(crc, (const Bytef *)s->raw + i,
			    (uInt)(s->raw_len - i < (1u << 30) ? s->raw_len - i : (1u << 30)));
	crc = crc32(crc, (const Bytef *)done, (uInt)off);
	memcpy(trl, &body, 8);
	v = (uint32_t)crc;
	memcpy(trl + 8, &v, 4);
	memcpy(trl + 12, MT_SNAP_END, 4);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		err = -errno;
		snprintf(why, wn, "cannot create %s: %s", path, strerror(-err));
		return err;
	}
	err = write_all(fd, hdr, sizeof(hdr));
	if (!err)
		err = write_all(fd, s->raw, s->raw_len);
	if (!err)
		err = write_all(fd, done, off);
	if (!err)
		err = write_all(fd, trl, sizeof(trl));
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		snprintf(why, wn, "cannot write %s: %s", path, strerror(-err));
		unlink(path);
	}
	return err;
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
	if (err)
		snapshot_free(s);
	else
		s->source = "snapshot";
	return err;
}
