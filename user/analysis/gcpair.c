// SPDX-License-Identifier: GPL-2.0
/* gcpair.c - pair GC probe events into records; see gcpair.h. */
#include <string.h>

#include "analysis/gcpair.h"

void gcpair_init(struct gcpair *gp, gcpair_cb cb, void *ctx)
{
	memset(gp, 0, sizeof(*gp));
	gp->cb = cb;
	gp->ctx = ctx;
}

bool gcpair_is_heap_pool(const char *name)
{
	static const char *const nonheap[] = { "CodeHeap", "Code Cache", "Metaspace",
					       "Compressed Class Space" };

	for (size_t i = 0; i < sizeof(nonheap) / sizeof(nonheap[0]); i++)
		if (!strncmp(name, nonheap[i], strlen(nonheap[i])))
			return false;
	return true;
}

bool gcpair_manager_is_full(const char *m)
{
	/* G1 Old Generation, PS MarkSweep, MarkSweepCompact (Serial), ... */
	return strstr(m, "Old") || strstr(m, "MarkSweep") || strstr(m, "Full");
}

const char *gcpair_kind_name(enum gc_kind k)
{
	switch (k) {
	case GC_KIND_YOUNG:
		return "young";
	case GC_KIND_FULL:
		return "full";
	case GC_KIND_PAUSE:
		return "pause";
	case GC_KIND_CYCLE:
		return "cycle";
	}
	return "?";
}

bool gcpair_is_pause(const struct gc_record *r)
{
	return r->kind != GC_KIND_CYCLE;
}

static void emit(struct gcpair *gp, struct gc_record *rec)
{
	rec->seq = ++gp->seq;
	if (gp->cb)
		gp->cb(rec, gp->ctx);
}

static struct gc_cycle *find_cycle(struct gcpair *gp, const char *mgr)
{
	for (int i = 0; i < MT_GC_MAX_CYCLES; i++)
		if (gp->cycles[i].open && !strcmp(gp->cycles[i].rec.manager, mgr))
			return &gp->cycles[i];
	return NULL;
}

static bool manager_was_begun(const struct gcpair *gp, const char *mgr)
{
	for (int i = 0; i < gp->nmanagers; i++)
		if (!strncmp(gp->managers[i], mgr, MT_GC_NAME_LEN))
			return true;
	return false;
}

/* Remember that memory manager @mgr has begun a cycle since the probes
 * attached (more managers than any collector has: their ends count as
 * unpaired). */
static void manager_begun(struct gcpair *gp, const char *mgr)
{
	if (manager_was_begun(gp, mgr) || gp->nmanagers == MT_GC_MAX_MANAGERS)
		return;
	memcpy(gp->managers[gp->nmanagers], mgr, MT_GC_NAME_LEN);
	gp->managers[gp->nmanagers++][MT_GC_NAME_LEN - 1] = '\0';
}

/* An end without its begin: lost if its kind had begun since the probes
 * attached, else the end of a collection already in flight then. */
static void end_unmatched(struct gcpair *gp, bool begun)
{
	if (begun)
		gp->unpaired_end++;
	else
		gp->in_flight++;
}

static struct gc_cycle *new_cycle(struct gcpair *gp, const struct mt_gc_event *e)
{
	for (int i = 0; i < MT_GC_MAX_CYCLES; i++) {
		struct gc_cycle *c = &gp->cycles[i];

		if (c->open)
			continue;
		memset(c, 0, sizeof(*c));
		c->open = true;
		c->tid = e->tid;
		memcpy(c->rec.manager, e->manager, MT_GC_NAME_LEN);
		c->rec.manager[MT_GC_NAME_LEN - 1] = '\0';
		c->rec.start_ns = e->ts_ns;
		/* a cycle of the operation's thread (the VM thread); ZGC's and
		 * Shenandoah's run on threads of their own */
		c->rec.in_vmop = gp->vmop_open && gp->vmop_tid == e->tid;
		/* The manager decides: a full VM operation (System.gc() under
		 * Parallel) may run a young cycle before its full one. */
		c->rec.full = gcpair_manager_is_full(c->rec.manager);
		return c;
	}
	gp->overflow++;
	return NULL;
}

static struct gc_pool *find_pool(struct gc_record *r, const char *name)
{
	for (int i = 0; i < r->npools; i++)
		if (!strcmp(r->pools[i].name, name))
			return &r->pools[i];
	return NULL;
}

static void pool_begin(struct gcpair *gp, const struct mt_gc_event *e)
{
	struct gc_cycle *c = find_cycle(gp, e->manager);
	struct gc_pool *p;

	manager_begun(gp, e->manager);
	if (c && find_pool(&c->rec, e->pool)) {
		/* The same pool begins again: the previous cycle lost its end. */
		gp->unpaired_begin += c->nbegun - c->nended;
		c->open = false;
		c = NULL;
	}
	if (!c)
		c = new_cycle(gp, e);
	if (!c)
		return;
	if (c->rec.npools == MT_GC_MAX_POOLS) {
		gp->overflow++;
		return;
	}
	p = &c->rec.pools[c->rec.npools++];
	memcpy(p->name, e->pool, MT_GC_NAME_LEN);
	p->name[MT_GC_NAME_LEN - 1] = '\0';
	p->heap = gcpair_is_heap_pool(p->name);
	p->used_before = e->used;
	c->nbegun++;
}

/* The timed pause of thread @tid (open, or ended and waiting for its
 * operation's end), or NULL. */
static struct gc_pause *find_pause(struct gcpair *gp, uint32_t tid)
{
	for (int i = 0; i < MT_GC_MAX_PAUSES; i++)
		if (tid && gp->pauses[i].tid == tid)
			return &gp->pauses[i];
	return NULL;
}

/*
 * The JVM's Ticks (os::elapsed_counter(): CLOCK_MONOTONIC less the JVM's
 * start, the first word of either Ticks representation) against the probes'
 * CLOCK_MONOTONIC: a probe fires after the JVM read its clock, so the least
 * (probe time - Ticks) seen is their offset, to the promptest probe's lag.
 * A pause or collection then starts when its Ticks say, as JFR's does, not
 * when its timer was told: GCTimer::register_gc_pause_start() of a ZGC
 * pause ran 4.7 ms after the pause's own start on a loaded machine (e2e
 * gc_collectors, JDK 25: memtrace's pause 4.7 ms after JFR's, the same
 * 5.396 ms long).
 */
static void tick_seen(struct gcpair *gp, const struct mt_gc_event *e)
{
	int64_t d;

	if (!e->ticks)
		return;
	d = (int64_t)(e->ts_ns - e->ticks);
	if (!gp->tick_off_set || d < gp->tick_off) {
		gp->tick_off = d;
		gp->tick_off_set = true;
	}
}

/* When Ticks @ticks was, by the probes' clock, for a probe that saw it at
 * @ts: @ts itself unless the offset places it in the second before @ts (a
 * JVM whose Ticks are not that clock keeps its probes' times). */
static uint64_t tick_time(const struct gcpair *gp, uint64_t ticks, uint64_t ts)
{
	int64_t t;

	if (!ticks || !gp->tick_off_set)
		return ts;
	t = (int64_t)ticks + gp->tick_off;
	if (t < 0 || (uint64_t)t > ts || ts - (uint64_t)t > 1000000000ull)
		return ts;
	return (uint64_t)t;
}

static void pause_emit(struct gcpair *gp, struct gc_pause *p)
{
	emit(gp, &p->rec);
	p->tid = 0;
}

/* GCTimer::register_gc_pause_start: a pause begins on e->tid. */
static void pause_begin(struct gcpair *gp, const struct mt_gc_event *e)
{
	struct gc_pause *p = find_pause(gp, e->tid);

	gp->begun_pause = true;
	if (p) {
		gp->unpaired_begin++; /* the previous one's end was lost */
	} else {
		for (int i = 0; i < MT_GC_MAX_PAUSES && !p; i++)
			if (!gp->pauses[i].tid)
				p = &gp->pauses[i];
		if (!p) {
			gp->overflow++;
			return;
		}
	}
	memset(p, 0, sizeof(*p));
	p->tid = e->tid;
	p->ticks = e->ticks;
	p->rec.kind = GC_KIND_PAUSE;
	p->rec.start_ns = e->ts_ns;
	p->rec.in_vmop = gp->vmop_open && gp->vmop_tid == e->tid;
	memcpy(p->rec.pause, e->pause, MT_GC_NAME_LEN);
	p->rec.pause[MT_GC_NAME_LEN - 1] = '\0';
	if (p->rec.in_vmop)
		gp->vmop_timed = true;
}

/* GCTimer::register_gc_pause_end: its duration is the Ticks' difference (the
 * JVM's clock, as JFR's), the probes' times if a Ticks was unreadable. */
static void pause_end(struct gcpair *gp, const struct mt_gc_event *e)
{
	struct gc_pause *p = find_pause(gp, e->tid);

	if (!p || p->ended) {
		end_unmatched(gp, gp->begun_pause);
		return;
	}
	p->rec.timed = p->ticks && e->ticks >= p->ticks;
	if (p->rec.timed)
		p->rec.start_ns = tick_time(gp, p->ticks, p->rec.start_ns);
	p->rec.end_ns = p->rec.start_ns +
			(p->rec.timed ? e->ticks - p->ticks
				      : (e->ts_ns > p->rec.start_ns ? e->ts_ns - p->rec.start_ns : 0));
	if (gp->vmop_open && gp->vmop_tid == e->tid) {
		/* Shenandoah: the operation wraps the pause, and its pause manager's
		 * gc_end (the cause) comes before the operation's end */
		p->ended = true;
		gp->vmop_timed = true;
		return;
	}
	pause_emit(gp, p);
}

/* Cycle @c ended on thread @tid inside that thread's timed pause @p: the same
 * pause (JDK 21+ G1's "G1 Concurrent GC" around remark and cleanup), or a
 * stop-the-world collection the pause holds. One record: the pause's name and
 * time, the cycle's manager, pools and kind. */
static void pause_merge(struct gc_pause *p, const struct gc_cycle *c, enum gc_kind kind)
{
	struct gc_record *r = &p->rec;

	memcpy(r->manager, c->rec.manager, MT_GC_NAME_LEN);
	if (!r->cause[0]) {
		memcpy(r->cause, c->rec.cause, MT_GC_NAME_LEN);
		memcpy(r->action, c->rec.action, MT_GC_NAME_LEN);
	}
	r->npools = c->rec.npools;
	memcpy(r->pools, c->rec.pools, sizeof(r->pools));
	r->full = c->rec.full;
	if (kind != GC_KIND_PAUSE)
		r->kind = kind;
	p->merged = true;
}

/* A cause for the timed pause open on its thread (its pause manager's, or
 * the wrapping cycle's), else for the next pool end of its thread (the
 * latest one wins). */
static void cause_heard(struct gcpair *gp, const struct mt_gc_event *e)
{
	struct gc_pause *p = find_pause(gp, e->tid);
	struct gc_cause_wait *w = NULL;

	if (p) {
		memcpy(p->rec.cause, e->cause, MT_GC_NAME_LEN);
		p->rec.cause[MT_GC_NAME_LEN - 1] = '\0';
		memcpy(p->rec.action, e->action, MT_GC_NAME_LEN);
		p->rec.action[MT_GC_NAME_LEN - 1] = '\0';
		if (e->manager[0] && !p->merged) {
			memcpy(p->rec.manager, e->manager, MT_GC_NAME_LEN);
			p->rec.manager[MT_GC_NAME_LEN - 1] = '\0';
		}
		return;
	}

	for (int i = 0; i < MT_GC_MAX_CAUSES && !w; i++)
		if (gp->causes[i].tid == e->tid)
			w = &gp->causes[i];
	for (int i = 0; i < MT_GC_MAX_CAUSES && !w; i++)
		if (!gp->causes[i].tid)
			w = &gp->causes[i];
	if (!w)
		w = &gp->causes[e->tid % MT_GC_MAX_CAUSES]; /* more GC threads than slots */
	w->tid = e->tid;
	w->ts_ns = e->ts_ns;
	memcpy(w->cause, e->cause, MT_GC_NAME_LEN);
	w->cause[MT_GC_NAME_LEN - 1] = '\0';
	memcpy(w->action, e->action, MT_GC_NAME_LEN);
	w->action[MT_GC_NAME_LEN - 1] = '\0';
}

/* Cycle @c (at its first pool end, on @tid) takes the cause waiting on that
 * thread, and with it the time gc_end was entered: HotSpot reads the
 * collection's end time (GcInfo, the GarbageCollectorMXBean's) right there,
 * before it reads every pool's usage and fires each pool's end probe. A
 * cause older than the cycle's start is not this cycle's end. */
static void cause_take(struct gcpair *gp, struct gc_cycle *c, uint32_t tid)
{
	for (int i = 0; i < MT_GC_MAX_CAUSES; i++) {
		struct gc_cause_wait *w = &gp->causes[i];

		if (w->tid != tid || !tid)
			continue;
		memcpy(c->rec.cause, w->cause, MT_GC_NAME_LEN);
		memcpy(c->rec.action, w->action, MT_GC_NAME_LEN);
		if (w->ts_ns >= c->rec.start_ns)
			c->cause_ns = w->ts_ns;
		w->tid = 0;
		return;
	}
}

/* The JFR collection slot of thread @tid, or NULL. */
static struct gc_trace *find_trace(struct gcpair *gp, uint32_t tid)
{
	for (int i = 0; i < MT_GC_MAX_TRACES; i++)
		if (tid && gp->traces[i].tid == tid)
			return &gp->traces[i];
	return NULL;
}

/* @r takes JFR collection @t's start and duration. */
static void trace_adopt(struct gc_record *r, const struct gc_trace *t)
{
	r->start_ns = t->ts_ns;
	r->end_ns = t->ts_ns + t->dur_ns;
	r->timed = true;
}

/* GCTracer::report_gc_start: a collection as JFR counts it begins on e->tid. */
static void trace_begin(struct gcpair *gp, const struct mt_gc_event *e)
{
	struct gc_trace *t = find_trace(gp, e->tid);

	gp->begun_trace = true;
	if (t && t->open) {
		gp->unpaired_begin++; /* the previous one's end was lost */
		if (t->held)
			emit(gp, &t->rec); /* with its memory manager's window */
	}
	for (int i = 0; i < MT_GC_MAX_TRACES && !t; i++)
		if (!gp->traces[i].tid)
			t = &gp->traces[i];
	if (!t) {
		gp->overflow++;
		return;
	}
	memset(t, 0, sizeof(*t));
	t->tid = e->tid;
	t->open = true;
	t->ts_ns = e->ts_ns;
	t->ticks = e->ticks;
}

/* GCTracer::report_gc_end: its duration; the cycle it held, timed so. */
static void trace_end(struct gcpair *gp, const struct mt_gc_event *e)
{
	struct gc_trace *t = find_trace(gp, e->tid);

	if (!t || !t->open) {
		end_unmatched(gp, gp->begun_trace);
		return;
	}
	t->open = false;
	t->dur_ns = t->ticks && e->ticks >= t->ticks ? e->ticks - t->ticks : 0;
	if (t->dur_ns)
		t->ts_ns = tick_time(gp, t->ticks, t->ts_ns);
	if (t->held) {
		t->held = false;
		if (t->dur_ns)
			trace_adopt(&t->rec, t);
		emit(gp, &t->rec);
		t->tid = 0;
	}
}

/* Cycle @c's last pool ended on thread @tid: its kind, then its record
 * (merged into the timed pause of that thread, if one is open). */
static void cycle_end(struct gcpair *gp, struct gc_cycle *c, uint32_t tid)
{
	struct gc_pause *p = find_pause(gp, tid);
	struct gc_trace *t;
	enum gc_kind kind;

	c->open = false;
	if (gp->vmop_open && c->rec.in_vmop && !c->wraps)
		gp->vmop_cycles++;
	if (c->wraps)
		kind = GC_KIND_PAUSE;
	else if (c->rec.in_vmop)
		kind = c->rec.full ? GC_KIND_FULL : GC_KIND_YOUNG;
	else
		kind = GC_KIND_CYCLE;
	if (p && kind != GC_KIND_CYCLE && !p->merged) {
		pause_merge(p, c, kind);
		return;
	}
	c->rec.kind = kind;
	if (kind != GC_KIND_PAUSE && (t = find_trace(gp, tid))) {
		/* one collection at a time on a thread: the JFR collection that
		 * overlaps the cycle is the cycle's */
		if (t->open && !t->held) {
			/* it outlasts the cycle (G1): the record waits for its end */
			t->rec = c->rec;
			t->held = true;
			return;
		}
		if (!t->open && t->dur_ns && t->ts_ns < c->rec.end_ns &&
		    t->ts_ns + t->dur_ns > c->rec.start_ns) {
			/* it ended inside the cycle (Serial), or began before it and
			 * ended first (Shenandoah's session) */
			trace_adopt(&c->rec, t);
			t->tid = 0;
		}
	}
	emit(gp, &c->rec);
}

static void pool_end(struct gcpair *gp, const struct mt_gc_event *e)
{
	struct gc_cycle *c = find_cycle(gp, e->manager);
	struct gc_pool *p = c ? find_pool(&c->rec, e->pool) : NULL;

	if (!p || p->ended) {
		end_unmatched(gp, manager_was_begun(gp, e->manager));
		return;
	}
	if (!c->rec.cause[0])
		cause_take(gp, c, e->tid);
	p->ended = true;
	p->used_after = e->used;
	p->committed = e->committed;
	p->max = e->max;
	c->nended++;
	c->rec.end_ns = c->cause_ns ? c->cause_ns : e->ts_ns;
	if (c->nended == c->nbegun)
		cycle_end(gp, c, e->tid);
}

static void vmop_begin(struct gcpair *gp, const struct mt_gc_event *e)
{
	struct gc_pause *p;

	if (gp->vmop_open)
		gp->unpaired_begin++;
	gp->begun_vmop = true;
	gp->vmop_open = true;
	gp->vmop_tid = e->tid;
	gp->vmop_full = e->is_full;
	gp->vmop_start = e->ts_ns;
	gp->vmop_cycles = 0;
	/* ZGC and G1: the timed pause wraps the operation */
	p = find_pause(gp, e->tid);
	gp->vmop_timed = p != NULL;
	if (p)
		p->rec.in_vmop = true;
	/* A cycle already open on this thread wraps this operation (JDK 21+ G1
	 * remark and cleanup: the "G1 Concurrent GC" manager's stats begin before
	 * the pause's gc__begin and end after its gc__end): it is the pause. A
	 * cycle of another thread (ZGC's, Shenandoah's) runs beside it. */
	for (int i = 0; i < MT_GC_MAX_CYCLES; i++) {
		struct gc_cycle *c = &gp->cycles[i];

		if (c->open && c->tid == e->tid) {
			c->wraps = true;
			c->rec.in_vmop = true;
			gp->vmop_cycles++;
		}
	}
}

static void vmop_end(struct gcpair *gp, const struct mt_gc_event *e)
{
	struct gc_pause *p;
	struct gc_record rec;

	if (!gp->vmop_open || gp->vmop_tid != e->tid) {
		end_unmatched(gp, gp->begun_vmop);
		return;
	}
	gp->vmop_open = false;
	p = find_pause(gp, e->tid);
	if (p && p->ended)
		pause_emit(gp, p);
	if (gp->vmop_cycles > 0 || gp->vmop_timed)
		return;
	/* A collector pause with no memory-manager cycle inside, and no
	 * GCTimer uprobes to time it. */
	memset(&rec, 0, sizeof(rec));
	rec.kind = GC_KIND_PAUSE;
	rec.start_ns = gp->vmop_start;
	rec.end_ns = e->ts_ns;
	rec.vmop_ns = e->ts_ns - gp->vmop_start;
	rec.full = gp->vmop_full;
	rec.in_vmop = true;
	emit(gp, &rec);
}

void gcpair_feed(struct gcpair *gp, const struct mt_gc_event *e)
{
	if (e->kind == MT_PAUSE_BEGIN || e->kind == MT_PAUSE_END || e->kind == MT_TRACE_BEGIN ||
	    e->kind == MT_TRACE_END)
		tick_seen(gp, e);
	switch (e->kind) {
	case MT_GC_BEGIN:
		vmop_begin(gp, e);
		break;
	case MT_GC_END:
		vmop_end(gp, e);
		break;
	case MT_POOL_BEGIN:
		pool_begin(gp, e);
		break;
	case MT_POOL_END:
		pool_end(gp, e);
		break;
	case MT_GC_CAUSE:
		cause_heard(gp, e);
		break;
	case MT_PAUSE_BEGIN:
		pause_begin(gp, e);
		break;
	case MT_PAUSE_END:
		pause_end(gp, e);
		break;
	case MT_TRACE_BEGIN:
		trace_begin(gp, e);
		break;
	case MT_TRACE_END:
		trace_end(gp, e);
		break;
	default:
		break;
	}
}

void gcpair_finish(struct gcpair *gp)
{
	/* A begin still open: its collection was in flight when the probes
	 * stopped (a lost end shows at the next begin of the same kind). */
	if (gp->vmop_open)
		gp->in_flight++;
	gp->vmop_open = false;
	for (int i = 0; i < MT_GC_MAX_CYCLES; i++) {
		struct gc_cycle *c = &gp->cycles[i];

		if (c->open)
			gp->in_flight += c->nbegun - c->nended;
		c->open = false;
	}
	for (int i = 0; i < MT_GC_MAX_TRACES; i++) {
		struct gc_trace *t = &gp->traces[i];

		if (t->tid && t->held)
			emit(gp, &t->rec); /* its JFR collection did not end: its own window */
		if (t->tid && t->open)
			gp->in_flight++;
		t->tid = 0;
	}
	for (int i = 0; i < MT_GC_MAX_PAUSES; i++) {
		struct gc_pause *p = &gp->pauses[i];

		if (p->tid && p->ended)
			pause_emit(gp, p); /* its operation's end was lost: the pause was seen whole */
		else if (p->tid)
			gp->in_flight++;
		p->tid = 0;
	}
}
