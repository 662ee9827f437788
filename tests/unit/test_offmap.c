// SPDX-License-Identifier: GPL-2.0
/* test_offmap - the agent's bounded-range address map (user/lib/offmap.c). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "lib/offmap.h"

static void test_basic(void **state)
{
	struct offmap m;
	uint32_t v = 0;

	assert_int_equal(offmap_init(&m, 0xf0000000, 0xffffffff, 0), 0);
	assert_int_equal(offmap_put_new(&m, 0xf0000000, 7, &v), 0); /* the first word */
	assert_int_equal(v, 7);
	assert_int_equal(offmap_put_new(&m, 0xf0000010, 8, &v), 0);
	assert_int_equal(offmap_put_new(&m, 0xf0000000, 9, &v), 0); /* keeps 7 */
	assert_int_equal(v, 7);
	assert_int_equal(offmap_put_new(&m, 0xfffffff8, 0, &v), 0); /* the last word, value 0 */
	assert_true(offmap_get(&m, 0xfffffff8, &v));
	assert_int_equal(v, 0);
	assert_true(offmap_get(&m, 0xf0000010, &v));
	assert_int_equal(v, 8);
	assert_false(offmap_get(&m, 0xf0000008, &v));
	/* outside, unaligned */
	assert_int_equal(offmap_put_new(&m, 0xeffffff8, 1, &v), -EINVAL);
	assert_int_equal(offmap_put_new(&m, 0x100000000, 1, &v), -EINVAL);
	assert_int_equal(offmap_put_new(&m, 0xf0000004, 1, &v), -EINVAL);
	assert_false(offmap_get(&m, 0x100000000, &v));
	assert_int_equal(m.n, 3);
	offmap_free(&m);
	offmap_free(&m);
}

static void test_range(void **state)
{
	struct offmap m;

	/* 32 GiB of 8-byte words is one too many for 32-bit keys */
	assert_int_equal(offmap_init(&m, 0x800000000ull, 0x800000000ull + (32ull << 30), 10), -ERANGE);
	offmap_free(&m);
	assert_int_equal(offmap_init(&m, 0x800000000ull, 0x800000000ull + (31ull << 30), 10), 0);
	offmap_free(&m);
	assert_int_equal(offmap_init(&m, 10, 9, 1), -ERANGE);
	offmap_free(&m);
}

/* A million objects 16-40 bytes apart, from a tiny table: growth keeps
 * every value; 3 M look-ups like a walk's (each object met ~3 times). */
static void test_heap_like(void **state)
{
	struct offmap m;
	const size_t n = 1000000;
	uint64_t *addr = malloc(n * sizeof(*addr)), a = 0x7f0000000ull;
	uint32_t v;

	assert_non_null(addr);
	for (size_t i = 0; i < n; i++) {
		addr[i] = a;
		a += 16 + 8 * (i % 4);
	}
	assert_int_equal(offmap_init(&m, addr[0], addr[n - 1], 16), 0);
	for (size_t k = 0; k < 3; k++)
		for (size_t i = 0; i < n; i++) {
			size_t j = (i * 7919 + k) % n;

			assert_int_equal(offmap_put_new(&m, addr[j], (uint32_t)j, &v), 0);
			assert_int_equal(v, (uint32_t)j);
		}
	assert_int_equal(m.n, n);
	for (size_t i = 0; i < n; i += 3) {
		assert_true(offmap_get(&m, addr[i], &v));
		assert_int_equal(v, (uint32_t)i);
		assert_false(offmap_get(&m, addr[i] + 8, &v));
	}
	offmap_free(&m);
	free(addr);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_range),
		cmocka_unit_test(test_heap_like),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
