// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_serve.c - `memtrace serve`: watch one or every JVM's collections and
 * serve them as OpenMetrics (/metrics) and JSON (/api/v1/...).
 *
 * The main thread owns the watched JVMs (one gctrace each): it rescans
 * /proc every --rescan seconds, attaches to JVMs that appeared, drops those
 * that exited (and their series), and polls the ring buffers. GC records
 * update the metrics registry; the HTTP thread only reads the registry and
 * the JVM list, both under their own locks.
 *
 * Heavier work is switched per JVM through the API (or --alloc / --age for
 * every JVM): allocation sampling (TLAB uprobes, alloctrace.h) and agent
 * sampling (live sampled bytes by age, agentlive.h; loads memtrace's agent).
 * The HTTP thread only records the wish (want_*); the main thread starts and
 * stops the work on its next tick and reports the state back.
 *
 * A query (POST /api/v1/jvms/PID/query) is compiled on the HTTP thread (a
 * syntax error answers 400 at once), then runs in a worker thread of its own
 * - the agent's heap walk and the evaluation can take seconds, and neither
 * the HTTP thread (which answers /metrics scrapes) nor the main thread (which
 * drains the ring buffers) may wait for it - and the client polls GET
 * /api/v1/queries/ID. One query per JVM at a time; finished ones are kept
 * (the last QUERY_KEEP) and their threads joined by the main thread.
 *
 * Pause/resume of reporting (POST /api/v1/jvms/PID/record/pause|resume)
 * signals the `memtrace record` processes recording that JVM (recctl.h):
 * record is its own process with its own file, and SIGUSR1/SIGUSR2 are
 * already its documented controls.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentctl/agentlive.h"
#include "probe/alloctrace.h"
#include "cmd/cmds.h"
#include "probe/gctrace.h"
#include "dsl/dsl.h"
#include "sink/metrics.h"
#include "jvm/privs.h"
#include "jvm/proc.h"
#include "heap/querylive.h"
#include "monitor/recctl.h"
#include "agentctl/sampling.h"
#include "sink/serve_http.h"
#include "lib/util.h"

static volatile sig_atomic_t exiting;

static void sig_handler(int sig)
{
	exiting = 1;
}

/* What a switchable piece of work is doing (shown by /api/v1/jvms). */
enum work_state { WORK_OFF, WORK_STARTING, WORK_ON, WORK_STOPPING, WORK_FAILED };

static const char *const work_state_name[] = { "off", "starting", "on", "stopping", "failed" };

/* A switchable piece of work of one JVM: want is the API's wish, state and
 * error what the main thread made of it (all guarded by serve.lock). */
struct work {
	bool want;
	enum work_state state;
	char error[160];
	uint64_t since_ns;     /* epoch ns when it came on */
};

struct alloc_cls {
	char *name;
	uint64_t bytes;        /* since allocation sampling came on */
};

struct jvm {
	struct mt_proc p;
	struct gctrace *t;
	struct serve *sv;
	char pid_s[16];
	uint64_t since_ns;     /* epoch ns when serve attached */
	uint64_t collections;  /* records seen (guarded by serve.lock) */
	/* allocation sampling: the tracer is the main thread's */
	struct work alloc;
	struct alloctrace *at;
	struct alloc_cls *cls; /* exported classes (sticky while on), guarded by serve.lock */
	int ncls;
	uint64_t alloc_total;  /* guarded by serve.lock */
	/* agent sampling: the session is the main thread's */
	struct work age;
	uint32_t age_interval; /* bytes; 0: the agent's default */
	struct agentlive *al;  /* never read by the HTTP thread */
	uint32_t age_on_interval;   /* the agent's interval while on, guarded by serve.lock */
	struct agentlive_ages ages; /* last read, guarded by serve.lock */
};

/* A query through the API. Everything but th, src and prog is guarded by serve.lock
 * once the job is listed. */
enum query_state { QUERY_RUNNING, QUERY_DONE, QUERY_FAILED };

static const char *const query_state_name[] = { "running", "done", "failed" };

#define QUERY_KEEP 16 /* finished queries kept for GET /api/v1/queries/ID */

struct query_job {
	unsigned id;
	int pid;
	struct serve *sv;
	enum query_state state;
	pthread_t th;
	bool joined;
	struct mt_proc p;           /* the worker's copy */
	char *src;                  /* the program */
	size_t len;
	struct dsl_program *prog;   /* compiled without a heap (the worker's) */
	bool has_max;
	uint32_t max_pause_ms;
	uint64_t started_ns, ended_ns;
	/* the outcome */
	double pause_ms, eval_ms;
	bool pause_from_jvm;     /* pause_ms from the JVM's safepoint counters */
	bool partial;
	uint32_t objects;
	char *result;               /* the program's JSON (no newline) */
	char error[640];            /* QUERY_FAILED: why */
	char *diagnostics;          /* QUERY_FAILED: rendered line:col diagnostics, or NULL */
	struct query_job *next;
};

struct serve {
	struct metrics *m;
	pthread_mutex_t lock;  /* guards jvms[] and their counters for the HTTP thread */
	struct jvm **jvms;
	int njvms, cap;
	int *failed;           /* pids we could not watch: not retried while alive */
	int nfailed;
	int only_pid;          /* -p PID, 0 with --all */
	bool alloc_all, age_all; /* --alloc, --age: switched on for every JVM watched */
	uint32_t age_interval;   /* --age-interval */
	int alloc_top;           /* classes exported per JVM (--alloc-top) */
	uint64_t next_work_ns;   /* next refresh of the allocation and age series */
	struct query_job *queries; /* newest first (guarded by lock) */
	unsigned next_query;     /* ids (guarded by lock) */
};

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

#define WORK_REFRESH_NS 1000000000ull /* allocation and age series: every second */

static int register_metrics(struct metrics *m)
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
	err |= metrics_register(m, M_AGE_LOST, METRIC_COUNTER, NULL,
				"Agent samples, deaths or GC records lost or evicted (ages and bytes "
				"are then estimates with a wider error).");
	return err ? -EINVAL : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace serve (-p PID | --all) [--listen ADDR:PORT] [--token-file FILE]\n"
		   "                      [--rescan S] [--duration S] [--allow-remote]\n"
		   "                      [--alloc] [--alloc-top N] [--age] [--age-interval BYTES]\n"
		   "  Watches the collections of one JVM, or of every JVM it can see (picking\n"
		   "  up JVMs that start later, dropping those that exit), and serves them:\n"
		   "    /metrics          OpenMetrics text for Prometheus (no token)\n"
		   "    /api/v1/...       JSON; needs \"Authorization: Bearer TOKEN\", TOKEN the\n"
		   "                      first line of --token-file (GET /api/v1/help lists it):\n"
		   "      GET /api/v1/metrics, GET /api/v1/jvms, GET /api/v1/jvms/PID\n"
		   "      POST|DELETE /api/v1/jvms/PID/alloc     allocation sampling on|off\n"
		   "      POST|DELETE /api/v1/jvms/PID/age[?interval=BYTES]  agent sampling on|off\n"
		   "      POST /api/v1/jvms/PID/query[?max_pause_ms=N]  a query (body: the\n"
		   "                      program); 202, then GET /api/v1/queries/ID\n"
		   "      POST /api/v1/jvms/PID/record/pause|resume  pause/resume the reporting\n"
		   "                      of the `memtrace record -p PID` processes\n"
		   "  --alloc, --age: switch those on for every JVM watched (--age loads\n"
		   "  memtrace's agent into each). --alloc-top: classes per JVM (default 10).\n"
		   "  --listen defaults to %s; a non-loopback address needs --allow-remote.\n"
		   "  --rescan: seconds between looks for new and exited JVMs (default 2).\n",
		   MT_SERVE_DEFAULT_LISTEN);
}

/* The labels every series of JVM @j carries, then @k1=@v1 (if @k1). */
#define JVM_LABELS(j, k1, v1) \
	(const char *[]){ "pid", (j)->pid_s, "main_class", (j)->p.main_class, "container_id", \
			  (j)->p.container_id, k1, v1, NULL }

static void on_record(const struct gc_record *r, void *ctx)
{
	struct jvm *j = ctx;
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

/* The kernel-side counters of @j into the registry. */
static void update_counters(struct jvm *j)
{
	const struct gcpair *gp = gctrace_pairing(j->t);

	metrics_counter_set(j->sv->m, M_LOST, JVM_LABELS(j, NULL, NULL), (double)gctrace_lost(j->t));
	metrics_counter_set(j->sv->m, M_UNPAIRED, JVM_LABELS(j, NULL, NULL),
			    (double)(gp->unpaired_begin + gp->unpaired_end + gp->overflow));
}

/* work_set - move @w to @st (with @error for WORK_FAILED). Takes serve.lock. */
static void work_set(struct serve *sv, struct work *w, enum work_state st, const char *error)
{
	pthread_mutex_lock(&sv->lock);
	w->state = st;
	if (st == WORK_FAILED) {
		w->want = false;
		snprintf(w->error, sizeof(w->error), "%s", error);
	} else if (st == WORK_ON) {
		w->error[0] = '\0';
		w->since_ns = real_ns();
	}
	pthread_mutex_unlock(&sv->lock);
}

/* alloc_stop - stop allocation sampling in @j and drop its series. */
static void alloc_stop(struct jvm *j)
{
	struct serve *sv = j->sv;

	alloctrace_free(j->at);
	j->at = NULL;
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

static int row_by_name(const void *a, const void *b)
{
	return strcmp(((const struct alloc_row *)a)->class_name,
		      ((const struct alloc_row *)b)->class_name);
}

static int cls_by_bytes(const void *a, const void *b)
{
	const struct alloc_cls *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->name, y->name);
}

/*
 * alloc_update - the kernel aggregate of @j into its series: the total, and
 * the top classes. A class once exported stays (up to 2 x --alloc-top) so a
 * counter never vanishes while sampling is on.
 */
static void alloc_update(struct jvm *j)
{
	struct serve *sv = j->sv;
	struct alloc_cls *sum = NULL;
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
		struct alloc_cls *a;

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

/* age_stop - stop agent sampling in @j (the agent goes dormant), drop its series. */
static void age_stop(struct jvm *j)
{
	struct serve *sv = j->sv;

	agentlive_stop(j->al);
	j->al = NULL;
	metrics_remove_family_series(sv->m, M_AGE_BYTES, "pid", j->pid_s);
	metrics_remove_family_series(sv->m, M_AGE_SAMPLES, "pid", j->pid_s);
	metrics_remove_family_series(sv->m, M_AGE_GCS, "pid", j->pid_s);
	metrics_remove_family_series(sv->m, M_AGE_LOST, "pid", j->pid_s);
	pthread_mutex_lock(&sv->lock);
	memset(&j->ages, 0, sizeof(j->ages));
	pthread_mutex_unlock(&sv->lock);
}

/* age_update - live sampled bytes by age of @j into its series. */
static void age_update(struct jvm *j)
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

/* query_running - the running query of JVM @pid, or NULL (serve.lock held). */
static struct query_job *query_running(struct serve *sv, int pid)
{
	for (struct query_job *q = sv->queries; q; q = q->next)
		if (q->pid == pid && q->state == QUERY_RUNNING)
			return q;
	return NULL;
}

/* apply_work - start or stop @j's switchable work as the API asked; poll it. */
static void apply_work(struct jvm *j, bool refresh)
{
	struct serve *sv = j->sv;
	bool want_alloc, want_age, start_age;
	uint32_t interval;
	char msg[160];

	pthread_mutex_lock(&sv->lock);
	want_alloc = j->alloc.want;
	want_age = j->age.want;
	interval = j->age_interval;
	/* the agent serves one client: agent sampling starts after a running query;
	 * STARTING is set here, under the lock, so no query starts meanwhile */
	start_age = want_age && !j->al && !query_running(sv, j->p.pid);
	if (start_age)
		j->age.state = WORK_STARTING;
	pthread_mutex_unlock(&sv->lock);

	if (want_alloc && !j->at) {
		struct alloctrace_opts ao = { 0 };

		work_set(sv, &j->alloc, WORK_STARTING, NULL);
		j->at = alloctrace_new(&j->p, &ao);
		if (j->at) {
			work_set(sv, &j->alloc, WORK_ON, NULL);
			p_info("pid %d: allocation sampling on", j->p.pid);
		} else {
			snprintf(msg, sizeof(msg), "allocation sampling failed: %s (serve's log says "
				 "more; `memtrace doctor -p %d`)", strerror(errno ? errno : EINVAL),
				 j->p.pid);
			work_set(sv, &j->alloc, WORK_FAILED, msg);
		}
	} else if (!want_alloc && j->at) {
		work_set(sv, &j->alloc, WORK_STOPPING, NULL);
		alloc_stop(j);
		work_set(sv, &j->alloc, WORK_OFF, NULL);
		p_info("pid %d: allocation sampling off", j->p.pid);
	}
	if (j->at) {
		alloctrace_poll(j->at, 0);
		if (refresh)
			alloc_update(j);
	}

	if (start_age) {
		j->al = agentlive_start(&j->p, interval);
		if (j->al) {
			pthread_mutex_lock(&sv->lock);
			j->age_on_interval = agentlive_samples(j->al)->interval;
			pthread_mutex_unlock(&sv->lock);
			work_set(sv, &j->age, WORK_ON, NULL);
		} else {
			snprintf(msg, sizeof(msg), "agent sampling failed: %s (serve's log says more)",
				 strerror(errno ? errno : EINVAL));
			work_set(sv, &j->age, WORK_FAILED, msg);
		}
	} else if (!want_age && j->al) {
		work_set(sv, &j->age, WORK_STOPPING, NULL);
		age_stop(j);
		work_set(sv, &j->age, WORK_OFF, NULL);
		p_info("pid %d: agent sampling off; the agent is dormant", j->p.pid);
	}
	if (j->al) {
		if (agentlive_poll(j->al)) {
			work_set(sv, &j->age, WORK_STOPPING, NULL);
			age_stop(j);
			work_set(sv, &j->age, WORK_FAILED, "the agent session ended (serve's log "
				 "says why)");
		} else if (refresh) {
			age_update(j);
		}
	}
}

static bool is_failed(const struct serve *sv, int pid)
{
	for (int i = 0; i < sv->nfailed; i++)
		if (sv->failed[i] == pid)
			return true;
	return false;
}

static void mark_failed(struct serve *sv, int pid)
{
	int *f = realloc(sv->failed, (size_t)(sv->nfailed + 1) * sizeof(*f));

	if (!f)
		return;
	sv->failed = f;
	sv->failed[sv->nfailed++] = pid;
}

/* watch - start watching host pid @pid. Returns 0 or -errno (printed). */
static int watch(struct serve *sv, int pid)
{
	struct jvm *j = calloc(1, sizeof(*j));
	int err;

	if (!j)
		return -ENOMEM;
	err = proc_open(pid, &j->p);
	if (err) {
		if (err != -ESRCH) /* gone already: nothing to say */
			proc_explain(pid, err);
		free(j);
		return err;
	}
	j->sv = sv;
	snprintf(j->pid_s, sizeof(j->pid_s), "%d", pid);
	j->t = gctrace_new(&j->p, on_record, j);
	if (!j->t) {
		err = -errno;
		free(j);
		return err ? err : -EINVAL;
	}
	j->since_ns = real_ns();
	j->alloc.want = sv->alloc_all;
	j->age.want = sv->age_all;
	j->age_interval = sv->age_interval;
	metrics_gauge_set(sv->m, M_INFO,
			  (const char *[]){ "pid", j->pid_s, "main_class", j->p.main_class,
					    "container_id", j->p.container_id, "jdk",
					    j->p.jdk_version, NULL }, 1);
	update_counters(j);
	pthread_mutex_lock(&sv->lock);
	if (sv->njvms == sv->cap) {
		int cap = sv->cap ? sv->cap * 2 : 8;
		struct jvm **a = realloc(sv->jvms, (size_t)cap * sizeof(*a));

		if (!a) {
			pthread_mutex_unlock(&sv->lock);
			gctrace_free(j->t);
			metrics_remove_series(sv->m, "pid", j->pid_s);
			free(j);
			return -ENOMEM;
		}
		sv->jvms = a;
		sv->cap = cap;
	}
	sv->jvms[sv->njvms++] = j;
	pthread_mutex_unlock(&sv->lock);
	p_info("watching pid %d (%s, JDK %s)", pid, j->p.main_class[0] ? j->p.main_class : "?",
	       j->p.jdk_version[0] ? j->p.jdk_version : "?");
	return 0;
}

/* unwatch - stop watching jvms[i] (@exited: because it exited) and drop its series. */
static void unwatch(struct serve *sv, int i, bool exited)
{
	struct jvm *j = sv->jvms[i];

	pthread_mutex_lock(&sv->lock);
	sv->jvms[i] = sv->jvms[--sv->njvms];
	pthread_mutex_unlock(&sv->lock);
	if (j->at)
		alloc_stop(j);
	if (j->al)
		age_stop(j);
	gctrace_finish(j->t);
	gctrace_free(j->t);
	metrics_remove_series(sv->m, "pid", j->pid_s);
	if (exited)
		p_info("pid %d exited: no longer watched", j->p.pid);
	free(j);
}

/* rescan - drop exited JVMs, watch new ones. */
static void rescan(struct serve *sv)
{
	int *pids = NULL, n, k = 0;

	for (int i = sv->njvms - 1; i >= 0; i--)
		if (!proc_exists(sv->jvms[i]->p.pid))
			unwatch(sv, i, true);
	for (int i = 0; i < sv->nfailed; i++) /* forget failures of exited pids */
		if (proc_exists(sv->failed[i]))
			sv->failed[k++] = sv->failed[i];
	sv->nfailed = k;

	if (sv->only_pid) {
		pids = malloc(sizeof(*pids));
		n = pids && proc_exists(sv->only_pid) ? 1 : 0;
		if (n)
			pids[0] = sv->only_pid;
	} else {
		n = proc_list_jvms(&pids);
		if (n < 0) {
			p_warn("cannot list the JVMs: %s", strerror(-n));
			return;
		}
	}
	for (int i = 0; i < n; i++) {
		bool known = is_failed(sv, pids[i]);

		for (int w = 0; w < sv->njvms && !known; w++)
			known = sv->jvms[w]->p.pid == pids[i];
		if (!known && watch(sv, pids[i]))
			mark_failed(sv, pids[i]);
	}
	free(pids);
	metrics_gauge_set(sv->m, M_WATCHED, NULL, sv->njvms);
}

/* work_json - "NAME":{"state":..,"error":..,"since_ns":.. (caller closes). */
static void work_json(FILE *f, const char *name, const struct work *w)
{
	fprintf(f, ",\"%s\":{\"state\":\"%s\",\"requested\":%s", name, work_state_name[w->state],
		w->want ? "true" : "false");
	if (w->state == WORK_FAILED) {
		fputs(",\"error\":", f);
		json_str(f, w->error);
	}
	if (w->state == WORK_ON)
		fprintf(f, ",\"since_ns\":%llu", (unsigned long long)w->since_ns);
}

/* jvm_json - one watched JVM as a JSON object (serve.lock held). */
static void jvm_json(FILE *f, const struct jvm *j)
{
	fprintf(f, "{\"pid\":%d,\"nspid\":%d,\"main_class\":", j->p.pid, j->p.nspid);
	json_str(f, j->p.main_class);
	fputs(",\"container_id\":", f);
	json_str(f, j->p.container_id);
	fputs(",\"jdk\":", f);
	json_str(f, j->p.jdk_version);
	fprintf(f, ",\"watched_since_ns\":%llu,\"collections\":%llu",
		(unsigned long long)j->since_ns, (unsigned long long)j->collections);
	work_json(f, "alloc", &j->alloc);
	if (j->alloc.state == WORK_ON) {
		fprintf(f, ",\"bytes\":%llu,\"top_classes\":[", (unsigned long long)j->alloc_total);
		for (int c = 0; c < j->ncls; c++) {
			fprintf(f, "%s{\"class\":", c ? "," : "");
			json_str(f, j->cls[c].name);
			fprintf(f, ",\"bytes\":%llu}", (unsigned long long)j->cls[c].bytes);
		}
		putc(']', f);
	}
	putc('}', f);
	work_json(f, "age", &j->age);
	if (j->age.state == WORK_ON) {
		fprintf(f, ",\"interval\":%u,\"gcs\":%llu,\"lost\":%llu,\"by_age\":{",
			j->age_on_interval,
			(unsigned long long)j->ages.gcs, (unsigned long long)j->ages.lost);
		for (int b = 0; b < MT_AGE_BUCKETS; b++)
			fprintf(f, "%s\"%s\":{\"samples\":%llu,\"bytes\":%.0f}", b ? "," : "",
				ageranges_bucket_name(b), (unsigned long long)j->ages.samples[b],
				j->ages.bytes[b]);
		putc('}', f);
	}
	fputs("}}", f);
}

/* GET /api/v1/jvms */
static int jvms_json(FILE *f, void *ctx)
{
	struct serve *sv = ctx;

	pthread_mutex_lock(&sv->lock);
	fputs("{\"jvms\":[", f);
	for (int i = 0; i < sv->njvms; i++) {
		if (i)
			putc(',', f);
		jvm_json(f, sv->jvms[i]);
	}
	fputs("]}\n", f);
	pthread_mutex_unlock(&sv->lock);
	return ferror(f) ? -EIO : 0;
}

/* query_free - a job whose thread is joined (or never started). */
static void query_free(struct query_job *q)
{
	dsl_program_free(q->prog);
	free(q->src);
	free(q->result);
	free(q->diagnostics);
	free(q);
}

/* query_fail - the outcome of @q: failed with @error and @diags (rendered if any). */
static void query_fail(struct query_job *q, const char *error, const struct dsl_diags *diags)
{
	char *d = diags && diags->n ? dsl_diags_render_str(diags) : NULL;

	pthread_mutex_lock(&q->sv->lock);
	snprintf(q->error, sizeof(q->error), "%s", error);
	q->diagnostics = d;
	q->state = QUERY_FAILED;
	q->ended_ns = real_ns();
	pthread_mutex_unlock(&q->sv->lock);
}

/*
 * query_worker - a query's thread: the live snapshot through the agent and
 * the evaluation, exactly as `memtrace query -p` does them (snapshot.h,
 * querylive.h). Its p_err()s go to serve's log and, the last one, to the job.
 */
static void *query_worker(void *arg)
{
	struct query_job *q = arg;
	const struct dsl_needs *n = dsl_program_needs(q->prog);
	struct dsl_diags *diags = dsl_diags_new();
	struct querylive_out qo = { 0 };
	struct mt_snapshot snap;
	char why[512], msg[600];
	uint32_t flags = querylive_heap_flags(n);

	snapshot_init(&snap);
	if (!diags) {
		query_fail(q, "out of memory", NULL);
		return NULL;
	}
	p_err_capture(why, sizeof(why));
	if (q->has_max)
		flags |= MT_AP_HEAP_MAXPAUSE;
	p_info("pid %d: query %u: taking a heap snapshot", q->pid, q->id);
	if (snapshot_take(&q->p, flags, q->max_pause_ms, n->fields, n->nfields, &snap)) {
		snprintf(msg, sizeof(msg), "the heap snapshot failed: %s",
			 why[0] ? why : "see serve's log");
		query_fail(q, msg, NULL);
		goto out;
	}
	snapshot_print_walk(&snap);
	switch (querylive_eval(&q->prog, q->src, q->len, "<query>", &snap, n, diags, &qo)) {
	case QUERY_OK:
		break;
	case QUERY_HEAP:
		snprintf(msg, sizeof(msg), "cannot build the heap: %s", qo.why);
		query_fail(q, msg, NULL);
		goto out;
	case QUERY_FIT:
		query_fail(q, "the program does not fit this heap", diags);
		goto out;
	case QUERY_RUN:
		query_fail(q, "the program failed on this heap", diags);
		goto out;
	case QUERY_NOMEM:
		query_fail(q, "out of memory", NULL);
		goto out;
	}
	while (qo.len && qo.json[qo.len - 1] == '\n')
		qo.json[--qo.len] = '\0';
	pthread_mutex_lock(&q->sv->lock);
	q->result = qo.json;
	qo.json = NULL;
	q->pause_ms = (double)snap.info.pause_ns / 1e6;
	q->pause_from_jvm = snap.pause_from_jvm;
	q->partial = snap.info.partial;
	q->objects = qo.objects;
	q->eval_ms = (double)qo.eval_ns / 1e6;
	q->state = QUERY_DONE;
	q->ended_ns = real_ns();
	pthread_mutex_unlock(&q->sv->lock);
	p_info("pid %d: query %u done: pause %.3f ms%s, %u objects", q->pid, q->id, q->pause_ms,
	       q->partial ? " (partial)" : "", q->objects);
out:
	p_err_capture(NULL, 0);
	free(qo.json);
	snapshot_free(&snap);
	dsl_diags_free(diags);
	return NULL;
}

/*
 * queries_reap - join the threads of finished queries and forget all but the
 * newest QUERY_KEEP finished ones (main thread; @all: at exit, waiting for
 * running ones too).
 */
static void queries_reap(struct serve *sv, bool all)
{
	struct query_job **pp, *q, *gone = NULL, *join[QUERY_KEEP + 1];
	int kept = 0, njoin = 0;

	pthread_mutex_lock(&sv->lock);
	for (pp = &sv->queries; (q = *pp);) {
		bool finished = q->state != QUERY_RUNNING;

		if (all || (finished && ++kept > QUERY_KEEP)) {
			*pp = q->next;
			q->next = gone;
			gone = q;
			continue;
		}
		if (finished && !q->joined && njoin < (int)MT_ARRAY_SIZE(join)) {
			q->joined = true; /* joined below: only this thread removes jobs */
			join[njoin++] = q;
		}
		pp = &q->next;
	}
	pthread_mutex_unlock(&sv->lock);
	/* outside the lock: a finished worker may still be freeing its snapshot */
	for (int i = 0; i < njoin; i++)
		pthread_join(join[i]->th, NULL);
	while ((q = gone)) {
		gone = q->next;
		if (!q->joined)
			pthread_join(q->th, NULL);
		query_free(q);
	}
}

/* query_json - GET /api/v1/queries/ID (serve.lock held). */
static void query_json(FILE *f, const struct query_job *q)
{
	fprintf(f, "{\"id\":%u,\"pid\":%d,\"state\":\"%s\",\"started_ns\":%llu", q->id, q->pid,
		query_state_name[q->state], (unsigned long long)q->started_ns);
	if (q->has_max)
		fprintf(f, ",\"max_pause_ms\":%u", q->max_pause_ms);
	if (q->state != QUERY_RUNNING)
		fprintf(f, ",\"ended_ns\":%llu", (unsigned long long)q->ended_ns);
	if (q->state == QUERY_DONE)
		fprintf(f, ",\"pause_ms\":%.3f,\"pause_from\":\"%s\",\"partial\":%s,\"objects\":%u,"
			"\"eval_ms\":%.3f,\"result\":%s", q->pause_ms,
			q->pause_from_jvm ? "jvm_safepoints" : "agent", q->partial ? "true" : "false",
			q->objects, q->eval_ms, q->result);
	if (q->state == QUERY_FAILED) {
		fputs(",\"error\":", f);
		json_str(f, q->error);
		if (q->diagnostics) {
			fputs(",\"diagnostics\":", f);
			json_str(f, q->diagnostics);
		}
	}
	fputs("}\n", f);
}

/* diags_json - "error" and the rendered and structured diagnostics of @d. */
static void diags_json(FILE *f, const char *error, const struct dsl_diags *d)
{
	char *r = dsl_diags_render_str(d);

	fputs("{\"error\":", f);
	json_str(f, error);
	fputs(",\"diagnostics\":", f);
	json_str(f, r ? r : "");
	fputs(",\"messages\":[", f);
	for (int i = 0; i < d->n; i++) {
		fprintf(f, "%s{\"line\":%d,\"col\":%d,\"message\":", i ? "," : "", d->v[i].line,
			d->v[i].col);
		json_str(f, d->v[i].msg);
		putc('}', f);
	}
	fputs("]}\n", f);
	free(r);
}

static int api_error(FILE *f, int status, const char *msg);

/* POST /api/v1/jvms/PID/query[?max_pause_ms=N]: compile, then a worker. */
static int api_query(struct serve *sv, const struct serve_request *r, FILE *f, int pid)
{
	const char *mp = serve_request_arg(r, "max_pause_ms");
	struct dsl_diags *diags = NULL;
	struct query_job *q;
	struct jvm *j = NULL;
	uint64_t max = 0;
	sigset_t all, old;
	char msg[200];
	int status, err;

	if (mp && (parse_u64(mp, &max) || max > 3600000))
		return api_error(f, 400, "max_pause_ms: milliseconds, 0..3600000");
	if (!r->body || !r->body_len)
		return api_error(f, 400, "the program goes in the request body (dsl/README.md)");
	q = calloc(1, sizeof(*q));
	diags = dsl_diags_new();
	if (q)
		q->src = malloc(r->body_len + 1);
	if (!q || !diags || !q->src) {
		status = api_error(f, 500, "out of memory");
		goto fail;
	}
	memcpy(q->src, r->body, r->body_len);
	q->src[r->body_len] = '\0';
	q->len = r->body_len;
	q->sv = sv;
	q->pid = pid;
	q->has_max = mp != NULL;
	q->max_pause_ms = (uint32_t)max;
	/* compiled without a heap here: syntax and type errors answer at once */
	if (dsl_compile(q->src, q->len, "<query>", NULL, &q->prog, diags)) {
		diags_json(f, "the program does not compile", diags);
		status = 400;
		goto fail;
	}
	pthread_mutex_lock(&sv->lock);
	for (int i = 0; i < sv->njvms && !j; i++)
		if (sv->jvms[i]->p.pid == pid)
			j = sv->jvms[i];
	if (!j) {
		pthread_mutex_unlock(&sv->lock);
		snprintf(msg, sizeof(msg), "pid %d is not watched (GET /api/v1/jvms lists them)", pid);
		status = api_error(f, 404, msg);
		goto fail;
	}
	if (query_running(sv, pid)) {
		snprintf(msg, sizeof(msg), "query %u of pid %d is still running: one at a time "
			 "(GET /api/v1/queries/%u)", query_running(sv, pid)->id, pid,
			 query_running(sv, pid)->id);
		pthread_mutex_unlock(&sv->lock);
		status = api_error(f, 409, msg);
		goto fail;
	}
	if (j->age.state == WORK_STARTING || j->age.state == WORK_ON ||
	    j->age.state == WORK_STOPPING) {
		pthread_mutex_unlock(&sv->lock);
		status = api_error(f, 409, "agent sampling is on for this JVM and memtrace's agent "
				   "serves one session at a time: DELETE .../age first");
		goto fail;
	}
	q->p = j->p;
	q->id = ++sv->next_query;
	q->started_ns = real_ns();
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay with the main thread */
	err = pthread_create(&q->th, NULL, query_worker, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		pthread_mutex_unlock(&sv->lock);
		status = api_error(f, 500, "cannot start the query's thread");
		goto fail;
	}
	q->next = sv->queries;
	sv->queries = q;
	fprintf(f, "{\"id\":%u,\"pid\":%d,\"state\":\"running\",\"href\":\"/api/v1/queries/%u\"}\n",
		q->id, pid, q->id);
	pthread_mutex_unlock(&sv->lock);
	dsl_diags_free(diags);
	return 202;
fail:
	dsl_diags_free(diags);
	if (q)
		query_free(q);
	return status;
}

/* GET /api/v1/queries/ID */
static int api_query_get(struct serve *sv, FILE *f, unsigned id)
{
	char msg[128];

	pthread_mutex_lock(&sv->lock);
	for (struct query_job *q = sv->queries; q; q = q->next) {
		if (q->id == id) {
			query_json(f, q);
			pthread_mutex_unlock(&sv->lock);
			return 200;
		}
	}
	pthread_mutex_unlock(&sv->lock);
	snprintf(msg, sizeof(msg), "no query %u (the last %d finished ones are kept)", id, QUERY_KEEP);
	return api_error(f, 404, msg);
}

/* POST /api/v1/jvms/PID/record/pause|resume */
static int api_record(FILE *f, int pid, bool pause)
{
	struct recctl_result rr;
	char msg[200];
	int err = recctl_signal(pid, pause, &rr);

	if (err) {
		snprintf(msg, sizeof(msg), "cannot list processes: %s", strerror(-err));
		return api_error(f, 500, msg);
	}
	if (!rr.nsignalled) {
		snprintf(msg, sizeof(msg), rr.nstarting ?
			 "the memtrace record of pid %d is still starting: try again" :
			 "no `memtrace record -p %d` runs in serve's pid namespace", pid);
		return api_error(f, rr.nstarting ? 409 : 404, msg);
	}
	fprintf(f, "{\"pid\":%d,\"reporting\":\"%s\",\"record_pids\":[", pid,
		pause ? "paused" : "resumed");
	for (int i = 0; i < rr.nsignalled && i < (int)MT_ARRAY_SIZE(rr.pids); i++)
		fprintf(f, "%s%d", i ? "," : "", rr.pids[i]);
	fputs("]}\n", f);
	p_info("pid %d: reporting %s in memtrace record (pid %d%s)", pid,
	       pause ? "paused" : "resumed", rr.pids[0], rr.nsignalled > 1 ? " and others" : "");
	return 200;
}

static const char api_help[] =
	"{\"endpoints\":["
	"\"GET /api/v1/help\","
	"\"GET /api/v1/metrics\","
	"\"GET /api/v1/jvms\","
	"\"GET /api/v1/jvms/PID\","
	"\"POST /api/v1/jvms/PID/alloc\","
	"\"DELETE /api/v1/jvms/PID/alloc\","
	"\"POST /api/v1/jvms/PID/age?interval=BYTES\","
	"\"POST /api/v1/jvms/PID/query?max_pause_ms=N (body: the program)\","
	"\"GET /api/v1/queries/ID\","
	"\"POST /api/v1/jvms/PID/record/pause\","
	"\"POST /api/v1/jvms/PID/record/resume\","
	"\"DELETE /api/v1/jvms/PID/age\"]}\n";

static int api_error(FILE *f, int status, const char *msg)
{
	fputs("{\"error\":", f);
	json_str(f, msg);
	fputs("}\n", f);
	return status;
}

/* The other /api/v1/ requests (HTTP thread): help, one JVM, switches. */
static int api(const struct serve_request *r, FILE *f, void *ctx)
{
	struct serve *sv = ctx;
	bool get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");
	bool on = !strcmp(r->method, "POST");
	char what[16] = "", msg[128];
	const char *iv;
	uint32_t interval = 0;
	struct work *w;
	struct jvm *j = NULL;
	int pid, n = 0, m = 0, status;

	if (!strcmp(r->path, "help"))
		return get ? (fputs(api_help, f), 200) : api_error(f, 405, "GET only");
	if (!strncmp(r->path, "queries/", 8)) {
		unsigned id;

		if (sscanf(r->path + 8, "%u%n", &id, &n) != 1 || r->path[8 + n] || !id)
			return api_error(f, 404, "unknown query: /api/v1/queries/ID");
		return get ? api_query_get(sv, f, id) : api_error(f, 405, "GET only");
	}
	if (sscanf(r->path, "jvms/%d%n", &pid, &n) == 1 && pid > 0 &&
	    (!strcmp(r->path + n, "/query") || !strncmp(r->path + n, "/record/", 8))) {
		bool query = !strcmp(r->path + n, "/query");
		const char *act = r->path + n + 8;

		if (!on)
			return api_error(f, 405, "POST only");
		if (query)
			return api_query(sv, r, f, pid);
		if (strcmp(act, "pause") && strcmp(act, "resume"))
			return api_error(f, 404, "unknown action: /record/pause and /record/resume "
					 "exist");
		return api_record(f, pid, !strcmp(act, "pause"));
	}
	if (sscanf(r->path, "jvms/%d%n", &pid, &n) != 1 || pid <= 0 ||
	    (r->path[n] && (sscanf(r->path + n, "/%15[a-z]%n", what, &m) != 1 || r->path[n + m])))
		return api_error(f, 404, "unknown endpoint: GET /api/v1/help lists them");
	if (what[0] && strcmp(what, "alloc") && strcmp(what, "age"))
		return api_error(f, 404, "unknown switch: /alloc and /age exist");
	if (!what[0] && !get)
		return api_error(f, 405, "GET only");
	if (what[0] && get)
		return api_error(f, 405, "POST switches it on, DELETE off; GET /api/v1/jvms/PID "
				 "shows it");
	iv = serve_request_arg(r, "interval");
	if (iv && (strcmp(what, "age") || !on || sampling_parse_interval(iv, &interval)))
		return api_error(f, 400, "interval: POST .../age?interval=BYTES (1..1g, k/m "
				 "suffixes)");

	pthread_mutex_lock(&sv->lock);
	for (int i = 0; i < sv->njvms && !j; i++)
		if (sv->jvms[i]->p.pid == pid)
			j = sv->jvms[i];
	if (!j) {
		pthread_mutex_unlock(&sv->lock);
		snprintf(msg, sizeof(msg), "pid %d is not watched (GET /api/v1/jvms lists them)", pid);
		return api_error(f, 404, msg);
	}
	if (!what[0]) {
		jvm_json(f, j);
		putc('\n', f);
		pthread_mutex_unlock(&sv->lock);
		return 200;
	}
	w = !strcmp(what, "alloc") ? &j->alloc : &j->age;
	/* already where asked: 200; otherwise the main thread acts within a tick: 202 */
	status = (on == (w->state == WORK_ON) && w->want == on) ? 200 : 202;
	w->want = on;
	if (on && w->state == WORK_FAILED)
		w->state = WORK_OFF;
	if (on && interval && w == &j->age)
		j->age_interval = interval;
	fprintf(f, "{\"pid\":%d,\"%s\":{\"state\":\"%s\",\"requested\":%s}}\n", pid, what,
		work_state_name[w->state], on ? "true" : "false");
	pthread_mutex_unlock(&sv->lock);
	return status;
}

int do_serve(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "all", no_argument, NULL, 'a' },
		{ "listen", required_argument, NULL, 'l' },
		{ "token-file", required_argument, NULL, 't' },
		{ "rescan", required_argument, NULL, 'r' },
		{ "duration", required_argument, NULL, 'd' },
		{ "allow-remote", no_argument, NULL, 'R' },
		{ "alloc", no_argument, NULL, 'A' },
		{ "alloc-top", required_argument, NULL, 'T' },
		{ "age", no_argument, NULL, 'G' },
		{ "age-interval", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct serve_http_opts ho = { .listen = MT_SERVE_DEFAULT_LISTEN };
	struct serve sv = { .lock = PTHREAD_MUTEX_INITIALIZER, .alloc_top = 10 };
	uint64_t top;
	struct serve_http *http = NULL;
	const char *token_file = NULL;
	char *token = NULL;
	double rescan_s = 2, duration = 0;
	uint64_t next_scan = 0, deadline;
	bool all = false;
	int opt, ret = 1;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "p:al:t:r:d:Rh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_pid(optarg, &sv.only_pid)) {
				p_err("invalid pid '%s': expected a positive number", optarg);
				return 2;
			}
			break;
		case 'a':
			all = true;
			break;
		case 'l':
			ho.listen = optarg;
			break;
		case 't':
			token_file = optarg;
			break;
		case 'r':
			if (parse_seconds(optarg, &rescan_s) || rescan_s < 0.1) {
				p_err("invalid --rescan '%s': expected seconds >= 0.1", optarg);
				return 2;
			}
			break;
		case 'd':
			if (parse_seconds(optarg, &duration)) {
				p_err("invalid --duration '%s': expected seconds", optarg);
				return 2;
			}
			break;
		case 'R':
			ho.allow_remote = true;
			break;
		case 'A':
			sv.alloc_all = true;
			break;
		case 'T':
			if (parse_u64(optarg, &top) || !top || top > 1000) {
				p_err("invalid --alloc-top '%s': expected 1..1000", optarg);
				return 2;
			}
			sv.alloc_top = (int)top;
			break;
		case 'G':
			sv.age_all = true;
			break;
		case 'I':
			if (sampling_parse_interval(optarg, &sv.age_interval)) {
				p_err("invalid --age-interval '%s' (bytes 1..1g, k/m suffixes)", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!!sv.only_pid == all) {
		p_err("serve needs exactly one of -p PID and --all");
		usage(stderr);
		return 2;
	}
	if (privs_require_bpf("memtrace serve"))
		return 1;
	if (token_file) {
		token = serve_read_token(token_file);
		if (!token)
			return 1;
	}
	sv.m = metrics_new();
	if (!sv.m || register_metrics(sv.m)) {
		p_err("cannot set up the metrics registry");
		goto cleanup;
	}
	ho.token = token;
	ho.metrics = sv.m;
	ho.jvms = jvms_json;
	ho.api = api;
	ho.ctx = &sv;
	/* Serve first: a scraper sees memtrace up even before the first JVM. */
	http = serve_http_start(&ho);
	if (!http)
		goto cleanup;
	p_info("serving http://%s/metrics%s", ho.listen,
	       token ? " and /api/v1/ (token required)" : "; /api/v1/ is off (no --token-file)");
	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);
	deadline = duration > 0 ? mono_ns() + (uint64_t)(duration * 1e9) : 0;

	while (!exiting) {
		struct timespec tick = { 0, 200 * 1000 * 1000 };
		uint64_t now = mono_ns();

		if (now >= next_scan) {
			rescan(&sv);
			next_scan = now + (uint64_t)(rescan_s * 1e9);
		}
		bool refresh = now >= sv.next_work_ns;

		if (refresh)
			sv.next_work_ns = now + WORK_REFRESH_NS;
		for (int i = 0; i < sv.njvms; i++) {
			int err = gctrace_poll(sv.jvms[i]->t, 0);

			if (err < 0 && err != -EINTR)
				p_warn("pid %d: reading the ring buffer failed: %s", sv.jvms[i]->p.pid,
				       strerror(-err));
			update_counters(sv.jvms[i]);
			apply_work(sv.jvms[i], refresh);
		}
		queries_reap(&sv, false);
		if (deadline && mono_ns() >= deadline)
			break;
		nanosleep(&tick, NULL);
	}
	ret = 0;
cleanup:
	serve_http_stop(http);
	queries_reap(&sv, true); /* a running walk is waited for */
	while (sv.njvms)
		unwatch(&sv, sv.njvms - 1, false);
	free(sv.jvms);
	free(sv.failed);
	metrics_free(sv.m);
	free(token);
	return ret;
}
