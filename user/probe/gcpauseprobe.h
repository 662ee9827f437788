/*
 * gcpauseprobe.h - the uprobes on the JVM's own GC clock, what JFR reads:
 *   - the entries of GCTimer::register_gc_pause_start(const char *name,
 *     const Ticks &) and GCTimer::register_gc_pause_end(const Ticks &): every
 *     stop-the-world pause of a concurrent cycle (out of line they serve G1's
 *     remark and cleanup and every ZGC and Shenandoah pause), JFR's
 *     jdk.GCPhasePause and sumOfPauses;
 *   - the entries of GCTracer::report_gc_start(GCCause::Cause, const Ticks &)
 *     and GCTracer::report_gc_end(const Ticks &, TimePartitions *): every
 *     collection as jdk.GarbageCollection counts it (each collector's), whose
 *     Ticks give a memory manager's cycle JFR's duration (memtrace/gc.h).
 * Found by their mangled names in libjvm's .symtab (the names pin the
 * signatures the BPF side reads its arguments by). Used by `gc`, `top`,
 * `serve` (gctrace.c) and the record collector (collector.c).
 */
#ifndef MEMTRACE_GCPAUSEPROBE_H
#define MEMTRACE_GCPAUSEPROBE_H

#include <stdbool.h>

struct bpf_program;
struct bpf_link;
struct mt_elf;
struct mt_proc;

/* The four programs, in the order of the links gcpauseprobe_attach() fills. */
enum { GCPAUSEPROBE_PAUSE_BEGIN, GCPAUSEPROBE_PAUSE_END, GCPAUSEPROBE_TRACE_BEGIN,
       GCPAUSEPROBE_TRACE_END, GCPAUSEPROBE_N };

/* gcpauseprobe_present - true when libjvm @e has GCTimer's two functions (doctor). */
bool gcpauseprobe_present(const struct mt_elf *e);

/*
 * gcpauseprobe_attach - attach @progs[i] at the function GCPAUSEPROBE_i names
 * in @p's libjvm @e (the caller's, opened with elfsym_open; NULL: it could
 * not be); links[i] gets each link (the caller destroys them; NULL:
 * not attached) - or, when @fds is not NULL, each is a uprobe_multi link
 * (probe/uprobemulti.h; @progs loaded for one) whose fd goes to fds[i] (-1:
 * not attached; the caller closes them) and links[i] stays NULL. GCTracer's pair is attached when libjvm has it (without it
 * collections keep their memory managers' durations). Returns 0; -ENOENT when
 * libjvm lacks GCTimer's pair: nothing is printed, nothing attached, *@why
 * says what is missing and the caller goes on with the pauses HotSpot's
 * gc__begin and gc__end probes bracket; other -errno after printing why a
 * uprobe did not attach (nothing is left attached).
 */
int gcpauseprobe_attach(struct bpf_program *const progs[GCPAUSEPROBE_N], const struct mt_proc *p,
			const struct mt_elf *e, struct bpf_link *links[GCPAUSEPROBE_N],
			int *fds, const char **why);

#endif
