/* zgcfreeze.h - a frozen copy of a ZGC heap (MT_AP_FREEZE_ZGC).
 *
 * ZGC's heap is a shared memfd: a fork shares it, so the JVM's writes after
 * the pause would land in the copy. So in the pause, before the fork, the
 * agent checks that no page is being relocated (every ZForwarding's
 * _ref_count 0: the copy's HotSpot code then never relocates), lists the
 * used pages and how the heap file is mapped; the copy copies the used pages
 * into a file of its own (allocated before the pause, so the copy only
 * copies), maps that file over every heap view, cuts the JVM's file off and
 * tells the JVM, which only then leaves the pause. The pause grows by that
 * copy (the used heap, about 2 GB/s here); docs/zgc-frozen-design.md has
 * the why of each step.
 */
#ifndef MEMTRACE_AGENT_ZGCFREEZE_H
#define MEMTRACE_AGENT_ZGCFREEZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "memtrace/agent_proto.h"
#include "zgcref.h"

#define ZGC_COPY_NAME "memtrace-zgc-copy" /* the copy's heap file (memfd) */

struct zgc_page {
	uint64_t start, top;       /* heap offsets: the page's objects */
	uint8_t type;              /* ZPage::_type (0 small, 1 medium, 2 large); 0 unknown */
};

struct zgc_skip {
	uint64_t lo, hi;           /* heap offsets (whole 4 KiB pages) not copied */
};

struct zgc_heapmap {
	uint64_t lo, hi, pgoff;    /* a mapping of the JVM's heap file (any view) */
};

struct zgc_chunk {
	uint64_t off, len;         /* heap offset and bytes (whole 4 KiB pages) */
	uint64_t src, dst;         /* their offsets in the JVM's heap file and in the copy's */
	int file;                  /* which of the copy's files (copy_fd[file]) */
};

struct zgc_freeze {
	bool on;                   /* zgcfreeze_begin() ran: end() has work */
	struct mt_ap_heap_zgc req;
	struct zgc_refs refs;      /* masks and forwarding tables, read in the pause */
	int heap_fd;               /* the JVM's heap file, -1 */
	int copy_fd[2];            /* the copy's heap files, allocated before the pause: the
				    * JVM's half of the pages goes into [0], the copy's into
				    * [1] (one file would serialize both: its inode lock); -1 */
	int up[2];                 /* the copy tells the JVM its half is copied and mapped */
	int down[2];               /* the JVM tells the copy its half is copied; -1 */
	uint64_t copy_cap[2];      /* bytes allocated in each before the pause */
	uint64_t need[2];          /* bytes each file holds of the plan */
	uint64_t lo, hi;           /* heap offsets: the lowest page start, the highest top */
	uint64_t bytes;            /* what the copy copies */
	uint64_t skipped;          /* what it leaves out (primitive arrays' elements) */
	const struct mt_ap_heap_layout *bodies; /* set (by the caller, before the pause):
				    * primitive arrays' elements in medium and large
				    * pages are not copied (the copy reads no strings) */
	struct zgc_skip *skips;    /* those, in address order */
	size_t nskips;
	uint64_t views[4];         /* the heap views' bases (JDK 17: 3; later: 1) */
	int nviews;
	struct zgc_page *pages;
	size_t npages;
	struct zgc_heapmap *maps;
	size_t nmaps;
	struct zgc_chunk *chunks;
	size_t nchunks;
	size_t split;              /* chunks [0, split) the JVM copies, the rest the copy */
	uint64_t deadline;         /* CLOCK_MONOTONIC ns: the copy stops here when not done
				    * (set in the pause from req.max_pause_ms); 0 none */
	uint64_t copied;           /* bytes of its half the JVM has copied */
	uint64_t busy;             /* ZForwardings still relocating at the last look */
	bool consumed;             /* a copy took the files (else end() keeps them a while) */
	void (*idle)(void);        /* the socket thread's other duties (draining the sampling
				    * rings) while begin() and settle() wait; NULL none */
};

/*
 * zgcfreeze_begin - before the pause (the JVM running): check @req's
 * addresses, find the JVM's heap file, and allocate the copy's file at the
 * heap's used size and a margin (outside the pause: fresh memory is the slow
 * part of a copy), calling @idle (NULL: none) now and then. Returns 0, or
 * -errno with @why. zgcfreeze_end() frees.
 */
int zgcfreeze_begin(struct zgc_freeze *zf, const struct mt_ap_heap_zgc *req, void (*idle)(void),
		    char *why, size_t n);

/*
 * zgcfreeze_settle - before the pause, the JVM running and allocating: wait
 * (at most @ms) for a relocation to end - a look that finds pages being
 * relocated, then one that finds none. Right then the cycle's garbage is
 * freed (the copy copies less) and nothing is in flight (no -EAGAIN). A JVM
 * whose used heap grows by less than 1 MiB in the first 200 ms, no
 * relocation seen, is idle: no wait. Returns whether one ended; *@ns the wait.
 */
bool zgcfreeze_settle(struct zgc_freeze *zf, uint32_t ms, uint64_t *ns);

/*
 * zgcfreeze_fits - before the pause (the JVM running): the used heap from
 * ZGC's page table against the request's max_copy_mib (MT_AP_FREEZE_ZGC_BOUND;
 * 0: no bound). Returns 0, or -EFBIG with @why saying the used heap and the
 * bound; *@used (may be NULL) the used heap read.
 */
int zgcfreeze_fits(struct zgc_freeze *zf, uint64_t *used, char *why, size_t n);

/*
 * zgcfreeze_pause - in the pause, before the fork: read the masks and tables,
 * check that no page is being relocated (JDK 17's relocation goes on in a
 * pause: waited for up to 50 ms), list the used pages and the heap file's
 * mappings, plan the copy; the copy's deadline is req.max_pause_ms from
 * here. Returns 0, -EAGAIN when ZGC is relocating (why says so), -EFBIG when
 * the used heap is over the request's max_copy_mib, or another -errno with
 * @why.
 */
int zgcfreeze_pause(struct zgc_freeze *zf, char *why, size_t n);

/*
 * zgcfreeze_child - in the copy, first thing after the fork: copy its half
 * of the used pages, map the copy's file over every heap view (the rest of
 * each view: private zeros), close the JVM's heap file, tell the JVM, wait
 * for the JVM's half. Only system calls on what zgcfreeze_pause() planned.
 * Returns 0, or -1 (the copy then exits: the JVM sees the pipe close).
 */
int zgcfreeze_child(struct zgc_freeze *zf);

/*
 * zgcfreeze_wait - in the JVM, in the pause, after the fork: copy the first
 * half of the used pages (the copy copies the rest at the same time), wait
 * until the copy says its half is done and mapped (at most a few seconds, by
 * the heap's size, and never past the deadline), tell it to go on.
 * Returns 0, -ETIME when the deadline came first (@why says what was copied
 * and what the whole copy would take), or another -errno with @why (then
 * kill the copy before leaving the pause). Sets *@ns to the wait.
 */
int zgcfreeze_wait(struct zgc_freeze *zf, uint64_t *ns, char *why, size_t n);

/* zgcfreeze_end - close and free what begin and pause made; copy files no
 * copy took are kept a few seconds for the next begin (a retry). Safe twice,
 * and on a zeroed struct. */
void zgcfreeze_end(struct zgc_freeze *zf);

/* zgcfreeze_spare_expire - free kept copy files after their time (the
 * socket thread calls it now and then). */
void zgcfreeze_spare_expire(uint64_t now_ns);

#endif
