/*
 * metrics.h - a small, thread-safe registry of metric families and their
 * labelled series, written as OpenMetrics text (what `memtrace serve` hands
 * Prometheus at /metrics) or as JSON (its /api/v1/metrics).
 *
 * Usage: register a family once, then update series by name and labels:
 *
 *	metrics_register(m, "memtrace_gc_collections", METRIC_COUNTER, NULL,
 *			 "Collections completed, per collector.");
 *	metrics_counter_add(m, "memtrace_gc_collections",
 *			    (const char *[]){ "pid", "42", "collector", "G1 Young Generation", NULL }, 1);
 *
 * Labels are a NULL-terminated list of alternating names and values (NULL
 * for none). A series is created on its first update. A label whose value is
 * "" is left out (OpenMetrics treats it as absent). Names follow OpenMetrics:
 * [a-zA-Z_:][a-zA-Z0-9_:]* for families, [a-zA-Z_][a-zA-Z0-9_]* for labels;
 * a family with a unit has a name ending in "_<unit>"; a counter family is
 * registered without "_total" (its sample gets it).
 *
 * Every function takes the registry's lock: updates may come from any thread
 * while an HTTP thread writes it out. Functions return 0 or -errno:
 * -ENOENT for an unregistered family, -EINVAL for a bad name/label or a type
 * mismatch (e.g. gauge_set on a counter), -ENOMEM.
 */
#ifndef MEMTRACE_METRICS_H
#define MEMTRACE_METRICS_H

#include <stdio.h>

enum metric_type {
	METRIC_COUNTER,   /* monotonic; exposed as <name>_total */
	METRIC_GAUGE,     /* a value that goes up and down */
	METRIC_HISTOGRAM, /* bucketed observations: _bucket{le=}, _sum, _count */
};

#define MT_METRICS_MAX_LABELS 12  /* label pairs per series */
#define MT_METRICS_MAX_BUCKETS 32 /* finite histogram bounds (+Inf is implied) */

struct metrics;

/* metrics_new - an empty registry; NULL with errno = ENOMEM. */
struct metrics *metrics_new(void);
/* metrics_free - free the registry and every series; NULL is a no-op. */
void metrics_free(struct metrics *m);

/* metrics_register - declare a counter or gauge family. @unit may be NULL
 * (no unit) and @help is one line. Registering the same name again with the
 * same type is a no-op (0); with another type, -EEXIST. */
int metrics_register(struct metrics *m, const char *name, enum metric_type type,
		     const char *unit, const char *help);
/* metrics_register_histogram - declare a histogram with the ascending finite
 * upper bounds @bounds[0..n-1] (the +Inf bucket is added). */
int metrics_register_histogram(struct metrics *m, const char *name, const char *unit,
			       const char *help, const double *bounds, int n);

/* metrics_gauge_set - set a gauge series to @v. */
int metrics_gauge_set(struct metrics *m, const char *name, const char *const *labels, double v);
/* metrics_counter_add - add @delta (>= 0) to a counter series. */
int metrics_counter_add(struct metrics *m, const char *name, const char *const *labels,
			double delta);
/* metrics_counter_set - set a counter series that mirrors a monotonic source
 * (e.g. the kernel's lost-event count); a smaller @v is refused (-EINVAL). */
int metrics_counter_set(struct metrics *m, const char *name, const char *const *labels,
			double v);
/* metrics_histogram_observe - count @v into a histogram series. */
int metrics_histogram_observe(struct metrics *m, const char *name, const char *const *labels,
			      double v);

/* metrics_remove_series - drop every series (of every family) whose label
 * @key equals @value, e.g. ("pid", "42") when that JVM exits. Families stay.
 * Returns the number of series removed. */
int metrics_remove_series(struct metrics *m, const char *key, const char *value);

/* metrics_remove_family_series - the same within family @name only (e.g.
 * a JVM's allocation series when its sampling is switched off). Returns the
 * number of series removed (0 for an unknown family). */
int metrics_remove_family_series(struct metrics *m, const char *name, const char *key,
				 const char *value);

/* metrics_series_count - series currently held (all families). */
int metrics_series_count(struct metrics *m);

/* metrics_write_openmetrics - the OpenMetrics 1.0 text exposition: per
 * family "# TYPE", "# UNIT" (if any), "# HELP", its samples, and a final
 * "# EOF". Families without series are written with their metadata only.
 * Returns 0 or -EIO. */
int metrics_write_openmetrics(struct metrics *m, FILE *f);
/* The content type that goes with it. */
#define MT_OPENMETRICS_CONTENT_TYPE "application/openmetrics-text; version=1.0.0; charset=utf-8"

/* metrics_write_json - {"metrics":[{"name","type","unit","help","series":[
 * {"labels":{...},"value":V} | {"labels":{...},"count":N,"sum":S,
 * "buckets":[{"le":B,"count":N},...]}]}]}. Returns 0 or -EIO. */
int metrics_write_json(struct metrics *m, FILE *f);

#endif
