// SPDX-License-Identifier: GPL-2.0
/* fastexit.c - exit, the memory freed by a helper after (see fastexit.h). */
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/fastexit.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define HELPER_STACK (64u << 10)
#define WAIT_MS      10000 /* the most the helper waits for memtrace's end */

/* Resident bytes of this process (/proc/self/statm), 0 if unknown. */
static uint64_t rss_bytes(void)
{
	unsigned long long size, res = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &res) != 2)
		res = 0;
	fclose(f);
	return (uint64_t)res * (uint64_t)sysconf(_SC_PAGESIZE);
}

/* The helper, on its own stack in memtrace's memory: only system calls (the
 * C library's state is memtrace's, which is exiting). @arg: the pidfd of
 * memtrace. */
static int helper(void *arg)
{
	int pidfd = *(int *)arg;
	struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

	prctl(PR_SET_NAME, (unsigned long)"memtrace-exit", 0, 0, 0); /* named first */
	/* its copies of memtrace's files (a pipe reading memtrace's output
	 * must see its end when memtrace ends, not when the helper does) */
	if (pidfd > 0)
		syscall(SYS_close_range, 0u, (unsigned)pidfd - 1, 0u);
	syscall(SYS_close_range, (unsigned)pidfd + 1, ~0u, 0u);
	syscall(SYS_poll, &pfd, 1, WAIT_MS);
	syscall(SYS_exit, 0);
	return 0;
}

pid_t fastexit_helper(uint64_t min_rss)
{
	static int pidfd = -1; /* read by the helper: must outlive this frame */
	char *stack;
	pid_t pid;
	int err;

	if (rss_bytes() < min_rss)
		return 0;
	pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (pidfd < 0)
		return -errno;
	/* never unmapped: the helper runs on it until the memory goes */
	stack = mmap(NULL, HELPER_STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	if (stack == MAP_FAILED) {
		err = -errno;
		close(pidfd);
		return err;
	}
	/* no exit signal to memtrace (it is leaving); a reaper gets SIGCHLD */
	pid = clone(helper, stack + HELPER_STACK, CLONE_VM | CLONE_UNTRACED, &pidfd);
	if (pid < 0) {
		err = -errno;
		munmap(stack, HELPER_STACK);
		close(pidfd);
		return err;
	}
	return pid;
}

void fastexit(int rc)
{
	fflush(NULL);
	fastexit_helper(FASTEXIT_MIN_RSS);
	exit(rc);
}
