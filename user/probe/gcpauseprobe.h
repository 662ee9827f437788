/*
 * gcpauseprobe.h - the uprobes that time every stop-the-world pause of a
 * concurrent cycle: the entries of GCTimer::register_gc_pause_start(const
 * char *name, const Ticks &) and GCTimer::register_gc_pause_end(const Ticks &),
 * found by their mangled names in libjvm's .symtab (the names pin the
 * signatures the BPF side reads its arguments by). They are what JFR's
 * jdk.GCPhasePause and sumOfPauses are made of; out of line they serve G1's
 * remark and cleanup and every ZGC and Shenandoah pause (memtrace/gc.h).
 * Used by `gc`, `top`, `serve` (gctrace.c) and the record collector
 * (collector.c).
 */
#ifndef MEMTRACE_GCPAUSEPROBE_H
#define MEMTRACE_GCPAUSEPROBE_H

#include <stdbool.h>

struct bpf_program;
struct bpf_link;
struct mt_elf;
struct mt_proc;

/* gcpauseprobe_present - true when libjvm @e has both functions (doctor). */
bool gcpauseprobe_present(const struct mt_elf *e);

/*
 * gcpauseprobe_attach - attach @begin at GCTimer::register_gc_pause_start and
 * @end at GCTimer::register_gc_pause_end of @p's libjvm; links[0] and
 * links[1] get the links (the caller destroys them). Returns 0; -ENOENT when
 * libjvm lacks the symbols: nothing is printed, nothing attached, *@why says
 * what is missing and the caller goes on with the pauses HotSpot's gc__begin
 * and gc__end probes bracket; other -errno after printing why a uprobe did
 * not attach (nothing is left attached).
 */
int gcpauseprobe_attach(struct bpf_program *begin, struct bpf_program *end,
			const struct mt_proc *p, struct bpf_link *links[2], const char **why);

#endif
