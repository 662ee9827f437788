/* SPDX-License-Identifier: GPL-2.0 */
/*
 * events.h - memtrace's one event model (docs/design.md idea 1, seed 003).
 *
 * Every event is an *entity* event (an entity comes into being, is defined,
 * or is reclaimed) or an *activity* event (something happens to entities
 * that exist). Entities are named by *scoped* identities: a type by its key
 * (the address of its name Symbol in the JVM), an object by its address, a
 * thread by its kernel tid, an invocation by (thread, depth). A scoped
 * identity may be reused once its entity is reclaimed; every creation binds
 * it anew and carries a fresh monitoring identity (uid) that is never reused.
 * Names (classes, threads, pools, VM operations) travel once, as an
 * MT_EV_NAME definition of a name id, and events carry the id.
 *
 * Fixed-width types only: the layout is the same in every producer (BPF
 * adapters, the JVMTI agent) and consumer (sequencer, recording, checker).
 */
#ifndef MEMTRACE_EVENTS_H
#define MEMTRACE_EVENTS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum mt_ev_kind {
	MT_EV_NONE = 0,
	/* entity events */
	MT_EV_TYPE_CREATE = 1,    /* id=type key, name=class name, v[0]=loader: the type exists */
	MT_EV_TYPE_LOAD = 2,      /* id=type key: the type is defined (after create) */
	MT_EV_TYPE_RECLAIM = 3,   /* id=type key: unloaded */
	MT_EV_OBJ_CREATE = 4,     /* id=address, ref=type key (0: unknown), v[0]=size */
	MT_EV_OBJ_RECLAIM = 5,    /* id=address */
	MT_EV_THREAD_CREATE = 6,  /* thread=id=tid, name, v[0]=Java thread id, v[1]=daemon */
	MT_EV_THREAD_RENAME = 7,  /* thread=id=tid, name: the new name */
	MT_EV_THREAD_DESTROY = 8, /* thread=id=tid */
	MT_EV_INV_ENTER = 9,      /* thread, aux=depth, name, v[0]=enum mt_inv_kind, v[1]=arg */
	MT_EV_INV_LEAVE = 10,     /* thread, aux=depth of the invocation left, v[0]: per kind
				   * (MT_INV_GC_PAUSE, MT_INV_GC_TRACE: its end's Ticks, 0 when
				   * inferred) */
	/* activity events */
	MT_EV_POOL_USAGE = 11,    /* thread, aux=enum mt_pool_phase, name=pool, name2=manager,
				   * v[0..3]=init, used, committed, max */
	MT_EV_ALLOC_SAMPLE = 12,  /* thread, ref=type key, v[0]=weight bytes, v[1]=size,
				   * v[2]=1 outside a TLAB, name2=its Java stack (0: none;
				   * the text is jstack/stacktext.h's form) */
	MT_EV_MON_ACQUIRE = 13,   /* thread, id=lock object */
	MT_EV_MON_RELEASE = 14,   /* thread, id=lock object */
	MT_EV_MON_WAIT_BEGIN = 15,/* thread, id=lock object, aux=enum mt_wait_kind, v[0]=timeout ms
				   * (parks and sleeps: see enum mt_wait_kind) */
	MT_EV_MON_WAIT_END = 16,  /* thread, id=lock object */
	MT_EV_REF = 17,           /* id=from object, ref=to object, name=field */
	MT_EV_LOST = 18,          /* v[0]=events lost, aux=enum mt_lost_source: a gap */
	/* the id service */
	MT_EV_NAME = 19,          /* id=name id; the text travels beside the event */
	/* activity events (later additions) */
	MT_EV_GC_CAUSE = 20,      /* thread, name=cause ("G1 Evacuation Pause"), name2=action
				   * ("end of minor GC"), v[0]=GCCause::Cause, ref=name id of
				   * the memory manager ("ZGC Minor Pauses"; 0: unknown): the
				   * cause of the collection whose pool readings (phase after)
				   * follow on this thread, or of the pause it happens in */
	MT_EV_KIND_COUNT,
};

/* Flags on a reported event (struct mt_ev.flags). */
#define MT_EVF_LAZY     0x1 /* a creation reported late, right before the first event needing it */
#define MT_EVF_INFERRED 0x2 /* not observed: implied by an observed event (a monitor held
			     * when released, a thread seen before its creation) */
#define MT_EVF_RESYNC   0x4 /* produced by resynchronisation after lost events or at the end */

/* What an invocation is (MT_EV_INV_ENTER v[0]). */
enum mt_inv_kind {
	MT_INV_METHOD = 0, /* a Java method (DTraceMethodProbes) */
	MT_INV_VMOP = 1,   /* a VM operation (hotspot:vmops__begin/end), v[1]=mode */
	MT_INV_GC = 2,     /* a collection (hotspot:gc__begin/end), v[1]=is_full */
	MT_INV_GC_PAUSE = 3, /* a stop-the-world pause of a concurrent cycle (GCTimer's pause
			      * registration, memtrace/gc.h): name=the pause's ("Pause
			      * Remark"), v[1]=its begin's Ticks (ns, the JVM's clock) */
	MT_INV_GC_TRACE = 4, /* a collection as JFR counts it (GCTracer::report_gc_start/end,
			      * memtrace/gc.h): v[1]=its begin's Ticks (ns) */
};

/* Which edge of a collection a pool usage reading belongs to (MT_EV_POOL_USAGE aux). */
enum mt_pool_phase {
	MT_POOL_PHASE_BEFORE = 0, /* hotspot:mem__pool__gc__begin */
	MT_POOL_PHASE_AFTER = 1,  /* hotspot:mem__pool__gc__end */
};

/* Why a thread waits (MT_EV_MON_WAIT_BEGIN aux). */
enum mt_wait_kind {
	MT_WAIT_ENTER = 0,  /* blocked entering a contended monitor */
	MT_WAIT_NOTIFY = 1, /* Object.wait() */
	MT_WAIT_PARK = 2,   /* LockSupport.park (java.util.concurrent): id=the blocker object
			     * (Thread.parkBlocker), or MT_WAIT_SELF(tid) without one;
			     * v[0]=the park's time (relative ns; epoch ms when v[1]=1;
			     * 0 and 0: untimed), v[2]=kernel tid of the blocker's owner
			     * when the thread parked (an AbstractOwnableSynchronizer
			     * that had an owner: contention), 0 none (waiting);
			     * v[3]=1: the blocker could not be read (the thread was
			     * not known yet), the wait is on MT_WAIT_SELF(tid) */
	MT_WAIT_SLEEP = 3,  /* Thread.sleep: id=MT_WAIT_SELF(tid), v[0]=millis */
};

/*
 * The object a thread waits on when it waits on none of its program's
 * objects (a park without a blocker, a sleep): one per thread, created
 * untyped before its first such wait and reclaimed before the thread's
 * destruction. Bit 63 is set in no user-space address.
 */
#define MT_WAIT_SELF(tid) ((1ull << 63) | (__u64)(tid))

/* Where events were lost (MT_EV_LOST aux). */
enum mt_lost_source {
	MT_LOST_KERNEL = 0, /* a BPF ring buffer was full */
	MT_LOST_INPUT = 1,  /* dropped by the producer (test harness, agent) */
};

struct mt_ev {
	__u64 ts;      /* CLOCK_MONOTONIC ns */
	__u16 kind;    /* enum mt_ev_kind */
	__u16 flags;   /* MT_EVF_* */
	__u32 aux;     /* per kind: depth, pool phase, wait kind, lost source */
	__u64 thread;  /* kernel tid of the thread the event happens on (0: none) */
	__u64 id;      /* scoped id of the entity the event is about */
	__u64 ref;     /* a second entity: an object's type, a reference's target */
	__u64 name;    /* name id (defined by an earlier MT_EV_NAME), 0: none */
	__u64 name2;   /* a second name id: the memory manager of a pool reading */
	__u64 v[4];    /* values, per kind */
	__u64 uid;     /* creation events: the entity's monitoring identity */
};

#endif /* MEMTRACE_EVENTS_H */
