/* heapfreeze.h - frozen heap walks from memtrace's side (MT_AP_HEAP_FREEZE in
 * agent_proto.h): whether a JVM can be frozen (its collector, the symbols the
 * agent needs, a private heap), the request's parameters, and the memory
 * headroom a frozen copy may use. The agent forks the JVM inside the walk's
 * pause and lets the copy do the walk: the JVM's pause is the fork's, and
 * afterwards every page it shares with the copy costs one page fault at its
 * first write (a copy-on-write while the copy lives). */
#ifndef MEMTRACE_HEAPFREEZE_H
#define MEMTRACE_HEAPFREEZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/agent_proto.h"

struct mt_proc;
struct mt_vmstructs;
struct mt_snapshot;

/* --walk: how heap snapshots are taken (mt_opts.walk). */
enum heapfreeze_mode {
	HEAPFREEZE_AUTO = 0,   /* frozen where this JVM allows it, else in a pause (said why) */
	HEAPFREEZE_FROZEN = 1, /* frozen or an error; no memory headroom check */
	HEAPFREEZE_PAUSED = 2, /* the JVMTI walk in a pause, as before frozen walks */
};

#define HEAPFREEZE_STALL_MS 30000  /* the copy's walk calls back nothing this long: stuck */
#define HEAPFREEZE_MAX_MS   600000 /* the copy's walk may last this long */
#define HEAPFREEZE_MARGIN   (64ull << 20) /* headroom kept free besides what a copy may use */
#define HEAPFREEZE_GC_WAIT_MS 2000 /* an allocating JVM: freeze after its next GC, waiting this long */
#define HEAPFREEZE_EDEN_MIN (16ll << 20) /* eden growing by a 16th of this: wait for a GC */
#define HEAPFREEZE_FORK_NS_PER_MB 60000 /* fork()'s cost per MiB resident, an upper estimate
					 * (25-50 us measured here, on a loaded 2-core VM) */
#define HEAPFREEZE_ZGC_COPY_NS_PER_MB 300000 /* ZGC: the used heap copied in the pause, per
					 * MiB (3.3 GB/s; 2.5-5 GB/s measured here with the JVM
					 * and the copy each copying half, 2 GB/s on one core) */

/* heapfreeze_mode_parse - "auto", "frozen" or "paused" into *@mode.
 * Returns 0 or -EINVAL. */
int heapfreeze_mode_parse(const char *s, int *mode);

/*
 * heapfreeze_prepare - can JVM @p (@vs its tables, NULL when they could not
 * be read) be frozen for a walk? Fills @f (symbols
 * from libjvm's .symtab, the heap's reserved range from VMStructs, the
 * default limits). ZGC: fills @z too (where its masks, page table and
 * forwarding tables are; MT_AP_FREEZE_ZGC), and refuses a JVM whose ZGC it
 * does not know (JDK 21's non-generational "XGC", a layout that does not
 * check out). Refused too: a libjvm without .symtab. Returns 0,
 * or -errno with the reason in @why (nothing printed).
 */
int heapfreeze_prepare(const struct mt_proc *p, const struct mt_vmstructs *vs,
		       struct mt_ap_heap_freeze *f, struct mt_ap_heap_zgc *z, char *why, size_t n);

/*
 * heapfreeze_headroom - the memory JVM @p may take while a frozen copy of it
 * lives (*@need: its anonymous resident memory, each page copied at most once
 * by whichever process writes it first) and what its cgroups (every
 * ancestor with a limit, v1 or v2) and the machine (MemAvailable) have left
 * (*@have). Returns 0, or -errno when nothing could be read.
 */
int heapfreeze_headroom(const struct mt_proc *p, uint64_t *need, uint64_t *have);

/*
 * heapfreeze_mem_left - what process @pid may still take: the least of the
 * machine's MemAvailable and what each of its memory cgroups (every ancestor
 * with a limit, v1 or v2) has left under its limit; UINT64_MAX when nothing
 * could be read. *@by_cgroup (if not NULL): a cgroup's limit is the least.
 */
uint64_t heapfreeze_mem_left(int pid, bool *by_cgroup);

/*
 * heapfreeze_read_copy - the walk's records out of the frozen copy that
 * s->copy (a COPY record of JVM @p's agent) names: the copy is found among
 * the JVM's children by its pid in the JVM's namespace, read through
 * /proc/PID/mem into s's visits, values and strings, and the same records
 * are appended to s->raw (so a saved snapshot holds them). Returns 0, or
 * -errno with the reason in @why (nothing printed).
 */
int heapfreeze_read_copy(const struct mt_proc *p, struct mt_snapshot *s, char *why, size_t n);

/* heapfreeze_copy_pid - the pid (in our namespace) of JVM @jvm's frozen copy,
 * found among its children by @nspid, its pid in the JVM's namespace; 0 when
 * it is not there. */
int heapfreeze_copy_pid(int jvm, uint32_t nspid);

/* heapfreeze_fork_estimate_ns - an upper estimate of the pause a fork of JVM
 * @p would take (its resident memory's page tables are copied; shared memory's
 * are not), for --max-pause. 0 when unknown. */
uint64_t heapfreeze_fork_estimate_ns(const struct mt_proc *p);

/* heapfreeze_zgc_copy_estimate_ns - what copying @used bytes of ZGC's heap
 * adds to a frozen walk's pause (MT_AP_FREEZE_ZGC), estimated at @ns_per_mib
 * (0: HEAPFREEZE_ZGC_COPY_NS_PER_MB). */
uint64_t heapfreeze_zgc_copy_estimate_ns(uint64_t used, uint64_t ns_per_mib);
/* heapfreeze_zgc_copy_max_mib - the most used heap (MiB) ZGC's copy may copy
 * in a pause of @bound_ms with a fork of @fork_ns at @ns_per_mib (0: the
 * default) (0 MiB: the fork alone is over). */
uint64_t heapfreeze_zgc_copy_max_mib(uint64_t fork_ns, uint32_t bound_ms, uint64_t ns_per_mib);
/* HEAPFREEZE_ZGC_CUT - the agent cuts a ZGC copy still going at this many
 * times the pause's bound (the copy given up, the JVM let go): JDK 17's copy
 * of 35 MiB in 3000 chunks (each mapped three times) paused a JVM 238 ms on
 * this VM with both cores busy where its MiB said 100 */
#define HEAPFREEZE_ZGC_CUT 3
/* HEAPFREEZE_ZGC_LEARN_MIN - a copy under this says too little of the rate */
#define HEAPFREEZE_ZGC_LEARN_MIN (32ull << 20)
/* heapfreeze_zgc_learn - the cost per MiB the next copies of this JVM are
 * bounded with, after one of @bytes took @ns, from @ns_per_mib (0: the
 * default): the slower of the two (a busy machine copied at 1.5 GB/s where
 * 3.3 is assumed; a fast copy once promises nothing of the next); a copy
 * under HEAPFREEZE_ZGC_LEARN_MIN leaves it. */
uint64_t heapfreeze_zgc_learn(uint64_t ns_per_mib, uint64_t bytes, uint64_t ns);

/*
 * heapfreeze_cgroup_left - pure: the bytes left under a cgroup's limit, from
 * the text of its limit file (@limit: "max", a v1 near-2^63 "unlimited", or
 * a number) and its usage file (@usage). UINT64_MAX when unlimited or
 * unreadable.
 */
uint64_t heapfreeze_cgroup_left(const char *limit, const char *usage);

/* heapfreeze_meminfo_kb - pure: field @key ("MemAvailable") of a
 * /proc/meminfo or /proc/PID/status text @text, in kB; UINT64_MAX if absent. */
uint64_t heapfreeze_meminfo_kb(const char *text, const char *key);

#endif
