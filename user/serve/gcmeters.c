// SPDX-License-Identifier: GPL-2.0
/* gcmeters.c - Micrometer's GC meters from collection records (see gcmeters.h). */
#include <string.h>

#include "serve/gcmeters.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

void gcmeters_init(struct gcmeters *g)
{
	memset(g, 0, sizeof(*g));
}

bool gcmeters_allocation_pool(const char *pool)
{
	return ends_with(pool, "Eden Space") || !strcmp(pool, "Shenandoah") ||
	       !strcmp(pool, "Shenandoah Young Gen") || !strcmp(pool, "ZHeap") ||
	       !strcmp(pool, "ZGC Young Generation");
}

bool gcmeters_long_lived_pool(const char *pool)
{
	return ends_with(pool, "Old Gen") || ends_with(pool, "Tenured Gen") ||
	       !strcmp(pool, "Shenandoah") || !strcmp(pool, "Shenandoah Old Generation") ||
	       !strcmp(pool, "ZHeap") || !strcmp(pool, "ZGC Old Generation") ||
	       strstr(pool, "tenured");
}

bool gcmeters_old_collector(const char *gc)
{
	static const char *const old[] = { "G1 Old Generation", "MarkSweepCompact", "PS MarkSweep",
					   "ConcurrentMarkSweep", "ZGC Major Cycles",
					   "Shenandoah Cycles", "Epsilon" };

	for (size_t i = 0; i < sizeof(old) / sizeof(old[0]); i++)
		if (!strcmp(gc, old[i]))
			return true;
	return false;
}

void gcmeters_record(struct gcmeters *g, const struct gc_record *r)
{
	uint64_t ll_before = 0, ll_after = 0, ll_max = 0;
	bool have_alloc = false, have_ll = false;
	uint64_t a_before = 0, a_after = 0;
	int young_like = 0;

	if (!r->npools)
		return; /* a pause without a memory manager: no notification */
	for (int i = 0; i < r->npools; i++) {
		const struct gc_pool *p = &r->pools[i];

		if (!p->heap)
			continue;
		if (!strstr(p->name, "tenured"))
			young_like++;
		if (gcmeters_allocation_pool(p->name)) {
			have_alloc = true;
			a_before = p->used_before;
			a_after = p->used_after;
		}
		if (gcmeters_long_lived_pool(p->name)) {
			have_ll = true;
			ll_before += p->used_before;
			ll_after += p->used_after;
			if (p->max != UINT64_MAX)
				ll_max += p->max;
		}
	}
	g->generational = young_like >= 2;
	if (have_alloc) {
		if (g->baseline && a_before > g->alloc_after)
			g->allocated += a_before - g->alloc_after;
		g->alloc_after = a_after;
		g->baseline = true;
	}
	if (!have_ll)
		return;
	if (g->generational && ll_after > ll_before)
		g->promoted += ll_after - ll_before;
	/* ZGC's "Warmup" notifications carry an empty long-lived pool: skipped */
	if (ll_after == 0 && !strcmp(r->cause, "Warmup"))
		return;
	if (ll_after < ll_before || (g->generational && gcmeters_old_collector(r->manager)) ||
	    (!g->generational && !ends_with(r->manager, "Pauses"))) {
		g->live = ll_after;
		g->have_live = true;
		g->max_data = ll_max;
		g->have_max = true;
	} else if (!g->have_max) {
		g->max_data = ll_max;
		g->have_max = true;
	}
}

void winmax_record(struct winmax *w, uint64_t now_ns, double v)
{
	winmax_get(w, now_ns); /* rotate first */
	for (int i = 0; i < GCMETERS_WINDOW_BUCKETS; i++)
		if (v > w->b[i])
			w->b[i] = v;
}

double winmax_get(struct winmax *w, uint64_t now_ns)
{
	const uint64_t step = GCMETERS_WINDOW_NS / GCMETERS_WINDOW_BUCKETS;

	if (!w->next_rotate)
		w->next_rotate = now_ns + step;
	/* a long quiet stretch clears every bucket (at most one round) */
	for (int k = 0; now_ns >= w->next_rotate && k < GCMETERS_WINDOW_BUCKETS; k++) {
		w->b[w->cur] = 0;
		w->cur = (w->cur + 1) % GCMETERS_WINDOW_BUCKETS;
		w->next_rotate += step;
	}
	if (now_ns >= w->next_rotate)
		w->next_rotate = now_ns + step;
	return w->b[w->cur];
}
