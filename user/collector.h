/*
 * collector.h - one JVM's hotspot USDT probes (bpf/jvmev.bpf.c) turned into
 * the event model (include/memtrace/events.h) and fed to a sequencer.
 *
 *   thread__start/stop          -> thread create/destroy (names from the probe;
 *                                  threads seen otherwise get /proc's comm)
 *   class__loaded/unloaded      -> type create+load / reclaim (key: the
 *                                  address of the class name's Symbol)
 *   vmops__begin/end            -> invocation enter/leave (MT_INV_VMOP)
 *   gc__begin/end               -> invocation enter/leave (MT_INV_GC), nested
 *                                  in the VM operation on the VM thread
 *   mem__pool__gc__begin/end    -> pool usage (before / after)
 *   monitor__contended__enter   -> wait begin (enter)      (the monitor: an
 *   monitor__contended__entered -> wait end + acquire       object entity keyed
 *   monitor__contended__exit    -> release                  by the ObjectMonitor
 *   monitor__wait / waited      -> wait begin (Object.wait) / wait end
 *                                  address, typed by the probe's class name)
 * Kernel drops become a gap in the sequencer followed by a thread resync
 * from /proc/PID/task.
 */
#ifndef MEMTRACE_COLLECTOR_H
#define MEMTRACE_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "proc.h"
#include "sequencer.h"

struct collector;

/* Called before each event is fed (e.g. to apply a pause schedule at @ts). */
typedef void (*collector_tick_fn)(void *ctx, uint64_t ts);

/*
 * collector_new - load and attach for JVM @p, feeding @seq. Probes this JVM
 * lacks are skipped with a warning, except the gc and thread ones. Threads
 * alive now are created from /proc first. Prints with p_err() and returns
 * NULL with errno set on failure.
 */
struct collector *collector_new(const struct mt_proc *p, struct mt_seq *seq,
				collector_tick_fn tick, void *ctx);
/* collector_free - detach and unload; NULL is a no-op. */
void collector_free(struct collector *c);
/* collector_poll - wait up to @timeout_ms, feed what arrived. Events fed, or -errno. */
int collector_poll(struct collector *c, int timeout_ms);
/* collector_lost - events the kernel dropped so far. */
uint64_t collector_lost(const struct collector *c);
/* collector_monitor_sites - monitor probe sites attached (0: none in this JVM). */
int collector_monitor_sites(const struct collector *c);
/* collector_resync_threads - replace the sequencer's threads by /proc's at @ts. */
void collector_resync_threads(struct collector *c, uint64_t ts);

/* collector_owner_tid - kernel tid of the Java thread with id @java_tid seen
 * so far, 0 if unknown. */
uint64_t collector_java_tid(const struct collector *c, uint64_t java_tid);

#endif
