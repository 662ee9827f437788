/* SPDX-License-Identifier: GPL-2.0 */
/*
 * park.h - java.util.concurrent parking as bpf/park.bpf.c aggregates it for
 * user/probe/parktrace.c, from the hotspot:thread__park__begin/end USDT
 * probes (no JVM flag needed). thread__unpark is not traced: it fires on the
 * releasing thread, on the lock hand-over's critical path, and cost a fair
 * lock's throughput more than both park probes together (bench/locks_overhead.sh).
 *
 * At park__begin the program reads, from the parking thread's
 * java.lang.Thread, the object it parks on (Thread.parkBlocker, set by
 * LockSupport.park(blocker)), that object's class, and - at the offset of
 * AbstractOwnableSynchronizer.exclusiveOwnerThread - the thread holding it
 * (meaningful only when the blocker's class is an AOS: user space checks).
 * At park__end it adds the park to the blocker's counters - or, for the
 * collector (targ_stream), sends begin and end as events into its ring
 * buffer instead (include/memtrace/jvmev.h: MT_J_PARK_*, MT_J_SLEEP_*).
 * With stacks, monitor__contended__enter/entered count contended monitor
 * entries per (monitor, contending thread's stack) too (mon_stacks).
 * A uprobe on JavaThread::run maps each new Java thread's tid to its
 * JavaThread* before it can park or contend.
 */
#ifndef MEMTRACE_PARK_H
#define MEMTRACE_PARK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MT_PARK_HIST 40          /* log2 buckets of the parked time in ns */
#define MT_PARK_MAX_LOCKS 16384  /* distinct (class, blocker, timed) keys */
#define MT_PARK_MAX_THREADS 65536

/* How a thread waited (mt_park_key.timed). */
enum mt_park_how {
	MT_PARK_UNTIMED = 0, /* LockSupport.park: until unparked */
	MT_PARK_TIMED = 1,   /* parkNanos / parkUntil */
	MT_PARK_SLEEP = 2,   /* Thread.sleep (thread__sleep__begin/end): no blocker */
};

/* One lock as parks see it. klass 0: parked without a blocker (LockSupport.park()). */
struct mt_park_key {
	__u64 klass;     /* Klass* of the blocker */
	__u64 blocker;   /* the blocker's address (moves with a moving collector) */
	__u32 timed;     /* enum mt_park_how */
	__u32 pad;
	__u64 jstack;    /* the parking thread's Java stack (key in `jstacks`), 0: not walked */
};

struct mt_park_val {
	__u64 count;         /* parks ended */
	__u64 total_ns;      /* time parked, summed */
	__u64 max_ns;
	__u64 with_owner;    /* parks that began while the owner slot was set */
	__u32 owner_tid;     /* the last owner seen (kernel tid), 0 none */
	__u32 waiter_tid;    /* the last parking thread */
	__u64 hist[MT_PARK_HIST]; /* hist[i]: parks of 2^i <= ns < 2^(i+1) */
};

/* A park under way (map park_inflight, by kernel tid). */
struct mt_park_inflight {
	__u64 ts;            /* bpf_ktime_get_ns() at park__begin; 0: none */
	struct mt_park_key key;
	__u32 owner_tid;
	__u32 pad;
};

#define MT_PARK_NAME_LEN 64

/* A Java thread's name from hotspot:thread__start (map park_names, by its tid). */
struct mt_park_name {
	char name[MT_PARK_NAME_LEN];
};

/* Settings user space may change after load (array map park_cfg, slot 0). */
struct mt_park_cfg {
	__u32 f_owner;       /* AbstractOwnableSynchronizer.exclusiveOwnerThread; 0 until its class loads */
	__u32 pad;
	__u64 parker_off;    /* learned: Parker* - JavaThread* (Parker is a JavaThread field) */
	__u64 parker_bad;    /* set when two threads disagreed on parker_off: not used then */
};

/*
 * With --stacks, the thread that contends for a monitor (the
 * hotspot:monitor__contended__enter/entered probes, which fire while
 * -XX:+DTraceMonitorProbes is on): its Java stack at the enter, per
 * (ObjectMonitor, stack) in map mon_stacks.
 */
struct mt_mon_key {
	__u64 monitor;   /* the ObjectMonitor* (the probes' monitor argument) */
	__u64 jstack;    /* the contending thread's Java stack (key in `jstacks`), 0: not walked */
};

struct mt_mon_val {
	__u64 count;     /* contended entries that ended (entered) */
	__u64 total_ns;  /* time blocked entering, summed */
	__u64 max_ns;
};

/* An entry under way (map mon_inflight, by kernel tid). */
struct mt_mon_inflight {
	__u64 ts;        /* 0: none */
	struct mt_mon_key key;
};

/* Per-CPU counters (array park_stats, slot = enum). */
enum mt_park_stat {
	MT_PARK_BEGIN,       /* park__begin hits of the target */
	MT_PARK_NO_THREAD,   /* JavaThread of the parking thread unknown: no blocker read */
	MT_PARK_NO_BEGIN,    /* park__end without a begin seen (attached mid-park) */
	MT_PARK_FULL,        /* the lock map was full: park not counted */
	MT_PARK_SLEEPS,      /* thread__sleep__begin hits */
	MT_PARK_MON_ENTER,   /* monitor__contended__enter hits (with --stacks) */
	MT_PARK_MON_NO_THREAD, /* ... whose JavaThread was unknown: no stack */
	MT_PARK_MON_FULL,    /* the monitor map was full: entry not counted */
	MT_PARK_MISSED,      /* filled by user space, not BPF: probe hits the kernel ran
			      * none of these programs for (recursion_misses) */
	MT_PARK_NSTATS,
};

#endif
