/*
 * serve_http.h - the HTTP side of `memtrace serve` (libmicrohttpd, its own
 * thread): /metrics (OpenMetrics, open), /api/v1/... (JSON, bearer token).
 */
#ifndef MEMTRACE_SERVE_HTTP_H
#define MEMTRACE_SERVE_HTTP_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/socket.h>

#include "sink/metrics.h"

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

struct serve_http_opts {
	const char *listen;    /* "ADDR:PORT", "[V6ADDR]:PORT" */
	bool allow_remote;     /* accept a non-loopback ADDR */
	const char *token;     /* bearer token for /api/v1; NULL: the API answers 403 */
	struct metrics *metrics;
	serve_json_fn jvms;    /* GET /api/v1/jvms */
	serve_api_fn api;      /* every other /api/v1/ path (NULL: 404) */
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
 * ("Bearer TOKEN") against @token. */
bool serve_token_ok(const char *header, const char *token);

/* serve_read_token - the first line of @path, trailing whitespace removed,
 * into a malloc'd string. Prints the failure (p_err) and returns NULL. */
char *serve_read_token(const char *path);

struct serve_http;

/* serve_http_start - bind and start serving. Prints the failure (p_err) and
 * returns NULL. The options' pointers must outlive the server. */
struct serve_http *serve_http_start(const struct serve_http_opts *o);
/* serve_http_stop - stop the thread, close the socket; NULL is a no-op. */
void serve_http_stop(struct serve_http *h);

#endif
