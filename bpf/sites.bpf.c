// SPDX-License-Identifier: GPL-2.0
/*
 * sites.bpf.c - allocation volume per allocating Java frame, in a map of
 * fixed size. See include/memtrace/sites.h.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "memtrace/sites.h"
#include "maps.bpf.h"
#include "javaframe.bpf.h"
#include "jstack.bpf.h"
#include "usdt_args.bpf.h"

const volatile __u32 targ_tgid = 0;     /* host tgid of the JVM */

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MT_SITES_MAX_KEYS);
	__type(key, struct mt_site_key);
	__type(value, struct mt_site_val);
} site_counts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_SITES_NTOTALS);
	__type(key, __u32);
	__type(value, struct mt_site_val);
} site_totals SEC(".maps");

static __always_inline void total(__u32 which, __u64 bytes)
{
	struct mt_site_val *t = bpf_map_lookup_elem(&site_totals, &which);

	if (t) {
		t->bytes += bytes;
		t->refills += 1;
	}
}

static __always_inline void count(__u64 thread, __u64 bytes)
{
	struct mt_site_key key = {};
	struct mt_site_val *v, init = { bytes, 1 };

	if (targ_tgid && (bpf_get_current_pid_tgid() >> 32) != targ_tgid)
		return;
	total(MT_SITES_ALL, bytes);
	if (targ_jw.nheaps) {
		if (jstack_leaf(thread, &key.leaf)) {
			total(MT_SITES_NOFRAME, bytes);
			return;
		}
	} else {
		java_frame(thread, &key.pc, &key.method);
		if (key.method)
			key.pc = 0;
		if (!key.pc && !key.method) {
			total(MT_SITES_NOFRAME, bytes);
			return;
		}
	}
	v = bpf_map_lookup_elem(&site_counts, &key);
	if (!v) {
		if (!bpf_map_update_elem(&site_counts, &key, &init, BPF_NOEXIST))
			return;
		/* another CPU made it meanwhile, or the map is full */
		v = bpf_map_lookup_elem(&site_counts, &key);
		if (!v) {
			total(MT_SITES_OVERFLOW, bytes);
			return;
		}
	}
	__sync_fetch_and_add(&v->bytes, bytes);
	__sync_fetch_and_add(&v->refills, 1);
}

/* AllocTracer::send_allocation_in_new_tlab(Klass*, HeapWord*, size_t tlab_size,
 *                                          size_t alloc_size, JavaThread*) */
SEC("uprobe")
int BPF_KPROBE(handle_new_tlab, void *klass, void *obj, __u64 tlab_size, __u64 alloc_size,
	       void *thread)
{
	count((__u64)thread, tlab_size);
	return 0;
}

/* AllocTracer::send_allocation_outside_tlab(Klass*, HeapWord*, size_t alloc_size,
 *                                           JavaThread*) */
SEC("uprobe")
int BPF_KPROBE(handle_outside_tlab, void *klass, void *obj, __u64 alloc_size, void *thread)
{
	count((__u64)thread, alloc_size);
	return 0;
}

/* hotspot:compiled__method__unload(...): code may be freed from now on */
SEC("uprobe")
int handle_code_unload(struct pt_regs *ctx)
{
	if (!targ_tgid || (bpf_get_current_pid_tgid() >> 32) == targ_tgid)
		__sync_fetch_and_add(&code_gen, 1);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
