/*
 * gcpair.h - pair HotSpot's GC probe events into collection records.
 *
 * Pure logic (no BPF, no I/O), fed struct mt_gc_event in ring-buffer order.
 *
 * What a "collection" is: one memory-manager cycle, i.e. the events
 * mem__pool__gc__begin (one per pool) ... mem__pool__gc__end (one per pool)
 * that one GCMemoryManager fires (TraceMemoryManagerStats in HotSpot). This
 * is the unit java.lang.management's GarbageCollectorMXBean counts and, for
 * stop-the-world collectors, the unit JFR's jdk.GarbageCollection reports
 * (G1New/G1Full, ParallelScavenge/ParallelOld, DefNew/SerialOld).
 * gc__begin/gc__end bracket the VM operation (SvcGCMarker): one operation can
 * hold two cycles (Parallel's young collection escalating to a full one) or
 * none (the pauses of a concurrent cycle).
 *
 * Each record has a kind (enum gc_kind): a cycle that runs inside a VM
 * operation is a stop-the-world collection (young or full: the whole record
 * is a pause); a cycle begun on another thread than the operations' (ZGC's
 * driver, Shenandoah's control thread) is a concurrent cycle, never a pause,
 * whatever pauses happen while it runs; and each pause of a concurrent cycle
 * is a record of its own, kind "pause":
 * - timed by GCTimer's pause registration (MT_PAUSE_BEGIN/END, memtrace/gc.h):
 *   named as the JVM names it ("Pause Remark", "Pause Mark Start"), lasting
 *   what its Ticks say (JFR's figures); the cause heard on its thread while it
 *   runs (its pause manager's gc_end: "ZGC Minor Pauses", "end of GC pause")
 *   is its cause, action and manager; a memory-manager cycle that ends on its
 *   thread inside it (JDK 21+ G1's "G1 Concurrent GC", which wraps remark and
 *   cleanup) is the same pause: one record, the cycle's pools and manager.
 *   Its end inside a VM operation still open (Shenandoah: the operation
 *   wraps the pause) waits for the operation's end, when the cause has come.
 * - without those uprobes (a libjvm without .symtab): the VM operation of
 *   gc__begin/gc__end that holds no cycle, unnamed, and a cycle that wraps a
 *   VM operation of its own thread (G1 Concurrent GC).
 *
 * A collection as JFR counts it (GCTracer::report_gc_start/end: MT_TRACE_*)
 * gives the memory-manager cycle of its thread that it overlaps (a thread
 * runs one collection at a time) its duration (its Ticks: JFR's figure) and
 * its start: one still open when the cycle ends (G1's) holds the cycle's
 * record until it ends; one that ended first (Serial's, inside the cycle;
 * Shenandoah's, begun before it) is taken when the cycle ends. Records timed
 * so say `timed`; without those uprobes a cycle lasts its memory manager's
 * window.
 *
 * Pool events are keyed by (manager, pool) and cycles by manager, never by
 * thread alone: BCC's ugc/javagc key begin records per thread and overwrite
 * one pool's "before" with the next pool's.
 *
 * The cause and action of a cycle come from an MT_GC_CAUSE event (the entry
 * of GCMemoryManager::gc_end, see memtrace/gc.h), which precedes the cycle's
 * pool ends on the same thread: the next pool end of that thread takes it.
 */
#ifndef MEMTRACE_GCPAIR_H
#define MEMTRACE_GCPAIR_H

#include <stdbool.h>
#include <stdint.h>

#include "memtrace/gc.h"

#define MT_GC_NAME_LEN 64
#define MT_GC_MAX_POOLS 16
#define MT_GC_MAX_CYCLES 4 /* managers with an open cycle at once */
#define MT_GC_MAX_CAUSES 4 /* threads with a cause waiting for its pool ends */
#define MT_GC_MAX_PAUSES 4 /* threads with a timed pause open at once */
#define MT_GC_MAX_TRACES 8 /* threads with a JFR collection (GCTracer) at once */
#define MT_GC_MAX_MANAGERS 8 /* memory managers remembered as begun (edge counting) */

/* A probe hit with its names resolved (user/probe/gctrace.c builds these from
 * struct mt_gc_raw). */
struct mt_gc_event {
	uint64_t ts_ns;
	uint32_t tid;
	uint32_t kind;         /* enum mt_gc_kind */
	uint32_t is_full;
	uint64_t init, used, committed, max;
	char manager[MT_GC_NAME_LEN]; /* MT_POOL_*: the cycle's; MT_GC_CAUSE: the manager
				       * whose gc_end it is ("" unknown) */
	char pool[MT_GC_NAME_LEN];
	char cause[MT_GC_NAME_LEN];   /* MT_GC_CAUSE: GCCause::to_string's name */
	char action[MT_GC_NAME_LEN];  /* MT_GC_CAUSE: "end of minor GC", ... */
	char pause[MT_GC_NAME_LEN];   /* MT_PAUSE_BEGIN: the pause's name ("Pause Remark") */
	uint64_t ticks;               /* MT_PAUSE_*: GCTimer's Ticks (ns) */
};

/* What a record is. */
enum gc_kind {
	GC_KIND_YOUNG = 0, /* a stop-the-world collection (a cycle inside a VM operation) */
	GC_KIND_FULL,      /* the same by a full collector ("G1 Old Generation", "PS MarkSweep") */
	GC_KIND_PAUSE,     /* a stop-the-world pause of a concurrent cycle: G1's remark and
			    * cleanup, every ZGC and Shenandoah pause */
	GC_KIND_CYCLE,     /* a concurrent cycle ("ZGC Minor Cycles", "Shenandoah Cycles"):
			    * it runs beside the application; not a pause */
};

struct gc_pool {
	char name[MT_GC_NAME_LEN];
	bool heap;             /* a Java heap pool (not Metaspace/CodeHeap) */
	bool ended;
	uint64_t used_before;
	uint64_t used_after;
	uint64_t committed;    /* after the collection */
	uint64_t max;          /* after the collection; UINT64_MAX if undefined */
};

struct gc_record {
	uint64_t seq;          /* 1, 2, ... in order of completion */
	enum gc_kind kind;
	uint64_t start_ns;     /* monotonic ns: first pool begin (or gc__begin) */
	uint64_t end_ns;       /* monotonic ns: entry of GCMemoryManager::gc_end (the
	                        * cause event), else last pool end (or gc__end) */
	uint64_t vmop_ns;      /* gc__begin..gc__end of the enclosing VM op, 0 if none */
	bool full;
	bool in_vmop;          /* inside gc__begin/gc__end */
	bool timed;            /* the duration is the JVM's own clock's (GCTimer's pause,
				* GCTracer's collection): JFR's */
	char manager[MT_GC_NAME_LEN]; /* "" for a pause without a memory manager */
	char pause[MT_GC_NAME_LEN];   /* GC_KIND_PAUSE: the JVM's name of the pause ("Pause
				       * Mark Start"); "" when only gc__begin/end saw it */
	char cause[MT_GC_NAME_LEN];   /* "G1 Evacuation Pause", ...; "" unknown */
	char action[MT_GC_NAME_LEN];  /* "end of minor GC", ...; "" unknown */
	int npools;
	struct gc_pool pools[MT_GC_MAX_POOLS];
};

/* Called for each finished record; @rec is valid only during the call. */
typedef void (*gcpair_cb)(const struct gc_record *rec, void *ctx);

struct gc_cycle {
	bool open;
	bool wraps;            /* open when a VM operation began on its thread: that pause */
	uint32_t tid;          /* the thread of its first pool begin */
	struct gc_record rec;
	int nbegun, nended;
	uint64_t cause_ns;     /* ts of the cause event taken, 0 if none */
};

/* A collection as JFR counts it (GCTracer) on thread @tid. */
struct gc_trace {
	uint32_t tid;          /* 0: free */
	bool open;             /* begun, not ended */
	bool held;             /* open, holding a cycle that ended inside it (rec) */
	uint64_t ts_ns;        /* its begin */
	uint64_t ticks;        /* its begin's Ticks */
	uint64_t dur_ns;       /* ended: its Ticks' difference (0: unreadable) */
	struct gc_record rec;
};

/* A pause timed by GCTimer on thread @tid. */
struct gc_pause {
	uint32_t tid;          /* 0: free */
	bool ended;            /* ended inside a VM operation still open: emitted at its end */
	bool merged;           /* a memory-manager cycle ended inside it (rec holds it) */
	uint64_t ticks;        /* GCTimer's Ticks at the begin */
	struct gc_record rec;  /* the record being built */
};

/* A cause heard on thread @tid, for the next pool end of that thread. */
struct gc_cause_wait {
	uint32_t tid;          /* 0: free */
	uint64_t ts_ns;        /* when GCMemoryManager::gc_end was entered */
	char cause[MT_GC_NAME_LEN];
	char action[MT_GC_NAME_LEN];
};

struct gcpair {
	gcpair_cb cb;
	void *ctx;
	uint64_t seq;
	/* the open VM operation (collections run on one VM thread at a time) */
	bool vmop_open;
	uint32_t vmop_tid;
	bool vmop_full;
	uint64_t vmop_start;
	int vmop_cycles;       /* cycles completed inside the open operation */
	bool vmop_timed;       /* a timed pause ran in or around the open operation */
	struct gc_cycle cycles[MT_GC_MAX_CYCLES];
	struct gc_pause pauses[MT_GC_MAX_PAUSES];
	struct gc_trace traces[MT_GC_MAX_TRACES];
	struct gc_cause_wait causes[MT_GC_MAX_CAUSES];
	/* the JVM's Ticks against the probes' clock (gcpair.c, tick_time()) */
	int64_t tick_off;         /* the least probe time - Ticks seen */
	bool tick_off_set;
	/* what has begun since the probes attached: an end of a kind (or of a
	 * memory manager) not begun yet belongs to a collection in flight then */
	bool begun_vmop, begun_pause, begun_trace;
	int nmanagers;
	char managers[MT_GC_MAX_MANAGERS][MT_GC_NAME_LEN];
	/* anomalies: counted, never hidden */
	uint64_t unpaired_begin;  /* a begin whose end never came (or came twice) */
	uint64_t unpaired_end;    /* an end without its begin */
	uint64_t overflow;        /* pools/cycles beyond the fixed limits */
	/* not anomalies: the events of a collection in flight when the probes
	 * attached (its ends, before any begin of their kind or manager) or when
	 * they stopped (its begins, still open at gcpair_finish()). A ZGC cycle
	 * has one begin and one end per memory pool, 6 on JDK 17: two such
	 * cycles made "unpaired 12" in stop 64's CI (e2e gc_collectors). */
	uint64_t in_flight;
};

/* gcpair_init - reset @gp; @cb receives each finished record. */
void gcpair_init(struct gcpair *gp, gcpair_cb cb, void *ctx);
/* gcpair_feed - consume one event in ring-buffer order. */
void gcpair_feed(struct gcpair *gp, const struct mt_gc_event *e);
/* gcpair_finish - count what is still open as in flight (at exit); emit what
 * only waited for a later event. */
void gcpair_finish(struct gcpair *gp);
/* gcpair_is_heap_pool - true for Java heap pools by HotSpot pool name. */
bool gcpair_is_heap_pool(const char *name);
/* gcpair_manager_is_full - true for managers that only run full collections. */
bool gcpair_manager_is_full(const char *manager);
/* gcpair_kind_name - "young", "full", "pause" or "cycle". */
const char *gcpair_kind_name(enum gc_kind k);
/* gcpair_is_pause - true when @r stopped the application (every kind but a cycle). */
bool gcpair_is_pause(const struct gc_record *r);

#endif
