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
#include "probe/alloctrace.h"

struct symres;

/* allocprofile_java_leaf - the allocating Java frame of row @r: an
 * interpreted method by its Method*, or compiled code by its pc (@sr's perf
 * map; @sr may be NULL). NULL when unknown; the name is owned by @t or @sr. */
const char *allocprofile_java_leaf(struct alloctrace *t, struct symres *sr,
				   const struct alloc_row *r);

/* allocprofile_build - the profile of @rows[0..n-1] of @t, libjvm frames
 * too when @vm_frames (they need @sr). The caller frees it with
 * profile_free(); NULL with errno = ENOMEM. */
struct profile *allocprofile_build(struct alloctrace *t, struct symres *sr,
				   const struct alloc_row *rows, size_t n, bool vm_frames);

#endif
