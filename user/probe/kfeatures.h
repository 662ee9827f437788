/*
 * kfeatures.h - the kernel's BPF features memtrace stands on, probed (not
 * guessed from the version), for `memtrace doctor` and docs/limitations.md's
 * kernel table:
 *   ring buffers (Linux 5.8)      every event stream; without: nothing loads
 *   bpf_get_attach_cookie (5.15)  USDT arguments (collections, parks, the
 *                                 collector): without, those programs fail to load
 *   bpf_loop (5.17)               the Java stack walker and the TLAB parser
 *                                 (alloc, top, locks stacks, sites, the
 *                                 collector): without, those fail to load
 *   uprobe_multi links (6.6)      the cost budget's windows attach in ~0.1 ms;
 *                                 without, perf-event uprobes whose detach
 *                                 holds a kernel mutex for 60-90 ms: windows
 *                                 open late and thin (uprobemulti.h)
 * MEMTRACE_NO_UPROBE_MULTI=1 in the environment hides uprobe_multi from
 * memtrace (uprobemulti_supported() says no), to run the fallback here.
 */
#ifndef MEMTRACE_KFEATURES_H
#define MEMTRACE_KFEATURES_H

#include <stdbool.h>

struct kfeatures {
	char release[65];         /* uname -r */
	bool ringbuf;             /* BPF_MAP_TYPE_RINGBUF */
	bool cookie;              /* bpf_get_attach_cookie in kprobe/uprobe programs */
	bool loop;                /* bpf_loop */
	bool uprobe_multi;        /* uprobe_multi links (as memtrace will use them) */
	bool uprobe_multi_hidden; /* MEMTRACE_NO_UPROBE_MULTI set */
};

/* kfeatures_probe - fill *@kf by loading tiny programs and maps (needs
 * CAP_BPF; without it every feature reads false). Returns 0, or -EPERM when
 * not even a map could be made (the answers then say nothing). Prints nothing. */
int kfeatures_probe(struct kfeatures *kf);

#endif
