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
 *   GCMemoryManager::gc_end     -> the cause, action and manager of a collection
 *     (uprobe)                     or pause (MT_EV_GC_CAUSE)
 *   GCTimer's pause registration -> invocation enter/leave (MT_INV_GC_PAUSE): the
 *     (uprobes)                    pauses of concurrent cycles, with the JVM's
 *                                  Ticks (memtrace/gc.h)
 *   GCTracer::report_gc_start/end -> invocation enter/leave (MT_INV_GC_TRACE): each
 *     (uprobes)                    collection as JFR counts it, with its Ticks
 *   monitor__contended__enter   -> wait begin (enter)      (the monitor: an
 *   monitor__contended__entered -> wait end + acquire       object entity keyed
 *   monitor__contended__exit    -> release                  by the ObjectMonitor
 *   monitor__wait / waited      -> wait begin (Object.wait) / wait end
 *                                  address, typed by the probe's class name)
 *   thread__park__begin/end     -> wait begin (park) / end on the blocker object
 *   thread__sleep__begin/end    -> wait begin (sleep) / end on the thread's own
 *                                  object (collector_enable_parks; events.h)
 *   AllocTracer uprobes         -> allocation samples (collector_enable_alloc),
 *     (TLAB refills)               after the creation of their type when the
 *                                  class was loaded before we looked
 * Kernel drops become a gap in the sequencer followed by a resync of the
 * threads from /proc/PID/task and of the classes from the JVM's class list
 * (ClassLoaderDataGraph, read through VMStructs).
 *
 * MEMTRACE_RING_KB=N (a power of two >= 4) in the environment shrinks the
 * ring buffer from 4 MiB to N KiB: a way to provoke losses (tests).
 */
#ifndef MEMTRACE_COLLECTOR_H
#define MEMTRACE_COLLECTOR_H

#include <stdbool.h>
#include <stdint.h>

#include "jvm/proc.h"
#include "monitor/sequencer.h"

struct collector;
struct objstream;

/* Called before each event is fed (e.g. to apply a pause schedule at @ts). */
typedef void (*collector_tick_fn)(void *ctx, uint64_t ts);

/*
 * collector_new - load and attach for JVM @p, feeding @seq. Probes this JVM
 * lacks are skipped with a warning, except the gc and thread ones. Threads
 * alive now are created from /proc first. @stack_depth: the Java frames of
 * allocation stacks, if collector_enable_alloc_stacks() will be asked for
 * (1..MT_JSTACK_MAX_DEPTH; their map is sized before load), else 0. Prints
 * with p_err() and returns NULL with errno set on failure.
 */
struct collector *collector_new(const struct mt_proc *p, struct mt_seq *seq,
				collector_tick_fn tick, void *ctx, uint32_t stack_depth);
/* collector_free - detach and unload; NULL is a no-op. */
void collector_free(struct collector *c);
/* collector_poll - wait up to @timeout_ms, feed what arrived. Events fed;
 * -ESRCH (not printed) when the JVM exited under the agent's stream; other
 * -errno (the agent's printed). */
int collector_poll(struct collector *c, int timeout_ms);
/* collector_lost - events the kernel dropped so far (ring buffer full, or a
 * probe hit the kernel ran no program for: BPF recursion misses). */
uint64_t collector_lost(const struct collector *c);
/* collector_monitor_sites - monitor probe sites attached (0: none in this JVM). */
int collector_monitor_sites(const struct collector *c);
/* collector_attached_ns - mono_ns() when the USDT probes (monitors, GC,
 * threads) were attached: their events come from then on, while the rest of
 * the setup (libjvm's symbols, the GC clock's uprobes) still runs. */
uint64_t collector_attached_ns(const struct collector *c);
/* collector_resync_threads - replace the sequencer's threads by /proc's at @ts. */
void collector_resync_threads(struct collector *c, uint64_t ts);

/*
 * collector_enable_alloc - attach the TLAB-refill uprobes (the sampling of
 * `memtrace alloc`): allocation samples join the stream. Returns 0 or -errno
 * (printed: no .symtab, no VMStructs).
 */
int collector_enable_alloc(struct collector *c, const struct mt_proc *p);
/*
 * collector_enable_parks - attach the park and sleep probes
 * (user/probe/parktrace.h, streaming into this collector's ring buffer):
 * java.util.concurrent parks and Thread.sleep join the stream as waits
 * (MT_WAIT_PARK on the blocker, MT_WAIT_SLEEP), in order with the rest of
 * each thread's events. Returns 0 or -errno (printed).
 */
int collector_enable_parks(struct collector *c, const struct mt_proc *p);
/*
 * collector_enable_alloc_stacks - with collector_enable_alloc(): each sample
 * carries its whole Java stack (the kernel's walker, bpf/jstack.bpf.h), named
 * as the sample arrives, as the event's name2: an MT_EV_NAME definition whose
 * text is jstack/stacktext.h's form, at most collector_new()'s stack_depth
 * Java frames (deeper ones cut with a "[stack cut: depth]" frame). Costs the
 * walk (about 3-5 us at 40 frames) per sample. Returns 0 or -errno (printed;
 * -EINVAL when collector_new() had no stack_depth).
 */
int collector_enable_alloc_stacks(struct collector *c, const struct mt_proc *p);
/*
 * collector_resync_types - replace the sequencer's types by the JVM's class
 * list at @ts (done after every gap). Returns 0, or -errno when the list
 * cannot be read (the sequencer's types are then left as they are).
 */
int collector_resync_types(struct collector *c, uint64_t ts);
/* collector_resync_stats - resynchronisations done, classes in the last one. */
void collector_resync_stats(const struct collector *c, uint64_t *resyncs, uint64_t *classes);
/*
 * collector_enable_objects - sampled objects from the JVMTI agent (loaded
 * now if needed; one sample every @interval bytes, mean) join the stream as
 * object create/reclaim events, typed by the classes the collector knows by
 * name (or types made up for them). Returns 0 or -errno (printed).
 */
int collector_enable_objects(struct collector *c, const struct mt_proc *p, uint32_t interval);
/* collector_objstream - the agent's sample stream after
 * collector_enable_objects() (owned by the collector; NULL before). */
struct objstream *collector_objstream(struct collector *c);
/* collector_stop_objects - stop the agent's sampling, feeding what it still
 * held; the objects created and reclaimed, and the events the agent lost. */
void collector_stop_objects(struct collector *c, uint64_t *created, uint64_t *reclaimed,
			    uint64_t *lost);
/* collector_monitor_owner - a locks_owner_fn (@ctx: the collector): the
 * kernel tid owning the ObjectMonitor at @monitor per the JVM, 0 if unknown. */
uint64_t collector_monitor_owner(void *ctx, uint64_t monitor);

/* collector_owner_tid - kernel tid of the Java thread with id @java_tid seen
 * so far, 0 if unknown. */
uint64_t collector_java_tid(const struct collector *c, uint64_t java_tid);

#endif
