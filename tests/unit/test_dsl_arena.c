// SPDX-License-Identifier: GPL-2.0
/* test_dsl_arena.c - the query's arena: zeroed, aligned, rolled back to a
 * mark, bounded, and grown in chunks that keep pace with what it holds. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "dsl/dsl.h"

/* Every allocation is zeroed and on 16 bytes, a string copy ends. */
static void test_zeroed_aligned(void **state)
{
	struct dsl_arena *a = dsl_arena_new();
	char *s;

	(void)state;
	assert_non_null(a);
	for (size_t n = 0; n < 200; n += 7) {
		unsigned char *p = dsl_arena_alloc(a, n);

		assert_non_null(p);
		assert_int_equal((uintptr_t)p % 16, 0);
		for (size_t i = 0; i < n; i++)
			assert_int_equal(p[i], 0);
		memset(p, 0xab, n); /* the next one must not see it */
	}
	s = dsl_arena_strndup(a, "heapx", 4);
	assert_string_equal(s, "heap");
	dsl_arena_free(a);
	dsl_arena_free(NULL);
}

/* A reset gives back what came after the mark, its bytes zeroed again. */
static void test_mark_reset(void **state)
{
	struct dsl_arena *a = dsl_arena_new();
	struct dsl_arena_mark m;
	size_t before;
	unsigned char *p, *q;

	(void)state;
	assert_non_null(dsl_arena_alloc(a, 100));
	m = dsl_arena_mark(a);
	before = dsl_arena_used(a);
	p = dsl_arena_alloc(a, 64);
	memset(p, 0xff, 64);
	for (int i = 0; i < 1000; i++) /* past the first chunk */
		assert_non_null(dsl_arena_alloc(a, 1024));
	assert_true(dsl_arena_used(a) > before);
	dsl_arena_reset(a, m);
	assert_int_equal(dsl_arena_used(a), before);
	q = dsl_arena_alloc(a, 64);
	assert_ptr_equal(p, q);
	for (int i = 0; i < 64; i++)
		assert_int_equal(q[i], 0);
	dsl_arena_free(a);
}

/* Millions of small values: the chunks grow with the arena (a quarter of it,
 * up to 32 MiB, in 2 MiB pages), so few of them, and what it holds stays
 * within a third more than what was asked for. */
static void test_growth(void **state)
{
	struct dsl_arena *a = dsl_arena_new();
	struct dsl_arena_mark m;
	size_t asked = 0, chunks = 0;
	const void *last = NULL;

	(void)state;
	for (int i = 0; i < 2000000; i++) {
		char *p = dsl_arena_alloc(a, 24); /* 32 with the rounding */

		assert_non_null(p);
		asked += 32;
		/* a new chunk: not right after the one before */
		if (last && p != (const char *)last + 32)
			chunks++;
		last = p;
	}
	m = dsl_arena_mark(a);
	assert_true(dsl_arena_used(a) >= asked);
	assert_true(dsl_arena_used(a) <= asked + asked / 3 + (64u << 10));
	/* 61 MiB in 64 KiB chunks would be ~980 of them */
	assert_true(chunks < 40);
	/* one value bigger than any chunk so far gets a chunk of its own */
	assert_non_null(dsl_arena_alloc(a, 100u << 20));
	dsl_arena_reset(a, m);
	assert_int_equal(dsl_arena_used(a), m.total);
	dsl_arena_free(a);
}

/* Past DSL_MAX_ARENA: NULL, and the arena still works. */
static void test_bounded(void **state)
{
	struct dsl_arena *a = dsl_arena_new();

	(void)state;
	assert_null(dsl_arena_alloc(a, (size_t)DSL_MAX_ARENA + 1));
	assert_null(dsl_arena_alloc(a, SIZE_MAX - 3));
	assert_non_null(dsl_arena_alloc(a, 16));
	dsl_arena_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zeroed_aligned),
		cmocka_unit_test(test_mark_reset),
		cmocka_unit_test(test_growth),
		cmocka_unit_test(test_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
