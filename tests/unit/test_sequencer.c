// SPDX-License-Identifier: GPL-2.0
/*
 * test_sequencer.c - property tests of user/monitor/sequencer.c against user/monitor/check.c.
 *
 * Random event sequences (plausible and impossible ones, identities drawn
 * from small ranges so they collide and get reused) x random filters x
 * random pause/resume schedules (global and per thread) x random gaps with
 * thread and class resynchronisation: every reported stream must pass the
 * checker. After a gap, resynchronised classes name allocation samples
 * right again.
 * Then, for each rule, streams built to break it after a valid prefix must
 * be caught with that rule's number.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "monitor/check.h"
#include "monitor/sequencer.h"

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
		e->name = sequencer_name(s, class_names[e->id - 100], strlen(class_names[e->id - 100]));
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

			e->name = sequencer_name(s, tn, strlen(tn));
		}
		/* fallthrough */
	case MT_EV_THREAD_DESTROY:
		e->id = e->thread;
		break;
	case MT_EV_INV_ENTER:
		e->name = sequencer_name(s, "GC", 2);
		e->v[0] = MT_INV_GC;
		break;
	case MT_EV_POOL_USAGE:
		e->name = sequencer_name(s, "G1 Eden Space", 13);
		e->name2 = sequencer_name(s, "G1 Young Generation", 19);
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

/*
 * The sequencer's counters against what it emitted (@o) and was fed (@fed
 * events, lost-event counts not included): each emitted line counted once
 * by its kind and flags, each observed event accounted for once.
 */
static void check_counters(const struct mt_seq *s, const struct out *o, uint64_t fed)
{
	const struct sequencer_stats *st = sequencer_stats(s);
	uint64_t names = 0, markers = 0, inferred = 0, resync = 0, lazy = 0;

	for (size_t i = 0; i < o->n; i++) {
		const struct mt_ev *e = &o->ev[i];

		if (e->kind == MT_EV_NAME)
			names++;
		else if (e->kind == MT_EV_LOST)
			markers++;
		else if (e->flags & MT_EVF_RESYNC)
			resync++;
		else if (e->flags & MT_EVF_INFERRED)
			inferred++;
		else if (e->flags & MT_EVF_LAZY)
			lazy++;
	}
	assert_int_equal(st->out, o->n);
	assert_int_equal(st->names, names);
	assert_int_equal(st->markers, markers);
	assert_int_equal(st->inferred, inferred);
	assert_int_equal(st->resync, resync);
	assert_int_equal(st->lazy, lazy);
	assert_int_equal(st->in, fed);
	/* never more observed events out than came in, net of absorbed and dropped */
	assert_true(sequencer_observed_out(st) + st->absorbed + st->dropped <= st->in);
	assert_int_equal(sequencer_observed_out(st) + sequencer_unreported(st) + st->absorbed +
			 st->dropped, st->in);
}

/* Run one random scenario; returns the checker's violation count. */
static uint64_t scenario(uint64_t seed, size_t nev, struct out *o)
{
	struct mt_seq_filter f;
	uint64_t tids[4], rs = seed * 2654435761u + 1, fed = 0;
	struct mt_seq *s;
	uint64_t viol;

	memset(o, 0, sizeof(*o));
	o->chk = check_new(on_viol, o);
	assert_non_null(o->chk);
	for (int i = 0; i < 4; i++)
		rnd(&rs);
	random_filter(&rs, &f, tids);
	s = sequencer_new(&f, emit, o);
	assert_non_null(s);
	for (size_t i = 0; i < nev; i++) {
		struct mt_ev e;
		uint64_t dice = R(100);

		if (dice < 3) {
			sequencer_pause(s, !sequencer_paused(s));
		} else if (dice < 6) {
			sequencer_pause_thread(s, 1 + R(6), R(2));
		} else if (dice == 6) {
			/* a gap, then the threads /proc shows now */
			struct sequencer_thread_info live[6];
			size_t n = 0;

			sequencer_gap(s, i, 1 + R(100), MT_LOST_KERNEL);
			for (uint64_t t = 1; t <= 6; t++)
				if (R(2))
					live[n++] = (struct sequencer_thread_info){ t, sequencer_name(s, "x", 1) };
			sequencer_resync_threads(s, i, live, n);
			/* and the classes the JVM lists now (a key may name another class) */
			{
				struct sequencer_type_info tl[5];
				size_t nt = 0;

				for (uint64_t k = 0; k < 5; k++) {
					const char *cn = class_names[R(3) ? k : R(5)];

					if (R(3))
						tl[nt++] = (struct sequencer_type_info){
							100 + k, sequencer_name(s, cn, strlen(cn)) };
				}
				sequencer_resync_types(s, i, tl, nt);
			}
		} else if (dice < 12) {
			continue; /* an event lost without a marker: the input is just inconsistent */
		} else {
			random_event(s, &rs, i, &e);
			sequencer_feed(s, &e);
			fed += e.kind != MT_EV_LOST;
		}
	}
	check_counters(s, o, fed);
	viol = check_count(o->chk, 0);
	if (viol)
		print_message("seed %llu: first violation at %llu (rule %d): %s\n",
			      (unsigned long long)seed, (unsigned long long)o->first_viol,
			      o->first_rule, o->first_msg);
	sequencer_free(s);
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
	s = sequencer_new(NULL, emit, &o);
	in[0].name = sequencer_name(s, "main", 4);
	in[1].name = sequencer_name(s, "Foo", 3);
	for (size_t i = 0; i < (sizeof(in) / sizeof(in[0])); i++)
		sequencer_feed(s, &in[i]);
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
	assert_int_equal(sequencer_stats(s)->dropped, 0);
	sequencer_free(s);
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
	s = sequencer_new(NULL, emit, &o);
	sequencer_pause(s, true);
	e = (struct mt_ev){ .ts = 1, .kind = MT_EV_THREAD_CREATE, .thread = 5, .id = 5 };
	sequencer_feed(s, &e);
	e = (struct mt_ev){ .ts = 2, .kind = MT_EV_INV_ENTER, .thread = 5 };
	sequencer_feed(s, &e);
	assert_int_equal(o.n, 0);
	sequencer_pause(s, false);
	e = (struct mt_ev){ .ts = 3, .kind = MT_EV_INV_ENTER, .thread = 5 };
	sequencer_feed(s, &e);
	assert_int_equal(o.n, 3);
	assert_int_equal(o.ev[0].kind, MT_EV_THREAD_CREATE);
	assert_true(o.ev[0].flags & MT_EVF_LAZY);
	assert_int_equal(o.ev[1].kind, MT_EV_INV_ENTER);
	assert_true(o.ev[1].flags & MT_EVF_LAZY);
	assert_int_equal(o.ev[2].aux, 1);
	sequencer_pause(s, true);
	e = (struct mt_ev){ .ts = 4, .kind = MT_EV_THREAD_DESTROY, .thread = 5, .id = 5 };
	sequencer_feed(s, &e);
	/* two leaves (inferred) and the destruction, all while paused */
	assert_int_equal(o.n, 6);
	assert_int_equal(o.ev[5].kind, MT_EV_THREAD_DESTROY);
	assert_int_equal(check_count(o.chk, 0), 0);
	sequencer_free(s);
	out_free(&o);
}

/*
 * Parks and sleeps as the collector feeds them (events.h: MT_WAIT_PARK on a
 * blocker object, MT_WAIT_SLEEP and blockerless parks on the thread's own
 * untyped MT_WAIT_SELF object, reclaimed before the thread's destruction),
 * under a class filter and a thread pause; and a blocker's address taken by
 * an object of another class while a thread still parks on the first (a
 * moving collector): the wait is ended before the old object is reclaimed,
 * and the park's own end, now impossible, is dropped. Full reporting and the
 * filtered one both pass the checker.
 */
static void test_park_waits(void **state)
{
	enum { T1 = 11, T2 = 12, LOCK = 0x1000, COND = 0x2000 };
	const uint64_t self = MT_WAIT_SELF(T2);

	for (int filtered = 0; filtered < 2; filtered++) {
		struct mt_seq_filter f = { .class_glob = "java.util.concurrent.*" };
		struct out o = { 0 };
		struct mt_seq *s;
		size_t waits = 0, ends = 0;

		o.chk = check_new(on_viol, &o);
		s = sequencer_new(filtered ? &f : NULL, emit, &o);
		assert_non_null(s);
		struct mt_ev in[] = {
			{ .ts = 1, .kind = MT_EV_THREAD_CREATE, .thread = T1, .id = T1 },
			{ .ts = 1, .kind = MT_EV_THREAD_CREATE, .thread = T2, .id = T2 },
			{ .ts = 2, .kind = MT_EV_TYPE_CREATE, .id = 100,
			  .name = sequencer_name(s, "java.util.concurrent.locks.ReentrantLock$NonfairSync", 52) },
			{ .ts = 2, .kind = MT_EV_TYPE_LOAD, .id = 100 },
			{ .ts = 2, .kind = MT_EV_TYPE_CREATE, .id = 101, .name = sequencer_name(s, "pkg.Other", 9) },
			{ .ts = 2, .kind = MT_EV_TYPE_LOAD, .id = 101 },
			{ .ts = 3, .kind = MT_EV_OBJ_CREATE, .id = LOCK, .ref = 100 },
			{ .ts = 4, .kind = MT_EV_MON_WAIT_BEGIN, .aux = MT_WAIT_PARK, .thread = T1, .id = LOCK,
			  .v = { 0, 0, T2 } },
			{ .ts = 5, .kind = MT_EV_MON_WAIT_END, .thread = T1, .id = LOCK },
			{ .ts = 6, .kind = MT_EV_OBJ_CREATE, .id = self },
			{ .ts = 6, .kind = MT_EV_MON_WAIT_BEGIN, .aux = MT_WAIT_SLEEP, .thread = T2, .id = self,
			  .v = { 1 } },
			{ .ts = 7, .kind = MT_EV_MON_WAIT_END, .thread = T2, .id = self },
			{ .ts = 8, .kind = MT_EV_MON_WAIT_BEGIN, .aux = MT_WAIT_PARK, .thread = T2, .id = self,
			  .v = { 1000 } },
			{ .ts = 9, .kind = MT_EV_MON_WAIT_END, .thread = T2, .id = self },
			/* T1 parks on LOCK; a GC moves it away and another class's object lands there */
			{ .ts = 10, .kind = MT_EV_MON_WAIT_BEGIN, .aux = MT_WAIT_PARK, .thread = T1, .id = LOCK },
			{ .ts = 11, .kind = MT_EV_OBJ_CREATE, .id = LOCK, .ref = 101 },
			{ .ts = 12, .kind = MT_EV_MON_WAIT_END, .thread = T1, .id = LOCK },
			{ .ts = 13, .kind = MT_EV_OBJ_CREATE, .id = COND, .ref = 100 },
			{ .ts = 14, .kind = MT_EV_MON_WAIT_BEGIN, .aux = MT_WAIT_PARK, .thread = T1, .id = COND },
			{ .ts = 15, .kind = MT_EV_MON_WAIT_END, .thread = T1, .id = COND },
			{ .ts = 16, .kind = MT_EV_OBJ_RECLAIM, .id = self },
			{ .ts = 16, .kind = MT_EV_THREAD_DESTROY, .thread = T2, .id = T2 },
		};

		for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
			if (in[i].ts == 13)
				sequencer_pause_thread(s, T1, filtered); /* T1's last park unreported */
			sequencer_feed(s, &in[i]);
		}
		for (size_t i = 0; i < o.n; i++) {
			waits += o.ev[i].kind == MT_EV_MON_WAIT_BEGIN;
			ends += o.ev[i].kind == MT_EV_MON_WAIT_END;
		}
		assert_int_equal(check_count(o.chk, 0), 0);
		assert_int_equal(sequencer_stats(s)->dropped, 1); /* the displaced park's end */
		assert_int_equal(waits, ends);
		/* all: 5 waits; filtered: T1's first two parks only (the thread's own
		 * object has no class; T1 was paused for the last) */
		assert_int_equal(waits, filtered ? 2 : 5);
		sequencer_free(s);
		out_free(&o);
	}
}

/*
 * Object.wait as HotSpot's probes show it: monitor__wait, the wait's own
 * release of the monitor (contended__exit: it woke a thread), a contended
 * entry after the notify (contended__enter, __entered), then
 * monitor__waited. One wait, begun and ended where the call was, the
 * thread's holds as before it; the release and entry absorbed, nothing
 * dropped. The monitor was entered uncontended before: its release after
 * the wait comes with an inferred acquire. A thread named before its
 * creation is inferred, a wait's end whose begin came before is dropped,
 * events of an unreported category are counted as not reported.
 */
static void test_counters_object_wait(void **state)
{
	enum { T = 7, U = 8, L = 0x1000 };
	struct mt_seq_filter f = { .cats = MT_CAT_ALL & ~MT_CAT_POOL };
	struct out o = { 0 };
	struct mt_seq *s;
	const struct sequencer_stats *st;
	size_t begins = 0, ends = 0;

	o.chk = check_new(on_viol, &o);
	s = sequencer_new(&f, emit, &o);
	assert_non_null(s);
	struct mt_ev in[] = {
		{ .ts = 1, .kind = MT_EV_THREAD_CREATE, .thread = T, .id = T },
		{ .ts = 2, .kind = MT_EV_TYPE_CREATE, .id = 100 },
		{ .ts = 2, .kind = MT_EV_TYPE_LOAD, .id = 100 },
		{ .ts = 3, .kind = MT_EV_OBJ_CREATE, .id = L, .ref = 100 },
		{ .ts = 4, .kind = MT_EV_MON_WAIT_BEGIN, .aux = MT_WAIT_NOTIFY, .thread = T, .id = L },
		{ .ts = 5, .kind = MT_EV_MON_RELEASE, .thread = T, .id = L },
		{ .ts = 6, .kind = MT_EV_MON_WAIT_BEGIN, .aux = MT_WAIT_ENTER, .thread = T, .id = L },
		{ .ts = 7, .kind = MT_EV_MON_WAIT_END, .thread = T, .id = L },
		{ .ts = 7, .kind = MT_EV_MON_ACQUIRE, .thread = T, .id = L },
		{ .ts = 8, .kind = MT_EV_MON_WAIT_END, .thread = T, .id = L },
		{ .ts = 9, .kind = MT_EV_MON_RELEASE, .thread = T, .id = L },
		/* thread U: never seen created; its wait began before the recording */
		{ .ts = 10, .kind = MT_EV_MON_WAIT_END, .thread = U, .id = L },
		{ .ts = 11, .kind = MT_EV_POOL_USAGE, .thread = T },
	};
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		sequencer_feed(s, &in[i]);
	st = sequencer_stats(s);
	for (size_t i = 0; i < o.n; i++) {
		if (o.ev[i].kind == MT_EV_MON_WAIT_BEGIN) {
			begins++;
			assert_int_equal(o.ev[i].ts, 4);
		} else if (o.ev[i].kind == MT_EV_MON_WAIT_END) {
			ends++;
			assert_int_equal(o.ev[i].ts, 8);
			assert_int_equal(o.ev[i].flags, 0);
		}
	}
	assert_int_equal(begins, 1);
	assert_int_equal(ends, 1);
	assert_int_equal(check_count(o.chk, 0), 0);
	assert_int_equal(st->in, 13);
	assert_int_equal(st->absorbed, 4);   /* release, entry's begin, end and acquire */
	assert_int_equal(st->dropped, 1);    /* U's wait end */
	assert_int_equal(st->inferred, 1);   /* the acquire before the last release */
	assert_int_equal(sequencer_observed_out(st), 7); /* T, type, load, L, wait, end, release */
	assert_int_equal(sequencer_unreported(st), 1);   /* the pool reading */
	assert_int_equal(st->out, 8);
	/* a late report of the thread named before its creation: inferred */
	in[0] = (struct mt_ev){ .ts = 12, .kind = MT_EV_MON_WAIT_BEGIN, .aux = MT_WAIT_ENTER,
				.thread = U, .id = L };
	sequencer_feed(s, &in[0]);
	assert_int_equal(o.ev[o.n - 2].kind, MT_EV_THREAD_CREATE);
	assert_int_equal(o.ev[o.n - 2].flags, MT_EVF_LAZY | MT_EVF_INFERRED);
	assert_int_equal(st->inferred, 2);
	assert_int_equal(sequencer_observed_out(st), 8);
	check_counters(s, &o, 14);
	sequencer_free(s);
	out_free(&o);
}

/* ---- the gap path: classes resynchronised after lost events ---- */

static const char *const gap_names[] = { "A", "B", "C", "D", "E", "F", "G", "H", "I", "J" };
#define GAP_KEYS 8

/*
 * A JVM's truth (types loaded and unloaded under 8 reusable keys, allocation
 * samples on live ones; each sample carries the index of its class's true
 * name in v[3]), fed to the sequencer with runs of events lost; after each
 * run, a gap and a resync from the truth. Every reported stream passes the
 * checker, and every reported sample after the first resync refers to a type
 * whose reported name is its true name.
 */
static void test_gap_resync_types_property(void **state)
{
	uint64_t total_checked = 0, total_resync = 0;

	for (uint64_t seed = 1; seed <= 500; seed++) {
		uint64_t rs = seed * 0x9e3779b97f4a7c15ull + 7;
		int truth[GAP_KEYS];         /* name index, -1: not loaded */
		uint64_t rep_name[GAP_KEYS + 100] = { 0 };
		struct mt_seq_filter f = { 0 };
		struct out o = { 0 };
		struct mt_seq *s;
		size_t lost_left = 0, from = 0;
		bool synced_once = false;

		for (int k = 0; k < GAP_KEYS; k++)
			truth[k] = -1;
		if (R(2))
			f.cats = MT_CAT_ALLOC | (R(2) ? MT_CAT_TYPE : 0) | (R(2) ? MT_CAT_THREAD : 0);
		o.chk = check_new(on_viol, &o);
		s = sequencer_new(&f, emit, &o);
		assert_non_null(s);
		for (size_t i = 1; i <= 600; i++) {
			struct mt_ev e = { .ts = i };
			int k = (int)R(GAP_KEYS);

			if (!lost_left && !R(40)) {
				lost_left = 1 + R(30); /* a run of events the ring buffer drops */
			}
			if (!R(50))
				sequencer_pause(s, !sequencer_paused(s));
			if (truth[k] < 0 || !R(8)) {
				bool load = truth[k] < 0;

				if (!load) {
					e.kind = MT_EV_TYPE_RECLAIM;
					e.id = 100 + k;
					truth[k] = -1;
				} else {
					truth[k] = (int)R(10);
					e.kind = MT_EV_TYPE_CREATE;
					e.id = 100 + k;
					e.name = sequencer_name(s, gap_names[truth[k]], 1);
				}
				if (!lost_left) {
					sequencer_feed(s, &e);
					if (load) {
						e.kind = MT_EV_TYPE_LOAD;
						e.name = 0;
						sequencer_feed(s, &e);
					}
				}
			} else {
				e.kind = MT_EV_ALLOC_SAMPLE;
				e.thread = 1;
				e.ref = 100 + k;
				e.v[0] = 4096;
				e.v[3] = (uint64_t)truth[k];
				if (!lost_left)
					sequencer_feed(s, &e);
			}
			if (lost_left && !--lost_left) {
				/* the marker, then the JVM's class list and threads now */
				struct sequencer_type_info live[GAP_KEYS];
				struct sequencer_thread_info th = { 1, sequencer_name(s, "main", 4) };
				size_t n = 0;

				for (int j = 0; j < GAP_KEYS; j++)
					if (truth[j] >= 0)
						live[n++] = (struct sequencer_type_info){
							100 + j, sequencer_name(s, gap_names[truth[j]], 1) };
				sequencer_gap(s, i, 5, MT_LOST_KERNEL);
				sequencer_resync_threads(s, i, &th, 1);
				sequencer_resync_types(s, i, live, n);
				synced_once = true;
				total_resync++;
			}
			/* what was reported so far: names of types, and samples checked */
			for (; from < o.n; from++) {
				const struct mt_ev *x = &o.ev[from];

				if (x->kind == MT_EV_TYPE_CREATE)
					rep_name[x->id - 100] = x->name;
				if (x->kind == MT_EV_ALLOC_SAMPLE && synced_once) {
					assert_int_equal(rep_name[x->ref - 100],
							 sequencer_name(s, gap_names[x->v[3]], 1));
					total_checked++;
				}
			}
		}
		if (check_count(o.chk, 0))
			print_message("seed %llu: first violation at %llu (rule %d): %s\n",
				      (unsigned long long)seed, (unsigned long long)o.first_viol,
				      o.first_rule, o.first_msg);
		assert_int_equal(check_count(o.chk, 0), 0);
		sequencer_free(s);
		out_free(&o);
	}
	assert_true(total_resync > 1000);
	assert_true(total_checked > 10000);
}

/* The gap path step by step: what a resync reports, and what it leaves to
 * lazy creation when type events are filtered out. */
static void test_gap_resync_types_directed(void **state)
{
	for (int filtered = 0; filtered < 2; filtered++) {
		struct mt_seq_filter f = { .cats = filtered ? MT_CAT_ALLOC : 0 };
		struct out o = { 0 };
		struct mt_seq *s;
		struct mt_ev e;
		struct sequencer_type_info live[2];
		size_t mark;

		o.chk = check_new(on_viol, &o);
		s = sequencer_new(&f, emit, &o);
		e = (struct mt_ev){ .ts = 1, .kind = MT_EV_THREAD_CREATE, .thread = 1, .id = 1 };
		sequencer_feed(s, &e);
		for (uint64_t k = 100; k <= 101; k++) {
			e = (struct mt_ev){ .ts = k, .kind = MT_EV_TYPE_CREATE, .id = k,
					    .name = sequencer_name(s, k == 100 ? "Foo" : "Bar", 3) };
			sequencer_feed(s, &e);
			e = (struct mt_ev){ .ts = k, .kind = MT_EV_TYPE_LOAD, .id = k };
			sequencer_feed(s, &e);
		}
		e = (struct mt_ev){ .ts = 5, .kind = MT_EV_ALLOC_SAMPLE, .thread = 1, .ref = 101 };
		sequencer_feed(s, &e);
		/* lost: Foo unloaded, key 101 reused by Qux, Baz loaded under 102 */
		sequencer_gap(s, 10, 7, MT_LOST_KERNEL);
		live[0] = (struct sequencer_type_info){ 101, sequencer_name(s, "Qux", 3) };
		live[1] = (struct sequencer_type_info){ 102, sequencer_name(s, "Baz", 3) };
		mark = o.n;
		sequencer_resync_types(s, 10, live, 2);
		if (!filtered) {
			size_t reclaims = 0, creates = 0, loads = 0;

			for (size_t i = mark; i < o.n; i++) {
				if (o.ev[i].kind == MT_EV_NAME)
					continue;
				assert_true(o.ev[i].flags & MT_EVF_RESYNC);
				reclaims += o.ev[i].kind == MT_EV_TYPE_RECLAIM;
				creates += o.ev[i].kind == MT_EV_TYPE_CREATE;
				loads += o.ev[i].kind == MT_EV_TYPE_LOAD;
			}
			assert_int_equal(reclaims, 2); /* Foo gone, Bar's key renamed */
			assert_int_equal(creates, 2);
			assert_int_equal(loads, 2);
		} else {
			/* Bar was reported lazily for the sample: its end is reported */
			assert_int_equal(o.n - mark, 1);
			assert_int_equal(o.ev[mark].kind, MT_EV_TYPE_RECLAIM);
			assert_int_equal(o.ev[mark].id, 101);
		}
		mark = o.n;
		e = (struct mt_ev){ .ts = 11, .kind = MT_EV_ALLOC_SAMPLE, .thread = 1, .ref = 102 };
		sequencer_feed(s, &e);
		/* resynced types need no lazy creation; filtered ones get one, named */
		for (size_t i = mark; i < o.n; i++) {
			if (o.ev[i].kind == MT_EV_TYPE_CREATE) {
				assert_true(filtered);
				assert_true(o.ev[i].flags & MT_EVF_LAZY);
				assert_int_equal(o.ev[i].name, sequencer_name(s, "Baz", 3));
			}
		}
		assert_int_equal(o.ev[o.n - 1].kind, MT_EV_ALLOC_SAMPLE);
		assert_int_equal(check_count(o.chk, 0), 0);
		assert_int_equal(sequencer_stats(s)->inferred, 0);
		sequencer_free(s);
		out_free(&o);
	}
}

/* Category words, "objects" included (record's agent sampling). */
static void test_cats_parse(void **state)
{
	const char *bad = NULL;
	unsigned cats = 0;

	assert_int_equal(sequencer_cats_parse("objects,type", &cats, &bad), 0);
	assert_int_equal(cats, MT_CAT_OBJECT | MT_CAT_TYPE);
	assert_int_equal(sequencer_cats_parse("alloc", &cats, &bad), 0);
	assert_int_equal(cats, MT_CAT_ALLOC);
	assert_int_equal(sequencer_cats_parse("alloc,objs", &cats, &bad), -EINVAL);
	assert_string_equal(bad, "objs");
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
		cmocka_unit_test(test_gap_resync_types_directed),
		cmocka_unit_test(test_gap_resync_types_property),
		cmocka_unit_test(test_cats_parse),
		cmocka_unit_test(test_park_waits),
		cmocka_unit_test(test_counters_object_wait),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
