/* test_serve_api.c - the routing of serve's JSON API (serve_api.c) behind
 * the real HTTP server on a loopback port: method, path and token dispatch,
 * the JVMs as JSON, the switches, queries and record pause/resume, with exact
 * statuses and bodies. The state is two JVMs written in by hand (no BPF, no
 * JVM); the API's two ways into the world - a query's thread body and the
 * signalling of `memtrace record` - are the test's own (serve_api.h). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "serve/serve.h"
#include "serve/serve_api.h"
#include "serve/serve_query.h"
#include "lib/util.h"
#include "serve/metrics.h"
#include "serve/serve_http.h"
#include "http_client.h"

#define TOKEN "0123456789abcdef"
#define AUTH "Bearer " TOKEN

/* A good program (compiles without a heap) and a malformed one. */
#define PROG_OK "set_type x:\n    roots <- objects.filter([it | it is A])\n" \
		"    membership <- false\ninstances_for x have_names = \"x\"\n"
#define PROG_BAD "set_type x:\n    roots <- objects.filter([it | it.field >])"

struct fix {
	struct serve sv;
	struct serve_jvm *jvms[2];
	struct serve_api api;
	struct serve_http *h;
	int port;
	char listen[32];
	char body[16384];
};

/* ---- the test's record_signal: a canned answer, and what it was asked ---- */

static struct {
	int err;
	struct recctl_result rr;
	int calls, pid;
	bool pause;
} rec;

static int fake_record_signal(int jvm_pid, bool pause, struct recctl_result *r)
{
	rec.calls++;
	rec.pid = jvm_pid;
	rec.pause = pause;
	*r = rec.rr;
	return rec.err;
}

/* ---- the test's query body: waits for one byte on the gate of its JVM,
 * which says how the query ends (EOF: failed, "released") ---- */

static int gates[2][2] = { { -1, -1 }, { -1, -1 } }; /* pid 101's, pid 202's */

static void gated_run(struct serve_query *q)
{
	struct serve_query_outcome o = { .pause_ms = 1.5, .eval_ms = 0.25, .objects = 7 };
	struct dsl_diags *d;
	char c;

	if (read(gates[q->pid == 202][0], &c, 1) != 1)
		c = 'x';
	switch (c) {
	case 'd':
	case 'p':
		o.pause_from = c == 'd' ? "jvm_safepoints" : "agent";
		o.partial = c == 'p';
		o.frozen = c == 'd'; /* done: walked by a frozen copy; partial: in a pause */
		o.copy_walk_ms = o.frozen ? 40.5 : 0;
		o.result = strdup("{\"n\":1}");
		serve_query_done(q, &o);
		break;
	case 'f':
		d = dsl_diags_new();
		dsl_diags_set_source(d, "<query>", q->src, q->len);
		dsl_diags_add(d, 9, "no class of the heap is named A");
		serve_query_fail(q, "the program does not fit this heap", d);
		dsl_diags_free(d);
		break;
	default:
		serve_query_fail(q, "released", NULL);
	}
}

static void release(int pid, char how)
{
	assert_int_equal(write(gates[pid == 202][1], &how, 1), 1);
}

/* wait_query - until query @id is no longer running. */
static void wait_query(struct fix *x, unsigned id)
{
	for (int i = 0; i < 500; i++) {
		struct serve_query *q;
		bool running;

		pthread_mutex_lock(&x->sv.lock);
		q = serve_query_find(&x->sv.queries, id);
		running = q && q->state == SERVE_QUERY_RUNNING;
		pthread_mutex_unlock(&x->sv.lock);
		if (!running)
			return;
		nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
	}
	fail_msg("query %u still runs", id);
}

/* norm_ns - the digits after every `_ns":` of @s as "T" (times of the clock). */
static void norm_ns(char *s)
{
	char *p = s;

	while ((p = strstr(p, "_ns\":"))) {
		char *d = p += 5, *e = d;

		while (*e >= '0' && *e <= '9')
			e++;
		if (e > d) {
			*d = 'T';
			memmove(d + 1, e, strlen(e) + 1);
		}
	}
}

/* ---- the fixture: pid 101 idle, pid 202 with both kinds of work on ---- */

static struct serve_jvm *jvm_new(struct serve *sv, int pid, int nspid, const char *main_class,
				 const char *container, const char *jdk, uint64_t since)
{
	struct serve_jvm *j = calloc(1, sizeof(*j));

	assert_non_null(j);
	j->sv = sv;
	j->p.pid = pid;
	j->p.nspid = nspid;
	snprintf(j->pid_s, sizeof(j->pid_s), "%d", pid);
	snprintf(j->p.main_class, sizeof(j->p.main_class), "%s", main_class);
	snprintf(j->p.ident.container_id, sizeof(j->p.ident.container_id), "%s", container);
	snprintf(j->p.jdk_version, sizeof(j->p.jdk_version), "%s", jdk);
	j->since_ns = since;
	return j;
}

static int http_start(struct fix *x, const char *token)
{
	struct serve_http_opts o = { .token = token, .metrics = x->sv.m, .jvms = serve_api_jvms,
				     .api = serve_api_handle, .ctx = &x->api };

	for (int tries = 0; tries < 20 && !x->h; tries++) {
		x->port = 20000 + (int)((getpid() * 11 + tries * 137) % 30000);
		snprintf(x->listen, sizeof(x->listen), "127.0.0.1:%d", x->port);
		o.listen = x->listen;
		x->h = serve_http_start(&o);
	}
	return x->h ? 0 : -1;
}

static int setup(void **state)
{
	struct fix *x = calloc(1, sizeof(*x));
	struct serve_jvm *j;

	if (!x || pipe(gates[0]) || pipe(gates[1]))
		return -1;
	pthread_mutex_init(&x->sv.lock, NULL);
	x->sv.queries.lock = &x->sv.lock;
	x->sv.m = metrics_new();
	x->jvms[0] = jvm_new(&x->sv, 101, 7, "app.Main", "", "17.0.9", 1000);
	x->jvms[0]->collections = 3;
	j = x->jvms[1] = jvm_new(&x->sv, 202, 202, "svc \"x\"", "abc", "25", 2000);
	/* a JVM of a pod: its identity (jvm/jvmid.h) goes into its record whole */
	strcpy(j->p.ident.runtime, "cri-o");
	strcpy(j->p.ident.container_name, "app");
	strcpy(j->p.ident.name_from, "conmon");
	strcpy(j->p.ident.pod, "shop-7d4b9c");
	strcpy(j->p.ident.pod_namespace, "payments");
	strcpy(j->p.ident.pod_uid, "3d274242-8ee0-11e9-a8a6-1e68d864ef1a");
	j->alloc = (struct serve_work){ .want = true, .state = SERVE_WORK_ON, .since_ns = 5000 };
	j->alloc_total = 4096;
	j->cls = calloc(2, sizeof(*j->cls));
	assert_non_null(j->cls);
	j->cls[0] = (struct serve_alloc_cls){ strdup("byte[]"), 3000 };
	j->cls[1] = (struct serve_alloc_cls){ strdup("java.lang.String"), 1000 };
	j->ncls = 2;
	j->age = (struct serve_work){ .want = true, .state = SERVE_WORK_ON, .since_ns = 6000 };
	j->age_on_interval = 65536;
	j->ages = (struct agentlive_ages){ .samples = { 1, 2, 0, 0, 0, 3 },
					   .bytes = { 512, 1024, 0, 0, 0, 1536.4 },
					   .gcs = 4, .lost = 1 };
	x->sv.jvms = x->jvms;
	x->sv.njvms = x->sv.cap = 2;
	x->api = (struct serve_api){ .sv = &x->sv, .query_run = gated_run,
				     .record_signal = fake_record_signal };
	memset(&rec, 0, sizeof(rec));
	*state = x;
	return http_start(x, TOKEN);
}

static int teardown(void **state)
{
	struct fix *x = *state;

	serve_http_stop(x->h);
	close(gates[0][1]); /* queries still waiting end ("released") */
	close(gates[1][1]);
	serve_query_reap(&x->sv.queries, true);
	close(gates[0][0]);
	close(gates[1][0]);
	for (int i = 0; i < 2; i++) {
		for (int c = 0; c < x->jvms[i]->ncls; c++)
			free(x->jvms[i]->cls[c].name);
		free(x->jvms[i]->cls);
		free(x->jvms[i]);
	}
	metrics_free(x->sv.m);
	pthread_mutex_destroy(&x->sv.lock);
	free(x);
	return 0;
}

/* req - @method @path (with the token) and body @data; the status; the body in x->body. */
static int req(struct fix *x, const char *method, const char *path, const char *data)
{
	return http_req(x->port, method, path, AUTH, data, x->body, sizeof(x->body));
}

#define NOT_WATCHED(pid) "{\"error\":\"pid " #pid " is not watched (GET /api/v1/jvms lists them)\"}\n"
#define UNKNOWN_ENDPOINT "{\"error\":\"unknown endpoint: GET /api/v1/help lists them\"}\n"
#define GET_ONLY "{\"error\":\"GET only\"}\n"
#define POST_ONLY "{\"error\":\"POST only\"}\n"

#define JVM_101 "{\"pid\":101,\"nspid\":7,\"main_class\":\"app.Main\",\"container_id\":\"\"," \
	"\"container_runtime\":\"\",\"container_name\":\"\",\"container_name_from\":\"\"," \
	"\"pod\":\"\",\"namespace\":\"\",\"pod_uid\":\"\"," \
	"\"jdk\":\"17.0.9\",\"watched_since_ns\":1000,\"collections\":3," \
	"\"alloc\":{\"state\":\"off\",\"requested\":false}," \
	"\"age\":{\"state\":\"off\",\"requested\":false}}"
#define JVM_202 "{\"pid\":202,\"nspid\":202,\"main_class\":\"svc \\\"x\\\"\",\"container_id\":\"abc\"," \
	"\"container_runtime\":\"cri-o\",\"container_name\":\"app\",\"container_name_from\":\"conmon\"," \
	"\"pod\":\"shop-7d4b9c\",\"namespace\":\"payments\"," \
	"\"pod_uid\":\"3d274242-8ee0-11e9-a8a6-1e68d864ef1a\"," \
	"\"jdk\":\"25\",\"watched_since_ns\":2000,\"collections\":0," \
	"\"alloc\":{\"state\":\"on\",\"requested\":true,\"since_ns\":5000,\"bytes\":4096," \
	"\"top_classes\":[{\"class\":\"byte[]\",\"bytes\":3000}," \
	"{\"class\":\"java.lang.String\",\"bytes\":1000}]}," \
	"\"age\":{\"state\":\"on\",\"requested\":true,\"since_ns\":6000,\"interval\":65536," \
	"\"gcs\":4,\"lost\":1,\"by_age\":{\"0\":{\"samples\":1,\"bytes\":512}," \
	"\"1\":{\"samples\":2,\"bytes\":1024},\"2-3\":{\"samples\":0,\"bytes\":0}," \
	"\"4-7\":{\"samples\":0,\"bytes\":0},\"8-15\":{\"samples\":0,\"bytes\":0}," \
	"\"16+\":{\"samples\":3,\"bytes\":1536}}}}"

static void test_token(void **state)
{
	struct fix *x = *state;
	char body[4096];

	/* no token, a wrong one: 401 before any routing, nothing switched */
	assert_int_equal(http_req(x->port, "POST", "/api/v1/jvms/101/alloc", NULL, NULL, body,
				  sizeof(body)), 401);
	assert_int_equal(http_req(x->port, "POST", "/api/v1/jvms/101/alloc", "Bearer nope", NULL,
				  body, sizeof(body)), 401);
	assert_int_equal(http_req(x->port, "DELETE", "/api/v1/jvms/202/age", NULL, NULL, body,
				  sizeof(body)), 401);
	assert_int_equal(http_req(x->port, "POST", "/api/v1/jvms/101/query", NULL, PROG_OK, body,
				  sizeof(body)), 401);
	assert_int_equal(http_req(x->port, "POST", "/api/v1/jvms/101/record/pause", "Bearer x",
				  NULL, body, sizeof(body)), 401);
	assert_int_equal(http_req(x->port, "GET", "/api/v1/jvms/101", NULL, NULL, body,
				  sizeof(body)), 401);
	assert_false(x->jvms[0]->alloc.want);
	assert_true(x->jvms[1]->age.want);
	assert_null(x->sv.queries.list);
	assert_int_equal(rec.calls, 0);
	/* /metrics needs none */
	assert_int_equal(http_req(x->port, "GET", "/metrics", NULL, NULL, body, sizeof(body)), 200);
	/* with the token */
	assert_int_equal(req(x, "GET", "/api/v1/jvms/101", NULL), 200);
	assert_string_equal(x->body, JVM_101 "\n");

	/* without --token-file the API is off: 403 */
	serve_http_stop(x->h);
	x->h = NULL;
	assert_int_equal(http_start(x, NULL), 0);
	assert_int_equal(req(x, "GET", "/api/v1/jvms/101", NULL), 403);
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/alloc", NULL), 403);
	assert_false(x->jvms[0]->alloc.want);
}

static void test_paths(void **state)
{
	struct fix *x = *state;

	assert_int_equal(req(x, "GET", "/api/v1/help", NULL), 200);
	assert_string_equal(x->body,
		"{\"endpoints\":[\"GET /api/v1/help\",\"GET /api/v1/metrics\",\"GET /api/v1/jvms\","
		"\"GET /api/v1/jvms/PID\",\"POST /api/v1/jvms/PID/alloc\","
		"\"DELETE /api/v1/jvms/PID/alloc\",\"POST /api/v1/jvms/PID/age?interval=BYTES\","
		"\"POST /api/v1/jvms/PID/query?max_pause_ms=N (body: the program)\","
		"\"GET /api/v1/queries/ID\",\"POST /api/v1/jvms/PID/record/pause\","
		"\"POST /api/v1/jvms/PID/record/resume\",\"DELETE /api/v1/jvms/PID/age\","
		"\"GET /debug/pprof/allocs?pid=PID&seconds=N (gzip'd profile.proto)\"]}\n");
	assert_int_equal(req(x, "POST", "/api/v1/help", NULL), 405);
	assert_string_equal(x->body, GET_ONLY);
	assert_int_equal(req(x, "DELETE", "/api/v1/help", NULL), 405);
	assert_string_equal(x->body, GET_ONLY);

	assert_int_equal(req(x, "GET", "/api/v1/jvms", NULL), 200);
	assert_string_equal(x->body, "{\"jvms\":[" JVM_101 "," JVM_202 "]}\n");
	assert_int_equal(req(x, "GET", "/api/v1/jvms/202", NULL), 200);
	assert_string_equal(x->body, JVM_202 "\n");

	/* unknown endpoints */
	static const char *const unknown[] = {
		"/api/v1/nope", "/api/v1/jvms/", "/api/v1/jvms/abc", "/api/v1/jvms/0",
		"/api/v1/jvms/-1/alloc", "/api/v1/jvms/101/ALLOC", "/api/v1/jvms/101/alloc/x",
		"/api/v1/jvms/101/", "/api/v1/jvms/101x", "/api/v1/jvms/0/query",
		"/api/v1/jvms/101/verylongswitchname",
	};
	for (size_t i = 0; i < MT_ARRAY_SIZE(unknown); i++) {
		assert_int_equal(req(x, "GET", unknown[i], NULL), 404);
		assert_string_equal(x->body, UNKNOWN_ENDPOINT);
	}
	assert_int_equal(req(x, "POST", "/api/v1/jvms", NULL), 404);
	assert_string_equal(x->body, UNKNOWN_ENDPOINT);
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/nope", NULL), 404);
	assert_string_equal(x->body, "{\"error\":\"unknown switch: /alloc and /age exist\"}\n");

	/* unknown JVMs: after the path and method checks */
	assert_int_equal(req(x, "GET", "/api/v1/jvms/999", NULL), 404);
	assert_string_equal(x->body, NOT_WATCHED(999));
	assert_int_equal(req(x, "POST", "/api/v1/jvms/999/alloc", NULL), 404);
	assert_string_equal(x->body, NOT_WATCHED(999));
	assert_int_equal(req(x, "DELETE", "/api/v1/jvms/999/age", NULL), 404);
	assert_string_equal(x->body, NOT_WATCHED(999));
	assert_int_equal(req(x, "DELETE", "/api/v1/jvms/999", NULL), 405);
	assert_string_equal(x->body, GET_ONLY);

	/* methods */
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101", NULL), 405);
	assert_string_equal(x->body, GET_ONLY);
	assert_int_equal(req(x, "DELETE", "/api/v1/jvms/101", NULL), 405);
	assert_string_equal(x->body, GET_ONLY);
	assert_int_equal(req(x, "GET", "/api/v1/jvms/101/alloc", NULL), 405);
	assert_string_equal(x->body, "{\"error\":\"POST switches it on, DELETE off; "
				     "GET /api/v1/jvms/PID shows it\"}\n");
	assert_int_equal(req(x, "GET", "/api/v1/jvms/101/query", NULL), 405);
	assert_string_equal(x->body, POST_ONLY);
	assert_int_equal(req(x, "DELETE", "/api/v1/jvms/101/query", NULL), 405);
	assert_string_equal(x->body, POST_ONLY);
	assert_int_equal(req(x, "GET", "/api/v1/jvms/101/record/pause", NULL), 405);
	assert_string_equal(x->body, POST_ONLY);
	assert_int_equal(rec.calls, 0);
	assert_false(x->jvms[0]->alloc.want);
}

static void test_switches(void **state)
{
	struct fix *x = *state;
	struct serve_jvm *j = x->jvms[0];

	/* off -> asked on: 202 until the main thread has it on, then 200 */
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/alloc", NULL), 202);
	assert_string_equal(x->body, "{\"pid\":101,\"alloc\":{\"state\":\"off\",\"requested\":true}}\n");
	assert_true(j->alloc.want);
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/alloc", NULL), 202);
	j->alloc.state = SERVE_WORK_STARTING;
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/alloc", NULL), 202);
	assert_string_equal(x->body,
			    "{\"pid\":101,\"alloc\":{\"state\":\"starting\",\"requested\":true}}\n");
	j->alloc.state = SERVE_WORK_ON;
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/alloc", NULL), 200);
	assert_string_equal(x->body, "{\"pid\":101,\"alloc\":{\"state\":\"on\",\"requested\":true}}\n");
	/* on -> asked off: 202 while it is on, 200 once it is not (stopping is not on) */
	assert_int_equal(req(x, "DELETE", "/api/v1/jvms/101/alloc", NULL), 202);
	assert_string_equal(x->body, "{\"pid\":101,\"alloc\":{\"state\":\"on\",\"requested\":false}}\n");
	assert_false(j->alloc.want);
	assert_int_equal(req(x, "DELETE", "/api/v1/jvms/101/alloc", NULL), 202);
	j->alloc.state = SERVE_WORK_STOPPING;
	assert_int_equal(req(x, "DELETE", "/api/v1/jvms/101/alloc", NULL), 200);
	assert_string_equal(x->body,
			    "{\"pid\":101,\"alloc\":{\"state\":\"stopping\",\"requested\":false}}\n");
	j->alloc.state = SERVE_WORK_OFF;
	assert_int_equal(req(x, "DELETE", "/api/v1/jvms/101/alloc", NULL), 200);
	/* failed: shown with its error; asking again starts over from off */
	j->alloc.state = SERVE_WORK_FAILED;
	snprintf(j->alloc.error, sizeof(j->alloc.error), "allocation sampling failed: \"x\"");
	assert_int_equal(req(x, "GET", "/api/v1/jvms/101", NULL), 200);
	assert_non_null(strstr(x->body, "\"alloc\":{\"state\":\"failed\",\"requested\":false,"
				       "\"error\":\"allocation sampling failed: \\\"x\\\"\"},"));
	assert_int_equal(req(x, "DELETE", "/api/v1/jvms/101/alloc", NULL), 200);
	assert_string_equal(x->body,
			    "{\"pid\":101,\"alloc\":{\"state\":\"failed\",\"requested\":false}}\n");
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/alloc", NULL), 202);
	assert_string_equal(x->body, "{\"pid\":101,\"alloc\":{\"state\":\"off\",\"requested\":true}}\n");
	assert_int_equal(j->alloc.state, SERVE_WORK_OFF);

	/* age, with and without an interval */
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/age?interval=64k", NULL), 202);
	assert_string_equal(x->body, "{\"pid\":101,\"age\":{\"state\":\"off\",\"requested\":true}}\n");
	assert_true(j->age.want);
	assert_int_equal(j->age_interval, 65536);
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/age", NULL), 202);
	assert_int_equal(j->age_interval, 65536);
	assert_int_equal(req(x, "POST", "/api/v1/jvms/202/age?interval=4096", NULL), 200);
	assert_string_equal(x->body, "{\"pid\":202,\"age\":{\"state\":\"on\",\"requested\":true}}\n");
	assert_int_equal(x->jvms[1]->age_interval, 4096);
	assert_int_equal(req(x, "DELETE", "/api/v1/jvms/202/age", NULL), 202);
	assert_string_equal(x->body, "{\"pid\":202,\"age\":{\"state\":\"on\",\"requested\":false}}\n");

	/* bad intervals: 400, nothing changes */
	static const char *const bad[][2] = {
		{ "POST", "/api/v1/jvms/101/age?interval=zero" },
		{ "POST", "/api/v1/jvms/101/age?interval=0" },
		{ "POST", "/api/v1/jvms/101/age?interval=2g" },
		{ "POST", "/api/v1/jvms/101/age?interval=" },
		{ "DELETE", "/api/v1/jvms/101/age?interval=1k" },
		{ "POST", "/api/v1/jvms/101/alloc?interval=1k" },
		{ "POST", "/api/v1/jvms/999/alloc?interval=1k" },
	};
	for (size_t i = 0; i < MT_ARRAY_SIZE(bad); i++) {
		assert_int_equal(req(x, bad[i][0], bad[i][1], NULL), 400);
		assert_string_equal(x->body, "{\"error\":\"interval: POST .../age?interval=BYTES "
					     "(1..1g, k/m suffixes)\"}\n");
	}
	assert_int_equal(j->age_interval, 65536);
	assert_true(j->age.want);
}

static void test_record(void **state)
{
	struct fix *x = *state;

	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/record/stop", NULL), 404);
	assert_string_equal(x->body, "{\"error\":\"unknown action: /record/pause and "
				     "/record/resume exist\"}\n");
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/record/", NULL), 404);
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/record/pause/x", NULL), 404);
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/record", NULL), 404);
	assert_string_equal(x->body, "{\"error\":\"unknown switch: /alloc and /age exist\"}\n");
	assert_int_equal(rec.calls, 0);

	rec.err = -EACCES;
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/record/pause", NULL), 500);
	assert_string_equal(x->body, "{\"error\":\"cannot list processes: Permission denied\"}\n");
	rec.err = 0;
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/record/pause", NULL), 404);
	assert_string_equal(x->body, "{\"error\":\"no `memtrace record -p 101` runs in serve's "
				     "pid namespace\"}\n");
	rec.rr.nstarting = 1;
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/record/resume", NULL), 409);
	assert_string_equal(x->body, "{\"error\":\"the memtrace record of pid 101 is still "
				     "starting: try again\"}\n");
	assert_int_equal(rec.calls, 3);
	assert_int_equal(rec.pid, 101);
	assert_false(rec.pause);

	rec.rr = (struct recctl_result){ .pids = { 5000, 5001 }, .nsignalled = 2, .nstarting = 1 };
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/record/pause", NULL), 200);
	assert_string_equal(x->body, "{\"pid\":101,\"reporting\":\"paused\",\"record_pids\":[5000,5001]}\n");
	assert_true(rec.pause);
	/* a JVM serve does not watch may still be recorded */
	rec.rr = (struct recctl_result){ .pids = { 77 }, .nsignalled = 1 };
	assert_int_equal(req(x, "POST", "/api/v1/jvms/999/record/resume", NULL), 200);
	assert_string_equal(x->body, "{\"pid\":999,\"reporting\":\"resumed\",\"record_pids\":[77]}\n");
	assert_int_equal(rec.pid, 999);
	assert_false(rec.pause);
	/* more than fit: the first 16 */
	rec.rr.nsignalled = 20;
	for (int i = 0; i < 16; i++)
		rec.rr.pids[i] = 100 + i;
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/record/pause", NULL), 200);
	assert_string_equal(x->body, "{\"pid\":101,\"reporting\":\"paused\",\"record_pids\":"
				     "[100,101,102,103,104,105,106,107,108,109,110,111,112,113,"
				     "114,115]}\n");
	assert_int_equal(rec.calls, 6);
}

static void test_query(void **state)
{
	struct fix *x = *state;

	/* checked before anything runs */
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/query", NULL), 400);
	assert_string_equal(x->body, "{\"error\":\"the program goes in the request body "
				     "(dsl/README.md)\"}\n");
	static const char *const bad_max[] = {
		"/api/v1/jvms/101/query?max_pause_ms=x", "/api/v1/jvms/101/query?max_pause_ms=-1",
		"/api/v1/jvms/101/query?max_pause_ms=3600001", "/api/v1/jvms/101/query?max_pause_ms=",
		"/api/v1/jvms/999/query?max_pause_ms=x",
	};
	for (size_t i = 0; i < MT_ARRAY_SIZE(bad_max); i++) {
		assert_int_equal(req(x, "POST", bad_max[i], PROG_OK), 400);
		assert_string_equal(x->body, "{\"error\":\"max_pause_ms: milliseconds, 0..3600000\"}\n");
	}
	/* a malformed program: 400 with line:col, even for a JVM serve does not watch */
	assert_int_equal(req(x, "POST", "/api/v1/jvms/999/query", PROG_BAD), 400);
	assert_string_equal(x->body,
		"{\"error\":\"the program does not compile\","
		"\"diagnostics\":\"<query>:2:45: error: expected an expression, found ']'\\n"
		"    roots <- objects.filter([it | it.field >])\\n"
		"                                            ^\\n\","
		"\"messages\":[{\"line\":2,\"col\":45,\"message\":\"expected an expression, found ']'\"}]}\n");
	assert_int_equal(req(x, "POST", "/api/v1/jvms/999/query", PROG_OK), 404);
	assert_string_equal(x->body, NOT_WATCHED(999));
	/* the agent serves one session: not while agent sampling is (being) on */
	static const enum serve_work_state busy[] = { SERVE_WORK_STARTING, SERVE_WORK_ON,
						      SERVE_WORK_STOPPING };
	for (size_t i = 0; i < MT_ARRAY_SIZE(busy); i++) {
		x->jvms[1]->age.state = busy[i];
		assert_int_equal(req(x, "POST", "/api/v1/jvms/202/query", PROG_OK), 409);
		assert_string_equal(x->body, "{\"error\":\"agent sampling is on for this JVM and "
					     "memtrace's agent serves one session at a time: DELETE "
					     ".../age first\"}\n");
	}
	assert_null(x->sv.queries.list);

	/* running: 202, a second one is 409, others JVMs' are not */
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/query?max_pause_ms=250", PROG_OK), 202);
	assert_string_equal(x->body, "{\"id\":1,\"pid\":101,\"state\":\"running\","
				     "\"href\":\"/api/v1/queries/1\"}\n");
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/query", PROG_OK), 409);
	assert_string_equal(x->body, "{\"error\":\"query 1 of pid 101 is still running: one at a "
				     "time (GET /api/v1/queries/1)\"}\n");
	x->jvms[1]->age.state = SERVE_WORK_FAILED;
	assert_int_equal(req(x, "POST", "/api/v1/jvms/202/query", PROG_OK), 202);
	assert_string_equal(x->body, "{\"id\":2,\"pid\":202,\"state\":\"running\","
				     "\"href\":\"/api/v1/queries/2\"}\n");
	assert_int_equal(req(x, "GET", "/api/v1/queries/1", NULL), 200);
	norm_ns(x->body);
	assert_string_equal(x->body, "{\"id\":1,\"pid\":101,\"state\":\"running\","
				     "\"started_ns\":T,\"max_pause_ms\":250}\n");
	{
		struct serve_query *q;

		pthread_mutex_lock(&x->sv.lock);
		q = serve_query_find(&x->sv.queries, 1);
		pthread_mutex_unlock(&x->sv.lock);
		assert_non_null(q); /* and its program fields stay: the worker's */
		assert_string_equal(q->src, PROG_OK);
		assert_true(q->has_max);
		assert_int_equal(q->max_pause_ms, 250);
		assert_int_equal(q->p.pid, 101);
		assert_string_equal(q->p.main_class, "app.Main");
		assert_non_null(q->prog);
	}

	/* done */
	release(101, 'd');
	release(202, 'd');
	wait_query(x, 1);
	wait_query(x, 2);
	assert_int_equal(req(x, "GET", "/api/v1/queries/1", NULL), 200);
	norm_ns(x->body);
	assert_string_equal(x->body, "{\"id\":1,\"pid\":101,\"state\":\"done\",\"started_ns\":T,"
				     "\"max_pause_ms\":250,\"ended_ns\":T,\"pause_ms\":1.500,"
				     "\"pause_from\":\"jvm_safepoints\",\"partial\":false,"
				     "\"objects\":7,\"eval_ms\":0.250,\"walk_mode\":\"frozen\","
				     "\"copy_walk_ms\":40.500,\"result\":{\"n\":1}}\n");

	/* partial, then failed with and without diagnostics */
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/query?max_pause_ms=0", PROG_OK), 202);
	release(101, 'p');
	wait_query(x, 3);
	assert_int_equal(req(x, "GET", "/api/v1/queries/3", NULL), 200);
	norm_ns(x->body);
	assert_string_equal(x->body, "{\"id\":3,\"pid\":101,\"state\":\"done\",\"started_ns\":T,"
				     "\"max_pause_ms\":0,\"ended_ns\":T,\"pause_ms\":1.500,"
				     "\"pause_from\":\"agent\",\"partial\":true,"
				     "\"objects\":7,\"eval_ms\":0.250,\"walk_mode\":\"paused\","
				     "\"result\":{\"n\":1}}\n");
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/query", PROG_OK), 202);
	release(101, 'f');
	wait_query(x, 4);
	assert_int_equal(req(x, "GET", "/api/v1/queries/4", NULL), 200);
	norm_ns(x->body);
	assert_string_equal(x->body, "{\"id\":4,\"pid\":101,\"state\":\"failed\",\"started_ns\":T,"
				     "\"ended_ns\":T,\"error\":\"the program does not fit this heap\","
				     "\"diagnostics\":\"<query>:1:10: error: no class of the heap is "
				     "named A\\nset_type x:\\n         ^\\n\"}\n");
	assert_int_equal(req(x, "POST", "/api/v1/jvms/101/query", PROG_OK), 202);
	release(101, 'x');
	wait_query(x, 5);
	assert_int_equal(req(x, "GET", "/api/v1/queries/5", NULL), 200);
	norm_ns(x->body);
	assert_string_equal(x->body, "{\"id\":5,\"pid\":101,\"state\":\"failed\",\"started_ns\":T,"
				     "\"ended_ns\":T,\"error\":\"released\"}\n");

	/* query ids */
	assert_int_equal(req(x, "GET", "/api/v1/queries/6", NULL), 404);
	assert_string_equal(x->body, "{\"error\":\"no query 6 (the last 16 finished ones are "
				     "kept)\"}\n");
	static const char *const bad_id[] = { "/api/v1/queries/0", "/api/v1/queries/x",
					      "/api/v1/queries/1x", "/api/v1/queries/",
					      "/api/v1/queries/1/" };
	for (size_t i = 0; i < MT_ARRAY_SIZE(bad_id); i++) {
		assert_int_equal(req(x, "GET", bad_id[i], NULL), 404);
		assert_string_equal(x->body, "{\"error\":\"unknown query: /api/v1/queries/ID\"}\n");
	}
	assert_int_equal(req(x, "POST", "/api/v1/queries/1", NULL), 405);
	assert_string_equal(x->body, GET_ONLY);
	assert_int_equal(req(x, "DELETE", "/api/v1/queries/1", NULL), 405);
	assert_string_equal(x->body, GET_ONLY);
}

/* Finished queries are kept, the newest SERVE_QUERY_KEEP of them. */
static void test_query_keep(void **state)
{
	struct fix *x = *state;
	unsigned n = SERVE_QUERY_KEEP + 2;

	for (unsigned i = 1; i <= n; i++) {
		release(101, 'd');
		assert_int_equal(req(x, "POST", "/api/v1/jvms/101/query", PROG_OK), 202);
		wait_query(x, i);
		serve_query_reap(&x->sv.queries, false);
	}
	assert_int_equal(req(x, "GET", "/api/v1/queries/2", NULL), 404);
	assert_string_equal(x->body, "{\"error\":\"no query 2 (the last 16 finished ones are "
				     "kept)\"}\n");
	assert_int_equal(req(x, "GET", "/api/v1/queries/3", NULL), 200);
	assert_int_equal(req(x, "GET", "/api/v1/queries/18", NULL), 200);
	/* a running one is kept however many finished after it */
	assert_int_equal(req(x, "POST", "/api/v1/jvms/202/query", PROG_OK), 409);
	x->jvms[1]->age.state = SERVE_WORK_OFF;
	assert_int_equal(req(x, "POST", "/api/v1/jvms/202/query", PROG_OK), 202);
	for (unsigned i = n + 2; i <= n + 1 + SERVE_QUERY_KEEP; i++) {
		release(101, 'd');
		assert_int_equal(req(x, "POST", "/api/v1/jvms/101/query", PROG_OK), 202);
		wait_query(x, i);
	}
	serve_query_reap(&x->sv.queries, false);
	assert_int_equal(req(x, "GET", "/api/v1/queries/18", NULL), 404);
	assert_int_equal(req(x, "GET", "/api/v1/queries/19", NULL), 200);
	norm_ns(x->body);
	assert_string_equal(x->body, "{\"id\":19,\"pid\":202,\"state\":\"running\","
				     "\"started_ns\":T}\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paths, setup, teardown),
		cmocka_unit_test_setup_teardown(test_switches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_record, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query, setup, teardown),
		cmocka_unit_test_setup_teardown(test_query_keep, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
