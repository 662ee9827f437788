// SPDX-License-Identifier: GPL-2.0
/*
 * test_locks.c - monitor contention from an event stream: counts per class,
 * owners (from the stream, from the JVM), the wait graph and its cycles
 * (deadlocks of 2 and 3 threads, chains that end, a cycle with a tail),
 * monitors reused after release or under a new object, and
 * java.util.concurrent parks and sleeps (waits of kind MT_WAIT_PARK /
 * MT_WAIT_SLEEP) per blocker class, contended or waiting, in the graph.
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

#include "analysis/locks.h"

enum { T_A = 101, T_B = 102, T_C = 103, T_D = 104 };
enum { L1 = 0x1000, L2 = 0x2000, L3 = 0x3000 };
enum { TYPE_OBJ = 7, TYPE_STR = 8 };

static void ev(struct locks *l, uint16_t kind, uint64_t ts, uint64_t thread, uint64_t id,
	       uint32_t aux)
{
	struct mt_ev e = { .ts = ts, .kind = kind, .aux = aux, .thread = thread, .id = id };

	locks_feed(l, &e, NULL);
}

static void name(struct locks *l, uint64_t id, const char *text)
{
	struct mt_ev e = { .kind = MT_EV_NAME, .id = id };

	locks_feed(l, &e, text);
}

/* Thread @tid named "T<tid>" (name id = tid). */
static void thread(struct locks *l, uint64_t tid)
{
	struct mt_ev e = { .kind = MT_EV_THREAD_CREATE, .thread = tid, .id = tid, .name = tid };
	char buf[16];

	snprintf(buf, sizeof(buf), "T%llu", (unsigned long long)tid);
	name(l, tid, buf);
	locks_feed(l, &e, NULL);
}

/* Object @obj of type @type. */
static void object(struct locks *l, uint64_t obj, uint64_t type)
{
	struct mt_ev e = { .kind = MT_EV_OBJ_CREATE, .id = obj, .ref = type };

	locks_feed(l, &e, NULL);
}

static void acquire(struct locks *l, uint64_t tid, uint64_t lock)
{
	ev(l, MT_EV_MON_ACQUIRE, 0, tid, lock, 0);
}

static void release(struct locks *l, uint64_t tid, uint64_t lock)
{
	ev(l, MT_EV_MON_RELEASE, 0, tid, lock, 0);
}

static void block(struct locks *l, uint64_t tid, uint64_t lock, uint64_t ts)
{
	ev(l, MT_EV_MON_WAIT_BEGIN, ts, tid, lock, MT_WAIT_ENTER);
}

/* A stream with two classes and threads A..D. */
static struct locks *setup(void)
{
	struct locks *l = locks_new();
	struct mt_ev t = { .kind = MT_EV_TYPE_CREATE };

	assert_non_null(l);
	name(l, 50, "java.lang.Object");
	name(l, 51, "java.lang.String");
	t.id = TYPE_OBJ, t.name = 50;
	locks_feed(l, &t, NULL);
	t.id = TYPE_STR, t.name = 51;
	locks_feed(l, &t, NULL);
	thread(l, T_A);
	thread(l, T_B);
	thread(l, T_C);
	thread(l, T_D);
	object(l, L1, TYPE_OBJ);
	object(l, L2, TYPE_OBJ);
	object(l, L3, TYPE_STR);
	return l;
}

static const struct locks_edge *edge_of(const struct locks_report *r, uint64_t tid)
{
	for (size_t i = 0; i < r->nedges; i++)
		if (r->edges[i].tid == tid)
			return &r->edges[i];
	fail_msg("no edge for tid %llu", (unsigned long long)tid);
	return NULL;
}

static void test_contention_counts(void **state)
{
	struct locks *l = setup();
	struct locks_report *r;

	/* B blocks 2500 ns on L1 (A holds it), then 4000 ns; C 500 ns on L3 */
	acquire(l, T_A, L1);
	block(l, T_B, L1, 1000);
	release(l, T_A, L1);
	ev(l, MT_EV_MON_WAIT_END, 3500, T_B, L1, 0);
	acquire(l, T_B, L1);
	release(l, T_B, L1);
	acquire(l, T_A, L1);
	block(l, T_B, L1, 10000);
	release(l, T_A, L1);
	ev(l, MT_EV_MON_WAIT_END, 14000, T_B, L1, 0);
	acquire(l, T_B, L1);
	/* B's Object.wait() on L1: 5000 ns */
	ev(l, MT_EV_MON_WAIT_BEGIN, 20000, T_B, L1, MT_WAIT_NOTIFY);
	ev(l, MT_EV_MON_WAIT_END, 25000, T_B, L1, 0);
	/* A blocked on L2 once: 700 ns (a second Object monitor) */
	block(l, T_A, L2, 30000);
	ev(l, MT_EV_MON_WAIT_END, 30700, T_A, L2, 0);
	/* C on L3 (String): 500 ns */
	block(l, T_C, L3, 40000);
	ev(l, MT_EV_MON_WAIT_END, 40500, T_C, L3, 0);
	/* a wait end without its begin counts nothing */
	ev(l, MT_EV_MON_WAIT_END, 50000, T_D, L3, 0);

	assert_int_equal(locks_sync_events(l), 18);
	r = locks_report_new(l, 60000, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nclasses, 2);
	assert_string_equal(r->classes[0].name, "java.lang.Object");
	assert_int_equal(r->classes[0].monitors, 2);
	assert_int_equal(r->classes[0].contended, 3);
	assert_int_equal(r->classes[0].wait_ns, 2500 + 4000 + 700);
	assert_int_equal(r->classes[0].wait_max, 4000);
	assert_int_equal(r->classes[0].waits, 1);
	assert_int_equal(r->classes[0].notify_ns, 5000);
	assert_string_equal(r->classes[1].name, "java.lang.String");
	assert_int_equal(r->classes[1].monitors, 1);
	assert_int_equal(r->classes[1].contended, 1);
	assert_int_equal(r->classes[1].wait_ns, 500);
	assert_int_equal(r->classes[1].wait_max, 500);
	assert_int_equal(r->classes[1].waits, 0);
	assert_int_equal(r->nedges, 0);
	assert_int_equal(r->ncycles, 0);
	locks_report_free(r);
	locks_free(l);
}

/* Equal times: by name; a monitor of no known type is "(unknown class)". */
static void test_class_order_and_unknown(void **state)
{
	struct locks *l = setup();
	struct locks_report *r;

	block(l, T_A, L3, 0);
	ev(l, MT_EV_MON_WAIT_END, 100, T_A, L3, 0);
	block(l, T_A, L1, 0);
	ev(l, MT_EV_MON_WAIT_END, 100, T_A, L1, 0);
	block(l, T_A, 0x9000, 0); /* never created */
	ev(l, MT_EV_MON_WAIT_END, 100, T_A, 0x9000, 0);
	r = locks_report_new(l, 0, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nclasses, 3);
	assert_string_equal(r->classes[0].name, "(unknown class)");
	assert_string_equal(r->classes[1].name, "java.lang.Object");
	assert_string_equal(r->classes[2].name, "java.lang.String");
	locks_report_free(r);
	locks_free(l);
}

struct jvm {
	uint64_t lock, owner;
	int calls;
};

static uint64_t jvm_owner(void *ctx, uint64_t lock)
{
	struct jvm *j = ctx;

	j->calls++;
	return lock == j->lock ? j->owner : 0;
}

static void test_wait_graph_owners(void **state)
{
	struct locks *l = setup();
	struct jvm j = { .lock = L2, .owner = T_D };
	struct locks_report *r;
	const struct locks_edge *e;

	acquire(l, T_A, L1);   /* contended entry seen: owner from the stream */
	block(l, T_B, L1, 1000);
	block(l, T_C, L2, 1500); /* L2's owner entered uncontended */
	block(l, T_D, L3, 2000); /* nobody knows L3's owner */
	/* Object.wait() is an edge of its own kind: nobody to name until a notify */
	ev(l, MT_EV_MON_WAIT_BEGIN, 2000, T_A, L3, MT_WAIT_NOTIFY);

	r = locks_report_new(l, 5000, jvm_owner, &j);
	assert_non_null(r);
	assert_int_equal(j.calls, 2); /* for L2 and L3, not for L1 nor the wait */
	assert_int_equal(r->nedges, 4);
	e = edge_of(r, T_A);
	assert_int_equal(e->kind, LOCKS_OBJWAIT);
	assert_int_equal(e->monitor, L3);
	assert_int_equal(e->owner, 0);
	assert_int_equal(e->blocked_ns, 3000);
	e = edge_of(r, T_B);
	assert_string_equal(e->thread, "T102");
	assert_int_equal(e->monitor, L1);
	assert_string_equal(e->cls, "java.lang.Object");
	assert_int_equal(e->owner, T_A);
	assert_string_equal(e->owner_name, "T101");
	assert_int_equal(e->owner_from, LOCKS_OWNER_STREAM);
	assert_int_equal(e->blocked_ns, 4000);
	e = edge_of(r, T_C);
	assert_int_equal(e->owner, T_D);
	assert_string_equal(e->owner_name, "T104");
	assert_int_equal(e->owner_from, LOCKS_OWNER_JVM);
	assert_int_equal(e->blocked_ns, 3500);
	e = edge_of(r, T_D);
	assert_string_equal(e->cls, "java.lang.String");
	assert_int_equal(e->owner, 0);
	assert_string_equal(e->owner_name, "");
	assert_int_equal(e->owner_from, LOCKS_OWNER_UNKNOWN);
	/* C waits for D who waits for an unknown owner: no cycle */
	assert_int_equal(r->ncycles, 0);
	locks_report_free(r);

	/* without an owner function: only the stream's owners */
	r = locks_report_new(l, 500, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(edge_of(r, T_C)->owner, 0);
	assert_int_equal(edge_of(r, T_C)->owner_from, LOCKS_OWNER_UNKNOWN);
	assert_int_equal(edge_of(r, T_B)->owner, T_A);
	assert_int_equal(edge_of(r, T_B)->blocked_ns, 0); /* now before the block */
	locks_report_free(r);

	/* the wait and the block end: their edges go */
	ev(l, MT_EV_MON_WAIT_END, 5500, T_A, L3, 0);
	release(l, T_A, L1);
	ev(l, MT_EV_MON_WAIT_END, 6000, T_B, L1, 0);
	r = locks_report_new(l, 7000, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nedges, 2);
	locks_report_free(r);
	/* so does an exited thread's */
	ev(l, MT_EV_THREAD_DESTROY, 7000, T_C, T_C, 0);
	r = locks_report_new(l, 7000, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nedges, 1);
	assert_int_equal(r->edges[0].tid, T_D);
	locks_report_free(r);
	locks_free(l);
}

static void test_deadlock_two(void **state)
{
	struct locks *l = setup();
	struct locks_report *r;
	const struct locks_cycle *c;

	acquire(l, T_B, L2);
	acquire(l, T_A, L1);
	block(l, T_B, L1, 100);
	block(l, T_A, L2, 200);
	r = locks_report_new(l, 1000, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nedges, 2);
	assert_int_equal(r->ncycles, 1);
	c = &r->cycles[0];
	assert_int_equal(c->n, 2);
	assert_int_equal(r->edges[c->edge[0]].tid, T_A); /* the smallest tid first */
	assert_int_equal(r->edges[c->edge[0]].monitor, L2);
	assert_int_equal(r->edges[c->edge[0]].owner, T_B);
	assert_int_equal(r->edges[c->edge[1]].tid, T_B);
	assert_int_equal(r->edges[c->edge[1]].monitor, L1);
	assert_int_equal(r->edges[c->edge[1]].owner, T_A);
	locks_report_free(r);
	locks_free(l);
}

/* Three threads in a ring, and a fourth blocked on one of them (a tail:
 * not part of the deadlock, and not a second one). */
static void test_deadlock_three_with_tail(void **state)
{
	struct locks *l = setup();
	struct locks_report *r;
	const struct locks_cycle *c;

	acquire(l, T_C, L3);
	acquire(l, T_B, L2);
	acquire(l, T_A, L1);
	block(l, T_C, L1, 100); /* C -> A */
	block(l, T_A, L2, 100); /* A -> B */
	block(l, T_B, L3, 100); /* B -> C */
	block(l, T_D, L2, 100); /* D -> B, outside the ring */
	r = locks_report_new(l, 1000, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nedges, 4);
	assert_int_equal(r->ncycles, 1);
	c = &r->cycles[0];
	assert_int_equal(c->n, 3);
	assert_int_equal(r->edges[c->edge[0]].tid, T_A);
	assert_int_equal(r->edges[c->edge[1]].tid, T_B);
	assert_int_equal(r->edges[c->edge[2]].tid, T_C);
	assert_int_equal(r->edges[c->edge[2]].owner, T_A);
	locks_report_free(r);
	locks_free(l);
}

/* A -> B -> C with C running: a chain, no deadlock. */
static void test_chain_is_no_deadlock(void **state)
{
	struct locks *l = setup();
	struct locks_report *r;

	acquire(l, T_B, L2);
	acquire(l, T_C, L3);
	block(l, T_A, L2, 100);
	block(l, T_B, L3, 100);
	r = locks_report_new(l, 1000, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nedges, 2);
	assert_int_equal(edge_of(r, T_A)->owner, T_B);
	assert_int_equal(edge_of(r, T_B)->owner, T_C);
	assert_int_equal(r->ncycles, 0);
	locks_report_free(r);
	locks_free(l);
}

/* Owners change hands: release, re-acquire, Object.wait(), a new object. */
static void test_lock_reuse(void **state)
{
	struct locks *l = setup();
	struct locks_report *r;

	acquire(l, T_A, L1);
	release(l, T_A, L1);
	acquire(l, T_B, L1);
	release(l, T_A, L1); /* not A's any more: B keeps it */
	block(l, T_C, L1, 100);
	r = locks_report_new(l, 200, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(edge_of(r, T_C)->owner, T_B);
	locks_report_free(r);

	/* B lets go in Object.wait(): the owner is unknown again */
	ev(l, MT_EV_MON_WAIT_BEGIN, 300, T_B, L1, MT_WAIT_NOTIFY);
	r = locks_report_new(l, 400, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(edge_of(r, T_C)->owner, 0);
	locks_report_free(r);
	/* C gets it and lets go; B's Object.wait() ends: B holds L1 again */
	ev(l, MT_EV_MON_WAIT_END, 500, T_C, L1, 0);
	acquire(l, T_C, L1);
	release(l, T_C, L1);
	ev(l, MT_EV_MON_WAIT_END, 800, T_B, L1, 0);
	block(l, T_D, L1, 850);
	r = locks_report_new(l, 900, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nedges, 1);
	assert_int_equal(edge_of(r, T_D)->owner, T_B);
	assert_int_equal(r->nclasses, 1);
	assert_int_equal(r->classes[0].contended, 1); /* C's 400 ns; D is still blocked */
	assert_int_equal(r->classes[0].wait_ns, 400);
	assert_int_equal(r->classes[0].waits, 1);     /* B's Object.wait(), 500 ns */
	assert_int_equal(r->classes[0].notify_ns, 500);
	locks_report_free(r);
	ev(l, MT_EV_MON_WAIT_END, 900, T_D, L1, 0);

	/* the address is reused by a String (a deflated monitor's, JDK 17):
	 * the String's counts start over, the Object's stay under its class */
	object(l, L1, TYPE_STR);
	r = locks_report_new(l, 900, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nclasses, 1);
	assert_string_equal(r->classes[0].name, "java.lang.Object");
	assert_int_equal(r->classes[0].monitors, 1);
	assert_int_equal(r->classes[0].contended, 2); /* C's 400 ns, D's 50 */
	assert_int_equal(r->classes[0].wait_ns, 450);
	assert_int_equal(r->classes[0].wait_max, 400);
	assert_int_equal(r->classes[0].waits, 1);
	assert_int_equal(r->classes[0].notify_ns, 500);
	locks_report_free(r);
	/* the same object announced again keeps its state */
	block(l, T_A, L1, 1000);
	ev(l, MT_EV_MON_WAIT_END, 1100, T_A, L1, 0);
	object(l, L1, TYPE_STR);
	r = locks_report_new(l, 1200, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nclasses, 2);
	assert_string_equal(r->classes[1].name, "java.lang.String");
	assert_int_equal(r->classes[1].contended, 1);
	assert_int_equal(r->classes[1].wait_ns, 100);
	locks_report_free(r);
	/* an Object again: one row of two monitors, the String's kept too */
	object(l, L1, TYPE_OBJ);
	block(l, T_B, L1, 1300);
	ev(l, MT_EV_MON_WAIT_END, 1400, T_B, L1, 0);
	r = locks_report_new(l, 1500, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nclasses, 2);
	assert_string_equal(r->classes[0].name, "java.lang.Object");
	assert_int_equal(r->classes[0].monitors, 2);
	assert_int_equal(r->classes[0].contended, 3);
	assert_int_equal(r->classes[0].wait_ns, 550);
	assert_int_equal(r->classes[0].waits, 1);
	assert_string_equal(r->classes[1].name, "java.lang.String");
	assert_int_equal(r->classes[1].monitors, 1);
	assert_int_equal(r->classes[1].contended, 1);
	locks_report_free(r);
	locks_free(l);
}

/* locks_find_cycles on hand-made graphs. */
static void test_find_cycles_pure(void **state)
{
	struct locks_edge e[70];
	struct locks_cycle *c;
	int n;

	/* 5 -> 3 -> 9 -> 5, 7 -> 9 (tail), 2 -> 2 (itself), 4 -> 0 (unknown) */
	memset(e, 0, sizeof(e));
	e[0].tid = 5, e[0].owner = 3;
	e[1].tid = 7, e[1].owner = 9;
	e[2].tid = 3, e[2].owner = 9;
	e[3].tid = 9, e[3].owner = 5;
	e[4].tid = 2, e[4].owner = 2;
	e[5].tid = 4, e[5].owner = 0;
	n = locks_find_cycles(e, 6, &c);
	assert_int_equal(n, 2);
	assert_int_equal(c[0].n, 3); /* from 3 (edge 2): 3 -> 9 -> 5 */
	assert_int_equal(c[0].edge[0], 2);
	assert_int_equal(c[0].edge[1], 3);
	assert_int_equal(c[0].edge[2], 0);
	assert_int_equal(c[1].n, 1);
	assert_int_equal(c[1].edge[0], 4);
	free(c);

	/* none: the array stays NULL */
	n = locks_find_cycles(e, 2, &c);
	assert_int_equal(n, 0);
	assert_null(c);
	n = locks_find_cycles(e, 0, &c);
	assert_int_equal(n, 0);
	assert_null(c);

	/* a ring of LOCKS_MAX_CYCLE threads is found, one longer is not */
	for (int len = LOCKS_MAX_CYCLE; len <= LOCKS_MAX_CYCLE + 1; len++) {
		for (int i = 0; i < len; i++) {
			e[i].tid = 1000 + i;
			e[i].owner = 1000 + (i + 1) % len;
		}
		n = locks_find_cycles(e, len, &c);
		if (len == LOCKS_MAX_CYCLE) {
			assert_int_equal(n, 1);
			assert_int_equal(c[0].n, LOCKS_MAX_CYCLE);
			assert_int_equal(c[0].edge[0], 0);
			assert_int_equal(c[0].edge[LOCKS_MAX_CYCLE - 1], LOCKS_MAX_CYCLE - 1);
		} else {
			assert_int_equal(n, 0);
		}
		free(c);
	}
}

/* A park (MT_WAIT_PARK) or sleep (MT_WAIT_SLEEP) of @tid on @obj from @ts. */
static void park(struct locks *l, uint64_t tid, uint64_t obj, uint64_t ts, uint32_t aux,
		 uint64_t timeout, uint64_t owner)
{
	struct mt_ev e = { .ts = ts, .kind = MT_EV_MON_WAIT_BEGIN, .aux = aux, .thread = tid,
			   .id = obj, .v = { timeout, 0, owner } };

	locks_feed(l, &e, NULL);
}

static const struct locks_park *park_row(const struct locks_report *r, const char *name,
					 enum locks_park_how how)
{
	for (size_t i = 0; i < r->nparks; i++)
		if (!strcmp(r->parks[i].name, name) && r->parks[i].how == how)
			return &r->parks[i];
	fail_msg("no park row %s/%d", name, how);
	return NULL;
}

static void test_parks(void **state)
{
	struct locks *l = setup();
	struct locks_report *r;
	const struct locks_park *p;
	const struct locks_edge *e;

	/* L1 (an ownable lock): A parks with B owning it (1000 ns), then in a
	 * hand-over with no owner (500 ns): both contended */
	park(l, T_A, L1, 0, MT_WAIT_PARK, 0, T_B);
	ev(l, MT_EV_MON_WAIT_END, 1000, T_A, L1, 0);
	park(l, T_A, L1, 2000, MT_WAIT_PARK, 0, 0);
	ev(l, MT_EV_MON_WAIT_END, 2500, T_A, L1, 0);
	/* L3 (a condition, a String here): B's timed parks, never owned: waiting */
	park(l, T_B, L3, 0, MT_WAIT_PARK, 5000, 0);
	ev(l, MT_EV_MON_WAIT_END, 300, T_B, L3, 0);
	/* C sleeps 700 ns and parks without a blocker 100 ns, on its own object */
	park(l, T_C, MT_WAIT_SELF(T_C), 0, MT_WAIT_SLEEP, 1, 0);
	ev(l, MT_EV_MON_WAIT_END, 700, T_C, MT_WAIT_SELF(T_C), 0);
	park(l, T_C, MT_WAIT_SELF(T_C), 1000, MT_WAIT_PARK, 0, 0);
	ev(l, MT_EV_MON_WAIT_END, 1100, T_C, MT_WAIT_SELF(T_C), 0);
	/* a park of C whose blocker could not be read (C not known yet): its own row */
	{
		struct mt_ev u = { .ts = 1200, .kind = MT_EV_MON_WAIT_BEGIN, .aux = MT_WAIT_PARK,
				   .thread = T_C, .id = MT_WAIT_SELF(T_C), .v = { 0, 0, 0, 1 } };

		locks_feed(l, &u, NULL);
		ev(l, MT_EV_MON_WAIT_END, 1240, T_C, MT_WAIT_SELF(T_C), 0);
	}
	/* D parks on L1 owned by A and stays; C parks without a blocker and stays */
	park(l, T_D, L1, 3000, MT_WAIT_PARK, 0, T_A);
	park(l, T_C, MT_WAIT_SELF(T_C), 3500, MT_WAIT_PARK, 0, 0);

	r = locks_report_new(l, 10000, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->nclasses, 0); /* parks are not monitor contention */
	assert_int_equal(r->nparks, 5);
	assert_string_equal(r->parks[0].name, "java.lang.Object"); /* most time first */
	p = park_row(r, "(blocker not read)", LOCKS_PARK);
	assert_int_equal(p->parks, 1);
	assert_int_equal(p->ns, 40);
	p = park_row(r, "java.lang.Object", LOCKS_PARK);
	assert_int_equal(p->blockers, 1);
	assert_int_equal(p->parks, 2);
	assert_int_equal(p->ns, 1500);
	assert_int_equal(p->max_ns, 1000);
	assert_int_equal(p->contended, 2);
	assert_int_equal(p->contended_ns, 1500);
	p = park_row(r, "java.lang.String", LOCKS_PARK_TIMED);
	assert_int_equal(p->parks, 1);
	assert_int_equal(p->ns, 300);
	assert_int_equal(p->contended, 0);
	p = park_row(r, "Thread.sleep", LOCKS_SLEEP);
	assert_int_equal(p->parks, 1);
	assert_int_equal(p->ns, 700);
	assert_int_equal(p->contended, 0);
	p = park_row(r, "(no blocker)", LOCKS_PARK);
	assert_int_equal(p->parks, 1);
	assert_int_equal(p->ns, 100);
	/* the graph: D parked on L1 -> A (the owner when it parked); C's park
	 * without a blocker is no edge */
	assert_int_equal(r->nedges, 1);
	e = edge_of(r, T_D);
	assert_int_equal(e->kind, LOCKS_PARKED);
	assert_int_equal(e->monitor, L1);
	assert_string_equal(e->cls, "java.lang.Object");
	assert_int_equal(e->owner, T_A);
	assert_string_equal(e->owner_name, "T101");
	assert_int_equal(e->owner_from, LOCKS_OWNER_STREAM);
	assert_int_equal(e->blocked_ns, 7000);
	assert_false(e->since_before);
	locks_report_free(r);

	/* a park and a monitor close a deadlock: A holds L2 and parks on L1
	 * (owned by D); D blocks entering L2 */
	acquire(l, T_A, L2);
	park(l, T_A, L1, 4000, MT_WAIT_PARK, 0, T_D);
	ev(l, MT_EV_MON_WAIT_END, 4000, T_D, L1, 0); /* D got L1 */
	block(l, T_D, L2, 4100);
	r = locks_report_new(l, 5000, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(r->ncycles, 1);
	assert_int_equal(r->cycles[0].n, 2);
	assert_int_equal(r->edges[r->cycles[0].edge[0]].tid, T_A);
	assert_int_equal(r->edges[r->cycles[0].edge[0]].kind, LOCKS_PARKED);
	assert_int_equal(r->edges[r->cycles[0].edge[1]].kind, LOCKS_MONITOR);
	locks_report_free(r);

	/* L3's address now holds another object: its parks stay under String */
	object(l, L3, TYPE_OBJ);
	park(l, T_B, L3, 6000, MT_WAIT_PARK, 0, 0);
	ev(l, MT_EV_MON_WAIT_END, 6050, T_B, L3, 0);
	r = locks_report_new(l, 7000, NULL, NULL);
	assert_non_null(r);
	assert_int_equal(park_row(r, "java.lang.String", LOCKS_PARK_TIMED)->ns, 300);
	p = park_row(r, "java.lang.Object", LOCKS_PARK);
	assert_int_equal(p->blockers, 2);
	assert_int_equal(p->parks, 4);          /* L1's 2 + D's 1000 ns + the new L3's */
	assert_int_equal(p->contended, 3);      /* the new L3 was never owned */
	assert_int_equal(p->ns, 1500 + 1000 + 50);
	locks_report_free(r);
	locks_free(l);
}

static void test_free_null(void **state)
{
	locks_free(NULL);
	locks_report_free(NULL);
}

/* Edges read from the JVM join the stream's graph: a monitor edge and a
 * parked edge close a mixed deadlock; a thread that has an edge keeps it. */
static void test_report_add(void **state)
{
	struct locks_report *r = calloc(1, sizeof(*r));
	static const struct profile_frame fr[] = { { .name = "Main.main" }, { .name = "Box.take" } };
	struct locks_edge mon = { .tid = 11, .thread = "a", .monitor = 0x100, .cls = "Mon",
				  .owner = 12, .owner_name = "b", .owner_from = LOCKS_OWNER_STREAM,
				  .blocked_ns = 5, .kind = LOCKS_MONITOR };
	struct locks_edge add[] = {
		{ .tid = 12, .thread = "b", .monitor = 0x200,
		  .cls = "java.util.concurrent.locks.ReentrantLock$NonfairSync", .owner = 11,
		  .owner_name = "a", .owner_from = LOCKS_OWNER_JVM, .kind = LOCKS_PARKED,
		  .since_before = true },
		{ .tid = 11, .thread = "a", .monitor = 0x300, .cls = "Other", .owner = 13,
		  .owner_name = "c", .owner_from = LOCKS_OWNER_JVM, .kind = LOCKS_PARKED,
		  .since_before = true },
		{ .tid = 14, .thread = "d", .monitor = 0x400, .cls = "Cond", .owner_name = "",
		  .owner_from = LOCKS_OWNER_UNKNOWN, .kind = LOCKS_PARKED, .since_before = true },
		/* the stream's edge of tid 11 takes the stack of the JVM's, same monitor */
		{ .tid = 11, .thread = "a", .monitor = 0x100, .cls = "Mon", .owner_name = "",
		  .kind = LOCKS_MONITOR, .frames = fr, .nframes = 2 },
	};

	(void)state;
	assert_non_null(r);
	r->edges = malloc(sizeof(*r->edges));
	assert_non_null(r->edges);
	r->edges[0] = mon;
	r->nedges = 1;
	assert_int_equal(locks_report_add(r, add, 4), 0);
	assert_int_equal(r->nedges, 3);              /* tid 11's other edges dropped */
	assert_int_equal(r->edges[0].monitor, 0x100);
	assert_ptr_equal(r->edges[0].frames, fr);    /* with the JVM's stack */
	assert_int_equal(r->edges[0].nframes, 2);
	assert_null(r->edges[1].frames);
	assert_int_equal(r->edges[1].kind, LOCKS_PARKED);
	assert_int_equal(r->edges[2].tid, 14);
	assert_int_equal(r->ncycles, 1);
	assert_int_equal(r->cycles[0].n, 2);
	assert_int_equal(r->cycles[0].edge[0], 0);   /* from tid 11, the smallest */
	assert_int_equal(r->cycles[0].edge[1], 1);
	assert_int_equal(locks_report_add(r, NULL, 0), 0);
	assert_int_equal(r->ncycles, 1);
	locks_report_free(r);
}

/* Parks on a ReentrantLock's or a read-write lock's Sync are contention even
 * when none saw an owner (readers hold it; a hand-over); a latch's are not. */
static void test_parks_on_locks(void **state)
{
	struct locks *l = setup();
	struct mt_ev t = { .kind = MT_EV_TYPE_CREATE };
	struct locks_report *r;
	const struct locks_park *p;

	(void)state;
	name(l, 60, "java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync");
	name(l, 61, "java.util.concurrent.CountDownLatch$Sync");
	t.id = 20, t.name = 60;
	locks_feed(l, &t, NULL);
	t.id = 21, t.name = 61;
	locks_feed(l, &t, NULL);
	object(l, 0x5000, 20);
	object(l, 0x6000, 21);
	park(l, T_A, 0x5000, 0, MT_WAIT_PARK, 0, 0); /* a writer waits for readers */
	ev(l, MT_EV_MON_WAIT_END, 800, T_A, 0x5000, 0);
	park(l, T_B, 0x6000, 0, MT_WAIT_PARK, 0, 0);
	ev(l, MT_EV_MON_WAIT_END, 900, T_B, 0x6000, 0);
	r = locks_report_new(l, 1000, NULL, NULL);
	assert_non_null(r);
	p = park_row(r, "java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync", LOCKS_PARK);
	assert_int_equal(p->contended, 1);
	assert_int_equal(p->contended_ns, 800);
	p = park_row(r, "java.util.concurrent.CountDownLatch$Sync", LOCKS_PARK);
	assert_int_equal(p->contended, 0);
	assert_true(locks_class_is_lock("java.util.concurrent.locks.ReentrantLock$FairSync"));
	assert_false(locks_class_is_lock("java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject"));
	assert_false(locks_class_is_lock("java.util.concurrent.locks.ReentrantLock$Other"));
	locks_report_free(r);
	locks_free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_contention_counts),
		cmocka_unit_test(test_class_order_and_unknown),
		cmocka_unit_test(test_wait_graph_owners),
		cmocka_unit_test(test_deadlock_two),
		cmocka_unit_test(test_deadlock_three_with_tail),
		cmocka_unit_test(test_chain_is_no_deadlock),
		cmocka_unit_test(test_lock_reuse),
		cmocka_unit_test(test_find_cycles_pure),
		cmocka_unit_test(test_free_null),
		cmocka_unit_test(test_report_add),
		cmocka_unit_test(test_parks),
		cmocka_unit_test(test_parks_on_locks),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
