// SPDX-License-Identifier: GPL-2.0
/* test_edenwatch.c - the frozen walk's wait for a GC: an allocating JVM waits,
 * an idle one does not - also when its periodic threads run in bursts - and
 * a JVM busy at a steady 10 % or starved of CPU is not taken for idle. The
 * samples are made here, 2 ms apart as snaptake.c polls. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include "heap/edenwatch.h"
#include "heap/heapfreeze.h"

#define MS 1000000ull

/* A JVM's CPU use, in ns of CPU per ms of time from the watch's start. */
typedef uint64_t (*use_fn)(uint64_t ms);

/* Run a watch to its end over a JVM using @run (and waiting @wait) with an
 * eden that grows by @grow bytes a ms; *@at: the ms of the verdict. */
static enum edenwatch_verdict run_watch(use_fn run, use_fn wait, int64_t grow, bool sched,
					uint64_t *at)
{
	struct edenwatch w;
	struct edenwatch_sample s = { .now_ns = 1000 * MS, .used = 50 << 20, .young = 7,
				      .sched = sched, .run_ns = 5000 * MS, .wait_ns = 300 * MS };
	uint64_t run_sum = s.run_ns, wait_sum = s.wait_ns;
	enum edenwatch_verdict v;

	edenwatch_begin(&w, &s);
	for (uint64_t ms = 0;; ms++) {
		run_sum += run(ms);
		wait_sum += wait ? wait(ms) : 0;
		if (ms % 2 || !ms)
			continue;
		s.now_ns = 1000 * MS + ms * MS;
		s.used = (50 << 20) + grow * (int64_t)ms;
		s.run_ns = run_sum;
		s.wait_ns = wait_sum;
		v = edenwatch_poll(&w, &s);
		if (v != EDENWATCH_GOING) {
			*at = ms;
			return v;
		}
		assert_true(ms < 200); /* the watch ends at 110 ms */
	}
}

/* Idle: 1 % of a core, spread evenly. */
static uint64_t idle(uint64_t ms)
{
	(void)ms;
	return 10000;
}

/* Idle but for a 2.3 ms burst of a periodic thread at 1 ms. */
static uint64_t idle_burst(uint64_t ms)
{
	return ms == 1 ? 2300000 : 10000;
}

/* Busy at 10 %: 0.5 ms every 5 ms. */
static uint64_t ten_percent(uint64_t ms)
{
	return ms % 5 == 0 ? 500000 : 0;
}

/* Waiting for a CPU half the time. */
static uint64_t starved(uint64_t ms)
{
	(void)ms;
	return 500000;
}

static void test_idle(void **state)
{
	uint64_t at;

	(void)state;
	assert_int_equal(run_watch(idle, NULL, 0, true, &at), EDENWATCH_IDLE);
	assert_int_equal(at, 8); /* the first poll a stretch is long enough */
}

/* A burst early on: a new stretch after it, no 110 ms wait (the stretch from
 * the watch's start stayed above 3 % until 2.3 ms / 3 % = 77 ms plus, with
 * the 1 % besides, ~115 ms: the whole watch). */
static void test_idle_after_burst(void **state)
{
	uint64_t at;

	(void)state;
	assert_int_equal(run_watch(idle_burst, NULL, 0, true, &at), EDENWATCH_IDLE);
	assert_true(at >= 16);
	assert_true(at <= 20);
}

/* Busy at 10 %: every stretch of 8 ms holds a 0.5 ms burst or two. */
static void test_busy_not_idle(void **state)
{
	uint64_t at;

	(void)state;
	assert_int_equal(run_watch(ten_percent, NULL, 0, true, &at), EDENWATCH_QUIET);
	assert_int_equal(at, 110);
}

/* Running little, but only for want of a CPU. */
static void test_starved_not_idle(void **state)
{
	uint64_t at;

	(void)state;
	assert_int_equal(run_watch(idle, starved, 0, true, &at), EDENWATCH_QUIET);
}

/* The CPU times could not be read: never idle, the whole watch. */
static void test_no_sched(void **state)
{
	uint64_t at;

	(void)state;
	assert_int_equal(run_watch(idle, NULL, 0, false, &at), EDENWATCH_QUIET);
	assert_int_equal(at, 110);
}

/* The eden grows by a 16th of HEAPFREEZE_EDEN_MIN: wait for a GC, even when
 * the threads look idle (a burst that allocated). */
static void test_allocates(void **state)
{
	uint64_t at;

	(void)state;
	assert_int_equal(run_watch(ten_percent, NULL, HEAPFREEZE_EDEN_MIN / 16 / 4, true, &at),
			 EDENWATCH_ALLOCATES);
	assert_int_equal(at, 4);
}

/* The eden emptied by a GC, or the young count moved: allocating. */
static void test_collected(void **state)
{
	struct edenwatch w;
	struct edenwatch_sample s = { .now_ns = MS, .used = 80 << 20, .young = 3 };

	(void)state;
	edenwatch_begin(&w, &s);
	s.now_ns += 2 * MS;
	assert_int_equal(edenwatch_poll(&w, &s), EDENWATCH_GOING);
	s.used = 10 << 20;
	assert_int_equal(edenwatch_poll(&w, &s), EDENWATCH_ALLOCATES);
	s.used = 80 << 20;
	s.young = 4;
	assert_int_equal(edenwatch_poll(&w, &s), EDENWATCH_ALLOCATES);
	assert_false(edenwatch_wants_sched(&w, s.now_ns)); /* not read at the start */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_idle),
		cmocka_unit_test(test_idle_after_burst),
		cmocka_unit_test(test_busy_not_idle),
		cmocka_unit_test(test_starved_not_idle),
		cmocka_unit_test(test_no_sched),
		cmocka_unit_test(test_allocates),
		cmocka_unit_test(test_collected),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
