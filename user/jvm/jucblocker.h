/*
 * jucblocker.h - what a thread parked in java.util.concurrent waits for,
 * read from its blocker (java.lang.Thread.parkBlocker, set by
 * LockSupport.park(blocker)) in the JVM's memory:
 *   - an AbstractOwnableSynchronizer (ReentrantLock's and
 *     ReentrantReadWriteLock's Sync, a pool's Worker, a latch's Sync ...):
 *     the thread owning it now (exclusiveOwnerThread), if any;
 *   - a ReentrantLock's or ReentrantReadWriteLock's Sync is a lock: a park on
 *     it is contention even when it has no owner at this instant (readers
 *     hold a read-write lock, whose owner field names only a writer; or the
 *     holder has just let go and hands the lock over to the parked thread);
 *     a read-write lock's read holds now are the upper half of its state (an
 *     int's 16 bits up to JDK 21, a long's 32 bits since);
 *   - a condition (AbstractQueuedSynchronizer$ConditionObject or the Long
 *     one): the thread waits for a signal, and nobody can be named before it
 *     comes; the condition's lock is its enclosing synchronizer (this$0).
 * Classes are told by their names up the blocker's superclass chain; field
 * offsets come from the classes' own field tables (jvm/javafield.h).
 */
#ifndef MEMTRACE_JUCBLOCKER_H
#define MEMTRACE_JUCBLOCKER_H

#include <stdbool.h>
#include <stdint.h>

#include "jvm/jobject.h"

struct mt_vmstructs;
struct jucblocker;

/* What a blocker is (one of). */
enum jucblocker_kind {
	JUCB_OTHER = 0,   /* not ownable: a latch's count, a queue, a future, a phaser */
	JUCB_OWNABLE,     /* an AbstractOwnableSynchronizer: contended when it has an owner */
	JUCB_LOCK,        /* a ReentrantLock's or ReentrantReadWriteLock's Sync: always contended */
	JUCB_CONDITION,   /* a Condition of a synchronizer: waiting for a signal */
};

struct jucblocker_info {
	enum jucblocker_kind kind;
	uint64_t owner_jt;     /* the owner's JavaThread* (Thread.eetop), 0 if none */
	uint32_t readers;      /* a read-write lock's read holds now (all readers' sum) */
	uint64_t cond_lock;    /* JUCB_CONDITION: its synchronizer object, 0 if unread */
};

/*
 * jucblocker_new - a reader for JVM @vs with object layout @ol (both must
 * outlive it); @f_eetop is java.lang.Thread.eetop's offset (the JavaThread*
 * of a Thread). NULL with errno ENOMEM.
 */
struct jucblocker *jucblocker_new(const struct mt_vmstructs *vs, const struct jobject_layout *ol,
				  uint32_t f_eetop);
/* jucblocker_free - NULL is a no-op. */
void jucblocker_free(struct jucblocker *b);

/*
 * jucblocker_read - what blocker object @obj (of class @klass) is, now, into
 * *@out. The object changes under us (a best-effort reading). Returns 0 or
 * -errno from reading the target (*@out then says as much as was read).
 */
int jucblocker_read(struct jucblocker *b, uint64_t obj, uint64_t klass,
		    struct jucblocker_info *out);

#endif
