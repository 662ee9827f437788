/* privs.h - memtrace's own privileges, named the way the user must fix them. */
#ifndef MEMTRACE_PRIVS_H
#define MEMTRACE_PRIVS_H

#include <stdbool.h>
#include <stdint.h>

#define MT_CAP_SYS_PTRACE 19
#define MT_CAP_SYS_ADMIN 21
#define MT_CAP_PERFMON 38
#define MT_CAP_BPF 39

/* privs_effective - our effective capability mask (0 if unreadable). */
uint64_t privs_effective(void);
/* privs_has - true when capability @cap is effective. */
bool privs_has(int cap);
/*
 * privs_require_bpf - check what loading BPF and attaching uprobes needs:
 * CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN). Prints one p_err() naming
 * what is missing and returns -EPERM; 0 when all is there.
 */
int privs_require_bpf(const char *what);

#endif
