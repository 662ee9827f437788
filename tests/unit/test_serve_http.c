/* test_serve_http.c - serve's listen parsing, token checks, and the HTTP
 * endpoints on a loopback port (no BPF, no JVM). */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "serve/serve_http.h"
#include "http_client.h"

static void test_parse_listen(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	bool lo;

	assert_int_equal(serve_parse_listen("127.0.0.1:9464", &ss, &len, &lo), 0);
	assert_true(lo);
	assert_int_equal(ss.ss_family, AF_INET);
	assert_int_equal(ntohs(((struct sockaddr_in *)&ss)->sin_port), 9464);
	assert_int_equal(serve_parse_listen("localhost:1", &ss, &len, &lo), 0);
	assert_true(lo);
	assert_int_equal(serve_parse_listen("127.1.2.3:80", &ss, &len, &lo), 0);
	assert_true(lo);
	assert_int_equal(serve_parse_listen("0.0.0.0:9464", &ss, &len, &lo), 0);
	assert_false(lo);
	assert_int_equal(serve_parse_listen("10.0.0.1:9464", &ss, &len, &lo), 0);
	assert_false(lo);
	assert_int_equal(serve_parse_listen("[::1]:9464", &ss, &len, &lo), 0);
	assert_true(lo);
	assert_int_equal(ss.ss_family, AF_INET6);
	assert_int_equal(serve_parse_listen("[::]:9464", &ss, &len, &lo), 0);
	assert_false(lo);
	assert_int_equal(serve_parse_listen("127.0.0.1", &ss, &len, &lo), -EINVAL);
	assert_int_equal(serve_parse_listen("127.0.0.1:0", &ss, &len, &lo), -EINVAL);
	assert_int_equal(serve_parse_listen("127.0.0.1:65536", &ss, &len, &lo), -EINVAL);
	assert_int_equal(serve_parse_listen("127.0.0.1:x", &ss, &len, &lo), -EINVAL);
	assert_int_equal(serve_parse_listen(":9464", &ss, &len, &lo), -EINVAL);
	assert_int_equal(serve_parse_listen("example.com:9464", &ss, &len, &lo), -EINVAL);
	assert_int_equal(serve_parse_listen("[::1]9464", &ss, &len, &lo), -EINVAL);
}

static void test_token(void **state)
{
	const char *t = "0123456789abcdef";

	assert_true(serve_token_ok("Bearer 0123456789abcdef", t));
	assert_true(serve_token_ok("bearer 0123456789abcdef", t));
	assert_false(serve_token_ok(NULL, t));
	assert_false(serve_token_ok("Bearer ", t));
	assert_false(serve_token_ok("Bearer 0123456789abcde", t));
	assert_false(serve_token_ok("Bearer 0123456789abcdefX", t));
	assert_false(serve_token_ok("Bearer 0123456789abcdeF", t));
	assert_false(serve_token_ok("Basic 0123456789abcdef", t));
	/* basic auth (go tool pprof http://USER:TOKEN@HOST/...): any user, the token as password */
	assert_true(serve_token_ok("Basic bWVtdHJhY2U6MDEyMzQ1Njc4OWFiY2RlZg==", t));
	assert_true(serve_token_ok("Basic OjAxMjM0NTY3ODlhYmNkZWY=", t));
	assert_false(serve_token_ok("Basic bWVtdHJhY2U6MDEyMzQ1Njc4OWFiY2RlRg==", t));
	assert_false(serve_token_ok("Basic MDEyMzQ1Njc4OWFiY2RlZg==", t));    /* no colon */
	assert_false(serve_token_ok("Basic bWVtdHJhY2U6MDEyMzQ1Njc4OWFiY2RlZjA=", t));
	assert_false(serve_token_ok("Basic !!!", t));
	assert_false(serve_token_ok("Bearer x", NULL));
}

static void test_read_token(void **state)
{
	char path[] = "/tmp/test_serve_tok.XXXXXX";
	int fd = mkstemp(path);
	char *t;

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "abcdefghijklmnopq  \nsecond\n", 27), 27);
	close(fd);
	t = serve_read_token(path);
	assert_string_equal(t, "abcdefghijklmnopq");
	free(t);
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_int_equal(write(fd, "short\n", 6), 6);
	close(fd);
	assert_null(serve_read_token(path));
	unlink(path);
	assert_null(serve_read_token("/nonexistent/token"));
}

/* The API stub: echoes method, path and ?x=. */
static int api_stub(const struct serve_request *r, FILE *f, void *ctx)
{
	const char *x = serve_request_arg(r, "x");

	if (!strcmp(r->path, "echo")) /* the body, as received */
		fprintf(f, "%s %zu [%.40s]\n", r->method, r->body_len, r->body ? r->body : "(null)");
	else
		fprintf(f, "%s %s %s\n", r->method, r->path, x ? x : "-");
	return !strcmp(r->method, "POST") ? 202 : 200;
}

static int jvms_stub(FILE *f, void *ctx)
{
	fputs("{\"jvms\":[]}\n", f);
	return 0;
}

static void test_endpoints(void **state)
{
	struct metrics *m = metrics_new();
	struct serve_http_opts o = { .token = "0123456789abcdef", .metrics = m, .jvms = jvms_stub,
				     .api = api_stub };
	const char *tok = "Bearer 0123456789abcdef";
	struct serve_http *h = NULL;
	char listen[32], body[16384];
	int port = 0;

	metrics_register(m, "mt_x", METRIC_COUNTER, NULL, "X.");
	metrics_counter_add(m, "mt_x", (const char *[]){ "pid", "1", NULL }, 3);
	for (int tries = 0; tries < 20 && !h; tries++) {
		port = 20000 + (int)((getpid() * 7 + tries * 131) % 30000);
		snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
		o.listen = listen;
		h = serve_http_start(&o);
	}
	assert_non_null(h);
	assert_int_equal(http_get(port, "/metrics", NULL, body, sizeof(body)), 200);
	assert_string_equal(body, "# TYPE mt_x counter\n# HELP mt_x X.\nmt_x_total{pid=\"1\"} 3\n# EOF\n");
	assert_int_equal(http_get(port, "/api/v1/jvms", NULL, body, sizeof(body)), 401);
	assert_int_equal(http_get(port, "/api/v1/jvms", "Bearer nope", body, sizeof(body)), 401);
	assert_int_equal(http_get(port, "/api/v1/jvms", "Bearer 0123456789abcdef", body, sizeof(body)), 200);
	assert_string_equal(body, "{\"jvms\":[]}\n");
	assert_int_equal(http_get(port, "/api/v1/metrics", "Bearer 0123456789abcdef", body, sizeof(body)), 200);
	assert_non_null(strstr(body, "\"name\":\"mt_x\""));
	/* other API paths go to the api callback, with method and query */
	assert_int_equal(http_get(port, "/api/v1/other?x=1k", tok, body, sizeof(body)), 200);
	assert_string_equal(body, "GET other 1k\n");
	assert_int_equal(http_req(port, "POST", "/api/v1/jvms/7/alloc", tok, "ignored", body,
				  sizeof(body)), 202);
	assert_string_equal(body, "POST jvms/7/alloc -\n");
	assert_int_equal(http_req(port, "POST", "/api/v1/jvms/7/alloc", tok, NULL, body,
				  sizeof(body)), 202);
	assert_int_equal(http_req(port, "DELETE", "/api/v1/jvms/7/age", tok, NULL, body,
				  sizeof(body)), 200);
	assert_string_equal(body, "DELETE jvms/7/age -\n");
	/* a POST's body reaches the callback (NUL-terminated), up to MT_SERVE_MAX_BODY */
	assert_int_equal(http_req(port, "POST", "/api/v1/echo", tok, "set_type x:\n  roots", body,
				  sizeof(body)), 202);
	assert_string_equal(body, "POST 19 [set_type x:\n  roots]\n");
	assert_int_equal(http_req(port, "POST", "/api/v1/echo", tok, NULL, body, sizeof(body)), 202);
	assert_string_equal(body, "POST 0 [(null)]\n");
	{
		char *big = malloc(MT_SERVE_MAX_BODY + 2);

		assert_non_null(big);
		memset(big, 'a', MT_SERVE_MAX_BODY);
		big[MT_SERVE_MAX_BODY] = '\0';
		assert_int_equal(http_req(port, "POST", "/api/v1/echo", tok, big, body,
					  sizeof(body)), 202);
		assert_int_equal(strlen(body), strlen("POST 65536 []\n") + 40);
		assert_int_equal(body[strlen(body) - 3], 'a');
		big[MT_SERVE_MAX_BODY] = 'a';
		big[MT_SERVE_MAX_BODY + 1] = '\0';
		assert_int_equal(http_req(port, "POST", "/api/v1/echo", tok, big, body,
					  sizeof(body)), 413);
		assert_non_null(strstr(body, "over 64 KiB"));
		/* too big and no token: the token is checked first */
		assert_int_equal(http_req(port, "POST", "/api/v1/echo", NULL, big, body,
					  sizeof(body)), 401);
		free(big);
	}
	/* switches need the token too; POST elsewhere and other methods are refused */
	assert_int_equal(http_req(port, "POST", "/api/v1/jvms/7/alloc", NULL, NULL, body,
				  sizeof(body)), 401);
	assert_int_equal(http_req(port, "DELETE", "/api/v1/jvms/7/alloc", "Bearer nope", NULL,
				  body, sizeof(body)), 401);
	assert_int_equal(http_req(port, "POST", "/metrics", tok, NULL, body, sizeof(body)), 405);
	assert_int_equal(http_req(port, "PUT", "/api/v1/jvms/7/alloc", tok, NULL, body,
				  sizeof(body)), 405);
	assert_int_equal(http_get(port, "/nope", NULL, body, sizeof(body)), 404);
	serve_http_stop(h);

	/* without an api callback, unknown API paths are 404 */
	o.api = NULL;
	h = serve_http_start(&o);
	assert_non_null(h);
	assert_int_equal(http_get(port, "/api/v1/other", tok, body, sizeof(body)), 404);
	serve_http_stop(h);

	/* no token configured: the API is off */
	o.token = NULL;
	h = serve_http_start(&o);
	assert_non_null(h);
	assert_int_equal(http_get(port, "/api/v1/jvms", "Bearer 0123456789abcdef", body, sizeof(body)), 403);
	serve_http_stop(h);

	/* non-loopback refused unless allowed */
	o.listen = "0.0.0.0:1";
	assert_null(serve_http_start(&o));
	metrics_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_listen),
		cmocka_unit_test(test_token),
		cmocka_unit_test(test_read_token),
		cmocka_unit_test(test_endpoints),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
