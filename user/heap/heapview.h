/* heapview.h - the bridge from a heap snapshot (snapshot.h) to the query
 * language: the struct dsl_heap (dsl/dsl.h) built from a struct mt_snapshot,
 * with the field values a program needs, and what it owns. */
#ifndef MEMTRACE_HEAPVIEW_H
#define MEMTRACE_HEAPVIEW_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/dominators.h"
#include "analysis/heapgraph.h"
#include "dsl/dsl.h"
#include "heap/snapshot.h"

struct recpool;

/* The dsl_heap built from a snapshot, and what it owns. */
struct mt_heapview {
	struct dsl_heap heap;
	void **owned;
	size_t nowned, cap_owned;
	uint64_t value_objects; /* objects that carry field values */
	/* per class (heap.nclasses): its instances and their shallow bytes,
	 * counted as the view was built */
	uint64_t *cls_count, *cls_bytes;
	/* heapview_graph()'s indexes (heap.retained, .referrer*, .root_via point here) */
	struct mt_referrers referrers;
	struct mt_domtree dom;
	uint32_t *via;
	uint32_t *parent;  /* HEAPVIEW_PARENTS: heap.root_parent */
	uint64_t referrers_ns, dom_ns, paths_ns; /* how long each took */
	/* the take's own pool the objects and references lie in (built over a
	 * snapshot's records kept in place, MT_AP_FREEZE_INPLACE), or NULL */
	struct recpool *pool;
};

/* What heapview_graph() builds. */
#define HEAPVIEW_REFERRERS (1u << 0) /* heap.referrer_first/referrer */
#define HEAPVIEW_RETAINED  (1u << 1) /* heap.retained (and dom) */
#define HEAPVIEW_PATHS     (1u << 2) /* heap.root_via */
#define HEAPVIEW_PARENTS   (1u << 3) /* heap.root_via and .root_parent */

/*
 * heapview_build - build a dsl_heap from @s into *@hv; values only for
 * classes with a field named in @needs (all fields if @needs is NULL). The
 * heap points into @s (names, strings): @s must outlive it. Returns 0, or
 * -ENOMEM / -EINVAL (too large) with the reason in @why; *@hv is then empty.
 * The caller frees *@hv with heapview_free() either way.
 */
int heapview_build(const struct mt_snapshot *s, const struct dsl_needs *needs,
		   struct mt_heapview *hv, char *why, size_t wn);
/*
 * heapview_build_take - heapview_build(), for a caller done with the records:
 * the view is built in @s's object and reference arrays (no new memory for
 * most of it), and @s's records are dropped (snapshot_drop_records()) either
 * way; its classes, strings and names stay (the view points into them).
 */
int heapview_build_take(struct mt_snapshot *s, const struct dsl_needs *needs,
			struct mt_heapview *hv, char *why, size_t wn);
/*
 * heapview_graph - build the graph indexes @what (HEAPVIEW_*) of the heap in
 * @hv (analysis/heapgraph.h, analysis/dominators.h) and point hv->heap at
 * them; what exists already is kept. Returns 0 or -ENOMEM (reason in @why).
 */
int heapview_graph(struct mt_heapview *hv, unsigned what, char *why, size_t wn);
/* heapview_graph_for - the HEAPVIEW_* a program with needs @n uses. */
unsigned heapview_graph_for(const struct dsl_needs *n);

/* heapview_free - free what *@hv owns. No operation on a zeroed view. */
void heapview_free(struct mt_heapview *hv);

#endif
