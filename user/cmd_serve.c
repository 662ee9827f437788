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
 */
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmds.h"
#include "gctrace.h"
#include "metrics.h"
#include "privs.h"
#include "proc.h"
#include "serve_http.h"
#include "util.h"

static volatile sig_atomic_t exiting;

static void sig_handler(int sig)
{
	exiting = 1;
}

struct jvm {
	struct mt_proc p;
	struct gctrace *t;
	struct serve *sv;
	char pid_s[16];
	uint64_t since_ns;     /* epoch ns when serve attached */
	uint64_t collections;  /* records seen (guarded by serve.lock) */
};

struct serve {
	struct metrics *m;
	pthread_mutex_t lock;  /* guards jvms[] and their counters for the HTTP thread */
	struct jvm **jvms;
	int njvms, cap;
	int *failed;           /* pids we could not watch: not retried while alive */
	int nfailed;
	int only_pid;          /* -p PID, 0 with --all */
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
	return err ? -EINVAL : 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace serve (-p PID | --all) [--listen ADDR:PORT] [--token-file FILE]\n"
		   "                      [--rescan S] [--duration S] [--allow-remote]\n"
		   "  Watches the collections of one JVM, or of every JVM it can see (picking\n"
		   "  up JVMs that start later, dropping those that exit), and serves them:\n"
		   "    /metrics          OpenMetrics text for Prometheus (no token)\n"
		   "    /api/v1/metrics   the same as JSON    } need \"Authorization: Bearer TOKEN\",\n"
		   "    /api/v1/jvms      the watched JVMs    } TOKEN the first line of --token-file\n"
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

/* GET /api/v1/jvms */
static int jvms_json(FILE *f, void *ctx)
{
	struct serve *sv = ctx;

	pthread_mutex_lock(&sv->lock);
	fputs("{\"jvms\":[", f);
	for (int i = 0; i < sv->njvms; i++) {
		const struct jvm *j = sv->jvms[i];

		fprintf(f, "%s{\"pid\":%d,\"nspid\":%d,\"main_class\":", i ? "," : "", j->p.pid,
			j->p.nspid);
		json_str(f, j->p.main_class);
		fputs(",\"container_id\":", f);
		json_str(f, j->p.container_id);
		fputs(",\"jdk\":", f);
		json_str(f, j->p.jdk_version);
		fprintf(f, ",\"watched_since_ns\":%llu,\"collections\":%llu}",
			(unsigned long long)j->since_ns, (unsigned long long)j->collections);
	}
	fputs("]}\n", f);
	pthread_mutex_unlock(&sv->lock);
	return ferror(f) ? -EIO : 0;
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct serve_http_opts ho = { .listen = MT_SERVE_DEFAULT_LISTEN };
	struct serve sv = { .lock = PTHREAD_MUTEX_INITIALIZER };
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
		for (int i = 0; i < sv.njvms; i++) {
			int err = gctrace_poll(sv.jvms[i]->t, 0);

			if (err < 0 && err != -EINTR)
				p_warn("pid %d: reading the ring buffer failed: %s", sv.jvms[i]->p.pid,
				       strerror(-err));
			update_counters(sv.jvms[i]);
		}
		if (deadline && mono_ns() >= deadline)
			break;
		nanosleep(&tick, NULL);
	}
	ret = 0;
cleanup:
	serve_http_stop(http);
	while (sv.njvms)
		unwatch(&sv, sv.njvms - 1, false);
	free(sv.jvms);
	free(sv.failed);
	metrics_free(sv.m);
	free(token);
	return ret;
}
