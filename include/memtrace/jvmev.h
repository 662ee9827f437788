/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jvmev.h - the record bpf/jvmev.bpf.c sends to user/monitor/collector.c: one per hit
 * of the hotspot USDT probes that feed the event model (events.h): threads,
 * classes, VM operations, collections and pools, and monitors. All of them
 * go through one ring buffer so that their order per thread is the order
 * they happened in (a collection nests inside its VM operation).
 *
 * Strings that may die soon (class, thread, VM operation names) are copied
 * by the probe into name[], truncated to MT_JVMEV_NAME_LEN - 1 bytes (the
 * full length is in name_len); pool and manager names live as long as the
 * JVM and travel as addresses (a0, a1) that user space reads once.
 *
 * Allocation samples (TLAB refills, the scheme of bpf/alloc.bpf.c) come here
 * too when the collector is asked for them, so they stay ordered with the
 * class loads and thread starts they refer to.
 */
#ifndef MEMTRACE_JVMEV_H
#define MEMTRACE_JVMEV_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MT_JVMEV_NAME_LEN 128

enum mt_jvmev_kind {
	MT_J_THREAD_START = 1,  /* thread__start(name, len, java_tid, os_tid, daemon): a0=java_tid, a1=os_tid, a2=daemon */
	MT_J_THREAD_STOP,       /* thread__stop(same) */
	MT_J_CLASS_LOAD,        /* class__loaded(name, len, loader, shared): a0=&name (the type key), a1=loader, a2=shared */
	MT_J_CLASS_UNLOAD,      /* class__unloaded(same) */
	MT_J_VMOP_BEGIN,        /* vmops__begin(name, len, mode): a1=mode */
	MT_J_VMOP_END,          /* vmops__end(name, len, mode) */
	MT_J_GC_BEGIN,          /* gc__begin(is_full): a2=is_full */
	MT_J_GC_END,            /* gc__end() */
	MT_J_POOL_BEGIN,        /* mem__pool__gc__begin(mgr, len, pool, len, init, used, committed, max):
				 * a0=&mgr, a1=&pool, v[0..3] */
	MT_J_POOL_END,          /* mem__pool__gc__end(same) */
	MT_J_MON_ENTER,         /* monitor__contended__enter(java_tid, monitor, class, len): a0=java_tid, a1=monitor,
				 * v[0]=&class name (the type key) */
	MT_J_MON_ENTERED,       /* monitor__contended__entered(same) */
	MT_J_MON_EXIT,          /* monitor__contended__exit(same) */
	MT_J_MON_WAIT,          /* monitor__wait(java_tid, monitor, class, len, timeout_ms): a2=timeout */
	MT_J_MON_WAITED,        /* monitor__waited(java_tid, monitor, class, len) */
	MT_J_ALLOC,             /* uprobe AllocTracer::send_allocation_in_new_tlab / _outside_tlab:
				 * a0=Klass*, a1=type key (Klass::_name's Symbol body, as
				 * class__loaded passes it; 0 if unread), a2=weight bytes (the
				 * new TLAB's size, or the object's outside a TLAB),
				 * v[0]=object size, v[1]=1 outside a TLAB, v[2]=key of
				 * its Java stack in `jstacks` (jstack.h; 0: none) */
	MT_J_GC_CAUSE,          /* uprobe GCMemoryManager::gc_end (memtrace/gc.h): a0=GCCause::Cause,
				 * a1=&end message ("end of minor GC"), a2=the GCMemoryManager */
	/* From bpf/park.bpf.c (user/probe/parktrace.c streams them here when the
	 * collector asks: collector_enable_parks). Sent without name[]
	 * (MT_JVMEV_HEAD_LEN bytes). */
	MT_J_PARK_BEGIN,        /* thread__park__begin(Parker*, isAbsolute, time): a0=blocker (0: none,
				 * or not read), a1=its Klass*, a2=type key (its Klass::_name's
				 * Symbol body, 0 if unread), v[0]=time (ns, or epoch ms when
				 * absolute; 0 and relative: untimed), v[1]=isAbsolute,
				 * v[2]=owner's kernel tid (the blocker's
				 * AbstractOwnableSynchronizer.exclusiveOwnerThread, read for any
				 * class: user space checks the class), v[3]=MT_J_PARK_* flags */
	MT_J_PARK_END,          /* thread__park__end: a0=the blocker of the begin */
	MT_J_SLEEP_BEGIN,       /* thread__sleep__begin(millis): v[0]=millis */
	MT_J_SLEEP_END,         /* thread__sleep__end */
	/* The pauses of concurrent cycles (memtrace/gc.h), with name[] empty. */
	MT_J_PAUSE_BEGIN,       /* uprobe GCTimer::register_gc_pause_start: a0=&the pause's name,
				 * a1=its Ticks (ns) */
	MT_J_PAUSE_END,         /* uprobe GCTimer::register_gc_pause_end: a1=its Ticks (ns) */
	MT_J_TRACE_BEGIN,       /* uprobe GCTracer::report_gc_start: a1=its Ticks (ns) */
	MT_J_TRACE_END,         /* uprobe GCTracer::report_gc_end: a1=its Ticks (ns) */
	MT_J_KIND_COUNT,
};

/* MT_J_PARK_BEGIN v[3] */
#define MT_J_PARK_NO_THREAD 0x1 /* the parking thread's JavaThread was unknown: no blocker read */

struct mt_jvmev_raw {
	__u64 ts_ns;    /* bpf_ktime_get_ns() */
	__u32 tid;      /* kernel tid of the firing thread (host namespace) */
	__u32 kind;     /* enum mt_jvmev_kind */
	__u64 a0, a1, a2;
	__u64 v[4];
	__u32 name_len; /* the string's full length (may exceed what name[] holds) */
	__u32 pad;
	char name[MT_JVMEV_NAME_LEN];
};

/* A record without its name (park and sleep events): the bytes before name[]. */
#define MT_JVMEV_HEAD_LEN __builtin_offsetof(struct mt_jvmev_raw, name)

#endif /* MEMTRACE_JVMEV_H */
