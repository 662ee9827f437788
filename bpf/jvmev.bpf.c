// SPDX-License-Identifier: GPL-2.0
/*
 * jvmev.bpf.c - threads, classes, VM operations, collections and monitors
 * from HotSpot's USDT probes, into one ring buffer (include/memtrace/jvmev.h).
 *
 * Attached like bpf/gc.bpf.c: a plain uprobe per probe site with a cookie
 * naming its argument spec. Submissions do not wake the reader
 * (BPF_RB_NO_WAKEUP): user space polls every 100 ms. The monitor probes fire
 * only while the JVM's DTraceMonitorProbes flag is on; attached while it is
 * off they cost nothing (their sites are behind the flag's test).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memtrace/jvmev.h"
#include "maps.bpf.h"
#include "usdt_args.bpf.h"
#include "jstack.bpf.h"

/* Filled by user space before load. */
const volatile __u32 targ_tgid = 0;        /* host tgid of the JVM; 0 = any */
const volatile __u32 targ_klass_name = 0;  /* Klass::_name offset (VMStructs); 0 = unknown */
const volatile __u32 targ_sym_body = 0;    /* Symbol::_body offset */

__u8 alloc_stacks = 0;  /* set by user space: walk the Java stack of allocation samples */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024); /* room for allocation samples between polls */
} jvm_events SEC(".maps");

MT_DEFINE_DROPS(jvm_drops);

static __always_inline struct mt_jvmev_raw *ev_reserve(__u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct mt_jvmev_raw *e;

	if (targ_tgid && (id >> 32) != targ_tgid)
		return NULL;
	e = bpf_ringbuf_reserve(&jvm_events, sizeof(*e), 0);
	if (!e) {
		mt_count_drop(&jvm_drops);
		return NULL;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->tid = (__u32)id;
	e->kind = kind;
	e->a0 = e->a1 = e->a2 = 0;
	e->v[0] = e->v[1] = e->v[2] = e->v[3] = 0;
	e->name_len = 0;
	e->pad = 0;
	e->name[0] = 0;
	return e;
}

/* Copy @len bytes of the string at @ptr (not NUL-terminated) into e->name. */
static __always_inline void ev_name(struct mt_jvmev_raw *e, __u64 ptr, __u64 len)
{
	__u32 n = len > MT_JVMEV_NAME_LEN - 1 ? MT_JVMEV_NAME_LEN - 1 : (__u32)len;

	e->name_len = (__u32)len;
	if (!ptr)
		return;
	if (bpf_probe_read_user(e->name, n & (MT_JVMEV_NAME_LEN - 1), (void *)ptr))
		n = 0;
	e->name[n & (MT_JVMEV_NAME_LEN - 1)] = 0;
}

/* (char *name, int len, a, b, c): the common shape of thread/class/vmop probes. */
static __always_inline int named(struct pt_regs *ctx, __u32 kind, int with_key)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_jvmev_raw *e;
	struct mt_regs g;
	__u64 ptr;

	if (!s)
		return 0;
	e = ev_reserve(kind);
	if (!e)
		return 0;
	mt_regs_load(ctx, &g);
	ptr = mt_usdt_arg(&g, s, 0);
	ev_name(e, ptr, mt_usdt_arg(&g, s, 1));
	e->a0 = with_key ? ptr : mt_usdt_arg(&g, s, 2);
	e->a1 = with_key ? mt_usdt_arg(&g, s, 2) : mt_usdt_arg(&g, s, 3);
	e->a2 = mt_usdt_arg(&g, s, with_key ? 3 : 4);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe") int handle_thread_start(struct pt_regs *ctx) { return named(ctx, MT_J_THREAD_START, 0); }
SEC("uprobe") int handle_thread_stop(struct pt_regs *ctx) { return named(ctx, MT_J_THREAD_STOP, 0); }
SEC("uprobe") int handle_class_load(struct pt_regs *ctx) { return named(ctx, MT_J_CLASS_LOAD, 1); }
SEC("uprobe") int handle_class_unload(struct pt_regs *ctx) { return named(ctx, MT_J_CLASS_UNLOAD, 1); }

/* vmops__begin/end(name, len, mode): a1 = mode. */
static __always_inline int vmop(struct pt_regs *ctx, __u32 kind)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_jvmev_raw *e;
	struct mt_regs g;

	if (!s)
		return 0;
	e = ev_reserve(kind);
	if (!e)
		return 0;
	mt_regs_load(ctx, &g);
	ev_name(e, mt_usdt_arg(&g, s, 0), mt_usdt_arg(&g, s, 1));
	e->a1 = mt_usdt_arg(&g, s, 2);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe") int handle_vmop_begin(struct pt_regs *ctx) { return vmop(ctx, MT_J_VMOP_BEGIN); }
SEC("uprobe") int handle_vmop_end(struct pt_regs *ctx) { return vmop(ctx, MT_J_VMOP_END); }

SEC("uprobe")
int handle_gc_begin(struct pt_regs *ctx)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_jvmev_raw *e;
	struct mt_regs g;

	if (!s)
		return 0;
	e = ev_reserve(MT_J_GC_BEGIN);
	if (!e)
		return 0;
	mt_regs_load(ctx, &g);
	e->a2 = mt_usdt_arg(&g, s, 0) & 0xff;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe")
int handle_gc_end(struct pt_regs *ctx)
{
	struct mt_jvmev_raw *e = ev_reserve(MT_J_GC_END);

	if (e)
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

static __always_inline int pool(struct pt_regs *ctx, __u32 kind)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_jvmev_raw *e;
	struct mt_regs g;

	if (!s)
		return 0;
	e = ev_reserve(kind);
	if (!e)
		return 0;
	mt_regs_load(ctx, &g);
	e->a0 = mt_usdt_arg(&g, s, 0);
	e->a1 = mt_usdt_arg(&g, s, 2);
	e->v[0] = mt_usdt_arg(&g, s, 4);
	e->v[1] = mt_usdt_arg(&g, s, 5);
	e->v[2] = mt_usdt_arg(&g, s, 6);
	e->v[3] = mt_usdt_arg(&g, s, 7);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe") int handle_pool_begin(struct pt_regs *ctx) { return pool(ctx, MT_J_POOL_BEGIN); }
SEC("uprobe") int handle_pool_end(struct pt_regs *ctx) { return pool(ctx, MT_J_POOL_END); }

/* Entry of GCMemoryManager::gc_end (see memtrace/gc.h): the cause in the
 * sixth argument register, the end message the second stack argument. */
SEC("uprobe")
int handle_gc_cause(struct pt_regs *ctx)
{
	struct mt_jvmev_raw *e = ev_reserve(MT_J_GC_CAUSE);
	__u64 msg = 0;

	if (!e)
		return 0;
	e->a0 = (__u32)ctx->r9;
	bpf_probe_read_user(&msg, sizeof(msg), (void *)(PT_REGS_SP(ctx) + 16));
	e->a1 = msg;
	e->a2 = ctx->di; /* this: the GCMemoryManager */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* GCTimer's pause registration (memtrace/gc.h): the Ticks' first word is
 * os::elapsed_counter()'s value. */
SEC("uprobe")
int handle_pause_begin(struct pt_regs *ctx)
{
	struct mt_jvmev_raw *e = ev_reserve(MT_J_PAUSE_BEGIN);
	__u64 t = 0;

	if (!e)
		return 0;
	bpf_probe_read_user(&t, sizeof(t), (void *)ctx->dx);
	e->a0 = ctx->si;
	e->a1 = t;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* GCTracer::report_gc_start(this, GCCause::Cause, const Ticks &) and
 * report_gc_end(this, const Ticks &, TimePartitions *): JFR's collections. */
SEC("uprobe")
int handle_trace_begin(struct pt_regs *ctx)
{
	struct mt_jvmev_raw *e = ev_reserve(MT_J_TRACE_BEGIN);
	__u64 t = 0;

	if (!e)
		return 0;
	bpf_probe_read_user(&t, sizeof(t), (void *)ctx->dx);
	e->a1 = t;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe")
int handle_trace_end(struct pt_regs *ctx)
{
	struct mt_jvmev_raw *e = ev_reserve(MT_J_TRACE_END);
	__u64 t = 0;

	if (!e)
		return 0;
	bpf_probe_read_user(&t, sizeof(t), (void *)ctx->si);
	e->a1 = t;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe")
int handle_pause_end(struct pt_regs *ctx)
{
	struct mt_jvmev_raw *e = ev_reserve(MT_J_PAUSE_END);
	__u64 t = 0;

	if (!e)
		return 0;
	bpf_probe_read_user(&t, sizeof(t), (void *)ctx->si);
	e->a1 = t;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* monitor__*(java_tid, monitor, class, len[, timeout]) */
static __always_inline int monitor(struct pt_regs *ctx, __u32 kind)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_jvmev_raw *e;
	struct mt_regs g;

	if (!s)
		return 0;
	e = ev_reserve(kind);
	if (!e)
		return 0;
	mt_regs_load(ctx, &g);
	e->a0 = mt_usdt_arg(&g, s, 0);
	e->a1 = mt_usdt_arg(&g, s, 1);
	e->v[0] = mt_usdt_arg(&g, s, 2); /* the class name's Symbol: the type key */
	ev_name(e, e->v[0], mt_usdt_arg(&g, s, 3));
	if (kind == MT_J_MON_WAIT)
		e->a2 = mt_usdt_arg(&g, s, 4);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe") int handle_mon_enter(struct pt_regs *ctx) { return monitor(ctx, MT_J_MON_ENTER); }
SEC("uprobe") int handle_mon_entered(struct pt_regs *ctx) { return monitor(ctx, MT_J_MON_ENTERED); }
SEC("uprobe") int handle_mon_exit(struct pt_regs *ctx) { return monitor(ctx, MT_J_MON_EXIT); }
SEC("uprobe") int handle_mon_wait(struct pt_regs *ctx) { return monitor(ctx, MT_J_MON_WAIT); }
SEC("uprobe") int handle_mon_waited(struct pt_regs *ctx) { return monitor(ctx, MT_J_MON_WAITED); }

/*
 * An allocation sample: one per TLAB refill (weight: the new TLAB's size) or
 * allocation outside a TLAB (weight: the object's size). The type key is
 * read here, while the class is certainly alive: the address of its name's
 * bytes, which is what hotspot:class__loaded passes.
 */
static __always_inline int alloc_sample(__u64 klass, __u64 weight, __u64 size, __u64 outside,
					__u64 thread)
{
	struct mt_jvmev_raw *e;
	__u64 sym = 0, stack = 0;

	if (targ_tgid && (bpf_get_current_pid_tgid() >> 32) != targ_tgid)
		return 0;
	/* with the walker (record --alloc-stacks): the Java stack, before the
	 * ring buffer slot is taken */
	if (alloc_stacks)
		stack = jstack_walk(thread);
	e = ev_reserve(MT_J_ALLOC);
	if (!e)
		return 0;
	e->v[2] = stack;
	e->a0 = klass;
	if (targ_klass_name && klass &&
	    !bpf_probe_read_user(&sym, sizeof(sym), (void *)(klass + targ_klass_name)) && sym)
		e->a1 = sym + targ_sym_body;
	e->a2 = weight;
	e->v[0] = size;
	e->v[1] = outside;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* AllocTracer::send_allocation_in_new_tlab(Klass*, HeapWord*, size_t tlab_size,
 *                                          size_t alloc_size, JavaThread*) */
SEC("uprobe")
int BPF_KPROBE(handle_alloc_new_tlab, void *klass, void *obj, __u64 tlab_size, __u64 alloc_size,
	       void *thread)
{
	return alloc_sample((__u64)klass, tlab_size, alloc_size, 0, (__u64)thread);
}

/* AllocTracer::send_allocation_outside_tlab(Klass*, HeapWord*, size_t alloc_size,
 *                                           JavaThread*) */
SEC("uprobe")
int BPF_KPROBE(handle_alloc_outside_tlab, void *klass, void *obj, __u64 alloc_size,
	       void *thread)
{
	return alloc_sample((__u64)klass, alloc_size, alloc_size, 1, (__u64)thread);
}

/* hotspot:compiled__method__unload(...): code may be freed from now on (the
 * walker's pc cache) */
SEC("uprobe")
int handle_code_unload(struct pt_regs *ctx)
{
	if (!targ_tgid || (bpf_get_current_pid_tgid() >> 32) == targ_tgid)
		__sync_fetch_and_add(&code_gen, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
