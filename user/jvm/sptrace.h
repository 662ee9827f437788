/*
 * sptrace.h - the JVM's own record of its last safepoint, read from outside.
 *
 * HotSpot (13+) keeps, in libjvm statics, when its last safepoint began and
 * ended (SafepointTracing::_last_safepoint_begin_time_ns and
 * _last_safepoint_end_time_ns, os::javaTimeNanos) and counts safepoints in
 * SafepointSynchronize::_safepoint_counter (+1 at a safepoint's begin, +1 at
 * its end: odd while one is in progress). -Xlog:safepoint's "Total" is
 * end - begin. memtrace finds the three by name in libjvm's .symtab and
 * reads them through /proc/PID/mem: the pause of a heap walk on a JVM without
 * hsperfdata counters (-XX:-UsePerfData, where perfdata.h has nothing), with
 * no flag and nothing loaded into the JVM. A stripped libjvm has no such
 * names: then there is no record (the agent's timing is what is left).
 */
#ifndef MEMTRACE_SPTRACE_H
#define MEMTRACE_SPTRACE_H

#include <stdbool.h>
#include <stdint.h>

struct mt_proc;

#define SPTRACE_SYM_BEGIN "_ZN16SafepointTracing29_last_safepoint_begin_time_nsE"
#define SPTRACE_SYM_END "_ZN16SafepointTracing27_last_safepoint_end_time_nsE"
#define SPTRACE_SYM_COUNTER "_ZN20SafepointSynchronize18_safepoint_counterE"
/* SafepointTracing::begin() sets, after the begin time, the time since the
 * previous safepoint's end (its "Time since last"): that end, once the next
 * safepoint has begun and overwritten it. Optional (0: not found). */
#define SPTRACE_SYM_APP "_ZN16SafepointTracing17_last_app_time_nsE"

/* How to read the JVM's memory: 0 or -errno (tests give their own). */
typedef int (*sptrace_read_fn)(void *ctx, uint64_t addr, void *buf, size_t n);

struct sptrace {
	bool ok;                 /* the three were found */
	uint64_t begin, end, counter; /* their runtime addresses */
	uint64_t app;            /* SPTRACE_SYM_APP's, or 0 */
	sptrace_read_fn read;
	void *ctx;
};

/*
 * sptrace_open - find the statics of the JVM @p (its libjvm's .symtab and
 * load address). Returns 0 with *@t ready, -ENOENT when libjvm lacks one of
 * the names (stripped, or a HotSpot before 13), other -errno when libjvm
 * cannot be opened; *@t is then not ok. Prints nothing.
 */
int sptrace_open(const struct mt_proc *p, struct sptrace *t);

/* The counter at the start of something memtrace asked the JVM to do. */
struct sptrace_window {
	bool ok;
	uint64_t counter;
};

/* sptrace_window_begin - read the counter into *@w (not ok if @t is not, or
 * the read fails, or a safepoint is in progress). */
void sptrace_window_begin(const struct sptrace *t, struct sptrace_window *w);
/*
 * sptrace_window_end - the safepoints since sptrace_window_begin(@w): their
 * number (0, 1, ...), or -1 when unknown. With exactly 1, *@ns is its Total
 * (end - begin). One in progress, or one whose end time is not written yet
 * (the counter is bumped early in SafepointSynchronize::end, the time at
 * its very end), is waited for up to SPTRACE_SETTLE_MS; -1 if it does not end
 * by then. The three are read twice and must agree (they are not written
 * together).
 */
int sptrace_window_end(const struct sptrace *t, const struct sptrace_window *w, uint64_t *ns);
#define SPTRACE_SETTLE_MS 200

/* One look at the record: what it says of safepoints by number (the JVM's
 * k-th safepoint; the counter is 2k - 1 during it, 2k after). Times are
 * os::javaTimeNanos (CLOCK_MONOTONIC); 0 is unknown. */
struct sptrace_look {
	uint64_t k;       /* the latest safepoint: in progress, or ended */
	int64_t begin;    /* its begin */
	int64_t end;      /* its end (0 while in progress) */
	int64_t prev_end; /* safepoint k - 1's end: k's begin less the time between */
};

/*
 * sptrace_look - read the record into *@l. The values are written at
 * different times (SafepointTracing::begin: begin, time between, end = 0;
 * the counter's bump after them; at the end the counter first, the end
 * time last): a look between the writes is -EAGAIN, never a mix of two
 * safepoints'. 0, -EAGAIN, or -errno (not ok, a read failed).
 */
int sptrace_look(const struct sptrace *t, struct sptrace_look *l);

/*
 * The safepoints a series of looks has seen, by number: a walk's own told
 * apart from the others by a time inside it (a frozen walk's fork) even
 * when another follows it within the looks' interval (its end then comes
 * from the next one's record). At most SPTRACE_SEEN of them.
 */
#define SPTRACE_SEEN 256
struct sptrace_seen {
	uint32_t n;
	struct sptrace_seen_sp {
		uint64_t k;
		int64_t begin, end;
	} sp[SPTRACE_SEEN];
};

/* sptrace_seen_add - what look @l says, into @s (nothing when full). */
void sptrace_seen_add(struct sptrace_seen *s, const struct sptrace_look *l);
/* sptrace_seen_find - the seen safepoint whose begin and end are both
 * known and hold @at_ns: 0 and its Total (end - begin) in *@ns; -ENOENT. */
int sptrace_seen_find(const struct sptrace_seen *s, int64_t at_ns, uint64_t *ns);

#endif
