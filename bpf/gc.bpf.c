// SPDX-License-Identifier: GPL-2.0
/*
 * gc.bpf.c - collections and memory pools from HotSpot's USDT probes, their
 * causes and the pauses of concurrent cycles from uprobes on libjvm's functions.
 *
 * Each USDT program is a uprobe at one probe site, attached by
 * user/probe/usdtspec.c with a cookie naming the site's argument spec
 * (include/memtrace/usdt.h); the function uprobes (GCMemoryManager::gc_end,
 * GCTimer's pause registration: include/memtrace/gc.h) read the System V
 * argument registers.
 * Every hit becomes one struct mt_gc_raw in the ring buffer; user space
 * polls the ring every 100 ms and pairs the records (user/analysis/gcpair.c).
 * Submissions never wake the reader (BPF_RB_NO_WAKEUP): a wakeup inside a
 * stop-the-world pause lets memtrace preempt the VM thread on a small
 * machine and lengthens the very pause being measured (seen: +0.7 ms on a
 * 0.7 ms Serial young pause).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memtrace/gc.h"
#include "maps.bpf.h"
#include "usdt_args.bpf.h"

/* Filled by user space before load. */
const volatile __u32 targ_tgid = 0; /* host tgid of the JVM; 0 = any */
/* tests (MEMTRACE_TEST_VERIFIER=refuse): one program reads through a plain
 * number, which every verifier refuses; otherwise the branch is dead code the
 * verifier never looks at (a read-only global's value is known to it) */
const volatile bool targ_refuse = false;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} gc_events SEC(".maps");

MT_DEFINE_DROPS(gc_drops);

/* Reserve and fill the common header; NULL when filtered out or full. */
static __always_inline struct mt_gc_raw *gc_reserve(__u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct mt_gc_raw *e;

	if (targ_tgid && (id >> 32) != targ_tgid)
		return NULL;
	e = bpf_ringbuf_reserve(&gc_events, sizeof(*e), 0);
	if (!e) {
		mt_count_drop(&gc_drops);
		return NULL;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->tid = (__u32)id;
	e->kind = kind;
	e->is_full = 0;
	e->cause = 0;
	e->action = 0;
	e->ticks = 0;
	return e;
}

SEC("uprobe")
int handle_gc_begin(struct pt_regs *ctx)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_gc_raw *e;
	struct mt_regs g;

	if (!s)
		return 0;
	e = gc_reserve(MT_GC_BEGIN);
	if (!e)
		return 0;
	if (targ_refuse)
		e->cause = *(volatile __u32 *)(unsigned long)bpf_ktime_get_ns();
	mt_regs_load(ctx, &g);
	e->is_full = mt_usdt_arg(&g, s, 0) & 0xff;
	e->manager = e->pool = e->init = e->used = e->committed = e->max = 0;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe")
int handle_gc_end(struct pt_regs *ctx)
{
	struct mt_gc_raw *e = gc_reserve(MT_GC_END);

	if (!e)
		return 0;
	e->manager = e->pool = e->init = e->used = e->committed = e->max = 0;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* (char *mgr, int mgr_len, char *pool, int pool_len, init, used, committed, max) */
static __always_inline int pool_event(struct pt_regs *ctx, __u32 kind)
{
	const struct mt_usdt_spec *s = mt_usdt_spec(ctx);
	struct mt_gc_raw *e;
	struct mt_regs g;

	if (!s)
		return 0;
	e = gc_reserve(kind);
	if (!e)
		return 0;
	mt_regs_load(ctx, &g);
	e->manager = mt_usdt_arg(&g, s, 0);
	e->pool = mt_usdt_arg(&g, s, 2);
	e->init = mt_usdt_arg(&g, s, 4);
	e->used = mt_usdt_arg(&g, s, 5);
	e->committed = mt_usdt_arg(&g, s, 6);
	e->max = mt_usdt_arg(&g, s, 7);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("uprobe")
int handle_pool_begin(struct pt_regs *ctx)
{
	return pool_event(ctx, MT_POOL_BEGIN);
}

SEC("uprobe")
int handle_pool_end(struct pt_regs *ctx)
{
	return pool_event(ctx, MT_POOL_END);
}

/*
 * Entry of GCMemoryManager::gc_end(this, bool, bool, bool, bool,
 * GCCause::Cause cause, bool, const char *message) (System V: cause in the
 * sixth argument register, message the second stack argument). The mangled
 * name user space attaches by pins this signature.
 */
SEC("uprobe")
int handle_gc_cause(struct pt_regs *ctx)
{
	struct mt_gc_raw *e = gc_reserve(MT_GC_CAUSE);
	__u64 msg = 0;

	if (!e)
		return 0;
	e->manager = e->pool = e->init = e->used = e->committed = e->max = 0;
	e->cause = (__u32)ctx->r9; /* x86-64: the sixth argument */
	e->manager = ctx->di;      /* this: the GCMemoryManager */
	bpf_probe_read_user(&msg, sizeof(msg), (void *)(PT_REGS_SP(ctx) + 16));
	e->action = msg;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Read the Ticks at @p: its first word is os::elapsed_counter()'s value in
 * both of HotSpot's representations (CounterRepresentation, and
 * CompositeCounterRepresentation's val1); 0 when unreadable. */
static __always_inline __u64 read_ticks(__u64 p)
{
	__u64 t = 0;

	bpf_probe_read_user(&t, sizeof(t), (void *)p);
	return t;
}

/* Entry of GCTimer::register_gc_pause_start(this, const char *name,
 * const Ticks &time): a stop-the-world pause begins (see memtrace/gc.h). */
SEC("uprobe")
int handle_pause_begin(struct pt_regs *ctx)
{
	struct mt_gc_raw *e = gc_reserve(MT_PAUSE_BEGIN);

	if (!e)
		return 0;
	e->pool = e->init = e->used = e->committed = e->max = 0;
	e->manager = ctx->si; /* the name, a string literal of libjvm */
	e->ticks = read_ticks(ctx->dx);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Entry of GCTimer::register_gc_pause_end(this, const Ticks &time). */
SEC("uprobe")
int handle_pause_end(struct pt_regs *ctx)
{
	struct mt_gc_raw *e = gc_reserve(MT_PAUSE_END);

	if (!e)
		return 0;
	e->manager = e->pool = e->init = e->used = e->committed = e->max = 0;
	e->ticks = read_ticks(ctx->si);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}


/* Entry of GCTracer::report_gc_start(this, GCCause::Cause, const Ticks &):
 * a collection as JFR counts it begins on this thread. */
SEC("uprobe")
int handle_trace_begin(struct pt_regs *ctx)
{
	struct mt_gc_raw *e = gc_reserve(MT_TRACE_BEGIN);

	if (!e)
		return 0;
	e->manager = e->pool = e->init = e->used = e->committed = e->max = 0;
	e->ticks = read_ticks(ctx->dx);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

/* Entry of GCTracer::report_gc_end(this, const Ticks &, TimePartitions *). */
SEC("uprobe")
int handle_trace_end(struct pt_regs *ctx)
{
	struct mt_gc_raw *e = gc_reserve(MT_TRACE_END);

	if (!e)
		return 0;
	e->manager = e->pool = e->init = e->used = e->committed = e->max = 0;
	e->ticks = read_ticks(ctx->si);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
