// SPDX-License-Identifier: GPL-2.0
/* serve_metrics.c - the series of `memtrace serve` (see serve_metrics.h). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "agentctl/agentlive.h"
#include "cmd/serve_metrics.h"
#include "lib/util.h"
#include "probe/alloctrace.h"
#include "probe/gctrace.h"
#include "probe/parktrace.h"

/* Pause buckets (seconds): 100 us .. 10 s. */
static const double pause_bounds[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
				       0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };

#define M_INFO "memtrace_jvm_info"
#define M_WATCHED "memtrace_jvms_watched"
#define M_COLL "memtrace_gc_collections"
#define M_COLL_SEC "memtrace_gc_collection_seconds"
#define M_PAUSE "memtrace_gc_pause_seconds"
#define M_USED "memtrace_gc_pool_used_bytes"
#define M_COMMITTED "memtrace_gc_pool_committed_bytes"
#define M_MAX "memtrace_gc_pool_max_bytes"
#define M_LOST "memtrace_lost_events"
#define M_UNPAIRED "memtrace_gc_unpaired_events"
#define M_ALLOC "memtrace_alloc_bytes"
#define M_ALLOC_CLASS "memtrace_alloc_class_bytes"
#define M_AGE_BYTES "memtrace_age_live_bytes"
#define M_AGE_SAMPLES "memtrace_age_live_samples"
#define M_AGE_GCS "memtrace_age_gcs"
#define M_ALLOC_LOST "memtrace_alloc_lost_events"
#define M_AGE_LOST "memtrace_age_lost_samples"
#define M_PARKS "memtrace_lock_parks"
#define M_PARKED "memtrace_lock_parked_seconds"

int serve_metrics_register(struct metrics *m)
{
	int err = 0;

	err |= metrics_register(m, M_INFO, METRIC_GAUGE, NULL,
				"A JVM memtrace watches (always 1); labels say which.");
	err |= metrics_register(m, M_WATCHED, METRIC_GAUGE, NULL, "JVMs memtrace watches.");
	err |= metrics_register(m, M_COLL, METRIC_COUNTER, NULL,
				"Collections (memory-manager cycles) completed since memtrace attached, "
				"per collector.");
	err |= metrics_register(m, M_COLL_SEC, METRIC_COUNTER, "seconds",
				"Time spent in collections, stop-the-world or concurrent, per collector.");
	err |= metrics_register_histogram(m, M_PAUSE, "seconds",
					  "Stop-the-world collection pauses, per collector.",
					  pause_bounds, (int)MT_ARRAY_SIZE(pause_bounds));
	err |= metrics_register(m, M_USED, METRIC_GAUGE, "bytes",
				"Pool used bytes after the last collection.");
	err |= metrics_register(m, M_COMMITTED, METRIC_GAUGE, "bytes",
				"Pool committed bytes after the last collection.");
	err |= metrics_register(m, M_MAX, METRIC_GAUGE, "bytes",
				"Pool maximum bytes after the last collection (absent if unbounded).");
	err |= metrics_register(m, M_LOST, METRIC_COUNTER, NULL,
				"Events the kernel could not queue to memtrace (ring buffer full).");
	err |= metrics_register(m, M_UNPAIRED, METRIC_COUNTER, NULL,
				"GC probe events memtrace could not pair (begin without end, ...).");
	err |= metrics_register(m, M_ALLOC, METRIC_COUNTER, "bytes",
				"Bytes allocated since allocation sampling was switched on, estimated "
				"from TLAB refills (each counts its TLAB size); only while it is on.");
	err |= metrics_register(m, M_ALLOC_CLASS, METRIC_COUNTER, "bytes",
				"The same for the top allocating classes (a class once shown stays "
				"while sampling is on); the rest is the JVM's total minus these.");
	err |= metrics_register(m, M_AGE_BYTES, METRIC_GAUGE, "bytes",
				"Live sampled bytes (estimate) by age in GCs survived, from memtrace's "
				"agent; only while agent sampling is on.");
	err |= metrics_register(m, M_AGE_SAMPLES, METRIC_GAUGE, NULL,
				"Live sampled objects by age in GCs survived (agent sampling).");
	err |= metrics_register(m, M_AGE_GCS, METRIC_COUNTER, NULL,
				"Collections the agent reported since agent sampling came on.");
	err |= metrics_register(m, M_ALLOC_LOST, METRIC_COUNTER, NULL,
				"Allocation-sampling events the kernel could not queue (ring full).");
	err |= metrics_register(m, M_PARKS, METRIC_COUNTER, NULL,
				"Parks of java.util.concurrent threads (hotspot:thread__park__*) by the blocker's "
				"class; kind contended: the lock had an owner, waiting: conditions, queues, "
				"sleeps.");
	err |= metrics_register(m, M_PARKED, METRIC_COUNTER, "seconds",
				"Time parked, by the blocker's class and kind.");
	err |= metrics_register(m, M_AGE_LOST, METRIC_COUNTER, NULL,
				"Agent samples, deaths or GC records lost or evicted (ages and bytes "
				"are then estimates with a wider error).");
	return err ? -EINVAL : 0;
}

/* The labels every series of JVM @j carries, then @k1=@v1 (if @k1). */
#define JVM_LABELS(j, k1, v1) \
	(const char *[]){ "pid", (j)->pid_s, "main_class", (j)->p.main_class, "container_id", \
			  (j)->p.container_id, k1, v1, NULL }

void serve_metrics_gc_record(const struct gc_record *r, void *ctx)
{
	struct serve_jvm *j = ctx;
	struct metrics *m = j->sv->m;
	const char *coll = r->manager[0] ? r->manager : "(no memory manager)";
	double secs = (double)(r->end_ns - r->start_ns) / 1e9;

	metrics_counter_add(m, M_COLL, JVM_LABELS(j, "collector", coll), 1);
	metrics_counter_add(m, M_COLL_SEC, JVM_LABELS(j, "collector", coll), secs);
	if (r->in_vmop)
		metrics_histogram_observe(m, M_PAUSE, JVM_LABELS(j, "collector", coll), secs);
	for (int i = 0; i < r->npools; i++) {
		const struct gc_pool *p = &r->pools[i];

		metrics_gauge_set(m, M_USED, JVM_LABELS(j, "pool", p->name), (double)p->used_after);
		metrics_gauge_set(m, M_COMMITTED, JVM_LABELS(j, "pool", p->name), (double)p->committed);
		if (p->max != UINT64_MAX)
			metrics_gauge_set(m, M_MAX, JVM_LABELS(j, "pool", p->name), (double)p->max);
	}
	pthread_mutex_lock(&j->sv->lock);
	j->collections++;
	pthread_mutex_unlock(&j->sv->lock);
}

void serve_metrics_counters(struct serve_jvm *j)
{
	const struct gcpair *gp = gctrace_pairing(j->t);

	metrics_counter_set(j->sv->m, M_LOST, JVM_LABELS(j, NULL, NULL), (double)gctrace_lost(j->t));
	metrics_counter_set(j->sv->m, M_UNPAIRED, JVM_LABELS(j, NULL, NULL),
			    (double)(gp->unpaired_begin + gp->unpaired_end + gp->overflow));
}


void serve_metrics_watched(struct serve *sv)
{
	metrics_gauge_set(sv->m, M_WATCHED, NULL, sv->njvms);
}

void serve_metrics_info(struct serve_jvm *j)
{
	metrics_gauge_set(j->sv->m, M_INFO,
			  (const char *[]){ "pid", j->pid_s, "main_class", j->p.main_class,
					    "container_id", j->p.container_id, "jdk",
					    j->p.jdk_version, NULL }, 1);
}

void serve_metrics_drop(struct serve_jvm *j)
{
	metrics_remove_series(j->sv->m, "pid", j->pid_s);
}

static int row_by_name(const void *a, const void *b)
{
	return strcmp(((const struct alloc_row *)a)->class_name,
		      ((const struct alloc_row *)b)->class_name);
}

static int cls_by_bytes(const void *a, const void *b)
{
	const struct serve_alloc_cls *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->name, y->name);
}

void serve_metrics_alloc_update(struct serve_jvm *j)
{
	struct serve *sv = j->sv;
	struct serve_alloc_cls *sum = NULL;
	struct alloc_row *rows;
	uint64_t total = 0;
	size_t n, nsum = 0;

	rows = alloctrace_rows(j->at, &n);
	if (n) {
		qsort(rows, n, sizeof(*rows), row_by_name);
		sum = calloc(n, sizeof(*sum));
	}
	for (size_t i = 0; sum && i < n; i++) {
		if (!nsum || strcmp(sum[nsum - 1].name, rows[i].class_name))
			sum[nsum++].name = (char *)rows[i].class_name; /* borrowed */
		sum[nsum - 1].bytes += rows[i].bytes;
		total += rows[i].bytes;
	}
	if (sum)
		qsort(sum, nsum, sizeof(*sum), cls_by_bytes);
	pthread_mutex_lock(&sv->lock);
	/* refresh the exported classes, then add new top ones while there is room */
	for (int c = 0; c < j->ncls; c++)
		for (size_t i = 0; i < nsum; i++)
			if (!strcmp(sum[i].name, j->cls[c].name) && sum[i].bytes > j->cls[c].bytes)
				j->cls[c].bytes = sum[i].bytes;
	for (size_t i = 0; i < nsum && (int)i < sv->alloc_top && j->ncls < 2 * sv->alloc_top; i++) {
		bool have = false;
		struct serve_alloc_cls *a;

		for (int c = 0; c < j->ncls && !have; c++)
			have = !strcmp(sum[i].name, j->cls[c].name);
		if (have || !sum[i].bytes)
			continue;
		a = realloc(j->cls, (size_t)(j->ncls + 1) * sizeof(*a));
		if (!a)
			break;
		j->cls = a;
		a[j->ncls].name = strdup(sum[i].name);
		a[j->ncls].bytes = sum[i].bytes;
		if (a[j->ncls].name)
			j->ncls++;
	}
	qsort(j->cls, (size_t)j->ncls, sizeof(*j->cls), cls_by_bytes);
	if (total > j->alloc_total)
		j->alloc_total = total;
	pthread_mutex_unlock(&sv->lock);
	/* only the main thread changes cls[]: reading it unlocked here is safe */
	metrics_counter_set(sv->m, M_ALLOC, JVM_LABELS(j, NULL, NULL), (double)j->alloc_total);
	for (int c = 0; c < j->ncls; c++)
		metrics_counter_set(sv->m, M_ALLOC_CLASS, JVM_LABELS(j, "class", j->cls[c].name),
				    (double)j->cls[c].bytes);
	metrics_counter_set(sv->m, M_ALLOC_LOST, JVM_LABELS(j, NULL, NULL),
			    (double)alloctrace_lost_events(j->at));
	free(sum);
	free(rows);
}

void serve_metrics_alloc_drop(struct serve_jvm *j)
{
	struct serve *sv = j->sv;

	metrics_remove_family_series(sv->m, M_ALLOC, "pid", j->pid_s);
	metrics_remove_family_series(sv->m, M_ALLOC_CLASS, "pid", j->pid_s);
	metrics_remove_family_series(sv->m, M_ALLOC_LOST, "pid", j->pid_s);
	pthread_mutex_lock(&sv->lock);
	for (int i = 0; i < j->ncls; i++)
		free(j->cls[i].name);
	free(j->cls);
	j->cls = NULL;
	j->ncls = 0;
	j->alloc_total = 0;
	pthread_mutex_unlock(&sv->lock);
}

void serve_metrics_age_update(struct serve_jvm *j)
{
	struct serve *sv = j->sv;
	struct agentlive_ages a;

	agentlive_ages(j->al, &a);
	pthread_mutex_lock(&sv->lock);
	j->ages = a;
	pthread_mutex_unlock(&sv->lock);
	for (int b = 0; b < MT_AGE_BUCKETS; b++) {
		const char *name = ageranges_bucket_name(b);

		metrics_gauge_set(sv->m, M_AGE_BYTES, JVM_LABELS(j, "age", name), round(a.bytes[b]));
		metrics_gauge_set(sv->m, M_AGE_SAMPLES, JVM_LABELS(j, "age", name),
				  (double)a.samples[b]);
	}
	metrics_counter_set(sv->m, M_AGE_GCS, JVM_LABELS(j, NULL, NULL), (double)a.gcs);
	metrics_counter_set(sv->m, M_AGE_LOST, JVM_LABELS(j, NULL, NULL), (double)a.lost);
}

void serve_metrics_age_drop(struct serve_jvm *j)
{
	struct serve *sv = j->sv;

	metrics_remove_family_series(sv->m, M_AGE_BYTES, "pid", j->pid_s);
	metrics_remove_family_series(sv->m, M_AGE_SAMPLES, "pid", j->pid_s);
	metrics_remove_family_series(sv->m, M_AGE_GCS, "pid", j->pid_s);
	metrics_remove_family_series(sv->m, M_AGE_LOST, "pid", j->pid_s);
	pthread_mutex_lock(&sv->lock);
	memset(&j->ages, 0, sizeof(j->ages));
	pthread_mutex_unlock(&sv->lock);
}


/* Blockers by kind, then class name: the rows of one series side by side. */
static int by_series(const void *pa, const void *pb)
{
	const struct parktrace_lock *a = pa, *b = pb;
	int ka = parktrace_lock_contended(a), kb = parktrace_lock_contended(b);

	return ka != kb ? kb - ka : strcmp(parktrace_lock_name(a), parktrace_lock_name(b));
}

void serve_metrics_parks_update(struct serve_jvm *j)
{
	struct parktrace_lock *l = NULL;
	size_t n = 0;

	if (parktrace_read(j->pk, &l, &n))
		return;
	/* one series per (class, kind): the blockers sorted so that each series'
	 * rows are adjacent, summed, and the totals set */
	if (n)
		qsort(l, n, sizeof(*l), by_series);
	for (size_t i = 0; i < n;) {
		const char *kind = parktrace_lock_contended(&l[i]) ? "contended" : "waiting";
		const char *cls = parktrace_lock_name(&l[i]);
		uint64_t parks = 0, ns = 0;
		size_t k = i;

		for (; k < n && !by_series(&l[i], &l[k]); k++) {
			parks += l[k].v.count;
			ns += l[k].v.total_ns;
		}
		{
			const char *labels[] = { "pid", j->pid_s, "main_class", j->p.main_class,
						 "container_id", j->p.container_id, "class", cls,
						 "kind", kind, NULL };

			metrics_counter_set(j->sv->m, M_PARKS, labels, (double)parks);
			metrics_counter_set(j->sv->m, M_PARKED, labels, (double)ns / 1e9);
		}
		i = k;
	}
	free(l);
}
