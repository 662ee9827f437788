/*
 * jframes.h - what memtrace needs to name Java frames from outside the JVM:
 * the JavaThread frame-anchor offsets and the interpreter's code range (for
 * bpf/alloc.bpf.c), and Method* -> "pkg.Class.method" through VMStructs.
 */
#ifndef MEMTRACE_JFRAMES_H
#define MEMTRACE_JFRAMES_H

#include <stddef.h>
#include <stdint.h>

struct mt_vmstructs;

struct jframes_layout {
	uint32_t anchor_sp, anchor_pc, anchor_fp; /* offsets in JavaThread; 0 if unknown */
	uint64_t interp_lo, interp_hi;            /* interpreter code; 0/0 if unknown */
	uint64_t cc_lo, cc_hi;                    /* the code cache; 0/0 if unknown */
	/* Method* -> name */
	uint64_t method_const, const_constants, const_name_index, cp_holder, cp_size;
	int names_ok;
};

/* jframes_layout - fill @l from @vs. Returns 0 when the anchor offsets are
 * known (the rest may be missing: zeros), -ENOENT otherwise. */
int jframes_layout(const struct mt_vmstructs *vs, struct jframes_layout *l);

/* jframes_method_name - "pkg.Class.method" of Method* @method, read from the
 * live JVM. Returns 0 or -errno (the method's class may be gone). */
int jframes_method_name(const struct mt_vmstructs *vs, const struct jframes_layout *l,
			uint64_t method, char *out, size_t len);

#endif
