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
 * Frame names are interned: each distinct name is stored once and has a
 * dense id (0, 1, ...) in order of first appearance.
 */
#ifndef MEMTRACE_PROFILE_H
#define MEMTRACE_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MT_PROFILE_MAX_DEPTH 4096 /* frames per stack; deeper ones are refused */

struct profile;

/* One merged stack, as profile_stack_at() shows it. */
struct profile_stack {
	const uint32_t *frames; /* frame name ids, root first */
	int n;                  /* number of frames, >= 1 */
	uint64_t bytes;         /* summed weight in bytes */
	uint64_t count;         /* summed sample (or object) count */
};

/* profile_new - an empty profile. Returns NULL with errno = ENOMEM. */
struct profile *profile_new(void);

/* profile_free - free @p and every name it holds; NULL is a no-op. */
void profile_free(struct profile *p);

/*
 * profile_add - add one weighted sample (or an already summed group of them)
 * for the stack @frames[0..n-1], root first. The names are copied: the caller
 * keeps ownership of @frames. A NULL frame is stored as "[unknown]".
 * Returns 0, -EINVAL if n < 1 or n > MT_PROFILE_MAX_DEPTH, -ENOMEM.
 * On error the profile is unchanged.
 */
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
	const char *const *java;   /* the whole Java stack from the kernel's walker, ROOT
				    * FIRST; NULL when the sample has none */
	int java_depth;            /* names in @java */
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
/* Distinct frame names and the name of id @id (NULL if out of range). */
size_t profile_nnames(const struct profile *p);
const char *profile_name(const struct profile *p, uint32_t id);
/* Sums over every stack. */
uint64_t profile_total_bytes(const struct profile *p);
uint64_t profile_total_count(const struct profile *p);

#endif
