// SPDX-License-Identifier: GPL-2.0
/*
 * test_monowner.c - ObjectMonitor owners over synthetic JVM memory images
 * laid out as JDK 17 (owner: a JavaThread* or a BasicLock on the owner's
 * stack) and JDK 25 (owner: a monitor owner id, or ANONYMOUS_OWNER with the
 * object on the owner's lock stack), read through VMStructs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jvm/monowner.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

#include "fake_target.h"

#define NTHREADS 3

static struct fake *new_fake(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->used = 64;
	return f;
}

/* A ThreadsList of @n JavaThreads of @jt_size bytes; each gets an OSThread
 * whose _thread_id (at @tid_off, 4 bytes) is tids[i]. The list's address
 * goes into the static _java_thread_list at @list_var. */
static void threads(struct fake *f, uint64_t list_var, uint64_t *jt, size_t jt_size,
		    uint64_t osthread_off, uint64_t tid_off, const uint32_t *tids)
{
	uint64_t arr = fake_alloc(f, 8 * NTHREADS), list = fake_alloc(f, 32);

	for (int i = 0; i < NTHREADS; i++) {
		uint64_t os = fake_alloc(f, 256);

		jt[i] = fake_alloc(f, jt_size);
		put64(f, arr + 8 * i, jt[i]);
		put64(f, jt[i] + osthread_off, os);
		put32(f, os + tid_off, tids[i]);
	}
	put32(f, list + 4, NTHREADS);
	put64(f, list + 16, arr);
	put64(f, list_var, list);
}

/* An ObjectMonitor (owner at 64, WeakHandle to @obj at 8). */
static uint64_t monitor(struct fake *f, uint64_t owner, uint64_t obj)
{
	uint64_t m = fake_alloc(f, 208), h = fake_alloc(f, 8);

	put64(f, m + 64, owner);
	put64(f, h, obj);
	put64(f, m + 8, obj ? h : 0);
	return m;
}

static void test_jdk17_layout(void **state)
{
	struct fake *f = new_fake();
	uint64_t list_var = fake_alloc(f, 8), jt[NTHREADS];
	const struct tfield fields[] = {
		{ "ObjectMonitor", "_owner", "", 0, 64, 0 },
		{ "ObjectMonitor", "_object", "", 0, 8, 0 },
		{ "ThreadsSMRSupport", "_java_thread_list", "ThreadsList*", 1, 0, list_var },
		{ "ThreadsList", "_length", "const uint", 0, 4, 0 },
		{ "ThreadsList", "_threads", "JavaThread *const *const", 0, 16, 0 },
		{ "JavaThread", "_osthread", "OSThread*", 0, 560, 0 },
		{ "JavaThread", "_stack_base", "address", 0, 592, 0 },
		{ "JavaThread", "_stack_size", "size_t", 0, 600, 0 },
		{ "OSThread", "_thread_id", "OSThread::thread_id_t", 0, 208, 0 },
	};
	const struct ttype types[] = { { "ObjectMonitor", NULL, 0, 0, 0, 208 } };
	const struct tconst ints[] = { { "oopSize", 8 } };
	const uint32_t tids[NTHREADS] = { 101, 102, 103 };
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;
	struct monowner *m;

	threads(f, list_var, jt, 1024, 560, 208, tids);
	/* stacks, 1 MiB each, side by side: thread i's below 0x7f00_0000_0000 + (i + 1) MiB */
	for (int i = 0; i < NTHREADS; i++) {
		put64(f, jt[i] + 592, 0x7f0000000000ull + 0x100000ull * (i + 1));
		put64(f, jt[i] + 600, 1 << 20);
	}
	build(f, &s, fields, MT_ARRAY_SIZE(fields), types, MT_ARRAY_SIZE(types), ints,
	      MT_ARRAY_SIZE(ints), NULL, 0);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
	m = monowner_new(vs);
	assert_non_null(m);
	/* inflated while owned: the JavaThread* */
	assert_int_equal(monowner_tid(m, monitor(f, jt[1], 0)), 102);
	/* stack-locked, then inflated by a contender: a BasicLock in thread 3's frames */
	assert_int_equal(monowner_tid(m, monitor(f, 0x7f0000300000ull - 0x1238, 0)), 103);
	assert_int_equal(monowner_tid(m, monitor(f, 0x7f0000100000ull, 0)), 102); /* base is exclusive */
	assert_int_equal(monowner_tid(m, monitor(f, 0x7f0000000000ull, 0)), 101);
	/* above the last stack's base, below the first one's end: nobody's */
	assert_int_equal(monowner_tid(m, monitor(f, 0x7f0000300000ull + 8, 0)), 0);
	assert_int_equal(monowner_tid(m, monitor(f, 0x7f0000000000ull - 8, 0)), 0);
	/* no owner; an unreadable monitor */
	assert_int_equal(monowner_tid(m, monitor(f, 0, 0)), 0);
	assert_int_equal(monowner_tid(m, 0x10), 0);
	monowner_free(m);
	monowner_free(NULL);
	assert_int_equal(monowner_tid(NULL, 0x10), 0);
	vmstructs_free(vs);
	free(f);
}

static void test_jdk25_layout(void **state)
{
	struct fake *f = new_fake();
	uint64_t list_var = fake_alloc(f, 8), jt[NTHREADS];
	const struct tfield fields[] = {
		{ "ObjectMonitor", "_owner", "int64_t", 0, 64, 0 },
		{ "ObjectMonitor", "_object", "", 0, 8, 0 },
		{ "ThreadsSMRSupport", "_java_thread_list", "ThreadsList*", 1, 0, list_var },
		{ "ThreadsList", "_length", "const uint", 0, 4, 0 },
		{ "ThreadsList", "_threads", "JavaThread *const *const", 0, 16, 0 },
		{ "Thread", "_osthread", "OSThread*", 0, 1016, 0 },
		{ "JavaThread", "_stack_base", "address", 0, 1048, 0 },
		{ "JavaThread", "_stack_size", "size_t", 0, 1056, 0 },
		{ "JavaThread", "_monitor_owner_id", "int64_t", 0, 1312, 0 },
		{ "JavaThread", "_lock_stack", "LockStack", 0, 2000, 0 },
		{ "LockStack", "_top", "uint32_t", 0, 0, 0 },
		{ "LockStack", "_base[0]", "oop", 0, 16, 0 },
		{ "OSThread", "_thread_id", "pid_t", 0, 12, 0 },
	};
	/* as JDK 25's table: _osthread is Thread's, found through JavaThread's supertype */
	const struct ttype types[] = { { "ObjectMonitor", NULL, 0, 0, 0, 200 },
				       { "JavaThread", "Thread", 0, 0, 0, 2400 },
				       { "Thread", NULL, 0, 0, 0, 1100 } };
	const struct tconst ints[] = { { "oopSize", 8 } };
	const struct tconst longs[] = { { "ObjectMonitor::ANONYMOUS_OWNER", 1 },
					{ "ObjectMonitor::NO_OWNER", 0 } };
	const uint32_t tids[NTHREADS] = { 201, 202, 203 };
	const uint64_t X = 0xe0001000, Y = 0xe0002000; /* two locked objects */
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;
	struct monowner *m;

	threads(f, list_var, jt, 2100, 1016, 12, tids);
	for (int i = 0; i < NTHREADS; i++) {
		put64(f, jt[i] + 1312, 21 + i);
		put32(f, jt[i] + 2000, 2000 + 16); /* empty lock stack */
	}
	/* thread 1 has X in a slot above its top (a stale entry): not held */
	put64(f, jt[0] + 2000 + 16, Y);
	put64(f, jt[0] + 2000 + 24, X);
	put32(f, jt[0] + 2000, 2000 + 16 + 8);
	/* thread 3 holds Y then X */
	put64(f, jt[2] + 2000 + 16, Y);
	put64(f, jt[2] + 2000 + 24, X);
	put32(f, jt[2] + 2000, 2000 + 16 + 16);
	build(f, &s, fields, MT_ARRAY_SIZE(fields), types, MT_ARRAY_SIZE(types), ints,
	      MT_ARRAY_SIZE(ints), longs, MT_ARRAY_SIZE(longs));
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
	m = monowner_new(vs);
	assert_non_null(m);
	/* the owner's monitor owner id (its Java thread id) */
	assert_int_equal(monowner_tid(m, monitor(f, 22, X)), 202);
	assert_int_equal(monowner_tid(m, monitor(f, 99, X)), 0);
	/* anonymous: the thread whose lock stack holds the object */
	assert_int_equal(monowner_tid(m, monitor(f, 1, X)), 203);
	assert_int_equal(monowner_tid(m, monitor(f, 1, Y)), 201);
	assert_int_equal(monowner_tid(m, monitor(f, 1, 0xe0003000)), 0);
	assert_int_equal(monowner_tid(m, monitor(f, 1, 0)), 0);
	monowner_free(m);
	vmstructs_free(vs);
	free(f);
}

/* Without the tables it needs, no owner reader. */
static void test_missing_fields(void **state)
{
	struct fake *f = new_fake();
	const struct tfield fields[] = { { "ObjectMonitor", "_owner", "", 0, 64, 0 } };
	const struct ttype types[] = { { "ObjectMonitor", NULL, 0, 0, 0, 208 } };
	const struct tconst ints[] = { { "oopSize", 8 } };
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;

	build(f, &s, fields, MT_ARRAY_SIZE(fields), types, MT_ARRAY_SIZE(types), ints,
	      MT_ARRAY_SIZE(ints), NULL, 0);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
	errno = 0;
	assert_null(monowner_new(vs));
	assert_int_equal(errno, ENOENT);
	vmstructs_free(vs);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jdk17_layout),
		cmocka_unit_test(test_jdk25_layout),
		cmocka_unit_test(test_missing_fields),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
