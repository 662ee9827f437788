// SPDX-License-Identifier: GPL-2.0
/* test_snapload - reading a heap file of either format (user/heap/snapload.c):
 * a snapshot file and an HPROF dump told apart by their magic, and the
 * message for each file that is neither: missing, a directory, empty,
 * something else, a truncated dump. */
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
#include "heap/snapload.h"
#include "heap/snaprec.h"
#include "heap/snapshot.h"
#include "snap_fixture.h"

static char dir[] = "/tmp/mt-test-snapload.XXXXXX";

static void put(const char *name, const void *p, size_t n, char *path, size_t pn)
{
	FILE *f;

	snprintf(path, pn, "%s/%s", dir, name);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(p, 1, n, f), n);
	assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	static const char *const names[] = { "a.snap", "a.hprof", "empty", "other", "cut.hprof" };
	char path[128];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	return rmdir(dir);
}

static void test_both_formats(void **state)
{
	static char recs[8192];
	struct mt_snapshot s;
	char path[128], why[256];
	size_t n = fx_records(recs, sizeof(recs)), hn;
	unsigned char *h = fx_hprof(&hn);

	snapshot_init(&s);
	assert_int_equal(snaprec_add(&s, recs, n, true, why, sizeof(why)), 0);
	snprintf(path, sizeof(path), "%s/a.snap", dir);
	assert_int_equal(snapfile_write(&s, path, why, sizeof(why)), 0);
	snapshot_free(&s);
	assert_int_equal(snapload_file(path, &s, why, sizeof(why)), 0);
	assert_string_equal(s.source, "snapshot");
	assert_int_equal(s.nobjs, 10);
	snapshot_free(&s);
	put("a.hprof", h, hn, path, sizeof(path));
	assert_int_equal(snapload_file(path, &s, why, sizeof(why)), 0);
	assert_string_equal(s.source, "hprof");
	assert_int_equal(s.nobjs, 15);
	snapshot_free(&s);
	/* a dump cut short: the importer's reason after the path */
	put("cut.hprof", h, hn - 5, path, sizeof(path));
	assert_int_equal(snapload_file(path, &s, why, sizeof(why)), -EINVAL);
	assert_int_equal(strncmp(why, path, strlen(path)), 0);
	assert_non_null(strstr(why, ": truncated HPROF record at byte "));
	snapshot_free(&s);
	free(h);
}

/* The messages `memtrace query FILE` prints, exactly. */
static void test_not_heap_files(void **state)
{
	struct mt_snapshot s;
	char path[128], want[256], why[256];

	snprintf(path, sizeof(path), "%s/missing", dir);
	assert_int_equal(snapload_file(path, &s, why, sizeof(why)), -ENOENT);
	snprintf(want, sizeof(want), "cannot open %s: No such file or directory", path);
	assert_string_equal(why, want);
	snapshot_free(&s);

	assert_int_equal(snapload_file(dir, &s, why, sizeof(why)), -EINVAL);
	snprintf(want, sizeof(want), "%s is not a regular file", dir);
	assert_string_equal(why, want);
	snapshot_free(&s);

	put("empty", "", 0, path, sizeof(path));
	assert_int_equal(snapload_file(path, &s, why, sizeof(why)), -EINVAL);
	snprintf(want, sizeof(want), "%s is empty: not a memtrace snapshot or an HPROF dump", path);
	assert_string_equal(why, want);
	snapshot_free(&s);

	put("other", "garbage\n", 8, path, sizeof(path));
	assert_int_equal(snapload_file(path, &s, why, sizeof(why)), -EINVAL);
	snprintf(want, sizeof(want), "%s: not a memtrace snapshot (bad magic)", path);
	assert_string_equal(why, want);
	snapshot_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_both_formats),
		cmocka_unit_test(test_not_heap_files),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
