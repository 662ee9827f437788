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

/* How to read the JVM's memory: 0 or -errno (tests give their own). */
typedef int (*sptrace_read_fn)(void *ctx, uint64_t addr, void *buf, size_t n);

struct sptrace {
	bool ok;                 /* the three were found */
	uint64_t begin, end, counter; /* their runtime addresses */
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

/*
 * sptrace_last - the JVM's record of its last ended safepoint: when it began
 * and ended (os::javaTimeNanos: CLOCK_MONOTONIC) and the counter after it.
 * Returns 0, -EAGAIN while one is in progress or its end is not written yet,
 * or -errno (not ok, a read failed). For telling one safepoint apart from
 * others by a time inside it (a frozen walk's fork).
 */
int sptrace_last(const struct sptrace *t, int64_t *begin, int64_t *end, uint64_t *counter);

#endif
