/*
 * walkstate.h - what a heap walk and its session hold (walkstate.c), shared
 * by the walk's stages: the driver (heapwalk.c), the tables built before the
 * pause (walknames.c, walkfields.c, walksamples.c), the JVMTI callbacks in it
 * (walkvisit.c), the frozen copy (walkcopy.c) and the senders (walksend.c).
 * Socket thread only, but for the callbacks (the VM thread, in the pause,
 * while the socket thread waits in FollowReferences) and the copy's
 * callbacks (in the forked copy; walkcopy.c reads their `hw` out of it at
 * the same address).
 */
#ifndef MEMTRACE_AGENT_WALKSTATE_H
#define MEMTRACE_AGENT_WALKSTATE_H

#include <jvmti.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "freeze.h"
#include "heapmark.h"
#include "memtrace/agent_proto.h"
#include "walkvec.h"

/* A field of a class's table (walkfields.c). */
struct walk_field {
	int32_t index;
	uint32_t off;   /* its byte offset in an instance (or in the class object for a
			 * static), from its jfieldID; 0 when unknown (walkfields.c) */
	char type;      /* the signature's first char ('L' and '[' for references) */
	bool string;    /* declared java.lang.String (sent as type 'T') */
	bool projected; /* its value is sent */
	char *name;
};

/* A loaded class (walkfields.c). */
struct walk_class {
	uint64_t id, super, loader;
	char *sig;
	struct walk_field *fields;  /* instance fields, inherited ones included */
	uint32_t nfields;
	struct walk_field *statics; /* the class's own reference statics (names, indices) */
	uint32_t nstatics;
	uint64_t *ifaces;           /* direct superinterfaces' ids */
	uint32_t nifaces;
	bool ext;                   /* ifaces and statics are known (MT_AP_HCLASS_EXT) */
	bool iface;                 /* an interface */
	bool noifaces;              /* not prepared yet: its interfaces are unknown */
	int8_t *proj;               /* [JVMTI index] -> type char if projected, else 0 */
	int32_t nproj;              /* entries in proj */
	bool any_proj;
};

/* A string value: the layout of struct mt_ap_hstrref, so that memtrace can
 * read a frozen copy's array of them as it is (MT_AP_FREEZE_DIRECT). */
struct walk_str {
	uint64_t obj;
	uint32_t len;
	uint32_t reserved;
	char *utf8;
};
_Static_assert(sizeof(struct walk_str) == sizeof(struct mt_ap_hstrref) &&
	       offsetof(struct walk_str, utf8) == offsetof(struct mt_ap_hstrref, utf8) &&
	       sizeof(char *) == sizeof(uint64_t), "walk_str is a struct mt_ap_hstrref");

struct walk_thread {
	uint64_t id;
	char *name;
};

/* A class, loader or thread of an untagged walk: its id (a tag in the names
 * env), a local reference kept over the pause, its address read in the pause. */
struct walk_named {
	jobject ref;
	uint64_t id;
	uint64_t addr;
	uint64_t sample;         /* a sampled object of a marked walk: its sample id */
};

#define WALK_MAX_WALKS 4000 /* age ranges kept per session (one AGES record: < 64 KiB) */

/* The session: env, ids, GC count and walks (until heap_session_end()). */
struct walk_session {
	jvmtiEnv *env;
	uint64_t next_id;
	uint64_t start_id;       /* next_id when the session began: equal, no tags */
	uint64_t *bits;          /* recorded-in-this-walk bitmap, indexed by id */
	size_t nwords;
	bool bits_oom;
	struct mt_ap_hwalk walks[WALK_MAX_WALKS];
	uint32_t nwalks, dropped_walks;
	bool tagged_objects;     /* a walk of this session tagged objects (KEEPIDS) */
	bool stale_tags;         /* an untagged walk could not clear its class tags */
};

/* The state of one walk and of its sending. */
struct walk_state {
	jvmtiEnv *env;           /* hs.env while walking */
	uint32_t flags;
	uint64_t first_id;       /* hs.next_id when the walk began */
	uint64_t gcs;            /* hs_gcs read during the pause */
	bool gcs_read;
	uint64_t deadline_ns, t0;
	unsigned calls;
	bool aborted;
	/* Where the referee's oop sits relative to tag_ptr: -2 (walkvisit.c). The
	 * e2e test of the fallback (walk_fallback) sets
	 * MEMTRACE_AGENT_TEST_LAYOUT=wrong in the JVM's environment to read the
	 * word before it instead. */
	int oop_slot;
	/* class table, in GetLoadedClasses order; clsmap: class id -> index */
	struct walk_class *cls;
	uint32_t ncls;
	uint64_t *clskeys;
	uint32_t *clsvals;
	size_t clsmask;
	struct walk_thread *threads;
	uint32_t nthreads;
	/* what the walk recorded */
	struct walkvec objs, refs, roots, prims, strs;
	/* untagged walks: the pause's visits, the tags given (cleared after) */
	bool untagged;
	jvmtiEnv *tenv;          /* the env that tags classes, loaders, threads */
	struct walkvec visits, given, named;
	/* MT_AP_HEAP_SAMPLES: the sampled objects found (struct mt_ap_hsampled),
	 * and the tags they got in an untagged walk's env (cleared after it) */
	struct walkvec sampled, stags;
	bool resolved;           /* named objects' addresses read (first callback) */
	uint64_t named_next;     /* the first id memtrace gives the other objects */
	uint8_t *projidx;        /* [JVMTI index] projected in some class (prefilter) */
	int32_t nprojidx;
	uint64_t layout_bad;
	/* frozen walks (MT_AP_HEAP_FREEZE): the copy, and whether to send FREEZE */
	bool want_freeze;        /* the request asked: a FREEZE record goes out */
	bool freezing;           /* the fork is (still) the plan for this walk */
	bool freeze_refused;     /* the fork failed where a walk in the pause is not ours to
				  * do (ZGC, Shenandoah): the walk ends with fz.rec's error */
	bool reset_done;         /* the copy cleared ObjectMarker::_needs_reset */
	uint64_t fz_left;        /* the JVM's VM thread left the walk's callback after the fork */
	bool want_copy;          /* MT_AP_FREEZE_DIRECT served: a COPY record goes out */
	struct mt_ap_hcopy copy;
	uint64_t progress;       /* callbacks in the copy (the JVM's thread watches it) */
	struct freeze fz;
	jlong own_tid;           /* the agent thread's Java thread id, -1 unknown */
	bool objects_began;      /* a reference from an object was reported: the roots
				  * phase is over, and a local reported now is an
				  * unmounted virtual thread's (JDK 21+ reports those
				  * when it visits the thread, with no THREAD root) */
	jlong last_tid;          /* the thread of the last local root a tid marker
				  * named (MT_AP_HROOT_TID), 0 after a non-local root */
	struct mt_ap_heap_done done;
	/* the frozen copy's own mark (MT_AP_FREEZE_MARK, walkmark.c) */
	bool marking;            /* asked for: the copy marks instead of walking on */
	bool comparing;          /* MT_AP_FREEZE_COMPARE: it marks, then walks on with JVMTI */
	struct mt_ap_heap_layout layout;
	struct walkvec mroots;   /* in the copy: the roots JVMTI reported (to: an address) */
	bool mark_ran;           /* in the copy: the marker ran; mark says how it went */
	struct mt_ap_hmark mark; /* its counts, and where its records are in the copy */
	struct hm_result mres;   /* in the copy: the marker's records */
	bool want_mark;          /* a MARK record goes out (ok, or why the mark failed) */
	/* MT_AP_FREEZE_LIVE: in the copy, how far its records are written (memtrace
	 * reads them meanwhile); in the JVM, whether the LIVE record went out */
	struct mt_ap_hlive live;
	bool live_sent;
	/* sending cursor (walksend.c): section, index within it */
	bool pending;
	int sec;
	size_t pos;
};

/* The session (hs), the walk (hw), and the GarbageCollectionFinish events of
 * the session's env (hs_gcs: a VM thread bumps it, walkenv.c). */
extern struct walk_session hs;
extern struct walk_state hw;
extern _Atomic uint64_t hs_gcs;

/* walkstate_vectors_init - empty record vectors for a new walk. */
void walkstate_vectors_init(void);
/* walkstate_free - free the walk's tables, records and strings, and zero hw
 * (the session's hs stays). */
void walkstate_free(void);

/* walkstate_new_tag - the next id of the session, as a tag (id << 1); an
 * untagged walk remembers it to clear it after the walk. */
static inline uint64_t walkstate_new_tag(void)
{
	uint64_t t = (hs.next_id++) << 1;

	if (hw.untagged) { /* cleared after the walk */
		uint64_t *g = walkvec_push(&hw.given);

		if (g)
			*g = t;
	}
	return t;
}

/* walkstate_oom - some record vector (or the session's bitmap) ran out of memory. */
static inline bool walkstate_oom(void)
{
	return hs.bits_oom || hw.objs.oom || hw.refs.oom || hw.roots.oom || hw.prims.oom ||
	       hw.strs.oom || hw.visits.oom;
}

#endif
