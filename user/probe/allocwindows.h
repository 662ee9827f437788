/*
 * allocwindows.h - the allocation tracer's TLAB uprobes and the duty cycle
 * that runs them (probe/dutycycle.h says what to do; this does it on the
 * alloc BPF object): attach and detach the uprobes (uprobe_multi links when
 * the kernel has them, the detach's wait on a thread of its own), a thread
 * of its own that opens and closes the windows - each window's keep and
 * weight scale, each thread's keep for the next one from its own rate -,
 * and every Java thread's own allocation counter (probe/threadctr.h), read
 * around the windows to measure what they cost and to count totals.
 * Used by probe/alloctrace.c, whose skeleton it works on, and by
 * probe/allocrows.c for the factors that turn weights into bytes.
 */
#ifndef MEMTRACE_ALLOCWINDOWS_H
#define MEMTRACE_ALLOCWINDOWS_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "jvm/jthreadlist.h"
#include "jvm/proc.h"
#include "memtrace/alloc.h"
#include "probe/dutycycle.h"
#include "probe/threadctr.h"

struct alloc_bpf;
struct bpf_link;
struct detacher;
struct mt_elf;
struct mt_perfdata;
struct mt_vmstructs;

/* The duty cycle, as alloctrace_duty() reports it. */
struct alloctrace_duty {
	bool on;          /* a budget is set (sampling mode) */
	double budget;    /* as asked */
	double observed;  /* share of the time the probes were attached so far */
	double duty;      /* the current period's share */
	double keep;      /* the busiest thread's chance to keep a sample in the
			   * current window (each thread has its own: probe/dutycycle.h) */
	unsigned int threads_thinned; /* the most threads whose keep was below 1 at once */
	double kept_share;/* samples kept / samples seen, closed windows */
	double max_cost_share; /* the most every sample would have cost the busiest
			   * thread, over the closed windows */
	double rate;      /* the busiest thread's samples per second (last window) */
	double cost_ns;   /* per sample, trap included (last window) */
	double trap_ns;   /* the trap alone, as measured at start */
	uint64_t windows; /* windows so far */
	double period_ms; /* of the periods under windows (dutycycle.h: from the
			   * budget and the windows' fixed cost) */
	double loss_share;/* what the windows cost the busiest thread, all told,
			   * measured from its counter (threadctr.h; may read
			   * slightly negative from noise); -1: not measured (no
			   * windows, or no thread list) */
	double loss_adj;  /* the factor that measure put on the duty */
	double stderr_bytes; /* standard error of the total bytes from thinning
			   * (sqrt of the Horvitz-Thompson variance estimate);
			   * < 0 when time windows make it unknown; 0 with
			   * counted_total */
	bool counted_total;  /* the total is the JVM's own per-thread counters'
			   * (probe/threadctr.h), each thread's keys scaled to
			   * its own: only the classes and stacks are sampled */
};

/* A thread's counters as allocwindows_measure() read them last. */
struct allocwindows_seen {
	uint32_t tid;
	bool in_window;
	uint64_t samples;
	struct mt_alloc_tid v;
};

struct allocwindows {
	struct alloc_bpf *skel;    /* the tracer's (not owned) */
	/* the TLAB uprobes */
	bool multi;                /* through uprobe_multi links (fd), else link */
	struct bpf_link *link[2];
	int fd[2];
	uint64_t off[2];           /* the uprobes' file offsets (multi), found once */
	bool attached;
	struct detacher *det;      /* destroys the links off the duty cycle's thread */
	struct mt_elf *elf;        /* libjvm, kept to attach the uprobes again (owned) */
	struct mt_proc proc;
	/* every Java thread's own counter: totals and the windows' cost */
	struct threadctr tc;
	struct jthreadlist tl;
	bool tl_on;                /* tl works: totals under windows are the counters' */
	struct mt_perfdata *pd;    /* the JVM's stop counters for the loss's spans, or NULL */
	/* the duty cycle: @mu guards dc, base, seen and the thread's state */
	bool on;                   /* a budget is set (sampling mode) */
	struct dutycycle dc;
	struct mt_alloc_cost base; /* the cost counters when the window opened */
	unsigned int thinned;      /* the most threads with keep < 1 at once */
	struct allocwindows_seen *seen; /* each thread's counters, last measure */
	size_t nseen, capseen;
	bool detached;             /* the last window ended with a detach */
	uint64_t tail_due;         /* mono_ns of the threads' tail reading (0: none) */
	FILE *winlog;              /* MEMTRACE_WINDOW_LOG (window_log()), or NULL */
	pthread_t thread;
	bool thread_on, stop;
	bool sync;                 /* mu and cv initialised (allocwindows_prepare) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/*
 * allocwindows_init - before the skeleton @skel loads: the thread list from
 * @vs (NULL: none) and the JVM's stop counters; with a duty cycle (@duty)
 * under @windows, keys by thread (scaled to each thread's counter: bigger
 * maps), and uprobe_multi links where the kernel has them. Never fails:
 * what is missing is left off.
 */
void allocwindows_init(struct allocwindows *w, struct alloc_bpf *skel,
		       const struct mt_vmstructs *vs, const struct mt_proc *p, bool duty,
		       bool windows);
/*
 * allocwindows_prepare - after the load, before the first attach: the trap's
 * cost, the detacher, every thread's counter now (the session's start) and
 * the duty cycle for @budget (@windows: may detach). Prints its warnings.
 * 0 or -errno.
 */
int allocwindows_prepare(struct allocwindows *w, double budget, bool windows, int pid);
/* allocwindows_attach - attach the TLAB uprobes of libjvm @e in @p. 0 or
 * -errno; -ENOENT (printed) for a libjvm without AllocTracer's symbols. */
int allocwindows_attach(struct allocwindows *w, const struct mt_proc *p, struct mt_elf *e);
/* allocwindows_start - the duty cycle's thread, which attaches again from
 * @e (owned from now on) in @p. 0 or -errno (printed). */
int allocwindows_start(struct allocwindows *w, const struct mt_proc *p, struct mt_elf *e);
/* allocwindows_free - stop the thread, detach, free what @w holds. */
void allocwindows_free(struct allocwindows *w);

/* allocwindows_cost - the program's cost counters, summed over CPUs. */
struct mt_alloc_cost allocwindows_cost(struct allocwindows *w);
/* allocwindows_measure - what the open window counted into @m; refreshes
 * w->seen. Under w->mu. */
void allocwindows_measure(struct allocwindows *w, struct dutycycle_measure *m);
/* allocwindows_read_threads - every Java thread's counter into w->tc, after
 * allocwindows_measure() into @m (NULL: not wanted). Under w->mu. 0 or -errno. */
int allocwindows_read_threads(struct allocwindows *w, struct dutycycle_measure *m);
/* allocwindows_duty - the duty cycle so far into *@d (d->on false: none). */
void allocwindows_duty(struct allocwindows *w, struct alloctrace_duty *d);

#endif
