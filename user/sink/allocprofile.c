// SPDX-License-Identifier: GPL-2.0
/* allocprofile.c - the profile of an allocation sampling session (see
 * allocprofile.h); moved here from cmd_alloc.c so that serve builds the same. */
#include <errno.h>

#include "jstack/symres.h"
#include "sink/allocprofile.h"

/* The allocating Java frame of a row without a walked stack: an interpreted
 * method by its Method*, or compiled code by its pc (perf map). NULL when
 * unknown. */
static const char *java_leaf(struct alloctrace *t, struct symres *sr, const struct alloc_row *r)
{
	const char *name;

	if (r->method && (name = alloctrace_method_name(t, r->method, r->gen)))
		return name;
	if (r->java_pc && sr) {
		name = symres_name(sr, r->java_pc);
		if (name[0] != '[')
			return name;
	}
	return NULL;
}

/* The profile: each row's stack named (leaf first) and stitched together by
 * profile_add_alloc() with its allocating Java frame and class. @leaf[i]
 * (unless @leaf is NULL) gets row i's allocating Java frame: the innermost frame of its walked stack
 * (compiled frames expanded, so the method that allocated even when it was
 * inlined), else java_leaf(); NULL when unknown. Names are owned by @t/@sr. */
struct profile *allocprofile_build(struct alloctrace *t, struct symres *sr,
				   const struct alloc_row *rows, size_t n, bool vm_frames,
				   const char **leaf)
{
	struct profile *prof = profile_new();
	uint64_t ips[64];
	const char *f[64];
	struct profile_frame java[136];

	if (!prof)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		int depth = sr ? alloctrace_stack(t, rows[i].stack_id, ips, 64) : -ENOENT;
		struct profile_alloc a = {
			.frames = depth < 0 ? NULL : f,
			.depth = depth < 0 ? 0 : depth,
			.java_leaf = java_leaf(t, sr, &rows[i]),
			.interpreted = rows[i].method != 0,
			.class_name = rows[i].class_name,
			.bytes = rows[i].bytes,
			.count = rows[i].samples,
		};

		/* the whole Java stack from the kernel's walker, libjvm frames on request */
		a.java_depth = alloctrace_java_frames_full(t, &rows[i], java, 136, vm_frames);
		if (leaf) {
			leaf[i] = a.java_leaf;
			for (int d = a.java_depth - 1; d >= 0; d--)
				if (java[d].kind != PROFILE_OTHER) { /* the innermost Java frame */
					leaf[i] = java[d].name;
					break;
				}
		}
		if (a.java_depth >= 0) {
			a.java = java;
			if (!vm_frames)
				a.frames = NULL, a.depth = 0;
		}
		for (int d = 0; d < a.depth; d++) /* leaf first, as BPF gives them */
			f[d] = symres_name(sr, ips[d]);
		profile_add_alloc(prof, &a);
	}
	return prof;
}
