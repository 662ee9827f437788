// SPDX-License-Identifier: GPL-2.0
/* test_sptrace - the JVM's record of its last safepoint: the three statics
 * found in the real libjvm of JDK 17 and 25, and the window logic on a
 * scripted memory (a safepoint in progress, an end time written after the
 * counter, two safepoints, one that never ends). The e2e case walk_pause
 * compares the figure with -Xlog:safepoint's Total on live JVMs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "jvm/elfsym.h"
#include "jvm/proc.h"
#include "jvm/sptrace.h"

#define JDK17 "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
#define JDK25 "/usr/lib/jvm/temurin-25-jdk-amd64/lib/server/libjvm.so"

static void check_jdk(const char *path)
{
	struct mt_proc p = { .pid = 1, .libjvm_base = 0x7f0000000000ull };
	uint64_t addr, size;
	struct sptrace t;
	struct mt_elf *e;

	if (access(path, R_OK)) {
		print_message("skipped: %s absent\n", path);
		skip();
	}
	snprintf(p.libjvm_host, sizeof(p.libjvm_host), "%s", path);
	assert_int_equal(sptrace_open(&p, &t), 0);
	assert_true(t.ok);
	e = elfsym_open(path);
	assert_non_null(e);
	assert_int_equal(elfsym_lookup(e, SPTRACE_SYM_COUNTER, &addr, &size), 0);
	assert_int_equal(size, 8);
	assert_int_equal(t.counter, addr + elfsym_load_bias(e, p.libjvm_base));
	assert_int_equal(elfsym_lookup(e, SPTRACE_SYM_BEGIN, &addr, &size), 0);
	assert_int_equal(t.begin, addr + elfsym_load_bias(e, p.libjvm_base));
	assert_int_equal(elfsym_lookup(e, SPTRACE_SYM_APP, &addr, &size), 0);
	assert_int_equal(t.app, addr + elfsym_load_bias(e, p.libjvm_base));
	elfsym_free(e);
	/* no libjvm, or one without the names: no record, never a guess */
	p.libjvm_host[0] = '\0';
	assert_int_equal(sptrace_open(&p, &t), -ENOENT);
	assert_false(t.ok);
}

static void test_jdk17(void **state)
{
	check_jdk(JDK17);
}

static void test_jdk25(void **state)
{
	check_jdk(JDK25);
}

/* A scripted JVM: the three values, and what happens at each read of the
 * counter (a step of a safepoint going on). */
struct fake {
	uint64_t counter;
	int64_t begin, end, app;
	int reads;               /* counter reads so far */
	int settle_at;           /* at this read the safepoint ends (-1: never) */
	uint64_t end_counter;
	int64_t end_time;
	bool fail;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t n)
{
	struct fake *f = ctx;

	if (f->fail)
		return -EIO;
	assert_int_equal(n, 8);
	if (addr == 1) {
		if (f->reads++ == f->settle_at) {
			f->counter = f->end_counter;
			f->end = f->end_time;
		}
		memcpy(buf, &f->counter, 8);
	} else {
		memcpy(buf, addr == 2 ? &f->begin : addr == 3 ? &f->end : &f->app, 8);
	}
	return 0;
}

static struct sptrace fake_trace(struct fake *f)
{
	struct sptrace t = { .ok = true, .counter = 1, .begin = 2, .end = 3, .app = 4,
			     .read = fake_read, .ctx = f };
	return t;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void test_window(void **state)
{
	struct fake f = { .counter = 10, .begin = 500, .end = 900, .settle_at = -1 };
	struct sptrace t = fake_trace(&f);
	struct sptrace_window w;
	uint64_t ns = 0, t0;

	sptrace_window_begin(&t, &w);
	assert_true(w.ok);
	assert_int_equal(sptrace_window_end(&t, &w, &ns), 0); /* none since */

	/* one, ended: its end - begin */
	f.counter = 12, f.begin = 1000, f.end = 4500;
	assert_int_equal(sptrace_window_end(&t, &w, &ns), 1);
	assert_int_equal(ns, 3500);

	/* in progress (odd), ends at the 4th read: waited for */
	f.counter = 11, f.end = 900, f.reads = 0, f.settle_at = 3;
	f.end_counter = 12, f.end_time = 7000;
	assert_int_equal(sptrace_window_end(&t, &w, &ns), 1);
	assert_int_equal(ns, 6000);

	/* counter bumped, end time not yet written (still the previous one's) */
	f.counter = 12, f.end = 900, f.reads = 0, f.settle_at = 5;
	f.end_counter = 12, f.end_time = 2500;
	assert_int_equal(sptrace_window_end(&t, &w, &ns), 1);
	assert_int_equal(ns, 1500);

	/* two: counted, no time */
	f.counter = 14, f.settle_at = -1;
	assert_int_equal(sptrace_window_end(&t, &w, &ns), 2);

	/* never ends: waited for SPTRACE_SETTLE_MS, then unknown */
	f.counter = 11, f.reads = 0;
	t0 = now_ms();
	assert_int_equal(sptrace_window_end(&t, &w, &ns), -1);
	assert_true(now_ms() - t0 >= SPTRACE_SETTLE_MS);

	/* went back (another JVM), or unreadable: unknown */
	f.counter = 8;
	assert_int_equal(sptrace_window_end(&t, &w, &ns), -1);
	f.counter = 12, f.fail = true;
	assert_int_equal(sptrace_window_end(&t, &w, &ns), -1);

	/* begun inside a safepoint, or with no record: never a window */
	f.fail = false, f.counter = 13;
	sptrace_window_begin(&t, &w);
	assert_false(w.ok);
	assert_int_equal(sptrace_window_end(&t, &w, &ns), -1);
	t.ok = false;
	f.counter = 12;
	sptrace_window_begin(&t, &w);
	assert_false(w.ok);
	sptrace_window_begin(NULL, &w);
	assert_false(w.ok);
}

/* sptrace_look: in progress, ended, between the writes (refused), and the
 * previous safepoint's end from the time between */
static void test_look(void **state)
{
	struct fake f = { .counter = 11, .begin = 1000, .end = 0, .app = 300, .settle_at = -1 };
	struct sptrace t = fake_trace(&f);
	struct sptrace_look l;

	/* the 6th in progress: its begin, the 5th's end 700 */
	assert_int_equal(sptrace_look(&t, &l), 0);
	assert_int_equal(l.k, 6);
	assert_int_equal(l.begin, 1000);
	assert_int_equal(l.end, 0);
	assert_int_equal(l.prev_end, 700);
	/* ended */
	f.counter = 12, f.end = 1800;
	assert_int_equal(sptrace_look(&t, &l), 0);
	assert_int_equal(l.k, 6);
	assert_int_equal(l.end, 1800);
	assert_int_equal(l.prev_end, 700);
	/* counter bumped at the end, the end time not written yet (0) */
	f.end = 0;
	assert_int_equal(sptrace_look(&t, &l), -EAGAIN);
	/* the 7th's begin written, the counter not bumped: its begin is newer
	 * than the 6th's end still there */
	f.begin = 2500, f.end = 1800;
	assert_int_equal(sptrace_look(&t, &l), -EAGAIN);
	/* the counter moved between the two reads of it */
	f.counter = 12, f.begin = 1000, f.reads = 0, f.settle_at = 1, f.end_counter = 13;
	f.end_time = 0;
	assert_int_equal(sptrace_look(&t, &l), -EAGAIN);
	/* the first safepoint: the time before it is all of the JVM's time */
	f.settle_at = -1, f.counter = 1, f.begin = 500, f.app = 500, f.end = 0;
	assert_int_equal(sptrace_look(&t, &l), 0);
	assert_int_equal(l.k, 1);
	assert_int_equal(l.prev_end, 0);
	/* no time between in this libjvm: no previous end */
	t.app = 0, f.counter = 11, f.begin = 1000, f.app = 300;
	assert_int_equal(sptrace_look(&t, &l), 0);
	assert_int_equal(l.prev_end, 0);
	/* no record, or unreadable */
	f.fail = true;
	assert_int_equal(sptrace_look(&t, &l), -EIO);
	t.ok = false;
	assert_int_equal(sptrace_look(&t, &l), -ENOENT);
	assert_int_equal(sptrace_look(NULL, &l), -ENOENT);
}

/* The walk's safepoint (5th, 1000..1800, the fork at 1500) told apart from
 * the others as the looks see them: its end from its own record, or, when
 * the 6th began before a look saw the 5th ended, from the 6th's */
static void test_seen(void **state)
{
	struct sptrace_seen s = { 0 };
	uint64_t ns = 0;

	/* the 4th ended; the 5th in progress; the 6th in progress (began 20
	 * after the 5th's end); the 6th ended */
	sptrace_seen_add(&s, &(struct sptrace_look){ .k = 4, .begin = 100, .end = 200, .prev_end = 50 });
	sptrace_seen_add(&s, &(struct sptrace_look){ .k = 5, .begin = 1000, .prev_end = 200 });
	assert_int_equal(sptrace_seen_find(&s, 1500, &ns), -ENOENT); /* its end unseen yet */
	sptrace_seen_add(&s, &(struct sptrace_look){ .k = 6, .begin = 1820, .prev_end = 1800 });
	assert_int_equal(sptrace_seen_find(&s, 1500, &ns), 0);
	assert_int_equal(ns, 800);
	sptrace_seen_add(&s, &(struct sptrace_look){ .k = 6, .begin = 1820, .end = 1900, .prev_end = 1800 });
	assert_int_equal(s.n, 4); /* 3 (from the 4th's look), 4, 5, 6 */
	assert_int_equal(sptrace_seen_find(&s, 1850, &ns), 0);
	assert_int_equal(ns, 80);
	assert_int_equal(sptrace_seen_find(&s, 150, &ns), 0);
	assert_int_equal(ns, 100);
	/* between safepoints, or in one whose begin was never seen (the 3rd) */
	assert_int_equal(sptrace_seen_find(&s, 1810, &ns), -ENOENT);
	assert_int_equal(sptrace_seen_find(&s, 40, &ns), -ENOENT);

	/* two followed before a look: the 5th's begin seen, its end not */
	memset(&s, 0, sizeof(s));
	sptrace_seen_add(&s, &(struct sptrace_look){ .k = 5, .begin = 1000, .prev_end = 200 });
	sptrace_seen_add(&s, &(struct sptrace_look){ .k = 7, .begin = 1900, .end = 1950, .prev_end = 1880 });
	assert_int_equal(sptrace_seen_find(&s, 1500, &ns), -ENOENT);

	/* full: nothing more is kept, nothing is overwritten */
	memset(&s, 0, sizeof(s));
	for (uint64_t k = 1; k <= SPTRACE_SEEN + 10; k++)
		sptrace_seen_add(&s, &(struct sptrace_look){ .k = k, .begin = (int64_t)k * 100,
							     .end = (int64_t)k * 100 + 50 });
	assert_int_equal(s.n, SPTRACE_SEEN);
	assert_int_equal(sptrace_seen_find(&s, 120, &ns), 0);
	assert_int_equal(sptrace_seen_find(&s, (SPTRACE_SEEN + 5) * 100 + 10, &ns), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jdk17),
		cmocka_unit_test(test_jdk25),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_look),
		cmocka_unit_test(test_seen),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
