/*
 * heapgrowth.h - what keeps growing in a JVM's heap, and who holds it: from
 * several whole-heap snapshots of one JVM (the abstract heap of dsl/dsl.h
 * with its shortest root paths), exactly, with no sampling.
 *
 * Objects are matched across snapshots by where they sit, not by identity
 * (a collector moves them; their ids are each walk's own): each object's
 * place is its shortest reference chain from a GC root written as the
 * root (a static field, a thread, a local variable of a thread, ...) and the
 * fields and array elements it goes through, array indices left out and an
 * object reached from one of its own class through a field (a list's next,
 * a map bin's chain, a tree's children) at its referrer's place. Below an
 * application's object (a class not the JDK's, not a root) the chain starts
 * again from that object's class: "StandardManager.sessions -> ... ->
 * StandardSession" is one place however the manager is reached - the
 * shortest root path to it can change between snapshots (a web server's
 * worker thread holds the application's class loader during a request
 * only; a static's chain turns shorter than another's). All objects of one
 * class at one place are one group: a HashMap's entries are
 * "static LeakIndex.BY_ID -> HashMap.table -> [] -> HashMap$Node".
 *
 * A group grows when it has more objects in every snapshot than in the one
 * before (and at least min_growth more in the last than in the first). A
 * cache filled once does not; a bounded cache that replaces its entries
 * (an LRU) does not; the live part of the allocation churn goes up and down.
 * Each growing group is charged to its holder: the object its growth hangs
 * off - climbing from the group's parent through the JDK's own singleton
 * objects (a map's table, the map) up to the first object that is a class,
 * a root or an application object's field - so "static LeakIndex.BY_ID
 * (java.util.HashMap)" holds its nodes, keys and values. Groups under a
 * growing group go with that group's holder.
 *
 * The confidence stated is what was measured: growth in every one of the
 * n intervals, which a count that only fluctuates shows with chance 1/(n+1)!
 * at most (its n+1 values in increasing order), and the size of the growth.
 * Ages (seed 002's, per holder): the objects a holder gained in interval i
 * are still there after the GCs counted from the end of interval i to the
 * last snapshot.
 *
 * Memory: 36 bytes per object of the snapshot being added (freed after; 4
 * kept for the last one's objects), and ~100 bytes per group per snapshot.
 */
#ifndef MEMTRACE_HEAPGROWTH_H
#define MEMTRACE_HEAPGROWTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dsl/dsl.h"

#define HEAPGROWTH_MAX_SNAPS 32

struct heapgrowth;

/* One class growing under a holder. */
struct heapgrowth_class {
	const char *name;                   /* owned by the heapgrowth */
	int64_t growth;                     /* objects, last snapshot minus first */
	int64_t bytes;                      /* their shallow bytes */
	uint64_t count[HEAPGROWTH_MAX_SNAPS]; /* objects of the class under the holder */
	const char *place;                  /* the group's place below the holder ("table -> []") */
};

/* A holder of growth (a suspect). */
struct heapgrowth_holder {
	const char *path;                   /* root -> ... -> holder, "static A.B -> java.util.HashMap" */
	const char *cls;                    /* the holder's class */
	int64_t growth;                     /* objects gained under it, first to last */
	int64_t bytes;                      /* their shallow bytes */
	uint64_t count[HEAPGROWTH_MAX_SNAPS]; /* objects of its growing groups, per snapshot */
	uint64_t retained[HEAPGROWTH_MAX_SNAPS]; /* the holder's retained bytes where known,
					     * else 0 (a holder that is not one object) */
	bool one_object;                    /* the holder is one object in every snapshot */
	uint32_t intervals;                 /* intervals it grew in (= n: all of them) */
	double chance;                      /* 1/(n+1)!: a fluctuating count's chance */
	struct heapgrowth_class *classes;   /* most growth first */
	uint32_t nclasses;
	/* representative objects of the holder's growing groups in the last
	 * snapshot added, for paths (indices into that heap; DSL_NOOBJ none) */
	uint32_t holder_obj, sample_obj;
	int32_t group;                      /* (internal) its place */
};

struct heapgrowth_result {
	struct heapgrowth_holder *holders;  /* most objects gained first */
	uint32_t nholders;
	uint32_t nsnaps;
	double t[HEAPGROWTH_MAX_SNAPS];     /* each snapshot's time, s since the first */
	uint64_t gcs[HEAPGROWTH_MAX_SNAPS]; /* GCs the JVM had done by each */
	uint64_t groups;                    /* places seen */
	uint64_t growing_groups;
};

struct heapgrowth_opts {
	uint64_t min_growth;  /* objects a group gains, first to last (0: 32) */
};

/* heapgrowth_new - an empty series (NULL on ENOMEM). */
struct heapgrowth *heapgrowth_new(void);
/* heapgrowth_free - free @g. No operation on NULL. */
void heapgrowth_free(struct heapgrowth *g);

/*
 * heapgrowth_add - one more snapshot @h (with h->root_via; h->retained if
 * the holders' retained sizes are wanted for it) taken at @t seconds, when
 * the JVM had done @gcs collections. @h is read now and may be freed after.
 * Returns 0, -E2BIG past HEAPGROWTH_MAX_SNAPS, -EINVAL without root_via, or
 * -ENOMEM.
 */
int heapgrowth_add(struct heapgrowth *g, const struct dsl_heap *h, double t, uint64_t gcs);

/*
 * heapgrowth_rank - the holders whose groups grew in every interval of the
 * snapshots added so far (at least two), into @r (owned by @g: valid until
 * the next call or heapgrowth_free()). The representative objects are the
 * last added heap's. Returns 0, -EINVAL with fewer than two snapshots, or
 * -ENOMEM.
 */
int heapgrowth_rank(struct heapgrowth *g, const struct heapgrowth_opts *o,
		    struct heapgrowth_result *r);

/* heapgrowth_holder_of - after heapgrowth_rank(): the index in its result
 * of the holder whose growth object @obj of the last heap added is part of,
 * or -1 (not in a growing group). */
int heapgrowth_holder_of(const struct heapgrowth *g, uint32_t obj);

/* heapgrowth_internal - is @cls one of the JDK's own classes (java., javax.,
 * jdk., sun., com.sun.; arrays of them and of primitives)? Pure. */
bool heapgrowth_internal(const char *cls);

#endif
