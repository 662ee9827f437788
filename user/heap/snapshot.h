/* snapshot.h - the in-memory heap snapshot (struct mt_snapshot) and what
 * builds it: the one module the snapshot's sources build into - the agent's
 * records (snaprec.h, live through snaptake.h, or from a file through
 * snapfile.h), an untagged walk's ids (walkids.h), an HPROF dump (hprof.h) -
 * and that the query heap is built from (heapview.h). snapload.h reads a
 * file of either format.
 */
#ifndef MEMTRACE_SNAPSHOT_H
#define MEMTRACE_SNAPSHOT_H

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/ageranges.h"
#include "memtrace/agent_proto.h"

struct dsl_arena;

struct mt_snap_field {
	int32_t index;     /* JVMTI field index in instances of the class */
	char type;         /* signature char; 'T' for java.lang.String */
	const char *name;
};

/* What a source says a class is (mt_snap_class.kind). */
enum mt_snap_class_kind {
	MT_SNAP_UNKNOWN,   /* not said: interfaces unknown too (hprof, an older agent) */
	MT_SNAP_CLASS,     /* a class; ifaces lists its direct superinterfaces */
	MT_SNAP_INTERFACE, /* an interface; ifaces lists the interfaces it extends */
};

struct mt_snap_class {
	uint64_t id, super, loader;
	const char *sig;   /* JVM signature "Ljava/lang/String;", "[I" */
	const char *name;  /* Java name, if the source gives one (hprof), else NULL */
	struct mt_snap_field *fields;
	uint32_t nfields;
	uint8_t kind;      /* enum mt_snap_class_kind */
	uint64_t *ifaces;  /* class ids of the direct superinterfaces (kind known) */
	uint32_t nifaces;
	bool ifaces_unknown; /* kind known, interfaces not (a class not linked yet) */
	/* the class's own static fields (JVMTI STATIC_FIELD indices, or the
	 * dump's order), for naming references; may be none */
	struct mt_snap_field *statics;
	uint32_t nstatics;
	bool by_klass;     /* named from its Klass by memtrace (a class only the mark met):
			    * not among the agent's records, written by snapfile_write() */
};

struct mt_snap_thread {
	uint64_t id;
	const char *name;
};

struct mt_snap_string {
	uint64_t obj;
	const char *s;
};

/* A snapshot: arrays in the source's order, strings owned by the snapshot. */
/* Who timed a live walk's pause. */
enum snapshot_pause {
	SNAP_PAUSE_AGENT,        /* the agent, around FollowReferences: the JVM's
				  * own record was not to be had (no hsperfdata
				  * and a stripped libjvm), and the safepoint's
				  * reaching and leaving can fall outside it */
	SNAP_PAUSE_COUNTERS,     /* the JVM's hsperfdata counters (perfdata.h) */
	SNAP_PAUSE_RECORD,       /* the JVM's record of its last safepoint (sptrace.h) */
	SNAP_PAUSE_AGENT_MANY,   /* the agent's: other safepoints (GCs while a
				  * frozen copy walked) came before the JVM's
				  * counters were read, and its record of the
				  * walk's own was overwritten before memtrace
				  * read it (within 2 ms); the agent's timing can
				  * be above the JVM's (it waited for another
				  * operation) or below (reaching the safepoint) */
};
/* snapshot_pause_name - "agent", "jvm_safepoints", "jvm_safepoint_record",
 * "agent_others_followed" (JSON). */
const char *snapshot_pause_name(enum snapshot_pause p);
/* snapshot_pause_phrase - how the pause was timed, for a person. */
const char *snapshot_pause_phrase(enum snapshot_pause p);

struct recpool;

struct mt_snapshot {
	struct mt_ap_heap_done info; /* pause, counts, partial, flags */
	int pid;
	uint64_t created_ns;
	struct mt_ap_hobj *objs;     size_t nobjs, cap_objs;
	struct mt_ap_href *refs;     size_t nrefs, cap_refs;
	struct mt_ap_hroot *roots;   size_t nroots, cap_roots;
	struct mt_ap_hprim *prims;   size_t nprims, cap_prims;
	struct mt_snap_class *classes; size_t nclasses, cap_classes;
	struct mt_snap_thread *threads; size_t nthreads, cap_threads;
	struct mt_snap_string *strings; size_t nstrings, cap_strings;
	/* MT_AP_HEAP_SAMPLES: which object (id) each sampled object found is */
	struct mt_ap_hsampled *sampled; size_t nsampled, cap_sampled;
	/* an untagged walk's records until walkids_resolve() turns them into
	 * the arrays above (live: at DONE; files: after reading) */
	struct mt_ap_hvisit *visits; size_t nvisits, cap_visits;
	struct mt_ap_hnamed *named;  size_t nnamed, cap_named;
	uint64_t named_next;         /* NAMED's next_id */
	char *raw; size_t raw_len, raw_cap; /* the records as received (for saving) */
	struct dsl_arena *names;     /* every string above */
	const char *source;          /* "live", "snapshot", "hprof" */
	/* ages (MT_AP_HREC_AGES): one range per walk of the agent session,
	 * (first id, GCs at that walk); ages.epoch: GCs at this walk */
	bool has_ages;
	struct mt_ageranges ages;
	uint32_t ages_walks_dropped; /* walks past the agent's bound */
	/* where info.pause_ns comes from (exactly one safepoint during the
	 * request for the JVM's own figures); agent_pause_ns is the agent's
	 * timing around FollowReferences either way */
	enum snapshot_pause pause_from;
	uint64_t agent_pause_ns;
	/* a frozen walk (MT_AP_HEAP_FREEZE asked): how it went, from the agent's
	 * FREEZE record; frozen: the records come from the copy (info.pause_ns
	 * is then the fork's pause, not the walk's) */
	bool has_freeze;
	bool frozen;
	struct mt_ap_hfreeze freeze;
	/* the frozen copy's records to read (MT_AP_HREC_COPY; heapfreeze_read_copy()) */
	bool has_copy;
	struct mt_ap_hcopy copy;
	/* the frozen copy's own mark (MT_AP_HREC_MARK; snapmark_read()): its
	 * records are the arrays above, ids final (no walkids) */
	bool has_mark;
	struct mt_ap_hmark mark;
	/* MT_AP_FREEZE_LIVE: the copy's records read while it writes them
	 * (snapmark_pull()), apart until DONE says the mark went through
	 * (snapmark_live_done(): then they become objs and refs) */
	bool has_live;
	int live_pid;                /* the copy, as memtrace sees it */
	uint64_t live_at;            /* its struct mt_ap_hlive */
	uint64_t live_pulls;         /* reads that added records */
	struct mt_ap_hobj *live_objs; size_t live_nobjs, live_cap_objs;
	struct mt_ap_href *live_refs; size_t live_nrefs, live_cap_refs;
	size_t live_read_objs;       /* object records of the snapshot read while written */
	uint64_t live_sized_objs;    /* what the copy sized its arrays for before writing: */
	uint64_t live_sized_refs;    /* the live objects, a bound of the references (0: not yet) */
	bool live_sized_pos;         /* ... written by position (MT_AP_FREEZE_REFPOS) */
	/* MT_AP_FREEZE_POOL: memtrace's pool (not owned), mapped in the copy at
	 * pool_at (pool_bytes, from its struct mt_ap_hlive; 0: not mapped) */
	const struct recpool *pool;
	uint64_t pool_at, pool_bytes;
	uint64_t pool_read;          /* bytes of records read from it */
	/* MT_AP_FREEZE_INPLACE: the records stay in the pool (own_pool, this
	 * take's own, is pool), which memtrace fills ahead of the copy
	 * (snapmark_pull(); fill_more: there is more to fill now) instead of
	 * reading them while written; recs_pooled: objs and refs point into it
	 * (never freed or grown: the pool goes with the snapshot, or with the
	 * view built over them, heapview_build_take()); refs_lead: the view's
	 * references may start that many (12-byte entries) below the records'
	 * (pool memory no record uses: they then never overtake a record not
	 * read yet, though each object's CLASS reference is added) */
	bool inplace, fill_more, recs_pooled;
	bool pool_reused;            /* own_pool is the one the take before left (its
				      * pages made then: struct mt_snapsession.spare) */
	const char *not_inplace;     /* inplace asked, the records read out instead: why
				      * (a static string; NULL otherwise) */
	struct recpool *own_pool;
	size_t refs_lead;
	/* ... and asked for references by position (MT_AP_FREEZE_REFPOS); the
	 * copy wrote them so (its mark's ref_format): refpos points at them in
	 * the pool instead of refs (nrefpos of them; objs' flags count each
	 * object's), for the view to take (heapview_build_take()) */
	bool refpos_asked;
	struct mt_ap_hrefpos *refpos;
	size_t nrefpos;
	/* refpos without each object's CLASS reference (MT_AP_REFS_POS_NOCLASS):
	 * objs' flags say which imply one (MT_AP_HOBJ_POS_CLASS); asked so
	 * (MT_AP_FREEZE_NOCLASS: no room filled for them) */
	bool noclass, noclass_asked;
	/* how far the pool's pages are given (fallocate): from its start
	 * (objects), from its middle (references), and below the middle from
	 * fill_lb (the view's references' lead) */
	uint64_t fill_oa, fill_ra, fill_lb, fill_la;
	/* ... and, once the copy sized its records, from the end of the
	 * objects' and of the references' places down to those (the copy's
	 * second thread writes from there, agent/heapmark.c); 0 before;
	 * fill_down: the next step of the place is from its end */
	uint64_t fill_ob, fill_rb;
	bool fill_down;
	bool fill_noalloc;           /* no fallocate here: pages made by mapping */
	/* the most memtrace may hold for the answer (heapmem_limit()) and what
	 * it builds (enum heapmem_use): no filling for counts whose answer
	 * would not fit (the take is refused once the mark is done) */
	uint64_t fill_limit;
	int fill_use;
	/* totals per class (a MT_AP_HEAP_COUNTS walk, no objects): cls is a class
	 * record's id, or 0 with klass named by the class record snapmark_read()
	 * made for it (klass_ids below) */
	struct mt_ap_hhisto *histo; size_t nhisto;
	/* classes named by their Klass* (the mark's KLASS records): Klass -> class id */
	struct mt_ap_hklass *klass_ids; size_t nklass_ids;
	/* MT_AP_FREEZE_COMPARE: each object's address in the copy (objs' order) */
	uint64_t *addrs;
};

/* snapshot_init - zero *@s for use. */
void snapshot_init(struct mt_snapshot *s);
/* snapshot_free - free what *@s holds (and zero it). No operation on a zeroed
 * snapshot. */
void snapshot_free(struct mt_snapshot *s);
/* snapshot_drop_records - free the object, reference, primitive value and
 * address records of *@s (a heap view built from it copied them; its classes,
 * strings and names stay: a view points into them); info keeps the counts.
 * On 5 M objects ~400 MiB less while the dominators are computed. */
void snapshot_drop_records(struct mt_snapshot *s);

/* snapshot_age - GCs survived by the object with @id since the agent session
 * first saw it (0 if @s has no ages). */
uint64_t snapshot_age(const struct mt_snapshot *s, uint64_t id);

/* snapshot_grow - make room for @k more entries of @esz bytes in the array *@pp
 * (@n used, *@cap allocated). Returns 0 or -ENOMEM. */
int snapshot_grow(void *pp, size_t *cap, size_t n, size_t k, size_t esz);
/* snapshot_strdup - a NUL-terminated copy of p[0..n) owned by @s (freed with
 * it), NULL on ENOMEM. */
const char *snapshot_strdup(struct mt_snapshot *s, const char *p, size_t n);

/* snapshot_print_walk - the pause and counts of a live walk, warnings for a
 * partial one (stderr). */
void snapshot_print_walk(const struct mt_snapshot *s);

/* snapshot_json_walk - the walk's mode for --json lines, written to @f:
 * ,"walk_mode":"frozen","copy_walk_ms":N (the copy's walk, off the pause) or
 * ,"walk_mode":"paused" (the walk was the pause); nothing for files. */
void snapshot_json_walk(const struct mt_snapshot *s, FILE *f);

/* snapshot_java_name - "java.lang.String" for "Ljava/lang/String;", "int[]"
 * for "[I", into buf. */
const char *snapshot_java_name(const char *sig, char *buf, size_t n);

#endif
