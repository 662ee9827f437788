/*
 * gcmeters.h - Micrometer's JVM GC meters (JvmGcMetrics) computed from
 * memtrace's collection records (gcpair.h), defined as Micrometer defines
 * them from GarbageCollectorMXBean's notifications: one record is one
 * notification (a memory manager's cycle), with every pool's usage before
 * and after it.
 *
 *   allocated  jvm.gc.memory.allocated: the allocation pool's ("... Eden
 *              Space") used before a collection minus its used after the
 *              previous one, when positive. memtrace counts from the second
 *              collection it sees (the first is the baseline: what the pool
 *              held after the collection before memtrace is unknown).
 *   promoted   jvm.gc.memory.promoted: the long-lived pools' ("... Old Gen",
 *              "Tenured Gen") used after minus before, when positive; only
 *              for a generational heap (two or more heap pools not named
 *              "tenured").
 *   live       jvm.gc.live.data.size: the long-lived pools' used after a
 *              collection that shrank them or that is an old-generation
 *              collection ("G1 Old Generation", "PS MarkSweep", ...).
 *   max_data   jvm.gc.max.data.size: their max at that moment (first set at
 *              the first record).
 * Pure (no I/O); the caller exports the figures.
 */
#ifndef MEMTRACE_GCMETERS_H
#define MEMTRACE_GCMETERS_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/gcpair.h"

struct gcmeters {
	bool baseline;         /* a record with the allocation pool was seen */
	bool generational;
	uint64_t alloc_after;  /* the allocation pool's used after the last record */
	uint64_t allocated;
	uint64_t promoted;
	bool have_live, have_max;
	uint64_t live;
	uint64_t max_data;
};

/* gcmeters_init - zero @g. */
void gcmeters_init(struct gcmeters *g);
/* gcmeters_record - account record @r (records in completion order). */
void gcmeters_record(struct gcmeters *g, const struct gc_record *r);

/* Micrometer's pool and collector classes (JvmMemory, GcGenerationAge). */
bool gcmeters_allocation_pool(const char *pool);
bool gcmeters_long_lived_pool(const char *pool);
bool gcmeters_old_collector(const char *gc);

/*
 * The maximum of a timer over a sliding window, as Micrometer's TimeWindowMax
 * with its defaults (2 minutes in 3 buckets): every value goes into all
 * buckets, every 40 s the current bucket is cleared and the next becomes
 * current; the maximum shown is the current bucket's, which covers the last
 * 80 to 120 s.
 */
#define GCMETERS_WINDOW_NS (120ull * 1000000000ull)
#define GCMETERS_WINDOW_BUCKETS 3

struct winmax {
	uint64_t next_rotate;  /* monotonic ns; 0: not started */
	int cur;
	double b[GCMETERS_WINDOW_BUCKETS];
};

/* winmax_record - count value @v at monotonic @now_ns. */
void winmax_record(struct winmax *w, uint64_t now_ns, double v);
/* winmax_get - the maximum at @now_ns (0 when nothing in the window). */
double winmax_get(struct winmax *w, uint64_t now_ns);

#endif
