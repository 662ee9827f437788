/*
 * allocprofile.h - a struct profile (analysis/profile.h) from an allocation
 * sampling session's rows (probe/alloctrace.h): each row's Java stack from
 * the kernel's walker (and libjvm frames on request), its allocating Java
 * frame and class. What `memtrace alloc` writes as collapsed stacks, flame
 * graph and pprof, and what `memtrace serve` answers at /debug/pprof/allocs.
 */
#ifndef MEMTRACE_ALLOCPROFILE_H
#define MEMTRACE_ALLOCPROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "analysis/profile.h"
#include "memtrace/jstack.h"
#include "probe/alloctrace.h"

struct symres;

/* How whole the rows' Java stacks are, by bytes (allocprofile_build). */
struct allocprofile_stacks {
	uint64_t bytes;                     /* rows with a walked Java stack */
	uint64_t cut_bytes[MT_JSTOP_NSTOPS]; /* of them, in stacks cut, by why
					      * (the walker's stop, or "depth"
					      * for one cut at the names' bound) */
};

/* allocprofile_build - the profile of @rows[0..n-1] of @t, libjvm frames
 * too when @vm_frames (they need @sr; @sr may be NULL). When @leaf is not
 * NULL, @leaf[i] gets row i's allocating Java frame (the innermost frame of
 * its walked stack, else its interpreted Method* or compiled pc's name; NULL
 * when unknown; names owned by @t or @sr). When @st is not NULL it gets the
 * bytes in whole and cut stacks. The caller frees the profile with
 * profile_free(); NULL with errno = ENOMEM. */
struct profile *allocprofile_build(struct alloctrace *t, struct symres *sr,
				   const struct alloc_row *rows, size_t n, bool vm_frames,
				   const char **leaf, struct allocprofile_stacks *st);

#endif
