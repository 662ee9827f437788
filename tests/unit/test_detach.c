// SPDX-License-Identifier: GPL-2.0
/* test_detach - each destroy runs on a thread of its own, at once (two calls
 * that wait for each other both finish), detach_free waits for all, and past
 * DETACH_MAX_INFLIGHT the caller's thread does the call itself. */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <cmocka.h>

#include "probe/detach.h"

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int started, finished, want, timeouts;
static bool release;

struct obj {
	bool block;          /* wait for `release` */
	bool meet;           /* wait until `want` calls have started */
	pthread_t ran_on;
};

/* Waits on the condition, at most 20 s (a deadlock guard, not a timing). */
static void wait_until(bool (*cond)(void))
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += 20;
	while (!cond())
		if (pthread_cond_timedwait(&cv, &mu, &ts) == ETIMEDOUT) {
			timeouts++;
			return;
		}
}

static bool all_started(void) { return started >= want; }
static bool released(void) { return release; }

static void destroy(void *p)
{
	struct obj *o = p;

	pthread_mutex_lock(&mu);
	o->ran_on = pthread_self();
	started++;
	pthread_cond_broadcast(&cv);
	if (o->meet)
		wait_until(all_started);
	if (o->block)
		wait_until(released);
	finished++;
	pthread_mutex_unlock(&mu);
}

static void reset(int w)
{
	started = finished = timeouts = 0;
	want = w;
	release = false;
}

static void test_concurrent(void **state)
{
	struct detacher *d = detach_new(destroy);
	struct obj o[4] = { { .meet = true }, { .meet = true }, { .meet = true },
			    { .meet = true } };

	(void)state;
	assert_non_null(d);
	reset(4);
	for (int i = 0; i < 4; i++)
		detach_later(d, &o[i]); /* serial calls would each wait 20 s */
	detach_free(d);
	assert_int_equal(finished, 4);
	assert_int_equal(timeouts, 0);
	for (int i = 0; i < 4; i++)
		assert_false(pthread_equal(o[i].ran_on, pthread_self()));
}

static void test_limit(void **state)
{
	struct detacher *d = detach_new(destroy);
	struct obj o[DETACH_MAX_INFLIGHT + 1];

	(void)state;
	assert_non_null(d);
	reset(0);
	for (int i = 0; i < DETACH_MAX_INFLIGHT; i++) {
		o[i] = (struct obj){ .block = true };
		detach_later(d, &o[i]);
	}
	/* every slot is taken by a blocked call: this one runs here */
	pthread_mutex_lock(&mu);
	want = DETACH_MAX_INFLIGHT;
	wait_until(all_started);
	pthread_mutex_unlock(&mu);
	assert_int_equal(detach_inflight(d), DETACH_MAX_INFLIGHT);
	o[DETACH_MAX_INFLIGHT] = (struct obj){ 0 };
	detach_later(d, &o[DETACH_MAX_INFLIGHT]);
	assert_true(pthread_equal(o[DETACH_MAX_INFLIGHT].ran_on, pthread_self()));
	pthread_mutex_lock(&mu);
	assert_int_equal(finished, 1);
	release = true;
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	detach_free(d);
	assert_int_equal(finished, DETACH_MAX_INFLIGHT + 1);
	assert_int_equal(timeouts, 0);
}

static void test_null(void **state)
{
	struct detacher *d = detach_new(destroy);

	(void)state;
	reset(0);
	detach_later(NULL, &(struct obj){ 0 });
	detach_later(d, NULL);
	assert_int_equal(detach_inflight(d), 0);
	assert_int_equal(detach_inflight(NULL), 0);
	detach_free(d);
	detach_free(NULL);
	assert_int_equal(started, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_concurrent),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_null),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
