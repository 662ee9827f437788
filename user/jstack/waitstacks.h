/*
 * waitstacks.h - the Java stacks of the threads a reading of the JVM's
 * threads (jvm/jthreads.h) finds waiting on a lock, each walked from outside
 * (jwalkmem.h) as soon as the reading has seen it wait, and named
 * (jstackname.h). A stack counts only if the thread did not move during the
 * walk and still waits as the reading saw it once the walk is over: what is
 * printed under a wait is the stack of that wait.
 */
#ifndef MEMTRACE_WAITSTACKS_H
#define MEMTRACE_WAITSTACKS_H

#include <stddef.h>

#include "analysis/profile.h"
#include "jvm/jthreads.h"

struct mt_vmstructs;
struct waitstacks;

/* One waiting thread's stack, named, or why it has none. */
struct waitstack {
	const struct profile_frame *f;  /* ROOT FIRST; NULL when none. Owned by the waitstacks */
	int n;
	int err;  /* 0, or: -EAGAIN the thread moved on while its stack was read,
		   * -ENOENT it has no Java frame, another -errno: unreadable */
};

/*
 * waitstacks_new - stacks for readings of @jt (threads of JVM @vs; both must
 * outlive the result). NULL with errno: ENOENT when the JVM lacks what the
 * walk needs, ENOMEM. Prints nothing.
 */
struct waitstacks *waitstacks_new(const struct mt_vmstructs *vs, struct jthreads *jt);
/* waitstacks_free - NULL is a no-op. */
void waitstacks_free(struct waitstacks *w);

/*
 * waitstacks_visit - a jthreads_visit_fn (@ctx: a struct waitstacks): walk
 * and name the stack of waiting thread @th, the @i-th of its reading. A
 * reading visited again (jthreads_read_stable() retries) replaces what an
 * earlier one left.
 */
void waitstacks_visit(void *ctx, const struct jthread *th, size_t i);

/*
 * waitstacks_get - the stack of the @i-th thread of the last reading; a
 * thread the reading did not see waiting has none (-ENOENT). The stack is
 * valid until @w is visited again or freed.
 */
struct waitstack waitstacks_get(const struct waitstacks *w, size_t i);

/* waitstacks_error - -ENOMEM when a visit could not keep a stack, else 0. */
int waitstacks_error(const struct waitstacks *w);

#endif
