// SPDX-License-Identifier: GPL-2.0
/* heapmem.c - the memory a heap answer takes in memtrace (see heapmem.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap/heapfreeze.h"
#include "heap/heapmem.h"
#include "lib/util.h"

/*
 * Bytes per object and per reference (the records', class references not
 * counted), peak RSS over the run. Measured 2026-11-30 (stop 47, JDK 17, G1,
 * a view's objects 32 bytes) on FreezeWorkload (1.02, 2.02 and 5.02 M
 * objects, about as many references) and RefDense (0.42, 1.02 and 2.02 M
 * objects, seven references each); fitted on the two largest, then rounded
 * up so that every shape's peak is under its bound:
 *
 *   use        fitted/object  /reference   here   peaks (MiB): Freeze 1/2/5 M, Dense 0.4/1/2 M
 *   records    43.2           21.0         52 26  80 145 340, 92 206 397 (snapshot -o)
 *   view       45.2           24.5         52 28  85 155 366, 101 231 447 (query, seed 03)
 *   retained   34.5           39.1         44 44  90 161 385, 137 318 622 (heap --retained)
 *   series     103            71          140 48  145 268 863, 162 (leaks, 3 snapshots)
 *
 * The bound over the peak: 1.13-1.35 (records), 1.13-1.30 (view),
 * 1.13-1.32 (retained). leaks keeps what each snapshot freed for the next
 * (heapseries_init(): no mmap, no trim), and how those blocks fit the next
 * snapshot's arrays varies with the heap's size, so its cost per object is
 * set above the fit (1.35-1.49 times the peak where no pool is kept); from
 * ~128 MiB of records on its later snapshots' records go to a pool whose
 * size is said with it (Dense 1 M: 585 MiB peak, 490 said + the pool;
 * Dense 2 M: 1175, 964 + 451).
 *
 * A view holds 32 bytes an object (dsl_hobject, over the record it is built
 * from) and 12 a reference, its class reference included; the records 32
 * and 24; the dominator tree 20 an object and 12 a kept edge.
 *
 * References by position (stop 50, MT_AP_FREEZE_REFPOS, the view built over
 * them where the copy wrote them): 12 bytes a reference instead of 24, and
 * each object's CLASS reference a record the copy writes (12 more an
 * object): retained 12 bytes less a reference and 12 more an object; the
 * view's set by the peaks below. Measured (JDK 17/25; peak MiB, by position
 * against by id): FreezeWorkload 500000 (1.03 M objects and references)
 * heap --retained 89-91 as by id, query 77-79 as by id; RefDense 400000
 * (0.42 M objects, 2.8 M references) 106-108 against 134-136, query 67-69
 * against 95-97; RefDense 2000000 (2.02 M objects, 14 M references, JDK 25)
 * 467 against 605, query 276 against 414. The bound over the peak:
 * 1.22-1.33 (retained), 1.21-1.40 (view). Since stop 52 such a view for
 * the dominators holds each object's run too (dsl_heap.ref_runs, 4 bytes
 * an object: their search reads 4 bytes an object, not 32), so retained
 * takes 60: peaks 783 MiB at 10.03 M objects and 10.05 M references, 447
 * at Tomcat's 5.25 M and 6.36 M (bounds 913 and 527: 1.17, 1.18).
 *
 * A leak search's snapshots so built (stop 51; each view in the pool the
 * snapshot before left, none copied out), peak MiB of `leaks --duration 3
 * --snapshots 3`, by position against by id (MEMTRACE_NO_INPLACE=1), JDK
 * 25 / 17: FreezeWorkload 2500000 (5.03 M objects and references) 557 / 554
 * against 852 / 864; RefDense 2000000 (2.03 M objects, 14.05 M references)
 * 502 / 500 against 1179 / 1176; FreezeWorkload 500000 130 against 151,
 * RefDense 400000 132 / 115 against 163 / 162. Six snapshots over 10 s at
 * 5 M: 541 against 860. The bound over the peak 1.16-1.26.
 */
static const struct {
	uint32_t obj, ref;
	const char *what;
} cost[] = {
	[HEAPMEM_NONE] = { 0, 0, "counts per class" },
	[HEAPMEM_RECORDS] = { 52, 26, "the snapshot's records" },
	[HEAPMEM_VIEW] = { 52, 28, "a heap view" },
	[HEAPMEM_RETAINED] = { 44, 44, "a heap view and its dominator tree" },
	[HEAPMEM_SERIES] = { 140, 48, "a leak search's snapshots" },
	[HEAPMEM_VIEW_POS] = { 60, 14, "a heap view" },
	[HEAPMEM_RETAINED_POS] = { 60, 32, "a heap view and its dominator tree" },
	[HEAPMEM_SERIES_POS] = { 104, 30, "a leak search's snapshots" },
	/* stop 58: 12 bytes an object fewer for a view and a tree (e2e
	 * heap_memory, 1.03 M objects: the query's peak 67.8-69.6 MiB for a
	 * bound of 104.5-105 with 60, 1.54: over 1.5); a leak search's kept
	 * (its bound over the peak 1.22 there) */
	[HEAPMEM_VIEW_IMPLIED] = { 48, 14, "a heap view" },
	[HEAPMEM_RETAINED_IMPLIED] = { 48, 32, "a heap view and its dominator tree" },
	[HEAPMEM_SERIES_IMPLIED] = { 104, 30, "a leak search's snapshots" },
};

enum heapmem_use heapmem_by_position(enum heapmem_use use, bool implied)
{
	if (implied)
		return use == HEAPMEM_VIEW ? HEAPMEM_VIEW_IMPLIED :
		       use == HEAPMEM_RETAINED ? HEAPMEM_RETAINED_IMPLIED :
		       use == HEAPMEM_SERIES ? HEAPMEM_SERIES_IMPLIED : use;
	return use == HEAPMEM_VIEW ? HEAPMEM_VIEW_POS :
	       use == HEAPMEM_RETAINED ? HEAPMEM_RETAINED_POS :
	       use == HEAPMEM_SERIES ? HEAPMEM_SERIES_POS : use;
}

uint64_t heapmem_need(enum heapmem_use use, uint64_t objs, uint64_t refs)
{
	if (use <= HEAPMEM_NONE || use > HEAPMEM_LAST)
		return 0;
	return HEAPMEM_BASE + objs * cost[use].obj + refs * cost[use].ref;
}

uint64_t heapmem_records(uint64_t objs, uint64_t refs)
{
	return objs * 32 + refs * 24; /* struct mt_ap_hobj, struct mt_ap_href */
}

/* "5.02 M" / "120 k" / "950": a count for a message. */
static const char *fmt_count(uint64_t v, char *b, size_t n)
{
	if (v >= 1000000)
		snprintf(b, n, "%.2f M", (double)v / 1e6);
	else if (v >= 1000)
		snprintf(b, n, "%.1f k", (double)v / 1e3);
	else
		snprintf(b, n, "%llu", (unsigned long long)v);
	return b;
}

/*
 * The bounds' half of a check: @need (memtrace's peak), @total (with what
 * the copy holds meanwhile) against @r; @why holds the first words (@len of
 * them); @records: what `snapshot -o` would take (0: no such advice);
 * @frozen: a frozen walk's (histo then takes a few MiB whatever the heap).
 */
static int bounds(uint64_t need, uint64_t total, uint64_t records, bool frozen,
		  const struct heapmem_room *r, char *why, size_t n, int len)
{
	char a[32], b[32], c[32], d[32];
	uint64_t more;

	if (len < 0 || (size_t)len >= n)
		len = n ? (int)n - 1 : 0;
	if (r->max && need > r->max) {
		snprintf(why + len, n - (size_t)len, ", over --max-memory %s: raise it%s",
			 fmt_bytes(r->max, b, sizeof(b)), frozen ? ", or ask `memtrace histo` "
			 "(a few MiB whatever the heap)" : "");
		return -ENOMEM;
	}
	more = total > r->held ? total - r->held : 0;
	if (r->free == UINT64_MAX || more + HEAPFREEZE_MARGIN <= r->free)
		return 0;
	if (total > need) {
		int k = snprintf(why + len, n - (size_t)len, ", and about %s while the frozen copy "
				 "lives (its records and memtrace's copy of them)",
				 fmt_bytes(total, b, sizeof(b)));

		if (k > 0 && (size_t)k < n - (size_t)len)
			len += k;
	}
	len += snprintf(why + len, n - (size_t)len, "; %s has %s left (%s) besides the %s "
			"memtrace holds, and keeps %s free: memtrace did not hold it%s",
			r->by_cgroup ? "memtrace's memory cgroup" : "this machine",
			fmt_bytes(r->free, b, sizeof(b)),
			r->by_cgroup ? "under its limit" : "MemAvailable",
			fmt_bytes(r->held, c, sizeof(c)), fmt_bytes(HEAPFREEZE_MARGIN, d, sizeof(d)),
			frozen ? ". `memtrace histo` needs a few MiB whatever the heap" : "");
	if (records && len >= 0 && (size_t)len < n)
		snprintf(why + len, n - (size_t)len, "; `memtrace snapshot -o FILE` about %s, and "
			 "the file can be read on a machine with more memory (`memtrace heap FILE`)",
			 fmt_bytes(records, a, sizeof(a)));
	return -ENOMEM;
}

uint64_t heapmem_limit(const struct heapmem_room *r)
{
	uint64_t lim = UINT64_MAX;

	if (r->free != UINT64_MAX)
		lim = r->free > HEAPFREEZE_MARGIN ? r->free - HEAPFREEZE_MARGIN + r->held : r->held;
	if (r->max && r->max < lim)
		lim = r->max;
	return lim;
}

int heapmem_fits(enum heapmem_use use, uint64_t objs, uint64_t refs, bool copy_writes,
		 const struct heapmem_room *r, char *why, size_t n)
{
	uint64_t need = heapmem_need(use, objs, refs), rec = heapmem_records(objs, refs);
	uint64_t total;
	char o[32], f[32], a[32];
	int len;

	if (!need)
		return 0;
	need += r->pool;
	total = need;
	len = snprintf(why, n, "%s of %s objects and %s references would take memtrace about %s "
		       "(an upper bound: %llu bytes an object and %llu a reference, measured)",
		       cost[use].what, fmt_count(objs, o, sizeof(o)), fmt_count(refs, f, sizeof(f)),
		       fmt_bytes(need, a, sizeof(a)), (unsigned long long)cost[use].obj,
		       (unsigned long long)cost[use].ref);
	if (r->pool && len >= 0 && (size_t)len < n) /* the pool is memtrace's too */
		len += snprintf(why + len, n - (size_t)len, " and the %s it keeps for the frozen "
				"copy's records", fmt_bytes(r->pool, a, sizeof(a)));
	/* while the copy lives its records and memtrace's copy of them are
	 * both resident (in a pool large enough, they are in memtrace's) */
	if (copy_writes && r->pool < rec && 2 * rec + HEAPMEM_BASE + r->pool > total)
		total = 2 * rec + HEAPMEM_BASE + r->pool;
	return bounds(need, total,
		      use == HEAPMEM_RECORDS ? 0 : heapmem_need(HEAPMEM_RECORDS, objs, refs), true,
		      r, why, n, len);
}

/*
 * A walk by JVMTI: bytes of peak RSS per visit (one per reference JVMTI
 * reported, class references and roots included), measured with --walk
 * paused (JDK 17, G1): FreezeWorkload 500000 (1.02 M objects, 2.07 M
 * visits) histo 84, query (seed 03) 110, snapshot -o 122, heap --retained
 * 134; FreezeWorkload 2500000 (10.1 M visits) heap --retained 162 (1.62 GB:
 * the visits, their numbering and the records at once, 3.6 times a frozen
 * walk's 448 MiB). Rounded up.
 */
uint64_t heapmem_visit_bytes(enum heapmem_use use)
{
	switch (use) {
	case HEAPMEM_NONE: return 96;
	case HEAPMEM_RECORDS: return 144;
	default: return 192;
	}
}

int heapmem_fits_visits(enum heapmem_use use, uint64_t visits, const struct heapmem_room *r,
			char *why, size_t n)
{
	uint64_t per = heapmem_visit_bytes(use), need = HEAPMEM_BASE + visits * per;
	char v[32], a[32];
	int len;

	len = snprintf(why, n, "a heap walk by JVMTI (not frozen) reports each reference, %s so "
		       "far, and memtrace holds up to %llu bytes for each until the walk's objects "
		       "are numbered and %s built: about %s for those alone",
		       fmt_count(visits, v, sizeof(v)), (unsigned long long)per,
		       use <= HEAPMEM_NONE || use > HEAPMEM_LAST ? "its counts" : cost[use].what,
		       fmt_bytes(need, a, sizeof(a)));
	return bounds(need, need, 0, false, r, why, n, len);
}

const char *heapmem_text(enum heapmem_use use, uint64_t objs, uint64_t refs, uint64_t pool,
			 char *buf, size_t n)
{
	char o[32], f[32], a[32], k[32];
	int len;

	if (use <= HEAPMEM_NONE || use > HEAPMEM_LAST)
		use = HEAPMEM_NONE;
	len = snprintf(buf, n, "%s of %s objects and %s references: memtrace holds at most %s "
		       "for it", cost[use].what, fmt_count(objs, o, sizeof(o)),
		       fmt_count(refs, f, sizeof(f)),
		       fmt_bytes(heapmem_need(use, objs, refs) + pool, a, sizeof(a)));
	if (pool && len >= 0 && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, " (%s of it kept for the frozen copies' "
			 "records)", fmt_bytes(pool, k, sizeof(k)));
	return buf;
}

static bool keeps_freed;

void heapmem_keep_freed(void)
{
	mallopt(M_MMAP_MAX, 0);
	mallopt(M_TRIM_THRESHOLD, INT_MAX);
	keeps_freed = true;
}

bool heapmem_keeps_freed(void)
{
	return keeps_freed;
}

int heapmem_oom_first(void)
{
	static bool done;
	int fd, err = 0;

	if (done)
		return 0;
	done = true;
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (write(fd, "1000", 4) != 4) /* raising it needs no privilege */
		err = -errno;
	close(fd);
	return err;
}

int heapmem_room_now(struct heapmem_room *r)
{
	char *text = read_file("/proc/self/status", NULL);
	uint64_t kb;

	memset(r, 0, sizeof(*r));
	r->max = mt_opts.max_memory;
	r->free = heapfreeze_mem_left(getpid(), &r->by_cgroup);
	if (!text)
		return -errno;
	kb = heapfreeze_meminfo_kb(text, "VmRSS");
	free(text);
	r->held = kb == UINT64_MAX ? 0 : kb * 1024;
	return 0;
}
