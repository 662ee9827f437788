// SPDX-License-Identifier: GPL-2.0
/*
 * test_jthreadlist.c - every Java thread's JavaThread* and allocation
 * counter over a synthetic JVM image laid out as JDK 17 and 25 lay them out
 * (ThreadsList::_length at 4, _threads at 16; Thread::_allocated_bytes at
 * 528 / 576 - JDK 25's is declared on Thread, as `memtrace vmstructs --dump`
 * shows): a list replaced while it is read is -EAGAIN, an unreadable thread
 * is not ok, a missing table entry is -ENOENT. The e2e cases alloc_* check
 * the totals these counters give against ThreadMXBean on live JVMs.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jvm/jthreadlist.h"
#include "jvm/vmstructs.h"
#include "lib/util.h"

#include "fake_target.h"

static struct fake *new_fake(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->used = 64;
	return f;
}

/* A read that replaces the list after @swap_after reads (threads came). */
struct swapper {
	struct fake *f;
	uint64_t list_var, other;
	int swap_after;
};

static int swap_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct swapper *s = ctx;

	if (s->swap_after >= 0 && s->swap_after-- == 0)
		put64(s->f, s->list_var, s->other);
	return fake_read(s->f, addr, buf, len);
}

static void run(uint64_t alloc_off)
{
	struct fake *f = new_fake();
	uint64_t list_var = var(f, 0), arr = fake_alloc(f, 24), list = fake_alloc(f, 32), jt[3];
	const uint64_t ctr[3] = { 1000, 0, 123456789012ull };
	const struct tfield fields[] = {
		{ "ThreadsSMRSupport", "_java_thread_list", "ThreadsList*", 1, 0, list_var },
		{ "ThreadsList", "_length", "const uint", 0, 4, 0 },
		{ "ThreadsList", "_threads", "JavaThread*const*const", 0, 16, 0 },
		{ "Thread", "_allocated_bytes", "jlong", 0, alloc_off, 0 },
	};
	const struct ttype types[] = { { "JavaThread", "Thread", 0, 0, 0, 1024 },
				       { "Thread", NULL, 0, 0, 0, 1024 } };
	struct swapper sw = { f, list_var, 0, -1 };
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;
	struct jthreadlist l;
	uint64_t *jts, *c;
	bool *ok;
	size_t n;

	for (int i = 0; i < 3; i++) {
		jt[i] = fake_alloc(f, 1024);
		put64(f, jt[i] + alloc_off, ctr[i]);
		put64(f, arr + 8 * i, jt[i]);
	}
	put64(f, arr + 16, 0xdead0000); /* the third thread: unreadable */
	put32(f, list + 4, 3);
	put64(f, list + 16, arr);
	put64(f, list_var, list);
	sw.other = fake_alloc(f, 32);
	build(f, &s, fields, MT_ARRAY_SIZE(fields), types, MT_ARRAY_SIZE(types), NULL, 0, NULL, 0);
	assert_int_equal(vmstructs_parse(&s, swap_read, &sw, &vs), 0);
	assert_int_equal(jthreadlist_layout(vs, &l), 0);

	assert_int_equal(jthreadlist_read(&l, &jts, &c, &ok, &n), 0);
	assert_int_equal(n, 3);
	for (int i = 0; i < 2; i++) {
		assert_int_equal(jts[i], jt[i]);
		assert_true(ok[i]);
		assert_int_equal(c[i], ctr[i]);
	}
	assert_int_equal(jts[2], 0xdead0000);
	assert_false(ok[2]);
	free(jts);
	free(c);
	free(ok);

	/* the list is replaced while the counters are read: read again */
	sw.swap_after = 4;
	assert_int_equal(jthreadlist_read(&l, &jts, &c, &ok, &n), -EAGAIN);
	assert_null(jts);
	assert_int_equal(n, 0);
	/* the new list is empty */
	assert_int_equal(jthreadlist_read(&l, &jts, &c, &ok, &n), 0);
	assert_int_equal(n, 0);
	vmstructs_free(vs);
	free(f);
}

static void test_jdk17(void **state)
{
	(void)state;
	run(528);
}

static void test_jdk25(void **state)
{
	(void)state;
	run(576);
}

static void test_missing(void **state)
{
	struct fake *f = new_fake();
	const struct tfield fields[] = {
		{ "ThreadsList", "_length", "const uint", 0, 4, 0 },
	};
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;
	struct jthreadlist l;

	(void)state;
	build(f, &s, fields, MT_ARRAY_SIZE(fields), NULL, 0, NULL, 0, NULL, 0);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
	assert_int_equal(jthreadlist_layout(vs, &l), -ENOENT);
	vmstructs_free(vs);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jdk17),
		cmocka_unit_test(test_jdk25),
		cmocka_unit_test(test_missing),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
