// SPDX-License-Identifier: GPL-2.0
/* fuzz_http.c - libFuzzer entry for `memtrace serve`'s HTTP side: the input
 * is the bytes of one client connection to the real server (libmicrohttpd,
 * serve/serve_http.c: /metrics, the token check, bodies and their limit)
 * and its JSON API behind it (serve/serve_api.c: routing, the JVMs, the
 * switches, queries compiled here, record pause/resume), on a loopback port,
 * with two watched JVMs written in by hand as test_serve_api.c does. The
 * answer is read to the end; a query's thread body and the signalling of
 * `memtrace record` are the fuzzer's own (they end at once). Seeds: the
 * requests of curl against each endpoint (capture-seeds.sh). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "serve/serve.h"
#include "serve/serve_api.h"
#include "serve/serve_query.h"
#include "serve/metrics.h"
#include "serve/serve_http.h"

#define TOKEN "fuzz0123456789abcdef"

static struct serve sv;
static struct serve_jvm jv[2], *jvs[2];
static struct serve_api api;
static struct serve_http *srv;
static int port;

static void run_query(struct serve_query *q)
{
	struct serve_query_outcome o = { .pause_ms = 1, .eval_ms = 1, .objects = 1 };

	if (q->id % 2) {
		o.result = strdup("{\"n\":1}");
		serve_query_done(q, &o);
	} else {
		serve_query_fail(q, "the program does not fit this heap", NULL);
	}
}

static int record_signal(int jvm_pid, bool pause, struct recctl_result *r)
{
	memset(r, 0, sizeof(*r));
	r->nsignalled = jvm_pid == 101;
	r->pids[0] = 4242;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	static const char *const labels[] = { "pid", "101", NULL };
	struct serve_http_opts o = { .token = TOKEN, .jvms = serve_api_jvms,
				     .api = serve_api_handle, .ctx = &api };
	char listen[32];

	signal(SIGPIPE, SIG_IGN);
	pthread_mutex_init(&sv.lock, NULL);
	sv.queries.lock = &sv.lock;
	sv.m = metrics_new();
	metrics_register(sv.m, "memtrace_fuzz_collections", METRIC_COUNTER, NULL, "collections");
	metrics_counter_add(sv.m, "memtrace_fuzz_collections", labels, 3);
	for (int i = 0; i < 2; i++) {
		jv[i].sv = &sv;
		jv[i].p.pid = i ? 202 : 101;
		jv[i].p.nspid = jv[i].p.pid;
		snprintf(jv[i].pid_s, sizeof(jv[i].pid_s), "%d", jv[i].p.pid);
		snprintf(jv[i].p.main_class, sizeof(jv[i].p.main_class), "app.Main%d", i);
		snprintf(jv[i].p.jdk_version, sizeof(jv[i].p.jdk_version), "17.0.9");
		jvs[i] = &jv[i];
	}
	jv[1].age = (struct serve_work){ .want = true, .state = SERVE_WORK_ON, .since_ns = 6 };
	sv.jvms = jvs;
	sv.njvms = sv.cap = 2;
	api = (struct serve_api){ .sv = &sv, .query_run = run_query,
				  .record_signal = record_signal };
	o.metrics = sv.m;
	for (int tries = 0; tries < 50 && !srv; tries++) {
		port = 20000 + (int)((getpid() * 7 + tries * 211) % 30000);
		snprintf(listen, sizeof(listen), "127.0.0.1:%d", port);
		o.listen = listen;
		srv = serve_http_start(&o);
	}
	return srv ? 0 : 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { .tv_sec = 2 };
	char buf[4096];
	int fd;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return 0;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (!connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		size_t off = 0;

		while (off < size) {
			ssize_t k = send(fd, data + off, size - off, MSG_NOSIGNAL);

			if (k <= 0)
				break;
			off += (size_t)k;
		}
		shutdown(fd, SHUT_WR);
		while (recv(fd, buf, sizeof(buf), 0) > 0)
			;
	}
	close(fd);
	/* the switches asked for are the main thread's to act on: forget them */
	pthread_mutex_lock(&sv.lock);
	for (int i = 0; i < 2; i++)
		jv[i].alloc.want = false;
	pthread_mutex_unlock(&sv.lock);
	serve_query_reap(&sv.queries, false);
	return 0;
}
