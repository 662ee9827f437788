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

static struct gc_cycle *new_cycle(struct gcpair *gp, const struct mt_gc_event *e)
{
	for (int i = 0; i < MT_GC_MAX_CYCLES; i++) {
		struct gc_cycle *c = &gp->cycles[i];

		if (c->open)
			continue;
		memset(c, 0, sizeof(*c));
		c->open = true;
		memcpy(c->rec.manager, e->manager, MT_GC_NAME_LEN);
		c->rec.manager[MT_GC_NAME_LEN - 1] = '\0';
		c->rec.start_ns = e->ts_ns;
		c->rec.in_vmop = gp->vmop_open;
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

/* A cause for the next pool end of its thread (the latest one wins). */
static void cause_heard(struct gcpair *gp, const struct mt_gc_event *e)
{
	struct gc_cause_wait *w = NULL;

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

static void pool_end(struct gcpair *gp, const struct mt_gc_event *e)
{
	struct gc_cycle *c = find_cycle(gp, e->manager);
	struct gc_pool *p = c ? find_pool(&c->rec, e->pool) : NULL;

	if (!p || p->ended) {
		gp->unpaired_end++;
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
	if (c->nended == c->nbegun) {
		c->open = false;
		if (gp->vmop_open)
			gp->vmop_cycles++;
		emit(gp, &c->rec);
	}
}

static void vmop_begin(struct gcpair *gp, const struct mt_gc_event *e)
{
	if (gp->vmop_open)
		gp->unpaired_begin++;
	gp->vmop_open = true;
	gp->vmop_tid = e->tid;
	gp->vmop_full = e->is_full;
	gp->vmop_start = e->ts_ns;
	gp->vmop_cycles = 0;
	/* A cycle already open wraps this operation (JDK 21+ G1 remark and
	 * cleanup: the "G1 Concurrent GC" manager's stats begin before the
	 * pause's gc__begin and end after its gc__end): it is the pause. */
	for (int i = 0; i < MT_GC_MAX_CYCLES; i++)
		if (gp->cycles[i].open) {
			gp->cycles[i].rec.in_vmop = true;
			gp->vmop_cycles++;
		}
}

static void vmop_end(struct gcpair *gp, const struct mt_gc_event *e)
{
	struct gc_record rec;

	if (!gp->vmop_open || gp->vmop_tid != e->tid) {
		gp->unpaired_end++;
		return;
	}
	gp->vmop_open = false;
	if (gp->vmop_cycles > 0)
		return;
	/* A collector pause with no memory-manager cycle inside. */
	memset(&rec, 0, sizeof(rec));
	rec.start_ns = gp->vmop_start;
	rec.end_ns = e->ts_ns;
	rec.vmop_ns = e->ts_ns - gp->vmop_start;
	rec.full = gp->vmop_full;
	rec.in_vmop = true;
	emit(gp, &rec);
}

void gcpair_feed(struct gcpair *gp, const struct mt_gc_event *e)
{
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
	default:
		break;
	}
}

void gcpair_finish(struct gcpair *gp)
{
	if (gp->vmop_open)
		gp->unpaired_begin++;
	gp->vmop_open = false;
	for (int i = 0; i < MT_GC_MAX_CYCLES; i++) {
		struct gc_cycle *c = &gp->cycles[i];

		if (c->open)
			gp->unpaired_begin += c->nbegun - c->nended;
		c->open = false;
	}
}
