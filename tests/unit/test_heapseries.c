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
#include <cmocka.h>

#include "heap/heapseries.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cheap_snapshots_all_taken),
		cmocka_unit_test(test_slow_snapshots_fitted),
		cmocka_unit_test(test_exact_plan_takes_every_turn),
		cmocka_unit_test(test_first_and_last_always),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
