/* viewrefs.h - the heap view's references (heapview.c's build): each
 * object's run of references placed from a snapshot's records, over the
 * records themselves when the caller gives them up (heapview_build_take()),
 * and what heapview.c and this step share of the build. */
#ifndef MEMTRACE_VIEWREFS_H
#define MEMTRACE_VIEWREFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dsl/dsl.h"
#include "heap/snapshot.h"
#include "lib/idmap.h"

struct mt_heapview;

/* Per class: what the build knows beside the view's class. */
struct cls_aux {
	int32_t *slot;  /* [JVMTI index] -> field slot, -1 */
	int32_t nslot;
	int32_t *sslot; /* [static field index] -> index in heap.statics, -1 */
	int32_t nsslot;
	bool values;    /* objects of this class carry values */
	size_t pending; /* b->fused: objects whose CLASS reference leads to its object */
	bool known;     /* a class: instances, subclasses or fields say so (no kind given) */
	bool inst;      /* has instances */
};

/* What heapview_build() works with (heapview.c fills it; viewrefs_build() reads it). */
struct viewbuild {
	const struct mt_snapshot *s;
	struct mt_snapshot *take;  /* s, whose object and reference arrays the view
				    * may take over; NULL: s stays as it is */
	const struct dsl_needs *needs;
	struct mt_heapview *hv;
	struct idmap_index objmap, clsmap, loadmap, strmap;
	struct cls_aux *aux;
	struct dsl_hclass *cls;
	struct dsl_hobject *objs;
	struct dsl_hval **values;  /* [object] its values (NULL: none carries any) */
	uint32_t *ages;            /* [object] its age (NULL: none read) */
	size_t n;                  /* objects */
	uint32_t ncls, unknown;
	size_t nclassrefs;         /* CLASS references the objects carry */
	bool fused;                /* the objects' ids are indexed (and their sizes
				    * checked) as their view is built, not before:
				    * until references are placed, an object's nrefs
				    * is 1 + the class whose object its CLASS
				    * reference leads to (viewrefs_cref()), or 0 */
	struct dsl_hloader *loaders;
	uint32_t nloaders;
	/* references by position, objects built in two halves (viewobjs.h):
	 * the ref_first of objects from pos_mid on are pos_off short until
	 * the references are placed (pos_mid b->n: none is) */
	size_t pos_mid, pos_off;
	uint64_t *cls_count, *cls_bytes; /* [ncls]: the view's instances and bytes per class */
	uint32_t *runs;            /* [n + 1]: each object's run's start (dsl_heap.ref_runs),
				    * made with the references by position; NULL: not */
	/* [ncls], references by position without CLASS ones (take->noclass):
	 * 1 its objects' CLASS references are implied, 2 not, 0 none met
	 * (viewobjs.c; NULL otherwise) */
	uint8_t *cref_seen;
	/* object @i's field values (b->values[i]), zero, when its class's
	 * objects carry them (heapview.c's; one thread at a time): 0 or -ENOMEM */
	int (*values_of)(struct viewbuild *b, size_t i);
	char *why;                 /* what was wrong (-EINVAL), wn bytes */
	size_t wn;
};

/* viewrefs_cref - the object (index) @x's CLASS reference leads to, or
 * DSL_NOOBJ: before its references are placed (heapview.c). Pure. */
static inline uint32_t viewrefs_cref(const struct viewbuild *b, const struct dsl_hobject *x)
{
	return x->nrefs ? b->cls[x->nrefs - 1].obj : x->ref_first;
}

/* viewrefs_two_threads - whether a pass of the view's over @n entries takes
 * two threads: MEMTRACE_VIEW_THREADS=1|2 says (tests), else @n at least @min
 * with two CPUs to run on. */
bool viewrefs_two_threads(size_t n, size_t min);

/* viewrefs_kind - the view's reference or root kind (DSL_REF_*, DSL_ROOT_*)
 * of JVMTI's jvmtiHeapReferenceKind @k, -1 for none. Pure. */
int viewrefs_kind(uint32_t k);

/*
 * viewrefs_build - the view's references into *@out (*@n of them; the
 * caller's to free): each object's a run, its CLASS reference first, then
 * its own in the records' order; ref_first and nrefs of b->objs set, field
 * values that are references filled. Records in their referrers' order (a
 * frozen copy's mark writes an object's references after it) are placed in
 * one pass without counts: when b->take, over the records themselves (12
 * bytes where a record took 24; records are copied to a small ring ahead of
 * being overwritten) and b->take->refs is then the view's or freed; else in
 * a new array. Others are counted (a stable counting sort). References by
 * position where the copy wrote them (b->take->refpos, MT_AP_FREEZE_REFPOS):
 * each record is made the view's reference in its place, the runs set by the
 * objects' counts (heapview.c), and -EINVAL with b->why for one that makes
 * no sense. Returns 0, -ENOMEM or -EINVAL.
 */
int viewrefs_build(struct viewbuild *b, struct dsl_href **out, size_t *n);

#endif
