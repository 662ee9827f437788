// SPDX-License-Identifier: GPL-2.0
/*
 * test_agent_freeze - the frozen copy's seccomp filters: a thread of its
 * own but no process, file or socket (freeze_seccomp()); once its records
 * are written, no thread either (freeze_no_threads()). The heap's spaces
 * read in batches, unreadable ones left out (freeze_read_spaces()).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/freeze.h"

/* agent.c's clock (the rest of agent.c is the JVM's side) */
uint64_t agent_mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static void *nothing(void *arg)
{
	return arg;
}

/* In a child (a filter cannot be taken back): the copy's filter lets a
 * thread start and refuses a process, a file and a socket (EPERM). */
static void test_sandbox(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		pthread_t t;
		pid_t c;

		if (freeze_seccomp())
			_exit(10);
		if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
			_exit(11); /* its records' second thread */
		c = fork();
		if (c == 0)
			_exit(0);
		if (c > 0 || errno != EPERM)
			_exit(12);
		if (open("/tmp/test_agent_freeze.x", O_CREAT | O_WRONLY, 0600) >= 0 ||
		    errno != EPERM)
			_exit(13);
		if (socket(AF_UNIX, SOCK_STREAM, 0) >= 0 || errno != EPERM)
			_exit(14);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* In a child (the filter cannot be taken back): a thread starts before the
 * filter, none after, and no process either. */
static void test_no_threads(void **state)
{
	int status;
	pid_t pid;

	(void)state;
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		pthread_t t;
		int rc = 0;

		if (pthread_create(&t, NULL, nothing, NULL) || pthread_join(t, NULL))
			_exit(10); /* threads work before */
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || freeze_no_threads())
			_exit(11);
		if (!pthread_create(&t, NULL, nothing, NULL))
			rc = 12; /* a thread started after */
		else if (fork() >= 0)
			rc = 13; /* a process started after */
		_exit(rc);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* A region object as HotSpot's might be: its fields at offsets 8, 24, 16
 * (bottom, top, end: not in order), among others. */
struct fake_region {
	uint64_t pad0, bottom, end, top, pad1[4];
};

/* 2500 regions (three batches of 1024 at most), some of them NULL, one
 * freed (its page unmapped), one whose fields run off the end of its page
 * into an unmapped one: every readable one read exactly, the others not,
 * and the reads after an unreadable one go on. */
static void test_read_spaces(void **state)
{
	enum { N = 2500 };
	const uint16_t off[3] = { offsetof(struct fake_region, bottom),
				  offsetof(struct fake_region, top),
				  offsetof(struct fake_region, end) };
	struct fake_region *r = calloc(N, sizeof(*r));
	uint64_t *objs = calloc(N, sizeof(*objs)), *f = calloc(3 * N, sizeof(*f));
	bool *ok = calloc(N, sizeof(*ok));
	char *pages = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	struct fake_region *edge;

	(void)state;
	assert_non_null(r);
	assert_non_null(objs);
	assert_non_null(f);
	assert_non_null(ok);
	assert_true(pages != MAP_FAILED);
	/* pages: [0] readable, [1] unmapped, [2] readable */
	assert_int_equal(munmap(pages + 4096, 4096), 0);
	edge = (struct fake_region *)(void *)(pages + 4096 - 16); /* bottom readable, top not */
	edge->pad0 = 1;
	for (int i = 0; i < N; i++) {
		r[i].bottom = 1000u * i;
		r[i].top = 1000u * i + (unsigned)i % 7;
		r[i].end = 1000u * i + 999;
		objs[i] = (uintptr_t)&r[i];
	}
	objs[3] = 0;
	objs[10] = (uintptr_t)(pages + 4096 + 64); /* early in its batch: the rest read after */
	objs[1023] = (uintptr_t)(pages + 4096); /* in the unmapped page */
	objs[1024] = (uintptr_t)edge;
	objs[2047] = 0;
	objs[N - 1] = (uintptr_t)(pages + 4096 - 8); /* the last: unreadable */
	memset(ok, 1, N * sizeof(*ok)); /* what the call says, not what was there */
	assert_int_equal(freeze_read_spaces(off, objs, N, f, ok), 0);
	for (int i = 0; i < N; i++) {
		bool bad = i == 3 || i == 10 || i == 1023 || i == 1024 || i == 2047 || i == N - 1;

		assert_int_equal(ok[i], !bad);
		if (bad)
			continue;
		assert_int_equal(f[3 * i], 1000u * i);
		assert_int_equal(f[3 * i + 1], 1000u * i + (unsigned)i % 7);
		assert_int_equal(f[3 * i + 2], 1000u * i + 999);
	}
	/* nothing to read */
	assert_int_equal(freeze_read_spaces(off, objs, 0, f, ok), 0);
	munmap(pages, 4096);
	munmap(pages + 2 * 4096, 4096);
	free(ok);
	free(f);
	free(objs);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sandbox),
		cmocka_unit_test(test_no_threads),
		cmocka_unit_test(test_read_spaces),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
