/* snapshot.h - heap snapshots: taken from the agent (HEAP_REQUEST), saved to
 * and read from files, imported from .hprof dumps (hprof.h), and turned into
 * the struct dsl_heap the query language runs on.
 *
 * The snapshot file format (version 1; integers little-endian, as the host):
 *
 *     offset 0   char     magic[8]     "MTSNAP\r\n"
 *            8   uint32   version      1
 *           12   uint32   flags        MT_AP_HEAP_* the snapshot was taken with
 *           16   uint64   created_ns   CLOCK_REALTIME when it was saved
 *           24   uint32   pid          the JVM's pid (host)
 *           28   uint32   reserved     0
 *           32   records  body_len bytes of records in the layout of
 *                         agent_proto.h (struct mt_ap_rec: kind, len, arg;
 *                         kinds MT_AP_HREC_*), exactly as the agent sent
 *                         them, then one MT_AP_HREC_DONE record
 *     end-16     uint64   body_len     bytes of records
 *     end-8      uint32   crc32        zlib crc32 of the records
 *     end-4      char     end[4]       "MTSE"
 *
 * The reader checks the magic, the version, that 32 + body_len + 16 is the
 * file's size, the checksum, and every record against its kind before use.
 * A snapshot taken by an agent that sends ages holds its MT_AP_HREC_AGES
 * record among the others, so a saved snapshot answers `age` as the live
 * query did; older files (and .hprof dumps) have no ages. An untagged walk's
 * file holds its NAMED and VISITS records (objects as addresses): the reader
 * numbers them as the live query did (walkids.c), in the same order, so the
 * ids are the same.
 */
#ifndef MEMTRACE_SNAPSHOT_H
#define MEMTRACE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/ageranges.h"
#include "agentctl/agentsock.h"
#include "dsl/dsl.h"
#include "memtrace/agent_proto.h"
#include "jvm/proc.h"

#define MT_SNAP_MAGIC   "MTSNAP\r\n"
#define MT_SNAP_END     "MTSE"
#define MT_SNAP_VERSION 1
#define MT_SNAP_HDR     32
#define MT_SNAP_TRAILER 16

struct mt_snap_field {
	int32_t index;     /* JVMTI field index in instances of the class */
	char type;         /* signature char; 'T' for java.lang.String */
	const char *name;
};

struct mt_snap_class {
	uint64_t id, super, loader;
	const char *sig;   /* JVM signature "Ljava/lang/String;", "[I" */
	const char *name;  /* Java name, if the source gives one (hprof), else NULL */
	struct mt_snap_field *fields;
	uint32_t nfields;
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
	/* info.pause_ns is the JVM's own safepoint time for the walk (hsperfdata,
	 * exactly one safepoint during the request) when pause_from_jvm; else
	 * the agent's timing around FollowReferences (agent_pause_ns either way) */
	bool pause_from_jvm;
	uint64_t agent_pause_ns;
};

/* Zero *s for use. */
void snapshot_init(struct mt_snapshot *s);
/* Free what *s holds. No operation on a zeroed snapshot. */
void snapshot_free(struct mt_snapshot *s);

/*
 * snapshot_add_records - parse @n bytes of heap records into @s (keeping a
 * copy in s->raw if @keep_raw). Returns 0, -EBADMSG for a malformed record
 * (with a reason in @why), -ENOMEM.
 */
int snapshot_add_records(struct mt_snapshot *s, const void *buf, size_t n, bool keep_raw,
			 char *why, size_t wn);

/*
 * snapshot_ages_set - the age ranges of an AGES record body (@n bytes):
 * validated (first ids ascending, GC counts not decreasing and not above the
 * walk's) into @s (replacing earlier ones). Returns 0, -EBADMSG (reason in
 * @why), -ENOMEM.
 */
int snapshot_ages_set(struct mt_snapshot *s, const void *body, size_t n, uint32_t nwalks,
		      char *why, size_t wn);

/* snapshot_age - GCs survived by the object with @id since the agent session
 * first saw it (0 if @s has no ages). */
uint64_t snapshot_age(const struct mt_snapshot *s, uint64_t id);

/* One agent session for several snapshots (`query --every/--count`): the
 * walk's tags, so object ids and ages, persist between its snapshots. */
struct mt_snapsession {
	const struct mt_proc *p;
	struct mt_agentsock so;
	char *buf;                   /* MT_AP_MAX_PAYLOAD bytes */
	struct mt_perfdata *pd;      /* the JVM's hsperfdata, NULL without one */
	unsigned walks;              /* takes so far */
	bool tagged;                 /* a walk tagged objects (MT_AP_HEAP_KEEPIDS in
				      * DONE): the agent clears them at the end */
	bool broken;                 /* a take failed: close without DETACH */
};

/* snaptake_open - connect to (load if needed) the agent in JVM @p,
 * which must outlive the session. Returns 0, or 1 after printing the reason. */
int snaptake_open(const struct mt_proc *p, struct mt_snapsession *ss);
/* snaptake_take - one snapshot in the session, as snapshot_take().
 * Returns 0, or 1 after printing the reason (the session is then unusable). */
int snaptake_take(struct mt_snapsession *ss, uint32_t flags, uint32_t max_pause_ms,
			  const char *const *fields, int nfields, struct mt_snapshot *s);
/* snaptake_close - detach (the agent releases the session's tags) and
 * close. No operation on a zeroed or closed session. */
void snaptake_close(struct mt_snapsession *ss);

/*
 * snapshot_take - ask the agent in JVM @p (loaded if needed) for a snapshot
 * with MT_AP_HEAP_* @flags, values of the @nfields fields named in @fields,
 * and a walk limit @max_pause_ms (with MT_AP_HEAP_MAXPAUSE). Returns 0, or 1
 * after printing the reason.
 */
int snapshot_take(const struct mt_proc *p, uint32_t flags, uint32_t max_pause_ms,
		  const char *const *fields, int nfields, struct mt_snapshot *s);

/* snapshot_write - save @s (taken with keep_raw) to @path. Returns 0 or 1 after p_err. */
int snapshot_write(const struct mt_snapshot *s, const char *path);

/*
 * snapshot_read_mem - parse a snapshot file's bytes. Returns 0, or -EINVAL
 * with the reason in @why (not a snapshot, other version, truncated, bad
 * checksum, malformed record), -ENOMEM.
 */
int snapshot_read_mem(const void *buf, size_t n, struct mt_snapshot *s, char *why, size_t wn);

/*
 * snapshot_load - read @path: a memtrace snapshot or an HPROF dump (by its
 * magic). Returns 0, or 1 after printing the reason.
 */
int snapshot_load(const char *path, struct mt_snapshot *s);

/* The dsl_heap built from a snapshot, and what it owns. */
struct mt_heapview {
	struct dsl_heap heap;
	void **owned;
	size_t nowned, cap_owned;
	uint64_t value_objects; /* objects that carry field values */
};

/*
 * snapshot_heap - build a dsl_heap from @s; values only for classes with a
 * field named in @needs (all fields if @needs is NULL). Returns 0, -ENOMEM,
 * or -EINVAL (an index out of range; reason in @why).
 */
int snapshot_heap(const struct mt_snapshot *s, const struct dsl_needs *needs,
		  struct mt_heapview *hv, char *why, size_t wn);
/* No operation on a zeroed view. */
void heapview_free(struct mt_heapview *hv);

/* snapshot_grow - make room for @k more entries of @esz bytes in the array *@pp
 * (@n used, *@cap allocated). Returns 0 or -ENOMEM. */
int snapshot_grow(void *pp, size_t *cap, size_t n, size_t k, size_t esz);
/* snapshot_strdup - a NUL-terminated copy of p[0..n) owned by @s, NULL on ENOMEM. */
const char *snapshot_strdup(struct mt_snapshot *s, const char *p, size_t n);

/* snapshot_print_walk - the pause and counts of a live walk, warnings for a
 * partial one (stderr). */
void snapshot_print_walk(const struct mt_snapshot *s);

/* snapshot_java_name - "java.lang.String" for "Ljava/lang/String;", "int[]"
 * for "[I", into buf. */
const char *snapshot_java_name(const char *sig, char *buf, size_t n);

#endif
