/* SPDX-License-Identifier: GPL-2.0 */
/*
 * alloc.h - allocation sampling shared by bpf/alloc.bpf.c and user/probe/alloctrace.c.
 *
 * Sampling mode (no JVM flags): uprobes on AllocTracer::send_allocation_in_new_tlab
 * (weight = the new TLAB's size) and ::send_allocation_outside_tlab (weight =
 * the object's size), the scheme async-profiler uses. Exact mode: the
 * hotspot:object__alloc USDT probe (needs -XX:+DTraceAllocProbes), weight =
 * the object's size, one count per object.
 *
 * With stacks, the whole Java stack is walked in the kernel from the
 * JavaThread's frame anchor (bpf/jstack.bpf.h, include/memtrace/jstack.h) and
 * kept once per distinct stack in `jstacks`; the key holds its 64-bit hash.
 * The allocating Java frame is then the stack's first non-stub frame (user
 * space finds it). Without the walker (a JVM whose tables lack what it needs)
 * the allocating frame comes from the anchor alone (javaframe.bpf.h): its pc,
 * and for an interpreted frame its Method* (at fp - 3 words on x86-64). The
 * native user stack (libjvm frames) is captured only on request (--vm-frames).
 *
 * Aggregation is in the kernel: a hash map from (class, stack, generation) to
 * bytes and samples. The generation counts hotspot:class__unloaded hits, so a
 * Klass* reused by a class loaded after an unload is a different key. Each new
 * key is announced once on the ring buffer so user space reads the class name
 * while the class is certainly alive.
 */
#ifndef MEMTRACE_ALLOC_H
#define MEMTRACE_ALLOC_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MT_ALLOC_MAX_KEYS 65536
#define MT_ALLOC_STACK_DEPTH 64

struct mt_alloc_key {
	__u64 klass;     /* Klass* (sampling) or address of the class name bytes (exact) */
	__u64 java_pc;   /* pc of the allocating Java frame (the thread's last Java
			  * frame anchor), 0 if unknown or left to jstack */
	__u64 method;    /* Method* when that frame is interpreted, else 0 */
	__u64 jstack;    /* key of the whole Java stack in `jstacks` (jstack.h), 0 if none */
	__s32 stack_id;  /* user stack id in alloc_stacks, < 0 if not captured */
	__u32 gen;       /* class-unload generation when the sample was taken */
};

struct mt_alloc_val {
	__u64 bytes;     /* estimated (sampling) or exact bytes */
	__u64 samples;   /* TLAB refills + outside-TLAB allocations, or objects (exact) */
};

enum mt_alloc_event_kind {
	MT_ALLOC_NEW_KEY = 1,   /* first sample of a (class, stack, gen): resolve its name now */
	MT_ALLOC_UNLOAD = 2,    /* hotspot:class__unloaded: gen moved on */
};

struct mt_alloc_event {
	__u32 kind;
	__u32 gen;        /* NEW_KEY: the key's gen; UNLOAD: the new gen */
	__u64 klass;      /* NEW_KEY: Klass* or name address; UNLOAD: name address */
	__u32 name_len;   /* exact mode NEW_KEY and UNLOAD: length of the name */
	__u32 pad;
};

/*
 * Duty cycle (targ_duty): when sampling every refill would cost more than a
 * budget, user space attaches the TLAB uprobes only in windows (probe/dutycycle.h)
 * and sets weight_scale so each window's bytes stand for its whole period;
 * the program measures what it needs for that: its own time, the raw bytes,
 * and samples per thread in the current window. Within a window each sample
 * is kept with probability keep / 2^32 (bpf_get_prandom_u32), the rest
 * costing only that gate.
 */
#define MT_ALLOC_SCALE_ONE 256   /* weight_scale meaning 1.0 */
#define MT_ALLOC_MAX_TIDS 4096

struct mt_alloc_cost {           /* per-CPU, summed by user space */
	__u64 ns;                /* time in the program for kept samples (bpf_ktime_get_ns) */
	__u64 samples;           /* kept samples */
	__u64 raw_bytes;         /* their weights before scaling */
	__u64 skipped;           /* samples the gate let go (keep < 1) */
	__u64 skipped_ns;        /* their time in the program */
};

struct mt_alloc_tid {            /* samples of one thread in window `window` */
	__u32 window;
	__u32 samples;
};

#endif
