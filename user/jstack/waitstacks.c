// SPDX-License-Identifier: GPL-2.0
/* waitstacks.c - the stacks of waiting threads, read from outside; see waitstacks.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jstack/jstackname.h"
#include "jstack/jwalk.h"
#include "jstack/jwalkmem.h"
#include "jstack/waitstacks.h"

/* Frames kept per named stack: the walk's, and a cut mark. */
#define MAX_FRAMES (MT_JSTACK_MAX_DEPTH + 1)

struct waitstacks {
	const struct mt_vmstructs *vs;
	struct jthreads *jt;
	struct jwalk_layout jw;
	struct jstackname *jn;
	struct waitstack *st;           /* [cap] */
	struct profile_frame *frames;   /* [cap * MAX_FRAMES] */
	size_t cap;
	int err;
};

struct waitstacks *waitstacks_new(const struct mt_vmstructs *vs, struct jthreads *jt)
{
	struct waitstacks *w = calloc(1, sizeof(*w));
	int err;

	if (!w) {
		errno = ENOMEM;
		return NULL;
	}
	w->vs = vs;
	w->jt = jt;
	err = jwalk_layout(vs, &w->jw);
	if (err || !(w->jn = jstackname_new(vs, &w->jw))) {
		err = err ? err : -errno;
		free(w);
		errno = -err;
		return NULL;
	}
	return w;
}

void waitstacks_free(struct waitstacks *w)
{
	if (!w)
		return;
	jstackname_free(w->jn);
	free(w->frames);
	free(w->st);
	free(w);
}

/* Make room for index @i. 0 or -ENOMEM. */
static int room(struct waitstacks *w, size_t i)
{
	size_t cap = w->cap ? w->cap : 64;
	struct waitstack *st;
	struct profile_frame *fr;

	while (cap <= i)
		cap *= 2;
	if (cap == w->cap)
		return 0;
	st = realloc(w->st, cap * sizeof(*st));
	if (!st)
		return -ENOMEM;
	w->st = st;
	memset(st + w->cap, 0, (cap - w->cap) * sizeof(*st));
	fr = realloc(w->frames, cap * MAX_FRAMES * sizeof(*fr));
	if (!fr)
		return -ENOMEM;
	w->frames = fr;
	for (size_t k = 0; k < w->cap; k++) /* the frames moved with their array */
		if (st[k].f)
			st[k].f = fr + k * MAX_FRAMES;
	w->cap = cap;
	return 0;
}

void waitstacks_visit(void *ctx, const struct jthread *th, size_t i)
{
	struct waitstacks *w = ctx;
	struct waitstack *st;
	struct mt_jstack js;
	int err;

	if (w->err || (w->err = room(w, i)))
		return;
	st = &w->st[i];
	*st = (struct waitstack){ 0 };
	err = jwalkmem_walk(w->vs, &w->jw.bpf, th->jt, &js);
	if (!err && jthreads_same_wait(w->jt, th) != 1)
		err = -EAGAIN;
	st->err = err;
	if (err)
		return;
	st->f = w->frames + i * MAX_FRAMES;
	st->n = jstackname_frames_full(w->jn, &js, 0, w->frames + i * MAX_FRAMES, MAX_FRAMES, false);
}

struct waitstack waitstacks_get(const struct waitstacks *w, size_t i)
{
	if (!w || i >= w->cap || (!w->st[i].f && !w->st[i].err))
		return (struct waitstack){ .err = -ENOENT };
	return w->st[i];
}

int waitstacks_error(const struct waitstacks *w)
{
	return w ? w->err : 0;
}
