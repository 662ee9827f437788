/*
 * threadctr.h - the JVM's own per-thread allocation counters
 * (Thread::_allocated_bytes, what ThreadMXBean reads), read by user space
 * from every Java thread (jvm/jthreadlist.h) when the duty cycle's windows
 * open and close and when figures are read: exact totals under windows, and
 * how much slower each thread allocates while the probes are in. Pure
 * logic: the caller reads, and hands the readings here.
 *
 * Why. A window's samples stood for their whole period at the window's
 * rate (weights x period / window). But a thread pays the trap on every
 * refill while the probes are in and allocates slower then: at 8 k
 * refills/s and ~10 us a sample (a 5-6 us trap on this VM, the walk, the
 * parse), 10-13 % fewer bytes in a window than out of it, so windowed
 * estimates read 0.87-0.89 of ThreadMXBean. And a thread first sampled in
 * a window has nothing before it: what it did since the session began, up
 * to a period, was lost (0.91 in one run). The counters move whether the
 * probes are in or not, so:
 *  - totals: every thread's bytes since the session began are its
 *    counter's move (threadctr_list: a thread not in the first reading
 *    started since, from 0; one that left the list ended at its last
 *    reading or its last sample's counter, threadctr_sampled); the windows'
 *    scaled weights are rescaled to that total (allocrows.c);
 *  - each thread's mix: its weight scale in a window is
 *    1 + (period / window - 1) x corr, corr its rate out of the windows over
 *    that in them, from its counters at a window's open and close and the
 *    next open (threadctr_open, threadctr_close): the median of the last
 *    THREADCTR_CORR_N measurements, so that one window a thread started or
 *    stopped allocating in (in: idle half of it, out: busy) does not count;
 *  - each thread's loss: the share of its time a window cost it, all told
 *    (the trap in the window, the attach's edge, the slower tail after the
 *    detach that corr does not see): from a reading THREADCTR_TAIL_NS after
 *    the close (threadctr_tail), its clean rate from there to the next open,
 *    and the bytes it fell short of that rate from the open to the tail's
 *    reading, over the period (open to next open), each span without the
 *    JVM's stops in it (threadctr_paused); the mean of the middle three of
 *    the last five. The duty cycle holds the busiest thread's to
 *    the budget (dutycycle.h).
 * A reading is trusted only at or above the thread's last and less than
 * THREADCTR_MAX_STEP above it; a lower one means another thread at the same
 * address (the old one ended at its last reading).
 */
#ifndef MEMTRACE_THREADCTR_H
#define MEMTRACE_THREADCTR_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/idmap.h"

#define THREADCTR_MAX_STEP (1ull << 40)  /* 1 TiB between two readings */
#define THREADCTR_MIN_BYTES (8ull << 20) /* in a window, to measure corr */
#define THREADCTR_CORR_MIN 0.5
#define THREADCTR_CORR_MAX 2.0
#define THREADCTR_CORR_N 5               /* corr: the median of the last 5 ... */
#define THREADCTR_CORR_USE 3             /* ... once there are 3 */

#define THREADCTR_MAX_GONE 8192          /* ended threads kept by name */
/* loss: the thread's counter is read again this long after a window's
 * close, the end of the time the window slowed it (the detach's tail,
 * bench/window_profile.sh: 5-50 ms) ... */
#define THREADCTR_TAIL_NS 60000000ull
#define THREADCTR_CLEAN_MIN_NS 20000000ull /* ... and its clean rate needs this
					    * much after that before the next open */
/* a reading whose time lost is over this share of the window's span (open
 * to tail), or under minus the next, is a change of pace, not a cost */
#define THREADCTR_LOSS_MAX_SPAN 0.5
#define THREADCTR_LOSS_MIN_SPAN 0.25

struct threadctr {
	struct idmap threads;   /* JavaThread* -> struct threadctr_thread * */
	uint64_t readings;      /* threadctr_list calls */
	uint64_t paused_ns;     /* the JVM's stops so far at this reading (threadctr_paused) */
	double gone;            /* bytes of ended threads no longer kept */
	size_t ngone;           /* ended threads kept (their records: gone) */
};

struct threadctr_thread {
	uint64_t base, last;          /* counter at the session's start (or 0), and now */
	uint64_t reading;             /* the last reading that listed it */
	uint64_t open_ctr, open_ns;   /* at the last window open (open_ok) */
	uint64_t close_ctr, close_ns; /* at that window's close (close_ok) */
	bool open_ok, close_ok;
	bool gone;                    /* left the list: ended at `last` */
	double corr;                  /* 0: not measured */
	double m[THREADCTR_CORR_N];   /* the last measurements, a ring */
	unsigned nm;                  /* measurements so far */
	uint64_t tail_ctr, tail_ns;   /* THREADCTR_TAIL_NS after that close (tail_ok) */
	uint64_t open_paused, tail_paused; /* c->paused_ns at the open and the tail */
	bool tail_ok;
	double loss;                  /* share of its time the windows cost it (nl >= 3) */
	double lm[THREADCTR_CORR_N];  /* the last loss measurements, a ring */
	unsigned nl;
};

/* threadctr_init / threadctr_free (NULL-safe: the threads' records). */
void threadctr_init(struct threadctr *c);
void threadctr_free(struct threadctr *c);

/* threadctr_valid - whether @ctr can follow @last for the same thread. */
bool threadctr_valid(uint64_t ctr, uint64_t last);

/*
 * threadctr_list - a reading of every Java thread: @n JavaThread*s @jts and
 * their counters @ctr, @ok[i] whether that one was read. 0, or -ENOMEM
 * (threads left out are counted at the next reading, as new).
 */
int threadctr_list(struct threadctr *c, const uint64_t *jts, const uint64_t *ctr,
		   const bool *ok, size_t n);

/* threadctr_sampled - thread @jt's counter was @ctr at a sample: its last
 * reading is at least that (a thread that ends between two readings). */
void threadctr_sampled(struct threadctr *c, uint64_t jt, uint64_t ctr);

/* threadctr_total - the bytes of every thread since the session began, as
 * of the last reading. */
double threadctr_total(const struct threadctr *c);

/* threadctr_open / threadctr_close - a window opened / closed at @now: each
 * listed thread's counter as of the reading just handed over is noted, and
 * at an open the window before it (open, close, this open) measures corr. */
void threadctr_open(struct threadctr *c, uint64_t now);
void threadctr_close(struct threadctr *c, uint64_t now);

/* threadctr_tail - THREADCTR_TAIL_NS after a window's close, at @now: each
 * listed thread's counter as of the reading just handed over (its loss is
 * measured at the next threadctr_open). */
void threadctr_tail(struct threadctr *c, uint64_t now);

/*
 * threadctr_paused - the JVM's stopped time so far (its safepoints, in ns:
 * jvm/perfdata.h), as of the reading just handed over; call it before
 * threadctr_open and threadctr_tail. The loss's spans are then measured
 * without the stops in them: at 11-15 GB/s on a 256 MiB heap a thread
 * stops for ~30 young collections in each 270 ms clean span, and how many
 * fall in each span moved a single reading by +-2 % of its time (the
 * noise bench/window_profile.sh showed, -0.8..+2.7 % where the profile
 * read 0.6-1.2 %). Never called: 0 throughout, spans as they are.
 */
void threadctr_paused(struct threadctr *c, uint64_t ns);

/* threadctr_loss - thread @jt's measured loss (share of its time, may be
 * slightly negative from noise) in *@loss; false when not measured yet. */
bool threadctr_loss(const struct threadctr *c, uint64_t jt, double *loss);

/* threadctr_reading - thread @jt's newest single loss reading in *@x and
 * how many it has had in *@n (the bench's window log); false when none. */
bool threadctr_reading(const struct threadctr *c, uint64_t jt, unsigned *n, double *x);

/* threadctr_thread - thread @jt's bytes since the session began (or since
 * it started), ended or not; false when it is not known. */
bool threadctr_thread(const struct threadctr *c, uint64_t jt, double *bytes);

/* threadctr_last - thread @jt's counter at the last reading; false when it
 * was not read. */
bool threadctr_last(const struct threadctr *c, uint64_t jt, uint64_t *ctr);

/* threadctr_corr - thread @jt's corr, 0 when not measured. */
double threadctr_corr(const struct threadctr *c, uint64_t jt);

/* threadctr_scale - thread @jt's weight scale for a window whose global
 * scale is @scale (@one meaning 1): 1 + (scale - 1) x corr. */
uint32_t threadctr_scale(const struct threadctr *c, uint64_t jt, uint32_t scale, uint32_t one);

#endif
