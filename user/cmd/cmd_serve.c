// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_serve.c - `memtrace serve`: watch one or every JVM's collections and
 * serve them as OpenMetrics (/metrics) and JSON (/api/v1/...).
 *
 * The main thread owns the watched JVMs (serve_watch.h: one gctrace each):
 * it rescans /proc every --rescan seconds, attaches to JVMs that appeared,
 * drops those that exited (and their series), and polls the ring buffers.
 * GC records update the metrics registry (serve_metrics.h); the HTTP thread
 * (serve_http.h) only reads the registry and the JVM list, both under their
 * own locks (serve.h).
 *
 * Heavier work is switched per JVM through the API (serve_api.h) or --alloc /
 * --age for every JVM: allocation sampling (TLAB uprobes, alloctrace.h) and
 * agent sampling (live sampled bytes by age, agentlive.h; loads memtrace's
 * agent). The HTTP thread only records the wish (want); the main thread
 * starts and stops the work on its next tick and reports the state back.
 *
 * A query (POST /api/v1/jvms/PID/query) is compiled on the HTTP thread (a
 * syntax error answers 400 at once), then runs in a worker thread of its own
 * (serve_query.h) and the client polls GET /api/v1/queries/ID. One query per
 * JVM at a time; finished ones are kept (the last SERVE_QUERY_KEEP) and their
 * threads joined by the main thread.
 *
 * Pause/resume of reporting (POST /api/v1/jvms/PID/record/pause|resume)
 * signals the `memtrace record` processes recording that JVM (recctl.h):
 * record is its own process with its own file, and SIGUSR1/SIGUSR2 are
 * already its documented controls.
 */
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agentctl/sampling.h"
#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "serve/serve.h"
#include "serve/serve_api.h"
#include "serve/serve_metrics.h"
#include "serve/serve_pprof.h"
#include "serve/serve_query.h"
#include "serve/serve_watch.h"
#include "jvm/privs.h"
#include "serve/recctl.h"
#include "serve/metrics.h"
#include "serve/serve_http.h"
#include "lib/stopflag.h"
#include "lib/util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace serve (-p PID | --all) [--listen ADDR:PORT] [--token-file FILE]\n"
		   "                      [--rescan S] [--duration S] [--allow-remote]\n"
		   "                      [--alloc] [--alloc-top N] [--age] [--age-interval BYTES]\n"
		   "                      [--locks] [--names micrometer|otel] [--labels LIST]\n"
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
		   "    /debug/pprof/allocs?pid=PID&seconds=N  an allocation profile (gzip'd\n"
		   "                      profile.proto, Java stacks) sampled for N seconds\n"
		   "                      (default 30): what `go tool pprof`, Pyroscope and\n"
		   "                      Parca fetch; the same token (Bearer, or basic auth\n"
		   "                      with the token as password)\n"
		   "  --alloc, --age: switch those on for every JVM watched (--age loads\n"
		   "  memtrace's agent into each). --alloc-top: classes per JVM (default 10).\n"
		   "  --listen defaults to %s; a non-loopback address needs --allow-remote.\n"
		   "  --rescan: seconds between looks for new and exited JVMs (default 2).\n"
		   "  --names: the JVM series under Micrometer's names (default:\n"
		   "  jvm_gc_pause_seconds{gc,action,cause}, jvm_memory_used_bytes{area,id},\n"
		   "  jvm_gc_memory_allocated_bytes_total, ...) or OpenTelemetry's semantic\n"
		   "  conventions (jvm_gc_duration_seconds{jvm_gc_name,jvm_gc_action,...});\n"
		   "  memtrace_* are what only memtrace has.\n"
		   "  --labels: the JVM's identity labels every series carries besides pid and\n"
		   "  main_class, comma-separated: container_id, container (its name), pod,\n"
		   "  namespace, pod_uid, all or none (default none: memtrace_jvm_info carries\n"
		   "  them all, join on pid).\n",
		   MT_SERVE_DEFAULT_LISTEN);
}

/* The options of `memtrace serve` (libbpf-tools' env), those the serving
 * state takes (sv) and the HTTP side's (ho) filled in place. */
struct serve_opts {
	struct serve *sv;
	struct serve_http_opts *ho;
	bool all;
	const char *token_file;
	double rescan_s, duration;
};

/* The options into *@o. Returns -1 to go on, else the exit code (0 after
 * --help, 2 for a bad option). */
static int parse_args(int argc, char **argv, struct serve_opts *o)
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
		{ "locks", no_argument, NULL, 'L' },
		{ "alloc-top", required_argument, NULL, 'T' },
		{ "age", no_argument, NULL, 'G' },
		{ "age-interval", required_argument, NULL, 'I' },
		{ "names", required_argument, NULL, 'N' },
		{ "labels", required_argument, NULL, 'B' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct serve *sv = o->sv;
	uint64_t top;
	int opt;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "p:al:t:r:d:Rh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_pid(optarg, &sv->only_pid)) {
				p_err("invalid pid '%s': expected a positive number", optarg);
				return 2;
			}
			break;
		case 'a':
			o->all = true;
			break;
		case 'l':
			o->ho->listen = optarg;
			break;
		case 't':
			o->token_file = optarg;
			break;
		case 'r':
			if (parse_seconds(optarg, &o->rescan_s) || o->rescan_s < 0.1) {
				p_err("invalid --rescan '%s': expected %s, at least 100ms", optarg,
				      MT_DURATION_HELP);
				return 2;
			}
			break;
		case 'd':
			if (parse_seconds(optarg, &o->duration)) {
				p_err("invalid --duration '%s': expected %s", optarg, MT_DURATION_HELP);
				return 2;
			}
			break;
		case 'R':
			o->ho->allow_remote = true;
			break;
		case 'A':
			sv->alloc_all = true;
			break;
		case 'L':
			sv->locks_all = true;
			break;
		case 'T':
			if (parse_u64(optarg, &top) || !top || top > 1000) {
				p_err("invalid --alloc-top '%s': expected 1..1000", optarg);
				return 2;
			}
			sv->alloc_top = (int)top;
			break;
		case 'G':
			sv->age_all = true;
			break;
		case 'I':
			if (sampling_parse_interval(optarg, &sv->age_interval)) {
				p_err("invalid --age-interval '%s' (bytes 1..1g, k/m suffixes)", optarg);
				return 2;
			}
			break;
		case 'N':
			if (!strcmp(optarg, "micrometer")) {
				sv->names = SERVE_NAMES_MICROMETER;
			} else if (!strcmp(optarg, "otel")) {
				sv->names = SERVE_NAMES_OTEL;
			} else {
				p_err("invalid --names '%s': micrometer or otel", optarg);
				return 2;
			}
			break;
		case 'B':
			if (serve_metrics_id_labels(optarg, &sv->id_labels)) {
				p_err("invalid --labels '%s': a comma-separated list of container_id, "
				      "container, pod, namespace, pod_uid; or all, none", optarg);
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
	if (cmdopt_no_args(argc, argv, "serve", usage))
		return 2;
	if (!!sv->only_pid == o->all) {
		p_err("serve needs exactly one of -p PID and --all");
		usage(stderr);
		return 2;
	}
	return -1;
}

/* Until Ctrl-C or --duration: look for new and exited JVMs every --rescan,
 * poll the watched ones, reap finished queries and profiles. */
static void serve_loop(struct serve *sv, const struct serve_opts *o)
{
	uint64_t next_scan = 0;
	uint64_t deadline = o->duration > 0 ? mono_ns() + (uint64_t)(o->duration * 1e9) : 0;

	while (!stopflag_raised()) {
		struct timespec tick = { 0, 200 * 1000 * 1000 };
		uint64_t now = mono_ns();

		if (now >= next_scan) {
			serve_watch_rescan(sv);
			next_scan = now + (uint64_t)(o->rescan_s * 1e9);
		}
		serve_watch_poll(sv, now);
		serve_query_reap(&sv->queries, false);
		serve_pprof_reap(sv, false);
		if (deadline && mono_ns() >= deadline)
			break;
		nanosleep(&tick, NULL);
	}
}

int do_serve(int argc, char **argv)
{
	struct serve_http_opts ho = { .listen = MT_SERVE_DEFAULT_LISTEN };
	struct serve sv = { .lock = PTHREAD_MUTEX_INITIALIZER, .alloc_top = 10 };
	struct serve_api api = { .sv = &sv, .query_run = serve_query_live,
				 .record_signal = recctl_signal };
	struct serve_opts o = { .sv = &sv, .ho = &ho, .rescan_s = 2 };
	struct serve_http *http = NULL;
	char *token = NULL;
	int ret;

	/* serve runs for days with short-lived threads (HTTP, one per query): a
	 * malloc arena per thread kept ~12 MiB more RSS for good in bench/soak.sh
	 * (40 vs 28 MiB over 400 JVMs); two arenas are enough for its contention */
	mallopt(M_ARENA_MAX, 2);

	sv.queries.lock = &sv.lock;
	ret = parse_args(argc, argv, &o);
	if (ret >= 0)
		return ret;
	if (privs_require_bpf("memtrace serve"))
		return 1;
	if (o.token_file) {
		token = serve_read_token(o.token_file);
		if (!token)
			return 1;
	}
	ret = 1;
	sv.m = metrics_new();
	if (!sv.m || serve_metrics_register(sv.m, sv.names)) {
		p_err("cannot set up the metrics registry");
		goto cleanup;
	}
	ho.token = token;
	ho.metrics = sv.m;
	ho.jvms = serve_api_jvms;
	ho.api = serve_api_handle;
	ho.pprof = serve_pprof_start;
	ho.ctx = &api;
	/* Serve first: a scraper sees memtrace up even before the first JVM. */
	http = serve_http_start(&ho);
	if (!http)
		goto cleanup;
	p_info("serving http://%s/metrics%s", ho.listen,
	       token ? " and /api/v1/ (token required)" : "; /api/v1/ is off (no --token-file)");
	stopflag_catch(NULL);
	serve_loop(&sv, &o);
	ret = 0;
cleanup:
	serve_pprof_reap(&sv, true); /* no suspended connection may outlive the server */
	serve_http_stop(http);
	serve_query_reap(&sv.queries, true); /* a running walk is waited for */
	serve_watch_stop(&sv);
	metrics_free(sv.m);
	free(token);
	return ret;
}
