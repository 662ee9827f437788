// SPDX-License-Identifier: GPL-2.0
/* serve_metrics.c - the series of `memtrace serve` (see serve_metrics.h). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "agentctl/agentlive.h"
#include "serve/serve_metrics.h"
#include "lib/util.h"
#include "probe/alloctrace.h"
#include "probe/gctrace.h"
#include "probe/parktrace.h"
#include "jvm/heapused.h"
#include "jvm/vmstructs.h"

/* Pause buckets (seconds): 100 us .. 10 s. */
static const double pause_bounds[] = { 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
				       0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10 };
/* OpenTelemetry's advice for jvm.gc.duration. */
static const double otel_bounds[] = { 0.01, 0.1, 1, 10 };

#define M_INFO "memtrace_jvm_info"
#define M_WATCHED "memtrace_jvms_watched"
#define M_PAUSE "memtrace_gc_pause_seconds"
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
/* Micrometer's names (JvmGcMetrics, JvmMemoryMetrics in Prometheus form) */
#define MM_PAUSE "jvm_gc_pause_seconds"
#define MM_PAUSE_MAX "jvm_gc_pause_seconds_max"
#define MM_CONC "jvm_gc_concurrent_phase_time_seconds"
#define MM_CONC_MAX "jvm_gc_concurrent_phase_time_seconds_max"
#define MM_ALLOCATED "jvm_gc_memory_allocated_bytes"
#define MM_PROMOTED "jvm_gc_memory_promoted_bytes"
#define MM_LIVE "jvm_gc_live_data_size_bytes"
#define MM_MAXDATA "jvm_gc_max_data_size_bytes"
#define MM_USED "jvm_memory_used_bytes"
#define MM_COMMITTED "jvm_memory_committed_bytes"
#define MM_MAX "jvm_memory_max_bytes"
/* OpenTelemetry's semantic conventions (jvm.*, as its Prometheus exporter names them) */
#define OT_DURATION "jvm_gc_duration_seconds"
#define OT_USED "jvm_memory_used_bytes"
#define OT_COMMITTED "jvm_memory_committed_bytes"
#define OT_LIMIT "jvm_memory_limit_bytes"
#define OT_AFTER_GC "jvm_memory_used_after_last_gc_bytes"

static int register_micrometer(struct metrics *m)
{
	int err = 0;

	err |= metrics_register_histogram(m, MM_PAUSE, "seconds",
					  "Time spent in GC pause (Micrometer's jvm.gc.pause: one per "
					  "GarbageCollectorMXBean notification of a stop-the-world pause, G1's "
					  "remark and cleanup and ZGC's and Shenandoah's pauses included), by "
					  "collector, action and cause.",
					  pause_bounds, (int)MT_ARRAY_SIZE(pause_bounds));
	err |= metrics_register(m, MM_PAUSE_MAX, METRIC_GAUGE, NULL,
				"Longest GC pause in seconds over the last 2 minutes (Micrometer's window).");
	err |= metrics_register_histogram(m, MM_CONC, "seconds",
					  "Time spent in concurrent phase (ZGC's and Shenandoah's cycles: "
					  "they run beside the application; their pauses are "
					  "jvm_gc_pause_seconds).",
					  pause_bounds, (int)MT_ARRAY_SIZE(pause_bounds));
	err |= metrics_register(m, MM_CONC_MAX, METRIC_GAUGE, NULL,
				"Longest concurrent phase in seconds over the last 2 minutes.");
	err |= metrics_register(m, MM_ALLOCATED, METRIC_COUNTER, "bytes",
				"Incremented for an increase in the size of the (young) heap memory pool "
				"after one GC to before the next (from the second collection memtrace sees).");
	err |= metrics_register(m, MM_PROMOTED, METRIC_COUNTER, "bytes",
				"Count of positive increases in the size of the old generation memory "
				"pool before GC to after GC.");
	err |= metrics_register(m, MM_LIVE, METRIC_GAUGE, "bytes",
				"Size of long-lived heap memory pool after reclamation.");
	err |= metrics_register(m, MM_MAXDATA, METRIC_GAUGE, "bytes",
				"Max size of long-lived heap memory pool.");
	err |= metrics_register(m, MM_USED, METRIC_GAUGE, "bytes",
				"The amount of used memory, per heap pool, now (read from the JVM's "
				"memory every second; G1, Parallel, Serial; non-heap pools absent).");
	err |= metrics_register(m, MM_COMMITTED, METRIC_GAUGE, "bytes",
				"The amount of memory committed for the JVM to use, per pool, as of "
				"the last collection.");
	err |= metrics_register(m, MM_MAX, METRIC_GAUGE, "bytes",
				"The maximum amount of memory that can be used, per pool, as of the "
				"last collection (-1 if undefined).");
	return err;
}

static int register_otel(struct metrics *m)
{
	int err = 0;

	err |= metrics_register_histogram(m, OT_DURATION, "seconds",
					  "Duration of JVM garbage collection actions (jvm.gc.duration), by "
					  "jvm.gc.name, jvm.gc.action and jvm.gc.cause.",
					  otel_bounds, (int)MT_ARRAY_SIZE(otel_bounds));
	err |= metrics_register(m, OT_USED, METRIC_GAUGE, "bytes",
				"Measure of memory used (jvm.memory.used), per heap pool, now (read "
				"from the JVM's memory every second; non-heap pools absent).");
	err |= metrics_register(m, OT_COMMITTED, METRIC_GAUGE, "bytes",
				"Measure of memory committed (jvm.memory.committed), as of the last "
				"collection.");
	err |= metrics_register(m, OT_LIMIT, METRIC_GAUGE, "bytes",
				"Measure of max obtainable memory (jvm.memory.limit), as of the last "
				"collection; absent if undefined.");
	err |= metrics_register(m, OT_AFTER_GC, METRIC_GAUGE, "bytes",
				"Measure of memory used, as measured after the most recent garbage "
				"collection event on this pool (jvm.memory.used_after_last_gc).");
	return err;
}

int serve_metrics_register(struct metrics *m, enum serve_names names)
{
	int err = 0;

	err |= metrics_register(m, M_INFO, METRIC_GAUGE, NULL,
				"A JVM memtrace watches (always 1); labels say which.");
	err |= metrics_register(m, M_WATCHED, METRIC_GAUGE, NULL, "JVMs memtrace watches.");
	err |= names == SERVE_NAMES_OTEL ? register_otel(m) : register_micrometer(m);
	err |= metrics_register_histogram(m, M_PAUSE, "seconds",
					  "Every stop-the-world collection pause memtrace sees, per "
					  "collector, those no memory manager reports included (G1 remark "
					  "and cleanup on JDK 17: collector \"(no memory manager)\").",
					  pause_bounds, (int)MT_ARRAY_SIZE(pause_bounds));
	err |= metrics_register(m, M_LOST, METRIC_COUNTER, NULL,
				"Events the kernel could not queue to memtrace (ring buffer full).");
	err |= metrics_register(m, M_UNPAIRED, METRIC_COUNTER, NULL,
				"GC probe events memtrace could not pair (begin without end, ...).");
	err |= metrics_register(m, M_ALLOC, METRIC_COUNTER, "bytes",
				"Bytes allocated since allocation sampling was switched on, estimated "
				"from TLAB refills (each counts the bytes its thread allocated since "
				"its previous one); only while it is on.");
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

/* The identity labels: name, SERVE_ID_* bit, value in a struct jvmid. */
static const struct {
	const char *name;
	unsigned bit;
	size_t off;
} id_labels[] = {
	{ "container_id", SERVE_ID_CONTAINER_ID, offsetof(struct jvmid, container_id) },
	{ "container", SERVE_ID_CONTAINER, offsetof(struct jvmid, container_name) },
	{ "pod", SERVE_ID_POD, offsetof(struct jvmid, pod) },
	{ "namespace", SERVE_ID_NAMESPACE, offsetof(struct jvmid, pod_namespace) },
	{ "pod_uid", SERVE_ID_POD_UID, offsetof(struct jvmid, pod_uid) },
};

#define JVM_LABELS_MAX (2 * (3 + MT_ARRAY_SIZE(id_labels) + 3) + 1)

/*
 * jvm_labels - the labels of a series of JVM @j into @l (JVM_LABELS_MAX
 * slots): pid, main_class, the identity labels @bits selects, then the pairs
 * @k1=@v1, @k2=@v2, @k3=@v3 up to the first NULL key. Returns @l.
 */
static const char **jvm_labels(const struct serve_jvm *j, unsigned bits, const char **l,
			       const char *k1, const char *v1, const char *k2, const char *v2,
			       const char *k3, const char *v3)
{
	const char *extra[] = { k1, v1, k2, v2, k3, v3 };
	size_t n = 0;

	l[n++] = "pid";
	l[n++] = j->pid_s;
	l[n++] = "main_class";
	l[n++] = j->p.main_class;
	for (size_t i = 0; i < MT_ARRAY_SIZE(id_labels); i++)
		if (bits & id_labels[i].bit) {
			l[n++] = id_labels[i].name;
			l[n++] = (const char *)&j->p.ident + id_labels[i].off;
		}
	for (size_t i = 0; i < MT_ARRAY_SIZE(extra) && extra[i]; i += 2) {
		l[n++] = extra[i];
		l[n++] = extra[i + 1];
	}
	l[n] = NULL;
	return l;
}

/* The labels every series of JVM @j carries (pid, main_class, --labels),
 * then @k1=@v1 (if @k1). */
#define JVM_LABELS(j, k1, v1) \
	jvm_labels((j), (j)->sv->id_labels, (const char *[JVM_LABELS_MAX]){ NULL }, k1, v1, \
		   NULL, NULL, NULL, NULL)
/* ... then up to three pairs. */
#define JVM_LABELS3(j, k1, v1, k2, v2, k3, v3) \
	jvm_labels((j), (j)->sv->id_labels, (const char *[JVM_LABELS_MAX]){ NULL }, k1, v1, \
		   k2, v2, k3, v3)

int serve_metrics_id_labels(const char *list, unsigned *bits)
{
	char buf[128], *save = NULL, *tok;

	*bits = 0;
	if (snprintf(buf, sizeof(buf), "%s", list) >= (int)sizeof(buf))
		return -EINVAL;
	if (!strcmp(buf, "none"))
		return 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		if (!strcmp(tok, "all")) {
			for (i = 0; i < MT_ARRAY_SIZE(id_labels); i++)
				*bits |= id_labels[i].bit;
			continue;
		}
		for (i = 0; i < MT_ARRAY_SIZE(id_labels); i++)
			if (!strcmp(tok, id_labels[i].name))
				break;
		if (i == MT_ARRAY_SIZE(id_labels))
			return -EINVAL;
		*bits |= id_labels[i].bit;
	}
	return 0;
}

/* The timer series of (collector, action, cause), created on first use. */
static struct serve_timer *timer_of(struct serve_jvm *j, const struct gc_record *r,
				    bool concurrent)
{
	struct serve_timer *t;

	for (int i = 0; i < j->ntimers; i++) {
		t = &j->timers[i];
		if (!strcmp(t->gc, r->manager) && !strcmp(t->action, r->action) &&
		    !strcmp(t->cause, r->cause))
			return t;
	}
	if (j->ntimers == SERVE_MAX_TIMERS)
		return NULL;
	t = &j->timers[j->ntimers++];
	memset(t, 0, sizeof(*t));
	memcpy(t->gc, r->manager, MT_GC_NAME_LEN);
	memcpy(t->action, r->action, MT_GC_NAME_LEN);
	memcpy(t->cause, r->cause, MT_GC_NAME_LEN);
	t->concurrent = concurrent;
	return t;
}

static void timer_max_set(struct serve_jvm *j, struct serve_timer *t, uint64_t now)
{
	metrics_gauge_set(j->sv->m, t->concurrent ? MM_CONC_MAX : MM_PAUSE_MAX,
			  JVM_LABELS3(j, "gc", t->gc, "action", t->action, "cause", t->cause),
			  winmax_get(&t->max, now));
}

/* The pool @name of @j (added if new); NULL when the table is full. */
static struct serve_pool *pool_of(struct serve_jvm *j, const char *name, bool heap)
{
	for (int i = 0; i < j->npools; i++)
		if (!strcmp(j->pools[i].name, name))
			return &j->pools[i];
	if (j->npools == SERVE_MAX_POOLS)
		return NULL;
	memset(&j->pools[j->npools], 0, sizeof(j->pools[0]));
	snprintf(j->pools[j->npools].name, MT_GC_NAME_LEN, "%s", name);
	j->pools[j->npools].heap = heap;
	return &j->pools[j->npools++];
}

/* A pool's committed/max (and OTel's used after the last GC) series. */
static void pool_series(struct serve_jvm *j, const struct serve_pool *p)
{
	struct metrics *m = j->sv->m;

	if (j->sv->names == SERVE_NAMES_OTEL) {
		const char *type = p->heap ? "heap" : "non_heap";

		metrics_gauge_set(m, OT_COMMITTED, JVM_LABELS3(j, "jvm_memory_type", type,
				  "jvm_memory_pool_name", p->name, NULL, NULL), (double)p->committed);
		if (p->max != UINT64_MAX)
			metrics_gauge_set(m, OT_LIMIT, JVM_LABELS3(j, "jvm_memory_type", type,
					  "jvm_memory_pool_name", p->name, NULL, NULL), (double)p->max);
		/* MemoryPoolMXBean.getCollectionUsage(): heap pools only */
		if (p->heap)
			metrics_gauge_set(m, OT_AFTER_GC, JVM_LABELS3(j, "jvm_memory_type", type,
					  "jvm_memory_pool_name", p->name, NULL, NULL),
					  (double)p->used_after);
		return;
	}
	metrics_gauge_set(m, MM_COMMITTED, JVM_LABELS3(j, "area", p->heap ? "heap" : "nonheap",
			  "id", p->name, NULL, NULL), (double)p->committed);
	metrics_gauge_set(m, MM_MAX, JVM_LABELS3(j, "area", p->heap ? "heap" : "nonheap",
			  "id", p->name, NULL, NULL), p->max == UINT64_MAX ? -1.0 : (double)p->max);
}

/* Micrometer's per-collection meters. */
static void micrometer_record(struct serve_jvm *j, const struct gc_record *r, double secs)
{
	struct metrics *m = j->sv->m;
	/* a pause is a pause: Micrometer's own rule (cause "No GC", or a manager
	 * named "... Cycles") would file JDK 21+ G1's remark and cleanup, which
	 * stop the application, under the concurrent phases */
	bool conc = r->kind == GC_KIND_CYCLE;
	struct serve_timer *t;
	uint64_t now = mono_ns();

	metrics_histogram_observe(m, conc ? MM_CONC : MM_PAUSE,
				  JVM_LABELS3(j, "gc", r->manager, "action", r->action, "cause",
					      r->cause), secs);
	t = timer_of(j, r, conc);
	if (t) {
		winmax_record(&t->max, now, secs);
		timer_max_set(j, t, now);
	}
	metrics_counter_set(m, MM_ALLOCATED, JVM_LABELS(j, NULL, NULL), (double)j->gm.allocated);
	if (j->gm.generational)
		metrics_counter_set(m, MM_PROMOTED, JVM_LABELS(j, NULL, NULL),
				    (double)j->gm.promoted);
	if (j->gm.have_live)
		metrics_gauge_set(m, MM_LIVE, JVM_LABELS(j, NULL, NULL), (double)j->gm.live);
	if (j->gm.have_max)
		metrics_gauge_set(m, MM_MAXDATA, JVM_LABELS(j, NULL, NULL), (double)j->gm.max_data);
}

void serve_metrics_gc_record(const struct gc_record *r, void *ctx)
{
	struct serve_jvm *j = ctx;
	struct metrics *m = j->sv->m;
	double secs = (double)(r->end_ns - r->start_ns) / 1e9;

	if (gcpair_is_pause(r))
		metrics_histogram_observe(m, M_PAUSE, JVM_LABELS(j, "collector",
					  r->manager[0] ? r->manager : "(no memory manager)"), secs);
	gcmeters_record(&j->gm, r);
	/* a memory manager's cycle: one GarbageCollectorMXBean notification */
	if (r->manager[0]) {
		if (j->sv->names == SERVE_NAMES_OTEL)
			metrics_histogram_observe(m, OT_DURATION, JVM_LABELS3(j, "jvm_gc_name",
						  r->manager, "jvm_gc_action", r->action,
						  "jvm_gc_cause", r->cause), secs);
		else
			micrometer_record(j, r, secs);
	}
	for (int i = 0; i < r->npools; i++) {
		const struct gc_pool *gp = &r->pools[i];
		struct serve_pool *p = pool_of(j, gp->name, gp->heap);

		if (!p)
			continue;
		p->reported = true;
		p->committed = gp->committed;
		p->max = gp->max;
		p->used_after = gp->used_after;
		pool_series(j, p);
	}
	pthread_mutex_lock(&j->sv->lock);
	j->collections++;
	pthread_mutex_unlock(&j->sv->lock);
}

void serve_metrics_memory_start(struct serve_jvm *j)
{
	int err = vmstructs_open(&j->p, &j->mvs);

	if (!err)
		err = heapused_open(j->mvs, NULL, &j->hu);
	if (err == -ENOENT && j->mvs)
		return; /* a stripped libjvm: the pool names of a collection will tell */
	if (err) {
		p_info("pid %d: no current heap pool usage (%s)", j->p.pid,
		       vmstructs_strerror(err));
		return;
	}
	/* the heap pools before a collection names them */
	for (int i = 0; i < HEAPUSED_NSPACES; i++)
		pool_of(j, heapused_pool_name(&j->hu, i), true);
}

void serve_metrics_memory_update(struct serve_jvm *j)
{
	uint64_t now = mono_ns();

	if (j->hu.kind == HEAPUSED_NONE && j->mvs && !j->hu_hinted) {
		for (int i = 0; i < j->npools && !j->hu_hinted; i++)
			if (j->pools[i].heap) {
				j->hu_hinted = true;
				if (heapused_open(j->mvs, j->pools[i].name, &j->hu))
					p_info("pid %d: no current heap pool usage (this collector's "
					       "layout is unknown)", j->p.pid);
			}
	}
	for (int i = 0; i < j->npools; i++) {
		const struct serve_pool *p = &j->pools[i];
		int s = heapused_space(p->name);
		uint64_t used;

		if (!p->heap || s < 0 || heapused_read(&j->hu, s, &used))
			continue;
		if (j->sv->names == SERVE_NAMES_OTEL)
			metrics_gauge_set(j->sv->m, OT_USED, JVM_LABELS3(j, "jvm_memory_type", "heap",
					  "jvm_memory_pool_name", p->name, NULL, NULL), (double)used);
		else
			metrics_gauge_set(j->sv->m, MM_USED, JVM_LABELS3(j, "area", "heap", "id",
					  p->name, NULL, NULL), (double)used);
	}
	/* the window maxima slide even without collections */
	if (j->sv->names == SERVE_NAMES_MICROMETER)
		for (int i = 0; i < j->ntimers; i++)
			timer_max_set(j, &j->timers[i], now);
}

void serve_metrics_memory_stop(struct serve_jvm *j)
{
	vmstructs_free(j->mvs);
	j->mvs = NULL;
	j->hu.kind = HEAPUSED_NONE;
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
			  jvm_labels(j, ~0u, (const char *[JVM_LABELS_MAX]){ NULL }, "jdk",
				     j->p.jdk_version, NULL, NULL, NULL, NULL), 1);
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
			const char **labels = JVM_LABELS3(j, "class", cls, "kind", kind, NULL, NULL);

			metrics_counter_set(j->sv->m, M_PARKS, labels, (double)parks);
			metrics_counter_set(j->sv->m, M_PARKED, labels, (double)ns / 1e9);
		}
		i = k;
	}
	free(l);
}
