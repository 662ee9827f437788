// SPDX-License-Identifier: GPL-2.0
/*
 * agent.c - the state of memtrace's JVMTI agent (struct agent, one per loaded
 * library) and the helpers every part of the agent uses: the log line, the
 * monotonic clock and the socket thread's wake-up.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"

struct agent agent = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake_fd = -1,
};

void agent_log(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	/* one write(2): lines of concurrent JVM threads do not interleave */
	if (write(STDERR_FILENO, "memtrace-agent: ", 16) < 0 || write(STDERR_FILENO, line, n) < 0)
		return;
}

uint64_t agent_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void agent_wake(void)
{
	uint64_t one = 1;

	if (agent.wake_fd >= 0 && write(agent.wake_fd, &one, sizeof(one)) < 0)
		return;
}
