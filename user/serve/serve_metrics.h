/*
 * serve_metrics.h - the series `memtrace serve` exports per watched JVM
 * and the updaters the main thread calls as records and samples come in.
 * Where Micrometer has a series for it, the series has Micrometer's name,
 * type and labels (jvm_gc_pause_seconds{gc,action,cause},
 * jvm_memory_used_bytes{area,id}, jvm_gc_memory_allocated_bytes_total, ...,
 * serve/gcmeters.h); with --names otel, OpenTelemetry's semantic
 * conventions instead (jvm_gc_duration_seconds{jvm_gc_name,...}); memtrace_*
 * for what only memtrace has (every stop-the-world pause, allocation by
 * class, ages, locks, lost events). Every series also carries pid,
 * main_class and the JVM's identity labels --labels names (none by
 * default); memtrace_jvm_info carries them all: container_id, container,
 * pod, namespace, pod_uid (jvm/jvmid.h).
 */
#ifndef MEMTRACE_SERVE_METRICS_H
#define MEMTRACE_SERVE_METRICS_H

#include "serve/serve.h"
#include "analysis/gcpair.h"
#include "serve/metrics.h"

/* serve_metrics_register - the families of serve's series, with @names'
 * names for the JVM ones, into @m. Returns 0 or -EINVAL. */
int serve_metrics_register(struct metrics *m, enum serve_names names);

/* serve_metrics_id_labels - parse --labels' comma-separated @list
 * (container_id, container, pod, namespace, pod_uid, all; or none) into
 * SERVE_ID_* @bits. Returns 0 or -EINVAL (an unknown name). */
int serve_metrics_id_labels(const char *list, unsigned *bits);

/* serve_metrics_watched - the number of JVMs @sv watches. */
void serve_metrics_watched(struct serve *sv);

/* serve_metrics_info - the info series of JVM @j, which serve starts watching. */
void serve_metrics_info(struct serve_jvm *j);

/* serve_metrics_gc_record - a gctrace record callback (@ctx: the serve_jvm):
 * collections, their seconds and pauses, and the pools after them. Takes
 * serve.lock (the JVM's collection count). */
void serve_metrics_gc_record(const struct gc_record *r, void *ctx);

/* serve_metrics_parks_update - JVM @j's park counters (j->pk) into its series:
 * parks and seconds parked per blocker class and kind (contended, waiting). */
void serve_metrics_parks_update(struct serve_jvm *j);

/* serve_metrics_memory_start - find @j's heap spaces in its memory for the
 * pools' current used bytes (jvm/heapused.h; a JVM where that fails is
 * watched all the same: p_info says so). */
void serve_metrics_memory_start(struct serve_jvm *j);
/* serve_metrics_memory_update - the heap pools' used bytes now, and the
 * timers' window maxima (they slide without collections). */
void serve_metrics_memory_update(struct serve_jvm *j);
/* serve_metrics_memory_stop - close what serve_metrics_memory_start opened. */
void serve_metrics_memory_stop(struct serve_jvm *j);

/* serve_metrics_drop - drop every series of @j (serve stops watching it). */
void serve_metrics_drop(struct serve_jvm *j);

/* serve_metrics_counters - the kernel-side counters of @j's gctrace. */
void serve_metrics_counters(struct serve_jvm *j);

/*
 * serve_metrics_alloc_update - the kernel aggregate of @j's allocation
 * sampling (j->at) into its series: the total, and the top classes. A class
 * once exported stays (up to 2 x --alloc-top) so a counter never vanishes
 * while sampling is on. Takes serve.lock.
 */
void serve_metrics_alloc_update(struct serve_jvm *j);

/* serve_metrics_alloc_drop - drop @j's allocation series and exported
 * classes (sampling went off). Takes serve.lock. */
void serve_metrics_alloc_drop(struct serve_jvm *j);

/* serve_metrics_age_update - live sampled bytes by age of @j's agent
 * sampling (j->al) into its series. Takes serve.lock. */
void serve_metrics_age_update(struct serve_jvm *j);

/* serve_metrics_age_drop - drop @j's age series and last ages (sampling
 * went off). Takes serve.lock. */
void serve_metrics_age_drop(struct serve_jvm *j);

#endif
