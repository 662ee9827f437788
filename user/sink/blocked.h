/*
 * blocked.h - `memtrace locks --now`: the Java threads blocked on a lock at
 * one moment (monitors and java.util.concurrent locks, read from the JVM's
 * memory: jvm/jthreads.h) and the deadlocks among them (analysis/waitgraph.h),
 * as text or JSON lines.
 */
#ifndef MEMTRACE_BLOCKED_H
#define MEMTRACE_BLOCKED_H

#include <stdbool.h>
#include <stdio.h>

#include "jvm/jthreads.h"

/*
 * blocked_print - print to @f the threads of @th (@n of them) that wait on a
 * lock, then each deadlock: @cycle[i] is thread i's deadlock number (0: none,
 * see waitgraph_cycles), @ncycles how many. A thread parked on a blocker that
 * has no owner (a condition, a queue, a future) is waiting for work or an
 * event, not contending: it is shown as such. Returns 0 or -errno (a write
 * error).
 */
int blocked_print(FILE *f, int pid, const struct jthread *th, size_t n, const uint32_t *cycle,
		  int ncycles, bool json);

#endif
