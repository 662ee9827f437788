// SPDX-License-Identifier: GPL-2.0
/* test_blocked - `memtrace locks --now`'s output: blocked threads, contended
 * vs waiting, deadlocks, text and JSON, exactly. */
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

static struct jthread th[] = {
	{ .jt = 1, .tid = 10, .name = "a", .wait = JTHREAD_PARKED, .lock = 0x100, .lock_obj = 0x100,
	  .lock_class = "java.util.concurrent.locks.ReentrantLock$NonfairSync", .owner_tid = 11 },
	{ .jt = 2, .tid = 11, .name = "b", .wait = JTHREAD_MONITOR, .lock = 0x7f00, .lock_obj = 0x200,
	  .lock_class = "Mon", .owner_tid = 10 },
	{ .jt = 3, .tid = 12, .name = "idle", .wait = JTHREAD_PARKED, .lock = 0x300, .lock_obj = 0x300,
	  .lock_class = "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject" },
	{ .jt = 4, .tid = 13, .name = "run" },
};

static char *print(const uint32_t *cycle, int ncycles, bool json)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(blocked_print(f, 42, th, 4, cycle, ncycles, json), 0);
	fclose(f);
	return buf;
}

static void test_text(void **state)
{
	uint32_t cycle[] = { 1, 1, 0, 0 };
	char *s = print(cycle, 1, false);

	(void)state;
	assert_string_equal(s,
		"pid 42: 4 Java threads, 3 waiting on a lock (read from the JVM's memory)\n"
		"  \"a\" (tid 10) parked on java.util.concurrent.locks.ReentrantLock$NonfairSync @0x100, held by \"b\" (tid 11)\n"
		"  \"b\" (tid 11) blocked entering Mon @0x7f00, held by \"a\" (tid 10)\n"
		"  \"idle\" (tid 12) parked on java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject @0x300 (no owner: waiting, not contending)\n"
		"deadlock 1:\n"
		"  \"a\" (tid 10) parked on java.util.concurrent.locks.ReentrantLock$NonfairSync @0x100, held by \"b\" (tid 11)\n"
		"  \"b\" (tid 11) blocked entering Mon @0x7f00, held by \"a\" (tid 10)\n");
	free(s);
	s = print((uint32_t[]){ 0, 0, 0, 0 }, 0, false);
	assert_non_null(strstr(s, "no deadlock\n"));
	free(s);
}

static void test_json(void **state)
{
	uint32_t cycle[] = { 1, 1, 0, 0 };
	char *s = print(cycle, 1, true);

	(void)state;
	assert_string_equal(s,
		"{\"event\":\"blocked\",\"thread\":\"a\",\"tid\":10,\"wait\":\"parked\",\"kind\":\"contended\","
		"\"lock\":\"0x100\",\"lock_class\":\"java.util.concurrent.locks.ReentrantLock$NonfairSync\","
		"\"object\":\"0x100\",\"owner\":\"b\",\"owner_tid\":11}\n"
		"{\"event\":\"blocked\",\"thread\":\"b\",\"tid\":11,\"wait\":\"monitor\",\"kind\":\"contended\","
		"\"lock\":\"0x7f00\",\"lock_class\":\"Mon\",\"object\":\"0x200\",\"owner\":\"a\",\"owner_tid\":10}\n"
		"{\"event\":\"blocked\",\"thread\":\"idle\",\"tid\":12,\"wait\":\"parked\",\"kind\":\"waiting\","
		"\"lock\":\"0x300\",\"lock_class\":\"java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject\","
		"\"object\":\"0x300\",\"owner\":null,\"owner_tid\":0}\n"
		"{\"event\":\"deadlock\",\"id\":1,\"threads\":[{\"thread\":\"a\",\"tid\":10,\"wait\":\"parked\","
		"\"kind\":\"contended\",\"lock\":\"0x100\",\"lock_class\":\"java.util.concurrent.locks.ReentrantLock$NonfairSync\","
		"\"object\":\"0x100\",\"owner\":\"b\",\"owner_tid\":11},{\"thread\":\"b\",\"tid\":11,\"wait\":\"monitor\","
		"\"kind\":\"contended\",\"lock\":\"0x7f00\",\"lock_class\":\"Mon\",\"object\":\"0x200\",\"owner\":\"a\","
		"\"owner_tid\":10}]}\n"
		"{\"event\":\"summary\",\"threads\":4,\"waiting\":3,\"deadlocks\":1}\n");
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
