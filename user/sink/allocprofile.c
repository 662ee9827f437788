// SPDX-License-Identifier: GPL-2.0
/* allocprofile.c - the profile of an allocation sampling session (see
 * allocprofile.h); moved here from cmd_alloc.c so that serve builds the same. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jstack/jstackname.h"
#include "jstack/symres.h"
#include "sink/allocprofile.h"

/* The allocating Java frame of a row without a walked stack: an interpreted
 * method by its Method*, or compiled code by its pc (perf map). NULL when
 * unknown. */
static const char *java_leaf(struct alloctrace *t, struct symres *sr, const struct alloc_row *r)
{
	const char *name;

	if (r->content_only)
		return "[no sampled stack: in TLAB contents]";
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
				   const char **leaf, struct allocprofile_stacks *st)
{
	/* the walker's stack, a cut marker, and libjvm frames on request */
	const int maxj = MT_JSTACK_MAX_DEPTH + 1 + (vm_frames ? 64 : 0);
	struct profile *prof = profile_new();
	struct profile_frame *java = calloc(maxj, sizeof(*java));
	uint64_t ips[64];
	const char *f[64];

	if (st)
		memset(st, 0, sizeof(*st));
	if (!prof || !java) {
		profile_free(prof);
		free(java);
		errno = ENOMEM;
		return NULL;
	}
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
		a.java_depth = alloctrace_java_frames_full(t, &rows[i], java, maxj, vm_frames);
		if (st && a.java_depth > 0) {
			int why = jstackname_cut(java[0].name);

			st->bytes += rows[i].bytes;
			if (why > 0)
				st->cut_bytes[why] += rows[i].bytes;
		}
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
	free(java);
	return prof;
}
