// SPDX-License-Identifier: GPL-2.0
/*
 * test_jstackname.c - a walked stack's names over a synthetic memory image
 * (fake_target.h): interpreted frames named through Method* -> ConstMethod ->
 * ConstantPool -> Klass -> Symbol, and the cut marks (#31.14): a stack deeper
 * than the depth bound keeps its innermost frames under "[stack cut: depth]",
 * a walk that stopped early says why, a stack that reaches its thread's entry
 * within the bound has no mark; jstackname_cut() reads the marks back.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jstack/jstackname.h"
#include "jstack/jwalk.h"
#include "jvm/vmstructs.h"

#include "fake_target.h"

#define INTERP_LO 0x7f0000100000ULL
#define CP_SIZE 88

/* What jframes_layout() needs to name interpreted frames, at made-up offsets
 * (as test_jframes.c lays them out). */
static struct mt_vmstructs *vm_open(struct fake *f)
{
	uint64_t queue;
	struct tfield fl[] = {
		{ "JavaThread", "_anchor", "JavaFrameAnchor", 0, 0x300, 0 },
		{ "JavaFrameAnchor", "_last_Java_sp", "intptr_t*", 0, 0, 0 },
		{ "JavaFrameAnchor", "_last_Java_pc", "address", 0, 16, 0 },
		{ "JavaFrameAnchor", "_last_Java_fp", "intptr_t*", 0, 8, 0 },
		{ "AbstractInterpreter", "_code", "StubQueue*", 1, 0, 0 },
		{ "StubQueue", "_stub_buffer", "address", 0, 8, 0 },
		{ "StubQueue", "_buffer_limit", "int", 0, 16, 0 },
		{ "Method", "_constMethod", "ConstMethod*", 0, 8, 0 },
		{ "ConstMethod", "_constants", "ConstantPool*", 0, 8, 0 },
		{ "ConstMethod", "_name_index", "u2", 0, 42, 0 },
		{ "ConstantPool", "_pool_holder", "InstanceKlass*", 0, 24, 0 },
		{ "Klass", "_name", "Symbol*", 0, 24, 0 },
		{ "Symbol", "_length", "u2", 0, 4, 0 },
		{ "Symbol", "_body", "", 0, 6, 0 },
	};
	const struct ttype ty[] = {
		{ "u2", NULL, 0, 1, 1, 2 },
		{ "Symbol", NULL, 0, 0, 0, 8 },
		{ "ConstantPool", "Metadata", 0, 0, 0, CP_SIZE },
	};
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs;

	f->used = 64;
	queue = fake_alloc(f, 32);
	put64(f, queue + 8, INTERP_LO);
	put32(f, queue + 16, 0x20000);
	fl[4].address = var(f, queue);
	build(f, &s, fl, sizeof(fl) / sizeof(fl[0]), ty, 3, NULL, 0, NULL, 0);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
	return vs;
}

/* A Symbol {u4 hash; u2 length; body} holding @s. */
static uint64_t symbol(struct fake *f, const char *s)
{
	size_t n = strlen(s);
	uint64_t sym = fake_alloc(f, 6 + n);
	uint16_t len = (uint16_t)n;

	put32(f, sym, 0xabcdef);
	memcpy(fake_at(f, sym + 4), &len, 2);
	memcpy(fake_at(f, sym + 6), s, n);
	return sym;
}

/* Method @name of class @cls as the JVM lays it out. Returns the Method*. */
static uint64_t method(struct fake *f, const char *cls, const char *name)
{
	uint64_t m = fake_alloc(f, 64), cm = fake_alloc(f, 64), cp = fake_alloc(f, CP_SIZE + 8 * 8);
	uint64_t k = fake_alloc(f, 208);
	uint16_t idx = 5;

	memset(fake_at(f, cp), 0, CP_SIZE + 8 * 8);
	put64(f, m + 8, cm);
	put64(f, cm + 8, cp);
	memcpy(fake_at(f, cm + 42), &idx, 2);
	put64(f, cp + 24, k);
	put64(f, cp + CP_SIZE + 5 * 8, symbol(f, name));
	put64(f, k + 24, symbol(f, cls));
	return m;
}

struct fix {
	struct fake *f;
	struct mt_vmstructs *vs;
	struct jstackname *t;
	struct mt_jstack *st;     /* Deep.main -> Deep.rec x (depth - 1), innermost first */
	const char **names;
	uint64_t rec, main_m;     /* their Method*s */
};

#define NAMES (MT_JSTACK_MAX_DEPTH + 2)

static int setup(void **state)
{
	struct fix *x = calloc(1, sizeof(*x));
	struct jwalk_layout jw;

	assert_non_null(x);
	x->f = calloc(1, sizeof(*x->f));
	assert_non_null(x->f);
	x->vs = vm_open(x->f);
	memset(&jw, 0, sizeof(jw));
	x->t = jstackname_new(x->vs, &jw);
	assert_non_null(x->t);
	x->rec = method(x->f, "Deep", "rec");
	x->main_m = method(x->f, "Deep", "main");
	x->st = calloc(1, sizeof(*x->st));
	x->names = calloc(NAMES, sizeof(*x->names));
	assert_non_null(x->st);
	assert_non_null(x->names);
	*state = x;
	return 0;
}

static int teardown(void **state)
{
	struct fix *x = *state;

	jstackname_free(x->t);
	vmstructs_free(x->vs);
	free(x->f);
	free(x->st);
	free(x->names);
	free(x);
	return 0;
}

/* @x->st: @depth interpreted frames (main outermost), the walk's @stop. */
static void stack(struct fix *x, uint32_t depth, uint32_t stop)
{
	x->st->depth = depth;
	x->st->stop = stop;
	for (uint32_t d = 0; d < depth; d++)
		x->st->f[d] = (struct mt_jframe){ .a = d + 1 == depth ? x->main_m : x->rec };
}

/* The names hold @mark (NULL: none) then @n frames: Deep.main first when
 * @whole, then Deep.rec. */
static void expect(struct fix *x, int got, const char *mark, int n, bool whole)
{
	int k = 0;

	assert_int_equal(got, n + (mark != NULL));
	if (mark) {
		assert_string_equal(x->names[0], mark);
		assert_true(jstackname_cut(x->names[0]) > 0);
		k = 1;
	}
	for (int i = 0; i < n; i++) {
		assert_string_equal(x->names[k + i], whole && !i ? "Deep.main" : "Deep.rec");
		assert_int_equal(jstackname_cut(x->names[k + i]), -1);
	}
}

/* Within the bound: whole, no mark; 302 frames at the default bound (512). */
static void test_whole(void **state)
{
	struct fix *x = *state;

	stack(x, 302, MT_JSTOP_END);
	expect(x, jstackname_frames(x->t, x->st, 0, x->names, NAMES, false), NULL, 302, true);
	jstackname_set_depth(x->t, 302);
	expect(x, jstackname_frames(x->t, x->st, 0, x->names, NAMES, false), NULL, 302, true);
}

/* Deeper than the bound: the innermost frames under a mark, though the walk
 * itself was whole (before #31.14 the names stopped at 128 unmarked). */
static void test_cut_at_bound(void **state)
{
	struct fix *x = *state;

	stack(x, 302, MT_JSTOP_END);
	jstackname_set_depth(x->t, 100);
	expect(x, jstackname_frames(x->t, x->st, 0, x->names, NAMES, false),
	       "[stack cut: depth]", 100, false);
	jstackname_set_depth(x->t, 301); /* one frame short: main is the one left out */
	expect(x, jstackname_frames(x->t, x->st, 0, x->names, NAMES, false),
	       "[stack cut: depth]", 301, false);
	jstackname_set_depth(x->t, 0); /* out of range: ignored */
	expect(x, jstackname_frames(x->t, x->st, 0, x->names, NAMES, false),
	       "[stack cut: depth]", 301, false);
	jstackname_set_depth(x->t, MT_JSTACK_MAX_DEPTH);
	stack(x, MT_JSTACK_MAX_DEPTH, MT_JSTOP_END);
	expect(x, jstackname_frames(x->t, x->st, 0, x->names, NAMES, false), NULL,
	       MT_JSTACK_MAX_DEPTH, true);
}

/* No room in the caller's array: cut there, marked, the innermost kept. */
static void test_cut_at_max(void **state)
{
	struct fix *x = *state;

	stack(x, 302, MT_JSTOP_END);
	expect(x, jstackname_frames(x->t, x->st, 0, x->names, 51, false),
	       "[stack cut: depth]", 50, false);
	expect(x, jstackname_frames(x->t, x->st, 0, x->names, 303, false), NULL, 302, true);
	assert_int_equal(jstackname_frames(x->t, x->st, 0, x->names, 0, false), 0);
}

/* A walk the walker cut, or one that stopped early: marked with its reason. */
static void test_walk_stops(void **state)
{
	struct fix *x = *state;

	stack(x, 40, MT_JSTOP_DEPTH);
	x->st->f[39] = x->st->f[0]; /* the walker's cut: no main */
	expect(x, jstackname_frames(x->t, x->st, 0, x->names, NAMES, false),
	       "[stack cut: depth]", 40, false);
	stack(x, 40, MT_JSTOP_READ);
	x->st->f[39] = x->st->f[0];
	expect(x, jstackname_frames(x->t, x->st, 0, x->names, NAMES, false),
	       "[stack cut: read_failed]", 40, false);
	assert_int_equal(jstackname_cut(x->names[0]), MT_JSTOP_READ);
}

/* The marks read back: every reason, nothing else. */
static void test_cut_names(void **state)
{
	char name[64];

	(void)state;
	for (uint32_t i = 1; i < MT_JSTOP_NSTOPS; i++) {
		snprintf(name, sizeof(name), "[stack cut: %s]", jwalk_stop_name(i));
		assert_int_equal(jstackname_cut(name), (int)i);
	}
	assert_int_equal(jstackname_cut(NULL), -1);
	assert_int_equal(jstackname_cut("[stack cut: end]"), -1); /* not a cut */
	assert_int_equal(jstackname_cut("[stack cut: depth"), -1);
	assert_int_equal(jstackname_cut("[stack cut: depth]x"), -1);
	assert_int_equal(jstackname_cut("[stack cut: text length]"), -1); /* the text's own */
	assert_int_equal(jstackname_cut("Deep.rec"), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_whole, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_at_bound, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cut_at_max, setup, teardown),
		cmocka_unit_test_setup_teardown(test_walk_stops, setup, teardown),
		cmocka_unit_test(test_cut_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
