/*
 * locks.h - monitor contention from a reported event stream (live or from a
 * recording): contended entries and wait times per monitor and per class,
 * java.util.concurrent parks and Thread.sleep per blocker class (waits of
 * kind MT_WAIT_PARK / MT_WAIT_SLEEP), the wait graph (thread blocked
 * entering a monitor or parked on a blocker -> the thread owning it) and
 * the deadlocks its cycles are.
 *
 * The owner of a monitor is the thread that last acquired it (after a
 * contended entry) and has not released it. Entries that were never
 * contended are invisible to the probes; for those, @owner_fn (live mode:
 * collector_monitor_owner(), ObjectMonitor::_owner through VMStructs) asks
 * the JVM; wait edges say which source named the owner (owner_from).
 *
 * Analysis only: locks_report_new() returns the figures as data, and
 * user/sink/lockprint.h prints them as `memtrace locks` does.
 */
#ifndef MEMTRACE_LOCKS_H
#define MEMTRACE_LOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/profile.h"
#include "memtrace/events.h"

/* Longest cycle of the wait graph found (threads in it). */
#define LOCKS_MAX_CYCLE 64

struct locks;

/* Kernel tid of @lock's owner per the JVM itself, 0 if unknown. */
typedef uint64_t (*locks_owner_fn)(void *ctx, uint64_t lock);

/* Contention summed over the monitors of one class. */
struct locks_class {
	const char *name;     /* "(unknown class)" when its type is unknown */
	uint64_t monitors;    /* monitors with a contended entry or an Object.wait */
	uint64_t contended;   /* blocked entries */
	uint64_t wait_ns;     /* time blocked entering, summed */
	uint64_t wait_max;    /* longest one blocked entry */
	uint64_t waits;       /* Object.wait() calls ended */
	uint64_t notify_ns;   /* time in Object.wait(), summed */
};

/* How a thread waited without a monitor. */
enum locks_park_how {
	LOCKS_PARK = 0,        /* LockSupport.park: until unparked */
	LOCKS_PARK_TIMED = 1,  /* parkNanos / parkUntil */
	LOCKS_SLEEP = 2,       /* Thread.sleep */
	LOCKS_NHOW,
};

/* Parks (or sleeps) of one blocker class and one way of waiting. The parks
 * on a blocker are contended when it is a lock that had an owner (an
 * AbstractOwnableSynchronizer's) when one of them began, or a lock of
 * locks_class_is_lock(); the others are waiting (conditions, queues,
 * latches, parkNanos, sleeps: nothing anyone holds) - the rule `memtrace
 * locks` applies per blocker. */
struct locks_park {
	const char *name;      /* the blocker's class, "(no blocker)", "Thread.sleep",
				* "(unknown class)", "(blocker not read)" */
	enum locks_park_how how;
	uint64_t blockers;     /* distinct blocker objects (per thread for the other two) */
	uint64_t parks;        /* parks ended */
	uint64_t ns, max_ns;   /* time parked, summed; the longest */
	uint64_t contended;    /* parks on blockers that were contended locks */
	uint64_t contended_ns;
};

/* Where the owner of a monitor was learnt from. */
enum locks_owner_from {
	LOCKS_OWNER_UNKNOWN,  /* nowhere: owner is 0 */
	LOCKS_OWNER_STREAM,   /* its (contended) entry in the event stream */
	LOCKS_OWNER_JVM,      /* the owner function (entered uncontended) */
};

/* What a blocked thread waits for. */
enum locks_lock_kind {
	LOCKS_MONITOR,        /* entering a monitor (synchronized) */
	LOCKS_PARKED,         /* parked on a java.util.concurrent lock (its blocker object) */
	LOCKS_OBJWAIT,        /* in Object.wait() on a monitor: no owner until a notify */
	LOCKS_RELOCK,         /* entering a monitor again after its Object.wait() */
	LOCKS_CONDITION,      /* in Condition.await() (the blocker is the condition): no
			       * owner until a signal */
};

/* One edge of the wait graph: a blocked thread -> the owner of its lock. */
struct locks_edge {
	uint64_t tid;            /* the blocked thread */
	const char *thread;      /* its name, "" if unknown */
	uint64_t monitor;        /* the monitor it waits for, or the blocker object */
	const char *cls;         /* the monitor's class; NULL when the monitor is unknown */
	uint64_t owner;          /* the owner's tid, 0 if unknown */
	const char *owner_name;  /* "" if unknown */
	enum locks_owner_from owner_from;
	uint64_t blocked_ns;     /* blocked for, at the report's time (parks: the current
				  * park's, from its begin) */
	enum locks_lock_kind kind;
	bool since_before;       /* blocked since before tracing began: blocked_ns unknown (0) */
	/* what only the JVM's memory tells (locks_report_add()'s edges) */
	bool untimed;            /* blocked_ns unknown: the wait's probes were off */
	bool transient;          /* its owner was seen in one reading only (a lock changing
				  * hands): shown, never part of a deadlock */
	uint32_t readers;        /* parked on a read-write lock: its read holds */
	bool lock_free;          /* parked on a lock (ReentrantLock, a read-write lock) that
				  * had no owner and no reader at the reading: handed over */
	uint64_t cond_lock;      /* LOCKS_CONDITION: the condition's lock, 0 unknown */
	const char *cond_cls;    /* its class, NULL unknown */
	const struct profile_frame *frames; /* the waiter's stack, ROOT FIRST, NULL: none */
	int nframes;
	int frames_err;          /* frames NULL: why (-EAGAIN the thread moved on while
				  * its stack was read, -ENOENT no Java frame, another
				  * -errno unreadable; 0 not asked for) */
};

/* One cycle of the wait graph (a deadlock): edge[0] is the blocked thread
 * with the smallest tid, edge[i + 1] the one owning what edge[i] waits for. */
struct locks_cycle {
	size_t n;
	size_t edge[LOCKS_MAX_CYCLE];  /* indexes into the edges it was found in */
};

/* The analysis at one time. Names point into the struct locks it was made
 * from: valid until that is fed or freed. */
struct locks_report {
	struct locks_class *classes;   /* by time blocked, most first, then name */
	size_t nclasses;
	struct locks_edge *edges;      /* threads blocked now */
	size_t nedges;
	struct locks_cycle *cycles;    /* deadlocks, in the order of their first edge */
	size_t ncycles;
	struct locks_park *parks;      /* parks and sleeps by (class, how), most time first */
	size_t nparks;
};

/* locks_new - empty; NULL on ENOMEM. */
struct locks *locks_new(void);
/* locks_free - NULL is a no-op. */
void locks_free(struct locks *l);
/* locks_feed - one reported event (@text: an MT_EV_NAME's name). */
void locks_feed(struct locks *l, const struct mt_ev *e, const char *text);
/* locks_lock_class - the class of lock object @lock (a monitor), "(unknown
 * class)" when its type is unknown, NULL when the stream never named it.
 * Borrowed from @l. */
const char *locks_lock_class(const struct locks *l, uint64_t lock);
/*
 * locks_class_is_lock - whether a blocker of Java class @cls is a lock whose
 * every park is contention, owner or not: a ReentrantLock's or a
 * ReentrantReadWriteLock's Sync (a writer waits for readers, who are no
 * owner; a lock just let go is handed over to a parked waiter). Pure.
 */
bool locks_class_is_lock(const char *cls);
/* locks_sync_events - synchronization events seen. */
uint64_t locks_sync_events(const struct locks *l);

/*
 * locks_report_new - contention per class, the wait graph and its cycles at
 * time @now (monotonic ns). Owners the stream does not know are asked of
 * @owner (with @ctx) when it is not NULL, once per blocked thread. The
 * caller owns the result (free with locks_report_free()); it borrows names
 * from @l. Returns NULL with errno = ENOMEM.
 */
struct locks_report *locks_report_new(const struct locks *l, uint64_t now, locks_owner_fn owner,
				      void *ctx);
/*
 * locks_report_add - append to @r the @n edges of @e whose thread has none
 * yet (threads the stream does not show blocked: parked on
 * java.util.concurrent locks, or blocked before tracing began, read from the
 * JVM); an edge of the stream's on the same thread and lock takes the stack
 * of @e's. Then find the cycles again over the whole graph. The edges'
 * strings and frames are borrowed: they must outlive @r. Returns 0 or
 * -ENOMEM (@r unchanged).
 */
int locks_report_add(struct locks_report *r, const struct locks_edge *e, size_t n);
/* locks_report_free - NULL is a no-op. */
void locks_report_free(struct locks_report *r);

/*
 * locks_find_cycles - the cycles of a wait graph of @n edges (each blocked
 * thread has one: edges[i].tid waits for edges[i].owner; an owner that is
 * not blocked itself ends the chain, and a transient edge waits for no one). Each cycle is returned once, from
 * its member with the smallest tid, in the order of that member's edge;
 * cycles longer than LOCKS_MAX_CYCLE are not found. Pure. On success
 * *@out is an array the caller frees (NULL when there is none) and the
 * return value its length; -ENOMEM otherwise.
 */
int locks_find_cycles(const struct locks_edge *edges, size_t n, struct locks_cycle **out);

#endif
