// SPDX-License-Identifier: GPL-2.0
/* test_waitgraph - deadlocks as the cycles of a wait-for graph. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "analysis/waitgraph.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void test_none(void **state)
{
	/* a chain that ends (3 waits for 2 waits for 1, who runs) is no deadlock */
	struct waitgraph_node g[] = { { 1, 0 }, { 2, 1 }, { 3, 2 }, { 4, 99 } };
	uint32_t c[N(g)];

	(void)state;
	assert_int_equal(waitgraph_cycles(g, N(g), c), 0);
	for (size_t i = 0; i < N(g); i++)
		assert_int_equal(c[i], 0);
	assert_int_equal(waitgraph_cycles(NULL, 0, c), 0);
}

static void test_two_and_three(void **state)
{
	/* 10 <-> 11; 20 -> 21 -> 22 -> 20; 30 waits for 11 (blocked behind the
	 * deadlock, not part of it); 40 runs */
	struct waitgraph_node g[] = { { 30, 11 }, { 10, 11 }, { 11, 10 }, { 40, 0 },
				      { 21, 22 }, { 20, 21 }, { 22, 20 } };
	uint32_t c[N(g)];

	(void)state;
	assert_int_equal(waitgraph_cycles(g, N(g), c), 2);
	assert_int_equal(c[0], 0);
	assert_int_equal(c[1], 1);
	assert_int_equal(c[2], 1);
	assert_int_equal(c[3], 0);
	assert_int_equal(c[4], 2);
	assert_int_equal(c[5], 2);
	assert_int_equal(c[6], 2);
}

static void test_self_and_duplicates(void **state)
{
	/* a thread waiting for a lock it owns itself is a cycle of one (a
	 * non-reentrant lock taken twice); a duplicated tid keeps its first entry */
	struct waitgraph_node g[] = { { 5, 5 }, { 6, 7 }, { 7, 6 }, { 6, 0 } };
	uint32_t c[N(g)];

	(void)state;
	assert_int_equal(waitgraph_cycles(g, N(g), c), 2);
	assert_int_equal(c[0], 1);
	assert_int_equal(c[1], 2);
	assert_int_equal(c[2], 2);
	assert_int_equal(c[3], 0);
}

static void test_large_ring(void **state)
{
	enum { M = 5000 };
	struct waitgraph_node *g = calloc(M, sizeof(*g));
	uint32_t *c = calloc(M, sizeof(*c));

	(void)state;
	assert_non_null(g);
	assert_non_null(c);
	for (uint32_t i = 0; i < M; i++)
		g[i] = (struct waitgraph_node){ i + 1, (uint64_t)((i + 1) % M + 1) };
	assert_int_equal(waitgraph_cycles(g, M, c), 1);
	for (uint32_t i = 0; i < M; i++)
		assert_int_equal(c[i], 1);
	free(g);
	free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_two_and_three),
		cmocka_unit_test(test_self_and_duplicates),
		cmocka_unit_test(test_large_ring),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
