/*
 * walkestimate.h - what a heap walk in a pause will cost the JVM, said before
 * it pauses: the objects it will visit times the cost of one.
 *
 * The objects: the heap's used bytes from the JVM's hsperfdata counters (the
 * figures jstat shows: every generation's spaces; a heap with an eden and
 * survivors leaves its eden out once it has had a young collection: then
 * mostly garbage that the walk never visits),
 * divided by a mean object size (of used heap: garbage included), and never
 * fewer than WALKEST_OBJECTS_PER_CLASS a loaded class. The cost: the walk's time per object. Both
 * start from figures measured here (WALKEST_MEAN_BYTES, WALKEST_NS_PER_OBJECT:
 * docs/measurements.md) and, once a walk of this session has run, are that
 * walk's own (its objects, bytes and the JVM's pause). Pure but for
 * walkestimate_read(); used by heap/snaptake.c and `memtrace doctor`.
 */
#ifndef MEMTRACE_WALKESTIMATE_H
#define MEMTRACE_WALKESTIMATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_perfdata;

/* Bytes of used heap per object a walk visits, when none was measured: the
 * walks measured here had 36-70 under ZGC and Shenandoah (garbage included)
 * and 100-160 on a JDK's own objects under G1 (the eden left out). */
#define WALKEST_MEAN_BYTES 64
/* A walk in a pause, per object, when none was measured (ns): JVMTI's
 * FollowReferences in a pause, measured 170-1270 ns on 1-4 M objects under
 * ZGC, Shenandoah and G1, JDK 17 and 25, on a loaded 2-core VM; a walk that
 * tags every object (ids that last across a session's walks) 2.0-2.3 us. */
#define WALKEST_NS_PER_OBJECT 500
#define WALKEST_NS_PER_OBJECT_TAGGED 2000
/* Objects a loaded class brings at the least (its mirror, its strings, its
 * loader's and the JDK's own objects): an idle JVM's walk visits 27-42 k
 * objects for 600-860 classes. The floor of an estimate whose used heap says
 * less (G1's counters on JDK 25 move at collections only). */
#define WALKEST_OBJECTS_PER_CLASS 32
/* The pause a walk may take without the user's consent (--max-pause). */
#define WALKEST_DEFAULT_BOUND_MS 100

struct walkestimate {
	uint64_t used;            /* heap bytes the estimate starts from */
	bool eden_out;            /* an eden was left out of them */
	uint64_t classes;         /* loaded classes (the floor: WALKEST_OBJECTS_PER_CLASS each) */
	double mean_bytes;        /* used bytes per object a walk visits */
	double ns_per_object;
	bool measured;            /* mean_bytes and ns_per_object from a walk of this JVM */
	uint64_t objects;         /* used / mean_bytes, at least the classes' floor */
	uint64_t pause_ns;        /* objects * ns_per_object */
};

/*
 * walkestimate_read - the used heap of the JVM whose counters @pd reads into
 * @e, with the default mean and cost (of a walk that tags every object when
 * @tagged). Returns 0, or -ENOENT when the counters have no heap spaces
 * (nothing is estimated). Prints nothing.
 */
int walkestimate_read(const struct mt_perfdata *pd, bool tagged, struct walkestimate *e);
/* walkestimate_learn - after a walk that @e estimated (its used bytes read
 * before it) visited @objects objects in a pause of @pause_ns: its cost per
 * object, and its used bytes per object (garbage included, so the next
 * estimate from the used heap counts what a walk visits); nothing when it
 * visited none or took no time. Recomputes @e. */
void walkestimate_learn(struct walkestimate *e, uint64_t objects, uint64_t pause_ns);
/* walkestimate_compute - @e's objects and pause from its used bytes, mean and cost. */
void walkestimate_compute(struct walkestimate *e);
/* walkestimate_text - "about 1.1 s: 71.3 MiB used / 32 B an object = 2.2 M objects
 * x 500 ns" into @buf; returns @buf. */
const char *walkestimate_text(const struct walkestimate *e, char *buf, size_t n);

#endif
