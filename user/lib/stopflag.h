/*
 * stopflag.h - the one stop flag of memtrace's commands (stopflag.c; the
 * `static volatile sig_atomic_t exiting` of libbpf-tools): SIGINT and SIGTERM
 * set it, the command's loop reads it and ends as on --duration.
 */
#ifndef MEMTRACE_STOPFLAG_H
#define MEMTRACE_STOPFLAG_H

#include <signal.h>
#include <stdbool.h>

/* The handlers stopflag_catch() replaced. */
struct stopflag_saved {
	struct sigaction intr, term;
};

/* stopflag_catch - from now on SIGINT and SIGTERM set the flag (handlers as
 * signal(2) installs them: system calls restart where they can; poll(2)
 * and nanosleep(2) return EINTR); @old (NULL: not kept) gets the handlers
 * they replace, for stopflag_restore(). */
void stopflag_catch(struct stopflag_saved *old);
/* stopflag_restore - put back the handlers stopflag_catch() saved in @old
 * (the flag stays as it is). */
void stopflag_restore(const struct stopflag_saved *old);
/* stopflag_raised - a SIGINT or SIGTERM came since the process began. */
bool stopflag_raised(void);

#endif
