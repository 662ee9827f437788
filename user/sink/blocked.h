/*
 * blocked.h - `memtrace locks --now`: the Java threads waiting on a lock at
 * one moment (read from the JVM's memory: jvm/jthreads.h) - blocked entering
 * a monitor or parked on a held lock (contending), in Object.wait() or
 * Condition.await() (waiting for a notify or a signal: nobody can be named
 * until it comes), parked on something nobody holds (a latch, a queue) -
 * with their Java stacks, and the deadlocks among them
 * (analysis/waitgraph.h), as text or JSON lines.
 */
#ifndef MEMTRACE_BLOCKED_H
#define MEMTRACE_BLOCKED_H

#include <stdbool.h>
#include <stdio.h>

#include "jstack/waitstacks.h"
#include "jvm/jthreads.h"

/*
 * blocked_print - print to @f the threads of @th (@n of them) that wait on a
 * lock, each with its stack from @ws (waitstacks_get(@ws, i); NULL: no
 * stacks; text shows the innermost @frames frames of each, all for 0), then
 * each deadlock:
 * @cycle[i] is thread i's deadlock number (0: none, see waitgraph_cycles),
 * @ncycles how many. A thread parked on a blocker nobody holds (a queue, a
 * latch) is waiting for work or an event, not contending; one in
 * Object.wait() or Condition.await() waits for a notify or a signal: its
 * owner is unknown until then. Returns 0 or -errno (a write error).
 */
int blocked_print(FILE *f, int pid, const struct jthread *th, const struct waitstacks *ws,
		  size_t n, const uint32_t *cycle, int ncycles, bool json, int frames);

/* blocked_kind - what the wait of @t is: "contended" (someone holds the lock
 * it wants), "notify" (Object.wait, Condition.await: until a notify or a
 * signal), "waiting" (nobody holds what it parks on), "unknown owner" (a
 * monitor whose owner could not be told), "" for a thread not waiting. */
const char *blocked_kind(const struct jthread *t);

#endif
