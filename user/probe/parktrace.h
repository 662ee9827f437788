/*
 * parktrace.h - java.util.concurrent contention of one JVM from the
 * hotspot:thread__park__begin/end and thread__sleep__* probes (no JVM flag, no
 * agent): load bpf/park.bpf.c with the Java field offsets it needs, keep its
 * map of the JVM's threads current, and read the per-blocker counters.
 */
#ifndef MEMTRACE_PARKTRACE_H
#define MEMTRACE_PARKTRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/jstack.h"
#include "memtrace/park.h"

struct mt_proc;
struct mt_vmstructs;
struct parktrace;

/* Waiters' stacks kept per blocker (the ones with the most time parked). */
#define PARKTRACE_STACKS 3
/* Names per stack: the walker's default depth and a cut marker (the
 * innermost frames are kept). */
#define PARKTRACE_FRAMES (MT_JSTACK_DEFAULT_DEPTH + 1)

/* One waiter stack of a blocker. */
struct parktrace_stack {
	uint64_t parks, ns;
	int n;                                  /* names in frames */
	const char *frames[PARKTRACE_FRAMES];   /* ROOT FIRST; owned by the tracer */
};

/* One blocker (or "no blocker") with its parks. */
struct parktrace_lock {
	struct mt_park_key key;
	struct mt_park_val v;
	char cls[160];     /* Java name of the blocker's class; "" for no blocker */
	bool ownable;      /* the class is an AbstractOwnableSynchronizer: owners are real */
	bool lock;         /* ... and a lock whose parks are all contention, owner seen or
			    * not (locks_class_is_lock(): ReentrantLock's, a read-write lock's) */
	char owner[64];    /* the last owner's thread name ("tid N" if never seen), "" none */
	char waiter[64];   /* the last parking thread's name, likewise */
	struct parktrace_stack stacks[PARKTRACE_STACKS]; /* with --stacks: by time parked */
	int nstacks;
};

/* One monitor's contended entries with the contending threads' stacks
 * (--stacks; the hotspot:monitor__contended__* probes). */
struct parktrace_monitor {
	uint64_t monitor;          /* the ObjectMonitor* (the event stream's lock id) */
	const char *cls;           /* its object's class: unset here, for the caller */
	uint64_t entries;          /* contended entries that ended */
	uint64_t ns, max_ns;       /* time blocked entering, summed; the longest */
	uint64_t unwalked;         /* entries of threads not listed yet: no stack */
	/* the stacks with the most time blocked (stacks[i].parks: entries), the
	 * raw stacks that name the same frames merged */
	struct parktrace_stack stacks[PARKTRACE_STACKS];
	int nstacks;
};

/*
 * parktrace_new - trace JVM @p (@vs its tables, which must outlive the
 * result) from now on; with @stacks, walk each parking thread's Java stack
 * (bpf/jstack.bpf.h: a few microseconds per park), and each thread's that
 * contends for a monitor (hotspot:monitor__contended__enter: they fire while
 * -XX:+DTraceMonitorProbes is on). Prints what failed (p_err)
 * and returns NULL with errno set; free with parktrace_free().
 */
struct parktrace *parktrace_new(const struct mt_proc *p, const struct mt_vmstructs *vs,
				bool stacks);
/*
 * parktrace_new_stream - trace JVM @p's parks and sleeps as events
 * (include/memtrace/jvmev.h: MT_J_PARK_*, MT_J_SLEEP_*) into the ring buffer
 * @events_fd, counting the ones it cannot take in the per-CPU array
 * @drops_fd (the collector's jvm_events and jvm_drops: one buffer keeps
 * each thread's events in order). Nothing is aggregated: parktrace_read()
 * finds no blocker. Call parktrace_refresh() periodically as with
 * parktrace_new(). Prints what failed; NULL with errno set.
 */
struct parktrace *parktrace_new_stream(const struct mt_proc *p, const struct mt_vmstructs *vs,
				       int events_fd, int drops_fd);
/* parktrace_free - detach and unload; NULL is a no-op. */
void parktrace_free(struct parktrace *t);

/*
 * parktrace_refresh - give the BPF program the JVM's current threads (kernel
 * tid -> JavaThread*) and, once java.util.concurrent's
 * AbstractOwnableSynchronizer is loaded, the owner field's offset. Call it
 * periodically (threads come and go). Returns 0 or -errno; nothing printed.
 */
int parktrace_refresh(struct parktrace *t);

/*
 * parktrace_read - the counters so far, one entry per blocker (its waiters'
 * stacks, with --stacks, inside it), sorted by time parked (descending),
 * into *@out (malloc'd, the caller frees; *@n entries). Returns 0 or -errno.
 */
int parktrace_read(struct parktrace *t, struct parktrace_lock **out, size_t *n);

/*
 * parktrace_read_monitors - with stacks: the contended monitor entries so
 * far, one row per monitor, by time blocked (descending), into *@out
 * (malloc'd, the caller frees; *@n rows). Returns 0 or -errno.
 */
int parktrace_read_monitors(struct parktrace *t, struct parktrace_monitor **out, size_t *n);

/* parktrace_lock_name - the blocker's class, "Thread.sleep" or "(no blocker)". */
const char *parktrace_lock_name(const struct parktrace_lock *l);
/* parktrace_lock_contended - an ownable lock that had an owner when a thread
 * parked on it, or a ReentrantLock's or read-write lock's Sync (contention),
 * as opposed to waiting (conditions, queues, latches, futures, parkNanos,
 * sleeps: nothing anyone holds). */
bool parktrace_lock_contended(const struct parktrace_lock *l);

/*
 * parktrace_ownable - 1 when class @klass (a Klass*) extends
 * AbstractOwnableSynchronizer (its owner slot names a real owner), else 0
 * (also while that class is not found yet). Cached per Klass*;
 * parktrace_forget_classes() empties the cache (classes were unloaded).
 */
int parktrace_ownable(struct parktrace *t, uint64_t klass);
void parktrace_forget_classes(struct parktrace *t);
/* parktrace_host_tid - the host tid of the JVM's thread @tid (an owner as the
 * JVM names it: in its own pid namespace), 0 when not mapped yet. */
uint32_t parktrace_host_tid(struct parktrace *t, uint32_t tid);

/*
 * parktrace_park_since - when the park of thread @host_tid now in progress
 * began (*@since, monotonic ns), for a thread found parked on @blocker: 0
 * when its park on @blocker is in progress; -ENOENT when no park of the
 * thread was seen since tracing began (it has been parked since before);
 * -ESRCH when it is not parked now, or parked on another blocker (it has
 * moved on since it was found).
 */
int parktrace_park_since(struct parktrace *t, uint32_t host_tid, uint64_t blocker,
			 uint64_t *since);

/* parktrace_stats - the per-CPU counters summed (enum mt_park_stat), and
 * MT_PARK_MISSED. */
void parktrace_stats(struct parktrace *t, uint64_t out[MT_PARK_NSTATS]);
/* parktrace_misses - probe hits the kernel skipped these programs for
 * (another BPF program was running on that CPU): parks, sleeps or entries
 * neither counted nor streamed. */
uint64_t parktrace_misses(struct parktrace *t);

#endif
