// SPDX-License-Identifier: GPL-2.0
/* test_threadctr - totals from every thread's own counter: exact for the
 * threads of the first reading (from their counter then), for threads that
 * start later (from 0), for threads that end (at their last reading or
 * sample), for a new thread at an old one's address; readings that cannot
 * be counts left out; each thread's slowdown in windows (corr) and the
 * weight scale it gives. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "probe/threadctr.h"

#define MS 1000000ull

static void list(struct threadctr *c, size_t n, const uint64_t *jts, const uint64_t *ctr)
{
	bool ok[8] = { true, true, true, true, true, true, true, true };

	assert_int_equal(threadctr_list(c, jts, ctr, ok, n), 0);
}

static void test_valid(void **state)
{
	(void)state;
	assert_true(threadctr_valid(100, 100));
	assert_true(threadctr_valid(100 + THREADCTR_MAX_STEP - 1, 100));
	assert_false(threadctr_valid(99, 100));             /* counters only grow */
	assert_false(threadctr_valid(0x7f0012345678ull, 0)); /* a pointer, not a count */
}

static void test_totals(void **state)
{
	struct threadctr c;
	uint64_t jts[3] = { 0xa000, 0xb000, 0xc000 };

	(void)state;
	threadctr_init(&c);
	/* the session starts: a and b have allocated before it */
	list(&c, 2, jts, (uint64_t[]){ 1000, 5000 });
	assert_true(threadctr_total(&c) == 0);
	/* both move; c starts (from 0: its 300 bytes count) */
	list(&c, 3, jts, (uint64_t[]){ 1500, 5100, 300 });
	assert_true(threadctr_total(&c) == 500 + 100 + 300);
	/* b ends after a sample saw 5400: it counts to there */
	threadctr_sampled(&c, 0xb000, 5400);
	threadctr_sampled(&c, 0xb000, 5300); /* older: no effect */
	list(&c, 2, (uint64_t[]){ 0xa000, 0xc000 }, (uint64_t[]){ 1600, 350 });
	assert_true(threadctr_total(&c) == 600 + 400 + 350);
	{ /* b is still known by name, ended at its last sample */
		double b = 0;

		assert_true(threadctr_thread(&c, 0xb000, &b) && b == 400);
		assert_false(threadctr_thread(&c, 0xe000, &b));
	}
	/* a reading that cannot be a count changes nothing; a failed read of a
	 * listed thread keeps it */
	{
		bool ok[2] = { true, false };

		assert_int_equal(threadctr_list(&c, (uint64_t[]){ 0xa000, 0xc000 },
						(uint64_t[]){ 0x7f0000001000ull, 0 }, ok, 2), 0);
	}
	assert_true(threadctr_total(&c) == 1350);
	/* a new thread at c's address: c ended at 350, the new one from 0 */
	list(&c, 2, (uint64_t[]){ 0xa000, 0xc000 }, (uint64_t[]){ 1700, 20 });
	assert_true(threadctr_total(&c) == 700 + 400 + 350 + 20);
	uint64_t v = 0;

	assert_true(threadctr_last(&c, 0xc000, &v) && v == 20);
	assert_false(threadctr_last(&c, 0xb000, &v));
	threadctr_free(&c);
	threadctr_free(NULL);
}

/* Windows of 10 ms every 100 ms; the thread is 10 % slower in them. */
static void test_corr(void **state)
{
	struct threadctr c;
	uint64_t jt = 0xa000, ctr = 1000, t = 0, slow = 0xd000, sctr = 0;
	double in = 900e3, out = 1000e3; /* bytes per ms */

	(void)state;
	threadctr_init(&c);
	for (int i = 0; i < 20; i++) {
		list(&c, 2, (uint64_t[]){ jt, slow }, (uint64_t[]){ ctr, sctr });
		threadctr_open(&c, t);
		ctr += (uint64_t)(10 * in);
		sctr += 1000; /* too little in a window to measure */
		t += 10 * MS;
		list(&c, 2, (uint64_t[]){ jt, slow }, (uint64_t[]){ ctr, sctr });
		threadctr_close(&c, t);
		ctr += (uint64_t)(90 * out);
		t += 90 * MS;
	}
	assert_true(fabs(threadctr_corr(&c, jt) - out / in) < 1e-6);
	/* a window the thread stopped in (idle out of it): the median holds */
	list(&c, 2, (uint64_t[]){ jt, slow }, (uint64_t[]){ ctr, sctr });
	threadctr_open(&c, t);
	ctr += (uint64_t)(10 * in);
	t += 10 * MS;
	list(&c, 2, (uint64_t[]){ jt, slow }, (uint64_t[]){ ctr, sctr });
	threadctr_close(&c, t);
	t += 90 * MS;
	list(&c, 2, (uint64_t[]){ jt, slow }, (uint64_t[]){ ctr, sctr });
	threadctr_open(&c, t);
	assert_true(fabs(threadctr_corr(&c, jt) - out / in) < 1e-6);
	assert_true(threadctr_corr(&c, slow) == 0);
	/* scale 10 (a 10 ms window for 100 ms) becomes 1 + 9 x 1.111 = 11 */
	assert_int_equal(threadctr_scale(&c, jt, 10 * 256, 256), 2816);
	assert_int_equal(threadctr_scale(&c, slow, 10 * 256, 256), 10 * 256);
	assert_int_equal(threadctr_scale(&c, jt, 256, 256), 256);
	threadctr_free(&c);
}

/* Windows of 10 ms every 200 ms: the thread is 25 % slower in them and 5 %
 * slower for the 40 ms after (the detach's tail, which corr does not see):
 * it loses 2.5 + 2 = 4.5 ms a period, 2.25 %. The tail's reading comes
 * THREADCTR_TAIL_NS (60 ms) after the close. A GC pause in one period's
 * clean span is left out of the mean (the middle three of five); a window
 * without its tail reading measures nothing. */
static void test_loss(void **state)
{
	struct threadctr c;
	uint64_t jt = 0xa000, ctr = 1000, t = 0;
	double clean = 1000e3, loss; /* bytes per ms */

	(void)state;
	threadctr_init(&c);
	assert_false(threadctr_loss(&c, jt, &loss));
	for (int i = 0; i < 12; i++) {
		list(&c, 1, &jt, &ctr);
		threadctr_open(&c, t);
		ctr += (uint64_t)(10 * 0.75 * clean);
		t += 10 * MS;
		list(&c, 1, &jt, &ctr);
		threadctr_close(&c, t);
		/* 40 ms at 95 %, 20 ms clean: the tail's reading */
		ctr += (uint64_t)(40 * 0.95 * clean + 20 * clean);
		t += 60 * MS;
		list(&c, 1, &jt, &ctr);
		threadctr_tail(&c, t);
		/* to the next open, clean; period 8 has a 20 ms GC pause there */
		ctr += (uint64_t)((i == 8 ? 110 : 130) * clean);
		t += 130 * MS;
	}
	list(&c, 1, &jt, &ctr);
	threadctr_open(&c, t);
	assert_true(threadctr_loss(&c, jt, &loss));
	assert_true(fabs(loss - 0.0225) < 1e-4);
	/* no tail reading (the next window came first): nothing measured */
	{
		unsigned nl = ((struct threadctr_thread *)idmap_get(&c.threads, jt))->nl;

		ctr += (uint64_t)(10 * 0.75 * clean);
		t += 10 * MS;
		list(&c, 1, &jt, &ctr);
		threadctr_close(&c, t);
		ctr += (uint64_t)(30 * clean);
		t += 30 * MS;
		list(&c, 1, &jt, &ctr);
		threadctr_open(&c, t);
		assert_int_equal(((struct threadctr_thread *)idmap_get(&c.threads, jt))->nl, nl);
	}
	threadctr_free(&c);
}

/* The JVM's stops inside the spans (collections: no bytes, time passes),
 * a different number in each: handed over (threadctr_paused), every single
 * measurement is the window's loss; not handed over, they scatter. */
static void test_loss_paused(void **state)
{
	uint64_t jt = 0xb000;
	double clean = 1000e3; /* bytes per ms */

	(void)state;
	for (int given = 1; given >= 0; given--) {
		struct threadctr c;
		uint64_t ctr = 1000, t = 0, paused = 0;
		unsigned n0;
		double x0;
		double lo = 1, hi = -1;

		threadctr_init(&c);
		assert_false(threadctr_reading(&c, jt, &n0, &x0));
		for (int i = 0; i < 6; i++) {
			uint64_t pw = (uint64_t)(i % 3) * 4 * MS, pc = (uint64_t)((i * 7) % 4) * 6 * MS;

			list(&c, 1, &jt, &ctr);
			if (given)
				threadctr_paused(&c, paused);
			threadctr_open(&c, t);
			if (i >= 2) { /* the window before this open, measured */
				unsigned n = 0;
				double x = 0;

				assert_true(threadctr_reading(&c, jt, &n, &x));
				assert_int_equal(n, i); /* one a window, from the first */
				lo = x < lo ? x : lo;
				hi = x > hi ? x : hi;
			}
			ctr += (uint64_t)(10 * 0.75 * clean);
			t += 10 * MS;
			list(&c, 1, &jt, &ctr);
			threadctr_close(&c, t);
			/* 40 ms at 95 %, 20 ms clean, and pw stopped */
			ctr += (uint64_t)(40 * 0.95 * clean + 20 * clean);
			t += 60 * MS + pw;
			paused += pw;
			list(&c, 1, &jt, &ctr);
			if (given)
				threadctr_paused(&c, paused);
			threadctr_tail(&c, t);
			/* to the next open: 130 ms clean and pc stopped */
			ctr += (uint64_t)(130 * clean);
			t += 130 * MS + pc;
			paused += pc;
		}
		if (given) { /* each one 4.5 ms of 200 ms running */
			assert_true(fabs(lo - 0.0225) < 1e-4);
			assert_true(fabs(hi - 0.0225) < 1e-4);
		} else { /* the stops move single readings by points */
			assert_true(hi - lo > 0.03);
		}
		threadctr_free(&c);
	}
}

/* A thread that changes its pace between the spans (idle after the tail,
 * or idle in the window and busy after): no reading, where one would have
 * read -50 % or +30 % of its time. */
static void test_loss_pace(void **state)
{
	double clean = 1000e3; /* bytes per ms */

	(void)state;
	for (int idle_after = 1; idle_after >= 0; idle_after--) {
		struct threadctr c;
		uint64_t jt = 0xc000, ctr = 1000, t = 0;

		threadctr_init(&c);
		list(&c, 1, &jt, &ctr);
		threadctr_open(&c, t);
		ctr += (uint64_t)((idle_after ? 10 * 0.75 : 0.5) * clean);
		t += 10 * MS;
		list(&c, 1, &jt, &ctr);
		threadctr_close(&c, t);
		ctr += (uint64_t)((idle_after ? 60 : 10) * clean);
		t += 60 * MS;
		list(&c, 1, &jt, &ctr);
		threadctr_tail(&c, t);
		ctr += (uint64_t)((idle_after ? 5 : 130) * clean); /* idle, or busy */
		t += 130 * MS;
		list(&c, 1, &jt, &ctr);
		threadctr_open(&c, t);
		assert_int_equal(((struct threadctr_thread *)idmap_get(&c.threads, jt))->nl, 0);
		threadctr_free(&c);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_valid),
		cmocka_unit_test(test_totals),
		cmocka_unit_test(test_corr),
		cmocka_unit_test(test_loss),
		cmocka_unit_test(test_loss_paused),
		cmocka_unit_test(test_loss_pace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
