/*
 * profile.h - an in-memory weighted stack-sample aggregate, the input of the
 * profile sinks (sink_collapsed.h, sink_flamegraph.h, sink_pprof.h).
 *
 * A stack is an array of frame names, ROOT FIRST: frames[0] is the outermost
 * frame (e.g. Thread.run), frames[n-1] the leaf (the allocating method, or the
 * allocated class when the caller appends it as a pseudo-frame). This is the
 * order of the collapsed-stack format; pprof's leaf-first order is produced by
 * its writer. Identical stacks are merged: their bytes and counts add up.
 *
 * Frames are interned: each distinct frame - name, source file, line and
 * kind - is stored once and has a dense id (0, 1, ...) in order of first
 * appearance. A frame added by name alone (profile_add) has no file, line 0
 * and kind PROFILE_OTHER. The views that show frames by name (collapsed
 * stacks, the flame graph) merge frames that differ only by line: they key
 * on the label, the name with the kind's suffix (profile_label).
 */
#ifndef MEMTRACE_PROFILE_H
#define MEMTRACE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_PROFILE_MAX_DEPTH 4096 /* frames per stack; deeper ones are refused */

/* How a frame runs; collapsed stacks mark Java frames with async-profiler's
 * suffixes (profile_kind_suffix), which flame graph tools colour by. */
enum profile_kind {
	PROFILE_OTHER = 0,     /* VM code, a marker, the allocated class: no suffix */
	PROFILE_INTERPRETED,   /* "_[0]" */
	PROFILE_C1,            /* "_[1]": compiled by C1 */
	PROFILE_C2,            /* "_[j]": compiled by C2 (JIT, optimized) */
	PROFILE_INLINED,       /* "_[i]": inlined into the next frame towards the root */
	PROFILE_NATIVE,        /* a native Java method (its compiled wrapper): no suffix */
	PROFILE_NKINDS,
};

/* One frame as the caller describes it; strings are copied by profile_add_frames. */
struct profile_frame {
	const char *name;      /* NULL: "[unknown]" */
	const char *file;      /* source file ("Foo.java"), NULL if unknown */
	int32_t line;          /* source line, 0 if unknown */
	uint8_t kind;          /* enum profile_kind */
};

struct profile;

/* One merged stack, as profile_stack_at() shows it. */
struct profile_stack {
	const uint32_t *frames; /* frame ids, root first */
	int n;                  /* number of frames, >= 1 */
	uint64_t bytes;         /* summed weight in bytes */
	uint64_t count;         /* summed sample (or object) count */
};

/* profile_new - an empty profile. Returns NULL with errno = ENOMEM. */
struct profile *profile_new(void);

/* profile_free - free @p and every name it holds; NULL is a no-op. */
void profile_free(struct profile *p);

/*
 * profile_add_frames - add one weighted sample (or an already summed group of
 * them) for the stack @frames[0..n-1], root first. Names and files are
 * copied: the caller keeps ownership of @frames. A NULL name is stored as
 * "[unknown]". Returns 0, -EINVAL if n < 1 or n > MT_PROFILE_MAX_DEPTH or a
 * kind is out of range, -ENOMEM. On error the profile is unchanged.
 */
int profile_add_frames(struct profile *p, const struct profile_frame *frames, int n,
		       uint64_t bytes, uint64_t count);

/* profile_add - profile_add_frames() for frames known by name alone
 * (PROFILE_OTHER, no file or line). */
int profile_add(struct profile *p, const char *const *frames, int n, uint64_t bytes,
		uint64_t count);

/* One group of allocation samples with the same stack, for profile_add_alloc(). */
struct profile_alloc {
	const char *const *frames; /* the native stack walk's frame names, LEAF FIRST
				    * (as BPF gives them); NULL when there is no stack */
	int depth;                 /* names in @frames */
	const char *java_leaf;     /* the allocating Java frame, known from the thread's
				    * frame anchor; NULL if unknown */
	bool interpreted;          /* the sample carries a Method* (interpreted code): the
				    * walk's innermost "[interpreted Java]" is @java_leaf */
	const char *class_name;    /* the allocated class, the pseudo-frame at the leaf */
	uint64_t bytes, count;
	const struct profile_frame *java; /* the whole Java stack from the kernel's walker,
				    * ROOT FIRST; NULL when the sample has none */
	int java_depth;            /* frames in @java */
};

/*
 * profile_add_alloc - stitch one allocation stack together and add it:
 * root first, the allocated class as the leaf. Without
 * -XX:+PreserveFramePointer the native walk stops at (or just past) the JIT
 * runtime stub: the allocating Java frame is put where the walk lost it,
 * between the VM's allocation path and whatever the walk found above it,
 * and an unresolved rest becomes one marker frame ("[callers: run with
 * -XX:+PreserveFramePointer]"). Without a stack the sample is
 * java_leaf (or "[no stack]") -> class. With the walker's Java stack (@java),
 * that is the stack, then - when @frames is given - the VM's frames below
 * the allocating Java frame (the native walk's frames up to its first Java
 * or unresolved one), then the class. Names are copied (profile_add()).
 * Returns 0, -EINVAL (depth < 0, or too deep), -ENOMEM.
 */
int profile_add_alloc(struct profile *p, const struct profile_alloc *a);

/* profile_set_window - the wall-clock window the samples cover (epoch ns and
 * length in ns); pprof records it as time_nanos/duration_nanos. Optional. */
void profile_set_window(struct profile *p, uint64_t start_epoch_ns, uint64_t duration_ns);
void profile_get_window(const struct profile *p, uint64_t *start_epoch_ns, uint64_t *duration_ns);

/* Read access for the sinks. Stacks are numbered 0..profile_nstacks()-1 in
 * order of first appearance; the pointer stays valid until the next
 * profile_add() or profile_free(). */
size_t profile_nstacks(const struct profile *p);
const struct profile_stack *profile_stack_at(const struct profile *p, size_t i);
/* profile_order_by_bytes - the stacks' numbers, heaviest first (equal weights
 * in order of first appearance): a malloc'd array of profile_nstacks()
 * entries (at least one slot) the caller frees, NULL when out of memory. */
size_t *profile_order_by_bytes(const struct profile *p);
/* Distinct frames, and the name of frame @id (NULL if out of range). */
size_t profile_nnames(const struct profile *p);
const char *profile_name(const struct profile *p, uint32_t id);
/* profile_frame - frame @id whole (its strings owned by @p), NULL if out of range. */
const struct profile_frame *profile_frame(const struct profile *p, uint32_t id);
/*
 * profile_label_id - frames with the same name and kind share a label (they
 * differ by line or file only): the label id of frame @id, dense from 0 in
 * order of first appearance; profile_nlabels() of them. UINT32_MAX if @id is
 * out of range.
 */
uint32_t profile_label_id(const struct profile *p, uint32_t id);
size_t profile_nlabels(const struct profile *p);
/* profile_label - the name of label @label with its kind's suffix
 * ("pkg.A.run_[j]"), owned by @p; NULL if out of range. */
const char *profile_label(const struct profile *p, uint32_t label);
/* profile_kind_suffix - "_[0]", "_[1]", "_[j]", "_[i]" or "" (async-profiler's). */
const char *profile_kind_suffix(enum profile_kind k);
/* profile_kind_name - "interpreted", "c1", "c2", "inlined", "native" or "other". */
const char *profile_kind_name(enum profile_kind k);
/* Sums over every stack. */
uint64_t profile_total_bytes(const struct profile *p);
uint64_t profile_total_count(const struct profile *p);

#endif
