/*
 * parks.h - `memtrace locks`' java.util.concurrent section: parks per blocker
 * object (probe/parktrace.h), split into contention (the blocker is an
 * ownable synchronizer that had an owner when the thread parked - a held
 * pool Worker - or a ReentrantLock's or ReentrantReadWriteLock's, whose
 * parks are all contention: readers are no owner) and
 * waiting (a condition, a queue, a latch, a future, or parkNanos without a
 * blocker: nobody holds anything the thread could take), as text or JSON.
 */
#ifndef MEMTRACE_PARKS_H
#define MEMTRACE_PARKS_H

#include <stdbool.h>
#include <stdio.h>

#include "probe/parktrace.h"

/*
 * parks_print - print @locks (@n, sorted as parktrace_read() sorts them) and
 * the probe counters @stats to @f. @top bounds the rows per kind (0: all).
 * Returns 0 or -EIO.
 */
int parks_print(FILE *f, const struct parktrace_lock *locks, size_t n,
		const uint64_t stats[MT_PARK_NSTATS], size_t top, bool json);

/*
 * parks_print_monitors - with --stacks: the contended monitors @m (@n, as
 * parktrace_read_monitors() sorts them; their cls set by the caller) with
 * the stacks of the threads that contended, and the probe counters @stats.
 * @top bounds the monitors shown in text (0: all). Returns 0 or -EIO.
 */
int parks_print_monitors(FILE *f, const struct parktrace_monitor *m, size_t n,
			 const uint64_t stats[MT_PARK_NSTATS], size_t top, bool json);

#endif
