/* http_client.h - a minimal HTTP/1.0 client for the unit tests of serve's
 * endpoints on a loopback port (test_serve_http.c, test_serve_api.c).
 * Include after <cmocka.h>. */
#ifndef MEMTRACE_TEST_HTTP_CLIENT_H
#define MEMTRACE_TEST_HTTP_CLIENT_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* @method @path with optional @auth header and @data body; returns the
 * status, body in @body. */
static inline int http_req(int port, const char *method, const char *path, const char *auth,
			   const char *data, char *body, size_t blen)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	size_t rlen = 512 + (data ? strlen(data) : 0);
	char *req = malloc(rlen), resp[16384];
	size_t got = 0, sent = 0;
	ssize_t n;
	int fd = socket(AF_INET, SOCK_STREAM, 0), status = -1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_non_null(req);
	assert_true(fd >= 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	snprintf(req, rlen, "%s %s HTTP/1.0\r\nHost: x\r\n%s%s%sContent-Length: %zu\r\n\r\n%s",
		 method, path, auth ? "Authorization: " : "", auth ? auth : "", auth ? "\r\n" : "",
		 data ? strlen(data) : 0, data ? data : "");
	while (sent < strlen(req) && (n = write(fd, req + sent, strlen(req) - sent)) > 0)
		sent += (size_t)n;
	assert_int_equal(sent, strlen(req));
	free(req);
	while ((n = read(fd, resp + got, sizeof(resp) - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	resp[got] = '\0';
	sscanf(resp, "HTTP/1.%*d %d", &status);
	snprintf(body, blen, "%s", strstr(resp, "\r\n\r\n") ? strstr(resp, "\r\n\r\n") + 4 : "");
	return status;
}

static inline int http_get(int port, const char *path, const char *auth, char *body, size_t blen)
{
	return http_req(port, "GET", path, auth, NULL, body, blen);
}

#endif
