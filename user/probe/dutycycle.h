/*
 * dutycycle.h - keep a probe's cost under a budget at any event rate by
 * looking at only part of the events (pure logic: no BPF, no clock of its
 * own; probe/allocwindows.c and bpf/alloc.bpf.c do what it says).
 *
 * A sample costs the uprobe trap t (calibrated at start), the program's gate
 * g (a random number: keep this sample or not) and, when kept, its work w
 * (the stack walk, the map update), both measured in BPF. Two levers:
 *  - keep: each sample is kept with probability keep and its weight scaled
 *    by 1 / keep (Bernoulli thinning: unbiased, and the variance of a
 *    thousand samples, not of a few windows). It saves w, not t + g.
 *  - duty: when the trap and the gate alone would cost the busiest thread
 *    more than DUTYCYCLE_TRAP_SHARE of the budget, time is cut into periods of
 *    DUTYCYCLE_PERIOD_NS (100 ms) and the uprobes are attached for one window
 *    of duty x period in each, at a random offset (a periodic workload cannot
 *    stay in phase with the windows); weights are scaled by period / window
 *    (per thread, by how much slower it allocates in windows: threadctr.h).
 *    Up to ten windows a second, so a burst of a few hundred ms is seen
 *    several times. Each window also costs the thread a fixed time beyond
 *    the trap in it (DUTYCYCLE_WINDOW_COST_NS: the attach's edge, and a
 *    slower thread for 5-15 ms after the detach, while the kernel's RCU
 *    grace period runs), measured by bench/window_profile.sh; so the
 *    period is lengthened until those fixed costs take at most
 *    DUTYCYCLE_WINDOW_SHARE of the budget, and the windows' traps get the
 *    rest (wbudget). That needs a uprobe_multi link (uprobemulti.h: attached in
 *    ~0.1 ms whatever detach is in flight) and a detach whose grace-period
 *    wait runs on a thread of its own (detach.h); with perf-event uprobes
 *    an attach waited behind the previous detach's 60-90 ms, and windows
 *    were one a second. Totals under windows are not the windows' rates x
 *    time but the JVM's own per-thread counters (threadctr.h); the windows
 *    give the classes and stacks. It is used only when thinning cannot
 *    help: the trap alone over budget (above ~2 GB/s on one thread here,
 *    with a 5-6 us trap).
 * Both are chosen per window from the one just closed: the busiest thread's
 * samples per second r (the recent windows' highest, decaying: a window in
 * a GC pause reads ~0) give its overhead r (t + g + keep w) in the windows;
 * duty = min(1, DUTYCYCLE_TRAP_SHARE budget / (r (t + g))) and keep fills
 * the rest of the budget. That model counts the trap as calibrated in a
 * loop; in a JVM a window slows the thread more (the trap's cache and TLB
 * effects: 23-25 % measured from its counters where the model said
 * 11-20 %), so where the busiest thread's slowdown was measured
 * (slow_share) and exceeds the model, duty shrinks by their ratio. That
 * still misses what a window costs outside itself; the busiest thread's
 * loss, measured from its counter over whole periods (loss_share), moves a
 * factor on the duty until the loss is DUTYCYCLE_LOSS_TARGET of the budget;
 * where that would take the duty under DUTYCYCLE_MIN_DUTY, the windows keep
 * the floor's length and the period grows instead (up to
 * DUTYCYCLE_MAX_PERIOD_NS: fewer windows, so less of their fixed cost).
 * keep is also chosen for each thread from its own
 * rate (dutycycle_thread_keep): a thread that allocates slowly keeps all of
 * its samples while the busiest one is thinned, so the classes and stacks
 * of the slow threads carry no thinning spread (one keep for all, the
 * busiest thread's, left the slow ones a handful of heavy samples: shares
 * off by 5 points on a 5 us trap). A thread new since the last window's
 * close keeps its first dutycycle_new_free() samples of a window in full
 * (what the budget pays for), then the global keep, the busiest thread's.
 * The first window (DUTYCYCLE_MEASURE_NS, attached, keep 1) only measures.
 *
 * Estimates (when the JVM's thread counters cannot be read, threadctr.h):
 * the scaled bytes the kernel summed are corrected at read time
 * (dutycycle_factor) for windows that closed late, for a period cut short
 * by the end of the session, and for the time since the last window ended
 * (at that window's rate). Periods are contiguous: one whose window opened
 * late (attaching waits) ends when its window closes, never in the past.
 */
#ifndef MEMTRACE_DUTYCYCLE_H
#define MEMTRACE_DUTYCYCLE_H

#include <stdbool.h>
#include <stdint.h>

#define DUTYCYCLE_PERIOD_NS 100000000ull       /* under windows: the shortest */
#define DUTYCYCLE_MAX_PERIOD_NS 1000000000ull   /* ... and the longest */
/* the allocating thread's time lost per window besides the slowdown in it
 * (bench/window_profile.sh, AllocTick on this 2-core PVM guest, JDK 17 and
 * 25, 100-300 windows a run: windows of 2, 4, 7 and 14 ms cost the thread
 * ~1.6, 2.7-3.1, 2.5-3.7 and 4.3-4.5 ms, i.e. ~1 ms + 24 % of the window):
 * the attach's edge, then a slower thread for 5-50 ms after the detach */
#define DUTYCYCLE_WINDOW_COST_NS 1000000.0
#define DUTYCYCLE_WINDOW_SHARE 0.3 /* of the budget, at most, for that */
/* the measured loss (threadctr.h) holds the duty to the budget: a factor
 * (loss_adj, DUTYCYCLE_LOSS_MIN to 1) on the model's duty moves by
 * DUTYCYCLE_LOSS_GAIN x (target - loss) / target a window, at most
 * DUTYCYCLE_LOSS_STEP either way */
#define DUTYCYCLE_LOSS_GAIN 0.1
/* ... toward this share of the budget: one reading is noisy (its spans
 * without the JVM's stops, threadctr_paused: interquartile range 1.8-2.8
 * points of the thread's time on AllocTick, 4.2-4.8 with them) and misses
 * the slower tail past its reading and the next attach's edge (single
 * readings' median 0.5-0.7 % where bench/window_profile.sh read 0.7-1.4 %);
 * at 70 % the duty stayed at 3-4 % and the profile read 0.9-1.2 % */
#define DUTYCYCLE_LOSS_TARGET 0.5
#define DUTYCYCLE_LOSS_STEP 0.1
#define DUTYCYCLE_LOSS_MIN 0.25
#define DUTYCYCLE_THIN_PERIOD_NS 1000000000ull  /* thinning only (no_windows) */
#define DUTYCYCLE_MEASURE_NS 200000000ull
#define DUTYCYCLE_MIN_DUTY 0.02 /* of the budget's period: below it, longer periods */
#define DUTYCYCLE_MIN_KEEP (1.0 / 64)
#define DUTYCYCLE_GATE_NS 30.0   /* the gate's cost until one is measured */
#define DUTYCYCLE_TRAP_SHARE 0.9 /* windows only when trap + gate exceed this share */
#define DUTYCYCLE_RATE_DECAY 0.8 /* the rate that decides: the recent windows' highest,
				  * times this every DUTYCYCLE_PERIOD_NS */
#define DUTYCYCLE_SCALE_ONE 256   /* = MT_ALLOC_SCALE_ONE */
#define DUTYCYCLE_KEEP_ONE 65536  /* = MT_ALLOC_KEEP_ONE */

/* What the probe counted in the window that is closing. */
struct dutycycle_measure {
	uint64_t raw_bytes;          /* the kept samples' bytes over their keep, before
				      * the window's scale */
	uint64_t samples;            /* kept samples */
	uint64_t max_thread_samples; /* samples of the busiest thread, kept or not */
	uint64_t bpf_ns;             /* time in the BPF program for the kept samples */
	uint64_t skipped;            /* samples the gate let go */
	uint64_t skipped_ns;         /* their time in the program */
	double slow_share;           /* the busiest thread's measured slowdown while the
				      * probes are in (1 - 1 / its corr, threadctr.h);
				      * 0: not measured */
	bool loss_ok;                /* loss_share measured: */
	double loss_share;           /* the share of its time the windows cost the
				      * busiest thread, all told (threadctr.h) */
};

struct dutycycle {
	double budget;               /* share of one allocating thread's time */
	double loss_adj;             /* on the duty, from the measured loss (1: none) */
	double loss;                 /* the last measured loss; -1: none */
	double wbudget;              /* what of it the windows' traps may take (the
				      * rest: DUTYCYCLE_WINDOW_COST_NS a window) */
	uint64_t period_ns;          /* of the periods under windows, from the budget */
	double force_keep, force_duty; /* > 0: fixed choices instead of the budget's
					* (tests of the estimates on a real JVM) */
	bool no_windows;             /* thinning only: always attached (counters that
				      * must only grow: serve, top) */
	bool windowed;               /* a window ever ended with a detach */
	double trap_ns;              /* the uprobe trap, per sample */
	uint64_t t0;                 /* session start */
	uint64_t rng;
	bool on;                     /* the probes are (to be) attached */
	double duty;                 /* of the current period */
	double keep;                 /* the busiest thread's chance to keep a sample,
				      * in the next window */
	uint32_t keepk;              /* keep in DUTYCYCLE_KEEP_ONE units (the program's) */
	uint64_t scale;              /* of the next window: period / window,
				      * DUTYCYCLE_SCALE_ONE units */
	/* the current period and its window */
	uint64_t pstart, plen;       /* plen 0: ends when its window closes */
	uint64_t wstart, wend;
	bool wlive;                  /* its window counts: the probes are in place */
	bool wclosed;                /* its window closed: wraw, wlen */
	uint64_t wraw, wlen;
	uint64_t wscale;
	double wkeep;
	/* finished periods (contiguous from the start) */
	double est, scaled;          /* sum raw / keep * plen / wlen; sum raw * scale */
	uint64_t covered;            /* their length */
	double last_rate;            /* bytes per ns of the last finished period's window */
	/* the last window's measurement (for printing) */
	double rate;                 /* busiest thread's samples per second (held) */
	double rate_hold;            /* the recent windows' highest, decaying */
	double cost_ns;              /* per sample at keep 1, trap included */
	double gate_ns, work_ns;     /* the program's gate, and a kept sample's work */
	uint64_t windows;            /* windows closed */
	double kept, seen;           /* samples kept, and seen (kept + skipped), closed windows */
	double max_share;            /* the most rate x cost_ns was, a share of one thread */
	uint64_t on_ns;              /* time attached, closed windows */
};

enum dutycycle_action {
	DUTYCYCLE_NONE = 0,
	DUTYCYCLE_ATTACH,    /* attach now, with weight scale d->scale, keep d->keepk */
	DUTYCYCLE_DETACH,    /* detach now */
	DUTYCYCLE_RESCALE,   /* stay attached; a new window: d->scale, d->keepk */
};

/* dutycycle_init - start at @now, attached (the measuring window); @budget
 * > 0; @trap_ns the calibrated trap cost; @seed for the windows' offsets. */
void dutycycle_init(struct dutycycle *d, double budget, double trap_ns, uint64_t now,
		    uint64_t seed);

/* dutycycle_next - when dutycycle_tick() wants to be called next (mono ns). */
uint64_t dutycycle_next(const struct dutycycle *d);

/*
 * dutycycle_tick - at @now (>= dutycycle_next() to do anything): closes the
 * window (@m: what the probe counted in it, read just before) or opens the
 * next one. Returns what the caller does with the probes.
 */
enum dutycycle_action dutycycle_tick(struct dutycycle *d, uint64_t now,
				     const struct dutycycle_measure *m);

/*
 * dutycycle_started - the probes of the window opened by the last
 * DUTYCYCLE_ATTACH are in place since @now (attaching a uprobe waits for an
 * RCU grace period: tens to hundreds of ms): the window is measured from
 * here and keeps its length.
 */
void dutycycle_started(struct dutycycle *d, uint64_t now);

/*
 * dutycycle_thread_keep - the keep (DUTYCYCLE_KEEP_ONE units, >= 1) for a
 * thread that took @rate samples a second in the window just closed, under
 * the duty and costs dutycycle_tick() chose there.
 */
uint32_t dutycycle_thread_keep(const struct dutycycle *d, double rate);

/* dutycycle_new_free - how many samples of a window a thread with no keep
 * of its own (new since the last close) keeps in full: as many as the
 * budget pays for over a period at the last measured cost (0 before one). */
uint32_t dutycycle_new_free(const struct dutycycle *d);

/*
 * dutycycle_factor - what to multiply the scaled sums by to estimate all
 * that happened from the start to @now; @raw_open: raw bytes of the window
 * open now (0 if none). 1 when nothing was observed yet, and while no time
 * window was used (thinning's 1/keep weights need no correction, so the
 * kernel's sums are the estimates and only grow).
 */
double dutycycle_factor(const struct dutycycle *d, uint64_t now, uint64_t raw_open);

/* dutycycle_observed - share of the time from the start to @now the probes were attached. */
double dutycycle_observed(const struct dutycycle *d, uint64_t now);

#endif
