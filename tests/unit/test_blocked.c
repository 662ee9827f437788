// SPDX-License-Identifier: GPL-2.0
/* test_blocked - `memtrace locks --now`'s output: blocked threads, contended
 * vs waiting vs waiting for a notify or signal, deadlocks, text and JSON,
 * exactly. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "sink/blocked.h"
#include "jvm/jucblocker.h"

static struct jthread th[] = {
	{ .jt = 1, .tid = 10, .name = "a", .wait = JTHREAD_PARKED, .lock = 0x100, .lock_obj = 0x100,
	  .lock_class = "java.util.concurrent.locks.ReentrantLock$NonfairSync", .owner_tid = 11,
	  .blocker = JUCB_LOCK, .status = 0x291, .stable = true },
	{ .jt = 2, .tid = 11, .name = "b", .wait = JTHREAD_MONITOR, .lock = 0x7f00, .lock_obj = 0x200,
	  .lock_class = "Mon", .owner_tid = 10, .status = 0x401, .stable = true },
	{ .jt = 3, .tid = 12, .name = "idle", .wait = JTHREAD_PARKED, .lock = 0x300, .lock_obj = 0x300,
	  .lock_class = "java.util.concurrent.CountDownLatch$Sync", .blocker = JUCB_OWNABLE,
	  .status = 0x291 },
	{ .jt = 4, .tid = 13, .name = "run", .status = 0x5 },
	{ .jt = 5, .tid = 14, .name = "w", .wait = JTHREAD_OBJWAIT, .lock = 0x7f10, .lock_obj = 0x400,
	  .lock_class = "Box", .status = 0x1a1, .stable = true },
	{ .jt = 6, .tid = 15, .name = "c", .wait = JTHREAD_CONDITION, .lock = 0x500, .lock_obj = 0x500,
	  .lock_class = "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject",
	  .cond_lock = 0x100, .cond_lock_class = "java.util.concurrent.locks.ReentrantLock$NonfairSync",
	  .status = 0x291, .stable = true },
	{ .jt = 7, .tid = 16, .name = "r", .wait = JTHREAD_RELOCK, .lock = 0x7f20, .lock_obj = 0x600,
	  .lock_class = "Relock", .owner_tid = 13, .status = 0x401, .stable = true },
	{ .jt = 8, .tid = 17, .name = "wr", .wait = JTHREAD_PARKED, .lock = 0x700, .lock_obj = 0x700,
	  .lock_class = "java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync",
	  .blocker = JUCB_LOCK, .readers = 2, .status = 0x291 },
	{ .jt = 9, .tid = 18, .name = "h", .wait = JTHREAD_PARKED, .lock = 0x800, .lock_obj = 0x800,
	  .lock_class = "java.util.concurrent.locks.ReentrantLock$FairSync", .blocker = JUCB_LOCK,
	  .status = 0x2a1 },
};
#define NTH (sizeof(th) / sizeof(th[0]))

static char *print(const uint32_t *cycle, int ncycles, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(blocked_print(f, 42, th, NULL, NTH, cycle, ncycles, json, 0), 0);
	fclose(f);
	return buf;
}

static void test_text(void **state)
{
	uint32_t cycle[NTH] = { 1, 1 };
	char *s = print(cycle, 1, false);

	(void)state;
	assert_string_equal(s,
		"pid 42: 9 Java threads, 8 waiting on a lock (read from the JVM's memory): 5 contending, 2 for a notify or signal, 1 not contending\n"
		"  \"a\" (tid 10) parked on java.util.concurrent.locks.ReentrantLock$NonfairSync @0x100, held by \"b\" (tid 11)\n"
		"  \"b\" (tid 11) blocked entering Mon @0x7f00, held by \"a\" (tid 10)\n"
		"  \"idle\" (tid 12) parked on java.util.concurrent.CountDownLatch$Sync @0x300 (no owner: waiting, not contending)\n"
		"  \"w\" (tid 14) waiting in Object.wait on Box @0x7f10 (timed; owner unknown until a notify)\n"
		"  \"c\" (tid 15) waiting in Condition.await on java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject @0x500 "
		"of java.util.concurrent.locks.ReentrantLock$NonfairSync @0x100 (owner unknown until a signal)\n"
		"  \"r\" (tid 16) blocked entering Relock @0x7f20 again after Object.wait, held by \"run\" (tid 13)\n"
		"  \"wr\" (tid 17) parked on java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync @0x700, held by 2 read holds\n"
		"  \"h\" (tid 18) parked on java.util.concurrent.locks.ReentrantLock$FairSync @0x800 (no owner at this reading: being handed over)\n"
		"deadlock 1:\n"
		"  \"a\" (tid 10) parked on java.util.concurrent.locks.ReentrantLock$NonfairSync @0x100, held by \"b\" (tid 11)\n"
		"  \"b\" (tid 11) blocked entering Mon @0x7f00, held by \"a\" (tid 10)\n");
	free(s);
	s = print((uint32_t[NTH]){ 0 }, 0, false);
	assert_non_null(strstr(s, "no deadlock\n"));
	free(s);
}

static void test_json(void **state)
{
	uint32_t cycle[NTH] = { 1, 1 };
	char *s = print(cycle, 1, true);

	(void)state;
	assert_string_equal(s,
		"{\"event\":\"blocked\",\"thread\":\"a\",\"tid\":10,\"wait\":\"parked\",\"kind\":\"contended\","
		"\"lock\":\"0x100\",\"lock_class\":\"java.util.concurrent.locks.ReentrantLock$NonfairSync\","
		"\"object\":\"0x100\",\"owner\":\"b\",\"owner_tid\":11,\"state\":\"WAITING (parking)\",\"stable\":true}\n"
		"{\"event\":\"blocked\",\"thread\":\"b\",\"tid\":11,\"wait\":\"monitor\",\"kind\":\"contended\","
		"\"lock\":\"0x7f00\",\"lock_class\":\"Mon\",\"object\":\"0x200\",\"owner\":\"a\",\"owner_tid\":10,"
		"\"state\":\"BLOCKED (on object monitor)\",\"stable\":true}\n"
		"{\"event\":\"blocked\",\"thread\":\"idle\",\"tid\":12,\"wait\":\"parked\",\"kind\":\"waiting\","
		"\"lock\":\"0x300\",\"lock_class\":\"java.util.concurrent.CountDownLatch$Sync\","
		"\"object\":\"0x300\",\"owner\":null,\"owner_tid\":0,\"state\":\"WAITING (parking)\",\"stable\":false}\n"
		"{\"event\":\"blocked\",\"thread\":\"w\",\"tid\":14,\"wait\":\"object_wait\",\"kind\":\"notify\","
		"\"lock\":\"0x7f10\",\"lock_class\":\"Box\",\"object\":\"0x400\",\"owner\":null,\"owner_tid\":0,"
		"\"state\":\"TIMED_WAITING (on object monitor)\",\"stable\":true}\n"
		"{\"event\":\"blocked\",\"thread\":\"c\",\"tid\":15,\"wait\":\"condition\",\"kind\":\"notify\","
		"\"lock\":\"0x500\",\"lock_class\":\"java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject\","
		"\"object\":\"0x500\",\"owner\":null,\"owner_tid\":0,\"state\":\"WAITING (parking)\",\"stable\":true,"
		"\"condition_lock\":\"0x100\",\"condition_lock_class\":\"java.util.concurrent.locks.ReentrantLock$NonfairSync\"}\n"
		"{\"event\":\"blocked\",\"thread\":\"r\",\"tid\":16,\"wait\":\"relock\",\"kind\":\"contended\","
		"\"lock\":\"0x7f20\",\"lock_class\":\"Relock\",\"object\":\"0x600\",\"owner\":\"run\",\"owner_tid\":13,"
		"\"state\":\"BLOCKED (on object monitor)\",\"stable\":true}\n"
		"{\"event\":\"blocked\",\"thread\":\"wr\",\"tid\":17,\"wait\":\"parked\",\"kind\":\"contended\","
		"\"lock\":\"0x700\",\"lock_class\":\"java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync\","
		"\"object\":\"0x700\",\"owner\":null,\"owner_tid\":0,\"state\":\"WAITING (parking)\",\"stable\":false,"
		"\"readers\":2}\n"
		"{\"event\":\"blocked\",\"thread\":\"h\",\"tid\":18,\"wait\":\"parked\",\"kind\":\"contended\","
		"\"lock\":\"0x800\",\"lock_class\":\"java.util.concurrent.locks.ReentrantLock$FairSync\","
		"\"object\":\"0x800\",\"owner\":null,\"owner_tid\":0,\"state\":\"TIMED_WAITING (parking)\",\"stable\":false}\n"
		"{\"event\":\"deadlock\",\"id\":1,\"threads\":[{\"thread\":\"a\",\"tid\":10,\"wait\":\"parked\","
		"\"kind\":\"contended\",\"lock\":\"0x100\",\"lock_class\":\"java.util.concurrent.locks.ReentrantLock$NonfairSync\","
		"\"object\":\"0x100\",\"owner\":\"b\",\"owner_tid\":11,\"state\":\"WAITING (parking)\",\"stable\":true},"
		"{\"thread\":\"b\",\"tid\":11,\"wait\":\"monitor\","
		"\"kind\":\"contended\",\"lock\":\"0x7f00\",\"lock_class\":\"Mon\",\"object\":\"0x200\",\"owner\":\"a\","
		"\"owner_tid\":10,\"state\":\"BLOCKED (on object monitor)\",\"stable\":true}]}\n"
		"{\"event\":\"summary\",\"threads\":9,\"waiting\":8,\"contending\":5,\"notify\":2,\"deadlocks\":1}\n");
	free(s);
}

/* The words jstack prints for each java.lang.Thread state. */
static void test_status_names(void **state)
{
	(void)state;
	assert_string_equal(jthreads_status_name(0x5), "RUNNABLE");
	assert_string_equal(jthreads_status_name(0x401), "BLOCKED (on object monitor)");
	assert_string_equal(jthreads_status_name(0x191), "WAITING (on object monitor)");
	assert_string_equal(jthreads_status_name(0x1a1), "TIMED_WAITING (on object monitor)");
	assert_string_equal(jthreads_status_name(0x291), "WAITING (parking)");
	assert_string_equal(jthreads_status_name(0x2a1), "TIMED_WAITING (parking)");
	assert_string_equal(jthreads_status_name(0xe1), "TIMED_WAITING (sleeping)");
	assert_string_equal(jthreads_status_name(0x2), "TERMINATED");
	assert_string_equal(jthreads_status_name(0), "UNKNOWN");
	assert_true(jthreads_timed(0x1a1));
	assert_false(jthreads_timed(0x191));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_status_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
