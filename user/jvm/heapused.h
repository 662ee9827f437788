/*
 * heapused.h - the heap pools' used bytes now, read from the JVM's memory
 * through VMStructs: the figures MemoryPoolMXBean.getUsage().getUsed()
 * returns, from the same fields HotSpot's pools read them from.
 *   G1        G1MonitoringSupport::_eden_space_used, _survivor_space_used,
 *             _old_gen_used (G1CollectedHeap::_g1mm, _monitoring_support on
 *             JDK 21+)
 *   Parallel  ParallelScavengeHeap::_young_gen->_eden_space / _from_space,
 *             _old_gen->_object_space: MutableSpace _top - _bottom
 *   Serial    the heap's _young_gen->_eden_space / _from_space,
 *             _old_gen->_the_space: ContiguousSpace _top - _bottom
 * The collector is the heap's dynamic type (its vtable, from libjvm's
 * .symtab), or, without symbols, the one the pool names say (@hint). Other
 * collectors (ZGC, Shenandoah) and the non-heap pools have no figure here.
 * (hsperfdata is no substitute: JDK 25 updates its space counters at
 * collections only.)
 */
#ifndef MEMTRACE_HEAPUSED_H
#define MEMTRACE_HEAPUSED_H

#include <stdint.h>

struct mt_vmstructs;

enum heapused_kind {
	HEAPUSED_NONE,
	HEAPUSED_G1,
	HEAPUSED_PARALLEL,
	HEAPUSED_SERIAL,
};

/* The spaces, in this order. */
enum heapused_space { HEAPUSED_EDEN, HEAPUSED_SURVIVOR, HEAPUSED_OLD, HEAPUSED_NSPACES };

struct heapused {
	const struct mt_vmstructs *vs;
	enum heapused_kind kind;
	/* G1: the monitoring support and its three used fields */
	uint64_t g1mm, g1_off[HEAPUSED_NSPACES];
	/* Parallel, Serial: each space object and the offsets of _bottom, _top in it */
	uint64_t space[HEAPUSED_NSPACES];
	uint64_t off_bottom, off_top;
};

/*
 * heapused_open - resolve the layout of @vs's heap into @h (@hint: a heap
 * pool name the JVM reported, e.g. "PS Eden Space", or NULL). @vs must
 * outlive @h. Returns 0, -ENOENT (a collector or layout this does not
 * know), or -errno of a read. Prints nothing.
 */
int heapused_open(const struct mt_vmstructs *vs, const char *hint, struct heapused *h);

/* heapused_space - the space a MemoryPoolMXBean name stands for ("G1 Eden
 * Space", "PS Survivor Space", "Tenured Gen", ...), or -1. */
int heapused_space(const char *pool);

/* heapused_pool_name - the MemoryPoolMXBean name of space @s under @h's
 * collector ("G1 Eden Space", "PS Old Gen", "Tenured Gen"), NULL if none. */
const char *heapused_pool_name(const struct heapused *h, enum heapused_space s);

/* heapused_read - the used bytes of space @s now: 0 or -errno. */
int heapused_read(const struct heapused *h, enum heapused_space s, uint64_t *used);

#endif
