/*
 * serve_metrics.h - the series `memtrace serve` exports per watched JVM
 * (memtrace_gc_*, memtrace_alloc_*, memtrace_age_*, ...): their families
 * and the updaters the main thread calls as records and samples come in.
 */
#ifndef MEMTRACE_SERVE_METRICS_H
#define MEMTRACE_SERVE_METRICS_H

#include "cmd/serve.h"
#include "analysis/gcpair.h"
#include "sink/metrics.h"

/* serve_metrics_register - the families of serve's series into @m. Returns 0 or -EINVAL. */
int serve_metrics_register(struct metrics *m);

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
