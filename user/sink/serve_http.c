// SPDX-License-Identifier: GPL-2.0
/* serve_http.c - `memtrace serve`'s endpoints over libmicrohttpd. */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <microhttpd.h>

#include "sink/serve_http.h"
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

bool serve_token_ok(const char *header, const char *token)
{
	size_t n, tn;
	unsigned char diff = 0;

	if (!header || !token || strncasecmp(header, "Bearer ", 7))
		return false;
	header += 7;
	n = strlen(header);
	tn = strlen(token);
	/* compare every byte of the token whatever the header's length */
	for (size_t i = 0; i < tn; i++)
		diff |= (unsigned char)(token[i] ^ (i < n ? header[i] : 0));
	return tn && n == tn && !diff;
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

/* reply - queue @body (malloc'd, taken over) with @status and @type. */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned status, const char *type,
			     char *body, size_t len)
{
	struct MHD_Response *r;
	enum MHD_Result ret;

	r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (status == MHD_HTTP_UNAUTHORIZED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer realm=\"memtrace\"");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
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
	return MHD_lookup_connection_value(r->conn, MHD_GET_ARGUMENT_KIND, name);
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

/* The body of a POST or DELETE, gathered over the upload calls. */
struct req_body {
	char *buf;
	size_t len;
	bool too_big;
};

static void request_done(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode toe)
{
	struct req_body *b = *con_cls;

	if (b) {
		free(b->buf);
		free(b);
		*con_cls = NULL;
	}
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
	if (strncmp(url, "/api/v1/", 8)) {
		if (change)
			return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "POST and DELETE: /api/v1/ only\n");
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: try /metrics\n");
	}
	if (!h->o.token)
		return reply_error_json(c, MHD_HTTP_FORBIDDEN,
					"the API is off: start memtrace serve with --token-file FILE");
	if (!serve_token_ok(MHD_lookup_connection_value(c, MHD_HEADER_KIND,
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
	unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;

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
	h = calloc(1, sizeof(*h));
	if (!h) {
		p_err("out of memory");
		return NULL;
	}
	h->o = *o;
	if (ss.ss_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	h->d = MHD_start_daemon(flags, 0, NULL, NULL, handle, h,
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
	MHD_stop_daemon(h->d);
	free(h);
}
