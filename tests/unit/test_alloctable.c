// SPDX-License-Identifier: GPL-2.0
/*
 * test_alloctable.c - `memtrace alloc`'s by-class table rebuilt from
 * allocation samples: sums per class, the order (bytes, then name), --top,
 * the text and JSON forms byte for byte, and a table that grows past its
 * first index and is added to after printing.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sink/alloctable.h"

#define MIB (1024ULL * 1024)

static char *print(struct alloctable *t, const struct alloctable_info *i, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	alloctable_print(f, t, i, json);
	fclose(f);
	return buf;
}

/* byte[] 4 MiB in 3 samples; a.B and java.lang.String 1 MiB each (a tie:
 * by name); z.Z 100 B. */
static struct alloctable *four_classes(void)
{
	struct alloctable *t = alloctable_new();

	assert_non_null(t);
	assert_int_equal(alloctable_add(t, "byte[]", 1 * MIB), 0);
	assert_int_equal(alloctable_add(t, "java.lang.String", 512 * 1024), 0);
	assert_int_equal(alloctable_add(t, "z.Z", 100), 0);
	assert_int_equal(alloctable_add(t, "byte[]", 1 * MIB), 0);
	assert_int_equal(alloctable_add(t, "java.lang.String", 512 * 1024), 0);
	assert_int_equal(alloctable_add(t, "a.B", 1 * MIB), 0);
	assert_int_equal(alloctable_add(t, "byte[]", 2 * MIB), 0);
	assert_int_equal(alloctable_samples(t), 7);
	return t;
}

static const struct alloctable_info info = {
	.pid = 4242, .secs = 2.0, .lost = 5, .unloads = 2, .jvm_exited = true, .top = 2,
};

static void test_text(void **state)
{
	struct alloctable *t = four_classes();
	char *s = print(t, &info, false);

	assert_string_equal(s,
		"6.0 MiB allocated by pid 4242 in 2.0 s (3.0 MiB/s), 7 samples (estimated "
		"from TLAB refills)\n"
		"CLASS                                                     BYTES   SHARE"
		"       RATE/s   SAMPLES\n"
		"byte[]                                                  4.0 MiB   66.7%"
		"      2.0 MiB         3\n"
		"a.B                                                     1.0 MiB   16.7%"
		"    512.0 KiB         1\n"
		"lost events: 5, classes unloaded meanwhile: 2\n");
	free(s);
	alloctable_free(t);
}

static void test_json(void **state)
{
	struct alloctable *t = four_classes();
	char *s = print(t, &info, true);

	assert_string_equal(s,
		"{\"event\":\"alloc\",\"pid\":4242,\"mode\":\"tlab\",\"duration_s\":2.000,"
		"\"total_bytes\":6291556,\"total_samples\":7,\"lost_events\":5,\"lost_keys\":0,"
		"\"stacks_not_captured\":0,\"classes_unloaded\":2,\"frames_resolved\":0,"
		"\"frames_unresolved\":0,\"jvm_exited\":true,\"bytes_known\":true,"
		"\"classes\":[{\"class\":\"byte[]\",\"bytes\":4194304,\"samples\":3,"
		"\"share\":0.666656,\"bytes_per_s\":2097152},{\"class\":\"a.B\",\"bytes\":1048576,"
		"\"samples\":1,\"share\":0.166664,\"bytes_per_s\":524288}]}\n");
	free(s);
	alloctable_free(t);
}

/* All rows, no unloads, a zero window, a name JSON must escape. */
static void test_all_rows_and_edges(void **state)
{
	struct alloctable_info i = { .pid = 1, .secs = 0, .top = 20 };
	struct alloctable *t = four_classes();
	char *s;

	assert_int_equal(alloctable_add(t, "q\"uote", 1), 0);
	s = print(t, &i, false);
	assert_string_equal(s,
		"6.0 MiB allocated by pid 1 in 0.0 s (0 B/s), 8 samples (estimated from "
		"TLAB refills)\n"
		"CLASS                                                     BYTES   SHARE"
		"       RATE/s   SAMPLES\n"
		"byte[]                                                  4.0 MiB   66.7%"
		"          0 B         3\n"
		"a.B                                                     1.0 MiB   16.7%"
		"          0 B         1\n"
		"java.lang.String                                        1.0 MiB   16.7%"
		"          0 B         2\n"
		"z.Z                                                       100 B    0.0%"
		"          0 B         1\n"
		"q\"uote                                                      1 B    0.0%"
		"          0 B         1\n"
		"lost events: 0\n");
	free(s);
	i.top = 5;
	s = print(t, &i, true);
	assert_non_null(strstr(s, "{\"class\":\"q\\\"uote\",\"bytes\":1,\"samples\":1,"
			       "\"share\":0.000000,\"bytes_per_s\":0}]}\n"));
	assert_non_null(strstr(s, "\"jvm_exited\":false,"));
	free(s);
	alloctable_free(t);
}

static void test_empty(void **state)
{
	struct alloctable *t = alloctable_new();
	char *s;

	assert_non_null(t);
	assert_int_equal(alloctable_samples(t), 0);
	s = print(t, &info, true);
	assert_string_equal(s,
		"{\"event\":\"alloc\",\"pid\":4242,\"mode\":\"tlab\",\"duration_s\":2.000,"
		"\"total_bytes\":0,\"total_samples\":0,\"lost_events\":5,\"lost_keys\":0,"
		"\"stacks_not_captured\":0,\"classes_unloaded\":2,\"frames_resolved\":0,"
		"\"frames_unresolved\":0,\"jvm_exited\":true,\"bytes_known\":true,"
		"\"classes\":[]}\n");
	free(s);
	alloctable_free(t);
	alloctable_free(NULL);
}

/* 1000 classes (the index and the rows grow), each i + 1 samples of 8 B;
 * printing sorts the rows, and samples added after it still find them. */
static void test_many_and_add_after_print(void **state)
{
	struct alloctable_info i = { .pid = 1, .secs = 1, .top = 1 };
	struct alloctable *t = alloctable_new();
	char name[32], *s;

	assert_non_null(t);
	for (int k = 0; k < 1000; k++)
		for (int n = 0; n <= k; n++) {
			snprintf(name, sizeof(name), "C%d", k);
			assert_int_equal(alloctable_add(t, name, 8), 0);
		}
	assert_int_equal(alloctable_samples(t), 1000 * 1001 / 2);
	s = print(t, &i, true);
	assert_non_null(strstr(s, "\"classes\":[{\"class\":\"C999\",\"bytes\":8000,"
			       "\"samples\":1000,"));
	free(s);
	/* C0 becomes the largest; no class is added twice */
	for (int k = 0; k < 1000; k++) {
		snprintf(name, sizeof(name), "C%d", k);
		assert_int_equal(alloctable_add(t, name, k ? 0 : 1000000), 0);
	}
	assert_int_equal(alloctable_samples(t), 1000 * 1001 / 2 + 1000);
	s = print(t, &i, true);
	assert_non_null(strstr(s, "\"classes\":[{\"class\":\"C0\",\"bytes\":1000008,"
			       "\"samples\":2,"));
	assert_non_null(strstr(s, "\"total_bytes\":5004000,"));
	free(s);
	alloctable_free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_all_rows_and_edges),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_many_and_add_after_print),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
