// SPDX-License-Identifier: GPL-2.0
/* heapseries.c - snapshots over time and their growth (see heapseries.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heapmem.h"
#include "heap/heapseries.h"
#include "heap/recpool.h"
#include "lib/util.h"

int heapseries_init(struct heapseries *s)
{
	memset(s, 0, sizeof(*s));
	/* Every snapshot's arrays (hundreds of MiB at millions of objects) are
	 * the size of the one before: kept for the next instead of the kernel
	 * zeroing fresh pages each time. 5 M objects, `leaks --duration 12`:
	 * system time 2.2-3.6 s -> 1.2-1.3 s, peak RSS +35 MiB (932 -> 966 MiB). */
	heapmem_keep_freed();
	s->growth = heapgrowth_new();
	if (!s->growth) {
		p_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

bool heapseries_keep_turn(const struct heapseries_plan *pl, uint32_t i, double t, uint32_t taken,
			  double last_cost)
{
	double every = pl->duration / (pl->n - 1);

	if (pl->exact || !i || i + 1 >= pl->n)
		return true;
	if (taken < 2) /* none between yet */
		return t < (i + 1) * every || i + 2 >= pl->n;
	return t < (i + 1) * every && t + last_cost <= pl->duration;
}

#define POOL_MIN (128ull << 20) /* smaller records fault in little: no pool (5 M
				* objects: 280 MiB, the copy's records 287 -> 199 ms) */

/* MEMTRACE_RECPOOL is @v ("always", "never"; unset or else: auto)? */
static bool recpool_env(const char *v)
{
	const char *env = getenv("MEMTRACE_RECPOOL");

	return env && !strcmp(env, v);
}

void heapseries_ready_next(struct heapseries *s)
{
	bool always = recpool_env("always");
	struct heapmem_room r;
	uint64_t want, more;
	char why[512];

	if (!s->rec_live || !s->rec_objs || s->rec_inplace || recpool_env("never"))
		return;
	want = recpool_bytes_for(s->rec_objs, s->rec_refs);
	if ((want < POOL_MIN && !always) || (s->pool && s->pool->bytes >= want - want / 16))
		return;
	/* memtrace's memory from now on: only when the next snapshot, an
	 * eighth larger, still fits beside it (its bound counts the pool,
	 * heapmem_room.pool: a pool must never be why a snapshot is refused) */
	more = want - (s->pool ? s->pool->bytes : 0);
	heapmem_room_now(&r);
	r.pool = want;
	if (r.free != UINT64_MAX)
		r.free = r.free > more ? r.free - more : 0;
	r.held += more;
	if (heapmem_fits(HEAPMEM_SERIES, s->rec_objs + s->rec_objs / 8,
			 s->rec_refs + s->rec_refs / 8, false, &r, why, sizeof(why)))
		return;
	if (s->pool) {
		recpool_grow(s->pool, want); /* as it was when it cannot */
	} else {
		s->pool = recpool_new(want);
	}
	util_phase("memory kept for the next copy's records");
}

static void drop_last(struct heapseries *s)
{
	heapview_free(&s->hv);
	snapshot_free(&s->snap);
	s->have_last = false;
}

void heapseries_free(struct heapseries *s)
{
	if (!s)
		return;
	drop_last(s);
	heapgrowth_free(s->growth);
	recpool_free(s->pool);
	memset(s, 0, sizeof(*s));
}

int heapseries_take(struct heapseries *s, struct mt_snapsession *ss, double t, uint64_t gcs,
		    bool retained)
{
	struct dsl_needs none = { .retained = retained }; /* the dominators' runs */
	uint64_t t0 = mono_ns();
	char why[160];
	int err;

	/* the last view's pool (its records were the view): the next copy
	 * writes there, its pages made already (=never: each take's anew) */
	ss->spare = recpool_env("never") ? NULL : s->hv.pool;
	if (ss->spare)
		s->hv.pool = NULL;
	drop_last(s);
	ss->use = HEAPMEM_SERIES;
	ss->pool = s->pool;
	err = snaptake_take(ss, MT_AP_HEAP_REFS | (s->max_pause ? MT_AP_HEAP_MAXPAUSE : 0),
			    s->max_pause_ms, NULL, 0, &s->snap);
	recpool_free(ss->spare); /* not taken */
	ss->spare = NULL;
	if (err)
		return err; /* printed */
	s->have_last = true;
	s->rec_objs = s->snap.nobjs;
	s->rec_refs = s->snap.nrefs;
	s->rec_live = s->snap.has_mark && (ss->freeze.flags & MT_AP_FREEZE_LIVE) && !ss->pool_off;
	s->rec_inplace = s->snap.inplace;
	err = heapview_build_take(&s->snap, &none, &s->hv, why, sizeof(why)); /* records dropped */
	util_phase("heap view");
	if (!err)
		err = heapview_graph(&s->hv, HEAPVIEW_PARENTS | (retained ? HEAPVIEW_RETAINED : 0),
				     why, sizeof(why));
	util_phase("graph (paths)");
	if (err) {
		p_err("cannot build the heap of snapshot %u: %s", s->taken + 1, why);
		drop_last(s);
		return err;
	}
	/* the snapshot's instant is the fork's, not the request's: an
	 * allocating JVM's next GC came first (up to HEAPFREEZE_GC_WAIT_MS),
	 * 1.6 s longer for one snapshot than another of a series on a loaded
	 * machine; what grew is born between forks (same clock: CLOCK_MONOTONIC) */
	if (s->snap.frozen && s->snap.freeze.fork_at_ns > t0 &&
	    s->snap.freeze.fork_at_ns - t0 < 600 * 1000000000ull)
		t += (double)(s->snap.freeze.fork_at_ns - t0) / 1e9;
	err = heapgrowth_add(s->growth, &s->hv.heap, t, gcs);
	util_phase("growth (places compared)");
	if (err == -E2BIG)
		p_err("more than %d snapshots in a series", HEAPGROWTH_MAX_SNAPS);
	else if (err)
		p_err("out of memory");
	if (err) {
		drop_last(s);
		return err;
	}
	s->objects[s->taken] = s->hv.heap.nobjects;
	s->at_ns[s->taken++] = s->snap.frozen ? s->snap.freeze.fork_at_ns : 0;
	s->pause_ns += s->snap.info.pause_ns;
	if (s->snap.info.pause_ns > s->max_pause_ns)
		s->max_pause_ns = s->snap.info.pause_ns;
	s->objects_last = s->hv.heap.nobjects;
	s->t_last = t;
	s->last_ns = mono_ns() - t0;
	s->walk_ns += s->last_ns;
	return 0;
}
