/* snaptake.h - heap snapshots taken from memtrace's agent in a live JVM:
 * HEAP_REQUEST with the projection, the HEAP_DATA records (snaprec.h) into a
 * struct mt_snapshot, HEAP_DONE. One request (snaptake_once) or a session
 * of several whose object ids and ages last between walks.
 *
 * These functions return 0 or -errno after printing the reason: the
 * reasons are the agent session's (agentctl/agentsession.h explains every
 * socket failure), and `memtrace serve` captures them (p_err_capture).
 */
#ifndef MEMTRACE_SNAPTAKE_H
#define MEMTRACE_SNAPTAKE_H

#include <stdbool.h>
#include <stdint.h>

#include "agentctl/agentsock.h"
#include "heap/heapmem.h"
#include "heap/snapshot.h"
#include "heap/walkcompare.h"
#include "heap/walkestimate.h"
#include "jvm/proc.h"
#include "jvm/sptrace.h"

struct mt_perfdata;
struct mt_vmstructs;

/* One agent session for several snapshots (`query --every/--count`): the
 * walk's tags, so object ids and ages, persist between its snapshots. */
struct recpool;

struct mt_snapsession {
	const struct mt_proc *p;
	struct mt_agentsock so;
	char *buf;                   /* MT_AP_MAX_PAYLOAD bytes */
	struct mt_perfdata *pd;      /* the JVM's hsperfdata, NULL without one */
	struct sptrace sp;           /* its record of its last safepoint (without
				      * counters; and a frozen walk's own, sp_seen) */
	bool sp_tried;               /* sptrace_open() was tried */
	unsigned walks;              /* takes so far */
	bool tagged;                 /* a walk tagged objects (MT_AP_HEAP_KEEPIDS in
				      * DONE): the agent clears them at the end */
	bool broken;                 /* a take failed: close without DETACH */
	bool low_warned;             /* said that memory ran low (an attached session) */
	/* frozen walks (heap/heapfreeze.h): checked once per session */
	bool freeze_checked;
	bool freeze_off;             /* this JVM (or its agent) cannot be frozen */
	struct mt_ap_heap_freeze freeze;
	/* the copy's own mark (MT_AP_FREEZE_MARK, heap/heaplayout.h), checked once */
	bool mark_checked;
	bool mark_off;               /* its layout cannot be read, or the agent refused it */
	bool live_off;               /* the agent predates MT_AP_FREEZE_LIVE */
	/* memory kept for the copy's records across takes (heap/recpool.h):
	 * the caller's to make and free (NULL: none); pool_off: the agent
	 * predates MT_AP_FREEZE_POOL */
	const struct recpool *pool;
	bool pool_off;
	/* without one: each take's own, its records kept where the copy writes
	 * them (MT_AP_FREEZE_INPLACE); inplace_off: the agent predates it */
	bool inplace_off;
	/* a take's own pool that a view over it has left (a leak search's last
	 * snapshot, dropped): the next take's own, its pages there already
	 * (the caller's until a take in place takes it) */
	struct recpool *spare;
	/* ... and references by position (MT_AP_FREEZE_REFPOS); refpos_off:
	 * the agent predates them */
	bool refpos_off;
	/* ... and without CLASS references (MT_AP_FREEZE_NOCLASS); noclass_off:
	 * the agent predates that */
	bool noclass_off;
	bool keep_records;           /* the caller keeps the records beside its view
				      * (query --save): none of the view's room in them */
	struct mt_ap_heap_layout layout;
	struct mt_ap_heap_zgc zgc;   /* ZGC's (MT_AP_FREEZE_ZGC), from heapfreeze_prepare() */
	int zgc_tries;               /* walks refused in a row: ZGC was relocating */
	int zgc_big;                 /* walks refused in a row: its used heap over the bound */
	int zgc_slow;                /* walks whose copy the agent stopped at the bound */
	bool zgc_unfrozen;           /* the next take in a pause (ZGC's copy over --max-pause) */
	uint64_t zgc_ns_per_mib;     /* the copy's cost, learned from this session's copies
				      * (heapfreeze_zgc_learn(); 0: the default) */
	struct mt_vmstructs *vs;     /* the JVM's tables, opened once for the frozen walks */
	/* walks in a pause: their estimated pause, said before each (and refused over
	 * WALKEST_DEFAULT_BOUND_MS without --max-pause); learned from the last one */
	struct walkestimate est;
	bool est_learned;
	/* MEMTRACE_TEST_FREEZE=compare: the mark against the JVMTI walk of the same
	 * frozen copy (heap/walkcompare.h), for `memtrace selftest-walks` */
	bool compared;
	struct walkcompare cmp;
	FILE *cmp_out;               /* per-class differences, if set */
	/* snaptake_attach(): the caller's own session's socket, given back (with
	 * its seq) by snaptake_close(), which then neither detaches nor closes */
	struct mt_agentsock *borrowed;
	/* the next takes' sampled objects to find (MT_AP_HEAP_SAMPLES): @nsamples
	 * sample ids of the session's sampling (<= MT_AP_HEAP_MAX_SAMPLES) */
	const uint64_t *samples;
	uint32_t nsamples;
	/* frames other than heap data that arrive meanwhile (a sampling session's
	 * EVENTS): given to on_frame if set, else dropped; nonzero ends the take */
	int (*on_frame)(void *ctx, const struct mt_ap_hdr *h, const void *payload);
	void *frame_ctx;
	/* what the caller builds from the takes (heap/heapmem.h): a take whose
	 * answer would not fit in memory is refused (-EDQUOT, printed) once its
	 * counts are known, before memtrace holds its records; an attached
	 * session then goes on (the walk read to its end, nothing kept).
	 * HEAPMEM_NONE: a view when the take has references, else counts */
	enum heapmem_use use;
};

/* snaptake_open - connect to (load if needed) the agent in JVM @p, which
 * must outlive the session. Returns 0 or -errno (printed); *@ss can be
 * closed either way. */
int snaptake_open(const struct mt_proc *p, struct mt_snapsession *ss);
/*
 * snaptake_take - one snapshot in the session into @s (initialised here;
 * the caller frees it with snapshot_free()): MT_AP_HEAP_* @flags, values of
 * the @nfields fields named in @fields, a walk limit @max_pause_ms (with
 * MT_AP_HEAP_MAXPAUSE). An untagged walk that does not check out is taken
 * again with tags (a warning says so). Untagged walks are frozen walks
 * (MT_AP_HEAP_FREEZE: the JVM pauses only to fork a copy that does the
 * walk) unless --walk paused, or this JVM cannot be frozen, or a copy could
 * take more memory than is left (each said once on stderr); memory running
 * low during the copy's walk stops it and the walk is done in a pause.
 * Before a walk in a pause its pause is estimated and said (heap/walkestimate.h);
 * over WALKEST_DEFAULT_BOUND_MS without MT_AP_HEAP_MAXPAUSE (the user's
 * --max-pause: consent to a pause of at most that long) or --walk paused the
 * JVM is not paused: -ECANCELED, printed.
 * Returns 0 or -errno (printed; the session is then unusable: close it).
 */
int snaptake_take(struct mt_snapsession *ss, uint32_t flags, uint32_t max_pause_ms,
		  const char *const *fields, int nfields, struct mt_snapshot *s);
/*
 * snaptake_classes - the JVM's class table into @s (initialised here; the
 * caller frees it): its classes with their fields, as a walk would name
 * them, read with the JVM running (MT_AP_HEAP_CLASSES: no walk, no pause).
 * What a program is compiled against before any pause. Returns 0;
 * -ENOTSUP when the agent loaded in the JVM predates it (nothing printed,
 * the session still usable); other -errno printed (the session unusable).
 */
int snaptake_classes(struct mt_snapsession *ss, struct mt_snapshot *s);
/* snaptake_attach - a session on the socket *@so of a session the caller
 * opened (sampling), with JVM @p; *@so must stay open until
 * snaptake_close(), which hands it back. Returns 0 or -ENOMEM (printed). */
int snaptake_attach(const struct mt_proc *p, struct mt_agentsock *so, struct mt_snapsession *ss);
/* snaptake_close - detach (the agent releases the session's tags) and
 * close; an attached session gives its socket back instead. No operation
 * on a zeroed or closed session. */
void snaptake_close(struct mt_snapsession *ss);

/* snaptake_once - one snapshot of JVM @p in a session of its own, as
 * snaptake_take(), for @use (the session's). Returns 0 or -errno (printed). */
int snaptake_once(const struct mt_proc *p, uint32_t flags, uint32_t max_pause_ms,
		  const char *const *fields, int nfields, enum heapmem_use use,
		  struct mt_snapshot *s);

#endif
