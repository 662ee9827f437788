/* dominators.h - the dominator tree of a heap and what each object retains
 * (Eclipse MAT's "retained heap"), from any snapshot source's abstract heap
 * (dsl/dsl.h).
 *
 * The graph (Eclipse MAT's): every object of the heap, every reference
 * between objects but an object's reference to its own class (a class is not
 * held by its instances), an edge from each class loader to every class it
 * defined (a class is held by its loader; the bootstrap loader's classes are
 * heap roots, JVMTI's SYSTEM_CLASS), and a virtual root with an edge to
 * every heap root. Both kinds of edges keep what a root reaches exactly
 * what the heap's references reach (the objects with a root path,
 * dsl_root_path()): a loader's edge leads only to a class some reference
 * chain reaches, and an object's reference to its class holds where nothing
 * else would hold that class (a heap that loses a loader's link; in a JVM's,
 * JDK 17's reflection accessor classes: each one's loader only the class
 * holds, the class only its instances).
 * Object d dominates o if every path from the virtual root to o passes
 * through d; o's immediate dominator is its closest strict dominator. The retained
 * size of o is the sum of the shallow sizes of the objects o dominates, o
 * included: the bytes the heap would lose if o were unreachable. An object
 * no root reaches is in no tree: it retains nothing (MT_DOM_UNREACHED).
 *
 * The algorithm: semi-NCA (Georgiadis and Tarjan's simplification of
 * Lengauer-Tarjan: semidominators by path-compressed evaluation, then each
 * immediate dominator as the nearest common ancestor of the semidominator
 * and the DFS parent), all loops iterative, O(m log n) worst case and
 * near-linear on heaps. Only the edges that are not DFS tree edges are kept
 * for the second pass (on a heap, most edges are tree edges): no referrers
 * index. Memory: 28 bytes per object (the 12 kept included: idom and
 * retained) and 12 per kept edge while it runs.
 */
#ifndef MEMTRACE_DOMINATORS_H
#define MEMTRACE_DOMINATORS_H

#include <stdint.h>

#include "dsl/dsl.h"

#define MT_DOM_ROOT      UINT32_MAX       /* idom: the virtual root */
#define MT_DOM_UNREACHED (UINT32_MAX - 1) /* idom: no root reaches the object */
#define MT_DOM_QUICK_HELD     1u /* no object both held and reached by references:
				    * no pass over the references for those */
#define MT_DOM_QUICK_RENUMBER 2u /* few dropped or moved, few searches spliced:
				    * each number moved by those below it */

struct mt_domtree {
	uint32_t n;            /* objects */
	uint32_t *idom;        /* [n] immediate dominator (object index), or the above */
	uint64_t *retained;    /* [n] bytes; DSL_NORETAINED for unreached objects */
	uint32_t reached;      /* objects some root reaches */
	uint64_t reached_bytes, unreached_bytes;
	uint64_t peak_bytes;   /* the most memory the computation held at once (the
				* result included) */
	uint32_t searches;     /* depth-first searches of the whole graph it took (1-3) */
	uint32_t mend_added;   /* a failed first search mended, not searched again:
				* objects it gained (only CLASS references reach them) */
	uint32_t mend_dropped; /* ... and those it lost (only a loader's edge reached them) */
	uint32_t mend_moved;   /* ... and those it moved (a search from an object only
				* CLASS references reach met them before the first did) */
	uint32_t mend_quick;   /* MT_DOM_QUICK_* the mend took (0 when none) */
};

/*
 * dominators_compute - the dominator tree of @h into *@d (zeroed first;
 * free with dominators_free()). Returns 0 or -ENOMEM.
 */
int dominators_compute(const struct dsl_heap *h, struct mt_domtree *d);

/*
 * dominators_prewarm_bytes - the bytes of the per-object arrays
 * dominators_compute() allocates first for @n objects and fills at once
 * (8 an object): memory freed and kept (heap/snaptake.c's prewarm()) that
 * big is what they reuse. The next two (12 bytes an object and the room of
 * a mend's moves) a thread of its own faults in while its search runs, on a
 * heap of a million objects or more with two CPUs. Pure.
 */
size_t dominators_prewarm_bytes(uint32_t n);

/* dominators_free - free *@d. No operation on a zeroed struct. */
void dominators_free(struct mt_domtree *d);

/* The children of each object in the dominator tree (dominators_children). */
struct mt_domkids {
	uint32_t *first;       /* [n + 2]: children of o at kid[first[o] .. first[o + 1]);
				* the virtual root's at index n */
	uint32_t *kid;         /* [reached] */
	uint32_t n;
};

/*
 * dominators_children - the tree of @d as child lists into *@k, each list in
 * object order (free with dominators_children_free()). Returns 0 or -ENOMEM.
 */
int dominators_children(const struct mt_domtree *d, struct mt_domkids *k);
void dominators_children_free(struct mt_domkids *k);

/*
 * dominators_by_class - per class of @h, the bytes retained by its
 * instances without counting twice an instance another instance of the
 * same class dominates (the union of their dominator subtrees: a lower
 * bound of what freeing them all would free, Eclipse MAT's approximation),
 * into @bytes (nclasses entries, zeroed here); @count gets how many
 * instances were counted at the top. @k from dominators_children().
 * *@ntasks (if not NULL): as dominators_by_class_threads() says; one walker
 * or two as it says, or as MEMTRACE_BYCLASS_THREADS (1 or 2) asks.
 * Returns 0 or -ENOMEM.
 */
int dominators_by_class(const struct dsl_heap *h, const struct mt_domtree *d,
			const struct mt_domkids *k, uint64_t *bytes, uint64_t *count,
			uint32_t *ntasks);
/* dominators_by_class_threads - the same with @threads walkers (1 or 2);
 * *@ntasks (if not NULL): the parts of the tree they took in turn (1: the
 * whole in one walker). dominators_by_class() takes two where the tree holds a
 * million objects or more and two CPUs are there: the tree's top split into
 * ranges of an object's children and single children opened until no part
 * holds a sixteenth of the bytes (10 M objects: 107 parts, the report 75 ->
 * 61 ms; Tomcat 5.2 M: 126 parts, 75 -> 53 ms). */
int dominators_by_class_threads(const struct dsl_heap *h, const struct mt_domtree *d,
				const struct mt_domkids *k, uint64_t *bytes, uint64_t *count,
				int threads, uint32_t *ntasks);

#endif
