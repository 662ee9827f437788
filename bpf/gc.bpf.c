// SPDX-License-Identifier: GPL-2.0
/*
 * gc.bpf.c - collections and memory pools from HotSpot's USDT probes.
 *
 * Every hit becomes one struct mt_gc_event in the ring buffer; user space
 * polls the ring every 100 ms and pairs them. Submissions never wake the
 * reader (BPF_RB_NO_WAKEUP): a wakeup inside a stop-the-world pause lets
 * memtrace preempt the VM thread on a small machine and lengthens the very
 * pause being measured (seen: +0.7 ms on a 0.7 ms Serial young pause).
 * User space pairs them (a GC fires a few dozen pool events, so the rate is tiny and
 * pairing in user space keeps the kernel side trivially verifiable).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "memtrace/gc.h"
#include "maps.bpf.h"

/* Filled by user space before load. */
const volatile __u32 targ_tgid = 0; /* host tgid of the JVM; 0 = any */

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} gc_events SEC(".maps");

MT_DEFINE_DROPS(gc_drops);

/* Reserve and fill the common header; NULL when filtered out or full. */
static __always_inline struct mt_gc_event *gc_reserve(__u32 kind)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct mt_gc_event *e;

	if (targ_tgid && (id >> 32) != targ_tgid)
		return NULL;
	e = bpf_ringbuf_reserve(&gc_events, sizeof(*e), 0);
	if (!e) {
		mt_count_drop(&gc_drops);
		return NULL;
	}
	__builtin_memset(e, 0, sizeof(*e));
	e->ts_ns = bpf_ktime_get_ns();
	e->tid = (__u32)id;
	e->kind = kind;
	return e;
}

SEC("usdt")
int BPF_USDT(handle_gc_begin, long is_full)
{
	struct mt_gc_event *e = gc_reserve(MT_GC_BEGIN);

	if (!e)
		return 0;
	e->is_full = is_full & 0xff;
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("usdt")
int BPF_USDT(handle_gc_end)
{
	struct mt_gc_event *e = gc_reserve(MT_GC_END);

	if (e)
		bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

static __always_inline int pool_event(__u32 kind, const char *mgr, long mgr_len,
				      const char *pool, long pool_len, __u64 init,
				      __u64 used, __u64 committed, __u64 max)
{
	struct mt_gc_event *e = gc_reserve(kind);
	__u32 n;

	if (!e)
		return 0;
	e->init = init;
	e->used = used;
	e->committed = committed;
	e->max = max;
	/* The names are not NUL-terminated in HotSpot: copy len bytes. */
	n = mgr_len < MT_GC_NAME_LEN - 1 ? mgr_len : MT_GC_NAME_LEN - 1;
	if (n > 0)
		bpf_probe_read_user(e->manager, n & (MT_GC_NAME_LEN - 1), mgr);
	n = pool_len < MT_GC_NAME_LEN - 1 ? pool_len : MT_GC_NAME_LEN - 1;
	if (n > 0)
		bpf_probe_read_user(e->pool, n & (MT_GC_NAME_LEN - 1), pool);
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}

SEC("usdt")
int BPF_USDT(handle_pool_begin, const char *mgr, long mgr_len, const char *pool,
	     long pool_len, __u64 init, __u64 used, __u64 committed, __u64 max)
{
	return pool_event(MT_POOL_BEGIN, mgr, mgr_len, pool, pool_len, init, used,
			  committed, max);
}

SEC("usdt")
int BPF_USDT(handle_pool_end, const char *mgr, long mgr_len, const char *pool,
	     long pool_len, __u64 init, __u64 used, __u64 committed, __u64 max)
{
	return pool_event(MT_POOL_END, mgr, mgr_len, pool, pool_len, init, used,
			  committed, max);
}

char LICENSE[] SEC("license") = "GPL";
