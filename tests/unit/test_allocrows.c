// SPDX-License-Identifier: GPL-2.0
/*
 * test_allocrows.c - allocrows_match_classes(): the stack rows (each row's
 * class is the one that opened its TLAB) made to say what the class view
 * (the TLABs' contents) says of each class (#31.15: a profile's collapsed
 * stacks gave a class 8.4 % where its table said 3.6 %).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "probe/allocrows.h"

static struct alloc_row *rows_new(const struct alloc_row *r, size_t n)
{
	struct alloc_row *p = malloc(n * sizeof(*p));

	assert_non_null(p);
	memcpy(p, r, n * sizeof(*p));
	return p;
}

static uint64_t sum_of(const struct alloc_row *r, size_t n, const char *cls)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(r[i].class_name, cls))
			s += r[i].bytes;
	return s;
}

/* Each class's rows scaled to its bytes in the view, split as the rows
 * split; a class the view lacks keeps nothing; one without rows gets a row
 * without a stack. */
static void test_match(void **state)
{
	const struct alloc_row in[] = {
		{ .class_name = "A", .stack_id = 1, .bytes = 300, .samples = 3 },
		{ .class_name = "B", .stack_id = 2, .bytes = 50, .samples = 1 },
		{ .class_name = "A", .stack_id = 3, .bytes = 100, .samples = 1 },
		{ .class_name = "C", .stack_id = 4, .bytes = 70, .samples = 2 },
	};
	const struct alloc_class view[] = {
		{ .class_name = "A", .bytes = 1000 },
		{ .class_name = "B", .bytes = 25 },
		{ .class_name = "D", .bytes = 40 },
	};
	struct alloc_row *r = rows_new(in, 4);
	size_t n = 4;

	(void)state;
	assert_int_equal(allocrows_match_classes(&r, &n, view, 3), 0);
	assert_int_equal(n, 5);
	assert_int_equal(r[0].bytes, 750);
	assert_int_equal(r[2].bytes, 250);
	assert_int_equal(r[1].bytes, 25);
	assert_int_equal(r[3].bytes, 0);
	assert_int_equal(r[0].samples, 3); /* samples stay */
	assert_int_equal(r[0].stack_id, 1);
	assert_false(r[0].content_only);
	assert_string_equal(r[4].class_name, "D");
	assert_int_equal(r[4].bytes, 40);
	assert_int_equal(r[4].stack_id, -1);
	assert_true(r[4].content_only);
	free(r);
}

/* Rounding never loses or adds a byte: each class's rows sum to the view's. */
static void test_exact_sums(void **state)
{
	struct alloc_row in[7];
	const struct alloc_class view[] = {
		{ .class_name = "A", .bytes = 1001 },
		{ .class_name = "B", .bytes = 7 },
	};
	struct alloc_row *r;
	size_t n = 7;

	(void)state;
	for (int i = 0; i < 7; i++)
		in[i] = (struct alloc_row){ .class_name = i < 3 ? "A" : "B", .stack_id = i,
					    .bytes = (uint64_t)(i < 3 ? 1 : 3 + i), .samples = 1 };
	r = rows_new(in, 7);
	assert_int_equal(allocrows_match_classes(&r, &n, view, 2), 0);
	assert_int_equal(n, 7);
	assert_int_equal(sum_of(r, n, "A"), 1001);
	assert_int_equal(sum_of(r, n, "B"), 7);
	for (int i = 0; i < 3; i++) /* equal rows stay within a byte of each other */
		assert_true(r[i].bytes >= 333 && r[i].bytes <= 335);
	free(r);
}

/* No rows at all: the view's classes become rows; no view: rows keep nothing. */
static void test_empty(void **state)
{
	const struct alloc_class view[] = { { .class_name = "A", .bytes = 9 } };
	const struct alloc_row in[] = { { .class_name = "A", .stack_id = 1, .bytes = 5 } };
	struct alloc_row *r = NULL;
	size_t n = 0;

	(void)state;
	assert_int_equal(allocrows_match_classes(&r, &n, view, 1), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].bytes, 9);
	assert_true(r[0].content_only);
	free(r);
	r = rows_new(in, 1);
	n = 1;
	assert_int_equal(allocrows_match_classes(&r, &n, NULL, 0), 0);
	assert_int_equal(n, 1);
	assert_int_equal(r[0].bytes, 0);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match),
		cmocka_unit_test(test_exact_sums),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
