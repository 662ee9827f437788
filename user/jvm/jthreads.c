// SPDX-License-Identifier: GPL-2.0
/* jthreads.c - Java threads and their blockers from the JVM's memory; see jthreads.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jvm/hotspot.h"
#include "jvm/jobject.h"
#include "jvm/jthreads.h"
#include "jvm/jucblocker.h"
#include "jvm/klassname.h"
#include "jvm/monowner.h"
#include "jvm/vmstructs.h"

/* More Java threads than this in one list means we misread it. */
#define MAX_THREADS 100000

/* JVMTI thread state bits (jvmti.h), what java.lang.Thread's threadStatus holds */
#define TS_ALIVE 0x1
#define TS_TERMINATED 0x2
#define TS_RUNNABLE 0x4
#define TS_WAITING_INDEFINITELY 0x10
#define TS_WAITING_WITH_TIMEOUT 0x20
#define TS_SLEEPING 0x40
#define TS_IN_OBJECT_WAIT 0x100
#define TS_PARKED 0x200
#define TS_BLOCKED_ON_MONITOR_ENTER 0x400

struct jthreads {
	const struct mt_vmstructs *vs;
	struct jobject_layout ol;
	struct mt_klass_layout kl;
	struct monowner *mo;
	struct jucblocker *jb;
	uint64_t list_addr, tl_length, tl_threads;
	uint64_t jt_osthread, os_tid, jt_state, jt_threadobj, jt_pending;
	uint64_t jt_waiting;                          /* 0: no _current_waiting_monitor */
	uint64_t om_object;
	uint32_t f_name, f_blocker, f_eetop;          /* java.lang.Thread.* */
	uint32_t f_status;                            /* Thread.threadStatus (JDK 17) or ... */
	uint32_t f_holder, f_holder_status;           /* ... Thread.holder.threadStatus (JDK 19+) */
	int32_t blocked;                              /* _thread_blocked */
};

struct jthreads *jthreads_new(const struct mt_proc *p, const struct mt_vmstructs *vs)
{
	struct jthreads *t = calloc(1, sizeof(*t));
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t thread_ik;
	int err;

	if (!t) {
		errno = ENOMEM;
		return NULL;
	}
	t->vs = vs;
	if ((err = jobject_layout(p, vs, &t->ol)) || (err = klassname_layout(vs, &t->kl)))
		goto fail;
	if (!hs->threadssmrsupport_java_thread_list || !hs->has_threadslist_length ||
	    !hs->has_threadslist_threads || !hs->has_javathread_osthread ||
	    !hs->has_osthread_thread_id || !hs->has_javathread_thread_state ||
	    !hs->has_javathread_threadobj || !hs->has_javathread_current_pending_monitor ||
	    !hs->has_objectmonitor_object || !hs->has_thread_blocked) {
		err = -ENOENT;
		goto fail;
	}
	t->list_addr = hs->threadssmrsupport_java_thread_list;
	t->tl_length = hs->threadslist_length;
	t->tl_threads = hs->threadslist_threads;
	t->jt_osthread = hs->javathread_osthread;
	t->os_tid = hs->osthread_thread_id;
	t->jt_state = hs->javathread_thread_state;
	t->jt_threadobj = hs->javathread_threadobj;
	t->jt_pending = hs->javathread_current_pending_monitor;
	t->jt_waiting = hs->has_javathread_current_waiting_monitor ?
				hs->javathread_current_waiting_monitor : 0;
	t->om_object = hs->objectmonitor_object;
	t->blocked = hs->thread_blocked;
	if ((err = jobject_vm_class(vs, hs->vmclasses_thread, &thread_ik)) ||
	    (err = javafield_offset(vs, &t->ol.jf, thread_ik, "name", &t->f_name)) ||
	    (err = javafield_offset(vs, &t->ol.jf, thread_ik, "parkBlocker", &t->f_blocker)) ||
	    (err = javafield_offset(vs, &t->ol.jf, thread_ik, "eetop", &t->f_eetop)))
		goto fail;
	/* the state: Thread's own field until JDK 19 moved it into Thread.holder */
	if (javafield_offset(vs, &t->ol.jf, thread_ik, "threadStatus", &t->f_status))
		javafield_offset(vs, &t->ol.jf, thread_ik, "holder", &t->f_holder);
	t->mo = monowner_new(vs);
	if (!t->mo) {
		err = -errno;
		goto fail;
	}
	t->jb = jucblocker_new(vs, &t->ol, t->f_eetop);
	if (!t->jb) {
		err = -errno;
		goto fail;
	}
	return t;
fail:
	monowner_free(t->mo);
	free(t);
	errno = -err;
	return NULL;
}

void jthreads_free(struct jthreads *t)
{
	if (!t)
		return;
	jucblocker_free(t->jb);
	monowner_free(t->mo);
	free(t);
}

const char *jthreads_wait_name(int wait)
{
	static const char *const names[] = {
		[JTHREAD_RUNNING] = "running", [JTHREAD_MONITOR] = "monitor",
		[JTHREAD_PARKED] = "parked", [JTHREAD_OBJWAIT] = "object_wait",
		[JTHREAD_RELOCK] = "relock", [JTHREAD_CONDITION] = "condition",
	};

	return wait > 0 && wait < (int)(sizeof(names) / sizeof(names[0])) ? names[wait] : names[0];
}

const char *jthreads_status_name(uint32_t s)
{
	/* java_lang_Thread::thread_status_name()'s words, from the same bits */
	if (!s)
		return "UNKNOWN";
	if (s & TS_TERMINATED)
		return "TERMINATED";
	if (!(s & TS_ALIVE))
		return "NEW";
	if (s & TS_BLOCKED_ON_MONITOR_ENTER)
		return "BLOCKED (on object monitor)";
	if (s & TS_SLEEPING)
		return "TIMED_WAITING (sleeping)";
	if (s & TS_IN_OBJECT_WAIT)
		return s & TS_WAITING_WITH_TIMEOUT ? "TIMED_WAITING (on object monitor)" :
						     "WAITING (on object monitor)";
	if (s & TS_PARKED)
		return s & TS_WAITING_WITH_TIMEOUT ? "TIMED_WAITING (parking)" : "WAITING (parking)";
	if (s & TS_RUNNABLE)
		return "RUNNABLE";
	return "UNKNOWN";
}

bool jthreads_timed(uint32_t status)
{
	return status & TS_WAITING_WITH_TIMEOUT;
}

/* java.lang.Thread @obj's threadStatus, 0 if unread. */
static uint32_t thread_status(struct jthreads *t, uint64_t obj)
{
	uint64_t holder = 0, k;
	int32_t v = 0;

	if (!obj)
		return 0;
	if (t->f_status) {
		vmstructs_read(t->vs, obj + t->f_status, &v, sizeof(v));
		return (uint32_t)v;
	}
	if (!t->f_holder || jobject_ref(t->vs, &t->ol, obj, t->f_holder, &holder) || !holder)
		return 0;
	if (!t->f_holder_status &&
	    (jobject_klass(t->vs, &t->ol, holder, &k) ||
	     javafield_offset(t->vs, &t->ol.jf, k, "threadStatus", &t->f_holder_status)))
		return 0;
	vmstructs_read(t->vs, holder + t->f_holder_status, &v, sizeof(v));
	return (uint32_t)v;
}

/* The java.lang.Thread object of JavaThread @jt (an OopHandle: a pointer to
 * an OopStorage slot holding the full address). */
static uint64_t thread_obj(struct jthreads *t, uint64_t jt)
{
	uint64_t slot = 0, obj = 0;

	if (vmstructs_read_ptr(t->vs, jt + t->jt_threadobj, &slot) || !slot ||
	    vmstructs_read_ptr(t->vs, slot, &obj))
		return 0;
	return obj;
}

static void class_of(struct jthreads *t, uint64_t obj, char *out, size_t len)
{
	uint64_t k;

	if (jobject_klass(t->vs, &t->ol, obj, &k) || klassname_read(t->vs, &t->kl, k, true, out, len) < 0)
		snprintf(out, len, "?");
}

/* The object of ObjectMonitor @mon (ObjectMonitor::_object: a WeakHandle, a
 * pointer to the slot), 0 if unread. */
static uint64_t monitor_object(struct jthreads *t, uint64_t mon)
{
	uint64_t slot = 0, o = 0;

	if (vmstructs_read_ptr(t->vs, mon + t->om_object, &slot) || !slot ||
	    vmstructs_read_ptr(t->vs, slot, &o))
		return 0;
	return o;
}

/*
 * Fill the lock fields of @th (a blocked thread whose Thread object is @obj):
 * a monitor it enters, one it waits on in Object.wait() - or enters again
 * after the wait: pending and waiting at once (ObjectMonitor::enter), or
 * waiting with the BLOCKED state (ReenterI) - or the blocker it parks on.
 */
static void blocked_on(struct jthreads *t, struct jthread *th, uint64_t obj)
{
	uint64_t mon = 0, wmon = 0, blocker = 0, k;
	struct jucblocker_info jb;

	vmstructs_read_ptr(t->vs, th->jt + t->jt_pending, &mon);
	if (t->jt_waiting)
		vmstructs_read_ptr(t->vs, th->jt + t->jt_waiting, &wmon);
	if (mon || wmon) {
		bool relock = wmon && (mon == wmon || (!mon && th->status & TS_BLOCKED_ON_MONITOR_ENTER));

		th->wait = relock ? JTHREAD_RELOCK : mon ? JTHREAD_MONITOR : JTHREAD_OBJWAIT;
		th->lock = mon ? mon : wmon;
		th->lock_obj = monitor_object(t, th->lock);
		class_of(t, th->lock_obj, th->lock_class, sizeof(th->lock_class));
		/* a waiter waits for a notify, not for the monitor's owner */
		if (th->wait != JTHREAD_OBJWAIT)
			th->owner_tid = (uint32_t)monowner_tid(t->mo, th->lock);
		return;
	}
	if (!obj || jobject_ref(t->vs, &t->ol, obj, t->f_blocker, &blocker) || !blocker)
		return;
	th->wait = JTHREAD_PARKED;
	th->lock = th->lock_obj = blocker;
	class_of(t, blocker, th->lock_class, sizeof(th->lock_class));
	if (jobject_klass(t->vs, &t->ol, blocker, &k))
		return;
	jucblocker_read(t->jb, blocker, k, &jb); /* as much as it read */
	if (jb.kind == JUCB_CONDITION) {
		th->wait = JTHREAD_CONDITION;
		th->cond_lock = jb.cond_lock;
		if (jb.cond_lock)
			class_of(t, jb.cond_lock, th->cond_lock_class, sizeof(th->cond_lock_class));
		return;
	}
	th->blocker = jb.kind;
	th->readers = jb.readers;
	th->owner_jt = jb.owner_jt; /* the tid is filled from the list by the caller */
}

/* jthreads_read(), calling @visit (if not NULL) on each waiting thread as soon
 * as it is read. */
static int read_visit(struct jthreads *t, jthreads_visit_fn visit, void *ctx,
		      struct jthread **out, size_t *n)
{
	uint64_t list = 0, arr = 0, *jts = NULL;
	uint32_t len = 0;
	struct jthread *th = NULL;
	int err;

	*out = NULL;
	*n = 0;
	if ((err = vmstructs_read_ptr(t->vs, t->list_addr, &list)) || !list ||
	    (err = vmstructs_read(t->vs, list + t->tl_length, &len, sizeof(len))) ||
	    (err = vmstructs_read_ptr(t->vs, list + t->tl_threads, &arr)))
		return err ? err : -ENOENT;
	if (len > MAX_THREADS)
		return -EPROTO;
	jts = calloc(len ? len : 1, sizeof(*jts));
	th = calloc(len ? len : 1, sizeof(*th));
	if (!jts || !th) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (len && (err = vmstructs_read(t->vs, arr, jts, len * sizeof(*jts))))
		goto cleanup;
	for (uint32_t i = 0; i < len; i++) {
		struct jthread *x = &th[i];
		uint64_t os = 0, obj, name;
		int32_t tid = 0;

		x->jt = jts[i];
		if (!vmstructs_read_ptr(t->vs, x->jt + t->jt_osthread, &os) && os &&
		    !vmstructs_read(t->vs, os + t->os_tid, &tid, sizeof(tid)))
			x->tid = (uint32_t)tid;
		vmstructs_read(t->vs, x->jt + t->jt_state, &x->state, sizeof(x->state));
		obj = thread_obj(t, x->jt);
		if (obj && !jobject_ref(t->vs, &t->ol, obj, t->f_name, &name) && name)
			jobject_string(t->vs, &t->ol, name, x->name, sizeof(x->name));
		x->status = thread_status(t, obj);
		if (x->state == t->blocked)
			blocked_on(t, x, obj);
		if (visit && x->wait != JTHREAD_RUNNING)
			visit(ctx, x, i);
	}
	/* owners of j.u.c. locks are JavaThread*s: their tids come from the list */
	for (uint32_t i = 0; i < len; i++)
		for (uint32_t j = 0; th[i].owner_jt && j < len; j++)
			if (th[j].jt == th[i].owner_jt)
				th[i].owner_tid = th[j].tid;
	/* the list is replaced (copy on write) when threads come or go */
	if (!vmstructs_read_ptr(t->vs, t->list_addr, &arr) && arr != list) {
		err = -EAGAIN;
		goto cleanup;
	}
	*out = th;
	*n = len;
	th = NULL;
cleanup:
	free(jts);
	free(th);
	return err;
}

int jthreads_read(struct jthreads *t, struct jthread **out, size_t *n)
{
	return read_visit(t, NULL, NULL, out, n);
}

int jthreads_same_wait(struct jthreads *t, const struct jthread *th)
{
	struct jthread now = { .jt = th->jt, .tid = th->tid };
	int err;

	if ((err = vmstructs_read(t->vs, th->jt + t->jt_state, &now.state, sizeof(now.state))))
		return err;
	if (now.state != t->blocked)
		return 0;
	now.status = th->status;
	blocked_on(t, &now, thread_obj(t, th->jt));
	return now.wait == th->wait && now.lock == th->lock;
}

int jthreads_read_stable(struct jthreads *t, unsigned gap_us, jthreads_visit_fn visit, void *ctx,
			 struct jthread **out, size_t *n)
{
	struct jthread *a = NULL, *b = NULL;
	size_t na = 0, nb = 0;
	int err = -EAGAIN;

	*out = NULL;
	*n = 0;
	for (int tries = 0; tries < 5 && err == -EAGAIN; tries++) {
		free(a);
		free(b);
		a = b = NULL;
		if (!(err = jthreads_read(t, &a, &na))) {
			usleep(gap_us);
			err = read_visit(t, visit, ctx, &b, &nb);
		}
	}
	if (err)
		goto cleanup;
	for (size_t i = 0; i < nb; i++)
		for (size_t j = 0; j < na && !b[i].stable; j++)
			b[i].stable = a[j].tid == b[i].tid && a[j].owner_tid == b[i].owner_tid &&
				      a[j].lock == b[i].lock && a[j].wait == b[i].wait;
	*out = b;
	*n = nb;
	b = NULL;
cleanup:
	free(a);
	free(b);
	return err;
}
