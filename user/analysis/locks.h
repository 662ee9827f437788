/*
 * locks.h - monitor contention from a reported event stream (live or from a
 * recording): contended entries and wait times per monitor and per class,
 * the wait graph (thread blocked entering a monitor -> the thread owning
 * it) and the deadlocks its cycles are.
 *
 * The owner of a monitor is the thread that last acquired it (after a
 * contended entry) and has not released it. Entries that were never
 * contended are invisible to the probes; for those, @owner_fn (live mode:
 * collector_monitor_owner(), ObjectMonitor::_owner through VMStructs) asks
 * the JVM; wait edges say which source named the owner ("owner_from").
 */
#ifndef MEMTRACE_LOCKS_H
#define MEMTRACE_LOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/events.h"

struct locks;

/* Kernel tid of @lock's owner per the JVM itself, 0 if unknown. */
typedef uint64_t (*locks_owner_fn)(void *ctx, uint64_t lock);

/* locks_new - empty; NULL on ENOMEM. */
struct locks *locks_new(void);
/* locks_free - NULL is a no-op. */
void locks_free(struct locks *l);
/* locks_feed - one reported event (@text: an MT_EV_NAME's name). */
void locks_feed(struct locks *l, const struct mt_ev *e, const char *text);
/* locks_print - the report at time @now (monotonic ns), text or JSON lines.
 * Returns the number of deadlocks found. */
int locks_print(struct locks *l, uint64_t now, bool json, locks_owner_fn owner, void *ctx);
/* locks_sync_events - synchronization events seen. */
uint64_t locks_sync_events(const struct locks *l);

#endif
