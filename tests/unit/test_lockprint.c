// SPDX-License-Identifier: GPL-2.0
/*
 * test_lockprint.c - `memtrace locks`'s report printed from a hand-made
 * struct locks_report: the text and the JSON lines, byte for byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sink/lockprint.h"

static struct locks_class classes[] = {
	{ "java.lang.Object", 2, 3, 7200, 4000, 1, 5000 },
	{ "pkg.Lock", 1, 1, 2500000, 2500000, 0, 0 },
};

static const struct profile_frame waiter_frames[] = {
	{ .name = "Main.main" }, { .name = "Box.take" }, { .name = "java.lang.Object.wait" },
};

static struct locks_edge edges[] = {
	{ .tid = 101, .thread = "T101", .monitor = 0x1000, .cls = "java.lang.Object", .owner = 102,
	  .owner_name = "T102", .owner_from = LOCKS_OWNER_STREAM, .blocked_ns = 1500000,
	  .kind = LOCKS_MONITOR },
	{ .tid = 102, .thread = "T102", .monitor = 0x2000, .cls = "pkg.Lock", .owner = 101,
	  .owner_name = "T101", .owner_from = LOCKS_OWNER_JVM, .blocked_ns = 2000000000,
	  .kind = LOCKS_MONITOR },
	{ .tid = 103, .thread = "say \"hi\"", .monitor = 0x3000, .cls = NULL, .owner_name = "",
	  .owner_from = LOCKS_OWNER_UNKNOWN, .blocked_ns = 500, .kind = LOCKS_PARKED },
	{ .tid = 104, .thread = "T104", .monitor = 0x4000, .cls = "pkg.Lock", .owner_name = "",
	  .owner_from = LOCKS_OWNER_UNKNOWN, .kind = LOCKS_MONITOR, .since_before = true },
	/* what the JVM's memory adds: waits for a notify or a signal, a lock held by
	 * readers or handed over, a monitor entered again after a wait, stacks */
	{ .tid = 105, .thread = "W", .monitor = 0x5000, .cls = "Box", .owner_name = "",
	  .kind = LOCKS_OBJWAIT, .untimed = true, .frames = waiter_frames, .nframes = 3 },
	{ .tid = 106, .thread = "C", .monitor = 0x6000, .cls = "Cond", .owner_name = "",
	  .kind = LOCKS_CONDITION, .since_before = true, .cond_lock = 0x6100, .cond_cls = "Sync" },
	{ .tid = 107, .thread = "R", .monitor = 0x7000, .cls = "RW", .owner_name = "",
	  .kind = LOCKS_PARKED, .blocked_ns = 2000, .readers = 2 },
	{ .tid = 108, .thread = "H", .monitor = 0x8000, .cls = "RL", .owner_name = "",
	  .kind = LOCKS_PARKED, .blocked_ns = 3000, .lock_free = true },
	{ .tid = 109, .thread = "E", .monitor = 0x9000, .cls = "Box", .owner = 101,
	  .owner_name = "T101", .owner_from = LOCKS_OWNER_JVM, .kind = LOCKS_RELOCK,
	  .untimed = true, .transient = true },
};

static struct locks_cycle cycles[] = { { 2, { 0, 1 } } };

static struct locks_park parks[] = {
	{ "java.util.concurrent.locks.ReentrantLock$FairSync", LOCKS_PARK, 1, 5817, 938936260, 4007518, 5817, 938936260 },
	{ "Thread.sleep", LOCKS_SLEEP, 1, 150, 205926486, 23858368, 0, 0 },
	{ "(no blocker)", LOCKS_PARK_TIMED, 1, 150, 64151358, 2448022, 0, 0 },
};

static const struct locks_report full = {
	classes, 2, edges, 9, cycles, 1, parks, 3,
};

static char *print(const struct locks_report *r, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	lockprint_report(f, r, json);
	fclose(f);
	return buf;
}

static void test_text(void **state)
{
	char *s = print(&full, false);

	assert_string_equal(s,
		"contended monitors by class (blocked entering; Object.wait):\n"
		"  java.lang.Object                            2 monitors       3 contended  "
		"blocked     7.2 us (max 4.0 us)  Object.wait 1 (5.0 us)\n"
		"  pkg.Lock                                    1 monitors       1 contended  "
		"blocked    2.50 ms (max 2.50 ms)  Object.wait 0 (0.0 us)\n"
		"java.util.concurrent parks and Thread.sleep by blocker class (contended: on a lock "
		"that had an owner when one of its parks began, or a (read-write) ReentrantLock):\n"
		"      PARKS       TIME        MAX CONTENDED  CONT.TIME BLOCKERS  BLOCKER CLASS\n"
		"       5817  938.94 ms    4.01 ms      5817  938.94 ms        1  "
		"java.util.concurrent.locks.ReentrantLock$FairSync\n"
		"        150  205.93 ms   23.86 ms         0     0.0 us        1  Thread.sleep\n"
		"        150   64.15 ms    2.45 ms         0     0.0 us        1  (no blocker) (timed)\n"
		"wait graph (threads waiting now -> owner):\n"
		"  \"T101\" (tid 101) -> monitor 0x1000 (java.lang.Object) owned by \"T102\" "
		"(tid 102), blocked 1.50 ms\n"
		"  \"T102\" (tid 102) -> monitor 0x2000 (pkg.Lock) owned by \"T101\" (tid 101, "
		"entered uncontended: read from the JVM), blocked 2.000 s\n"
		"  \"say \"hi\"\" (tid 103) -> parked on 0x3000 (?) owned by nobody (waiting, not contending), "
		"blocked 0.5 us\n"
		"  \"T104\" (tid 104) -> monitor 0x4000 (pkg.Lock) owned by (owner unknown), blocked since "
		"before tracing began\n"
		"  \"W\" (tid 105) -> Object.wait on monitor 0x5000 (Box): owner unknown until a notify, "
		"waiting for a time not traced (monitor probes off)\n"
		"      at Box.take <- Main.main\n"
		"  \"C\" (tid 106) -> Condition.await on 0x6000 (Cond of Sync 0x6100): owner unknown until "
		"a signal, waiting since before tracing began\n"
		"  \"R\" (tid 107) -> parked on 0x7000 (RW) owned by 2 read holds, blocked 2.0 us\n"
		"  \"H\" (tid 108) -> parked on 0x8000 (RL) owned by nobody at the reading (being handed "
		"over), blocked 3.0 us\n"
		"  \"E\" (tid 109) -> monitor 0x9000 (Box) again after Object.wait, owned by \"T101\" "
		"(tid 101, entered uncontended: read from the JVM), blocked for a time not traced "
		"(monitor probes off)\n"
		"DEADLOCK: 2 threads wait for each other:\n"
		"  \"T101\" (tid 101) waits for monitor 0x1000 (java.lang.Object) held by \"T102\"\n"
		"  \"T102\" (tid 102) waits for monitor 0x2000 (pkg.Lock) held by \"T101\"\n");
	free(s);
}

static void test_json(void **state)
{
	char *s = print(&full, true);

	assert_string_equal(s,
		"{\"event\":\"lock_class\",\"class\":\"java.lang.Object\",\"monitors\":2,"
		"\"contended\":3,\"wait_ns\":7200,\"wait_max_ns\":4000,\"object_waits\":1,"
		"\"object_wait_ns\":5000}\n"
		"{\"event\":\"lock_class\",\"class\":\"pkg.Lock\",\"monitors\":1,"
		"\"contended\":1,\"wait_ns\":2500000,\"wait_max_ns\":2500000,\"object_waits\":0,"
		"\"object_wait_ns\":0}\n"
		"{\"event\":\"park_class\",\"class\":\"java.util.concurrent.locks.ReentrantLock$FairSync\","
		"\"how\":\"park\",\"blockers\":1,\"parks\":5817,\"parked_ns\":938936260,\"max_ns\":4007518,"
		"\"contended_parks\":5817,\"contended_ns\":938936260,\"waiting_parks\":0,\"waiting_ns\":0}\n"
		"{\"event\":\"park_class\",\"class\":\"Thread.sleep\",\"how\":\"sleep\",\"blockers\":1,"
		"\"parks\":150,\"parked_ns\":205926486,\"max_ns\":23858368,\"contended_parks\":0,"
		"\"contended_ns\":0,\"waiting_parks\":150,\"waiting_ns\":205926486}\n"
		"{\"event\":\"park_class\",\"class\":\"(no blocker)\",\"how\":\"timed\",\"blockers\":1,"
		"\"parks\":150,\"parked_ns\":64151358,\"max_ns\":2448022,\"contended_parks\":0,"
		"\"contended_ns\":0,\"waiting_parks\":150,\"waiting_ns\":64151358}\n"
		"{\"event\":\"wait_edge\",\"tid\":101,\"thread\":\"T101\",\"lock_kind\":\"monitor\",\"monitor\":\"0x1000\","
		"\"class\":\"java.lang.Object\",\"owner_tid\":102,\"owner\":\"T102\","
		"\"owner_from\":\"stream\",\"blocked_ns\":1500000}\n"
		"{\"event\":\"wait_edge\",\"tid\":102,\"thread\":\"T102\",\"lock_kind\":\"monitor\",\"monitor\":\"0x2000\","
		"\"class\":\"pkg.Lock\",\"owner_tid\":101,\"owner\":\"T101\","
		"\"owner_from\":\"jvm\",\"blocked_ns\":2000000000}\n"
		"{\"event\":\"wait_edge\",\"tid\":103,\"thread\":\"say \\\"hi\\\"\","
		"\"lock_kind\":\"parked\",\"monitor\":\"0x3000\",\"class\":\"\",\"owner_tid\":0,\"owner\":\"\","
		"\"owner_from\":\"\",\"blocked_ns\":500}\n"
		"{\"event\":\"wait_edge\",\"tid\":104,\"thread\":\"T104\",\"lock_kind\":\"monitor\","
		"\"monitor\":\"0x4000\",\"class\":\"pkg.Lock\",\"owner_tid\":0,\"owner\":\"\","
		"\"owner_from\":\"\",\"blocked_ns\":null}\n"
		"{\"event\":\"wait_edge\",\"tid\":105,\"thread\":\"W\",\"lock_kind\":\"object_wait\","
		"\"monitor\":\"0x5000\",\"class\":\"Box\",\"owner_tid\":0,\"owner\":\"\",\"owner_from\":\"\","
		"\"frames\":[\"Main.main\",\"Box.take\",\"java.lang.Object.wait\"],\"blocked_ns\":null}\n"
		"{\"event\":\"wait_edge\",\"tid\":106,\"thread\":\"C\",\"lock_kind\":\"condition\","
		"\"monitor\":\"0x6000\",\"class\":\"Cond\",\"owner_tid\":0,\"owner\":\"\",\"owner_from\":\"\","
		"\"condition_lock\":\"0x6100\",\"condition_lock_class\":\"Sync\",\"blocked_ns\":null}\n"
		"{\"event\":\"wait_edge\",\"tid\":107,\"thread\":\"R\",\"lock_kind\":\"parked\","
		"\"monitor\":\"0x7000\",\"class\":\"RW\",\"owner_tid\":0,\"owner\":\"\",\"owner_from\":\"\","
		"\"readers\":2,\"blocked_ns\":2000}\n"
		"{\"event\":\"wait_edge\",\"tid\":108,\"thread\":\"H\",\"lock_kind\":\"parked\","
		"\"monitor\":\"0x8000\",\"class\":\"RL\",\"owner_tid\":0,\"owner\":\"\",\"owner_from\":\"\","
		"\"lock_free\":true,\"blocked_ns\":3000}\n"
		"{\"event\":\"wait_edge\",\"tid\":109,\"thread\":\"E\",\"lock_kind\":\"relock\","
		"\"monitor\":\"0x9000\",\"class\":\"Box\",\"owner_tid\":101,\"owner\":\"T101\","
		"\"owner_from\":\"jvm\",\"transient\":true,\"blocked_ns\":null}\n"
		"{\"event\":\"deadlock\",\"threads\":[{\"tid\":101,\"thread\":\"T101\","
		"\"lock_kind\":\"monitor\",\"waits_for\":\"0x1000\",\"class\":\"java.lang.Object\"},"
		"{\"tid\":102,\"thread\":\"T102\",\"lock_kind\":\"monitor\",\"waits_for\":\"0x2000\",\"class\":\"pkg.Lock\"}]}\n");
	free(s);
}

static void test_empty(void **state)
{
	const struct locks_report none = { 0 };
	char *s = print(&none, false);

	assert_string_equal(s,
		"contended monitors by class (blocked entering; Object.wait):\n"
		"  (none)\n"
		"wait graph (threads waiting now -> owner):\n"
		"  (no thread is blocked on a lock)\n");
	free(s);
	s = print(&none, true);
	assert_string_equal(s, "");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_empty),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
