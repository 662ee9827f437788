/* edenwatch.h - is the JVM filling its eden? The frozen walk's choice to wait
 * for the JVM's next GC before the fork, decided from samples the caller
 * reads (heap/snaptake.c: hsperfdata's counters, proc_sched_ns()).
 *
 * The eden is the young generation's allocation space, in the hsperfdata
 * counters HotSpot samples every 50 ms: the watch takes two of its samples,
 * EDENWATCH_NS, looked at every EDENWATCH_POLL_NS. An allocating JVM makes
 * the walk wait for its next GC (HEAPFREEZE_GC_WAIT_MS at most): right after
 * it the eden is empty and kept out of the copy, so the JVM's allocations
 * after the pause take no page fault (measured: an eden shared with the copy
 * cost the mutator ~3 us of system time per 4 KiB page it allocated over).
 *
 * An idle JVM is not kept waiting the whole watch (110 ms were ~25 % of a
 * histo's answer on 0.5 M objects): the watch ends after a stretch of
 * EDENWATCH_IDLE_NS or more in which the JVM's threads together ran under
 * 3 % of a core and waited for a CPU under 3 % too (such a JVM allocates
 * under ~1 MiB in the stretch, less than the eden growth that makes it wait;
 * on a busy machine a JVM that allocates flat out can run little in 8 ms,
 * but its threads wait, runnable). The stretch starts again after a poll
 * that finds it busier (at least 8 ms into it): an idle JVM's periodic
 * threads run in bursts (G1 Service, the periodic task, a program's own 1 ms
 * timer: 0.1-2.3 ms a burst), and when the stretch was the whole watch one
 * burst early on kept it above 3 % to its end (2 of 4 snapshots of an idle
 * 5 M-object heap waited 110 ms). A JVM that allocates runs through every
 * stretch, or its eden grows.
 */
#ifndef MEMTRACE_HEAP_EDENWATCH_H
#define MEMTRACE_HEAP_EDENWATCH_H

#include <stdbool.h>
#include <stdint.h>

#define EDENWATCH_NS (110 * 1000000ull)
#define EDENWATCH_IDLE_NS (8 * 1000000ull)
#define EDENWATCH_POLL_NS (2 * 1000000ull)

/* What the caller read at one moment. */
struct edenwatch_sample {
	uint64_t now_ns;  /* monotonic */
	int64_t used;     /* the eden's bytes used */
	int64_t young;    /* young collections so far */
	uint64_t run_ns;  /* the JVM's threads' CPU time, summed */
	uint64_t wait_ns; /* ... and their time runnable, waiting for a CPU */
	bool sched;       /* run_ns and wait_ns were read */
};

struct edenwatch {
	int64_t used, young;  /* the counters at the start */
	uint64_t t0_ns;       /* when the watch began */
	uint64_t q0_ns;       /* when the stretch looked at for idleness began */
	uint64_t run0_ns;     /* the JVM's CPU time then */
	uint64_t wait0_ns;    /* its threads' wait for a CPU then */
	bool sched;           /* the times above are known */
};

enum edenwatch_verdict {
	EDENWATCH_GOING,     /* look again after EDENWATCH_POLL_NS */
	EDENWATCH_ALLOCATES, /* the eden grew, or was collected: wait for a GC */
	EDENWATCH_IDLE,      /* a quiet stretch: no wait */
	EDENWATCH_QUIET,     /* the whole watch without the eden growing: no wait */
};

/* edenwatch_begin - start *@w at sample @s. */
void edenwatch_begin(struct edenwatch *w, const struct edenwatch_sample *s);

/* edenwatch_wants_sched - does the poll at @now_ns look at the JVM's CPU
 * time (else the caller need not read it)? Pure. */
bool edenwatch_wants_sched(const struct edenwatch *w, uint64_t now_ns);

/* edenwatch_poll - the watch's verdict at sample @s (a stretch found busier
 * starts again in *@w). */
enum edenwatch_verdict edenwatch_poll(struct edenwatch *w, const struct edenwatch_sample *s);

#endif
