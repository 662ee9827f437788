/*
 * monowner.h - the owner of a HotSpot ObjectMonitor, read from the JVM's
 * memory through VMStructs, for monitors whose owner entered without
 * contention (the hotspot:monitor__* probes only see contended entries).
 *
 * ObjectMonitor::_owner holds, depending on the JDK:
 *   JDK 17      the owning JavaThread*, or the address of the BasicLock on
 *               the owner's stack when a stack-locked object was inflated
 *               by a contending thread (the owner never re-entered since);
 *   JDK 24+     the owner's monitor owner id (JavaThread::_monitor_owner_id,
 *               the Java thread id), or ANONYMOUS_OWNER when a contending
 *               thread inflated an object fast-locked by another: the owner
 *               is then the thread whose lock stack (JavaThread::_lock_stack)
 *               holds the object.
 * Threads come from ThreadsSMRSupport::_java_thread_list; a JavaThread's
 * kernel tid from OSThread::_thread_id.
 */
#ifndef MEMTRACE_MONOWNER_H
#define MEMTRACE_MONOWNER_H

#include <stdint.h>

struct mt_vmstructs;
struct monowner;

/* monowner_new - the layout from @vs (which must outlive the result).
 * NULL with errno ENOENT when @vs lacks a needed entry, ENOMEM. */
struct monowner *monowner_new(const struct mt_vmstructs *vs);
/* monowner_free - NULL is a no-op. */
void monowner_free(struct monowner *m);
/*
 * monowner_tid - kernel tid of the thread owning the ObjectMonitor at
 * @monitor now, 0 when it has no owner or the owner cannot be told (the
 * lists change under us: a best-effort reading).
 */
uint64_t monowner_tid(struct monowner *m, uint64_t monitor);

#endif
