/* heapmem.h - the memory a heap answer takes in memtrace, and whether it may.
 *
 * A heap view holds every object and reference: tens of bytes each, a GiB
 * for ten million objects. On a production machine that memory may not be
 * there, and when it runs out the kernel's OOM killer picks a process - the
 * JVM, if it is the largest. So memtrace bounds what it will hold: once the
 * frozen copy's mark has counted the live objects and references, before
 * memtrace holds them, it compares what the answer will take with what the
 * machine and memtrace's own cgroups have left (and --max-memory), and
 * refuses the snapshot with the figures if it would not fit. The costs per
 * object and per reference are measured peak RSS (VmHWM) on two heap shapes
 * (below), rounded up: the estimate is an upper bound by 15-30%, checked
 * against the measured peak by tests/e2e/cases/heap_memory.sh.
 */
#ifndef MEMTRACE_HEAPMEM_H
#define MEMTRACE_HEAPMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a snapshot's caller builds from it. */
enum heapmem_use {
	HEAPMEM_NONE = 0,  /* counts per class only (histo): a few MiB whatever the heap */
	HEAPMEM_RECORDS,   /* the records, written to a file (snapshot -o) */
	HEAPMEM_VIEW,      /* a heap view (query, heap without --retained, serve's queries) */
	HEAPMEM_RETAINED,  /* a view and its dominator tree (heap --retained) */
	HEAPMEM_SERIES,    /* a view per snapshot and the places compared (leaks) */
	/* a view and a view with its tree built where the copy wrote its
	 * references by position (MT_AP_FREEZE_REFPOS: 12 bytes a reference,
	 * not 24, and one more an object, its CLASS reference's record) */
	HEAPMEM_VIEW_POS,
	HEAPMEM_RETAINED_POS,
	HEAPMEM_SERIES_POS,  /* a leak search's, each snapshot's view so built */
	/* ... and each object's CLASS reference implied (MT_AP_FREEZE_NOCLASS:
	 * 12 bytes an object fewer) */
	HEAPMEM_VIEW_IMPLIED,
	HEAPMEM_RETAINED_IMPLIED,
	HEAPMEM_SERIES_IMPLIED,
};
#define HEAPMEM_LAST HEAPMEM_SERIES_IMPLIED

/* heapmem_by_position - pure: @use's with the references by position (a
 * view's or a tree's; any other as it is), @implied: without CLASS records. */
enum heapmem_use heapmem_by_position(enum heapmem_use use, bool implied);

/* memtrace's resident memory besides any heap (binary, libraries, BPF maps'
 * copies, buffers): 19-26 MiB measured, rounded up */
#define HEAPMEM_BASE (32ull << 20)

/*
 * heapmem_need - pure: memtrace's peak resident memory, in bytes, for @use
 * of a snapshot of @objs objects and @refs references between objects (the
 * records': an object's reference to its class not counted). HEAPMEM_BASE
 * included; 0 for HEAPMEM_NONE (not bounded).
 */
uint64_t heapmem_need(enum heapmem_use use, uint64_t objs, uint64_t refs);

/* heapmem_records - pure: the bytes of a frozen copy's records of @objs
 * objects and @refs references (what the copy holds until memtrace has read
 * them, besides memtrace's own copy of them). */
uint64_t heapmem_records(uint64_t objs, uint64_t refs);

/* The limits heapmem_check() compares with. */
struct heapmem_room {
	uint64_t free;        /* what the machine and memtrace's cgroups have left */
	uint64_t held;        /* memtrace's resident memory now (its part of a need) */
	bool by_cgroup;       /* a cgroup's limit, not MemAvailable, set free */
	uint64_t max;         /* --max-memory (0: none) */
	uint64_t pool;        /* memory memtrace keeps for the frozen copy's records
			       * (heap/recpool.h; held already): a need adds to it,
			       * and the copy writes its records there */
};

/* heapmem_limit - pure: the most memtrace may hold in all for a heap answer
 * under @r (no frozen copy's records counted): the least of --max-memory and
 * what is free besides what it holds, less HEAPFREEZE_MARGIN; UINT64_MAX
 * when nothing bounds it. */
uint64_t heapmem_limit(const struct heapmem_room *r);

/*
 * heapmem_fits - pure: does @use of @objs objects and @refs references fit
 * @r? @copy_writes: the frozen copy has yet to write its records (they take
 * the machine's memory too while it lives). Returns 0, or -ENOMEM with the
 * reason and what the user can do in @why (@n bytes).
 */
int heapmem_fits(enum heapmem_use use, uint64_t objs, uint64_t refs, bool copy_writes,
		 const struct heapmem_room *r, char *why, size_t n);

/*
 * heapmem_visit_bytes - pure: memtrace's peak RSS per visit for @use of a
 * walk by JVMTI (in a pause, or in a copy without its own mark), which
 * reports each reference as a visit (struct mt_ap_hvisit) that memtrace
 * numbers and turns into records after the walk (heapmem.c: measured).
 */
uint64_t heapmem_visit_bytes(enum heapmem_use use);

/*
 * heapmem_fits_visits - pure: do @visits visits so far fit @r for @use
 * (heapmem_fits()'s bounds; no frozen copy holds them)? Returns 0, or
 * -ENOMEM with the reason in @why.
 */
int heapmem_fits_visits(enum heapmem_use use, uint64_t visits, const struct heapmem_room *r,
			char *why, size_t n);

/* heapmem_text - pure: "<what> of N objects and M references: memtrace
 * holds at most X for it" into @buf (@n bytes), X with the @pool bytes kept
 * for the frozen copies' records (heap/recpool.h; said when not 0); returns
 * @buf. */
const char *heapmem_text(enum heapmem_use use, uint64_t objs, uint64_t refs, uint64_t pool,
			 char *buf, size_t n);

/*
 * heapmem_oom_first - make memtrace the process the kernel's OOM killer
 * picks first (oom_score_adj 1000, as the frozen copy's): once it holds
 * heaps, memory running out must cost memtrace, not the JVM. Once per
 * process; a failure is not an error (returns -errno, nothing printed).
 */
int heapmem_oom_first(void);

/*
 * heapmem_keep_freed - malloc keeps what is freed for the next allocations
 * (no mmap per big array, no trim): a view's later arrays (the dominator
 * tree's, the report's) and a series' next snapshot reuse the pages the
 * records left instead of the kernel zeroing fresh ones. For a command that
 * ends after its answer or takes snapshot after snapshot; not for a daemon,
 * whose peak would stay resident. It can raise the peak where freed blocks
 * do not fit the next arrays (a query of 1.0 M objects: 92 -> 115 MiB, and
 * no faster at 5 M: not used there).
 */
void heapmem_keep_freed(void);
/* heapmem_keeps_freed - whether heapmem_keep_freed() was called. */
bool heapmem_keeps_freed(void);

/*
 * heapmem_room_now - fill *@r for this process now: /proc/meminfo, its
 * cgroups, its own VmRSS, mt_opts.max_memory. Returns 0 or -errno.
 */
int heapmem_room_now(struct heapmem_room *r);

#endif
