/* SPDX-License-Identifier: GPL-2.0 */
/*
 * alloc.h - allocation sampling shared by bpf/alloc.bpf.c and user/probe/alloctrace.c.
 *
 * Sampling mode (no JVM flags): uprobes on AllocTracer::send_allocation_in_new_tlab
 * and ::send_allocation_outside_tlab, the probe points async-profiler uses; a
 * sample weighs the bytes its thread allocated since its previous one (the
 * move of Thread::_allocated_bytes; the new TLAB's or the object's size when
 * that field is unknown), shared among the classes of the thread's last TLAB
 * (MT_TLAB_SLICE, below). Exact mode: the
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
	__u32 tid;       /* the sampled thread under time windows (targ_key_tid), else 0:
			  * user space scales each thread's keys to its own counter */
	__u32 pad;
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
 * is kept with probability keep / MT_ALLOC_KEEP_ONE (16 random bits), the
 * rest costing only that gate; keep is per thread (alloc_tkeep, written by
 * user space at each window's close from the thread's own rate in it), so
 * only the threads whose samples would cost more than the budget are
 * thinned. A thread without an entry (new since the last close) keeps its
 * first new_free samples of a window (what the budget pays for in full)
 * and then takes the global keep, the busiest thread's. A kept sample weighs its bytes times
 * MT_ALLOC_KEEP_ONE / keep times weight_scale (the window's share of its
 * period): Horvitz-Thompson with each sample's own chance.
 */
#define MT_ALLOC_SCALE_ONE 256   /* weight_scale meaning 1.0 */
#define MT_ALLOC_KEEP_ONE 65536  /* keep meaning "every sample" */
#define MT_ALLOC_MAX_TIDS 4096

struct mt_alloc_cost {           /* per-CPU, summed by user space */
	__u64 ns;                /* time in the program for kept samples (bpf_ktime_get_ns) */
	__u64 samples;           /* kept samples */
	__u64 raw_bytes;         /* their bytes over their keep: the window's
				  * estimate before weight_scale */
	__u64 skipped;           /* samples the gate let go (keep < 1) */
	__u64 skipped_ns;        /* their time in the program */
	__u64 var_kib2;          /* variance of the thinned estimate, KiB^2: a sample
				  * of x bytes kept with chance p weighs w = x / p
				  * and adds w (w - x) = x^2 (1 - p) / p^2, the
				  * Horvitz-Thompson estimator's unbiased term */
	__u64 scaled_bytes;      /* the kept samples' weights as counted (scaled) */
};

/* A thread's choices for the current window, written by user space at each
 * window's close (alloc_tkeep). */
struct mt_alloc_tkeep {
	__u32 keep;              /* MT_ALLOC_KEEP_ONE units */
	__u32 scale;             /* its weight scale, MT_ALLOC_SCALE_ONE units (0: the
				  * global weight_scale): the window's share of its
				  * period, corrected by how much slower the thread
				  * allocates while the probes are in (its `corr`) */
};

struct mt_alloc_tid {            /* samples of one thread in window `window` */
	__u32 window;
	__u32 samples;           /* seen: kept and skipped */
	__u64 allocated;         /* its Thread::_allocated_bytes at its last sample */
	__u32 attach;            /* attach_gen then: after a detach, a first sample again */
	__u32 corr;              /* user space's: its allocation rate out of the windows
				  * over that in them, MT_ALLOC_SCALE_ONE units (0: not
				  * measured) */
	__u64 thread;            /* its JavaThread*: user space reads its counter when
				  * a window opens (the window's first sample weighs
				  * from there) */
	__u64 base;              /* its counter at its first sample, then as user
				  * space read it at the last window's open: its bytes
				  * since are the counter's move (exact totals) */
	__u64 scaled;            /* its kept samples' weights as counted (scaled) */
};

/*
 * Class shares from the TLABs' contents (targ_content): a TLAB refill is one
 * position in the thread's allocation sequence, and when that sequence is
 * periodic the class whose allocation overflows the TLAB is not a fair
 * sample of the bytes (aliasing: a loop of 60/30/10 % of the bytes read as
 * 5/9, 3/9, 1/9). So the weight of a kept sample's TLAB is not given to the
 * class that opened it: at the thread's next refill, when that TLAB is full
 * and the same thread wrote every object in it, the program parses a window
 * of it (object by object: the class from the header, the size from
 * Klass::_layout_helper and an array's length) and splits the TLAB's weight
 * among the classes in proportion to their bytes there. The window is the
 * whole TLAB when it holds at most MT_TLAB_SLICE bytes, else the objects that
 * start in MT_TLAB_WINDOW bytes at a random offset below MT_TLAB_SPREAD after
 * its first object (the one that opened it: a draw weighted by size, which
 * would give the large classes too much, and whose end is the same place of
 * a periodic loop again and again; tlabcontent.bpf.h, tc_window). Windows
 * are the draws of a ratio estimator (tc_parse). A TLAB
 * that a collection retired meanwhile (CollectedHeap::_total_collections
 * moved) cannot be read: its weight carries over to its thread's next kept
 * TLAB (keyed by thread: it is left out); one that no refill followed goes
 * to its opening class (user space, at the end). An object allocated
 * outside a TLAB gets its own part of its sample's weight; the rest (what
 * its thread allocated in its TLAB since the last sample) goes to that
 * TLAB's weight (bpf/tlabcontent.bpf.h, tc_outside).
 */
#define MT_TLAB_SLICE 8192        /* a TLAB up to this many bytes is parsed whole */
#define MT_TLAB_WINDOW 4096       /* else a window of this many bytes ... */
#define MT_TLAB_SPREAD 8192       /* ... at a random offset below this (read in 1 KiB
				   * chunks as reached: 8 KiB on average) */
#define MT_TLAB_MAX_OBJS 1024     /* objects parsed per TLAB, at most: the most 16-byte
				   * objects a window's offset and window can hold */
#define MT_TLAB_MAX_CLASSES 32    /* classes per TLAB (an open-addressed table): parsing
				   * stops after the object of the 32nd */

/* The object layout the parser needs, from VMStructs (user/jvm/jobject.h). */
struct mt_tlab_layout {
	__u64 gc_count;           /* address of CollectedHeap::_total_collections (u32) */
	__u64 klass_base;         /* CompressedKlassPointers */
	__u32 klass_shift;
	__u32 klass_off;          /* oopDesc::_metadata */
	__u32 ccp;                /* the klass word is 32 bits */
	__u32 mark_klass_shift;   /* compact headers: klass = mark >> this; 0 otherwise */
	__u32 arr_len_off;        /* arrayOopDesc's length */
	__u32 lh_off;             /* Klass::_layout_helper */
	__u32 lh_slow_bit;        /* Klass::_lh_instance_slow_path_bit */
	__u32 lh_hdr_shift, lh_hdr_mask;      /* ..._header_size_shift/_mask */
	__u32 lh_log2_shift, lh_log2_mask;    /* ..._log2_element_size_shift/_mask */
	__u32 on;                 /* the layout is complete: parse */
};

/* A thread's kept TLAB, waiting for its next refill to be parsed. */
struct mt_tlab_state {
	__u64 start;              /* the TLAB (the object that opened it is first) */
	__u64 size;               /* its bytes */
	__u64 weight;             /* the bytes its sample stands for (scaled): the
				   * thread's bytes since its previous sample, for
				   * the total; without a start, what carries over
				   * to the thread's next kept TLAB (tc_refill) */
	__u64 draw;               /* its weight as a draw of the class shares: its
				   * own size over its chance to be kept (scaled) */
	__u64 klass;              /* the class that opened it (the fallback) */
	__u32 gc;                 /* _total_collections when it opened */
	__u32 gen;                /* class-unload generation */
};

struct mt_content_key {
	__u64 klass;
	__u32 gen;
	__u32 tid;       /* as mt_alloc_key's */
};

struct mt_content_val {
	__u64 bytes;              /* estimated (scaled) bytes; in a window's units for
				   * the windows' parts (MT_CONTENT_WSUM over the
				   * draws' sum of bytes turns them into bytes) */
	__u64 parsed;             /* TLABs this class was found in by parsing */
	/* For the spread of the shares (user/probe/allocrows.c): each kept
	 * TLAB or object outside one is a draw of weight W giving this class
	 * y of it, its classes' y adding up to x; sums of y^2 and of y x, in
	 * KiB^2: the ratio estimator's linearised variance, per thread when
	 * keyed by thread (analysis/sharevar.h; sum over classes of y x is
	 * sum of x^2). */
	__u64 sq_kib2;
	__u64 cross_kib2;
};

/* Per-CPU counters of the parser (`content_stats`). */
enum mt_content_stat {
	MT_CONTENT_PARSED = 0,    /* TLABs parsed */
	MT_CONTENT_GC,            /* retired by a collection: their weight to their
				   * thread's next kept TLAB (keyed by thread: left out) */
	MT_CONTENT_BAD,           /* an object the parser could not size (slow-path
				   * instance, unreadable): parsed up to there */
	MT_CONTENT_WSUM,          /* not a count: the sum of the draws' weights W, bytes */
	MT_CONTENT_NSTATS,
};

#endif
