/*
 * jthreadlist.h - every Java thread's JavaThread* and allocation counter
 * (Thread::_allocated_bytes: what ThreadMXBean.getThreadAllocatedBytes
 * reads, less the open TLAB), from ThreadsSMRSupport::_java_thread_list,
 * without a safepoint. A light reading for many times a second (the duty
 * cycle's windows, probe/threadctr.h): the list's array, then one word per
 * thread. jthreads.h reads the same list for names and locks.
 */
#ifndef MEMTRACE_JTHREADLIST_H
#define MEMTRACE_JTHREADLIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_vmstructs;

#define JTHREADLIST_MAX 65536

struct jthreadlist {
	const struct mt_vmstructs *vs; /* must outlive it */
	uint64_t list_addr, tl_length, tl_threads, allocated;
};

/* jthreadlist_layout - the offsets from @vs. 0 or -ENOENT (a table entry
 * missing). Prints nothing. */
int jthreadlist_layout(const struct mt_vmstructs *vs, struct jthreadlist *l);

/*
 * jthreadlist_read - the threads now: *@jts and *@ctr (one malloc'd block
 * each, the caller frees both; NULL when *@n is 0) and *@ok (malloc'd:
 * whether each counter was read). Returns 0; -EAGAIN when the list was
 * replaced while read (threads came or went: read again); -EPROTO for a
 * length past JTHREADLIST_MAX; -ENOMEM; other -errno from reading.
 */
int jthreadlist_read(const struct jthreadlist *l, uint64_t **jts, uint64_t **ctr, bool **ok,
		     size_t *n);

#endif
