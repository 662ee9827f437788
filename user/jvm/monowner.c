// SPDX-License-Identifier: GPL-2.0
/* monowner.c - ObjectMonitor::_owner -> kernel tid through VMStructs. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "jvm/hotspot.h"
#include "jvm/monowner.h"
#include "jvm/vmstructs.h"

/* JavaThreads looked at, at most (a snapshot of the threads list). */
#define MAX_THREADS 65536
/* LockStack::CAPACITY is 8 (JDK 21-25); read a little more, bounded by _top. */
#define MAX_LOCK_STACK 16

struct monowner {
	const struct mt_vmstructs *vs;
	uint64_t om_owner, om_object;       /* ObjectMonitor::_owner, _object (a WeakHandle) */
	uint64_t list_addr;                 /* &ThreadsSMRSupport::_java_thread_list */
	uint64_t tl_length, tl_threads;     /* ThreadsList::_length, _threads */
	uint64_t jt_osthread, os_tid;       /* JavaThread::_osthread, OSThread::_thread_id */
	uint64_t jt_stack_base, jt_stack_size;
	bool have_stack;
	bool owner_id;                      /* _owner is an owner id (JDK 24+) */
	uint64_t jt_owner_id;               /* JavaThread::_monitor_owner_id */
	bool have_anon;
	uint64_t anon;                      /* ObjectMonitor::ANONYMOUS_OWNER */
	bool have_lock_stack;
	uint64_t jt_lock_stack, ls_top, ls_base;
};

struct monowner *monowner_new(const struct mt_vmstructs *vs)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	struct monowner *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->vs = vs;
	if (!hs->has_objectmonitor_owner || !hs->has_objectmonitor_object ||
	    !hs->threadssmrsupport_java_thread_list || !hs->has_threadslist_length ||
	    !hs->has_threadslist_threads || !hs->has_javathread_osthread ||
	    !hs->has_osthread_thread_id) {
		free(m);
		errno = ENOENT;
		return NULL;
	}
	m->om_owner = hs->objectmonitor_owner;
	m->om_object = hs->objectmonitor_object;
	m->list_addr = hs->threadssmrsupport_java_thread_list;
	m->tl_length = hs->threadslist_length;
	m->tl_threads = hs->threadslist_threads;
	m->jt_osthread = hs->javathread_osthread;
	m->os_tid = hs->osthread_thread_id;
	m->have_stack = hs->has_javathread_stack_base && hs->has_javathread_stack_size;
	m->jt_stack_base = hs->javathread_stack_base;
	m->jt_stack_size = hs->javathread_stack_size;
	m->owner_id = hs->has_javathread_monitor_owner_id;
	m->jt_owner_id = hs->javathread_monitor_owner_id;
	m->have_anon = hs->has_objectmonitor_anonymous_owner;
	m->anon = hs->objectmonitor_anonymous_owner;
	m->have_lock_stack = hs->has_javathread_lock_stack && hs->has_lockstack_top &&
			     hs->has_lockstack_base;
	m->jt_lock_stack = hs->javathread_lock_stack;
	m->ls_top = hs->lockstack_top;
	m->ls_base = hs->lockstack_base;
	return m;
}

void monowner_free(struct monowner *m)
{
	free(m);
}

/* Does @jt's lock stack hold @obj? (_top: byte offset from the JavaThread.) */
static bool lock_stack_holds(struct monowner *m, uint64_t jt, uint64_t obj)
{
	uint32_t top;
	uint64_t first = m->jt_lock_stack + m->ls_base;

	if (vmstructs_read(m->vs, jt + m->jt_lock_stack + m->ls_top, &top, sizeof(top)))
		return false;
	for (uint64_t off = first; off < top && off < first + 8 * MAX_LOCK_STACK; off += 8) {
		uint64_t o;

		if (!vmstructs_read_ptr(m->vs, jt + off, &o) && o == obj)
			return true;
	}
	return false;
}

/* Is JavaThread @jt the owner recorded as @owner (object @obj when anonymous)? */
static bool owns(struct monowner *m, uint64_t jt, uint64_t owner, uint64_t obj)
{
	uint64_t v, base, size;

	if (m->have_anon && owner == m->anon)
		return obj && m->have_lock_stack && lock_stack_holds(m, jt, obj);
	if (m->owner_id)
		return !vmstructs_read_ptr(m->vs, jt + m->jt_owner_id, &v) && v == owner;
	if (jt == owner)
		return true;
	/* a BasicLock in the owner's frames: within its stack */
	if (!m->have_stack || vmstructs_read_ptr(m->vs, jt + m->jt_stack_base, &base) ||
	    vmstructs_read_ptr(m->vs, jt + m->jt_stack_size, &size))
		return false;
	return owner < base && owner >= base - size;
}

uint64_t monowner_tid(struct monowner *m, uint64_t monitor)
{
	uint64_t owner, handle, obj = 0, list, threads, os;
	uint32_t n;
	int32_t tid;

	if (!m || vmstructs_read_ptr(m->vs, monitor + m->om_owner, &owner) || !owner)
		return 0;
	if (m->have_anon && owner == m->anon &&
	    !vmstructs_read_ptr(m->vs, monitor + m->om_object, &handle) && handle)
		vmstructs_read_ptr(m->vs, handle, &obj);
	if (vmstructs_read_ptr(m->vs, m->list_addr, &list) || !list ||
	    vmstructs_read(m->vs, list + m->tl_length, &n, sizeof(n)) ||
	    vmstructs_read_ptr(m->vs, list + m->tl_threads, &threads) || !threads)
		return 0;
	for (uint32_t i = 0; i < n && i < MAX_THREADS; i++) {
		uint64_t jt;

		if (vmstructs_read_ptr(m->vs, threads + 8ull * i, &jt) || !jt)
			continue;
		if (!owns(m, jt, owner, obj))
			continue;
		if (vmstructs_read_ptr(m->vs, jt + m->jt_osthread, &os) || !os ||
		    vmstructs_read(m->vs, os + m->os_tid, &tid, sizeof(tid)) || tid <= 0)
			return 0;
		return (uint64_t)tid;
	}
	return 0;
}
