/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gc.h - the record bpf/gc.bpf.c sends to user/probe/gctrace.c.
 *
 * One record per hit of hotspot:gc__begin, gc__end, mem__pool__gc__begin and
 * mem__pool__gc__end. Manager and pool names travel as addresses in the JVM
 * (HotSpot's names are C strings that live as long as the JVM): user space
 * reads each once through /proc/PID/mem and caches it, so the probe does not
 * copy strings (measured: two string reads cost more than the rest of the
 * program). Fixed-width types only: both sides read this layout.
 *
 * The cause of a collection comes from a uprobe at the entry of
 * GCMemoryManager::gc_end(..., GCCause::Cause cause, bool, const char *message),
 * the function that fires the cycle's mem__pool__gc__end probes (they are
 * inside it): its MT_GC_CAUSE record precedes, on the same thread, the pool
 * ends of the cycle it belongs to. The number is GCCause::Cause (named per
 * JVM by user/jvm/gccause.c), the message the GarbageCollectorMXBean
 * notification's action ("end of minor GC", "end of major GC"); the record
 * also carries the GCMemoryManager's address (its `this`), whose name user
 * space reads once (jvm/gcmanager.c): the pauses of ZGC and Shenandoah fire
 * no pool probes, and that name is the only place their manager is named.
 *
 * Stop-the-world pauses come from uprobes at GCTimer::register_gc_pause_start
 * (this, const char *name, const Ticks &start) and register_gc_pause_end
 * (this, const Ticks &end): the timer JFR's jdk.GCPhasePause and
 * jdk.GarbageCollection's sumOfPauses are made of. Out of line in libjvm they
 * are called by the pauses of concurrent cycles: G1's remark and cleanup,
 * every ZGC and Shenandoah pause (the stop-the-world collectors' own pause
 * timer is inlined; their collections are their pauses). The records carry
 * the Ticks themselves, so a pause lasts what JFR says it lasts.
 *
 * Every collection JFR reports as a jdk.GarbageCollection begins and ends at
 * GCTracer::report_gc_start(this, GCCause::Cause, const Ticks &) and
 * GCTracer::report_gc_end(this, const Ticks &, TimePartitions *), out of line
 * for every collector (G1's young and full collections and its concurrent
 * cycle, Parallel's, Serial's, ZGC's and Shenandoah's cycles): their Ticks
 * give a memory manager's cycle on the same thread JFR's duration.
 */
#ifndef MEMTRACE_GC_H
#define MEMTRACE_GC_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum mt_gc_kind {
	MT_GC_BEGIN = 1,      /* hotspot:gc__begin(bool is_full) */
	MT_GC_END = 2,        /* hotspot:gc__end() */
	MT_POOL_BEGIN = 3,    /* hotspot:mem__pool__gc__begin(mgr, len, pool, len, init, used, committed, max) */
	MT_POOL_END = 4,      /* hotspot:mem__pool__gc__end(same arguments) */
	MT_GC_CAUSE = 5,      /* uprobe GCMemoryManager::gc_end: cause, action, manager */
	MT_PAUSE_BEGIN = 6,   /* uprobe GCTimer::register_gc_pause_start: name, ticks */
	MT_PAUSE_END = 7,     /* uprobe GCTimer::register_gc_pause_end: ticks */
	MT_TRACE_BEGIN = 8,   /* uprobe GCTracer::report_gc_start: ticks */
	MT_TRACE_END = 9,     /* uprobe GCTracer::report_gc_end: ticks */
};

struct mt_gc_raw {
	__u64 ts_ns;    /* bpf_ktime_get_ns() at the probe */
	__u32 tid;      /* kernel tid of the firing thread (host namespace) */
	__u32 kind;     /* enum mt_gc_kind */
	__u32 is_full;  /* MT_GC_BEGIN only */
	__u32 cause;    /* MT_GC_CAUSE: GCCause::Cause */
	__u64 manager;  /* pool events: address of the manager's name in the JVM;
			 * MT_GC_CAUSE: address of the GCMemoryManager itself;
			 * MT_PAUSE_BEGIN: address of the pause's name ("Pause Remark") */
	__u64 pool;     /* pool events: address of the pool's name in the JVM */
	__u64 init;     /* pool events: MemoryUsage of the pool */
	__u64 used;
	__u64 committed;
	__u64 max;
	__u64 action;   /* MT_GC_CAUSE: address of the end message in the JVM */
	__u64 ticks;    /* MT_PAUSE_*: the Ticks GCTimer was given (os::elapsed_counter,
			 * ns on Linux): the pause's own clock, as JFR's */
};

#endif /* MEMTRACE_GC_H */
