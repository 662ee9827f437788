// SPDX-License-Identifier: GPL-2.0
/*
 * test_agent_freeze - the frozen copy's seccomp filters: a thread of its
 * own but no process, file or socket (freeze_seccomp()); once its records
 * are written, no thread either (freeze_no_threads()).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sandbox),
		cmocka_unit_test(test_no_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
