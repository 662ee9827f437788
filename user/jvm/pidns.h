/* pidns.h - where memtrace's pid namespace sits, for the BPF pid filters. */
#ifndef MEMTRACE_PIDNS_H
#define MEMTRACE_PIDNS_H

#include <stdbool.h>
#include <stdint.h>

#include "jvm/proc.h"

/* The inode of the host's (initial) pid namespace (PROC_PID_INIT_INO). */
#define MT_PIDNS_INIT_INO 0xEFFFFFFCu

/* pidns_self_is_init - true when memtrace runs in the host's pid namespace
 * (or when that cannot be read: then pids are taken as host pids). */
bool pidns_self_is_init(void);

/*
 * pidns_targ_tgid - the value for a BPF program's targ_tgid filter for JVM
 * @p: p->pid in the host's pid namespace; 0 (no filter) in a pid namespace
 * below it, where p->pid is not the host tgid that bpf_get_current_pid_tgid()
 * returns. Callers attach their uprobes to p->pid alone, so the kernel
 * filters by process there already.
 */
uint32_t pidns_targ_tgid(const struct mt_proc *p);

#endif
