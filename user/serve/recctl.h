/*
 * recctl.h - pause and resume the reporting of the `memtrace record`
 * processes recording a JVM, from another memtrace (serve's API): find them
 * by their command line in /proc (same pid namespace, same binary name), and
 * send record's own signals, SIGUSR1 (pause) and SIGUSR2 (resume), only to
 * those that already catch both (a record still starting would die of them).
 */
#ifndef MEMTRACE_RECCTL_H
#define MEMTRACE_RECCTL_H

#include <stdbool.h>
#include <stddef.h>

/*
 * recctl_cmdline_pid - the JVM pid a `memtrace [--json|-q]... record ...`
 * command line records (-p N, -pN, --pid N, --pid=N), given /proc/PID/cmdline
 * (@len bytes of NUL-separated arguments); 0 if it is not such a command.
 * Pure.
 */
int recctl_cmdline_pid(const char *cmdline, size_t len);

/* recctl_catches - whether /proc/PID/status text @status says (SigCgt) that
 * the process catches signal @sig. Pure. */
bool recctl_catches(const char *status, int sig);

struct recctl_result {
	int pids[16];      /* the record processes signalled (first 16) */
	int nsignalled;
	int nstarting;     /* found but not catching the signals yet: left alone */
};

/*
 * recctl_signal - pause (@pause) or resume the reporting of every `memtrace
 * record` of JVM @jvm_pid in our pid namespace. Returns 0 (see @r: none may
 * have been found) or -errno (/proc unreadable).
 */
int recctl_signal(int jvm_pid, bool pause, struct recctl_result *r);

#endif
