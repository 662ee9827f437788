// SPDX-License-Identifier: GPL-2.0
/* stopflag.c - the one stop flag of memtrace's commands (stopflag.h). */
#include <string.h>

#include "lib/stopflag.h"

static volatile sig_atomic_t exiting;

static void on_stop(int sig)
{
	exiting = 1;
}

void stopflag_catch(struct stopflag_saved *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_stop;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, old ? &old->intr : NULL);
	sigaction(SIGTERM, &sa, old ? &old->term : NULL);
}

void stopflag_restore(const struct stopflag_saved *old)
{
	sigaction(SIGINT, &old->intr, NULL);
	sigaction(SIGTERM, &old->term, NULL);
}

bool stopflag_raised(void)
{
	return exiting;
}
