/*
 * tlabprobe.h - the two uprobes every allocation counter of memtrace stands
 * on: AllocTracer::send_allocation_in_new_tlab (weight: the new TLAB) and
 * ::send_allocation_outside_tlab (weight: the object), found by their
 * mangled names in libjvm's .symtab (below). Used by `alloc` (alloctrace.c), the record collector
 * (collector.c) and the per-site counters of `leaks` (sitecount.c).
 */
#ifndef MEMTRACE_TLABPROBE_H
#define MEMTRACE_TLABPROBE_H

#include <stdint.h>

/* The two methods' mangled names (doctor looks them up too). */
#define TLABPROBE_SYM_NEW_TLAB \
	"_ZN11AllocTracer27send_allocation_in_new_tlabEP5KlassPP12HeapWordImplmmP10JavaThread"
#define TLABPROBE_SYM_OUTSIDE_TLAB \
	"_ZN11AllocTracer28send_allocation_outside_tlabEP5KlassPP12HeapWordImplmP10JavaThread"

struct bpf_program;
struct bpf_link;
struct mt_elf;
struct mt_proc;

/*
 * tlabprobe_attach - attach @progs[0] at send_allocation_in_new_tlab and
 * @progs[1] at send_allocation_outside_tlab of @p's libjvm (@e: that file,
 * opened from p->libjvm_host). On success @links holds both (the caller
 * destroys them); on failure neither stays attached and @links is NULL'ed.
 * Returns 0; -ENOENT when libjvm lacks a symbol (stripped): nothing is
 * printed, *@missing names the method, and the caller says what it loses;
 * other -errno after printing why the uprobe did not attach.
 */
int tlabprobe_attach(struct bpf_program *const progs[2], const struct mt_elf *e,
		     const struct mt_proc *p, struct bpf_link *links[2], const char **missing);

/*
 * tlabprobe_offsets - the file offsets in @e (libjvm of @p) of the two
 * methods, in tlabprobe_attach()'s order. 0; -ENOENT with *@missing named
 * (nothing printed); other -errno after printing why.
 */
int tlabprobe_offsets(const struct mt_elf *e, const struct mt_proc *p, uint64_t off[2],
		      const char **missing);

/*
 * tlabprobe_attach_multi - as tlabprobe_attach(), through uprobe_multi links
 * (probe/uprobemulti.h: @progs loaded with its expected attach type) at the
 * offsets @off of tlabprobe_offsets(): @fds gets the links' fds (the caller
 * closes them), or both -1 on failure. 0 or -errno (printed).
 */
int tlabprobe_attach_multi(struct bpf_program *const progs[2], const struct mt_proc *p,
			   const uint64_t off[2], int fds[2]);

#endif
