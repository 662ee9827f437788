// SPDX-License-Identifier: GPL-2.0
/*
 * reach.c - a reachability set's walk in two threads (see dsl.h).
 *
 * The seeds' typical query - number and total size of what the threads
 * reach - is one instance whose membership is reachability ("THIS in
 * Unassigned and REFERRER in ENTITY") and whose on_inclusion keeps running
 * sums (accum.c). walk.c's drain_reach() claims what it reaches one object
 * at a time: 145 ms of a query's 690 at 10 M objects, one CPU busy and the
 * other idle. When no other instance can claim anything meanwhile (every
 * other one has no membership: it owns its roots and nothing more), what
 * the instance claims does not depend on the order it meets objects in -
 * everything its seeds reach through objects nobody else owns - and its
 * sums are integer additions, which commute (two's complement, wrapping, as
 * accum.c's). So two threads claim, each the objects of its own blocks of
 * REACH_BLOCK indexes (alternate blocks), with sums of its own which the
 * caller adds to the properties: the same owners and the same sums as the
 * walk alone, in another order. A target in the other thread's blocks is
 * sent to it through a ring (batches of REACH_BATCH). Objects whose class
 * makes THIS.size a Java field are claimed but not summed: they are listed
 * for the caller's evaluator.
 *
 * Why blocks and messages, not a compare-and-swap on each owner: tried
 * first, the two threads then wrote the same cache lines of the owners
 * (FreezeWorkload's entries and their payloads lie side by side) and half
 * the runs took 200-270 ms instead of 90-110 (the CAS's line held by the
 * other CPU).
 *
 * A thread with nothing to visit and nothing received sleeps until the
 * other sends or ends; the walk ends when both have nothing left and their
 * rings are empty.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dsl.h"
#include "lib/util.h"

#define REACH_MIN   1000000u   /* objects from which two threads walk (auto) */
#define REACH_SHIFT 16         /* blocks of 64 Ki objects alternate between the threads */
#define REACH_RING  (1u << 16) /* entries a ring holds */
#define REACH_BATCH 256        /* entries sent at a time */
#define REACH_LOOK  256        /* objects visited between looks at what came */

/* Objects one thread sends the other (single producer, single consumer). */
struct ring {
	uint32_t e[REACH_RING];
	uint64_t head;              /* atomic: read up to here (the consumer's) */
	uint64_t tail;              /* atomic: written up to here (the producer's) */
};

/* What both threads share. */
struct reach {
	const struct dsl_reach_in *in;
	struct ring ring[2];        /* ring[i]: to thread i */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int idle[2];                /* atomic: thread i has nothing left (it may sleep) */
	int nomem;                  /* atomic: a list of objects left out could not grow */
	bool done;                  /* under mu */
};

/* One thread's stack, batch to send, sums and objects left to the caller. */
struct reach_part {
	struct reach *r;
	int me;
	uint32_t *stk;              /* room for every object of its blocks */
	size_t sp;
	uint32_t out[REACH_BATCH];  /* for the other thread, not sent yet */
	uint32_t nout;
	uint64_t add[DSL_ACCUM_MAX];
	uint64_t claimed;
	uint32_t *later;
	size_t nlater, caplater;
};

static inline int part_of(uint32_t x)
{
	return (int)((x >> REACH_SHIFT) & 1);
}

/* @x left to the caller: listed. */
static void leave(struct reach_part *t, uint32_t x)
{
	if (t->nlater == t->caplater) {
		size_t cap = t->caplater ? 2 * t->caplater : 1024;
		uint32_t *l = realloc(t->later, cap * sizeof(*l));

		if (!l) {
			__atomic_store_n(&t->r->nomem, 1, __ATOMIC_RELAXED);
			return;
		}
		t->later = l;
		t->caplater = cap;
	}
	t->later[t->nlater++] = x;
}

/* Claim @x, one of this thread's, if nobody owns it: its sums (or list it),
 * and push it. */
static inline void claim_own(struct reach_part *t, uint32_t x)
{
	const struct dsl_reach_in *in = t->r->in;

	if (in->owner[x])
		return;
	in->owner[x] = in->inst + 1;
	if (in->a && !in->plain[in->h->objects[x].cls])
		leave(t, x);
	else if (in->a)
		for (int k = 0; k < in->a->n; k++)
			t->add[k] += in->a->op[k].size ? in->h->objects[x].size :
							 (uint64_t)in->a->op[k].k;
	t->stk[t->sp++] = x;
	t->claimed++;
}

/* What the other thread sent: claimed here. Returns how many were read. */
static size_t receive(struct reach_part *t)
{
	struct ring *q = &t->r->ring[t->me];
	uint64_t h = __atomic_load_n(&q->head, __ATOMIC_RELAXED);
	uint64_t e = __atomic_load_n(&q->tail, __ATOMIC_ACQUIRE);

	for (uint64_t i = h; i < e; i++)
		claim_own(t, q->e[i & (REACH_RING - 1)]);
	if (e != h)
		__atomic_store_n(&q->head, e, __ATOMIC_RELEASE);
	return (size_t)(e - h);
}

/* Wake the other thread if it sleeps (after a send, or at the end). */
static void wake(struct reach *r, int other)
{
	if (!__atomic_load_n(&r->idle[other], __ATOMIC_SEQ_CST))
		return;
	pthread_mutex_lock(&r->mu);
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
}

/* Send the batch to the other thread: while its ring is full, claim what
 * it sent here (which sends nothing), so that neither waits for the other. */
static void flush(struct reach_part *t)
{
	struct ring *q = &t->r->ring[!t->me];
	uint64_t tail = __atomic_load_n(&q->tail, __ATOMIC_RELAXED);

	if (!t->nout)
		return;
	while (tail + t->nout - __atomic_load_n(&q->head, __ATOMIC_ACQUIRE) > REACH_RING)
		if (!receive(t))
			sched_yield();
	for (uint32_t i = 0; i < t->nout; i++)
		q->e[(tail + i) & (REACH_RING - 1)] = t->out[i];
	__atomic_store_n(&q->tail, tail + t->nout, __ATOMIC_SEQ_CST);
	t->nout = 0;
	wake(t->r, !t->me);
}

/* Offer @x: claimed here if it is this thread's, else sent. */
static inline void offer(struct reach_part *t, uint32_t x)
{
	if (x == DSL_NOOBJ)
		return;
	if (part_of(x) == t->me) {
		claim_own(t, x);
		return;
	}
	t->out[t->nout++] = x;
	if (t->nout == REACH_BATCH)
		flush(t);
}

/* Offer @o's references, its implied CLASS one first (as drain_reach()). */
static inline void visit(struct reach_part *t, uint32_t o)
{
	const struct dsl_heap *h = t->r->in->h;
	const struct dsl_hobject *obj = &h->objects[o];
	const struct dsl_href *ref = &h->refs[obj->ref_first];

	if (h->class_ref)
		offer(t, h->class_ref[obj->cls]);
	for (uint32_t i = 0; i < obj->nrefs; i++)
		offer(t, ref[i].to);
}

/* Is the walk over for @t (nothing to visit, nothing sent either way)?
 * Else it sleeps until the other sends or ends: false, to go on. */
static bool finished(struct reach_part *t)
{
	struct reach *r = t->r;
	struct ring *in = &r->ring[t->me], *out = &r->ring[!t->me];
	struct timespec until;
	bool over = false;

	__atomic_store_n(&r->idle[t->me], 1, __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&r->mu);
	for (;;) {
		if (__atomic_load_n(&in->tail, __ATOMIC_SEQ_CST) !=
		    __atomic_load_n(&in->head, __ATOMIC_RELAXED))
			break; /* sent meanwhile */
		if (r->done) {
			over = true;
			break;
		}
		if (__atomic_load_n(&r->idle[!t->me], __ATOMIC_SEQ_CST) &&
		    __atomic_load_n(&out->tail, __ATOMIC_SEQ_CST) ==
		    __atomic_load_n(&out->head, __ATOMIC_SEQ_CST)) {
			/* the other has nothing left, nor anything from here */
			r->done = true;
			pthread_cond_broadcast(&r->cv);
			over = true;
			break;
		}
		/* a wake-up is never lost (idle, then the ring, against the
		 * ring, then idle: both sequentially consistent); the timeout
		 * is a second guard */
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_nsec += 2000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&r->cv, &r->mu, &until);
	}
	pthread_mutex_unlock(&r->mu);
	if (!over)
		__atomic_store_n(&r->idle[t->me], 0, __ATOMIC_SEQ_CST);
	return over;
}

/* A thread's walk: its stack and what the other sends (looked at every
 * REACH_LOOK objects, so that its ring does not fill), until both are done. */
static void run(struct reach_part *t)
{
	for (;;) {
		for (uint32_t n = 1; t->sp; n++) {
			visit(t, t->stk[--t->sp]);
			if (!(n % REACH_LOOK))
				receive(t);
		}
		flush(t);
		if (receive(t))
			continue;
		if (finished(t))
			break;
	}
}

static void *run_second(void *arg)
{
	run(arg);
	return NULL;
}

/* Two threads? MEMTRACE_DSL_THREADS=1 or 2 says, else the heap and CPUs. */
static int threads_for(const struct dsl_heap *h)
{
	const char *e = getenv("MEMTRACE_DSL_THREADS");

	if (e && (!strcmp(e, "1") || !strcmp(e, "2")))
		return e[0] - '0';
	if (h->nobjects < REACH_MIN)
		return 1;
	return util_cpus() >= 2 ? 2 : 1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The threads' lists of objects left out, as one in ascending order. */
static int merge_later(struct reach_part t[2], struct dsl_reach_out *out)
{
	size_t n = t[0].nlater + t[1].nlater;

	out->later = n ? malloc(n * sizeof(*out->later)) : NULL;
	if (n && !out->later)
		return -ENOMEM;
	for (int i = 0; i < 2; i++)
		if (t[i].nlater)
			memcpy(out->later + (i ? t[0].nlater : 0), t[i].later,
			       t[i].nlater * sizeof(*out->later));
	out->nlater = n;
	if (n)
		qsort(out->later, n, sizeof(*out->later), cmp_u32);
	return 0;
}

int dsl_reach_par(const struct dsl_reach_in *in, struct dsl_reach_out *out)
{
	struct reach *r;
	struct reach_part t[2];
	pthread_t th;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (threads_for(in->h) < 2)
		return -EAGAIN;
	r = calloc(1, sizeof(*r));
	memset(t, 0, sizeof(t));
	t[1].stk = malloc(((size_t)in->h->nobjects + 1) * sizeof(*t[1].stk));
	if (!r || !t[1].stk) {
		free(r);
		free(t[1].stk);
		return -ENOMEM;
	}
	r->in = in;
	if (pthread_mutex_init(&r->mu, NULL)) {
		err = -EAGAIN;
		goto out;
	}
	if (pthread_cond_init(&r->cv, NULL)) {
		pthread_mutex_destroy(&r->mu);
		err = -EAGAIN;
		goto out;
	}
	for (int i = 0; i < 2; i++) {
		t[i].r = r;
		t[i].me = i;
	}
	t[0].stk = in->stack;
	/* the seeds the instance owns: their references are what is left to
	 * offer, each by the thread whose block it lies in (@seeds may lie in
	 * @stack at or after its start: each is read before its place is
	 * written) */
	for (size_t i = 0; i < in->nseeds; i++) {
		uint32_t s = in->seeds[i];

		if (in->owner[s] == in->inst + 1)
			t[part_of(s)].stk[t[part_of(s)].sp++] = s;
	}
	if (pthread_create(&th, NULL, run_second, &t[1])) {
		err = -ECANCELED; /* nothing claimed, but the seeds moved */
	} else {
		run(&t[0]);
		pthread_join(th, NULL);
		out->threads = 2;
		for (int k = 0; in->a && k < in->a->n; k++)
			out->add[k] = t[0].add[k] + t[1].add[k];
		out->claimed = t[0].claimed + t[1].claimed;
		if (r->nomem || merge_later(t, out))
			err = -ECANCELED;
	}
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
out:
	free(t[0].later);
	free(t[1].later);
	free(t[1].stk);
	free(r);
	return err;
}
