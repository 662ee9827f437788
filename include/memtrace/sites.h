/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sites.h - per-site allocation counters in fixed space, shared by
 * bpf/sites.bpf.c and user/probe/sitecount.c (seed 001's "how many times each site
 * was used", kept by the kernel instead of a header bit).
 *
 * The same uprobes as alloc.h's sampling mode (AllocTracer's TLAB refill and
 * outside-TLAB hooks) add their weight (the new TLAB's size, or the object's
 * size) to a hash map keyed by the allocating Java frame. With the stack
 * walker (jstack.h) that is the first interpreted or nmethod frame from the
 * thread's anchor, runtime stubs skipped (jstack_leaf), as the walker
 * delivers it: user space expands a compiled frame's inlined methods, so the
 * site is the method that allocated, as the agent's GetStackTrace says.
 * Without the walker, the anchor's frame (javaframe.bpf.h): its Method* when
 * interpreted (pc then 0: the interpreter's pc says nothing about the site),
 * else its compiled pc. The map has MT_SITES_MAX_KEYS
 * entries and never grows: a refill whose key does not fit is added to the
 * overflow counters instead, and every refill to the totals, so user space
 * can say which share of the volume has a site.
 */
#ifndef MEMTRACE_SITES_H
#define MEMTRACE_SITES_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#include "memtrace/jstack.h"

#define MT_SITES_MAX_KEYS 8192

struct mt_site_key {
	__u64 method;    /* no walker: Method* of an interpreted allocating frame, else 0 */
	__u64 pc;        /* no walker: pc of a compiled allocating frame, else 0 */
	struct mt_jframe leaf; /* with the walker: the allocating frame, else zeros */
};

struct mt_site_val {
	__u64 bytes;     /* TLAB refill sizes + outside-TLAB object sizes */
	__u64 refills;   /* TLAB refills + outside-TLAB allocations */
};

/* Per-CPU array slots of `site_totals`. */
enum mt_site_total {
	MT_SITES_ALL = 0,       /* every refill seen */
	MT_SITES_OVERFLOW = 1,  /* refills whose key found no room in the map */
	MT_SITES_NOFRAME = 2,   /* refills without a known Java frame (counted, no site) */
	MT_SITES_NTOTALS = 3,
};

#endif
