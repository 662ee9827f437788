/*
 * jthreads.h - the Java threads of a live JVM and what each is blocked on,
 * read from the JVM's memory as jstack's deadlock detection sees it, without
 * a safepoint, an agent or a JVM flag:
 *   - a monitor it is blocked entering (JavaThread::_current_pending_monitor),
 *     its object's class, and the monitor's owner (monowner.h);
 *   - the object it is parked on (java.lang.Thread.parkBlocker, set by
 *     LockSupport.park(blocker)), its class, and - when the blocker is an
 *     AbstractOwnableSynchronizer (ReentrantLock's and ReentrantReadWriteLock's
 *     Sync, ThreadPoolExecutor's Worker ...) - its exclusiveOwnerThread.
 * Threads come from ThreadsSMRSupport::_java_thread_list. The lists and
 * objects change under us: a reading is a best-effort snapshot (callers that
 * need a stable answer, e.g. a deadlock, read twice and keep what agrees).
 */
#ifndef MEMTRACE_JTHREADS_H
#define MEMTRACE_JTHREADS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_proc;
struct mt_vmstructs;
struct jthreads;

enum jthread_wait {
	JTHREAD_RUNNING = 0,  /* not blocked on a lock we can name */
	JTHREAD_MONITOR,      /* blocked entering a monitor (synchronized) */
	JTHREAD_PARKED,       /* parked with a blocker (java.util.concurrent) */
};

struct jthread {
	uint64_t jt;             /* JavaThread* */
	uint32_t tid;            /* kernel tid (host view) */
	int32_t state;           /* JavaThreadState (_thread_blocked = 10, ...) */
	char name[64];           /* java.lang.Thread.name ("" if unreadable) */
	int wait;                /* enum jthread_wait */
	uint64_t lock;           /* ObjectMonitor* or the blocker object */
	uint64_t lock_obj;       /* the monitor's object, or the blocker object */
	char lock_class[160];    /* Java name of lock_obj's class */
	uint32_t owner_tid;      /* kernel tid of the owner, 0 if none or unknown */
	uint64_t owner_jt;       /* the owner's JavaThread*, 0 if none or unknown */
};

/*
 * jthreads_new - the layout for JVM @p (@vs its tables, which must outlive the
 * result). NULL with errno: ENOENT when a table entry is missing, ENOMEM,
 * or another errno from reading the target.
 * Prints nothing.
 */
struct jthreads *jthreads_new(const struct mt_proc *p, const struct mt_vmstructs *vs);
/* jthreads_free - NULL is a no-op. */
void jthreads_free(struct jthreads *t);

/*
 * jthreads_read - every Java thread now, into *@out (malloc'd, the caller
 * frees; *@n entries). Returns 0 or -errno (-EAGAIN when the thread list
 * changed while it was read).
 */
int jthreads_read(struct jthreads *t, struct jthread **out, size_t *n);

/*
 * jthreads_read_stable - jthreads_read() twice, @gap_us apart (retrying while
 * the thread list changes), returning the second reading with the owner of
 * every thread cleared (owner_tid, owner_jt = 0) unless both readings saw it
 * wait on the same lock for the same owner: what a deadlock needs. Returns 0
 * or -errno.
 */
int jthreads_read_stable(struct jthreads *t, unsigned gap_us, struct jthread **out, size_t *n);

/* jthreads_wait_name - "monitor", "parked" or "running". */
const char *jthreads_wait_name(int wait);

#endif
