// SPDX-License-Identifier: GPL-2.0
/*
 * alloc.bpf.c - allocation sampling, aggregated in the kernel by
 * (class, user stack, unload generation). See include/memtrace/alloc.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memtrace/alloc.h"
#include "maps.bpf.h"
#include "usdt_args.bpf.h"
#include "javaframe.bpf.h"
#include "jstack.bpf.h"

/* keys carry the thread (time windows: each thread's total comes from its
 * own counter, user space scales its keys to it) */
const volatile __u8 targ_key_tid = 0;

static __always_inline void announce(__u64 klass, __u32 gen, __u32 name_len);
#define tc_announce(klass, gen) announce(klass, gen, 0)
#include "tlabcontent.bpf.h"

const volatile __u32 targ_tgid = 0;     /* host tgid of the JVM */
const volatile __u8 targ_stacks = 1;    /* capture user stacks and the allocating Java frame */
const volatile __u8 targ_native = 1;    /* ... and the native (libjvm) user stack */
const volatile __u8 targ_duty = 0;      /* duty-cycled: scale weights, measure the cost */
const volatile __u32 targ_allocated_off = 0; /* Thread::_allocated_bytes; 0: weigh by TLAB size */

__u32 unload_gen = 0;                   /* bumped by class__unloaded */
__u32 weight_scale = MT_ALLOC_SCALE_ONE; /* duty cycle: this window's bytes stand for its period */
__u32 keep = MT_ALLOC_KEEP_ONE;         /* duty cycle: a thread's keep without an alloc_tkeep entry */
__u32 window = 0;                       /* duty cycle: the current window's number */
__u32 attach_gen = 0;                   /* duty cycle: bumped when the probes are attached again */
__u32 new_free = 0;                     /* duty cycle: samples of a window a thread
					 * without an alloc_tkeep entry keeps in full */

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mt_alloc_cost);
} alloc_cost SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MT_ALLOC_MAX_TIDS);
	__type(key, __u32);
	__type(value, struct mt_alloc_tid);
} alloc_tids SEC(".maps");

/* tid -> its keep (MT_ALLOC_KEEP_ONE units) in the current window; user space writes it */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MT_ALLOC_MAX_TIDS);
	__type(key, __u32);
	__type(value, struct mt_alloc_tkeep);
} alloc_tkeep SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MT_ALLOC_MAX_KEYS);
	__type(key, struct mt_alloc_key);
	__type(value, struct mt_alloc_val);
} allocs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, MT_ALLOC_STACK_DEPTH * sizeof(__u64));
} alloc_stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} alloc_events SEC(".maps");

MT_DEFINE_DROPS(alloc_drops);       /* ring buffer full */
MT_DEFINE_DROPS(alloc_key_drops);   /* aggregation map full: bytes not counted */
MT_DEFINE_DROPS(alloc_stack_drops); /* stack not captured (bytes still counted) */

static __always_inline bool mine(void)
{
	return !targ_tgid || (bpf_get_current_pid_tgid() >> 32) == targ_tgid;
}

/* (klass, gen, name_len) announced to user space already */
struct announced_key {
	__u64 klass;
	__u32 gen;
	__u32 name_len;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct announced_key);
	__type(value, __u8);
} announced SEC(".maps");

/*
 * A new key's class for user space to name, once per (klass, gen): with
 * stacks nearly every sample is a new key (javac: 88 % of the walks a new
 * stack), and each record woke user space - ~20 us of the sample's time on
 * this VM (javac, JDK 25: 58 us per kept sample with a record per key, 35 us
 * once per class; the budget then kept 1.5x the walks). Recorded once the
 * ring has room (a drop is announced again by the next key); an LRU
 * eviction only repeats a name.
 */
static __always_inline void announce(__u64 klass, __u32 gen, __u32 name_len)
{
	struct announced_key ak = { klass, gen, name_len };
	struct mt_alloc_event *e;
	__u8 one = 1;

	if (bpf_map_lookup_elem(&announced, &ak))
		return;
	e = bpf_ringbuf_reserve(&alloc_events, sizeof(*e), 0);
	if (!e) {
		mt_count_drop(&alloc_drops);
		return;
	}
	bpf_map_update_elem(&announced, &ak, &one, BPF_ANY);
	e->kind = MT_ALLOC_NEW_KEY;
	e->gen = gen;
	e->klass = klass;
	e->name_len = name_len;
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
}

static __always_inline void account(void *ctx, __u64 klass, __u64 bytes, __u32 name_len,
				    __u64 thread);

/*
 * A sample of thread @tid (JavaThread @thread) standing for @bytes (the new
 * TLAB's size, or the object's outside one): count it in the current window
 * (user space reads each thread's rate from these) and set *@used to the
 * bytes the thread used since its previous sample - the move of its
 * Thread::_allocated_bytes, which grows by a TLAB's used part when it is
 * retired (at a refill, or half full at a GC) and by each object outside
 * one. A sample weighed by the new TLAB's size counts what a GC retires
 * unused as allocated: a thread that fills less than a TLAB between two GCs
 * read 1.4x its bytes. 0 at the thread's first sample (less than a TLAB
 * before it is missed, as after its last), and at its first after the
 * probes were detached, unless user space read its counter when the window
 * opened (time windows: then it weighs what the thread used in the window;
 * before, the window's scale's to estimate); @bytes when the offset is not
 * known.
 * Returns the thread's samples in the window so far.
 */
static __always_inline __u32 thread_sample(__u32 tid, __u64 thread, __u64 bytes, __u64 *used,
					   struct mt_alloc_tid **entry)
{
	struct mt_alloc_tid *t = bpf_map_lookup_elem(&alloc_tids, &tid),
			    init = { window, 1, 0, attach_gen, 0, thread, 0, 0 };
	__u64 a = 0;

	*entry = t;
	*used = bytes;
	if (targ_allocated_off && thread &&
	    bpf_probe_read_user(&a, sizeof(a), (void *)(thread + targ_allocated_off)))
		a = 0;
	if (!t) {
		init.allocated = init.base = a;
		bpf_map_update_elem(&alloc_tids, &tid, &init, BPF_ANY);
		if (a)
			*used = 0;
		return 1;
	}
	if (a) {
		/* a tid reused by a new thread starts lower: its first sample */
		*used = t->allocated && a >= t->allocated && t->attach == attach_gen &&
			t->thread == thread ? a - t->allocated : 0;
		t->allocated = a;
		t->attach = attach_gen;
	}
	t->thread = thread;
	if (t->window != window) {
		t->window = window;
		t->samples = 0;
	}
	return ++t->samples;
}

/* Duty cycle: a kept sample's cost, its estimate @est (bytes over keep) and
 * the variance term of its weight @w, for user space's next choice. */
static __always_inline void measure(__u64 t0, __u64 raw, __u64 est, __u64 w)
{
	__u32 zero = 0;
	struct mt_alloc_cost *c = bpf_map_lookup_elem(&alloc_cost, &zero);

	if (c) {
		c->samples++;
		c->raw_bytes += est;
		/* w (w - raw) in KiB^2, shifted so a 4 GiB weight cannot overflow */
		if (w > raw)
			c->var_kib2 += ((w >> 5) * ((w - raw) >> 5)) >> 10;
		c->scaled_bytes += w;
		c->ns += bpf_ktime_get_ns() - t0;
	}
}

/* A TLAB sample (@tlab: a refill that opened the TLAB at @obj; else an
 * object outside a TLAB): scaled by the duty cycle's window, measured, and
 * with class shares from contents (targ_tl.on), its TLAB kept for parsing. */
static __always_inline void sample(void *ctx, __u64 klass, __u64 bytes, __u64 thread,
				   __u64 obj, bool tlab)
{
	__u64 t0 = targ_duty ? bpf_ktime_get_ns() : 0, w, est, used;
	struct mt_alloc_tkeep *k;
	struct mt_alloc_tid *te;
	__u32 tid, kp, seen, sc;

	/* a refill: this thread's previous kept TLAB is full, read it now */
	if (targ_tl.on && tlab && thread)
		tc_refill(thread);
	tid = (__u32)bpf_get_current_pid_tgid();
	seen = thread_sample(tid, thread, bytes, &used, &te);
	if (!targ_duty) {
		account(ctx, klass, used, 0, thread);
		if (targ_tl.on)
			tlab && thread ? tc_open(thread, obj, bytes, used, bytes, klass, unload_gen) :
					 tc_outside(thread, klass, unload_gen, used, bytes, used);
		return;
	}
	/* the thread's keep; one new since the last close keeps its first
	 * new_free samples of a window (what the budget pays for in full),
	 * then the busiest thread's share */
	k = bpf_map_lookup_elem(&alloc_tkeep, &tid);
	kp = k ? k->keep : seen <= new_free ? MT_ALLOC_KEEP_ONE : keep;
	/* its own scale in windows; none after a window's close (weight_scale 0) */
	sc = weight_scale && k && k->scale ? k->scale : weight_scale;
	if (kp < MT_ALLOC_KEEP_ONE && (bpf_get_prandom_u32() & (MT_ALLOC_KEEP_ONE - 1)) >= kp) {
		__u32 zero = 0;
		struct mt_alloc_cost *c = bpf_map_lookup_elem(&alloc_cost, &zero);

		if (c) {
			c->skipped++;
			c->skipped_ns += bpf_ktime_get_ns() - t0;
		}
		return;
	}
	/* the sample stands for 1 / (its chance) samples, then for its period */
	est = kp < MT_ALLOC_KEEP_ONE && kp ? used * MT_ALLOC_KEEP_ONE / kp : used;
	w = est * sc / MT_ALLOC_SCALE_ONE;
	if (te) /* its own sum: what stands for it before user space knows its counter */
		__sync_fetch_and_add(&te->scaled, w);
	account(ctx, klass, w, 0, thread);
	/* the TLAB as a draw of the class shares: its own size, weighed alike */
	if (targ_tl.on && tlab && thread)
		tc_open(thread, obj, bytes, w, (kp < MT_ALLOC_KEEP_ONE && kp ?
						bytes * MT_ALLOC_KEEP_ONE / kp : bytes) *
						       sc / MT_ALLOC_SCALE_ONE,
			klass, unload_gen);
	else if (targ_tl.on)
		tc_outside(thread, klass, unload_gen, w, bytes, used);
	measure(t0, used, est, w);
}

static __always_inline void account(void *ctx, __u64 klass, __u64 bytes, __u32 name_len,
				    __u64 thread)
{
	struct mt_alloc_key key = {};
	struct mt_alloc_val *v, init = { bytes, 1 };

	key.klass = klass;
	key.tid = targ_key_tid ? (__u32)bpf_get_current_pid_tgid() : 0;
	/* by class only: skip the frame reads, keep the cost at the trap; with the
	 * walker, user space finds the allocating frame in the stack */
	if (targ_stacks && !targ_jw.nheaps)
		java_frame(thread, &key.java_pc, &key.method);
	key.gen = unload_gen;
	key.stack_id = -1;
	if (targ_stacks)
		key.jstack = jstack_walk(thread);
	if (targ_stacks && targ_native) {
		key.stack_id = bpf_get_stackid(ctx, &alloc_stacks, BPF_F_USER_STACK);
		if (key.stack_id < 0)
			mt_count_drop(&alloc_stack_drops);
	}
	v = bpf_map_lookup_elem(&allocs, &key);
	if (v) {
		__sync_fetch_and_add(&v->bytes, bytes);
		__sync_fetch_and_add(&v->samples, 1);
		return;
	}
	if (bpf_map_update_elem(&allocs, &key, &init, BPF_NOEXIST)) {
		/* another CPU created it meanwhile, or the map is full */
		v = bpf_map_lookup_elem(&allocs, &key);
		if (v) {
			__sync_fetch_and_add(&v->bytes, bytes);
			__sync_fetch_and_add(&v->samples, 1);
		} else {
			mt_count_drop(&alloc_key_drops);
		}
		return;
	}
	announce(klass, key.gen, name_len);
}

/* AllocTracer::send_allocation_in_new_tlab(Klass*, HeapWord*, size_t tlab_size,
 *                                          size_t alloc_size, JavaThread*) */
SEC("uprobe")
int BPF_KPROBE(handle_new_tlab, void *klass, void *obj, __u64 tlab_size, __u64 alloc_size,
	       void *thread)
{
	if (mine())
		sample(ctx, (__u64)klass, tlab_size, (__u64)thread, (__u64)obj, true);
	return 0;
}

/* AllocTracer::send_allocation_outside_tlab(Klass*, HeapWord*, size_t alloc_size,
 *                                           JavaThread*) */
SEC("uprobe")
int BPF_KPROBE(handle_outside_tlab, void *klass, void *obj, __u64 alloc_size, void *thread)
{
	if (mine())
		sample(ctx, (__u64)klass, alloc_size, (__u64)thread, (__u64)obj, false);
	return 0;
}

/* hotspot:object__alloc(jlong tid, char *name, int len, size_t size) */
SEC("uprobe")
int handle_object_alloc(struct pt_regs *ctx)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_regs g;

	if (!s || !mine())
		return 0;
	mt_regs_load(ctx, &g);
	account(ctx, mt_usdt_arg(&g, s, 1), mt_usdt_arg(&g, s, 3),
		(__u32)mt_usdt_arg(&g, s, 2), 0);
	return 0;
}

/* hotspot:compiled__method__unload(...): code may be freed from now on */
SEC("uprobe")
int handle_code_unload(struct pt_regs *ctx)
{
	if (mine())
		__sync_fetch_and_add(&code_gen, 1);
	return 0;
}

/* hotspot:class__unloaded(char *name, int len, void *loader, bool shared) */
SEC("uprobe")
int handle_class_unloaded(struct pt_regs *ctx)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_alloc_event *e;
	struct mt_regs g;
	__u32 gen;

	if (!s || !mine())
		return 0;
	gen = __sync_add_and_fetch(&unload_gen, 1);
	e = bpf_ringbuf_reserve(&alloc_events, sizeof(*e), 0);
	if (!e) {
		mt_count_drop(&alloc_drops);
		return 0;
	}
	mt_regs_load(ctx, &g);
	e->kind = MT_ALLOC_UNLOAD;
	e->gen = gen;
	e->klass = mt_usdt_arg(&g, s, 0);
	e->name_len = (__u32)mt_usdt_arg(&g, s, 1);
	e->pad = 0;
	bpf_ringbuf_submit(e, 0);
	return 0;
}

/* hotspot:thread__stop, in the thread that ends: its counter as it ends, for
 * user space's totals under time windows (threadctr.h: a thread that ends
 * between two readings of the thread list would lose what it used since). */
SEC("uprobe")
int handle_thread_end(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct mt_alloc_tid *t;
	__u64 a = 0;

	if (!mine() || !targ_allocated_off)
		return 0;
	t = bpf_map_lookup_elem(&alloc_tids, &tid);
	if (!t || !t->thread)
		return 0;
	if (!bpf_probe_read_user(&a, sizeof(a), (void *)(t->thread + targ_allocated_off)) &&
	    a >= t->allocated)
		t->allocated = a;
	return 0;
}

/* The trap's cost, measured by user space: a no-op at a function of its own. */
SEC("uprobe")
int handle_calibrate(void *ctx)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
