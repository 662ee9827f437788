// SPDX-License-Identifier: GPL-2.0
/* serve_http.c - `memtrace serve`'s endpoints over libmicrohttpd (loaded by
 * mhdload.c when serve starts, not linked). */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <microhttpd.h>

#include "serve/mhdload.h"
#include "serve/serve_http.h"
#include "lib/util.h"

struct serve_http {
	struct MHD_Daemon *d;
	struct serve_http_opts o;
};

int serve_parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len,
		       bool *loopback)
{
	char host[128];
	const char *colon, *h = s;
	size_t hl;
	uint64_t port;

	memset(ss, 0, sizeof(*ss));
	if (!s)
		return -EINVAL;
	if (*s == '[') { /* [v6]:port */
		const char *close = strchr(s, ']');

		if (!close || close[1] != ':')
			return -EINVAL;
		h = s + 1;
		hl = (size_t)(close - h);
		colon = close + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon)
			return -EINVAL;
		hl = (size_t)(colon - s);
	}
	if (hl == 0 || hl >= sizeof(host) || parse_u64(colon + 1, &port) || port < 1 || port > 65535)
		return -EINVAL;
	memcpy(host, h, hl);
	host[hl] = '\0';
	if (!strcmp(host, "localhost"))
		strcpy(host, "127.0.0.1");
	if (*s != '[') {
		struct sockaddr_in *in = (struct sockaddr_in *)ss;

		if (inet_pton(AF_INET, host, &in->sin_addr) != 1)
			return -EINVAL;
		in->sin_family = AF_INET;
		in->sin_port = htons((uint16_t)port);
		*len = sizeof(*in);
		*loopback = (ntohl(in->sin_addr.s_addr) >> 24) == 127;
	} else {
		struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;

		if (inet_pton(AF_INET6, host, &in6->sin6_addr) != 1)
			return -EINVAL;
		in6->sin6_family = AF_INET6;
		in6->sin6_port = htons((uint16_t)port);
		*len = sizeof(*in6);
		*loopback = IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr);
	}
	return 0;
}

/* Constant-time comparison of @s (length @n) with @token. */
static bool token_eq(const char *s, size_t n, const char *token)
{
	size_t tn = strlen(token);
	unsigned char diff = 0;

	/* compare every byte of the token whatever the header's length */
	for (size_t i = 0; i < tn; i++)
		diff |= (unsigned char)(token[i] ^ (i < n ? s[i] : 0));
	return tn && n == tn && !diff;
}

/* Decode base64 @in into @out (at most @max bytes); the length, or -1. */
static int unbase64(const char *in, char *out, size_t max)
{
	static const char alphabet[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint32_t acc = 0;
	int bits = 0;
	size_t n = 0;

	for (; *in && *in != '='; in++) {
		const char *c = strchr(alphabet, *in);

		if (!c)
			return -1;
		acc = acc << 6 | (uint32_t)(c - alphabet);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == max)
				return -1;
			out[n++] = (char)(acc >> bits & 0xff);
		}
	}
	return (int)n;
}

bool serve_token_ok(const char *header, const char *token)
{
	char dec[512];
	const char *colon;
	int n;

	if (!header || !token)
		return false;
	if (!strncasecmp(header, "Bearer ", 7))
		return token_eq(header + 7, strlen(header + 7), token);
	if (strncasecmp(header, "Basic ", 6) || strlen(header + 6) > 4 * sizeof(dec) / 3)
		return false;
	n = unbase64(header + 6, dec, sizeof(dec));
	colon = n > 0 ? memchr(dec, ':', (size_t)n) : NULL;
	if (!colon)
		return false;
	colon++;
	return token_eq(colon, (size_t)(dec + n - colon), token);
}

char *serve_read_token(const char *path)
{
	struct stat st;
	size_t len;
	char *t = read_file(path, &len);

	if (!t) {
		p_err("cannot read the token file %s: %s", path, strerror(errno));
		return NULL;
	}
	t[strcspn(t, "\n")] = '\0';
	len = strlen(t);
	while (len && isspace((unsigned char)t[len - 1]))
		t[--len] = '\0';
	if (len < 16) {
		p_err("the token in %s is %s: put at least 16 characters on its first line "
		      "(e.g. `head -c 24 /dev/urandom | base64 > %s`)",
		      path, len ? "too short" : "empty", path);
		free(t);
		return NULL;
	}
	if (!stat(path, &st) && (st.st_mode & 0077))
		p_warn("the token file %s is readable by other users (chmod 600 it)", path);
	return t;
}

/* reply_with - queue @body (malloc'd, taken over) with @status, @type and
 * the @nhdr extra headers @hdr. */
static enum MHD_Result reply_with(struct MHD_Connection *c, unsigned status, const char *type,
				  char *body, size_t len, char (*hdr)[2][64], int nhdr)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = mhd.create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	for (int i = 0; i < nhdr; i++)
		mhd.add_response_header(r, hdr[i][0], hdr[i][1]);
	mhd.add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	mhd.add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (status == MHD_HTTP_UNAUTHORIZED)
		mhd.add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"memtrace\"");
	ret = mhd.queue_response(c, status, r);
	mhd.destroy_response(r);
	return ret;
}

/* reply - queue @body (malloc'd, taken over) with @status and @type. */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     char *body, size_t len)
{
	return reply_with(c, status, type, body, len, NULL, 0);
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned status, const char *msg)
{
	char *b = strdup(msg);

	if (!b)
		return MHD_NO;
	return reply(c, status, "text/plain; charset=utf-8", b, strlen(b));
}

static enum MHD_Result reply_error_json(struct MHD_Connection *c, unsigned status, const char *msg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return MHD_NO;
	fputs("{\"error\":", f);
	json_str(f, msg);
	fputs("}\n", f);
	fclose(f);
	return reply(c, status, "application/json", buf, len);
}

const char *serve_request_arg(const struct serve_request *r, const char *name)
{
	return mhd.lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
}

/* write_openmetrics - GET /metrics. */
static enum MHD_Result write_openmetrics(struct serve_http *h, struct MHD_Connection *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int err;

	if (!f)
		return MHD_NO;
	err = metrics_write_openmetrics(h->o.metrics, f);
	fclose(f);
	if (err) {
		free(buf);
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "cannot write the metrics\n");
	}
	return reply(c, MHD_HTTP_OK, MT_OPENMETRICS_CONTENT_TYPE, buf, len);
}

struct serve_pending {
	struct MHD_Connection *c;
	pthread_mutex_t lock;
	bool suspended;        /* the HTTP thread suspended the connection */
	bool done;             /* serve_pending_finish() was called */
	unsigned status;
	const char *type;
	char *body;
	size_t len;
	int nhdr;
	char hdr[4][2][64];    /* extra response headers: name, value */
};

/* The state of one connection: the body of a POST or DELETE, gathered over
 * the upload calls, or the pending answer of a profile. */
struct req_body {
	char *buf;
	size_t len;
	bool too_big;
	struct serve_pending *pending;
};

static void request_done(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct req_body *b = *con_cls;

	if (b) {
		if (b->pending) {
			pthread_mutex_destroy(&b->pending->lock);
			free(b->pending->body);
			free(b->pending);
		}
		free(b->buf);
		free(b);
		*con_cls = NULL;
	}
}

void serve_pending_header(struct serve_pending *p, const char *name, const char *value)
{
	pthread_mutex_lock(&p->lock);
	if (p->nhdr < 4) {
		snprintf(p->hdr[p->nhdr][0], sizeof(p->hdr[0][0]), "%s", name);
		snprintf(p->hdr[p->nhdr][1], sizeof(p->hdr[0][1]), "%s", value);
		p->nhdr++;
	}
	pthread_mutex_unlock(&p->lock);
}

void serve_pending_finish(struct serve_pending *p, unsigned status, const char *type, char *body,
			  size_t len)
{
	struct MHD_Connection *c = p->c;
	bool resume;

	pthread_mutex_lock(&p->lock);
	p->status = status;
	p->type = type;
	p->body = body;
	p->len = len;
	p->done = true;
	resume = p->suspended;
	pthread_mutex_unlock(&p->lock);
	/* from here the HTTP thread may answer and free @p */
	if (resume)
		mhd.resume_connection(c);
}

/* body_append - keep @n more bytes of the body in @b (NUL-terminated), at most
 * MT_SERVE_MAX_BODY; beyond, only note that it was too big. */
static void body_append(struct req_body *b, const char *p, size_t n)
{
	char *nb;

	if (b->too_big || b->len + n > MT_SERVE_MAX_BODY) {
		b->too_big = true;
		return;
	}
	nb = realloc(b->buf, b->len + n + 1);
	if (!nb) {
		b->too_big = true;
		return;
	}
	memcpy(nb + b->len, p, n);
	b->len += n;
	nb[b->len] = '\0';
	b->buf = nb;
}

/* api - an authorized /api/v1/ request (@b: its body, if a POST or DELETE). */
static enum MHD_Result api(struct serve_http *h, struct MHD_Connection *c, const char *url,
			   const char *method, const struct req_body *b)
{
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
	unsigned status = MHD_HTTP_OK;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int err = 0;

	f = open_memstream(&buf, &len);
	if (!f)
		return MHD_NO;
	if (get && !strcmp(url, "/api/v1/metrics")) {
		err = metrics_write_json(h->o.metrics, f);
	} else if (get && !strcmp(url, "/api/v1/jvms") && h->o.jvms) {
		err = h->o.jvms(f, h->o.ctx);
	} else if (h->o.api) {
		struct serve_request r = { .method = method, .path = url + 8, .conn = c };

		if (b && b->buf) {
			r.body = b->buf;
			r.body_len = b->len;
		}

		status = (unsigned)h->o.api(&r, f, h->o.ctx);
	} else {
		fclose(f);
		free(buf);
		return reply_error_json(c, MHD_HTTP_NOT_FOUND,
					"unknown endpoint: /api/v1/metrics and /api/v1/jvms exist");
	}
	fclose(f);
	if (err) {
		free(buf);
		return reply_error_json(c, MHD_HTTP_INTERNAL_SERVER_ERROR, strerror(-err));
	}
	return reply(c, status, "application/json", buf, len);
}

/* reply_pending - answer a finished profile request (its body moves to the reply). */
static enum MHD_Result reply_pending(struct MHD_Connection *c, struct serve_pending *p)
{
	char *body = p->body;

	p->body = NULL;
	if (!body)
		body = strdup("");
	if (!body)
		return MHD_NO;
	return reply_with(c, p->status, p->type, body, p->len, p->hdr, p->nhdr);
}

/*
 * pprof - GET /debug/pprof/...: the first call starts the profile and
 * suspends the connection; the call after serve_pending_finish() resumed
 * it answers. Behind the token, like the API.
 */
static enum MHD_Result pprof(struct serve_http *h, struct MHD_Connection *c, const char *url,
			     void **con_cls)
{
	struct req_body *b = *con_cls;
	struct serve_pending *p;
	struct serve_request r = { .method = "GET", .path = url, .conn = c };
	char *buf = NULL;
	size_t len = 0;
	FILE *f;
	int status;

	if (b && b->pending) {
		enum MHD_Result ret = MHD_YES;

		p = b->pending;
		pthread_mutex_lock(&p->lock);
		if (p->done)
			ret = reply_pending(c, p);
		pthread_mutex_unlock(&p->lock);
		return ret;
	}
	if (!h->o.pprof)
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n");
	if (!h->o.token)
		return reply_error_json(c, MHD_HTTP_FORBIDDEN,
					"profiles are off: start memtrace serve with --token-file FILE");
	if (!serve_token_ok(mhd.lookup_connection_value(c, MHD_HEADER_KIND,
							MHD_HTTP_HEADER_AUTHORIZATION), h->o.token))
		return reply_error_json(c, MHD_HTTP_UNAUTHORIZED,
					"missing or wrong token: send \"Authorization: Bearer TOKEN\" "
					"(or basic auth with the token as the password, e.g. "
					"`go tool pprof http://memtrace:TOKEN@HOST:PORT/debug/pprof/allocs`)");
	b = calloc(1, sizeof(*b));
	p = calloc(1, sizeof(*p));
	if (!b || !p) {
		free(b);
		free(p);
		return MHD_NO;
	}
	p->c = c;
	pthread_mutex_init(&p->lock, NULL);
	b->pending = p;
	*con_cls = b;
	f = open_memstream(&buf, &len);
	if (!f)
		return MHD_NO;
	status = h->o.pprof(&r, p, f, h->o.ctx);
	fclose(f);
	if (status) {
		return reply(c, (unsigned)status, "application/json", buf, len);
	}
	free(buf);
	/* it may have finished already; otherwise wait for it without blocking */
	pthread_mutex_lock(&p->lock);
	if (p->done) {
		enum MHD_Result ret = reply_pending(c, p);

		pthread_mutex_unlock(&p->lock);
		return ret;
	}
	mhd.suspend_connection(c);
	p->suspended = true;
	pthread_mutex_unlock(&p->lock);
	return MHD_YES;
}

/*
 * One request: /metrics open, /api/v1/... behind the token. The body of a
 * POST or DELETE (API only; a query's program) is gathered up to
 * MT_SERVE_MAX_BODY (beyond: 413), and the answer goes out on the last call,
 * once the upload is over.
 */
static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct serve_http *h = cls;
	struct req_body *b = *con_cls;
	bool get = !strcmp(method, MHD_HTTP_METHOD_GET) || !strcmp(method, MHD_HTTP_METHOD_HEAD);
	bool change = !strcmp(method, MHD_HTTP_METHOD_POST) ||
		      !strcmp(method, MHD_HTTP_METHOD_DELETE);

	if (!get && !change)
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET, POST and DELETE\n");
	if (change && !b) { /* headers only: ask for the body */
		b = calloc(1, sizeof(*b));
		if (!b)
			return MHD_NO;
		*con_cls = b;
		return MHD_YES;
	}
	if (change && *upload_size) { /* keep the body, up to the limit */
		body_append(b, upload, *upload_size);
		*upload_size = 0;
		return MHD_YES;
	}
	if (!strcmp(url, "/") && get)
		return reply_text(c, MHD_HTTP_OK, "memtrace serve: /metrics (OpenMetrics), "
				  "/api/v1/... (JSON, Authorization: Bearer TOKEN; see /api/v1/help)\n");
	if (!strcmp(url, "/metrics") && get)
		return write_openmetrics(h, c);
	if (!strncmp(url, "/debug/pprof/", 13) && get)
		return pprof(h, c, url, con_cls);
	if (strncmp(url, "/api/v1/", 8)) {
		if (change)
			return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "POST and DELETE: /api/v1/ only\n");
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n");
	}
	if (!h->o.token)
		return reply_error_json(c, MHD_HTTP_FORBIDDEN,
					"the API is off: start memtrace serve with --token-file FILE");
	if (!serve_token_ok(mhd.lookup_connection_value(c, MHD_HEADER_KIND,
							MHD_HTTP_HEADER_AUTHORIZATION), h->o.token))
		return reply_error_json(c, MHD_HTTP_UNAUTHORIZED,
					"missing or wrong token: send \"Authorization: Bearer TOKEN\" "
					"with the token from serve's --token-file");
	if (b && b->too_big) {
		char msg[96];

		snprintf(msg, sizeof(msg), "the request body is over %d KiB", MT_SERVE_MAX_BODY / 1024);
		return reply_error_json(c, MHD_HTTP_CONTENT_TOO_LARGE, msg);
	}
	return api(h, c, url, method, b);
}

struct serve_http *serve_http_start(const struct serve_http_opts *o)
{
	struct sockaddr_storage ss;
	struct serve_http *h;
	socklen_t len;
	bool loopback;
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME;

	if (serve_parse_listen(o->listen, &ss, &len, &loopback)) {
		p_err("invalid --listen '%s': expected ADDR:PORT, e.g. %s or [::1]:9464", o->listen,
		      MT_SERVE_DEFAULT_LISTEN);
		errno = EINVAL;
		return NULL;
	}
	if (!loopback && !o->allow_remote) {
		p_err("refusing to listen on %s: it is not a loopback address; add --allow-remote "
		      "to expose the metrics beyond this host", o->listen);
		errno = EPERM;
		return NULL;
	}
	{
		char why[512];
		int err = mhd_load(NULL, why, sizeof(why));

		if (err) {
			p_err("%s", why);
			errno = -err;
			return NULL;
		}
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		p_err("out of memory");
		return NULL;
	}
	h->o = *o;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->d = mhd.start_daemon(flags, 0, NULL, NULL, handle, h,
				MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&ss,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned)64,
				MHD_OPTION_NOTIFY_COMPLETED, request_done, NULL,
				MHD_OPTION_END);
	if (!h->d) {
		int e = errno;

		p_err("cannot listen on %s: %s (is another server on that port?)", o->listen,
		      strerror(e ? e : EADDRINUSE));
		free(h);
		errno = e;
		return NULL;
	}
	return h;
}

void serve_http_stop(struct serve_http *h)
{
	if (!h)
		return;
	mhd.stop_daemon(h->d);
	free(h);
}
