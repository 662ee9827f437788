// SPDX-License-Identifier: GPL-2.0
/* test_idmap - the 64-bit key -> pointer map (user/lib/idmap.c), which the
 * sequencer and the untagged walk's ids (walkids.c) use, and the id -> position
 * index the query heap is built with (heapview.c): dense, sparse, and ids
 * base + position. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/idmap.h"

#define V(x) ((void *)(uintptr_t)(x))

static void test_put_get_del(void **state)
{
	struct idmap m;

	idmap_init(&m);
	assert_null(idmap_get(&m, 5));
	assert_int_equal(idmap_put(&m, 0, V(10)), 0); /* key 0 is a key */
	assert_int_equal(idmap_put(&m, 5, V(50)), 0);
	assert_int_equal(idmap_put(&m, 5, V(51)), 0); /* replaces */
	assert_ptr_equal(idmap_get(&m, 0), V(10));
	assert_ptr_equal(idmap_get(&m, 5), V(51));
	assert_int_equal(m.n, 2);
	assert_ptr_equal(idmap_del(&m, 5), V(51));
	assert_null(idmap_get(&m, 5));
	assert_null(idmap_del(&m, 5));
	idmap_free(&m);
	idmap_free(&m); /* twice: no-op */
}

/* put_new keeps the first value, as the heap walk's first-met ids need. */
static void test_put_new(void **state)
{
	struct idmap m;
	void *cur = NULL;

	idmap_init(&m);
	assert_int_equal(idmap_put_new(&m, 1ull << 63 | 0x7000010, V(100), &cur), 0);
	assert_ptr_equal(cur, V(100));
	assert_int_equal(idmap_put_new(&m, 1ull << 63 | 0x7000018, V(101), &cur), 0);
	assert_ptr_equal(cur, V(101));
	assert_int_equal(idmap_put_new(&m, 1ull << 63 | 0x7000010, V(102), &cur), 0);
	assert_ptr_equal(cur, V(100));
	assert_int_equal(m.n, 2);
	idmap_free(&m);
}

/* Reserve sizes once; a million heap-like keys (8-byte strides) survive
 * growth, deletion of every third and a second look-up pass. */
static void test_reserve_and_many(void **state)
{
	struct idmap m;
	const uint64_t n = 1000000;
	size_t cap;

	idmap_init(&m);
	assert_int_equal(idmap_reserve(&m, 1000), 0);
	cap = m.cap;
	assert_true(cap >= 2000);
	for (uint64_t i = 0; i < 1000; i++)
		assert_int_equal(idmap_put(&m, 0x600000000ull + 8 * i, V(i + 1)), 0);
	assert_int_equal(m.cap, cap); /* no growth within the reservation */
	for (uint64_t i = 1000; i < n; i++)
		assert_int_equal(idmap_put(&m, 0x600000000ull + 8 * i, V(i + 1)), 0);
	for (uint64_t i = 0; i < n; i += 3)
		assert_ptr_equal(idmap_del(&m, 0x600000000ull + 8 * i), V(i + 1));
	for (uint64_t i = 0; i < n; i++) {
		void *v = idmap_get(&m, 0x600000000ull + 8 * i);

		if (i % 3 == 0)
			assert_null(v);
		else
			assert_ptr_equal(v, V(i + 1));
	}
	idmap_free(&m);
}

/* Dense ids (up to 4 n + 4096) index an array; id 0 is no id; the first
 * position put stays. */
static void test_index_dense(void **state)
{
	struct idmap_index x;

	assert_int_equal(idmap_index_init(&x, 10, 50), 0);
	assert_non_null(x.direct);
	assert_int_equal(idmap_index_get(&x, 7), IDMAP_NOIDX);
	assert_int_equal(idmap_index_put(&x, 7, 3), 0);
	assert_int_equal(idmap_index_put(&x, 7, 4), 0); /* the first stays */
	assert_int_equal(idmap_index_put(&x, 50, 0), 0);
	assert_int_equal(idmap_index_put(&x, 0, 9), 0);  /* id 0: ignored */
	assert_int_equal(idmap_index_put(&x, 51, 9), 0); /* above maxid: ignored */
	assert_int_equal(idmap_index_get(&x, 7), 3);
	assert_int_equal(idmap_index_get(&x, 50), 0);
	assert_int_equal(idmap_index_get(&x, 0), IDMAP_NOIDX);
	assert_int_equal(idmap_index_get(&x, 51), IDMAP_NOIDX);
	assert_int_equal(idmap_index_get(&x, UINT64_MAX), IDMAP_NOIDX);
	idmap_index_free(&x);
	idmap_index_free(&x); /* twice: no-op */
	/* no ids at all */
	assert_int_equal(idmap_index_init(&x, 0, 0), 0);
	assert_int_equal(idmap_index_get(&x, 0), IDMAP_NOIDX);
	assert_int_equal(idmap_index_get(&x, 1), IDMAP_NOIDX);
	idmap_index_free(&x);
}

/* Sparse ids (addresses, from a heap dump) go through the map, with the
 * same answers: positions 0 and UINT32_MAX - 1 included. */
static void test_index_sparse(void **state)
{
	const uint64_t n = 100000, base = 0x7f0000000ull;
	struct idmap_index x;

	assert_int_equal(idmap_index_init(&x, n, base + 8 * n), 0);
	assert_null(x.direct);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(idmap_index_put(&x, base + 8 * i, (uint32_t)i), 0);
	assert_int_equal(idmap_index_put(&x, base, 77), 0); /* the first stays */
	assert_int_equal(idmap_index_put(&x, 0, 5), 0);     /* id 0: ignored */
	assert_int_equal(idmap_index_put(&x, 1ull << 62, UINT32_MAX - 1), 0);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(idmap_index_get(&x, base + 8 * i), i);
	assert_int_equal(idmap_index_get(&x, base + 4), IDMAP_NOIDX);
	assert_int_equal(idmap_index_get(&x, 0), IDMAP_NOIDX);
	assert_int_equal(idmap_index_get(&x, 1ull << 62), UINT32_MAX - 1);
	idmap_index_free(&x);
}

/* Ids base + position (a frozen copy's mark): a bit per position, the
 * others (named objects) in the map; the first position put for an id stays
 * whichever way it went, an id in the range at another position included. */
static void test_index_base(void **state)
{
	const uint64_t base = 1000;
	struct idmap_index x;

	assert_int_equal(idmap_index_init_dense(&x, 100, base), 0);
	assert_non_null(x.bits);
	assert_null(x.direct);
	assert_int_equal(idmap_index_put(&x, 7, 0), 0);         /* named, below base */
	assert_int_equal(idmap_index_put(&x, base + 1, 1), 0);  /* its own */
	assert_int_equal(idmap_index_put(&x, base + 1, 4), 0);  /* again: the first stays */
	assert_int_equal(idmap_index_put(&x, base + 10, 2), 0); /* in the range, not its own... */
	assert_int_equal(idmap_index_put(&x, base + 10, 10), 0); /* ...which then stays out */
	assert_int_equal(idmap_index_put(&x, base + 3, 3), 0);
	assert_int_equal(idmap_index_put(&x, 7, 3), 0);         /* the first stays */
	assert_int_equal(idmap_index_put(&x, 0, 5), 0);         /* id 0: ignored */
	assert_int_equal(idmap_index_put(&x, base + 99, 99), 0);
	assert_int_equal(idmap_index_put(&x, base + 100, 77), 0); /* past the positions */
	assert_int_equal(idmap_index_get(&x, 7), 0);
	assert_int_equal(idmap_index_get(&x, base + 1), 1);
	assert_int_equal(idmap_index_get(&x, base + 10), 2);
	assert_int_equal(idmap_index_get(&x, base + 3), 3);
	assert_int_equal(idmap_index_get(&x, base + 99), 99);
	assert_int_equal(idmap_index_get(&x, base + 100), 77);
	assert_int_equal(idmap_index_get(&x, base + 4), IDMAP_NOIDX); /* position 4: no id */
	assert_int_equal(idmap_index_get(&x, base + 5), IDMAP_NOIDX);
	assert_int_equal(idmap_index_get(&x, base - 1), IDMAP_NOIDX);
	assert_int_equal(idmap_index_get(&x, 0), IDMAP_NOIDX);
	assert_int_equal(idmap_index_get(&x, UINT64_MAX), IDMAP_NOIDX);
	idmap_index_free(&x);
	idmap_index_free(&x); /* twice: no-op */
	/* base 0: position 0 would be id 0, which is no id */
	assert_int_equal(idmap_index_init_dense(&x, 3, 0), 0);
	assert_int_equal(idmap_index_put(&x, 0, 0), 0);
	assert_int_equal(idmap_index_put(&x, 1, 1), 0);
	assert_int_equal(idmap_index_get(&x, 0), IDMAP_NOIDX);
	assert_int_equal(idmap_index_get(&x, 1), 1);
	idmap_index_free(&x);
}

/* Two threads' way to fill a dense index (heap/viewobjs.c): a second
 * thread's own ids are bits of its words, the rest are left to the first;
 * what may differ from one thread's order is seen (collides, in_dense) and
 * redone after forget_from. */
static void test_index_two_parts(void **state)
{
	const uint64_t base = 500;
	struct idmap_index x, y;

	(void)state;
	assert_int_equal(idmap_index_init(&y, 10, 1000), 0);
	assert_false(idmap_index_dense(&y));
	assert_false(idmap_index_put_own(&y, 5, 5)); /* not dense: nothing */
	idmap_index_free(&y);
	assert_int_equal(idmap_index_init_dense(&x, 200, base), 0);
	assert_true(idmap_index_dense(&x));
	/* the first part, [0, 128): its own ids and a named one */
	for (uint32_t p = 0; p < 128; p++)
		assert_int_equal(idmap_index_put(&x, base + p, p), 0);
	assert_int_equal(idmap_index_put(&x, 3, 5), 0); /* (5 already has its own) */
	assert_false(idmap_index_collides(&x));
	/* the second, [128, 200) */
	assert_true(idmap_index_put_own(&x, base + 150, 150));
	assert_false(idmap_index_put_own(&x, 9, 151));          /* named: later */
	assert_false(idmap_index_put_own(&x, base + 160, 152)); /* not its own: later */
	assert_false(idmap_index_put_own(&x, base + 300, 300)); /* past the bits */
	assert_false(idmap_index_in_dense(&x, 9));
	assert_true(idmap_index_in_dense(&x, base + 160));
	assert_false(idmap_index_in_dense(&x, base + 200));
	assert_int_equal(idmap_index_get(&x, base + 150), 150);
	assert_int_equal(idmap_index_get(&x, base + 100), 100);
	assert_int_equal(idmap_index_get(&x, 3), 5);
	/* a first-part id in the range, not its own: the map says collide */
	assert_int_equal(idmap_index_put(&x, base + 170, 7), 0);
	assert_true(idmap_index_collides(&x));
	idmap_index_forget_from(&x, 128);
	assert_int_equal(idmap_index_get(&x, base + 150), IDMAP_NOIDX);
	assert_int_equal(idmap_index_get(&x, base + 127), 127); /* the first part's stay */
	assert_int_equal(idmap_index_get(&x, base + 170), 7);
	idmap_index_forget_from(&x, 4096); /* past the bits: nothing */
	assert_int_equal(idmap_index_get(&x, base + 127), 127);
	idmap_index_free(&x);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_put_get_del),
		cmocka_unit_test(test_put_new),
		cmocka_unit_test(test_reserve_and_many),
		cmocka_unit_test(test_index_dense),
		cmocka_unit_test(test_index_sparse),
		cmocka_unit_test(test_index_base),
		cmocka_unit_test(test_index_two_parts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
