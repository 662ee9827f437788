/* test_heapseries.c - heap/heapseries.c's plan: which turns of a series of
 * snapshots are taken (heapseries_keep_turn): every one when snapshots are
 * cheap or the plan is exact; when each costs more than its interval, those
 * that would not end within the window are left out, but three are always
 * taken - the first, one between, the last. The series itself (walks of a
 * live JVM) is e2e's (leaks_growth). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

#include "heap/heapmem.h"
#include "heap/heapseries.h"
#include "heap/recpool.h"
#include "lib/util.h"

/* Run plan @pl with snapshots costing @cost s each, as sampling_run calls the
 * turns (each when due, or at once when late); the instants of those taken
 * into @at. Returns how many. */
static uint32_t simulate(const struct heapseries_plan *pl, double cost, double *at)
{
	double every = pl->duration / (pl->n - 1), now = 0, last = 0;
	uint32_t taken = 0;

	for (uint32_t i = 0; i < pl->n; i++) {
		double due = i + 1 == pl->n ? pl->duration : i * every;

		if (now < due)
			now = due;
		if (!heapseries_keep_turn(pl, i, now, taken, last))
			continue;
		at[taken++] = now;
		last = cost;
		now += cost;
	}
	return taken;
}

static void test_cheap_snapshots_all_taken(void **state)
{
	struct heapseries_plan pl = { .n = 6, .duration = 30 };
	double at[6];

	(void)state;
	assert_int_equal(simulate(&pl, 1.0, at), 6);
	for (int k = 0; k < 6; k++)
		assert_true(at[k] == k * 6.0);
	/* a snapshot that just fits before the end: taken */
	assert_int_equal(simulate(&pl, 5.9, at), 6);
}

static void test_slow_snapshots_fitted(void **state)
{
	struct heapseries_plan pl = { .n = 6, .duration = 30 };
	double at[6];
	uint32_t k;

	(void)state;
	/* 13 s apiece (10 M objects on a busy machine): 0, 13, then 30 */
	k = simulate(&pl, 13.0, at);
	assert_int_equal(k, 3);
	assert_true(at[0] == 0 && at[1] == 13.0 && at[2] == 30.0);
	/* 7 s: 0, 7, 14, 21 (28 would end after 30), 30 */
	k = simulate(&pl, 7.0, at);
	assert_int_equal(k, 5);
	assert_true(at[3] == 21.0 && at[4] == 30.0);
	/* slower than the window itself: still one between, taken late */
	k = simulate(&pl, 40.0, at);
	assert_int_equal(k, 3);
	assert_true(at[1] == 40.0 && at[2] == 80.0);
}

static void test_exact_plan_takes_every_turn(void **state)
{
	struct heapseries_plan pl = { .n = 4, .duration = 1, .exact = true };
	double at[4];

	(void)state;
	assert_int_equal(simulate(&pl, 5.0, at), 4);
	assert_true(at[3] == 15.0); /* late: one after the other */
}

static void test_first_and_last_always(void **state)
{
	struct heapseries_plan pl = { .n = 6, .duration = 30 };

	(void)state;
	assert_true(heapseries_keep_turn(&pl, 0, 0, 0, 0));
	assert_true(heapseries_keep_turn(&pl, 5, 100, 2, 50));
	/* two snapshots only: nothing between to leave out */
	pl.n = 2;
	assert_true(heapseries_keep_turn(&pl, 1, 100, 1, 50));
}

/* The memory kept for the next copy's records: only after the copy's own
 * mark read live, only for large records (or MEMTRACE_RECPOOL=always), grown
 * with the heap, never when the next snapshot with it would not fit the
 * bound (a pool must not be why a snapshot is refused). */
static void test_ready_next(void **state)
{
	struct heapseries s = { 0 };
	uint64_t need;

	(void)state;
	unsetenv("MEMTRACE_RECPOOL");
	s.rec_objs = s.rec_refs = 1000;
	heapseries_ready_next(&s);
	assert_null(s.pool); /* not read live */
	s.rec_live = true;
	heapseries_ready_next(&s);
	assert_null(s.pool); /* small records: no pool */
	setenv("MEMTRACE_RECPOOL", "never", 1);
	s.rec_objs = s.rec_refs = 5000000;
	heapseries_ready_next(&s);
	assert_null(s.pool);
	/* a view built where the copy wrote them: its pool is the next take's
	 * (heapseries_take()), none kept beside it */
	setenv("MEMTRACE_RECPOOL", "always", 1);
	s.rec_inplace = true;
	heapseries_ready_next(&s);
	assert_null(s.pool);
	s.rec_inplace = false;
	s.rec_objs = s.rec_refs = 1000;
	heapseries_ready_next(&s);
	assert_non_null(s.pool);
	assert_true(s.pool->bytes >= recpool_bytes_for(1000, 1000));
	{
		const struct recpool *was = s.pool;
		uint64_t bytes = s.pool->bytes;

		heapseries_ready_next(&s); /* as large as needed already */
		assert_ptr_equal(s.pool, was);
		assert_int_equal(s.pool->bytes, bytes);
		s.rec_objs = s.rec_refs = 40000;
		heapseries_ready_next(&s); /* grown in place */
		assert_ptr_equal(s.pool, was);
		assert_true(s.pool->bytes >= recpool_bytes_for(40000, 40000));
	}
	recpool_free(s.pool);
	s.pool = NULL;
	/* --max-memory: the next snapshot fits alone, not beside a pool */
	s.rec_objs = s.rec_refs = 100000;
	need = heapmem_need(HEAPMEM_SERIES, 112500, 112500);
	mt_opts.max_memory = need + recpool_bytes_for(100000, 100000) / 2;
	heapseries_ready_next(&s);
	assert_null(s.pool);
	mt_opts.max_memory = need + recpool_bytes_for(100000, 100000) + (1u << 20);
	heapseries_ready_next(&s);
	assert_non_null(s.pool);
	mt_opts.max_memory = 0;
	unsetenv("MEMTRACE_RECPOOL");
	recpool_free(s.pool);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cheap_snapshots_all_taken),
		cmocka_unit_test(test_slow_snapshots_fitted),
		cmocka_unit_test(test_exact_plan_takes_every_turn),
		cmocka_unit_test(test_first_and_last_always),
		cmocka_unit_test(test_ready_next),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
