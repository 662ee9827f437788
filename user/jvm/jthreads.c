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
#include "jvm/klassname.h"
#include "jvm/monowner.h"
#include "jvm/vmstructs.h"

#define AOS "java/util/concurrent/locks/AbstractOwnableSynchronizer"
/* More Java threads than this in one list means we misread it. */
#define MAX_THREADS 100000

struct jthreads {
	const struct mt_vmstructs *vs;
	struct jobject_layout ol;
	struct mt_klass_layout kl;
	struct monowner *mo;
	uint64_t list_addr, tl_length, tl_threads;
	uint64_t jt_osthread, os_tid, jt_state, jt_threadobj, jt_pending;
	uint64_t om_object;
	uint32_t f_name, f_blocker, f_eetop, f_owner; /* java.lang.Thread.*, AOS.exclusiveOwnerThread */
	uint64_t aos_ik;                              /* 0: AbstractOwnableSynchronizer not loaded yet */
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
	t->om_object = hs->objectmonitor_object;
	t->blocked = hs->thread_blocked;
	if ((err = jobject_vm_class(vs, hs->vmclasses_thread, &thread_ik)) ||
	    (err = javafield_offset(vs, &t->ol.jf, thread_ik, "name", &t->f_name)) ||
	    (err = javafield_offset(vs, &t->ol.jf, thread_ik, "parkBlocker", &t->f_blocker)) ||
	    (err = javafield_offset(vs, &t->ol.jf, thread_ik, "eetop", &t->f_eetop)))
		goto fail;
	t->mo = monowner_new(vs);
	if (!t->mo) {
		err = -errno;
		goto fail;
	}
	return t;
fail:
	free(t);
	errno = -err;
	return NULL;
}

void jthreads_free(struct jthreads *t)
{
	if (!t)
		return;
	monowner_free(t->mo);
	free(t);
}

const char *jthreads_wait_name(int wait)
{
	return wait == JTHREAD_MONITOR ? "monitor" : wait == JTHREAD_PARKED ? "parked" : "running";
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

/* AbstractOwnableSynchronizer, found from the first blocker that extends it. */
static bool is_aos(struct jthreads *t, uint64_t k)
{
	uint64_t found;

	if (!t->aos_ik) {
		if (jobject_super_named(t->vs, &t->ol, k, AOS, &found) != 1 ||
		    javafield_offset(t->vs, &t->ol.jf, found, "exclusiveOwnerThread", &t->f_owner))
			return false;
		t->aos_ik = found;
		return true;
	}
	return jobject_is_subclass(t->vs, &t->ol, k, t->aos_ik) == 1;
}

/* Fill the lock fields of @th (a blocked thread whose Thread object is @obj). */
static void blocked_on(struct jthreads *t, struct jthread *th, uint64_t obj)
{
	uint64_t mon = 0, blocker = 0, k, owner, eetop = 0;

	if (!vmstructs_read_ptr(t->vs, th->jt + t->jt_pending, &mon) && mon) {
		uint64_t slot = 0, o = 0;

		th->wait = JTHREAD_MONITOR;
		th->lock = mon;
		/* ObjectMonitor::_object: a WeakHandle, a pointer to the slot */
		if (!vmstructs_read_ptr(t->vs, mon + t->om_object, &slot) && slot &&
		    !vmstructs_read_ptr(t->vs, slot, &o))
			th->lock_obj = o;
		class_of(t, th->lock_obj, th->lock_class, sizeof(th->lock_class));
		th->owner_tid = (uint32_t)monowner_tid(t->mo, mon);
		return;
	}
	if (!obj || jobject_ref(t->vs, &t->ol, obj, t->f_blocker, &blocker) || !blocker)
		return;
	th->wait = JTHREAD_PARKED;
	th->lock = th->lock_obj = blocker;
	class_of(t, blocker, th->lock_class, sizeof(th->lock_class));
	if (jobject_klass(t->vs, &t->ol, blocker, &k) || !is_aos(t, k))
		return;
	if (jobject_ref(t->vs, &t->ol, blocker, t->f_owner, &owner) || !owner ||
	    vmstructs_read(t->vs, owner + t->f_eetop, &eetop, sizeof(eetop)))
		return;
	th->owner_jt = eetop; /* the tid is filled from the list by the caller */
}

int jthreads_read(struct jthreads *t, struct jthread **out, size_t *n)
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
		if (x->state == t->blocked)
			blocked_on(t, x, obj);
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

int jthreads_read_stable(struct jthreads *t, unsigned gap_us, struct jthread **out, size_t *n)
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
			err = jthreads_read(t, &b, &nb);
		}
	}
	if (err)
		goto cleanup;
	for (size_t i = 0; i < nb; i++) {
		bool same = false;

		for (size_t j = 0; j < na && !same; j++)
			same = a[j].tid == b[i].tid && a[j].owner_tid == b[i].owner_tid &&
			       a[j].lock == b[i].lock;
		if (!same)
			b[i].owner_tid = 0, b[i].owner_jt = 0;
	}
	*out = b;
	*n = nb;
	b = NULL;
cleanup:
	free(a);
	free(b);
	return err;
}
