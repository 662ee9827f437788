// SPDX-License-Identifier: GPL-2.0
/* fuzz_recording.c - libFuzzer entry for the recording reader and what
 * `report` and `check` build from it. An input that begins with the gzip
 * magic is a recording file as it is (the framing: members, CRCs, cuts);
 * anything else is its JSON lines, gzip'd here into members of about 4 KiB
 * first (so the mutations reach the line parser). Every event goes to the
 * rule checker (check.c), the lock analysis and the replay of sampled
 * objects (objrec.c: age and leak suspects, as `report` runs them), the
 * object-sampling lines to the replay. Seeds: real recordings of JVM 17 and
 * 25, whole and as JSON lines (capture-seeds.sh). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "analysis/locks.h"
#include "monitor/check.h"
#include "monitor/objrec.h"
#include "monitor/recording_read.h"

/* @data as gzip members of about 4 KiB of JSON each, written to @fd. */
static int gzip_members(int fd, const uint8_t *data, size_t size)
{
	static unsigned char out[1 << 16];
	size_t off = 0;

	while (off < size) {
		size_t n = size - off > 4096 ? 4096 : size - off;
		z_stream z = { 0 };
		int zr;

		if (deflateInit2(&z, 1, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return -1;
		z.next_in = (Bytef *)data + off;
		z.avail_in = (uInt)n;
		z.next_out = out;
		z.avail_out = sizeof(out);
		zr = deflate(&z, Z_FINISH);
		deflateEnd(&z);
		if (zr != Z_STREAM_END ||
		    write(fd, out, sizeof(out) - z.avail_out) != (ssize_t)(sizeof(out) - z.avail_out))
			return -1;
		off += n;
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct recording_header h;
	struct recording_reader *r;
	struct objrec_replay rr;
	struct mt_check *c;
	struct locks *lk;
	const char *text;
	struct mt_ev e;
	uint64_t line;
	char path[64], why[256];
	int fd = memfd_create("fuzz_recording", MFD_CLOEXEC), rc;

	if (fd < 0)
		return 0;
	if (size >= 2 && data[0] == 0x1f && data[1] == 0x8b) {
		if (write(fd, data, size) != (ssize_t)size)
			goto out;
	} else if (gzip_members(fd, data, size)) {
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	r = recording_open(path, &h);
	if (!r)
		goto out;
	c = check_new(NULL, NULL);
	lk = locks_new();
	objrec_replay_init(&rr, 2, h.start_mono_ns + 10000000000ull);
	recording_on_side(r, objrec_replay_side, &rr);
	while ((rc = recording_next(r, &e, &text, &line)) > 0) {
		if (c)
			check_feed(c, line, &e);
		if (lk)
			locks_feed(lk, &e, text);
		objrec_replay_event(&rr, &e, text);
	}
	recording_cut_explain(r, why, sizeof(why));
	if (lk && locks_sync_events(lk)) {
		struct locks_report *lr = locks_report_new(lk, e.ts, NULL, NULL);

		locks_report_free(lr);
	}
	objrec_replay_finish(&rr);
	objrec_replay_free(&rr);
	locks_free(lk);
	check_free(c);
	recording_close_read(r);
out:
	close(fd);
	return 0;
}
