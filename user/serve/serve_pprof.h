/*
 * serve_pprof.h - serve's pull-mode profiles, Go's convention that
 * Pyroscope's and Parca's scrapers and `go tool pprof http://...` follow:
 *
 *	GET /debug/pprof/allocs?pid=PID&seconds=N
 *
 * samples the allocations of watched JVM PID for N seconds (default 30,
 * 1..300; with -p PID the pid may be left out) and answers a gzip'd
 * profile.proto (alloc_space and alloc_objects, the Java stacks of
 * `memtrace alloc --pprof`; sink/allocprofile.h, sink/sinks.h). Behind the
 * token of the API (Bearer, or basic auth with the token as password).
 * Each profile is a job in a thread of its own with its own allocation
 * sampler (probe/alloctrace.h): the HTTP connection waits suspended
 * (serve_http.h), the main thread joins finished jobs. At most
 * SERVE_PPROF_MAX at once (429 beyond). The lost sampling events of the
 * window are in the X-Memtrace-Lost-Events header.
 */
#ifndef MEMTRACE_SERVE_PPROF_H
#define MEMTRACE_SERVE_PPROF_H

#include <stdbool.h>
#include <stdio.h>

#include "serve/serve.h"
#include "serve/serve_http.h"

#define SERVE_PPROF_MAX 2
#define SERVE_PPROF_DEFAULT_S 30
#define SERVE_PPROF_MAX_S 300

/* serve_pprof_start - a serve_pprof_fn (@ctx: the serve_api): check the
 * request, start its job. Takes serve.lock. */
int serve_pprof_start(const struct serve_request *r, struct serve_pending *p, FILE *f, void *ctx);

/* serve_pprof_reap - join the finished jobs of @sv; with @all, first ask
 * every running job to stop (it answers 503) and join them all. The main
 * thread's; with @all before serve_http_stop(). Takes serve.lock. */
void serve_pprof_reap(struct serve *sv, bool all);

#endif
