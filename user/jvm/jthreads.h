/*
 * jthreads.h - the Java threads of a live JVM and what each is blocked on,
 * read from the JVM's memory as jstack sees it, without a safepoint, an
 * agent or a JVM flag:
 *   - a monitor it is blocked entering (JavaThread::_current_pending_monitor),
 *     its object's class, and the monitor's owner (monowner.h);
 *   - a monitor it waits on in Object.wait() (JavaThread::_current_waiting_monitor):
 *     nobody can be named until a notify comes; once notified (or timed out)
 *     the thread enters the monitor again and may block there on its owner,
 *     as jstack's "waiting to re-lock in wait()";
 *   - the object it is parked on (java.lang.Thread.parkBlocker, set by
 *     LockSupport.park(blocker)), its class and what it is (jucblocker.h): a
 *     lock and its owner or readers, a condition and its lock (waiting for a
 *     signal), or something nobody holds (a latch, a queue);
 *   - its java.lang.Thread state, as jstack prints it.
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
	JTHREAD_PARKED,       /* parked with a blocker (java.util.concurrent), not a condition */
	JTHREAD_OBJWAIT,      /* in Object.wait() on the monitor: until a notify or its timeout */
	JTHREAD_RELOCK,       /* Object.wait() over, blocked entering its monitor again */
	JTHREAD_CONDITION,    /* parked in Condition.await(): until a signal or its timeout */
};

struct jthread {
	uint64_t jt;             /* JavaThread* */
	uint32_t tid;            /* kernel tid (host view) */
	int32_t state;           /* JavaThreadState (_thread_blocked = 10, ...) */
	uint32_t status;         /* java.lang.Thread's threadStatus (JVMTI state bits), 0 unread */
	char name[64];           /* java.lang.Thread.name ("" if unreadable) */
	int wait;                /* enum jthread_wait */
	uint64_t lock;           /* ObjectMonitor* or the blocker object */
	uint64_t lock_obj;       /* the monitor's object, or the blocker object */
	char lock_class[160];    /* Java name of lock_obj's class */
	uint32_t owner_tid;      /* kernel tid of the owner, 0 if none or unknown */
	uint64_t owner_jt;       /* the owner's JavaThread*, 0 if none or unknown */
	int blocker;             /* JTHREAD_PARKED: enum jucblocker_kind of the blocker */
	uint32_t readers;        /* JTHREAD_PARKED on a read-write lock: its read holds */
	uint64_t cond_lock;      /* JTHREAD_CONDITION: the condition's lock object, 0 unread */
	char cond_lock_class[160]; /* its class, "" if unread */
	bool stable;             /* jthreads_read_stable: both readings saw this wait */
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

/* Called on a waiting thread @th, the @i-th of its reading, as soon as it is
 * read (its owner's tid is not filled in yet). */
typedef void (*jthreads_visit_fn)(void *ctx, const struct jthread *th, size_t i);

/*
 * jthreads_read_stable - jthreads_read() twice, @gap_us apart (retrying while
 * the thread list changes), returning the second reading with stable set on
 * every thread that both readings saw wait on the same lock for the same
 * owner: only those can make a deadlock (a busy lock changes hands between
 * readings). @visit, if not NULL, is called on each waiting thread of the
 * second reading as soon as it is read (a reading retried calls it again).
 * Returns 0 or -errno.
 */
int jthreads_read_stable(struct jthreads *t, unsigned gap_us, jthreads_visit_fn visit, void *ctx,
			 struct jthread **out, size_t *n);

/*
 * jthreads_same_wait - whether the thread of @th (one of a reading) still
 * waits as that reading saw it: blocked, the same way, on the same lock.
 * Callers that read more of a waiting thread (its stack) check with it that
 * what they read belongs to the wait. 1 yes, 0 no, or -errno.
 */
int jthreads_same_wait(struct jthreads *t, const struct jthread *th);

/* jthreads_wait_name - "monitor", "parked", "object_wait", "relock",
 * "condition" or "running". */
const char *jthreads_wait_name(int wait);

/* jthreads_status_name - java.lang.Thread.State of JVMTI state bits @status
 * as jstack prints it ("WAITING (on object monitor)", "BLOCKED (on object
 * monitor)", "TIMED_WAITING (parking)" ...), "UNKNOWN" for 0. */
const char *jthreads_status_name(uint32_t status);

/* jthreads_timed - a thread whose @status says it waits with a timeout. */
bool jthreads_timed(uint32_t status);

#endif
