// SPDX-License-Identifier: GPL-2.0
/* test_snapshot - the in-memory heap snapshot (user/heap/snapshot.c): growth
 * of its arrays, its strings, freeing, ages, Java names. */
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

#include "heap/snapshot.h"

static void test_grow_strdup_free(void **state)
{
	struct mt_snapshot s;
	const char *a, *b;

	snapshot_init(&s);
	snapshot_free(&s); /* a zeroed snapshot: nothing to free */
	assert_int_equal(snapshot_grow(&s.objs, &s.cap_objs, s.nobjs, 1, sizeof(*s.objs)), 0);
	assert_int_equal(s.cap_objs, 1024); /* the first growth */
	s.nobjs = 1000;
	assert_int_equal(snapshot_grow(&s.objs, &s.cap_objs, s.nobjs, 24, sizeof(*s.objs)), 0);
	assert_int_equal(s.cap_objs, 1024); /* room enough */
	assert_int_equal(snapshot_grow(&s.objs, &s.cap_objs, s.nobjs, 25, sizeof(*s.objs)), 0);
	assert_int_equal(s.cap_objs, 2048);
	s.objs[1024].id = 7; /* within the new room (ASan checks) */
	assert_int_equal(snapshot_grow(&s.objs, &s.cap_objs, s.nobjs, SIZE_MAX / 4,
				       sizeof(*s.objs)), -ENOMEM);
	a = snapshot_strdup(&s, "order-7xyz", 7);
	b = snapshot_strdup(&s, "", 0);
	assert_string_equal(a, "order-7");
	assert_string_equal(b, "");
	snapshot_free(&s);
	assert_null(s.objs);
	assert_null(s.names);
	assert_int_equal(s.cap_objs, 0);
}

static void test_no_ages(void **state)
{
	struct mt_snapshot s;

	snapshot_init(&s);
	assert_int_equal(snapshot_age(&s, 5), 0);
	snapshot_free(&s);
}

static void test_java_names(void **state)
{
	char b[64];

	assert_string_equal(snapshot_java_name("Ljava/lang/String;", b, sizeof(b)), "java.lang.String");
	assert_string_equal(snapshot_java_name("[I", b, sizeof(b)), "int[]");
	assert_string_equal(snapshot_java_name("[[Ljava/util/HashMap$Node;", b, sizeof(b)),
			    "java.util.HashMap$Node[][]");
	assert_string_equal(snapshot_java_name("", b, sizeof(b)), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_grow_strdup_free),
		cmocka_unit_test(test_no_ages),
		cmocka_unit_test(test_java_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
