// SPDX-License-Identifier: GPL-2.0
/*
 * heapwalk.c - heap snapshots for memtrace (HEAP_REQUEST in agent_proto.h).
 *
 * Socket thread only. The first walk creates a JVMTI environment of our own
 * (can_tag_objects, GC events), so the walk's tags never mix with the
 * sampler's; it is kept for the agent's life (GC events only while a
 * session is open). Two kinds of walk:
 *
 * Untagged (every request without MT_AP_HEAP_KEEPIDS: single walks of
 * query, snapshot, histo, serve). The walk's env holds no tag at all: a tag
 * per object is what made walks slow (JVMTI looks up the referrer's and the
 * referee's tag, and their classes', in its tag map for every reference it
 * reports: perf put 40 % of the VM thread in JvmtiTagMapTable::find) and
 * costly afterwards (clearing them is a second pause). Classes, loaders and
 * threads get ids from tags in a second env (names_env), which the walk
 * (in a third env, plain_env, that never holds a tag) never consults, and a
 * JNI local reference each, kept over the pause.
 * Objects are told apart by their addresses, which cannot change during the
 * pause. JVMTI does not give the callback an object's address; HotSpot's
 * CallbackWrapper keeps it on the VM thread's stack next to the tag it
 * passes: (oop, size, tag) for the referee, (oop, tag) for the referrer -
 * the same on JDK 17.0.15 and 25.0.3 (read from their libjvm's machine code,
 * and the source of 17u). At the pause's first callback the named objects'
 * addresses are read through their local references (a HotSpot local
 * reference points at a slot holding the address). The agent never
 * dereferences an object; addresses are only keys. It checks the layout on
 * every callback (the word before the tag must be the size JVMTI passes, the
 * oop aligned and non-null) and after the pause (every referrer and value
 * owner must be an object the walk met, every CLASS reference must lead to a
 * named class); if a check fails the walk is thrown away and done again with
 * tags, and every later walk of the agent uses tags (logged once; e2e
 * walk_fallback). No collector needs that (e2e walk_gcs: Serial, Parallel,
 * G1, ZGC, Shenandoah on JDK 17 and 25). One walk:
 *   1. the JVM running: name every loaded class, its loader and every thread;
 *      build the field tables (JVMTI field indices, see below); reserve the
 *      visit array (the last walk's size + 25 %, its pages touched now);
 *   2. the pause: FollowReferences; the callbacks only append a struct
 *      mt_ap_hvisit (no JNI, no JVMTI, no socket) and abort the walk after
 *      max_pause_ms if asked;
 *   3. the JVM running again: the names env's tags are cleared
 *      (GetObjectsWithTags + SetTag 0: no safepoint); the visits, the named
 *      objects' addresses and the values are cut into HEAP_DATA frames
 *      (NAMED, VISITS, PRIMS, STRING records with keys, agent_proto.h) by
 *      heap_next_chunk() as the socket takes them; heap_release() frees.
 *      memtrace, not the JVM, turns addresses into ids (user/heap/walkids.c: a
 *      hash look-up per reported reference, ~0.3 s of CPU per 2 M, was the
 *      agent's largest cost in the JVM when it did it itself) and checks
 *      the layout a second time; when that check fails it asks again with
 *      MT_AP_HEAP_NOUNTAGGED, and every later walk of the agent uses tags.
 *
 * Frozen (MT_AP_HEAP_FREEZE, untagged walks only; freeze.c). At the walk's
 * first callback, a root, before any object is visited, freeze_here() forks:
 * the JVM returns JVMTI_VISIT_ABORT and leaves the pause; in the copy the
 * same callbacks go on recording visits, values and strings (copy_step()
 * counts them for the JVM's thread, which watches). When HotSpot leaves the
 * safepoint in the copy the walk is over: finish_frozen() reads what the
 * copy's callbacks counted and either hands memtrace the addresses of its
 * records (COPY record, MT_AP_FREEZE_DIRECT: the copy is `held` until
 * HEAP_RELEASE) or reads them into this agent's vectors (pull_from_copy())
 * and kills the copy. Anything failing after the fork: the walk is done
 * again in a pause, and the FREEZE record says why.
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
 * GarbageCollectionFinish events count GCs (an atomic; the sampler's env has
 * its own callbacks and counter). Each walk appends (its first id, the GC
 * count during its pause) and sends the whole list, so memtrace computes an
 * object's age as GCs now - GCs at the walk that first tagged it (0 for
 * every object of an untagged walk: its ids are all new).
 *
 * JVMTI field indices (the spec's FollowReferences "index" for FIELD
 * references and primitive fields): for an instance of class C, the static
 * fields of every superinterface of C and of its superclasses come first
 * (each interface once), then the fields (static and instance) of each class
 * from java.lang.Object down to C, each class's in GetClassFields order.
 * A primitive value whose type disagrees with the table is counted in
 * mt_ap_heap_done.mismatches, never sent under a wrong name.
 */
#include <errno.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "freeze.h"
#include "heapwalk.h"
#include "sampler.h"

#define ACC_STATIC    0x0008
#define ACC_INTERFACE 0x0200

struct hw_field {
	int32_t index;
	char type;      /* the signature's first char ('L' and '[' for references) */
	bool string;    /* declared java.lang.String (sent as type 'T') */
	bool projected; /* its value is sent */
	char *name;
};

struct hw_class {
	uint64_t id, super, loader;
	char *sig;
	struct hw_field *fields;  /* instance fields, inherited ones included */
	uint32_t nfields;
	struct hw_field *statics; /* the class's own reference statics (names, indices) */
	uint32_t nstatics;
	uint64_t *ifaces;         /* direct superinterfaces' ids */
	uint32_t nifaces;
	bool ext;                 /* ifaces and statics are known (MT_AP_HCLASS_EXT) */
	bool iface;               /* an interface */
	bool noifaces;            /* not prepared yet: its interfaces are unknown */
	int8_t *proj;             /* [JVMTI index] -> type char if projected, else 0 */
	int32_t nproj;            /* entries in proj */
	bool any_proj;
};

/* A growable array of fixed-size entries. */
struct hw_vec {
	char *p;
	size_t n, cap, esz;
	bool oom;
};

/* A string value: the layout of struct mt_ap_hstrref, so that memtrace can
 * read a frozen copy's array of them as it is (MT_AP_FREEZE_DIRECT). */
struct hw_str {
	uint64_t obj;
	uint32_t len;
	uint32_t reserved;
	char *utf8;
};
_Static_assert(sizeof(struct hw_str) == sizeof(struct mt_ap_hstrref) &&
	       offsetof(struct hw_str, utf8) == offsetof(struct mt_ap_hstrref, utf8) &&
	       sizeof(char *) == sizeof(uint64_t), "hw_str is a struct mt_ap_hstrref");

struct hw_thread {
	uint64_t id;
	char *name;
};

/* A class, loader or thread of an untagged walk: its id (a tag in the names
 * env), a local reference kept over the pause, its address read in the pause. */
struct hw_named {
	jobject ref;
	uint64_t id;
	uint64_t addr;
};


#define HW_MAX_WALKS 4000 /* age ranges kept per session (one AGES record: < 64 KiB) */
#define COPY_KEEP_MS 120000 /* a frozen copy memtrace reads itself lives at most this after DONE */

/* The session: env, ids, GC count and walks (until heap_session_end()). */
static struct {
	jvmtiEnv *env;
	uint64_t next_id;
	uint64_t start_id;       /* next_id when the session began: equal, no tags */
	uint64_t *bits;          /* recorded-in-this-walk bitmap, indexed by id */
	size_t nwords;
	bool bits_oom;
	struct mt_ap_hwalk walks[HW_MAX_WALKS];
	uint32_t nwalks, dropped_walks;
	bool tagged_objects;     /* a walk of this session tagged objects (KEEPIDS) */
	bool stale_tags;         /* an untagged walk could not clear its class tags */
} hs;

/* Set when an untagged walk's layout checks failed: tags from then on. */
static bool untagged_broken;

/* Where the referee's oop sits relative to tag_ptr: -2. The e2e test of the
 * fallback (walk_fallback) sets MEMTRACE_AGENT_TEST_LAYOUT=wrong in the JVM's
 * environment to read the word before it instead. */
static int oop_slot = -2;

/* A frozen copy whose records memtrace reads itself (MT_AP_FREEZE_DIRECT),
 * kept after DONE until HEAP_RELEASE, the session's end or held_until. */
static struct freeze held = { .mem_fd = -1, .pidfd = -1 };
static uint64_t held_until;

/* Visits of the agent's last untagged walk: the next one reserves that much
 * (+25 %) before its pause, so the pause neither copies nor faults pages in. */
static size_t last_visits = 1u << 18;

/* The walk's env once created, kept for the agent's life (see heap_session_end),
 * and the first id of the next session: 1, unless clearing the tags failed
 * (then ids go on from there, so no stale tag can alias a new id). */
static jvmtiEnv *kept_env;
static uint64_t kept_next_id = 1;
static jvmtiEnv *names_env, *plain_env;

/* GarbageCollectionFinish events of the session's env (a VM thread bumps it). */
static _Atomic uint64_t hs_gcs;

/* The state of one walk and of its sending. */
static struct hw_state {
	jvmtiEnv *env;           /* hs.env while walking */
	uint32_t flags;
	uint64_t first_id;       /* hs.next_id when the walk began */
	uint64_t gcs;            /* hs_gcs read during the pause */
	bool gcs_read;
	uint64_t deadline_ns, t0;
	unsigned calls;
	bool aborted;
	/* class table, in GetLoadedClasses order; clsmap: class id -> index */
	struct hw_class *cls;
	uint32_t ncls;
	uint64_t *clskeys;
	uint32_t *clsvals;
	size_t clsmask;
	struct hw_thread *threads;
	uint32_t nthreads;
	/* what the walk recorded */
	struct hw_vec objs, refs, roots, prims, strs;
	/* untagged walks: the pause's visits, the tags given (cleared after) */
	bool untagged;
	jvmtiEnv *tenv;          /* the env that tags classes, loaders, threads */
	struct hw_vec visits, given, named;
	/* MT_AP_HEAP_SAMPLES: the sampled objects found (struct mt_ap_hsampled),
	 * and the tags they got in an untagged walk's env (cleared after it) */
	struct hw_vec sampled, stags;
	bool resolved;           /* named objects' addresses read (first callback) */
	uint64_t named_next;     /* the first id memtrace gives the other objects */
	uint8_t *projidx;        /* [JVMTI index] projected in some class (prefilter) */
	int32_t nprojidx;
	uint64_t layout_bad;
	/* frozen walks (MT_AP_HEAP_FREEZE): the copy, and whether to send FREEZE */
	bool want_freeze;        /* the request asked: a FREEZE record goes out */
	bool freezing;           /* the fork is (still) the plan for this walk */
	bool reset_done;         /* the copy cleared ObjectMarker::_needs_reset */
	uint64_t fz_left;        /* the JVM's VM thread left the walk's callback after the fork */
	bool want_copy;          /* MT_AP_FREEZE_DIRECT served: a COPY record goes out */
	struct mt_ap_hcopy copy;
	uint64_t progress;       /* callbacks in the copy (the JVM's thread watches it) */
	struct freeze fz;
	jlong own_tid;           /* the agent thread's Java thread id, -1 unknown */
	struct mt_ap_heap_done done;
	/* sending cursor: section, index within it */
	bool pending;
	int sec;
	size_t pos;
} hw;

static void vec_init(struct hw_vec *v, size_t esz)
{
	memset(v, 0, sizeof(*v));
	v->esz = esz;
}

/* Append one entry; on out-of-memory the walk stops (partial result). */
static void *vec_push(struct hw_vec *v)
{
	if (v->n == v->cap) {
		size_t nc = v->cap ? v->cap * 2 : 4096;
		char *np = realloc(v->p, nc * v->esz);

		if (!np) {
			v->oom = true;
			return NULL;
		}
		v->p = np;
		v->cap = nc;
	}
	return v->p + v->esz * v->n++;
}

/* Room for n entries, its pages touched now (not in the pause). */
static void vec_reserve(struct hw_vec *v, size_t n)
{
	char *np;

	if (n <= v->cap)
		return;
	np = realloc(v->p, n * v->esz);
	if (!np)
		return; /* vec_push will try again, and say so */
	memset(np + v->n * v->esz, 0, (n - v->n) * v->esz);
	v->p = np;
	v->cap = n;
}

static void vec_free(struct hw_vec *v)
{
	free(v->p);
	memset(v, 0, sizeof(*v));
}

static uint64_t new_tag(void)
{
	uint64_t t = (hs.next_id++) << 1;

	if (hw.untagged) { /* cleared after the walk */
		uint64_t *g = vec_push(&hw.given);

		if (g)
			*g = t;
	}
	return t;
}

/* Untagged walks: keep a local reference to object o (tag t) for the pause. */
static void name_object(jobject o, uint64_t t)
{
	struct hw_named *nm;
	JNIEnv *jni = agent.jni;

	if (!hw.untagged)
		return;
	nm = vec_push(&hw.named);
	if (!nm)
		return;
	nm->ref = (*jni)->NewLocalRef(jni, o);
	nm->id = t >> 1;
	nm->addr = 0;
	if (!nm->ref)
		hw.named.n--;
}

/* Was id recorded in this walk? Marks it recorded. Out of memory for the
 * bitmap counts as "recorded" (nothing is sent twice) and ends the walk. */
static bool test_and_mark(uint64_t id)
{
	size_t w = (size_t)(id >> 6);
	uint64_t m = 1ull << (id & 63);
	bool was;

	if (w >= hs.nwords) {
		size_t nw = hs.nwords ? hs.nwords : 1024;
		uint64_t *nb;

		while (nw <= w)
			nw *= 2;
		nb = realloc(hs.bits, nw * sizeof(*nb));
		if (!nb) {
			hs.bits_oom = true;
			return true;
		}
		memset(nb + hs.nwords, 0, (nw - hs.nwords) * sizeof(*nb));
		hs.bits = nb;
		hs.nwords = nw;
	}
	was = hs.bits[w] & m;
	hs.bits[w] |= m;
	return was;
}

static bool recorded(uint64_t id)
{
	size_t w = (size_t)(id >> 6);

	return w < hs.nwords && (hs.bits[w] & (1ull << (id & 63)));
}

/* The id of an object, recording it the first time the walk meets it. */
static uint64_t seen(jlong *tag_ptr, jlong class_tag, jlong size, jint length)
{
	uint64_t t = (uint64_t)*tag_ptr;
	struct mt_ap_hobj *o;

	if (!t) {
		t = new_tag();
		*tag_ptr = (jlong)t;
	}
	if (test_and_mark(t >> 1))
		return t >> 1;
	o = vec_push(&hw.objs);
	if (o) {
		o->id = t >> 1;
		o->cls = (uint64_t)class_tag >> 1;
		o->size = (uint64_t)size;
		o->length = length;
		o->reserved = 0;
		hw.done.bytes += (uint64_t)size;
	}
	return t >> 1;
}

static bool over_time(void)
{
	if (!(hw.flags & MT_AP_HEAP_MAXPAUSE))
		return false;
	if (hw.aborted)
		return true;
	if ((++hw.calls & 255) == 0 || hw.deadline_ns == hw.t0) {
		if (agent_mono_ns() >= hw.deadline_ns)
			hw.aborted = true;
	}
	return hw.aborted;
}

static bool out_of_memory(void)
{
	return hs.bits_oom || hw.objs.oom || hw.refs.oom || hw.roots.oom || hw.prims.oom ||
	       hw.strs.oom || hw.visits.oom;
}

static size_t cls_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

/* The class table index of class id cid, or UINT32_MAX. */
static uint32_t cls_index(uint64_t cid)
{
	size_t i;

	if (!cid || !hw.clskeys)
		return UINT32_MAX;
	for (i = cls_hash(cid) & hw.clsmask; hw.clskeys[i]; i = (i + 1) & hw.clsmask)
		if (hw.clskeys[i] == cid)
			return hw.clsvals[i];
	return UINT32_MAX;
}

static void cls_put(uint64_t cid, uint32_t idx)
{
	size_t i;

	for (i = cls_hash(cid) & hw.clsmask; hw.clskeys[i]; i = (i + 1) & hw.clsmask)
		if (hw.clskeys[i] == cid)
			return;
	hw.clskeys[i] = cid;
	hw.clsvals[i] = idx;
}

/* Is JVMTI index idx of class id cid a projected field? Its type char or 0. */
static int proj_type(uint64_t cid, jint idx)
{
	const struct hw_class *c;
	uint32_t ci = cls_index(cid);

	if (ci == UINT32_MAX)
		return 0;
	c = &hw.cls[ci];
	if (!c->any_proj || idx < 0 || idx >= c->nproj)
		return 0;
	return c->proj[idx];
}

/* The start of every reference callback: false when the walk must stop (over
 * --max-pause, out of memory); the GC count is read once, inside the pause,
 * where no GC can finish until it ends. */
static bool walk_goes_on(void)
{
	if (over_time() || out_of_memory()) {
		hw.aborted = true;
		return false;
	}
	if (!hw.gcs_read) {
		hw.gcs = atomic_load(&hs_gcs);
		hw.gcs_read = true;
	}
	return true;
}

/* Is this root one of the agent's own JNI local references (those that keep
 * the named classes, loaders and threads over an untagged walk's pause)?
 * Not a root of the application: left out of the roots sent. */
static bool own_local(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info)
{
	return kind == JVMTI_HEAP_REFERENCE_JNI_LOCAL && hw.own_tid >= 0 &&
	       info->jni_local.thread_id == hw.own_tid;
}

/* The index JVMTI gives a reference: field index, array slot, else -1. */
static int32_t ref_index(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info)
{
	if (kind == JVMTI_HEAP_REFERENCE_FIELD || kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD)
		return info->field.index;
	if (kind == JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT)
		return info->array.index;
	return -1;
}

static jint JNICALL on_ref(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			   jlong class_tag, jlong referrer_class_tag, jlong size, jlong *tag_ptr,
			   jlong *referrer_tag_ptr, jint length, void *user_data)
{
	uint64_t to, from;
	int32_t index;

	if (!walk_goes_on())
		return JVMTI_VISIT_ABORT;
	to = seen(tag_ptr, class_tag, size, length);
	if (!referrer_tag_ptr) { /* a heap root */
		if ((hw.flags & MT_AP_HEAP_REFS) && !own_local(kind, info)) {
			struct mt_ap_hroot *r = vec_push(&hw.roots);

			if (r) {
				r->to = to;
				r->kind = (uint32_t)kind;
				r->reserved = 0;
			}
		}
		return JVMTI_VISIT_OBJECTS;
	}
	index = ref_index(kind, info);
	if (!(hw.flags & MT_AP_HEAP_REFS) &&
	    !(kind == JVMTI_HEAP_REFERENCE_FIELD &&
	      proj_type((uint64_t)referrer_class_tag >> 1, index)))
		return JVMTI_VISIT_OBJECTS;
	/* the referrer was met before (as a root or a referee); if not, record it now */
	from = referrer_tag_ptr == tag_ptr ? to : seen(referrer_tag_ptr, referrer_class_tag, 0, -1);
	{
		struct mt_ap_href *r = vec_push(&hw.refs);

		if (r) {
			r->from = from;
			r->to = to;
			r->index = index;
			r->kind = (uint32_t)kind;
		}
	}
	return JVMTI_VISIT_OBJECTS;
}

/*
 * The object of an untagged walk's callback: its id if it has a tag, else
 * MT_AP_HV_ADDR | its address, the word @slot words from tag_ptr in the
 * CallbackWrapper (see the top of the file); 0 if that word is not what it
 * must be, or !@size_ok.
 */
static uint64_t key_at(const jlong *tag_ptr, int slot, bool size_ok)
{
	uint64_t o;

	if (*tag_ptr)
		return (uint64_t)*tag_ptr >> 1;
	o = (uint64_t)tag_ptr[slot];
	if (!size_ok || !o || (o & 7) || (o & MT_AP_HV_ADDR)) {
		hw.layout_bad++;
		return 0;
	}
	return o | MT_AP_HV_ADDR;
}

/* The referee: (oop, size, tag); @size < 0: the callback passed no size to
 * check against (primitive fields). */
static uint64_t referee_key(const jlong *tag_ptr, jlong size)
{
	return key_at(tag_ptr, oop_slot, size < 0 || tag_ptr[-1] == size);
}

/* The referrer likewise: (oop, tag) in TwoOopCallbackWrapper. */
static uint64_t referrer_key(const jlong *referrer_tag_ptr)
{
	return key_at(referrer_tag_ptr, -1, true);
}

/*
 * The addresses of the named objects (classes, loaders, threads), read from
 * their JNI local references at the pause's first callback: a HotSpot local
 * reference points at a slot holding the object's address (low tag bits 0).
 * Checked after the pause: every CLASS reference must lead to a named class.
 */
static void resolve_named(void)
{
	hw.resolved = true;
	for (size_t i = 0; i < hw.named.n; i++) {
		struct hw_named *nm = &((struct hw_named *)hw.named.p)[i];
		uintptr_t r = (uintptr_t)nm->ref;

		if (!r)
			continue; /* a sampled object: known by its tag */
		if (r & 3) {
			hw.layout_bad++;
			continue;
		}
		nm->addr = *(const volatile uint64_t *)r;
	}
}

/*
 * A frozen walk, at the walk's first callback (a root: the fork comes before
 * any object is visited): true when this process is the JVM and must leave
 * the pause now (the copy walks). A failed fork leaves the walk to the pause.
 */
static bool freeze_here(void)
{
	pid_t pid;

	if (!hw.freezing || hw.fz.forked)
		return false;
	pid = freeze_fork(&hw.fz);
	if (pid > 0) {
		hw.fz_left = agent_mono_ns(); /* the pause ends right after this return */
		return true;
	}
	if (pid == 0)
		hw.flags &= ~MT_AP_HEAP_MAXPAUSE; /* the copy pauses nothing */
	else
		hw.freezing = false;
	return false;
}

/* In the copy, every callback: count it (the JVM's thread watches the count);
 * at the first one between objects (@object_ref), the roots are all in: on
 * JDK 17 clear ObjectMarker::_needs_reset so that the walk's end does not
 * unmark the whole heap (nothing is left to unmark in a copy about to die). */
static void copy_step(bool object_ref)
{
	hw.progress++;
	if (!object_ref || hw.reset_done)
		return;
	hw.reset_done = true;
	if (hw.fz.req.flags & MT_AP_FREEZE_TEST_FAIL)
		_exit(80);
	if (hw.fz.req.flags & MT_AP_FREEZE_TEST_HANG) {
		struct timespec t = { 3600, 0 };

		for (;;)
			nanosleep(&t, NULL);
	}
	if (hw.fz.req.reset_addr) {
		volatile uint8_t *r = (volatile uint8_t *)(uintptr_t)hw.fz.req.reset_addr;

		if (*r == 1)
			*r = 0;
	}
}

/* Is JVMTI index idx projected in some class? (the in-pause prefilter) */
static bool maybe_projected(jint idx)
{
	return (hw.flags & MT_AP_HEAP_ALLFIELDS) ||
	       (idx >= 0 && idx < hw.nprojidx && hw.projidx[idx]);
}

/* An untagged walk's reference callback: append one visit, nothing else. */
static jint JNICALL on_ref_untagged(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
				    jlong class_tag, jlong referrer_class_tag, jlong size,
				    jlong *tag_ptr, jlong *referrer_tag_ptr, jint length,
				    void *user_data)
{
	struct mt_ap_hvisit *v;
	uint64_t to, from = 0;
	int32_t index = -1;
	uint32_t flags = 0;

	if (!walk_goes_on())
		return JVMTI_VISIT_ABORT;
	if (!hw.resolved) /* inside the pause: nothing moves until it ends */
		resolve_named();
	if (freeze_here())
		return JVMTI_VISIT_ABORT; /* the JVM: out of the pause, the copy walks on */
	if (hw.fz.in_child)
		copy_step(referrer_tag_ptr != NULL);
	to = referee_key(tag_ptr, size);
	if (!to || (size & 7) || (size >> 35)) {
		hw.layout_bad += !!to;
		return JVMTI_VISIT_ABORT; /* heap_walk() does it again with tags */
	}
	if (!referrer_tag_ptr) {
		if ((hw.flags & MT_AP_HEAP_REFS) && !own_local(kind, info))
			flags = MT_AP_HV_KEEP;
	} else {
		index = ref_index(kind, info);
		if (hw.flags & MT_AP_HEAP_REFS)
			flags = MT_AP_HV_KEEP;
		else if (kind == JVMTI_HEAP_REFERENCE_FIELD && maybe_projected(index))
			flags = MT_AP_HV_MAYBE;
		if (flags || kind == JVMTI_HEAP_REFERENCE_CLASS) { /* CLASS: the referrer's class */
			from = referrer_tag_ptr == tag_ptr ? to : referrer_key(referrer_tag_ptr);
			if (!from)
				return JVMTI_VISIT_ABORT;
		}
	}
	v = vec_push(&hw.visits);
	if (!v)
		return JVMTI_VISIT_ABORT;
	v->to = to;
	v->from = from;
	v->size8 = (uint32_t)(size >> 3);
	v->length = length;
	v->index = index;
	v->kind = (uint32_t)kind | flags;
	return JVMTI_VISIT_OBJECTS;
}

static jint JNICALL on_prim(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
			    jlong object_class_tag, jlong *object_tag_ptr, jvalue value,
			    jvmtiPrimitiveType value_type, void *user_data)
{
	struct mt_ap_hprim *p;
	int want;

	if (hw.fz.in_child)
		copy_step(true);
	if (kind != JVMTI_HEAP_REFERENCE_FIELD)
		return 0;
	if (hw.untagged) { /* the object's class is known after the pause: checked then */
		if (!maybe_projected(info->field.index))
			return 0;
	} else {
		want = proj_type((uint64_t)object_class_tag >> 1, info->field.index);
		if (!want)
			return 0;
		if (want != (int)value_type) {
			hw.done.mismatches++;
			return 0;
		}
	}
	p = vec_push(&hw.prims);
	if (!p)
		return 0;
	if (hw.untagged) {
		p->obj = referee_key(object_tag_ptr, -1); /* checked after the pause */
		if (!p->obj) {
			hw.prims.n--;
			return JVMTI_VISIT_ABORT;
		}
	} else {
		p->obj = (uint64_t)*object_tag_ptr >> 1;
	}
	p->bits = 0;
	memcpy(&p->bits, &value, sizeof(value) < 8 ? sizeof(value) : 8);
	switch (value_type) { /* normalise to 64-bit integers / a double */
	case JVMTI_PRIMITIVE_TYPE_BOOLEAN: p->bits = value.z; break;
	case JVMTI_PRIMITIVE_TYPE_BYTE: p->bits = (uint64_t)(int64_t)value.b; break;
	case JVMTI_PRIMITIVE_TYPE_CHAR: p->bits = value.c; break;
	case JVMTI_PRIMITIVE_TYPE_SHORT: p->bits = (uint64_t)(int64_t)value.s; break;
	case JVMTI_PRIMITIVE_TYPE_INT: p->bits = (uint64_t)(int64_t)value.i; break;
	case JVMTI_PRIMITIVE_TYPE_LONG: p->bits = (uint64_t)value.j; break;
	case JVMTI_PRIMITIVE_TYPE_FLOAT: { double d = value.f; memcpy(&p->bits, &d, 8); break; }
	case JVMTI_PRIMITIVE_TYPE_DOUBLE: memcpy(&p->bits, &value.d, 8); break;
	}
	p->index = info->field.index;
	p->type = (uint32_t)value_type;
	return 0;
}

/* UTF-16 to UTF-8 (unpaired surrogates become U+FFFD), at most max bytes. */
static size_t utf16_to_utf8(const jchar *s, jint n, char *out, size_t max, bool *cut)
{
	size_t o = 0;

	for (jint i = 0; i < n; i++) {
		uint32_t c = s[i];
		char b[4];
		size_t k;

		if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && s[i + 1] >= 0xdc00 && s[i + 1] < 0xe000) {
			c = 0x10000 + ((c - 0xd800) << 10) + (s[i + 1] - 0xdc00);
			i++;
		} else if (c >= 0xd800 && c < 0xe000) {
			c = 0xfffd;
		}
		if (c < 0x80) {
			b[0] = (char)c; k = 1;
		} else if (c < 0x800) {
			b[0] = (char)(0xc0 | c >> 6); b[1] = (char)(0x80 | (c & 0x3f)); k = 2;
		} else if (c < 0x10000) {
			b[0] = (char)(0xe0 | c >> 12); b[1] = (char)(0x80 | ((c >> 6) & 0x3f));
			b[2] = (char)(0x80 | (c & 0x3f)); k = 3;
		} else {
			b[0] = (char)(0xf0 | c >> 18); b[1] = (char)(0x80 | ((c >> 12) & 0x3f));
			b[2] = (char)(0x80 | ((c >> 6) & 0x3f)); b[3] = (char)(0x80 | (c & 0x3f));
			k = 4;
		}
		if (o + k > max) {
			*cut = true;
			break;
		}
		memcpy(out + o, b, k);
		o += k;
	}
	return o;
}

static jint JNICALL on_string(jlong class_tag, jlong size, jlong *tag_ptr, const jchar *value,
			      jint value_length, void *user_data)
{
	struct hw_str *s;
	size_t cap = (size_t)(value_length > 0 ? value_length : 0) * 3;
	bool cut = false;

	uint64_t obj;

	if (hw.fz.in_child)
		copy_step(true);
	if (!(hw.flags & MT_AP_HEAP_STRINGS))
		return 0;
	if (hw.untagged) { /* FollowReferences visits each String once, after its referee callback */
		obj = referee_key(tag_ptr, size);
		if (!obj)
			return JVMTI_VISIT_ABORT;
	} else {
		if (!*tag_ptr || !recorded((uint64_t)*tag_ptr >> 1))
			return 0;
		obj = (uint64_t)*tag_ptr >> 1;
	}
	if (cap > MT_AP_HSTR_MAX)
		cap = MT_AP_HSTR_MAX;
	s = vec_push(&hw.strs);
	if (!s)
		return 0;
	s->obj = obj;
	s->utf8 = malloc(cap + 1);
	if (!s->utf8) {
		hw.strs.n--;
		hw.strs.oom = true;
		return 0;
	}
	s->len = (uint32_t)utf16_to_utf8(value, value_length, s->utf8, cap, &cut);
	s->utf8[s->len] = '\0';
	if (cut)
		hw.done.truncated++;
	return 0;
}

/* A no-op walk for the benchmark's baseline. */
static jint JNICALL on_ref_bare(jvmtiHeapReferenceKind kind, const jvmtiHeapReferenceInfo *info,
				jlong class_tag, jlong referrer_class_tag, jlong size,
				jlong *tag_ptr, jlong *referrer_tag_ptr, jint length,
				void *user_data)
{
	return JVMTI_VISIT_OBJECTS;
}

/* The tag of a class/loader/thread object, tagging it with a new id if it has
 * none (untagged walks: or one from before this walk, left by a failed clear). */
static uint64_t tag_of(jobject o)
{
	jlong t = 0;

	if (!o)
		return 0;
	if ((*hw.tenv)->GetTag(hw.tenv, o, &t) || !t ||
	    (hw.untagged && ((uint64_t)t >> 1) < hw.first_id)) {
		t = (jlong)new_tag();
		if ((*hw.tenv)->SetTag(hw.tenv, o, t))
			return 0;
		name_object(o, (uint64_t)t);
	}
	return (uint64_t)t >> 1;
}

static bool name_projected(const char *name, const char *names, uint32_t n, const char *end)
{
	const char *p = names;

	for (uint32_t i = 0; i < n && p < end; i++) {
		if (!strcmp(p, name))
			return true;
		p += strlen(p) + 1;
	}
	return false;
}

/* Count of the static fields of the superinterfaces of k (recursively);
 * iseen[] de-duplicates interfaces by class id. */
static int iface_fields(JNIEnv *jni, jclass k, uint8_t *iseen)
{
	jint n = 0, total = 0;
	jclass *ifs = NULL;

	if ((*hw.env)->GetImplementedInterfaces(hw.env, k, &n, &ifs))
		return 0;
	for (jint i = 0; i < n; i++) {
		uint32_t ci = cls_index(tag_of(ifs[i]));
		jint nf = 0;
		jfieldID *fs = NULL;

		if (ci != UINT32_MAX && !iseen[ci]) {
			iseen[ci] = 1;
			if (!(*hw.env)->GetClassFields(hw.env, ifs[i], &nf, &fs)) {
				total += nf;
				(*hw.env)->Deallocate(hw.env, (unsigned char *)fs);
			}
			total += iface_fields(jni, ifs[i], iseen);
		}
		(*jni)->DeleteLocalRef(jni, ifs[i]);
	}
	(*hw.env)->Deallocate(hw.env, (unsigned char *)ifs);
	return total;
}

/* Append a static reference field to c->statics (names of STATIC_FIELD references). */
static void add_static(struct hw_class *c, uint32_t *cap, const char *name, char type,
		       int32_t idx)
{
	struct hw_field *f;

	if (c->nstatics == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 4;
		struct hw_field *nfs = realloc(c->statics, nc * sizeof(*nfs));

		if (!nfs)
			return;
		c->statics = nfs;
		*cap = nc;
	}
	f = &c->statics[c->nstatics];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	if (!f->name)
		return;
	f->index = idx;
	f->type = type;
	c->nstatics++;
}

/* Append class k's own fields to c, from index *next; static ones are only
 * counted, or, with @scap (k is c's own class), their reference ones kept in
 * c->statics. */
static int add_own_fields(jclass k, struct hw_class *c, int32_t *next, uint32_t *cap,
			  uint32_t *scap, const char *names, uint32_t nnames, const char *end)
{
	jint nf = 0;
	jfieldID *fs = NULL;

	if ((*hw.env)->GetClassFields(hw.env, k, &nf, &fs))
		return 0;
	for (jint i = 0; i < nf; i++) {
		char *name = NULL, *sig = NULL;
		jint mods = 0;
		int32_t idx = (*next)++;

		if ((*hw.env)->GetFieldModifiers(hw.env, k, fs[i], &mods))
			continue;
		if ((mods & ACC_STATIC) && !scap)
			continue;
		if ((*hw.env)->GetFieldName(hw.env, k, fs[i], &name, &sig, NULL))
			continue;
		if (mods & ACC_STATIC) {
			if (sig[0] == 'L' || sig[0] == '[')
				add_static(c, scap, name, sig[0], idx);
			goto next;
		}
		if (c->nfields == *cap) {
			uint32_t nc = *cap ? *cap * 2 : 8;
			struct hw_field *nfs = realloc(c->fields, nc * sizeof(*nfs));

			if (!nfs)
				goto next;
			c->fields = nfs;
			*cap = nc;
		}
		{
			struct hw_field *f = &c->fields[c->nfields];

			f->name = strdup(name);
			if (!f->name)
				goto next;
			f->index = idx;
			f->type = sig[0];
			f->string = !strcmp(sig, "Ljava/lang/String;");
			f->projected = (hw.flags & MT_AP_HEAP_ALLFIELDS) ||
				       name_projected(name, names, nnames, end);
			c->nfields++;
		}
next:
		(*hw.env)->Deallocate(hw.env, (unsigned char *)name);
		(*hw.env)->Deallocate(hw.env, (unsigned char *)sig);
	}
	(*hw.env)->Deallocate(hw.env, (unsigned char *)fs);
	return 0;
}

/* Field table of class k into c: superclasses first, JVMTI indices. */
static void build_fields(JNIEnv *jni, jclass k, struct hw_class *c, uint8_t *iseen,
			 const char *names, uint32_t nnames, const char *end)
{
	jclass chain[256];
	int depth = 0, base = 0;
	int32_t next;
	uint32_t cap = 0, scap = 0;
	jint st = 0;

	if ((*hw.env)->GetClassStatus(hw.env, k, &st) || (st & (JVMTI_CLASS_STATUS_ARRAY |
								   JVMTI_CLASS_STATUS_PRIMITIVE)))
		return;
	chain[depth++] = (*jni)->NewLocalRef(jni, k);
	while (depth < (int)MT_ARRAY_SIZE(chain)) {
		jclass s = (*jni)->GetSuperclass(jni, chain[depth - 1]);

		if (!s)
			break;
		chain[depth++] = s;
	}
	memset(iseen, 0, hw.ncls);
	for (int i = 0; i < depth; i++)
		base += iface_fields(jni, chain[i], iseen);
	next = base;
	for (int i = depth - 1; i >= 0; i--)
		add_own_fields(chain[i], c, &next, &cap, i ? NULL : &scap, names, nnames, end);
	for (int i = 0; i < depth; i++)
		(*jni)->DeleteLocalRef(jni, chain[i]);
	for (uint32_t i = 0; i < c->nfields; i++) {
		if (!c->fields[i].projected)
			continue;
		c->any_proj = true;
		if (c->fields[i].index >= c->nproj)
			c->nproj = c->fields[i].index + 1;
	}
	if (c->any_proj) {
		c->proj = calloc((size_t)c->nproj, 1);
		if (!c->proj) {
			c->any_proj = false;
			return;
		}
		for (uint32_t i = 0; i < c->nfields; i++)
			if (c->fields[i].projected)
				c->proj[c->fields[i].index] = c->fields[i].type;
	}
}

/*
 * The direct superinterfaces of a class JVMTI will not list: it lists those
 * of prepared classes only, and a class loaded but not linked yet (no
 * instance, no linked subclass) can still have arrays with instances, whose
 * `is` needs them. Class.getInterfaces() reads what loading recorded,
 * without linking (the JVM's own answer): called through JNI, here, with
 * the JVM running. Returns the count into c->ifaces, or -1.
 */
static int interfaces_by_jni(JNIEnv *jni, jclass k, struct hw_class *c)
{
	static jmethodID get_ifaces;
	jobjectArray a;
	jsize n;

	if (!get_ifaces) {
		jclass cc = (*jni)->FindClass(jni, "java/lang/Class");

		if (cc) {
			get_ifaces = (*jni)->GetMethodID(jni, cc, "getInterfaces",
							 "()[Ljava/lang/Class;");
			(*jni)->DeleteLocalRef(jni, cc);
		}
		if (!get_ifaces) {
			(*jni)->ExceptionClear(jni);
			return -1;
		}
	}
	a = (*jni)->CallObjectMethod(jni, k, get_ifaces);
	if ((*jni)->ExceptionCheck(jni) || !a) {
		(*jni)->ExceptionClear(jni);
		return -1;
	}
	n = (*jni)->GetArrayLength(jni, a);
	c->ifaces = calloc((size_t)n + 1, sizeof(*c->ifaces));
	for (jsize i = 0; i < n && c->ifaces; i++) {
		jobject f = (*jni)->GetObjectArrayElement(jni, a, i);
		uint64_t id = f ? tag_of(f) : 0;

		if (id)
			c->ifaces[c->nifaces++] = id;
		if (f)
			(*jni)->DeleteLocalRef(jni, f);
	}
	(*jni)->DeleteLocalRef(jni, a);
	return c->ifaces && c->nifaces == (uint32_t)n ? (int)n : -1;
}

/* Whether class k is an interface, and its direct superinterfaces' ids (for
 * `x is Interface` in memtrace): c->ext if known (c->noifaces: all but the
 * interfaces). */
static void class_kind(JNIEnv *jni, jclass k, struct hw_class *c)
{
	jint mods = 0, n = 0;
	jclass *ifs = NULL;

	if ((*hw.env)->GetClassModifiers(hw.env, k, &mods))
		return;
	c->iface = mods & ACC_INTERFACE;
	c->ext = true;
	if ((*hw.env)->GetImplementedInterfaces(hw.env, k, &n, &ifs)) {
		c->noifaces = interfaces_by_jni(jni, k, c) < 0;
		return;
	}
	c->ifaces = calloc((size_t)n + 1, sizeof(*c->ifaces));
	for (jint i = 0; i < n; i++) {
		if (c->ifaces) {
			uint64_t id = tag_of(ifs[i]);

			if (id)
				c->ifaces[c->nifaces++] = id;
		}
		(*jni)->DeleteLocalRef(jni, ifs[i]);
	}
	(*hw.env)->Deallocate(hw.env, (unsigned char *)ifs);
	c->noifaces = !c->ifaces || c->nifaces != (uint32_t)n;
}

/* Clear the tags an untagged walk gave (classes, loaders, threads): no
 * safepoint, the tag map is searched under its lock. */
static void untag_given(void)
{
	jint n = 0;
	jobject *objs = NULL;
	JNIEnv *jni = agent.jni;

	if (!hw.given.n || hw.given.n > INT32_MAX)
		goto out;
	if ((*hw.tenv)->GetObjectsWithTags(hw.tenv, (jint)hw.given.n, (const jlong *)hw.given.p, &n,
					   &objs, NULL)) {
		agent_log("could not clear the tags of %zu classes, loaders and threads: they stay "
			  "until the next session's walk reuses them", hw.given.n);
		hs.stale_tags = true;
		goto out;
	}
	for (jint i = 0; i < n; i++) {
		(*hw.tenv)->SetTag(hw.tenv, objs[i], 0);
		(*jni)->DeleteLocalRef(jni, objs[i]);
	}
	(*hw.tenv)->Deallocate(hw.tenv, (unsigned char *)objs);
out:
	vec_free(&hw.given);
}

static void free_state(void)
{
	for (uint32_t i = 0; i < hw.ncls; i++) {
		struct hw_class *c = &hw.cls[i];

		for (uint32_t j = 0; j < c->nfields; j++)
			free(c->fields[j].name);
		for (uint32_t j = 0; j < c->nstatics; j++)
			free(c->statics[j].name);
		free(c->fields);
		free(c->statics);
		free(c->ifaces);
		free(c->proj);
		if (c->sig)
			free(c->sig);
	}
	free(hw.cls);
	free(hw.clskeys);
	free(hw.clsvals);
	for (uint32_t i = 0; i < hw.nthreads; i++)
		free(hw.threads[i].name);
	free(hw.threads);
	for (size_t i = 0; i < hw.strs.n; i++)
		free(((struct hw_str *)hw.strs.p)[i].utf8);
	vec_free(&hw.objs);
	vec_free(&hw.refs);
	vec_free(&hw.roots);
	vec_free(&hw.prims);
	vec_free(&hw.strs);
	vec_free(&hw.visits);
	vec_free(&hw.given);
	vec_free(&hw.named);
	vec_free(&hw.sampled);
	vec_free(&hw.stags);
	free(hw.projidx);
	free(hw.fz.runs);
	memset(&hw, 0, sizeof(hw));
}

void heap_release(void)
{
	if (held.child > 0 && !held_until) /* DONE is out: memtrace reads the copy now */
		held_until = agent_mono_ns() + (uint64_t)COPY_KEEP_MS * 1000000;
	free_state();
	malloc_trim(0); /* the snapshot's arrays back to the system, not kept by malloc */
}

/* Untag one object (IterateThroughHeap over the tagged objects only). */
static jint JNICALL on_untag(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
			     void *user_data)
{
	*tag_ptr = 0;
	return 0;
}


/*
 * The session's tags are cleared, not disposed with the env: HotSpot keeps
 * ~15 bytes per tagged object of every disposed environment (measured on JDK
 * 17 and 25: the JVM's RSS grew 9.6 MB per query session on a 625 k-object
 * heap, linearly, and stays flat this way). So the env lives on (GC events
 * off) and the next session reuses it, from id 1 again.
 */
void heap_session_end(void)
{
	heap_copy_release();
	free_state();
	if (hs.env) {
		jvmtiHeapCallbacks cb = { .heap_iteration_callback = on_untag };

		(*hs.env)->SetEventNotificationMode(hs.env, JVMTI_DISABLE,
						    JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
		/* a pause about as long as a bare walk's (JVMTI_HEAP_FILTER_UNTAGGED
		 * leaves the untagged objects out of the callbacks, not of the scan) */
		kept_next_id = 1;
		if (!hs.tagged_objects) {
			/* untagged walks cleared their tags: no pass, no pause */
			if (hs.stale_tags)
				kept_next_id = hs.next_id;
		} else if ((*hs.env)->IterateThroughHeap(hs.env, JVMTI_HEAP_FILTER_UNTAGGED, NULL,
							 &cb, NULL)) {
			agent_log("could not clear the heap walk's tags: they stay until the "
				  "next session's walk reuses them");
			kept_next_id = hs.next_id;
		}
		kept_env = hs.env;
	}
	free(hs.bits);
	memset(&hs, 0, sizeof(hs));
	atomic_store(&hs_gcs, 0);
}

/* GarbageCollectionFinish (a VM thread, no JVMTI/JNI allowed): count it. */
static void JNICALL on_gc_finish(jvmtiEnv *e)
{
	atomic_fetch_add(&hs_gcs, 1);
}

/* The session's env: created by the agent's first walk, reused by later
 * sessions (GC events on and the GC count at 0 while a session is open). */
static int session_env(char *why, size_t n)
{
	jvmtiCapabilities caps = { .can_tag_objects = 1,
				   .can_generate_garbage_collection_events = 1 };
	jvmtiEventCallbacks cb = { .GarbageCollectionFinish = on_gc_finish };
	jvmtiError e;

	if (hs.env)
		return 0;
	if (kept_env) {
		hs.env = kept_env;
		atomic_store(&hs_gcs, 0);
		(*hs.env)->SetEventNotificationMode(hs.env, JVMTI_ENABLE,
						    JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
		hs.next_id = hs.start_id = kept_next_id;
		return 0;
	}
	if ((*agent.vm)->GetEnv(agent.vm, (void **)&hs.env, JVMTI_VERSION_1_2) != JNI_OK) {
		hs.env = NULL;
		snprintf(why, n, "no JVMTI environment for the heap walk");
		return -ENOTSUP;
	}
	e = (*hs.env)->AddCapabilities(hs.env, &caps);
	if (!e)
		e = (*hs.env)->SetEventCallbacks(hs.env, &cb, sizeof(cb));
	atomic_store(&hs_gcs, 0);
	if (!e)
		e = (*hs.env)->SetEventNotificationMode(hs.env, JVMTI_ENABLE,
							JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	if (e) {
		snprintf(why, n, "JVMTI refused tagging or GC events for the heap walk (error %d)",
			 (int)e);
		(*hs.env)->DisposeEnvironment(hs.env);
		hs.env = NULL;
		return -EIO;
	}
	hs.next_id = hs.start_id = 1;
	return 0;
}

bool heap_pending(void)
{
	return hw.pending;
}

/* Tag classes (ids 1..n), their loaders, threads; build field tables. */
static int prepare(JNIEnv *jni, const char *names, uint32_t nnames, const char *end,
		   char *why, size_t n)
{
	jint nk = 0, nt = 0;
	jclass *ks = NULL;
	jthread *ts = NULL;
	uint8_t *iseen = NULL;
	int err = 0;

	if ((*hw.env)->GetLoadedClasses(hw.env, &nk, &ks)) {
		snprintf(why, n, "JVMTI GetLoadedClasses failed");
		return -EIO;
	}
	hw.cls = calloc((size_t)nk + 1, sizeof(*hw.cls));
	iseen = calloc((size_t)nk + 1, 1);
	if (!hw.cls || !iseen) {
		snprintf(why, n, "the agent is out of memory for %d classes", (int)nk);
		err = -ENOMEM;
		goto out;
	}
	hw.ncls = (uint32_t)nk;
	hw.clsmask = 16;
	while (hw.clsmask < 2 * (size_t)nk + 16)
		hw.clsmask *= 2;
	hw.clskeys = calloc(hw.clsmask, sizeof(*hw.clskeys));
	hw.clsvals = calloc(hw.clsmask, sizeof(*hw.clsvals));
	hw.clsmask--;
	if (!hw.clskeys || !hw.clsvals) {
		snprintf(why, n, "the agent is out of memory for %d classes", (int)nk);
		err = -ENOMEM;
		goto out;
	}
	for (jint i = 0; i < nk; i++) { /* a class keeps the id an earlier walk gave it */
		hw.cls[i].id = tag_of(ks[i]);
		if (hw.cls[i].id)
			cls_put(hw.cls[i].id, (uint32_t)i);
	}
	for (jint i = 0; i < nk; i++) {
		struct hw_class *c = &hw.cls[i];
		jclass s = (*jni)->GetSuperclass(jni, ks[i]);
		jobject l = NULL;
		char *sig = NULL;

		c->super = tag_of(s);
		if (s)
			(*jni)->DeleteLocalRef(jni, s);
		if (!(*hw.env)->GetClassLoader(hw.env, ks[i], &l) && l) {
			c->loader = tag_of(l);
			(*jni)->DeleteLocalRef(jni, l);
		}
		if (!(*hw.env)->GetClassSignature(hw.env, ks[i], &sig, NULL)) {
			c->sig = strdup(sig);
			(*hw.env)->Deallocate(hw.env, (unsigned char *)sig);
		}
		class_kind(jni, ks[i], c);
		build_fields(jni, ks[i], c, iseen, names, nnames, end);
	}
	if (!(*hw.env)->GetAllThreads(hw.env, &nt, &ts)) {
		hw.threads = calloc((size_t)nt + 1, sizeof(*hw.threads));
		for (jint i = 0; i < nt; i++) {
			jvmtiThreadInfo ti;

			if (hw.threads && !(*hw.env)->GetThreadInfo(hw.env, ts[i], &ti)) {
				hw.threads[hw.nthreads].id = tag_of(ts[i]);
				hw.threads[hw.nthreads].name = strdup(ti.name ? ti.name : "");
				if (hw.threads[hw.nthreads].name)
					hw.nthreads++;
				(*hw.env)->Deallocate(hw.env, (unsigned char *)ti.name);
				if (ti.thread_group)
					(*jni)->DeleteLocalRef(jni, ti.thread_group);
				if (ti.context_class_loader)
					(*jni)->DeleteLocalRef(jni, ti.context_class_loader);
			}
			(*jni)->DeleteLocalRef(jni, ts[i]);
		}
		(*hw.env)->Deallocate(hw.env, (unsigned char *)ts);
	}
out:
	for (jint i = 0; i < nk; i++)
		(*jni)->DeleteLocalRef(jni, ks[i]);
	(*hw.env)->Deallocate(hw.env, (unsigned char *)ks);
	free(iseen);
	return err;
}

/*
 * The two extra envs of untagged walks, each created once and kept: names_env,
 * whose tags name classes, loaders and threads (cleared after each walk), and
 * plain_env, which runs the untagged (and the benchmark's bare) walks and
 * never holds a tag. JVMTI looks tags up in the walking env's table for every
 * reference: plain_env's stays empty and small, where the session env's,
 * once grown by a tagged session, stays large when emptied (after such a
 * session an untagged walk in it paused 233-273 ms instead of 140-170 ms on
 * 625 k objects: every look-up missed the cache). false: no env (the walk
 * uses tags).
 */
static bool tag_env_get(jvmtiEnv **env)
{
	jvmtiCapabilities caps = { .can_tag_objects = 1 };

	if (*env)
		return true;
	if ((*agent.vm)->GetEnv(agent.vm, (void **)env, JVMTI_VERSION_1_2) != JNI_OK) {
		*env = NULL;
		return false;
	}
	if ((**env)->AddCapabilities(*env, &caps)) {
		(**env)->DisposeEnvironment(*env);
		*env = NULL;
		return false;
	}
	return true;
}

/* hw.projidx: the JVMTI indices projected in some class (in-pause prefilter). */
static int build_projidx(char *why, size_t n)
{
	int32_t max = 0;

	for (uint32_t i = 0; i < hw.ncls; i++)
		if (hw.cls[i].any_proj && hw.cls[i].nproj > max)
			max = hw.cls[i].nproj;
	if (!max)
		return 0;
	hw.projidx = calloc((size_t)max, 1);
	if (!hw.projidx) {
		snprintf(why, n, "the agent is out of memory");
		return -ENOMEM;
	}
	hw.nprojidx = max;
	for (uint32_t i = 0; i < hw.ncls; i++)
		for (int32_t j = 0; hw.cls[i].any_proj && j < hw.cls[i].nproj; j++)
			if (hw.cls[i].proj[j])
				hw.projidx[j] = 1;
	return 0;
}

/* A frozen walk of an allocating JVM: wait (up to @ms) for the next GC to
 * end (the session env counts GarbageCollectionFinish), so that the fork
 * comes when the young generation is empty. */
static void wait_for_gc(uint32_t ms)
{
	uint64_t g0 = atomic_load(&hs_gcs), t0 = agent_mono_ns();
	struct timespec nap = { 0, 500000 };

	while (atomic_load(&hs_gcs) == g0 && agent_mono_ns() - t0 < (uint64_t)ms * 1000000)
		nanosleep(&nap, NULL);
	hw.fz.rec.gc_waited = atomic_load(&hs_gcs) != g0;
	hw.fz.rec.gc_wait_ns = agent_mono_ns() - t0;
}

/* Make room for @n entries in @v without touching them (they are read over). */
static int vec_room(struct hw_vec *v, size_t k)
{
	char *np;

	if (k <= v->cap)
		return 0;
	np = realloc(v->p, k * v->esz);
	if (!np)
		return -ENOMEM;
	v->p = np;
	v->cap = k;
	return 0;
}

/* The copy's entries of vector @theirs (read out of the copy) into @ours. */
static int pull_vec(struct hw_vec *ours, const struct hw_vec *theirs)
{
	int err;

	ours->n = 0;
	if (!theirs->n)
		return 0;
	if (theirs->esz != ours->esz)
		return -EPROTO;
	err = vec_room(ours, theirs->n);
	if (!err)
		err = freeze_read(&hw.fz, (uint64_t)(uintptr_t)theirs->p, ours->p,
				  theirs->n * theirs->esz);
	if (!err)
		ours->n = theirs->n;
	return err;
}

/* The copy's strings: the entries, then each one's bytes. */
static int pull_strings(const struct hw_vec *theirs)
{
	struct hw_str *ss;
	uint64_t *addrs;
	void **bufs;
	size_t *lens;
	int err = pull_vec(&hw.strs, theirs);

	if (err || !hw.strs.n)
		return err;
	ss = (struct hw_str *)hw.strs.p;
	addrs = calloc(hw.strs.n, sizeof(*addrs));
	bufs = calloc(hw.strs.n, sizeof(*bufs));
	lens = calloc(hw.strs.n, sizeof(*lens));
	if (!addrs || !bufs || !lens)
		err = -ENOMEM;
	for (size_t i = 0; i < hw.strs.n && !err; i++) {
		addrs[i] = (uint64_t)(uintptr_t)ss[i].utf8;
		lens[i] = ss[i].len + 1;
		bufs[i] = ss[i].len <= MT_AP_HSTR_MAX ? malloc(lens[i]) : NULL;
		ss[i].utf8 = bufs[i];
		if (!bufs[i]) { /* free_state() frees the ones before */
			hw.strs.n = i;
			err = -ENOMEM;
		}
	}
	if (!err)
		err = freeze_readv(&hw.fz, addrs, bufs, lens, hw.strs.n);
	for (size_t i = 0; i < hw.strs.n && !err; i++)
		ss[i].utf8[ss[i].len] = '\0';
	free(addrs);
	free(bufs);
	free(lens);
	return err;
}

/*
 * After the copy's walk: what its callbacks counted and, unless memtrace reads
 * them itself (MT_AP_FREEZE_DIRECT: their addresses go into hw.copy), its
 * records into the agent (the same vectors a walk in the pause fills).
 * Returns 0 or -errno.
 */
static int pull_from_copy(void)
{
	struct hw_state *ch = malloc(sizeof(*ch));
	uint64_t t0 = agent_mono_ns();
	int err;

	if (!ch)
		return -ENOMEM;
	err = freeze_read(&hw.fz, (uint64_t)(uintptr_t)&hw, ch, sizeof(*ch));
	if (!err && (hw.fz.req.flags & MT_AP_FREEZE_DIRECT)) {
		hw.want_copy = true;
		hw.copy = (struct mt_ap_hcopy){
			.child_pid = (uint32_t)hw.fz.child, .keep_ms = COPY_KEEP_MS,
			.visits = (uint64_t)(uintptr_t)ch->visits.p, .nvisits = ch->visits.n,
			.prims = (uint64_t)(uintptr_t)ch->prims.p, .nprims = ch->prims.n,
			.strs = (uint64_t)(uintptr_t)ch->strs.p, .nstrs = ch->strs.n,
		};
		if (ch->visits.esz != hw.visits.esz || ch->prims.esz != hw.prims.esz ||
		    ch->strs.esz != hw.strs.esz)
			err = -EPROTO;
	} else if (!err) {
		err = pull_vec(&hw.visits, &ch->visits);
		if (!err)
			err = pull_vec(&hw.prims, &ch->prims);
		if (!err)
			err = pull_strings(&ch->strs);
	}
	if (!err) {
		hw.done.truncated += ch->done.truncated;
		hw.done.mismatches += ch->done.mismatches;
		hw.layout_bad = ch->layout_bad;
		hw.aborted = ch->aborted;
		hw.visits.oom = ch->visits.oom;
		hw.prims.oom = ch->prims.oom;
		hw.strs.oom = ch->strs.oom;
	}
	free(ch);
	hw.fz.rec.pull_ns = agent_mono_ns() - t0;
	return err;
}

/*
 * A frozen walk after the pause: wait for the copy's walk, take its records,
 * kill it. Returns 0, or -errno with the reason in hw.fz.rec (the copy is
 * gone either way; the caller walks in a pause instead, unless memtrace left).
 */
static int finish_frozen(int watch_fd)
{
	int err = freeze_wait(&hw.fz, watch_fd, &hw.progress);

	hw.fz.rec.walk_ns = agent_mono_ns() - hw.fz.t_fork;
	if (!err) {
		err = pull_from_copy();
		if (err)
			freeze_fail(&hw.fz, MT_AP_FREEZE_PULL, err,
				    "cannot read the walk out of the frozen copy: %s", strerror(-err));
	}
	if (!err && hw.want_copy && !hw.layout_bad) {
		/* memtrace reads it: keep the copy (held owns it from now on) */
		heap_copy_release();
		held = hw.fz;
		held_until = 0; /* set when DONE goes out */
		hw.fz.child = 0;
		hw.fz.mem_fd = hw.fz.pidfd = -1;
		hw.fz.runs = NULL;
		return 0;
	}
	hw.want_copy = false;
	freeze_end(&hw.fz);
	return err;
}

bool heap_copy_held(void)
{
	return held.child > 0;
}

void heap_copy_release(void)
{
	if (held.child > 0)
		freeze_end(&held);
	memset(&held, 0, sizeof(held));
	held.mem_fd = held.pidfd = -1; /* never 0: that is the JVM's stdin */
	held_until = 0;
}

void heap_copy_expire(uint64_t now_ns)
{
	if (held.child > 0 && held_until && now_ns > held_until)
		heap_copy_release();
}

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

/*
 * The sampled objects memtrace asks for (MT_AP_HEAP_SAMPLES), found by the
 * sampling session's tags (GetObjectsWithTags in its env) and tagged in the
 * walking env with an id of the NAMED range, so the walk reports each by
 * its id. No reference to them is kept over the pause: a JNI local
 * reference would make each a heap root, with a path one step long.
 * Untagged walks clear these tags after the pause (untag_samples()).
 */
static void find_samples(JNIEnv *jni, const void *ids, uint32_t n)
{
	jint count = 0;
	jobject *objs = NULL;
	jlong *tags, *found = NULL;

	if (!n || !sampler_active() || !smp.env)
		return;
	tags = malloc((size_t)n * sizeof(*tags));
	if (!tags)
		return;
	memcpy(tags, ids, (size_t)n * sizeof(*tags));
	if ((*smp.env)->GetObjectsWithTags(smp.env, (jint)n, tags, &count, &objs, &found)) {
		free(tags);
		return;
	}
	for (jint i = 0; i < count; i++) {
		struct mt_ap_hsampled *sm;
		jlong t = 0;

		if (hw.untagged || (*hw.env)->GetTag(hw.env, objs[i], &t) || !t) {
			t = (jlong)((hs.next_id++) << 1);
			if ((*hw.env)->SetTag(hw.env, objs[i], t))
				goto next;
			if (hw.untagged) {
				uint64_t *g = vec_push(&hw.stags);
				struct hw_named *nm = vec_push(&hw.named);

				if (g)
					*g = (uint64_t)t;
				if (nm) /* counted among the named ids memtrace checks */
					*nm = (struct hw_named){ .ref = NULL, .id = (uint64_t)t >> 1 };
			}
		}
		sm = vec_push(&hw.sampled);
		if (sm)
			*sm = (struct mt_ap_hsampled){ .id = (uint64_t)t >> 1, .sample = (uint64_t)found[i] };
next:
		(*jni)->DeleteLocalRef(jni, objs[i]);
	}
	(*smp.env)->Deallocate(smp.env, (unsigned char *)objs);
	(*smp.env)->Deallocate(smp.env, (unsigned char *)found);
	free(tags);
}

/* An untagged walk's env holds no tag after it: clear the sampled objects'. */
static void untag_samples(void)
{
	jint n = 0;
	jobject *objs = NULL;
	JNIEnv *jni = agent.jni;

	if (!hw.stags.n)
		return;
	if ((*hw.env)->GetObjectsWithTags(hw.env, (jint)hw.stags.n, (const jlong *)hw.stags.p, &n,
					  &objs, NULL)) {
		agent_log("could not clear the tags of %zu sampled objects: later walks use tags",
			  hw.stags.n);
		untagged_broken = true;
		return;
	}
	for (jint i = 0; i < n; i++) {
		(*hw.env)->SetTag(hw.env, objs[i], 0);
		(*jni)->DeleteLocalRef(jni, objs[i]);
	}
	(*hw.env)->Deallocate(hw.env, (unsigned char *)objs);
	hw.stags.n = 0;
}

int heap_walk(const struct mt_ap_heap_request *req, const struct mt_ap_heap_freeze *freeze,
	      const char *names, size_t names_len, const void *samples, int watch_fd,
	      struct mt_ap_heap_done *done, char *why, size_t n)
{
	jvmtiHeapCallbacks cb = { 0 };
	JNIEnv *jni = agent.jni;
	const char *end = names + names_len;
	uint64_t t1;
	jvmtiError e;
	int err;

	if (hw.pending) {
		snprintf(why, n, "a heap snapshot is still being sent");
		return -EBUSY;
	}
	heap_copy_release(); /* memtrace has read the last one or given up */
	free_state();
	err = session_env(why, n);
	if (err)
		return err;
	hw.env = hs.env;
	hw.first_id = hs.next_id;
	if (hs.bits)
		memset(hs.bits, 0, hs.nwords * sizeof(*hs.bits));
	hs.bits_oom = false;
	hw.flags = req->flags;
	{
		const char *t = getenv("MEMTRACE_AGENT_TEST_LAYOUT");

		oop_slot = t && !strcmp(t, "wrong") ? -3 : -2;
	}
	if ((req->flags & MT_AP_HEAP_NOUNTAGGED) && !untagged_broken) {
		agent_log("memtrace found the heap walk could not tell objects apart by address "
			  "on this JVM: it tags objects from now on");
		untagged_broken = true;
	}
	hw.untagged = !(req->flags & (MT_AP_HEAP_KEEPIDS | MT_AP_HEAP_BARE)) && !untagged_broken &&
		      tag_env_get(&names_env) && tag_env_get(&plain_env);
	hw.tenv = hw.untagged ? names_env : hs.env;
	if (hw.untagged || ((req->flags & MT_AP_HEAP_BARE) && tag_env_get(&plain_env)))
		hw.env = plain_env;
	hw.want_freeze = freeze != NULL;
	if (freeze && !hw.untagged) {
		memset(&hw.fz, 0, sizeof(hw.fz));
		freeze_fail(&hw.fz, MT_AP_FREEZE_CHECK, -ENOTSUP,
			    "a walk that tags objects is not frozen");
	} else if (freeze) {
		hw.freezing = !freeze_begin(&hw.fz, freeze);
	}
	vec_init(&hw.visits, sizeof(struct mt_ap_hvisit));
	vec_init(&hw.given, sizeof(uint64_t));
	vec_init(&hw.named, sizeof(struct hw_named));
	vec_init(&hw.sampled, sizeof(struct mt_ap_hsampled));
	vec_init(&hw.stags, sizeof(uint64_t));
	vec_init(&hw.objs, sizeof(struct mt_ap_hobj));
	vec_init(&hw.refs, sizeof(struct mt_ap_href));
	vec_init(&hw.roots, sizeof(struct mt_ap_hroot));
	vec_init(&hw.prims, sizeof(struct mt_ap_hprim));
	vec_init(&hw.strs, sizeof(struct hw_str));
	hw.t0 = agent_mono_ns();
	if (req->flags & MT_AP_HEAP_BARE) {
		cb.heap_reference_callback = on_ref_bare;
		t1 = agent_mono_ns();
		e = (*hw.env)->FollowReferences(hw.env, 0, NULL, NULL, &cb, NULL);
		hw.done.pause_ns = agent_mono_ns() - t1;
		goto walked;
	}
	/* the frame holds the named objects' references until the walk is over */
	if ((*jni)->PushLocalFrame(jni, 64) != 0) {
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
		snprintf(why, n, "JNI PushLocalFrame failed");
		free_state();
		return -ENOMEM;
	}
	err = prepare(jni, names, req->nfields, end, why, n);
	if (!err && hw.untagged)
		err = build_projidx(why, n);
	if (err) {
		if (hw.untagged)
			untag_given();
		(*jni)->PopLocalFrame(jni, NULL);
		free_state();
		return err;
	}
	/* strings are wanted only when a projected field is declared java.lang.String */
	if ((hw.flags & MT_AP_HEAP_STRINGS) && !(hw.flags & MT_AP_HEAP_ALLFIELDS)) {
		bool any = false;

		for (uint32_t i = 0; i < hw.ncls && !any; i++)
			for (uint32_t j = 0; j < hw.cls[i].nfields && !any; j++)
				any = hw.cls[i].fields[j].projected && hw.cls[i].fields[j].string;
		if (!any)
			hw.flags &= ~MT_AP_HEAP_STRINGS;
	}
	if (req->flags & MT_AP_HEAP_SAMPLES)
		find_samples(jni, samples, req->nsamples);
	hw.own_tid = own_thread_id(jni);
	/* (a frozen walk records nothing here: the copy grows its own vector) */
	if (hw.untagged && !hw.freezing)
		vec_reserve(&hw.visits, last_visits + last_visits / 4);
	cb.heap_reference_callback = hw.untagged ? on_ref_untagged : on_ref;
	if (!hw.untagged)
		hs.tagged_objects = true;
	if (req->flags & (MT_AP_HEAP_ALLFIELDS) || req->nfields)
		cb.primitive_field_callback = on_prim;
	if (hw.flags & MT_AP_HEAP_STRINGS)
		cb.string_primitive_value_callback = on_string;
	if (hw.freezing && hw.fz.req.gc_wait_ms)
		wait_for_gc(hw.fz.req.gc_wait_ms);
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
	if (hw.freezing && hw.fz.child > 0 && finish_frozen(watch_fd)) {
		/* the copy failed: walk again in a pause (memtrace gone: stop) */
		struct mt_ap_hfreeze rec = hw.fz.rec;
		uint64_t first = hw.done.pause_ns;

		untag_given();
		untag_samples();
		(*jni)->PopLocalFrame(jni, NULL);
		free_state();
		if (rec.stage == MT_AP_FREEZE_CLIENT) {
			snprintf(why, n, "%s", rec.why);
			return -ECONNRESET;
		}
		err = heap_walk(req, NULL, names, names_len, samples, watch_fd, done, why, n);
		if (!err) {
			hw.want_freeze = true;
			hw.fz.rec = rec;
			hw.fz.rec.fallback_pause_ns = hw.done.pause_ns;
			hw.done.pause_ns += first;
			done->pause_ns = hw.done.pause_ns;
		}
		return err;
	}
	if (hw.untagged) {
		if (!hw.aborted && !hw.layout_bad) /* a frozen copy's stay in the copy */
			last_visits = hw.want_copy ? hw.copy.nvisits : hw.visits.n;
		untag_given();
		untag_samples();
		/* memtrace numbers the other objects from named_next; later walks of
		 * the session number theirs past every id this one could use */
		hw.named_next = hs.next_id;
		hs.next_id += hw.want_copy ? hw.copy.nvisits : hw.visits.n;
	}
	(*jni)->PopLocalFrame(jni, NULL);
walked:
	if (hw.untagged) {
		if (hw.layout_bad) { /* again, with tags; both pauses count */
			uint64_t first = hw.done.pause_ns;

			agent_log("the heap walk could not tell objects apart by address on this JVM "
				  "(%llu unexpected callbacks): it tags objects from now on",
				  (unsigned long long)hw.layout_bad);
			untagged_broken = true;
			free_state();
			err = heap_walk(req, NULL, names, names_len, samples, watch_fd, done, why, n);
			if (!err) {
				hw.done.pause_ns += first;
				done->pause_ns = hw.done.pause_ns;
			}
			return err;
		}
	}
	if (e != JVMTI_ERROR_NONE) {
		snprintf(why, n, "JVMTI FollowReferences failed (error %d)", (int)e);
		free_state();
		return -EIO;
	}
	if (out_of_memory())
		agent_log("out of memory during a heap walk: the snapshot is partial");
	hw.done.partial = hw.aborted || out_of_memory();
	hw.done.flags = hw.flags & ~(MT_AP_HEAP_KEEPIDS | MT_AP_HEAP_NOUNTAGGED | MT_AP_HEAP_FREEZE);
	if (hw.freezing && hw.fz.rec.child_pid && !hw.fz.rec.status)
		hw.done.flags |= MT_AP_HEAP_FREEZE; /* the records come from the frozen copy */
	if (!hw.untagged && !(hw.flags & MT_AP_HEAP_BARE))
		hw.done.flags |= MT_AP_HEAP_KEEPIDS; /* served with object tags */
	hw.done.objects = hw.objs.n;
	hw.done.refs = hw.refs.n;
	hw.done.roots = hw.roots.n;
	hw.done.values = hw.prims.n;
	hw.done.strings = hw.strs.n;
	hw.done.nclasses = (req->flags & MT_AP_HEAP_BARE) ? 0 : hw.ncls;
	hw.done.nthreads = (req->flags & MT_AP_HEAP_BARE) ? 0 : hw.nthreads;
	if (!(req->flags & MT_AP_HEAP_BARE)) {
		struct mt_ap_hwalk w = { .first_id = hw.first_id };

		if (!hw.gcs_read) /* no callback ran: read it now */
			hw.gcs = atomic_load(&hs_gcs);
		w.gcs = hw.gcs;
		if (hs.nwalks && hs.walks[hs.nwalks - 1].first_id == w.first_id)
			hs.walks[hs.nwalks - 1] = w; /* the previous walk's range is empty */
		else if (hs.nwalks < HW_MAX_WALKS)
			hs.walks[hs.nwalks++] = w;
		else
			hs.dropped_walks++; /* its objects look as old as the last range's */
	}
	/* the tags stay (the session's env) for the next walk's ages */
	hw.pending = true;
	hw.sec = 0;
	hw.pos = 0;
	*done = hw.done;
	return 0;
}

/* Put one CLASS record. Returns its size, or 0 if it does not fit in what is left. */
static long put_class(char *buf, size_t cap, size_t *off, const struct hw_class *c)
{
	char body[0xff00];
	struct mt_ap_hclass h = { .id = c->id, .super = c->super, .loader = c->loader };
	size_t b = sizeof(h), sl = c->sig ? strlen(c->sig) : 0;
	long r;

	if (sl > 4096)
		sl = 4096;
	memcpy(body + b, c->sig ? c->sig : "", sl);
	b += sl;
	body[b++] = '\0';
	for (uint32_t i = 0; i < c->nfields; i++) {
		const struct hw_field *f = &c->fields[i];
		size_t nl = strlen(f->name);
		char type = f->string ? 'T' : f->type;

		if (b + 5 + nl + 1 + 8 > sizeof(body) - 16) {
			hw.done.truncated++;
			break;
		}
		memcpy(body + b, &f->index, 4);
		body[b + 4] = type;
		memcpy(body + b + 5, f->name, nl + 1);
		b += 5 + nl + 1;
		h.nfields++;
	}
	/* the extension: interfaces, reference statics (whole, or not at all) */
	if (c->ext && h.nfields == c->nfields) {
		struct mt_ap_hclass_ext x = { .nifaces = c->noifaces ? 0 : c->nifaces };
		size_t need = sizeof(x) + (size_t)x.nifaces * 8, x_at = b;

		for (uint32_t i = 0; i < c->nstatics; i++)
			need += 5 + strlen(c->statics[i].name) + 1;
		if (b + need + 8 <= sizeof(body) - 16) {
			b += sizeof(x);
			if (x.nifaces)
				memcpy(body + b, c->ifaces, (size_t)x.nifaces * 8);
			b += (size_t)x.nifaces * 8;
			for (uint32_t i = 0; i < c->nstatics; i++) {
				const struct hw_field *f = &c->statics[i];
				size_t nl = strlen(f->name);

				memcpy(body + b, &f->index, 4);
				body[b + 4] = f->type;
				memcpy(body + b + 5, f->name, nl + 1);
				b += 5 + nl + 1;
				x.nstatics++;
			}
			memcpy(body + x_at, &x, sizeof(x));
			h.flags = MT_AP_HCLASS_EXT | (c->iface ? MT_AP_HCLASS_IFACE : 0) |
				  (c->noifaces ? MT_AP_HCLASS_NOIFACES : 0);
		}
	}
	memcpy(body, &h, sizeof(h));
	r = mt_ap_rec_put(buf, cap, off, MT_AP_HREC_CLASS, h.nfields, body, b);
	return r < 0 ? 0 : r;
}

/* Put a batch of fixed-size entries from v starting at hw.pos. */
static long put_batch(char *buf, size_t cap, size_t *off, unsigned kind, struct hw_vec *v)
{
	size_t room = cap - *off, k;
	long r;

	if (room < 8 + v->esz)
		return 0;
	k = (room - 8) / v->esz;
	if (k > (0xfff0 - 8) / v->esz)
		k = (0xfff0 - 8) / v->esz;
	if (k > v->n - hw.pos)
		k = v->n - hw.pos;
	r = mt_ap_rec_put(buf, cap, off, kind, (uint32_t)k, v->p + hw.pos * v->esz, k * v->esz);
	if (r < 0)
		return 0;
	hw.pos += k;
	return r;
}

/* Put one NAMED record: next_id, then as many (address, id) as fit. */
static long put_named(char *buf, size_t cap, size_t *off)
{
	char body[0xff00];
	struct mt_ap_hnamed_hdr h = { .next_id = hw.named_next };
	size_t room = cap - *off, k = 0, b = sizeof(h);
	long r;

	if (room < 8 + sizeof(h) + sizeof(struct mt_ap_hnamed))
		return 0;
	memcpy(body, &h, sizeof(h));
	while (hw.pos + k < hw.named.n && b + sizeof(struct mt_ap_hnamed) <= sizeof(body) &&
	       8 + b + sizeof(struct mt_ap_hnamed) <= room) {
		const struct hw_named *nm = &((const struct hw_named *)hw.named.p)[hw.pos + k];
		struct mt_ap_hnamed e = { .addr = nm->addr, .id = nm->id };

		memcpy(body + b, &e, sizeof(e));
		b += sizeof(e);
		k++;
	}
	r = mt_ap_rec_put(buf, cap, off, MT_AP_HREC_NAMED, (uint32_t)k, body, b);
	if (r < 0)
		return 0;
	hw.pos += k;
	return r;
}

long heap_next_chunk(void *vbuf, size_t cap)
{
	char *buf = vbuf;
	size_t off = 0;

	while (hw.pending) {
		long r = 0;

		switch (hw.sec) {
		case 0: /* classes */
			if (hw.done.flags & MT_AP_HEAP_BARE)
				break;
			if (hw.pos < hw.ncls) {
				r = put_class(buf, cap, &off, &hw.cls[hw.pos]);
				if (r)
					hw.pos++;
				else if (!off) { /* cannot fit even alone: skip it */
					hw.pos++;
					continue;
				}
			}
			break;
		case 1: /* threads */
			if (hw.done.flags & MT_AP_HEAP_BARE)
				break;
			if (hw.pos < hw.nthreads) {
				char body[8 + 4096];
				size_t nl = strnlen(hw.threads[hw.pos].name, 4095);

				memcpy(body, &hw.threads[hw.pos].id, 8);
				memcpy(body + 8, hw.threads[hw.pos].name, nl);
				body[8 + nl] = '\0';
				r = mt_ap_rec_put(buf, cap, &off, MT_AP_HREC_THREAD, 0, body, 8 + nl + 1);
				if (r > 0)
					hw.pos++;
				else
					r = 0;
			}
			break;
		case 2:
			if (hw.pos < hw.objs.n)
				r = put_batch(buf, cap, &off, MT_AP_HREC_OBJS, &hw.objs);
			break;
		case 3:
			if (hw.pos < hw.refs.n)
				r = put_batch(buf, cap, &off, MT_AP_HREC_REFS, &hw.refs);
			break;
		case 4:
			if (hw.pos < hw.roots.n)
				r = put_batch(buf, cap, &off, MT_AP_HREC_ROOTS, &hw.roots);
			break;
		case 5:
			if (hw.pos < hw.prims.n)
				r = put_batch(buf, cap, &off, MT_AP_HREC_PRIMS, &hw.prims);
			break;
		case 6:
			if (hw.pos < hw.strs.n) {
				const struct hw_str *s = &((struct hw_str *)hw.strs.p)[hw.pos];
				char body[8 + MT_AP_HSTR_MAX + 1];

				memcpy(body, &s->obj, 8);
				memcpy(body + 8, s->utf8, s->len + 1);
				r = mt_ap_rec_put(buf, cap, &off, MT_AP_HREC_STRING, s->len, body,
						  8 + s->len + 1);
				if (r > 0)
					hw.pos++;
				else
					r = 0;
			}
			break;
		case 7: /* the session's age ranges, once */
			if (!(hw.done.flags & MT_AP_HEAP_BARE) && hw.pos == 0) {
				static char body[sizeof(struct mt_ap_hages) + sizeof(hs.walks)];
				struct mt_ap_hages a = { .gcs = hw.gcs, .nwalks = hs.nwalks,
							 .dropped = hs.dropped_walks };

				memcpy(body, &a, sizeof(a));
				memcpy(body + sizeof(a), hs.walks, hs.nwalks * sizeof(hs.walks[0]));
				r = mt_ap_rec_put(buf, cap, &off, MT_AP_HREC_AGES, hs.nwalks, body,
						  sizeof(a) + hs.nwalks * sizeof(hs.walks[0]));
				if (r > 0)
					hw.pos++;
				else
					r = 0;
			}
			break;
		case 8: /* untagged walks: the named objects' addresses */
			if (hw.pos < hw.named.n)
				r = put_named(buf, cap, &off);
			break;
		case 9:
			if (hw.pos < hw.visits.n)
				r = put_batch(buf, cap, &off, MT_AP_HREC_VISITS, &hw.visits);
			break;
		case 10:
			if (hw.pos < hw.sampled.n)
				r = put_batch(buf, cap, &off, MT_AP_HREC_SAMPLED, &hw.sampled);
			break;
		case 11: /* how a frozen walk went */
			if (hw.want_freeze && hw.pos == 0) {
				r = mt_ap_rec_put(buf, cap, &off, MT_AP_HREC_FREEZE, 0, &hw.fz.rec,
						  sizeof(hw.fz.rec));
				if (r > 0)
					hw.pos++;
				else
					r = 0;
			}
			break;
		case 12: /* where memtrace reads the frozen copy's records */
			if (hw.want_copy && hw.pos == 0) {
				r = mt_ap_rec_put(buf, cap, &off, MT_AP_HREC_COPY, 0, &hw.copy,
						  sizeof(hw.copy));
				if (r > 0)
					hw.pos++;
				else
					r = 0;
			}
			break;
		default:
			return (long)off; /* everything is out: the caller sends DONE */
		}
		if (r > 0)
			continue;
		/* nothing put: either the section is done or the buffer is full */
		{
			size_t len = 0;

			switch (hw.sec) {
			case 0: len = hw.ncls; break;
			case 1: len = hw.nthreads; break;
			case 2: len = hw.objs.n; break;
			case 3: len = hw.refs.n; break;
			case 4: len = hw.roots.n; break;
			case 5: len = hw.prims.n; break;
			case 6: len = hw.strs.n; break;
			case 7: len = 1; break;
			case 8: len = hw.named.n; break;
			case 9: len = hw.visits.n; break;
			case 10: len = hw.sampled.n; break;
			case 11: len = hw.want_freeze; break;
			case 12: len = hw.want_copy; break;
			}
			if ((hw.done.flags & MT_AP_HEAP_BARE) || hw.pos >= len) {
				hw.sec++;
				hw.pos = 0;
				continue;
			}
			return (long)off; /* full */
		}
	}
	return (long)off;
}

bool heap_sent_all(void)
{
	return hw.pending && hw.sec > 12;
}

void heap_done_info(struct mt_ap_heap_done *d)
{
	*d = hw.done;
}
