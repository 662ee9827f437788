/*
 * serve_http.h - the HTTP side of `memtrace serve` (libmicrohttpd, its own
 * thread): /metrics (OpenMetrics, open), /api/v1/... (JSON, bearer token),
 * /debug/pprof/... (profiles, the same token): the profile takes seconds,
 * so its connection is suspended until another thread answers it
 * (serve_pending_finish()) and the HTTP thread serves others meanwhile.
 */
#ifndef MEMTRACE_SERVE_HTTP_H
#define MEMTRACE_SERVE_HTTP_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>

#include "serve/metrics.h"

#define MT_SERVE_DEFAULT_LISTEN "127.0.0.1:9464"
#define MT_SERVE_MAX_BODY (64 * 1024) /* larger request bodies get 413 */

/* Writes a JSON document to @f; returns 0 or -errno. Called on the HTTP thread. */
typedef int (*serve_json_fn)(FILE *f, void *ctx);

/* One /api/v1/ request other than /api/v1/metrics and GET /api/v1/jvms. */
struct serve_request {
	const char *method;   /* "GET", "HEAD", "POST", "DELETE" */
	const char *path;     /* after "/api/v1/", e.g. "jvms/42/alloc" */
	void *conn;           /* for serve_request_arg() */
	const char *body;     /* a POST's body (NUL-terminated, at most MT_SERVE_MAX_BODY), or NULL */
	size_t body_len;
};

/* serve_request_arg - the query argument @name of @r ("?interval=1m"), or NULL. */
const char *serve_request_arg(const struct serve_request *r, const char *name);

/* Answers @r: writes a JSON body to @f and returns the HTTP status (200, 202,
 * 404, ...). Called on the HTTP thread, which must not block for long. */
typedef int (*serve_api_fn)(const struct serve_request *r, FILE *f, void *ctx);

/* A request answered later, from another thread. */
struct serve_pending;

/*
 * Starts GET /debug/pprof/... request @r: returns 0 after arranging one
 * later serve_pending_finish(@p, ...) from any thread, or an HTTP status
 * (>= 400) after writing a JSON error to @f, which is answered at once (@p
 * is then not to be used). Called on the HTTP thread: must not block.
 */
typedef int (*serve_pprof_fn)(const struct serve_request *r, struct serve_pending *p, FILE *f,
			      void *ctx);

/* serve_pending_header - add response header @name: @value (both copied;
 * at most 4) to @p's answer; before serve_pending_finish(), same thread. */
void serve_pending_header(struct serve_pending *p, const char *name, const char *value);

/* serve_pending_finish - answer @p with @status, content @type (a static
 * string) and @body (malloc'd, taken over; NULL with @len 0 for none). Any
 * thread, exactly once; @p must not be used afterwards. */
void serve_pending_finish(struct serve_pending *p, unsigned status, const char *type, char *body,
			  size_t len);

struct serve_http_opts {
	const char *listen;    /* "ADDR:PORT", "[V6ADDR]:PORT" */
	bool allow_remote;     /* accept a non-loopback ADDR */
	const char *token;     /* bearer token for /api/v1; NULL: the API answers 403 */
	struct metrics *metrics;
	serve_json_fn jvms;    /* GET /api/v1/jvms */
	serve_api_fn api;      /* every other /api/v1/ path (NULL: 404) */
	serve_pprof_fn pprof;  /* GET /debug/pprof/... (NULL: 404) */
	void *ctx;
};

/*
 * serve_parse_listen - "127.0.0.1:9464", "localhost:9464" or "[::1]:9464"
 * into @ss/@len; *loopback tells whether the address is a loopback one.
 * Returns 0 or -EINVAL. Pure (no name lookups beyond "localhost").
 */
int serve_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len,
		       bool *loopback);

/* serve_token_ok - constant-time check of an Authorization header value
 * against @token: "Bearer TOKEN", or "Basic base64(USER:TOKEN)" with any
 * USER (what `go tool pprof http://USER:TOKEN@HOST/...` and scrapers with
 * basic auth send). */
bool serve_token_ok(const char *header, const char *token);

/* serve_read_token - the first line of @path, trailing whitespace removed,
 * into a malloc'd string. Prints the failure (p_err) and returns NULL. */
char *serve_read_token(const char *path);

struct serve_http;

/* serve_http_start - bind and start serving. Prints the failure (p_err) and
 * returns NULL. The options' pointers must outlive the server. */
struct serve_http *serve_http_start(const struct serve_http_opts *o);
/* serve_http_stop - stop the thread, close the socket; NULL is a no-op.
 * Every pending request must have been finished before. */
void serve_http_stop(struct serve_http *h);

#endif
