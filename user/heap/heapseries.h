/* heapseries.h - a series of frozen heap snapshots of one JVM and what grew
 * between them (analysis/heapgrowth.h): the leak answer, for `leaks` and
 * for any command that watches a JVM over time. Each snapshot is walked
 * (in the caller's agent session), turned into its heap view with shortest
 * root paths (and, for the first and the last, retained sizes), added to the
 * growth, then freed - but the last, which stays for paths and for the
 * sampled objects it found. Each view is built where the frozen copy wrote
 * its records, references by position (MT_AP_FREEZE_INPLACE and _REFPOS),
 * in a pool the next snapshot's copy writes into again, its pages made
 * once; with an agent older than that the records are copied out of a pool
 * kept for them (heapseries_ready_next()). */
#ifndef MEMTRACE_HEAPSERIES_H
#define MEMTRACE_HEAPSERIES_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/heapgrowth.h"
#include "heap/heapview.h"
#include "heap/snaptake.h"

struct recpool;

struct heapseries {
	struct heapgrowth *growth;
	bool max_pause;              /* the user's --max-pause: walks in a pause up to */
	uint32_t max_pause_ms;       /* this long are consented to (heap/snaptake.h) */
	uint32_t taken;              /* snapshots taken */
	uint64_t pause_ns;           /* the JVM's pauses, all snapshots together */
	uint64_t max_pause_ns;
	uint64_t walk_ns;            /* memtrace's time per snapshot, all together */
	uint64_t last_ns;            /* the last one's */
	uint64_t objects_last;
	double t_last;               /* the last one's time (s, the caller's clock): the
				      * fork's instant where the walk was frozen */
	uint64_t objects[HEAPGROWTH_MAX_SNAPS]; /* each snapshot's live objects */
	uint64_t at_ns[HEAPGROWTH_MAX_SNAPS]; /* each image's instant (CLOCK_MONOTONIC at
					 * the fork; 0 when the walk was not frozen) */
	/* the last snapshot's records, and the memory kept for the next copy's
	 * (heap/recpool.h; heapseries_ready_next()) */
	uint64_t rec_objs, rec_refs;
	bool rec_live;               /* the copy's own mark, read as it wrote them */
	bool rec_inplace;            /* kept where the copy wrote them: the view's */
	struct recpool *pool;
	/* the last snapshot, kept */
	struct mt_snapshot snap;
	struct mt_heapview hv;
	bool have_last;
};

/* A series' plan: up to @n (>= 2) snapshots over @duration seconds, turn i
 * due at i x duration/(n-1), the last at @duration; @exact: every turn is
 * taken, late or not (the user asked for n). */
struct heapseries_plan {
	uint32_t n;
	double duration;
	bool exact;
};

/*
 * heapseries_keep_turn - whether turn @i of plan @pl, reached at @t seconds
 * with @taken snapshots in the series so far and the last having taken
 * @last_cost seconds, is taken. The first and the last always are (and every
 * turn of an exact plan). A turn between is left out when the next one is
 * due already, or when a snapshot costing what the last did would end after
 * the window - but one between is always taken (the last turn before the
 * end at the latest): three snapshots at least. On a big heap of a busy JVM
 * a snapshot takes longer than its interval (10 M objects, 2 cores, one
 * thread allocating flat out: 8-19 s apiece, the copy niced behind the JVM):
 * taking every turn stretched a 30 s window to 84-116 s.
 */
bool heapseries_keep_turn(const struct heapseries_plan *pl, uint32_t i, double t, uint32_t taken,
			  double last_cost);

/* heapseries_init - an empty series. Returns 0 or -ENOMEM (printed). From
 * then on the process's malloc keeps the memory it frees (for the next
 * snapshot): a long-lived caller returns it with malloc_trim(0) after the
 * series. */
int heapseries_init(struct heapseries *s);
/* heapseries_free - free @s (a zeroed one: no operation). */
void heapseries_free(struct heapseries *s);

/*
 * heapseries_take - one snapshot in session @ss at @t seconds (the JVM
 * having done @gcs collections), with retained sizes when @retained (the
 * first and the last of a series): walked, added to the growth, kept as the
 * last. Returns 0 or -errno (printed).
 */
int heapseries_take(struct heapseries *s, struct mt_snapsession *ss, double t, uint64_t gcs,
		    bool retained);

/*
 * heapseries_ready_next - after a snapshot that another follows: keep (or
 * grow) memory for the next frozen copy's records (heap/recpool.h), sized
 * from the last one's with room for an eighth more, when they were the
 * copy's own mark's and take at least 128 MiB (MEMTRACE_RECPOOL=always: any
 * size; =never: none, nor the pool of a view built in place passed on), not
 * after a view built in place (its pool is the next copy's: heapseries_take()),
 * and only when the next snapshot, an eighth larger,
 * would still fit the memory bound beside it (heap/heapmem.h: a pool is
 * never why a snapshot is refused). The next heapseries_take() passes it
 * to the copy. Nothing is said; without it the next copy writes into fresh
 * pages.
 */
void heapseries_ready_next(struct heapseries *s);

#endif
