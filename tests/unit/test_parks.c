// SPDX-License-Identifier: GPL-2.0
/* test_parks - `memtrace locks`' java.util.concurrent section: contended vs
 * waiting, rows, counters, text and JSON, exactly; and --stacks' contending
 * threads per monitor. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sink/parks.h"

static char *print(const struct parktrace_lock *l, size_t n, const uint64_t *stats, size_t top,
		   bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(parks_print(f, l, n, stats, top, json), 0);
	fclose(f);
	return buf;
}

static struct parktrace_lock locks[4];

static int setup(void **state)
{
	(void)state;
	memset(locks, 0, sizeof(locks));
	/* a held fair lock: ownable, parks began while it had an owner */
	locks[0].key = (struct mt_park_key){ .klass = 0x800, .blocker = 0x1000 };
	locks[0].v.count = 3;
	locks[0].v.total_ns = 3000000;
	locks[0].v.max_ns = 2000000;
	locks[0].v.with_owner = 3;
	locks[0].v.hist[20] = 2;
	locks[0].v.hist[21] = 1;
	locks[0].ownable = true;
	snprintf(locks[0].cls, sizeof(locks[0].cls), "java.util.concurrent.locks.ReentrantLock$FairSync");
	snprintf(locks[0].owner, sizeof(locks[0].owner), "holder");
	snprintf(locks[0].waiter, sizeof(locks[0].waiter), "w");
	/* two waiter stacks that show the same callers: one text line, two in JSON */
	for (int i = 0; i < 2; i++) {
		static const char *const fr[] = { "java.lang.Thread.run", "pkg.Worker.run",
						  "java.util.concurrent.locks.ReentrantLock.lock",
						  "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire",
						  "jdk.internal.misc.Unsafe.park" };

		locks[0].stacks[i].parks = i ? 1 : 2;
		locks[0].stacks[i].ns = i ? 1000000 : 2000000;
		locks[0].stacks[i].n = i ? 4 : 5;
		for (int k = 0; k < 5; k++)
			locks[0].stacks[i].frames[k] = fr[k == 3 && i ? 4 : k];
	}
	locks[0].nstacks = 2;
	/* a latch: ownable class, never an owner: waiting */
	locks[1].key = (struct mt_park_key){ .klass = 0x900, .blocker = 0x2000 };
	locks[1].v.count = 1;
	locks[1].v.total_ns = 500;
	locks[1].v.max_ns = 500;
	locks[1].ownable = true;
	snprintf(locks[1].cls, sizeof(locks[1].cls), "java.util.concurrent.CountDownLatch$Sync");
	snprintf(locks[1].waiter, sizeof(locks[1].waiter), "tid 7");
	/* parkNanos without a blocker */
	locks[2].key = (struct mt_park_key){ .timed = 1 };
	locks[2].v.count = 2;
	locks[2].v.total_ns = 400000;
	locks[2].v.max_ns = 300000;
	snprintf(locks[2].waiter, sizeof(locks[2].waiter), "sleeper");
	/* Thread.sleep: its own row, waiting */
	locks[3].key = (struct mt_park_key){ .timed = MT_PARK_SLEEP };
	locks[3].v.count = 4;
	locks[3].v.total_ns = 4000000;
	locks[3].v.max_ns = 1000000;
	return 0;
}

static void test_text(void **state)
{
	uint64_t stats[MT_PARK_NSTATS] = { 6, 0, 1, 0, 4 };
	char *s = print(locks, 4, stats, 0, false);

	(void)state;
	assert_string_equal(s,
		"\njava.util.concurrent parks (hotspot:thread__park__* probes): 6 parks, 4 Thread.sleep calls\n"
		"CONTENDED (a lock: it had an owner when the thread parked, or it is a (read-write) ReentrantLock): 3 parks, 3.00 ms parked\n"
		"      PARKS       TIME        MAX  BLOCKER\n"
		"          3    3.00 ms    2.00 ms  java.util.concurrent.locks.ReentrantLock$FairSync @0x1000  owner \"holder\"\n"
		"             3 parks, 3.00 ms: at pkg.Worker.run <- java.lang.Thread.run\n"
		"WAITING (conditions, queues, latches, futures, parkNanos, Thread.sleep: no owner): 7 parks, 4.40 ms parked\n"
		"      PARKS       TIME        MAX  BLOCKER\n"
		"          1     0.5 us     0.5 us  java.util.concurrent.CountDownLatch$Sync @0x2000\n"
		"          2   400.0 us   300.0 us  (no blocker) (timed) @0x0\n"
		"          4    4.00 ms    1.00 ms  Thread.sleep @0x0\n"
		"  not attributed: 0 parks of threads not yet known (no blocker read), 1 ends of parks begun before memtrace, 0 parks with the lock table full\n");
	free(s);
	/* --top 1: one row per kind */
	s = print(locks, 4, stats, 1, false);
	assert_null(strstr(s, "(no blocker)"));
	assert_non_null(strstr(s, "CountDownLatch"));
	assert_non_null(strstr(s, "  ... 2 more blockers (--top)\n"));
	free(s);
}

static void test_json(void **state)
{
	uint64_t stats[MT_PARK_NSTATS] = { 6, 0, 1, 0, 4 };
	char *s = print(locks, 1, stats, 0, true), want[4096];
	size_t w;

	(void)state;
	w = (size_t)snprintf(want, sizeof(want),
		"{\"event\":\"park_lock\",\"kind\":\"contended\",\"class\":"
		"\"java.util.concurrent.locks.ReentrantLock$FairSync\",\"blocker\":\"0x1000\",\"how\":\"park\",\"timed\":false,"
		"\"parks\":3,\"parked_ns\":3000000,\"max_ns\":2000000,\"parks_with_owner\":3,"
		"\"owner\":\"holder\",\"last_waiter\":\"w\",\"hist_log2_ns\":[");
	for (int i = 0; i < MT_PARK_HIST; i++)
		w += (size_t)snprintf(want + w, sizeof(want) - w, "%s%d", i ? "," : "",
				      i == 20 ? 2 : i == 21 ? 1 : 0);
	snprintf(want + w, sizeof(want) - w,
		 "],\"stacks\":[{\"parks\":2,\"parked_ns\":2000000,\"frames\":[\"java.lang.Thread.run\","
		 "\"pkg.Worker.run\",\"java.util.concurrent.locks.ReentrantLock.lock\","
		 "\"java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire\","
		 "\"jdk.internal.misc.Unsafe.park\"]},{\"parks\":1,\"parked_ns\":1000000,\"frames\":"
		 "[\"java.lang.Thread.run\",\"pkg.Worker.run\",\"java.util.concurrent.locks.ReentrantLock.lock\","
		 "\"jdk.internal.misc.Unsafe.park\"]}]}\n{\"event\":\"park_summary\",\"parks\":6,\"contended_parks\":3,"
		 "\"contended_ns\":3000000,\"waiting_parks\":0,\"waiting_ns\":0,\"no_thread\":0,"
		 "\"no_begin\":1,\"map_full\":0,\"sleeps\":4,\"missed\":0}\n");
	assert_string_equal(s, want);
	free(s);
}

/* Two monitors: one with two stacks that show the same leaf and callers
 * (one text line), one whose threads were not listed yet (no stack). */
static void test_monitors(void **state)
{
	static const char *const fr[] = { "java.lang.Thread.run", "pkg.A.lambda$main$0", "pkg.A.path",
					  "pkg.A.hold" };
	struct parktrace_monitor m[2];
	uint64_t stats[MT_PARK_NSTATS] = { 0 };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	memset(m, 0, sizeof(m));
	m[0] = (struct parktrace_monitor){ .monitor = 0x7f00, .cls = "pkg.A$Lock", .entries = 5,
					   .ns = 5000000, .max_ns = 2000000, .nstacks = 2 };
	for (int i = 0; i < 2; i++) {
		m[0].stacks[i].parks = i ? 1 : 4;
		m[0].stacks[i].ns = i ? 1000000 : 4000000;
		m[0].stacks[i].n = 4;
		for (int k = 0; k < 4; k++)
			m[0].stacks[i].frames[k] = i && !k ? "pkg.B.run" : fr[k]; /* another root */
	}
	m[1] = (struct parktrace_monitor){ .monitor = 0x7f80, .entries = 2, .ns = 300, .max_ns = 200,
					   .unwalked = 2 };
	stats[MT_PARK_MON_ENTER] = 8;
	stats[MT_PARK_MON_NO_THREAD] = 2;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(parks_print_monitors(f, m, 2, stats, 0, false), 0);
	fclose(f);
	assert_string_equal(buf,
		"\ncontending threads' stacks per monitor (hotspot:monitor__contended__enter): 8 contended entries\n"
		"    ENTRIES       TIME        MAX  MONITOR\n"
		"          5    5.00 ms    2.00 ms  pkg.A$Lock @0x7f00\n"
		"             5 entries, 5.00 ms: at pkg.A.hold <- pkg.A.path <- pkg.A.lambda$main$0\n"
		"          2     0.3 us     0.2 us  (unknown class) @0x7f80\n"
		"  without a stack: 2 entries of threads not yet known; 0 not counted (the monitor table was full)\n");
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(parks_print_monitors(f, m, 2, stats, 0, true), 0);
	fclose(f);
	assert_string_equal(buf,
		"{\"event\":\"monitor_stacks\",\"monitor\":\"0x7f00\",\"class\":\"pkg.A$Lock\",\"entries\":5,"
		"\"blocked_ns\":5000000,\"max_ns\":2000000,\"unwalked\":0,\"stacks\":[{\"entries\":4,"
		"\"blocked_ns\":4000000,\"frames\":[\"java.lang.Thread.run\",\"pkg.A.lambda$main$0\","
		"\"pkg.A.path\",\"pkg.A.hold\"]},{\"entries\":1,\"blocked_ns\":1000000,\"frames\":"
		"[\"pkg.B.run\",\"pkg.A.lambda$main$0\",\"pkg.A.path\",\"pkg.A.hold\"]}]}\n"
		"{\"event\":\"monitor_stacks\",\"monitor\":\"0x7f80\",\"class\":\"\",\"entries\":2,"
		"\"blocked_ns\":300,\"max_ns\":200,\"unwalked\":2}\n"
		"{\"event\":\"monitor_stacks_summary\",\"contended_enters\":8,\"no_thread\":2,\"map_full\":0}\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_text, setup),
		cmocka_unit_test_setup(test_json, setup),
		cmocka_unit_test(test_monitors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
