// SPDX-License-Identifier: GPL-2.0
/*
 * test_sequencer.c - property tests of user/sequencer.c against user/check.c.
 *
 * Random event sequences (plausible and impossible ones, identities drawn
 * from small ranges so they collide and get reused) x random filters x
 * random pause/resume schedules (global and per thread) x random gaps with
 * thread resynchronisation: every reported stream must pass the checker.
 * Then, for each rule, streams built to break it after a valid prefix must
 * be caught with that rule's number.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "check.h"
#include "sequencer.h"

struct out {
	struct mt_ev *ev;
	size_t n, cap;
	struct mt_check *chk;
	uint64_t first_viol;
	int first_rule;
	char first_msg[256];
};

static void on_viol(void *ctx, uint64_t pos, int rule, const char *msg)
{
	struct out *o = ctx;

	if (!o->first_rule) {
		o->first_rule = rule;
		o->first_viol = pos;
		snprintf(o->first_msg, sizeof(o->first_msg), "%s", msg);
	}
}

static void emit(void *ctx, const struct mt_ev *e, const char *text, size_t len)
{
	struct out *o = ctx;

	if (o->n == o->cap) {
		o->cap = o->cap ? o->cap * 2 : 1024;
		o->ev = realloc(o->ev, o->cap * sizeof(*o->ev));
		assert_non_null(o->ev);
	}
	o->ev[o->n] = *e;
	check_feed(o->chk, o->n, e);
	o->n++;
	if (e->kind == MT_EV_NAME)
		assert_int_equal(strlen(text), len);
}

static uint64_t rnd(uint64_t *st)
{
	*st ^= *st << 13;
	*st ^= *st >> 7;
	*st ^= *st << 17;
	return *st;
}

#define R(n) (rnd(&rs) % (n))

static const char *const class_names[] = { "java.lang.String", "java.util.HashMap",
					   "com.example.Foo", "com.example.Bar", "int[]" };
static const char *const thread_names[] = { "main", "VM Thread", "worker-1", "worker-2",
					    "GC Thread#0" };

/* One random input event over small identity ranges. */
static void random_event(struct mt_seq *s, uint64_t *rsp, uint64_t ts, struct mt_ev *e)
{
	uint64_t rs = *rsp;

	memset(e, 0, sizeof(*e));
	e->ts = ts;
	e->kind = 1 + R(MT_EV_LOST); /* every kind but NAME; LOST rarely below */
	if (e->kind == MT_EV_LOST && R(4))
		e->kind = MT_EV_MON_ACQUIRE;
	e->thread = 1 + R(6);
	switch (e->kind) {
	case MT_EV_TYPE_CREATE:
	case MT_EV_TYPE_LOAD:
	case MT_EV_TYPE_RECLAIM:
		e->id = 100 + R(5);
		e->name = seq_name(s, class_names[e->id - 100], strlen(class_names[e->id - 100]));
		e->thread = 0;
		break;
	case MT_EV_OBJ_CREATE:
	case MT_EV_OBJ_RECLAIM:
		e->id = 1000 + R(12);
		e->ref = R(3) ? 100 + R(5) : 0;
		e->v[0] = 16;
		e->thread = 0;
		break;
	case MT_EV_THREAD_CREATE:
	case MT_EV_THREAD_RENAME:
		{
			const char *tn = thread_names[R(5)];

			e->name = seq_name(s, tn, strlen(tn));
		}
		/* fallthrough */
	case MT_EV_THREAD_DESTROY:
		e->id = e->thread;
		break;
	case MT_EV_INV_ENTER:
		e->name = seq_name(s, "GC", 2);
		e->v[0] = MT_INV_GC;
		break;
	case MT_EV_POOL_USAGE:
		e->name = seq_name(s, "G1 Eden Space", 13);
		e->name2 = seq_name(s, "G1 Young Generation", 19);
		e->aux = R(2);
		e->v[1] = R(1000);
		if (!R(5))
			e->thread = 0;
		break;
	case MT_EV_ALLOC_SAMPLE:
		e->ref = 100 + R(5);
		e->v[0] = 4096;
		break;
	case MT_EV_MON_ACQUIRE:
	case MT_EV_MON_RELEASE:
	case MT_EV_MON_WAIT_BEGIN:
	case MT_EV_MON_WAIT_END:
		e->id = 1000 + R(4);
		break;
	case MT_EV_REF:
		e->id = 1000 + R(12);
		e->ref = 1000 + R(12);
		e->thread = 0;
		break;
	case MT_EV_LOST:
		e->v[0] = 1 + R(10);
		e->thread = 0;
		break;
	}
	*rsp = rs;
}

static void random_filter(uint64_t *rsp, struct mt_seq_filter *f, uint64_t *tids)
{
	uint64_t rs = *rsp;

	memset(f, 0, sizeof(*f));
	if (R(2))
		f->cats = (unsigned)R(256);
	if (!R(3))
		f->class_glob = R(2) ? "com.example.*" : "java.*";
	if (!R(3))
		f->thread_glob = R(2) ? "worker-*" : "main";
	if (!R(3)) {
		f->ntids = 1 + R(3);
		for (size_t i = 0; i < f->ntids; i++)
			tids[i] = 1 + R(6);
		f->tids = tids;
	}
	if (!R(3))
		f->sample = 1 + R(4);
	*rsp = rs;
}

/* Run one random scenario; returns the checker's violation count. */
static uint64_t scenario(uint64_t seed, size_t nev, struct out *o)
{
	struct mt_seq_filter f;
	uint64_t tids[4], rs = seed * 2654435761u + 1;
	struct mt_seq *s;
	uint64_t viol;

	memset(o, 0, sizeof(*o));
	o->chk = check_new(on_viol, o);
	assert_non_null(o->chk);
	for (int i = 0; i < 4; i++)
		rnd(&rs);
	random_filter(&rs, &f, tids);
	s = seq_new(&f, emit, o);
	assert_non_null(s);
	for (size_t i = 0; i < nev; i++) {
		struct mt_ev e;
		uint64_t dice = R(100);

		if (dice < 3) {
			seq_pause(s, !seq_paused(s));
		} else if (dice < 6) {
			seq_pause_thread(s, 1 + R(6), R(2));
		} else if (dice == 6) {
			/* a gap, then the threads /proc shows now */
			struct seq_thread_info live[6];
			size_t n = 0;

			seq_gap(s, i, 1 + R(100), MT_LOST_KERNEL);
			for (uint64_t t = 1; t <= 6; t++)
				if (R(2))
					live[n++] = (struct seq_thread_info){ t, seq_name(s, "x", 1) };
			seq_resync_threads(s, i, live, n);
		} else if (dice < 12) {
			continue; /* an event lost without a marker: the input is just inconsistent */
		} else {
			random_event(s, &rs, i, &e);
			seq_feed(s, &e);
		}
	}
	viol = check_count(o->chk, 0);
	if (viol)
		print_message("seed %llu: first violation at %llu (rule %d): %s\n",
			      (unsigned long long)seed, (unsigned long long)o->first_viol,
			      o->first_rule, o->first_msg);
	seq_free(s);
	return viol;
}

static void out_free(struct out *o)
{
	check_free(o->chk);
	free(o->ev);
}

/* Every reported stream passes the checker. */
static void test_random_streams_pass(void **state)
{
	uint64_t reported = 0, lazy = 0;

	for (uint64_t seed = 1; seed <= 3000; seed++) {
		struct out o;

		assert_int_equal(scenario(seed, 400, &o), 0);
		reported += o.n;
		for (size_t i = 0; i < o.n; i++)
			lazy += (o.ev[i].flags & MT_EVF_LAZY) != 0;
		out_free(&o);
	}
	/* the scenarios exercise reporting, including lazy creations */
	assert_true(reported > 100000);
	assert_true(lazy > 1000);
}

/* A well-formed stream, reported in full, comes out unchanged (plus names). */
static void test_full_reporting_is_identity(void **state)
{
	struct out o = { 0 };
	struct mt_seq *s;
	struct mt_ev in[] = {
		{ .ts = 1, .kind = MT_EV_THREAD_CREATE, .thread = 7, .id = 7 },
		{ .ts = 2, .kind = MT_EV_TYPE_CREATE, .id = 100 },
		{ .ts = 3, .kind = MT_EV_TYPE_LOAD, .id = 100 },
		{ .ts = 4, .kind = MT_EV_OBJ_CREATE, .id = 1000, .ref = 100 },
		{ .ts = 5, .kind = MT_EV_INV_ENTER, .thread = 7 },
		{ .ts = 6, .kind = MT_EV_INV_ENTER, .thread = 7, .aux = 1 },
		{ .ts = 7, .kind = MT_EV_MON_WAIT_BEGIN, .thread = 7, .id = 1000 },
		{ .ts = 8, .kind = MT_EV_MON_WAIT_END, .thread = 7, .id = 1000 },
		{ .ts = 9, .kind = MT_EV_MON_ACQUIRE, .thread = 7, .id = 1000 },
		{ .ts = 10, .kind = MT_EV_MON_RELEASE, .thread = 7, .id = 1000 },
		{ .ts = 11, .kind = MT_EV_INV_LEAVE, .thread = 7, .aux = 1 },
		{ .ts = 12, .kind = MT_EV_INV_LEAVE, .thread = 7 },
		{ .ts = 13, .kind = MT_EV_OBJ_RECLAIM, .id = 1000 },
		{ .ts = 14, .kind = MT_EV_TYPE_RECLAIM, .id = 100 },
		{ .ts = 15, .kind = MT_EV_THREAD_DESTROY, .thread = 7, .id = 7 },
	};

	o.chk = check_new(on_viol, &o);
	s = seq_new(NULL, emit, &o);
	in[0].name = seq_name(s, "main", 4);
	in[1].name = seq_name(s, "Foo", 3);
	for (size_t i = 0; i < (sizeof(in) / sizeof(in[0])); i++)
		seq_feed(s, &in[i]);
	assert_int_equal(o.n, (sizeof(in) / sizeof(in[0])) + 2);
	for (size_t i = 0, j = 0; i < o.n; i++) {
		if (o.ev[i].kind == MT_EV_NAME)
			continue;
		assert_int_equal(o.ev[i].kind, in[j].kind);
		assert_int_equal(o.ev[i].ts, in[j].ts);
		assert_int_equal(o.ev[i].flags, 0);
		j++;
	}
	assert_int_equal(check_count(o.chk, 0), 0);
	assert_int_equal(seq_stats(s)->dropped, 0);
	seq_free(s);
	out_free(&o);
}

/* Paused at a creation, resumed for an event needing it: reported lazily,
 * and its reclamation is reported while paused again. */
static void test_lazy_then_reclaim_while_paused(void **state)
{
	struct out o = { 0 };
	struct mt_seq *s;
	struct mt_ev e = { 0 };

	o.chk = check_new(on_viol, &o);
	s = seq_new(NULL, emit, &o);
	seq_pause(s, true);
	e = (struct mt_ev){ .ts = 1, .kind = MT_EV_THREAD_CREATE, .thread = 5, .id = 5 };
	seq_feed(s, &e);
	e = (struct mt_ev){ .ts = 2, .kind = MT_EV_INV_ENTER, .thread = 5 };
	seq_feed(s, &e);
	assert_int_equal(o.n, 0);
	seq_pause(s, false);
	e = (struct mt_ev){ .ts = 3, .kind = MT_EV_INV_ENTER, .thread = 5 };
	seq_feed(s, &e);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.ev[0].kind, MT_EV_THREAD_CREATE);
	assert_true(o.ev[0].flags & MT_EVF_LAZY);
	assert_int_equal(o.ev[1].kind, MT_EV_INV_ENTER);
	assert_true(o.ev[1].flags & MT_EVF_LAZY);
	assert_int_equal(o.ev[2].aux, 1);
	seq_pause(s, true);
	e = (struct mt_ev){ .ts = 4, .kind = MT_EV_THREAD_DESTROY, .thread = 5, .id = 5 };
	seq_feed(s, &e);
	/* two leaves (inferred) and the destruction, all while paused */
	assert_int_equal(o.n, 6);
	assert_int_equal(o.ev[5].kind, MT_EV_THREAD_DESTROY);
	assert_int_equal(check_count(o.chk, 0), 0);
	seq_free(s);
	out_free(&o);
}

/* ---- streams built to break each rule ---- */

/* A valid prefix (a random reported stream), then @tail with fresh ids. */
static int break_rule(uint64_t seed, const struct mt_ev *tail, size_t n, uint64_t *others)
{
	struct out o;
	int rule = 0;

	assert_int_equal(scenario(seed, 200, &o), 0);
	for (size_t i = 0; i < n; i++)
		check_feed(o.chk, o.n + i, &tail[i]);
	rule = o.first_rule;
	*others = check_count(o.chk, 0) - check_count(o.chk, rule);
	out_free(&o);
	return rule;
}

#define T 900001 /* a thread id no scenario uses */
#define O 900002 /* an object no scenario uses */
#define Y 900003 /* a type no scenario uses */

static void expect_rule(const struct mt_ev *tail, size_t n, int rule)
{
	for (uint64_t seed = 1; seed <= 200; seed++) {
		uint64_t others;

		assert_int_equal(break_rule(seed, tail, n, &others), rule);
		assert_int_equal(others, 0);
	}
}

static void test_rule1(void **state)
{
	struct mt_ev a[] = { { .kind = MT_EV_THREAD_DESTROY, .thread = T, .id = T } };
	struct mt_ev b[] = { { .kind = MT_EV_OBJ_RECLAIM, .id = O } };
	struct mt_ev c[] = { { .kind = MT_EV_TYPE_LOAD, .id = Y } };
	struct mt_ev d[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
			     { .kind = MT_EV_INV_LEAVE, .thread = T } };

	expect_rule(a, 1, 1);
	expect_rule(b, 1, 1);
	expect_rule(c, 1, 1);
	expect_rule(d, 2, 1);
}

static void test_rule2(void **state)
{
	struct mt_ev a[] = { { .kind = MT_EV_POOL_USAGE, .thread = T } };
	struct mt_ev b[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
			     { .kind = MT_EV_MON_ACQUIRE, .thread = T, .id = O } };
	struct mt_ev c[] = { { .kind = MT_EV_TYPE_CREATE, .id = Y },
			     { .kind = MT_EV_OBJ_CREATE, .id = O, .ref = Y } };
	struct mt_ev d[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T, .name = 999999 } };

	expect_rule(a, 1, 2);
	expect_rule(b, 2, 2);
	expect_rule(c, 2, 2);
	expect_rule(d, 1, 2);
}

static void test_rule3(void **state)
{
	struct mt_ev a[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
			     { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T } };
	struct mt_ev b[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
			     { .kind = MT_EV_INV_ENTER, .thread = T },
			     { .kind = MT_EV_THREAD_DESTROY, .thread = T, .id = T } };
	struct mt_ev c[] = { { .kind = MT_EV_OBJ_CREATE, .id = O },
			     { .kind = MT_EV_OBJ_CREATE, .id = O } };
	struct mt_ev d[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
			     { .kind = MT_EV_INV_ENTER, .thread = T },
			     { .kind = MT_EV_INV_ENTER, .thread = T, .aux = 1 },
			     { .kind = MT_EV_INV_ENTER, .thread = T, .aux = 1 } };

	expect_rule(a, 2, 3);
	expect_rule(b, 3, 3);
	expect_rule(c, 2, 3);
	expect_rule(d, 4, 3);
}

static void test_rule4(void **state)
{
	struct mt_ev a[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
			     { .kind = MT_EV_INV_ENTER, .thread = T, .aux = 1 } };
	struct mt_ev b[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
			     { .kind = MT_EV_INV_ENTER, .thread = T },
			     { .kind = MT_EV_INV_ENTER, .thread = T, .aux = 1 },
			     { .kind = MT_EV_INV_LEAVE, .thread = T, .aux = 0 } };

	expect_rule(a, 2, 4);
	expect_rule(b, 4, 4);
}

static void test_rule5(void **state)
{
	struct mt_ev a[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
			     { .kind = MT_EV_OBJ_CREATE, .id = O },
			     { .kind = MT_EV_MON_RELEASE, .thread = T, .id = O } };
	struct mt_ev b[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
			     { .kind = MT_EV_OBJ_CREATE, .id = O },
			     { .kind = MT_EV_MON_WAIT_END, .thread = T, .id = O } };
	struct mt_ev c[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
			     { .kind = MT_EV_OBJ_CREATE, .id = O },
			     { .kind = MT_EV_MON_WAIT_BEGIN, .thread = T, .id = O },
			     { .kind = MT_EV_MON_ACQUIRE, .thread = T, .id = O } };
	struct mt_ev d[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
			     { .kind = MT_EV_OBJ_CREATE, .id = O },
			     { .kind = MT_EV_MON_ACQUIRE, .thread = T, .id = O },
			     { .kind = MT_EV_THREAD_DESTROY, .thread = T, .id = T } };
	struct mt_ev e[] = { { .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
			     { .kind = MT_EV_OBJ_CREATE, .id = O },
			     { .kind = MT_EV_MON_ACQUIRE, .thread = T, .id = O },
			     { .kind = MT_EV_OBJ_RECLAIM, .id = O } };

	expect_rule(a, 3, 5);
	expect_rule(b, 3, 5);
	expect_rule(c, 4, 5);
	expect_rule(d, 4, 5);
	expect_rule(e, 4, 5);
}

/* Deleting a reported creation that later events need is always caught. */
static void test_deleted_creation_caught(void **state)
{
	int caught = 0, tried = 0;

	for (uint64_t seed = 1; seed <= 300; seed++) {
		struct out o;

		assert_int_equal(scenario(seed, 300, &o), 0);
		for (size_t i = 0; i < o.n && tried < 3000; i++) {
			struct mt_check *c;
			bool needed = false;
			const struct mt_ev *d = &o.ev[i];

			if (d->kind != MT_EV_THREAD_CREATE && d->kind != MT_EV_OBJ_CREATE)
				continue;
			/* is the entity used later, before a new creation of its id? */
			for (size_t j = i + 1; j < o.n && !needed; j++) {
				const struct mt_ev *x = &o.ev[j];

				if (x->kind == d->kind && x->id == d->id)
					break;
				if (d->kind == MT_EV_THREAD_CREATE)
					needed = x->thread == d->id && x->kind != MT_EV_NAME &&
						 x->kind != MT_EV_OBJ_CREATE;
				else
					needed = (x->id == d->id && x->kind != MT_EV_NAME &&
						  x->kind != MT_EV_TYPE_CREATE &&
						  x->kind != MT_EV_TYPE_LOAD &&
						  x->kind != MT_EV_TYPE_RECLAIM &&
						  x->kind != MT_EV_LOST) ||
						 (x->kind == MT_EV_REF && x->ref == d->id);
			}
			if (!needed)
				continue;
			tried++;
			c = check_new(NULL, NULL);
			for (size_t j = 0; j < o.n; j++)
				if (j != i)
					check_feed(c, j, &o.ev[j]);
			caught += check_count(c, 1) + check_count(c, 2) > 0;
			check_free(c);
		}
		out_free(&o);
	}
	assert_true(tried > 100);
	assert_int_equal(caught, tried);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_reporting_is_identity),
		cmocka_unit_test(test_lazy_then_reclaim_while_paused),
		cmocka_unit_test(test_random_streams_pass),
		cmocka_unit_test(test_rule1),
		cmocka_unit_test(test_rule2),
		cmocka_unit_test(test_rule3),
		cmocka_unit_test(test_rule4),
		cmocka_unit_test(test_rule5),
		cmocka_unit_test(test_deleted_creation_caught),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
