/*
 * uprobecost.h - what one uprobe hit costs on this machine (the trap into
 * the kernel and back, with a no-op BPF program attached), measured on a
 * function of memtrace's own: the part of a sample's cost that BPF's own
 * clock cannot see (probe/dutycycle.h needs the whole cost).
 */
#ifndef MEMTRACE_UPROBECOST_H
#define MEMTRACE_UPROBECOST_H

struct bpf_program;

/* Used when the measurement fails (memtrace stripped, attach refused):
 * bench/probe_cost measured 1.2-1.35 us here (kernel 6.18, 2-core VM); a
 * later VM of the same kind read 5.0 us (stop 22): machines differ 4x. */
#define UPROBECOST_DEFAULT_NS 1300.0

/*
 * uprobecost_measure - attach @noop (a BPF uprobe program that returns 0 and
 * is not attached anywhere else) to a function of this process, call it
 * @calls times with and without it, and give the difference per call in *ns.
 * Takes about @calls x 1.5 us. Returns 0, or -errno (nothing is left attached).
 */
int uprobecost_measure(struct bpf_program *noop, int calls, double *ns);

/*
 * uprobecost_target - returns @x + 1; the function of memtrace's own that
 * uprobes are measured on (and probe/uprobemulti.c tries a uprobe_multi
 * link on). It begins with `push %rbp` as the JVM functions probed do.
 */
int uprobecost_target(int x);

#endif
