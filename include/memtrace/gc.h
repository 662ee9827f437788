/* SPDX-License-Identifier: GPL-2.0 */
/*
 * gc.h - events shared by bpf/gc.bpf.c and user/gc.c.
 *
 * One record per USDT hit of hotspot:gc__begin, gc__end, mem__pool__gc__begin
 * and mem__pool__gc__end. Pairing happens in user space (user/gcpair.c),
 * keyed per collection and per (manager, pool), never per thread alone.
 * Fixed-width types only: this layout is read by both sides.
 */
#ifndef MEMTRACE_GC_H
#define MEMTRACE_GC_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MT_GC_NAME_LEN 64 /* power of two: the BPF side masks with it */

enum mt_gc_kind {
	MT_GC_BEGIN = 1,      /* hotspot:gc__begin(bool is_full) */
	MT_GC_END = 2,        /* hotspot:gc__end() */
	MT_POOL_BEGIN = 3,    /* hotspot:mem__pool__gc__begin(mgr, len, pool, len, init, used, committed, max) */
	MT_POOL_END = 4,      /* hotspot:mem__pool__gc__end(same arguments) */
};

struct mt_gc_event {
	__u64 ts_ns;    /* bpf_ktime_get_ns() at the probe */
	__u32 tid;      /* kernel tid of the firing thread (host namespace) */
	__u32 kind;     /* enum mt_gc_kind */
	__u32 is_full;  /* MT_GC_BEGIN only */
	__u32 pad;
	__u64 init;     /* pool events: MemoryUsage of the pool */
	__u64 used;
	__u64 committed;
	__u64 max;
	char manager[MT_GC_NAME_LEN]; /* pool events: memory manager name */
	char pool[MT_GC_NAME_LEN];    /* pool events: memory pool name */
};

#endif /* MEMTRACE_GC_H */
