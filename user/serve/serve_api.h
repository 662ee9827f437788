/*
 * serve_api.h - the JSON API of `memtrace serve` (/api/v1/..., the HTTP
 * thread; serve_http.h checks the token and calls these): routing by method
 * and path, the JVMs as JSON, the switches of their allocation and agent
 * sampling (recorded as wishes the main thread acts on, serve.h), queries
 * (compiled here, run by serve_query.h) and the pause/resume of `memtrace
 * record` (recctl.h). Answers never wait for the main thread.
 */
#ifndef MEMTRACE_SERVE_API_H
#define MEMTRACE_SERVE_API_H

#include <stdbool.h>
#include <stdio.h>

#include "serve/serve.h"
#include "serve/serve_query.h"
#include "serve/recctl.h"
#include "serve/serve_http.h"

/* The API of one serve: its state, and what the API sets going (`memtrace
 * serve` gives serve_query_live and recctl_signal; a test, its own). */
struct serve_api {
	struct serve *sv;
	serve_query_run_fn query_run;   /* the body of a query's thread */
	/* pause (@pause) or resume the `memtrace record`s of JVM @jvm_pid */
	int (*record_signal)(int jvm_pid, bool pause, struct recctl_result *r);
};

/* serve_api_jvms - a serve_json_fn for GET /api/v1/jvms (@ctx: the serve_api).
 * Takes serve.lock. */
int serve_api_jvms(FILE *f, void *ctx);

/*
 * serve_api_handle - a serve_api_fn for every other /api/v1/ path (@ctx: the
 * serve_api): help, one JVM, its switches, queries, record pause/resume.
 * Writes the JSON answer to @f and returns the HTTP status. Takes serve.lock.
 */
int serve_api_handle(const struct serve_request *r, FILE *f, void *ctx);

#endif
