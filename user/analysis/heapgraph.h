/* heapgraph.h - two indexes over a heap's reference graph (the abstract
 * heap of dsl/dsl.h, from any snapshot source): who refers to each object
 * (the reverse of the references) and how the shortest reference chain from
 * a heap root reaches each object (a breadth-first search from all roots;
 * dsl_root_path() reads the chain back).
 *
 * Memory: referrers 4 bytes per object + 4 per reference; paths 4 bytes per
 * object (and 4 per object for the queue while it runs). */
#ifndef MEMTRACE_HEAPGRAPH_H
#define MEMTRACE_HEAPGRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "dsl/dsl.h"

/* The referrers of object o: from[first[o] .. first[o + 1]), the index of
 * each object with a reference to o, once per reference, ascending. */
struct mt_referrers {
	uint32_t *first; /* nobjects + 1 */
	uint32_t *from;  /* nrefs */
	uint32_t n;      /* objects */
};

/*
 * referrers_build - the referrers of every object of @h into *@r (zeroed
 * first; free with referrers_free()). Returns 0 or -ENOMEM.
 */
int referrers_build(const struct dsl_heap *h, struct mt_referrers *r);
/* referrers_free - free *@r. No operation on a zeroed struct. */
void referrers_free(struct mt_referrers *r);

/*
 * rootpaths_build - the shortest paths from the heap roots: *@via (nobjects
 * entries, malloc'd, the caller frees) gets for each object the index in
 * h->refs of the reference that reaches it on a shortest chain from a root,
 * DSL_VIA_ROOT for a root itself, DSL_VIA_NONE if no root reaches it. The
 * roots that outlive a thread (class objects, JNI globals, the VM's own)
 * come first, then the threads, then stack and JNI local references: each
 * starts a path only to what the ones before do not reach (a local
 * variable, or compiled code's constant, holding a static's value is not
 * who keeps it; nor is a thread whose field points into a structure for a
 * while - a server's worker has its web application's class loader as its
 * context class loader during a request only, and the shortest path to
 * Tomcat's session map went through one in one snapshot of three). A live
 * thread (h->threads) met from the first kind, as a thread group's, counts
 * as a thread: what lies beyond it waits for the threads' turn. Roots are taken in the
 * heap's order and references in each object's order, so among equally
 * short chains the first found is kept. With @parent, *@parent (malloc'd,
 * the caller frees) gets each object's referrer on that chain: the owner of
 * refs[via[o]] (undefined where via is DSL_VIA_ROOT or _NONE), as the search
 * meets it - what a caller would otherwise find with a pass over every
 * reference. Returns 0 or -ENOMEM.
 */
int rootpaths_build(const struct dsl_heap *h, uint32_t **via, uint32_t **parent);

#endif
