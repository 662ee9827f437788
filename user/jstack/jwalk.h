/*
 * jwalk.h - user side of the BPF HotSpot stack walker (bpf/jstack.bpf.h):
 * the JVM layout it needs, read from VMStructs (and the x86_64 frame
 * constants VMStructs does not export), and the naming of the raw frames it
 * delivers (include/memtrace/jstack.h).
 */
#ifndef MEMTRACE_JWALK_H
#define MEMTRACE_JWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/jstack.h"

struct mt_vmstructs;

/* What a frame turned out to be when named. */
enum jwalk_kind {
	JWALK_UNKNOWN = 0,  /* could not be read, or no longer what it was */
	JWALK_INTERP,       /* an interpreted Java frame */
	JWALK_COMPILED,     /* a compiled Java frame (an nmethod) */
	JWALK_STUB,         /* a runtime stub or adapter: VM code */
};

struct jwalk_layout {
	struct mt_jwalk_layout bpf;  /* for targ_jw */
	/* naming: CodeBlob and nmethod */
	uint64_t blob_size, blob_name, nm_method;
	uint64_t blob_kind;          /* CodeBlob::_kind (JDK 21+), else 0 */
	int32_t kind_nmethod;        /* CodeBlobKind::Nmethod */
	bool has_kind;
};

/*
 * jwalk_layout - fill @l from the live JVM's tables @vs. Returns 0, or
 * -ENOENT when something the walk needs is missing (then @l->bpf.nheaps is
 * 0 and the walker stays off).
 */
int jwalk_layout(const struct mt_vmstructs *vs, struct jwalk_layout *l);

/*
 * jwalk_leaf - the allocating Java frame of stack @st: the first frame that
 * is not a stub. Interpreted: *method = its Method*, *pc = 0; compiled:
 * *pc = its pc, *method = 0. Both 0 when none.
 */
void jwalk_leaf(const struct mt_vmstructs *vs, const struct jwalk_layout *l,
		const struct mt_jstack *st, uint64_t *pc, uint64_t *method);

/*
 * jwalk_frame_method - the Method* of frame @f (interpreted: its own;
 * compiled: the nmethod's, read now from the live code cache) and what the
 * frame is. A compiled frame whose blob no longer holds its pc, is no longer
 * an nmethod, or is an nmethod of another method than when the frame was
 * walked (@f->m: the blob was freed and its memory reused), is JWALK_UNKNOWN. Returns the kind; *method is 0
 * unless the kind is JWALK_INTERP or JWALK_COMPILED. For JWALK_STUB, @stub
 * (@len bytes, may be NULL) gets the blob's name, sanitised.
 */
enum jwalk_kind jwalk_frame_method(const struct mt_vmstructs *vs, const struct jwalk_layout *l,
				   const struct mt_jframe *f, uint64_t *method, char *stub,
				   size_t len);

/* jwalk_name_ok - @s is valid UTF-8 without control characters, and not empty. Pure. */
bool jwalk_name_ok(const char *s);

/* jwalk_stop_name - "end", "no_anchor", "depth", ... for enum mt_jstack_stop. */
const char *jwalk_stop_name(uint32_t stop);

#endif
