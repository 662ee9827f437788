/*
 * monflag.h - switch HotSpot's DTraceMonitorProbes flag on in a running JVM.
 *
 * HotSpot tests the flag each time a monitor probe site is reached
 * (ObjectMonitor::enter/exit/wait, `if (DTraceMonitorProbes)`), so writing
 * `true` into the flag's byte (address from VMStructs' JVMFlag table, written
 * through /proc/PID/mem) turns the hotspot:monitor__* probes on without a
 * restart; writing the old value back turns them off. Only with the user's
 * explicit consent (--enable-monitor-probes); what is written is printed.
 */
#ifndef MEMTRACE_MONFLAG_H
#define MEMTRACE_MONFLAG_H

#include <stdbool.h>
#include <stdint.h>

struct mt_proc;

struct monflag {
	int pid;
	uint64_t addr;   /* the flag's byte in the JVM */
	bool was;        /* its value before */
	bool changed;    /* we wrote it (restore on exit) */
};

/* monflag_get - read the flag. Returns 0 (*on set, *m filled) or -errno
 * (printed with p_err()). */
int monflag_get(const struct mt_proc *p, struct monflag *m, bool *on);
/* monflag_enable - set the flag to true (if it is not), printing what is
 * changed. Returns 0 or -errno (printed). */
int monflag_enable(const struct mt_proc *p, struct monflag *m);
/* monflag_restore - write the old value back if we changed it (printed; a
 * JVM that exited needs none: said as information). */
void monflag_restore(struct monflag *m);

#endif
