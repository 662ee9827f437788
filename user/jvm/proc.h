/* proc.h - what /proc tells about a (JVM) process, across namespaces. */
#ifndef MEMTRACE_PROC_H
#define MEMTRACE_PROC_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include "jvm/jvmid.h"

struct mt_proc {
	int pid;                 /* host pid (the one the user typed) */
	int nspid;               /* pid inside its own pid namespace (last NStgid) */
	uid_t uid, gid;          /* effective uid/gid of the target */
	char comm[32];
	bool other_pidns;        /* pid namespace differs from ours */
	bool other_mntns;        /* mount namespace differs from ours */
	struct jvmid ident;      /* its container and pod (jvm/jvmid.h) */
	char root[64];           /* "/proc/PID/root": prefix for the target's paths */
	char cwd[64];            /* "/proc/PID/cwd" */
	char libjvm[PATH_MAX];   /* libjvm.so path as the target sees it ("" if none) */
	char libjvm_host[PATH_MAX + 64]; /* the same, opened from here: root + libjvm */
	uint64_t libjvm_base;    /* address of libjvm's mapping at file offset 0 */
	char java_home[PATH_MAX];/* from libjvm path: .../lib/server/libjvm.so */
	char jdk_version[64];    /* JAVA_VERSION from java_home/release, "" if unknown */
	int jdk_major;           /* 17, 25, ... 0 if unknown */
	char jdk_vendor[64];     /* IMPLEMENTOR from release, "" if unknown */
	char main_class[256];    /* main class, -jar file or -m module from cmdline */
};

/*
 * proc_open - fill *p for host pid @pid.
 * Returns 0; -ESRCH if no such process; -ENOEXEC if it is not a HotSpot JVM
 * (no libjvm.so mapped executable, as memtrace maps it to read its symbols;
 * a frozen copy memtrace's agent forked; or, when its map may not be read, a
 * kernel thread or a process none of whose threads is "VM Thread");
 * -EACCES/-EPERM if /proc
 * denies us the map of what looks like a JVM; other -errno.
 * Prints nothing: the caller chooses the message (see proc_explain()).
 */
int proc_open(int pid, struct mt_proc *p);

/* proc_explain - print the p_err() matching proc_open()'s error for @pid,
 * naming the cause: no such process, a kernel thread, not a JVM, a JVM we
 * may not read (as root: protected from us; else: privileges). */
void proc_explain(int pid, int err);

/* proc_parse_kthread - whether /proc/PID/stat text @stat has PF_KTHREAD in
 * its flags. Pure: unit-tested. */
bool proc_parse_kthread(const char *stat);

/* proc_parse_starttime - field 22 of /proc/PID/stat text @stat (clock ticks
 * after boot the process started) into *@ticks: 0 or -EINVAL. */
int proc_parse_starttime(const char *stat, unsigned long long *ticks);

/* proc_start_time - the epoch second host pid @pid started (its starttime
 * plus /proc/stat's btime), or 0 when unknown. */
time_t proc_start_time(int pid);

/* proc_exists - true while host pid @pid is alive (and not a zombie). */
bool proc_exists(int pid);

/* proc_sched_ns - the CPU time every thread of @pid has run (*@run) and the
 * time they waited, runnable, for a CPU (*@wait, if not NULL), in ns: the
 * sums of /proc/PID/task/TID/schedstat's first two fields (exact, unlike
 * stat's ticks). Returns 0 or -errno (-ENOENT: no thread could be read). */
int proc_sched_ns(int pid, uint64_t *run, uint64_t *wait);

/* proc_wait_gone - wait up to @ms for host pid @pid to exit (a JVM whose
 * sockets just closed on us may be dying: killed, its threads still being
 * torn down). Returns true if it is gone. */
bool proc_wait_gone(int pid, int ms);

/* proc_list_jvms - host pids of every process that runs libjvm.so (mapped
 * executable), but memtrace's own processes and its agent's frozen copies.
 * Returns the count (>= 0) and a malloc'd array in *pids (caller frees),
 * or -errno. */
int proc_list_jvms(int **pids);

/* proc_read_mem - read @len bytes at @addr of the target through /proc/PID/mem.
 * Returns 0 or -errno (-EIO on a short read). */
int proc_read_mem(int pid, uint64_t addr, void *buf, size_t len);

/* proc_main_class - pick the main class / -jar / -m module out of a NUL
 * separated java command line (@args, @len bytes) into @out. Pure: unit-tested. */
void proc_main_class(const char *args, size_t len, char *out, size_t outlen);

/* proc_parse_release - JAVA_VERSION and IMPLEMENTOR from a JDK release file's
 * text; fills version ("" if absent), vendor, and returns the major (0 if unknown). */
int proc_parse_release(const char *text, char *version, size_t vlen, char *vendor, size_t nlen);

/* proc_parse_nstgid - last number of the NStgid: line in a status file's text,
 * or -1. */
int proc_parse_nstgid(const char *status);

#endif
