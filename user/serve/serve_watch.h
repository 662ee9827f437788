/*
 * serve_watch.h - the JVM watcher of `memtrace serve` (main thread): finds
 * the JVMs to watch (-p PID or every one) and attaches to each (gctrace),
 * drops those that exited, drains their ring buffers, and starts and stops
 * their allocation and agent sampling as the API asked (serve.h).
 */
#ifndef MEMTRACE_SERVE_WATCH_H
#define MEMTRACE_SERVE_WATCH_H

#include <stdint.h>

#include "serve/serve.h"

/* serve_watch_rescan - stop watching the JVMs that exited, start watching
 * new ones (failures are printed, and not retried while the pid lives). */
void serve_watch_rescan(struct serve *sv);

/*
 * serve_watch_poll - one tick at monotonic time @now: drain every watched
 * JVM's ring buffers, update its counters, start or stop its switchable work
 * as the API asked and poll it (refreshing the allocation and age series
 * once a second).
 */
void serve_watch_poll(struct serve *sv, uint64_t now);

/* serve_watch_stop - stop watching every JVM (their series go) and free the
 * watcher's lists. */
void serve_watch_stop(struct serve *sv);

#endif
