/* SPDX-License-Identifier: GPL-2.0 */
/* maps.bpf.h - pieces every memtrace BPF object shares. */
#ifndef MEMTRACE_MAPS_BPF_H
#define MEMTRACE_MAPS_BPF_H

/*
 * Per-CPU count of events the ring buffer could not take. User space sums
 * the CPUs and shows the total as "lost events": never hidden.
 */
#define MT_DEFINE_DROPS(name)                                  \
	struct {                                               \
		__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);       \
		__uint(max_entries, 1);                        \
		__type(key, __u32);                            \
		__type(value, __u64);                          \
	} name SEC(".maps")

static __always_inline void mt_count_drop(void *drops)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(drops, &zero);

	if (n)
		*n += 1;
}

#endif
