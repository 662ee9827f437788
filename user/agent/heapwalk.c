// SPDX-License-Identifier: GPL-2.0
/*
 * heapwalk.c - heap snapshots for memtrace (HEAP_REQUEST in agent_proto.h):
 * the walk's driver, one named step after the other.
 *
 * Socket thread only. The walk's parts:
 *   walkenv.c      the JVMTI environments: the session's (tags, GC events),
 *                  names_env and plain_env of untagged walks
 *   walknames.c    ids for classes, loaders and threads (before the pause)
 *   walkfields.c   the class and field tables: JVMTI field indices, the
 *                  projected fields (before the pause)
 *   walksamples.c  the sampled objects asked for (before the pause)
 *   walkvisit.c    the JVMTI callbacks (in the pause, or in a frozen copy)
 *   walkcopy.c     a frozen walk's copy (after the pause)
 *   walkvec.c      the record vectors the callbacks append to
 *   walkstate.c    what the walk (hw) and its session (hs) hold
 *   walksend.c     the records cut into HEAP_DATA frames (after the walk)
 * Three kinds of walk:
 *
 * Untagged (every request without MT_AP_HEAP_KEEPIDS: single walks of
 * query, snapshot, histo, serve). The walk's env holds no tag at all: a tag
 * per object is what made walks slow (JVMTI looks up the referrer's and the
 * referee's tag, and their classes', in its tag map for every reference it
 * reports: perf put 40 % of the VM thread in JvmtiTagMapTable::find) and
 * costly afterwards (clearing them is a second pause). Classes, loaders and
 * threads get ids from tags in a second env (names_env), which the walk
 * (in a third env, plain_env, that never holds a tag) never consults, and a
 * JNI local reference each, kept over the pause. Objects are told apart by
 * their addresses, which cannot change during the pause (walkvisit.c says
 * how the callbacks read them and check the layout they rely on). After the
 * pause every referrer and value owner must be an object the walk met, every
 * CLASS reference must lead to a named class; if a check fails the walk is
 * thrown away and done again with tags, and every later walk of the agent
 * uses tags (logged once; e2e walk_fallback). No collector needs that (e2e
 * walk_gcs: Serial, Parallel, G1, ZGC, Shenandoah on JDK 17 and 25). One walk:
 *   1. the JVM running: name every loaded class, its loader and every thread;
 *      build the field tables (JVMTI field indices, walkfields.c); reserve
 *      the visit array (the last walk's size + 25 %, its pages touched now);
 *   2. the pause: FollowReferences; the callbacks only append a struct
 *      mt_ap_hvisit (no JNI, no JVMTI, no socket) and abort the walk after
 *      max_pause_ms if asked;
 *   3. the JVM running again: the names env's tags are cleared
 *      (GetObjectsWithTags + SetTag 0: no safepoint); the visits, the named
 *      objects' addresses and the values are cut into HEAP_DATA frames
 *      (NAMED, VISITS, PRIMS, STRING records with keys, agent_proto.h) by
 *      walksend_chunk() as the socket takes them; heap_release() frees.
 *      memtrace, not the JVM, turns addresses into ids (user/heap/walkids.c: a
 *      hash look-up per reported reference, ~0.3 s of CPU per 2 M, was the
 *      agent's largest cost in the JVM when it did it itself) and checks
 *      the layout a second time; when that check fails it asks again with
 *      MT_AP_HEAP_NOUNTAGGED, and every later walk of the agent uses tags.
 *
 * Frozen (MT_AP_HEAP_FREEZE, untagged walks only; freeze.c, walkcopy.c): the
 * walk's first callback forks; the copy walks, the JVM leaves the pause at
 * once. Anything failing after the fork: the walk is done again in a pause,
 * and the FREEZE record says why.
 *
 * Tagged (KEEPIDS: a --count session that needs ages). The old way: the
 * same steps, but every class, loader, thread and object gets a tag in the
 * walk's env (id << 1; bit 0 unused) and the callbacks record objects and
 * references by tag. Tags persist from one walk of a session to the next: an
 * object keeps its id, an object first met gets the next id, so the ids
 * handed out by one walk form one contiguous range. "Recorded in this walk"
 * is a bitmap indexed by id, cleared at each walk's start. The session's end
 * (heap_session_end()) clears them all (one IterateThroughHeap pass).
 *
 * Ages (MT_AP_HREC_AGES): while the session's env exists, its
 * GarbageCollectionFinish events count GCs (hs_gcs, walkenv.c). Each walk
 * appends (its first id, the GC count during its pause) and sends the whole
 * list, so memtrace computes an object's age as GCs now - GCs at the walk
 * that first tagged it (0 for every object of an untagged walk: its ids are
 * all new).
 */
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent.h"
#include "freeze.h"
#include "heapwalk.h"
#include "walkcopy.h"
#include "walkenv.h"
#include "walkfields.h"
#include "walknames.h"
#include "walksamples.h"
#include "walksend.h"
#include "walkstate.h"
#include "walkvisit.h"

/* What heap_walk() was asked, kept for a walk done again. */
struct walk_ask {
	const struct mt_ap_heap_request *req;
	const struct mt_ap_heap_layout *layout; /* MT_AP_FREEZE_MARK's, else NULL */
	const struct mt_ap_heap_zgc *zgc;       /* MT_AP_FREEZE_ZGC's, else NULL */
	const char *names;       /* req->nfields NUL-terminated field names */
	const char *names_end;
	const void *samples;     /* req->nsamples sample ids (unaligned) */
	int watch_fd;            /* the memtrace connection */
	void (*idle)(void);      /* while a frozen copy walks (freeze_wait) */
};

/* heap_walk_pool()'s fd for the next walk, -1. */
static int given_pool = -1;

void heap_walk_pool(int fd)
{
	if (given_pool >= 0)
		close(given_pool);
	given_pool = fd;
}

/* Set when an untagged walk's layout checks failed: tags from then on. */
static bool untagged_broken;

/* Visits of the agent's last untagged walk: the next one reserves that much
 * (+25 %) before its pause, so the pause neither copies nor faults pages in. */
static size_t last_visits = 1u << 18;

static int walk(const struct walk_ask *a, const struct mt_ap_heap_freeze *freeze,
		struct mt_ap_heap_done *done, char *why, size_t n);

/* The Java thread id of the calling thread (the agent's), -1 if unknown. */
static jlong own_thread_id(JNIEnv *jni)
{
	jthread t = NULL;
	jclass tc;
	jfieldID f;
	jlong tid = -1;

	if ((*hw.env)->GetCurrentThread(hw.env, &t) || !t)
		return -1;
	tc = (*jni)->FindClass(jni, "java/lang/Thread");
	f = tc ? (*jni)->GetFieldID(jni, tc, "tid", "J") : NULL;
	if (f)
		tid = (*jni)->GetLongField(jni, t, f);
	if ((*jni)->ExceptionCheck(jni)) {
		(*jni)->ExceptionClear(jni);
		tid = -1;
	}
	if (tc)
		(*jni)->DeleteLocalRef(jni, tc);
	(*jni)->DeleteLocalRef(jni, t);
	return tid;
}

/* Which envs walk and name: an untagged walk unless the request keeps ids,
 * is bare, or the untagged walk is known broken here (or an env is missing). */
static void choose_envs(const struct mt_ap_heap_request *req)
{
	jvmtiEnv *names = NULL, *plain = NULL;

	hw.env = hs.env;
	if ((req->flags & MT_AP_HEAP_NOUNTAGGED) && !untagged_broken) {
		agent_log("memtrace found the heap walk could not tell objects apart by address "
			  "on this JVM: it tags objects from now on");
		untagged_broken = true;
	}
	hw.untagged = !(req->flags & (MT_AP_HEAP_KEEPIDS | MT_AP_HEAP_BARE)) && !untagged_broken &&
		      (names = walkenv_names()) && (plain = walkenv_plain());
	hw.tenv = hw.untagged ? names : hs.env;
	if (hw.untagged || ((req->flags & MT_AP_HEAP_BARE) && (plain = walkenv_plain())))
		hw.env = plain;
}

/* A new walk's state: ids, flags, envs, the frozen copy's check, vectors. */
static void walk_begin(const struct mt_ap_heap_request *req, const struct mt_ap_heap_freeze *freeze,
		       const struct mt_ap_heap_layout *layout, const struct mt_ap_heap_zgc *zgc,
		       void (*idle)(void))
{
	const char *t = getenv("MEMTRACE_AGENT_TEST_LAYOUT");
	int pool;

	hw.first_id = hs.next_id;
	if (hs.bits)
		memset(hs.bits, 0, hs.nwords * sizeof(*hs.bits));
	hs.bits_oom = false;
	hw.flags = req->flags;
	hw.oop_slot = t && !strcmp(t, "wrong") ? -3 : -2;
	choose_envs(req);
	hw.want_freeze = freeze != NULL;
	hw.freeze_refused = false;
	if (freeze && !hw.untagged) {
		memset(&hw.fz, 0, sizeof(hw.fz));
		freeze_fail(&hw.fz, MT_AP_FREEZE_CHECK, -ENOTSUP,
			    "a walk that tags objects is not frozen");
	} else if (freeze) {
		hw.freezing = !freeze_begin(&hw.fz, freeze, zgc, idle);
	}
	/* memtrace's pool for the copy's records: until the fork, if used */
	pool = given_pool;
	given_pool = -1;
	if (pool >= 0 && hw.freezing && (freeze->flags & MT_AP_FREEZE_POOL)) {
		hw.fz.pool_fd = pool;
		hw.fz.has_pool_fd = true;
	} else if (pool >= 0) {
		close(pool);
	}
	/* ZGC, Shenandoah: a walk in the pause instead is memtrace's to ask for */
	if (freeze && !hw.freezing && (freeze->flags & (MT_AP_FREEZE_ZGC | MT_AP_FREEZE_FORWARDING)))
		hw.freeze_refused = true;
	/* the copy's own mark: only where memtrace reads the copy itself */
	hw.marking = hw.freezing && layout && (freeze->flags & MT_AP_FREEZE_MARK) &&
		     (freeze->flags & MT_AP_FREEZE_DIRECT);
	if (hw.marking)
		hw.layout = *layout;
	/* ZGC: a walk that reads no strings reads no primitive array's
	 * elements: those in medium and large pages are not copied */
	if (hw.marking && hw.fz.zgc.on && !(req->flags & MT_AP_HEAP_STRINGS))
		hw.fz.zgc.bodies = &hw.layout;
	hw.comparing = hw.marking && (freeze->flags & MT_AP_FREEZE_COMPARE);
	walkstate_vectors_init();
	hw.t0 = agent_mono_ns();
}

/* The benchmark's baseline: a walk whose callback records nothing. */
static jvmtiError walk_bare(const struct mt_ap_heap_request *req)
{
	jvmtiHeapCallbacks cb;
	uint64_t t1;
	jvmtiError e;

	walkvisit_callbacks(&cb, req);
	t1 = agent_mono_ns();
	e = (*hw.env)->FollowReferences(hw.env, 0, NULL, NULL, &cb, NULL);
	hw.done.pause_ns = agent_mono_ns() - t1;
	return e;
}

/*
 * Before the pause, the JVM running: a local frame that holds the named
 * objects' references until the walk is over (popped by the caller), the
 * class and field tables, the threads, the sampled objects, the visit array.
 * 0, or -errno with @why (then the frame is popped and the state freed).
 */
static int walk_prepare(JNIEnv *jni, const struct walk_ask *a, char *why, size_t n)
{
	const struct mt_ap_heap_request *req = a->req;
	int err;

	if ((*jni)->PushLocalFrame(jni, 64) != 0) {
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
		snprintf(why, n, "JNI PushLocalFrame failed");
		walkstate_free();
		return -ENOMEM;
	}
	err = walkfields_prepare(jni, a->names, req->nfields, a->names_end, why, n);
	if (!err)
		walknames_threads(jni);
	if (!err && hw.untagged)
		err = walkfields_projidx(why, n);
	if (err) {
		if (hw.untagged)
			walknames_untag();
		(*jni)->PopLocalFrame(jni, NULL);
		walkstate_free();
		return err;
	}
	walkfields_strings_wanted();
	if (req->flags & MT_AP_HEAP_SAMPLES)
		walksamples_find(jni, a->samples, req->nsamples);
	hw.own_tid = own_thread_id(jni);
	/* (a frozen walk records nothing here: the copy grows its own vector;
	 * the class table alone records nothing) */
	if (hw.untagged && !hw.freezing && !(req->flags & MT_AP_HEAP_CLASSES))
		walkvec_reserve(&hw.visits, last_visits + last_visits / 4);
	return 0;
}

/*
 * ZGC, before the pause: when the JVM allocates (gc_wait_ms), wait for a
 * relocation's end (its garbage freed, nothing in flight); with memtrace's
 * bound on the copy, look at the used heap then, and wait for up to
 * ZGC_SETTLES ends while it is over what memtrace aims at (it falls at each:
 * LeakGrowth's went from 743 to 188 MiB) - within the bound, only while the
 * waits took under ZGC_MORE_NS in all - for ZGC_OVER_WAIT_MS where memtrace
 * saw no allocation (JDK 17's hsperfdata reads ZGC's used heap as its
 * capacity: a copy of 817 MiB was taken at once) until a wait sees no cycle
 * end (an idle JVM's used heap does not fall). Over the bound still:
 * the freeze fails (-EFBIG), and the walk is refused before any pause.
 * Returns whether it was.
 */
#define ZGC_SETTLES      3
#define ZGC_OVER_WAIT_MS 1000
#define ZGC_MORE_NS      (1000 * 1000000ull) /* over the aim only: no more ends after this */

static bool zgc_settle(void)
{
	uint64_t aim = (uint64_t)hw.fz.zgc.req.aim_copy_mib << 20, used, ns;
	uint32_t wait = hw.fz.req.gc_wait_ms;
	char why[sizeof(hw.fz.rec.why)];
	int err = 0;

	for (int i = 0; i < ZGC_SETTLES; i++) {
		if (wait) {
			hw.fz.rec.gc_waited = zgcfreeze_settle(&hw.fz.zgc, wait, &ns);
			hw.fz.rec.gc_wait_ns += ns;
		}
		if (!hw.fz.zgc.req.max_copy_mib)
			return false;
		used = 0;
		err = zgcfreeze_fits(&hw.fz.zgc, &used, why, sizeof(why));
		/* within the aim; or no cycle ended in the last wait (an idle JVM:
		 * its used heap will not fall); or, within the bound, the cycles are
		 * long (a big live set: what they allocate meanwhile keeps the used
		 * heap up - 670-890 MiB at each end for 250 MiB live, 1.8-2.2 s
		 * apart, FreezeWorkload at 4.8 M objects) */
		if (err == -EPROTO || (!err && (used <= aim || (wait && !hw.fz.rec.gc_waited) ||
						hw.fz.rec.gc_wait_ns > ZGC_MORE_NS)))
			break;
		if (!wait)
			wait = ZGC_OVER_WAIT_MS;
	}
	if (!err)
		return false;
	freeze_fail(&hw.fz, MT_AP_FREEZE_CHECK, err, "%s", why);
	hw.freeze_refused = true;
	return true;
}

/* The pause: FollowReferences with the walk's callbacks (walkvisit.c), timed.
 * Returns JVMTI's error. */
static jvmtiError walk_pause(const struct mt_ap_heap_request *req)
{
	jvmtiHeapCallbacks cb;
	uint64_t t1;
	jvmtiError e;

	walkvisit_callbacks(&cb, req);
	if (!hw.untagged)
		hs.tagged_objects = true;
	if (hw.freezing && hw.fz.zgc.on) {
		if (zgc_settle()) /* over memtrace's bound: refused before the pause */
			return JVMTI_ERROR_NONE;
	} else if (hw.freezing && hw.fz.req.gc_wait_ms) {
		walkcopy_wait_for_gc(hw.fz.req.gc_wait_ms);
	}
	t1 = agent_mono_ns();
	hw.done.prep_ns = t1 - hw.t0;
	hw.t0 = t1;
	hw.deadline_ns = t1 + (uint64_t)req->max_pause_ms * 1000000;
	e = (*hw.env)->FollowReferences(hw.env, 0, NULL, NULL, &cb, NULL);
	hw.done.pause_ns = agent_mono_ns() - t1;
	/* frozen: what is left of the pause after the fork is HotSpot returning
	 * from an aborted walk; this thread waking up afterwards is not pause */
	if (hw.freezing && hw.fz.child > 0 && hw.fz_left > t1)
		hw.done.pause_ns = hw.fz_left - t1;
	return e;
}

/* The freeze failed (its checks, or the fork) where the walk may not go on
 * in the pause (ZGC, Shenandoah): undo the walk; its error is the freeze's
 * (-EAGAIN: ZGC was relocating, memtrace may ask again). */
static int walk_refused(JNIEnv *jni, char *why, size_t n)
{
	int err = hw.fz.rec.status ? hw.fz.rec.status : -EIO;

	snprintf(why, n, "no frozen copy: %s", hw.fz.rec.why);
	walknames_untag();
	if (walksamples_untag())
		untagged_broken = true;
	(*jni)->PopLocalFrame(jni, NULL);
	walkstate_free();
	return err;
}

/* The frozen copy failed: undo this walk and walk again in a pause (memtrace
 * gone: stop, -ECONNRESET); the FREEZE record says why, both pauses count. */
static int walk_unfrozen(JNIEnv *jni, const struct walk_ask *a, struct mt_ap_heap_done *done,
			 char *why, size_t n)
{
	struct mt_ap_hfreeze rec = hw.fz.rec;
	struct mt_ap_heap_freeze again = hw.fz.req;
	struct mt_ap_hmark mark = hw.mark;
	bool was_marking = hw.marking;
	uint64_t first = hw.done.pause_ns;
	int err;

	walknames_untag();
	if (walksamples_untag())
		untagged_broken = true;
	(*jni)->PopLocalFrame(jni, NULL);
	walkstate_free();
	if (rec.stage == MT_AP_FREEZE_CLIENT) {
		snprintf(why, n, "%s", rec.why);
		return -ECONNRESET;
	}
	if (was_marking) {
		/* the mark failed (or the copy died marking): a second copy walks
		 * with JVMTI; the MARK record says why */
		if (!mark.status) {
			mark.status = rec.status ? rec.status : -EIO;
			snprintf(mark.why, sizeof(mark.why), "%.*s", (int)sizeof(mark.why) - 1, rec.why);
		}
		/* a copy with moved objects (Shenandoah): JVMTI's walk would run
		 * the collector's barriers in it, and a walk in a pause is
		 * memtrace's to consent to: the walk fails, saying why */
		if (again.flags & (MT_AP_FREEZE_FORWARDING | MT_AP_FREEZE_ZGC)) {
			/* a virtual thread's stack chunk the mark could not read
			 * (no HotSpot iteration of it in the layout, or one that did
			 * not report as expected): memtrace walks in a pause
			 * instead, with the user's consent; the reason in full fits
			 * the 128 bytes of an ERROR */
			if (mark.status == -ENOTSUP) {
				snprintf(why, n, "a virtual thread's stack is in the heap (a stack "
					 "chunk), which the copy's own mark could not read");
				return -ENOTSUP;
			}
			snprintf(why, n, "the copy's own mark stopped (%s)", mark.why);
			return -EPROTO;
		}
		agent_log("the frozen copy's own mark stopped (%s): walking the copy with JVMTI",
			  mark.why);
		again.flags &= ~MT_AP_FREEZE_MARK;
		err = walk(a, &again, done, why, n);
		if (!err) {
			hw.want_mark = true;
			hw.mark = mark;
			hw.done.pause_ns += first;
			done->pause_ns = hw.done.pause_ns;
		}
		return err;
	}
	err = walk(a, NULL, done, why, n);
	if (!err) {
		hw.want_freeze = true;
		hw.fz.rec = rec;
		hw.fz.rec.fallback_pause_ns = hw.done.pause_ns;
		hw.done.pause_ns += first;
		done->pause_ns = hw.done.pause_ns;
	}
	return err;
}

/* After an untagged walk's pause: its size for the next reserve, the tags
 * of the names env and of the samples cleared, and the ids memtrace gives
 * the other objects (from named_next; later walks of the session number
 * theirs past every id this one could use). */
static void walk_untagged_after(void)
{
	bool marked = hw.want_mark && !hw.mark.status;
	uint64_t visits = hw.want_copy ? hw.copy.nvisits : hw.visits.n;

	if (!hw.aborted && !hw.layout_bad && !marked) /* a frozen copy's stay in the copy */
		last_visits = visits;
	walknames_untag();
	if (walksamples_untag())
		untagged_broken = true;
	hw.named_next = hs.next_id;
	/* the mark's ids: next_id + an object's rank among the marked ones (both,
	 * comparing: two snapshots of one image) */
	if (!marked)
		hs.next_id += visits;
	else
		hs.next_id += hw.comparing && visits > hw.mark.marked ? visits : hw.mark.marked;
}

/* The untagged walk could not tell objects apart by address: walk again,
 * with tags (as every later walk of the agent); both pauses count. */
static int walk_with_tags(const struct walk_ask *a, struct mt_ap_heap_done *done, char *why,
			  size_t n)
{
	uint64_t first = hw.done.pause_ns;
	int err;

	agent_log("the heap walk could not tell objects apart by address on this JVM "
		  "(%llu unexpected callbacks): it tags objects from now on",
		  (unsigned long long)hw.layout_bad);
	untagged_broken = true;
	walkstate_free();
	err = walk(a, NULL, done, why, n);
	if (!err) {
		hw.done.pause_ns += first;
		done->pause_ns = hw.done.pause_ns;
	}
	return err;
}

/* The DONE payload: counts, flags, whether the snapshot is partial. */
static void walk_done(const struct mt_ap_heap_request *req)
{
	bool bare = req->flags & MT_AP_HEAP_BARE;

	if (walkstate_oom())
		agent_log("out of memory during a heap walk: the snapshot is partial");
	hw.done.partial = hw.aborted || walkstate_oom();
	hw.done.flags = hw.flags & ~(MT_AP_HEAP_KEEPIDS | MT_AP_HEAP_NOUNTAGGED | MT_AP_HEAP_FREEZE);
	if (hw.freezing && hw.fz.rec.child_pid && !hw.fz.rec.status)
		hw.done.flags |= MT_AP_HEAP_FREEZE; /* the records come from the frozen copy */
	if (!hw.untagged && !bare)
		hw.done.flags |= MT_AP_HEAP_KEEPIDS; /* served with object tags */
	hw.done.objects = hw.objs.n;
	hw.done.refs = hw.refs.n;
	hw.done.roots = hw.roots.n;
	hw.done.values = hw.prims.n;
	hw.done.strings = hw.strs.n;
	if (hw.want_mark && !hw.mark.status) { /* the records are in the copy */
		hw.done.objects = hw.mark.nobjs;
		hw.done.refs = hw.mark.nrefs;
		hw.done.roots = hw.mark.nroots;
		hw.done.values = hw.mark.nprims;
		hw.done.strings = hw.mark.nstrs;
		hw.done.bytes = hw.mark.bytes;
	}
	hw.done.nclasses = bare ? 0 : hw.ncls;
	hw.done.nthreads = bare ? 0 : hw.nthreads;
}

/* The walk's age range into the session's list: its first id, the GC count
 * during its pause. */
static void walk_add_ages(void)
{
	struct mt_ap_hwalk w = { .first_id = hw.first_id };

	if (!hw.gcs_read) /* no callback ran: read it now */
		hw.gcs = atomic_load(&hs_gcs);
	w.gcs = hw.gcs;
	if (hs.nwalks && hs.walks[hs.nwalks - 1].first_id == w.first_id)
		hs.walks[hs.nwalks - 1] = w; /* the previous walk's range is empty */
	else if (hs.nwalks < WALK_MAX_WALKS)
		hs.walks[hs.nwalks++] = w;
	else
		hs.dropped_walks++; /* its objects look as old as the last range's */
}

/* heap_walk() on @a; @freeze NULL when a walk is done again. */
static int walk(const struct walk_ask *a, const struct mt_ap_heap_freeze *freeze,
		struct mt_ap_heap_done *done, char *why, size_t n)
{
	const struct mt_ap_heap_request *req = a->req;
	JNIEnv *jni = agent.jni;
	jvmtiError e;
	int err;

	if (walksend_pending()) {
		snprintf(why, n, "a heap snapshot is still being sent");
		return -EBUSY;
	}
	walkcopy_release(); /* memtrace has read the last one or given up */
	walkstate_free();
	err = walkenv_session(why, n);
	if (err)
		return err;
	walk_begin(req, freeze, a->layout, a->zgc, a->idle);
	if (req->flags & MT_AP_HEAP_BARE) {
		e = walk_bare(req);
	} else if (req->flags & MT_AP_HEAP_CLASSES) {
		/* the class table only, the JVM running: nothing is walked */
		err = walk_prepare(jni, a, why, n);
		if (err)
			return err;
		hw.done.prep_ns = agent_mono_ns() - hw.t0;
		e = JVMTI_ERROR_NONE;
		if (hw.untagged)
			walk_untagged_after();
		(*jni)->PopLocalFrame(jni, NULL);
	} else {
		err = walk_prepare(jni, a, why, n);
		if (err)
			return err;
		if (hw.freeze_refused) /* before the pause: it cannot be a frozen copy */
			return walk_refused(jni, why, n);
		e = walk_pause(req);
		if (hw.freeze_refused)
			return walk_refused(jni, why, n);
		if (hw.freezing && hw.fz.child > 0 && walkcopy_finish(a->watch_fd, a->idle))
			return walk_unfrozen(jni, a, done, why, n);
		if (hw.untagged)
			walk_untagged_after();
		(*jni)->PopLocalFrame(jni, NULL);
	}
	if (hw.untagged && hw.layout_bad)
		return walk_with_tags(a, done, why, n);
	if (e != JVMTI_ERROR_NONE) {
		snprintf(why, n, "JVMTI FollowReferences failed (error %d)", (int)e);
		walkstate_free();
		return -EIO;
	}
	walk_done(req);
	if (!(req->flags & (MT_AP_HEAP_BARE | MT_AP_HEAP_CLASSES)))
		walk_add_ages();
	/* the tags stay (the session's env) for the next walk's ages */
	walksend_begin();
	*done = hw.done;
	return 0;
}

bool heap_walk_live(struct mt_ap_hlive_at *at)
{
	if (hw.live_sent || !hw.marking || hw.comparing || !hw.freezing || hw.fz.child <= 0 ||
	    !(hw.fz.req.flags & MT_AP_FREEZE_LIVE))
		return false;
	hw.live_sent = true;
	at->child_pid = (uint32_t)hw.fz.child;
	at->reserved = 0;
	at->live = (uint64_t)(uintptr_t)&hw.live; /* the same address in the copy */
	return true;
}

int heap_walk(const struct mt_ap_heap_request *req, const struct mt_ap_heap_freeze *freeze,
	      const struct mt_ap_heap_layout *layout, const struct mt_ap_heap_zgc *zgc,
	      const char *names, size_t names_len, const void *samples, int watch_fd,
	      void (*idle)(void), struct mt_ap_heap_done *done, char *why, size_t n)
{
	struct walk_ask a = { .req = req, .layout = layout, .zgc = zgc, .names = names,
			      .names_end = names + names_len, .samples = samples,
			      .watch_fd = watch_fd, .idle = idle };

	return walk(&a, freeze, done, why, n);
}

void heap_release(void)
{
	walkcopy_done_sent();
	walkstate_free();
	malloc_trim(0); /* the snapshot's arrays back to the system, not kept by malloc */
}

void heap_session_end(void)
{
	heap_walk_pool(-1);
	walkcopy_release();
	walkstate_free();
	walkenv_end();
}
