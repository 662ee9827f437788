// SPDX-License-Identifier: GPL-2.0
/* test_snapfile - the snapshot file format (user/heap/snapfile.c): a round
 * trip, every truncation and corruption refused, write errors with their
 * message. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "heap/snapfile.h"
#include "heap/snaprec.h"
#include "heap/snapshot.h"
#include "snap_fixture.h"

static char recs[8192];

static void load_fixture(struct mt_snapshot *s, bool keep_raw)
{
	char why[128];
	size_t n = fx_records(recs, sizeof(recs));

	snapshot_init(s);
	assert_int_equal(snaprec_add(s, recs, n, keep_raw, why, sizeof(why)), 0);
}

/* Save the fixture to a file and read the bytes back. */
static char *saved(size_t *n)
{
	struct mt_snapshot s;
	char path[] = "/tmp/mt-test-snap.XXXXXX", why[160];
	int fd = mkstemp(path);
	char *buf;
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	load_fixture(&s, true);
	s.info.objects = 10;
	s.info.pause_ns = 1234;
	s.pid = 42;
	assert_int_equal(snapfile_write(&s, path, why, sizeof(why)), 0);
	snapshot_free(&s);
	f = fopen(path, "rb");
	assert_non_null(f);
	buf = malloc(1 << 16);
	*n = fread(buf, 1, 1 << 16, f);
	fclose(f);
	unlink(path);
	return buf;
}

static void test_file_roundtrip(void **state)
{
	struct mt_snapshot s;
	char why[160];
	size_t n;
	char *buf = saved(&n);

	assert_memory_equal(buf, MT_SNAP_MAGIC, 8);
	assert_int_equal(snapfile_read_mem(buf, n, &s, why, sizeof(why)), 0);
	assert_int_equal(s.nobjs, 10);
	assert_int_equal(s.nclasses, 4);
	assert_int_equal(s.info.pause_ns, 1234);
	assert_int_equal(s.pid, 42);
	assert_string_equal(s.source, "snapshot");
	snapshot_free(&s);
	free(buf);
}

static void test_file_corrupt(void **state)
{
	struct mt_snapshot s;
	char why[160];
	size_t n;
	char *buf = saved(&n);

	/* every truncation is refused */
	for (size_t k = 0; k < n; k++) {
		assert_int_equal(snapfile_read_mem(buf, k, &s, why, sizeof(why)), -EINVAL);
		snapshot_free(&s);
	}
	/* every flipped byte is refused: magic, version, trailer or checksum */
	for (size_t k = 0; k < n; k++) {
		if (k >= 12 && k < 32) /* flags, time, pid: not checked */
			continue;
		buf[k] ^= 0x41;
		assert_int_equal(snapfile_read_mem(buf, n, &s, why, sizeof(why)), -EINVAL);
		snapshot_free(&s);
		buf[k] ^= 0x41;
	}
	buf[8] = 2;
	assert_int_equal(snapfile_read_mem(buf, n, &s, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "version 2"));
	free(buf);
}

/* Write errors: -errno and the message the commands print. */
static void test_write_errors(void **state)
{
	struct mt_snapshot s;
	char why[160];

	load_fixture(&s, true);
	assert_int_equal(snapfile_write(&s, "/nonexistent-dir/x.snap", why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "cannot create /nonexistent-dir/x.snap: No such file or directory");
	if (!access("/dev/full", W_OK)) {
		assert_int_equal(snapfile_write(&s, "/dev/full", why, sizeof(why)), -ENOSPC);
		assert_string_equal(why, "cannot write /dev/full: No space left on device");
	}
	snapshot_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_roundtrip),
		cmocka_unit_test(test_file_corrupt),
		cmocka_unit_test(test_write_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
