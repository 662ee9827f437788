/*
 * gcendprobe.h - the uprobe that gives every collection its cause: the entry
 * of GCMemoryManager::gc_end(bool, bool, bool, bool, GCCause::Cause, bool,
 * const char *message), found by its mangled name in libjvm's .symtab (the
 * name pins the signature the BPF side reads its arguments by), and the
 * names of the causes of that libjvm (jvm/gccause.h). Used by `gc`, `top`,
 * `serve` (gctrace.c) and the record collector (collector.c).
 */
#ifndef MEMTRACE_GCENDPROBE_H
#define MEMTRACE_GCENDPROBE_H

#include "jvm/gccause.h"

#define GCENDPROBE_SYM "_ZN15GCMemoryManager6gc_endEbbbbN7GCCause5CauseEbPKc"

struct bpf_program;
struct bpf_link;
struct mt_elf;
struct mt_proc;

/*
 * gcendprobe_attach - read @p's cause names into @t from its libjvm @e (the
 * caller's, opened with elfsym_open; NULL: it could not be), then attach
 * @prog at GCMemoryManager::gc_end; *@link gets the link (the caller destroys
 * it) - or, when @fd is not NULL, the uprobe is a uprobe_multi link
 * (probe/uprobemulti.h; @prog loaded for one) whose fd goes to *@fd (-1:
 * none; the caller closes it) and *@link stays NULL. Returns 0; -ENOENT / -ENOTSUP when libjvm lacks the symbols or
 * GCCause::to_string has another shape: nothing is printed, nothing
 * attached, *@why says what is missing and the caller goes on without causes;
 * other -errno after printing why the uprobe did not attach.
 */
int gcendprobe_attach(struct bpf_program *prog, const struct mt_proc *p, const struct mt_elf *e,
		      struct bpf_link **link, int *fd, struct gccause_table *t, const char **why);

#endif
