// SPDX-License-Identifier: GPL-2.0
/* serve_api.c - the JSON API of `memtrace serve` (see serve_api.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "agentctl/sampling.h"
#include "serve/serve_api.h"
#include "dsl/dsl.h"
#include "jvm/jvmid.h"
#include "lib/util.h"

static const char *const work_state_name[] = { "off", "starting", "on", "stopping", "failed" };

/* api_error - the JSON of an error: {"error":@msg}; returns @status. */
static int api_error(FILE *f, int status, const char *msg)
{
	fputs("{\"error\":", f);
	json_str(f, msg);
	fputs("}\n", f);
	return status;
}

/* api_not_watched - the 404 of a pid serve does not watch. */
static int api_not_watched(FILE *f, int pid)
{
	char msg[128];

	snprintf(msg, sizeof(msg), "pid %d is not watched (GET /api/v1/jvms lists them)", pid);
	return api_error(f, 404, msg);
}

/* jvm_find - the watched JVM @pid, or NULL (serve.lock held). */
static struct serve_jvm *jvm_find(const struct serve *sv, int pid)
{
	for (int i = 0; i < sv->njvms; i++)
		if (sv->jvms[i]->p.pid == pid)
			return sv->jvms[i];
	return NULL;
}

/* work_json - "NAME":{"state":..,"error":..,"since_ns":.. (caller closes). */
static void work_json(FILE *f, const char *name, const struct serve_work *w)
{
	fprintf(f, ",\"%s\":{\"state\":\"%s\",\"requested\":%s", name, work_state_name[w->state],
		w->want ? "true" : "false");
	if (w->state == SERVE_WORK_FAILED) {
		fputs(",\"error\":", f);
		json_str(f, w->error);
	}
	if (w->state == SERVE_WORK_ON)
		fprintf(f, ",\"since_ns\":%llu", (unsigned long long)w->since_ns);
}

/* jvm_json - one watched JVM as a JSON object (serve.lock held). */
static void jvm_json(FILE *f, const struct serve_jvm *j)
{
	fprintf(f, "{\"pid\":%d,\"nspid\":%d,\"main_class\":", j->p.pid, j->p.nspid);
	json_str(f, j->p.main_class);
	jvmid_json(f, &j->p.ident);
	fputs(",\"jdk\":", f);
	json_str(f, j->p.jdk_version);
	fprintf(f, ",\"watched_since_ns\":%llu,\"collections\":%llu",
		(unsigned long long)j->since_ns, (unsigned long long)j->collections);
	work_json(f, "alloc", &j->alloc);
	if (j->alloc.state == SERVE_WORK_ON) {
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
	if (j->age.state == SERVE_WORK_ON) {
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

int serve_api_jvms(FILE *f, void *ctx)
{
	struct serve *sv = ((struct serve_api *)ctx)->sv;

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

/* POST /api/v1/jvms/PID/query[?max_pause_ms=N]: compile, then a worker. */
static int api_query(struct serve_api *api, const struct serve_request *r, FILE *f, int pid)
{
	const char *mp = serve_request_arg(r, "max_pause_ms");
	struct serve *sv = api->sv;
	struct dsl_diags *diags = NULL;
	struct serve_query *q, *running;
	struct serve_jvm *j;
	uint64_t max = 0;
	char msg[200];
	int status;

	if (mp && (parse_u64(mp, &max) || max > 3600000))
		return api_error(f, 400, "max_pause_ms: milliseconds, 0..3600000");
	if (!r->body || !r->body_len)
		return api_error(f, 400, "the program goes in the request body (dsl/README.md)");
	q = serve_query_new(&sv->queries, pid, r->body, r->body_len);
	diags = dsl_diags_new();
	if (!q || !diags) {
		status = api_error(f, 500, "out of memory");
		goto fail;
	}
	q->has_max = mp != NULL;
	q->max_pause_ms = (uint32_t)max;
	/* compiled without a heap here: syntax and type errors answer at once */
	if (dsl_compile(q->src, q->len, "<query>", NULL, &q->prog, diags)) {
		diags_json(f, "the program does not compile", diags);
		status = 400;
		goto fail;
	}
	pthread_mutex_lock(&sv->lock);
	j = jvm_find(sv, pid);
	if (!j) {
		pthread_mutex_unlock(&sv->lock);
		status = api_not_watched(f, pid);
		goto fail;
	}
	running = serve_query_running(&sv->queries, pid);
	if (running) {
		snprintf(msg, sizeof(msg), "query %u of pid %d is still running: one at a time "
			 "(GET /api/v1/queries/%u)", running->id, pid, running->id);
		pthread_mutex_unlock(&sv->lock);
		status = api_error(f, 409, msg);
		goto fail;
	}
	if (j->age.state == SERVE_WORK_STARTING || j->age.state == SERVE_WORK_ON ||
	    j->age.state == SERVE_WORK_STOPPING) {
		pthread_mutex_unlock(&sv->lock);
		status = api_error(f, 409, "agent sampling is on for this JVM and memtrace's agent "
				   "serves one session at a time: DELETE .../age first");
		goto fail;
	}
	q->p = j->p;
	if (serve_query_start(&sv->queries, q, api->query_run)) {
		pthread_mutex_unlock(&sv->lock);
		status = api_error(f, 500, "cannot start the query's thread");
		goto fail;
	}
	fprintf(f, "{\"id\":%u,\"pid\":%d,\"state\":\"running\",\"href\":\"/api/v1/queries/%u\"}\n",
		q->id, pid, q->id);
	pthread_mutex_unlock(&sv->lock);
	dsl_diags_free(diags);
	return 202;
fail:
	dsl_diags_free(diags);
	serve_query_free(q);
	return status;
}

/* GET /api/v1/queries/ID */
static int api_query_get(struct serve *sv, FILE *f, unsigned id)
{
	struct serve_query *q;
	char msg[128];

	pthread_mutex_lock(&sv->lock);
	q = serve_query_find(&sv->queries, id);
	if (q) {
		serve_query_json(f, q);
		pthread_mutex_unlock(&sv->lock);
		return 200;
	}
	pthread_mutex_unlock(&sv->lock);
	snprintf(msg, sizeof(msg), "no query %u (the last %d finished ones are kept)", id,
		 SERVE_QUERY_KEEP);
	return api_error(f, 404, msg);
}

/* POST /api/v1/jvms/PID/record/pause|resume */
static int api_record(struct serve_api *api, FILE *f, int pid, bool pause)
{
	struct recctl_result rr;
	char msg[200];
	int err = api->record_signal(pid, pause, &rr);

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
	"\"DELETE /api/v1/jvms/PID/age\","
	"\"GET /debug/pprof/allocs?pid=PID&seconds=N (gzip'd profile.proto)\"]}\n";

int serve_api_handle(const struct serve_request *r, FILE *f, void *ctx)
{
	struct serve_api *api = ctx;
	struct serve *sv = api->sv;
	bool get = !strcmp(r->method, "GET") || !strcmp(r->method, "HEAD");
	bool on = !strcmp(r->method, "POST");
	char what[16] = "";
	const char *iv;
	uint32_t interval = 0;
	struct serve_work *w;
	struct serve_jvm *j;
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
			return api_query(api, r, f, pid);
		if (strcmp(act, "pause") && strcmp(act, "resume"))
			return api_error(f, 404, "unknown action: /record/pause and /record/resume "
					 "exist");
		return api_record(api, f, pid, !strcmp(act, "pause"));
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
	j = jvm_find(sv, pid);
	if (!j) {
		pthread_mutex_unlock(&sv->lock);
		return api_not_watched(f, pid);
	}
	if (!what[0]) {
		jvm_json(f, j);
		putc('\n', f);
		pthread_mutex_unlock(&sv->lock);
		return 200;
	}
	w = !strcmp(what, "alloc") ? &j->alloc : &j->age;
	/* already where asked: 200; otherwise the main thread acts within a tick: 202 */
	status = (on == (w->state == SERVE_WORK_ON) && w->want == on) ? 200 : 202;
	w->want = on;
	if (on && w->state == SERVE_WORK_FAILED)
		w->state = SERVE_WORK_OFF;
	if (on && interval && w == &j->age)
		j->age_interval = interval;
	fprintf(f, "{\"pid\":%d,\"%s\":{\"state\":\"%s\",\"requested\":%s}}\n", pid, what,
		work_state_name[w->state], on ? "true" : "false");
	pthread_mutex_unlock(&sv->lock);
	return status;
}

