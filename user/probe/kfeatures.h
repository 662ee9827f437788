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
 * memtrace (uprobemulti_supported() says no), to run the fallback here;
 * MEMTRACE_HIDE_BPF=loop (cookie, ringbuf: a list) hides the others, to run
 * the refusal an older kernel gets (bpfutil_load()).
 */
#ifndef MEMTRACE_KFEATURES_H
#define MEMTRACE_KFEATURES_H

#include <stdbool.h>
#include <stddef.h>

struct kfeatures {
	char release[65];         /* uname -r */
	bool ringbuf;             /* BPF_MAP_TYPE_RINGBUF */
	bool cookie;              /* bpf_get_attach_cookie in kprobe/uprobe programs */
	bool loop;                /* bpf_loop */
	bool uprobe_multi;        /* uprobe_multi links (as memtrace will use them) */
	bool uprobe_multi_hidden; /* MEMTRACE_NO_UPROBE_MULTI set */
	unsigned hidden;          /* KF_* named by MEMTRACE_HIDE_BPF (read as absent) */
};

/* The features a BPF object needs (bpfutil_load()), and MEMTRACE_HIDE_BPF's
 * names for them ("ringbuf,cookie,loop": tests run a kernel's refusal here). */
#define KF_RINGBUF 1u
#define KF_COOKIE  2u
#define KF_LOOP    4u

/* kfeatures_hidden - the KF_* MEMTRACE_HIDE_BPF names (0: none). */
unsigned kfeatures_hidden(void);

/* kfeatures_missing - of @need, the KF_* *@kf lacks. */
unsigned kfeatures_missing(const struct kfeatures *kf, unsigned need);

/* kfeatures_describe - "bpf_loop (Linux 5.17) and ..." for the KF_* in
 * @missing into @buf (@n bytes). */
void kfeatures_describe(unsigned missing, char *buf, size_t n);

/* kfeatures_probe - fill *@kf by loading tiny programs and maps (needs
 * CAP_BPF; without it every feature reads false). Returns 0, or -EPERM when
 * not even a map could be made (the answers then say nothing). Prints nothing. */
int kfeatures_probe(struct kfeatures *kf);

#endif
