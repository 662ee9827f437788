/*
 * sequencer.h - consistent partial reporting (docs/design.md idea 1, seed 003).
 *
 * The sequencer is fed every observed event (struct mt_ev, include/memtrace/
 * events.h) in order, keeps the full state of every live entity - types,
 * objects, threads with their invocation stacks, monitors held and waited
 * for - whether or not anything is reported (monitoring is never off), and
 * passes to its emit callback the subset that the filters, pauses and
 * sampling select, completed so that the reported stream obeys rules 1-5:
 *
 *  1. a creation is reported before the reclamation (reclamations of
 *     entities whose creation was not reported are not reported);
 *  2. an event needing an entity comes after the entity's creation: when the
 *     creation was not reported (filtered, paused, sampled out) it is
 *     reported right before, flagged MT_EVF_LAZY (types: create then load);
 *  3. the reclamation of a reported entity is always reported, paused or
 *     filtered or not (and a thread's destruction first leaves its reported
 *     invocations and releases its reported monitors);
 *  4. an invocation is reported only after all its enclosing invocations
 *     (reported lazily when needed; an enter's aux is its depth);
 *  5. per thread and lock, acquire/release and begin-wait/end-wait stay
 *     paired: a release or end-wait is reported exactly when the matching
 *     acquire or begin-wait was.
 *
 * It also cleans its input: events that cannot have happened as observed
 * (a leave with no open invocation, an end-wait with no wait) are dropped
 * and counted; entities referred to before their creation was observed
 * (monitoring started late, events lost) are created in the full state and
 * flagged MT_EVF_INFERRED when reported; a creation that reuses a live
 * identity first reclaims the previous entity. Names are interned with
 * sequencer_name() and defined (MT_EV_NAME) before their first reported use.
 */
#ifndef MEMTRACE_SEQUENCER_H
#define MEMTRACE_SEQUENCER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/events.h"

/* Categories of events (struct mt_seq_filter.cats). */
#define MT_CAT_TYPE   0x01 /* type create/load/reclaim */
#define MT_CAT_OBJECT 0x02 /* object create/reclaim */
#define MT_CAT_THREAD 0x04 /* thread create/rename/destroy */
#define MT_CAT_INV    0x08 /* invocation enter/leave (collections, VM operations, methods) */
#define MT_CAT_POOL   0x10 /* memory pool usage, the cause of each collection */
#define MT_CAT_ALLOC  0x20 /* allocation samples */
#define MT_CAT_SYNC   0x40 /* monitor acquire/release/begin-wait/end-wait */
#define MT_CAT_REF    0x80 /* references seen */
#define MT_CAT_ALL    0xff

/* What to report. Strings are copied by sequencer_new(). */
struct mt_seq_filter {
	unsigned cats;             /* MT_CAT_* to report; 0 means MT_CAT_ALL */
	const char *class_glob;    /* fnmatch(3) over Java class names; NULL: every class */
	const char *thread_glob;   /* fnmatch(3) over thread names; NULL: every thread */
	const uint64_t *tids;      /* only these threads (kernel tids); NULL: every thread */
	size_t ntids;
	uint32_t sample;           /* report one object creation in @sample; 0 or 1: all */
};

/* sequencer_cats_parse - "type,object,thread,inv,pool,alloc,sync,ref" or "all" into
 * MT_CAT_* bits ("objects" is "object"). Returns 0 or -EINVAL (the bad word
 * is left in *bad). */
int sequencer_cats_parse(const char *s, unsigned *cats, const char **bad);

/*
 * Receives each reported event in order. @text is the name for MT_EV_NAME
 * (@len bytes, NUL-terminated), NULL otherwise. Both are valid only during
 * the call.
 */
typedef void (*sequencer_emit_fn)(void *ctx, const struct mt_ev *e, const char *text, size_t len);

/*
 * What the sequencer saw and emitted. Every emitted line is one of: an
 * observed event (at once, or late: lazy), an inferred one, a resynchronised
 * one, a name definition or a lost-event marker; every observed event is
 * emitted once, absorbed, dropped, or not reported (sequencer_unreported).
 */
struct sequencer_stats {
	uint64_t in;        /* events observed (fed; lost-event counts are not events) */
	uint64_t out;       /* lines emitted: all that follow */
	uint64_t lazy;      /* observed creations emitted late, before a use */
	uint64_t inferred;  /* events not observed but implied by observed ones (the
			     * acquire before an uncontended monitor's release, a thread
			     * or class an event names before its creation was seen) */
	uint64_t resync;    /* events read from the JVM (threads and classes at the
			     * start and after lost events), and what they close */
	uint64_t names;     /* name definitions (the id service) */
	uint64_t markers;   /* lost-event markers */
	uint64_t absorbed;  /* observed events that are part of an Object.wait (its
			     * release of the monitor, a contended entry after the
			     * notify): the wait's begin and end stand for them */
	uint64_t dropped;   /* observed events that end what began before the recording
			     * or in a gap of lost events (a wait, an invocation, an
			     * entity's life), or repeat what is known (a load inferred
			     * before it arrived) */
	uint64_t lost;      /* events reported lost by sequencer_gap() */
};

/* sequencer_observed_out - of @st's emitted lines, the observed events. */
uint64_t sequencer_observed_out(const struct sequencer_stats *st);

/* sequencer_unreported - of @st's observed events, those neither emitted,
 * absorbed nor dropped: outside the filters, in a pause, sampled out, or
 * about something never reported. */
uint64_t sequencer_unreported(const struct sequencer_stats *st);

struct mt_seq;

/* sequencer_new - a sequencer reporting per @f (NULL: everything) to @emit.
 * Returns NULL with errno set (EINVAL, ENOMEM). */
struct mt_seq *sequencer_new(const struct mt_seq_filter *f, sequencer_emit_fn emit, void *ctx);
/* sequencer_free - release all state; NULL is a no-op. Emits nothing. */
void sequencer_free(struct mt_seq *s);

/* sequencer_name - the id of name @text (@len bytes), interned on first use (> 0;
 * 0 on allocation failure). The definition is emitted before the first
 * reported event using it. */
uint64_t sequencer_name(struct mt_seq *s, const char *text, size_t len);
/* sequencer_name_text - the text of name @id, or "" when unknown. */
const char *sequencer_name_text(const struct mt_seq *s, uint64_t id);

/* sequencer_feed - one observed event (aux of invocations and uid are ignored:
 * the sequencer computes them). */
void sequencer_feed(struct mt_seq *s, const struct mt_ev *e);

/* sequencer_pause - pause (true) or resume (false) reporting globally. */
void sequencer_pause(struct mt_seq *s, bool paused);
/* sequencer_pause_thread - pause or resume reporting for thread @tid. */
void sequencer_pause_thread(struct mt_seq *s, uint64_t tid, bool paused);
/* sequencer_paused - whether reporting is paused globally. */
bool sequencer_paused(const struct mt_seq *s);

/*
 * sequencer_gap - @lost events were lost before @ts: emit an MT_EV_LOST marker,
 * then forget what the lost events may have changed: every open invocation
 * is left and every monitor released or waited for is let go (reported as
 * MT_EVF_RESYNC events where reported). Follow with sequencer_resync_threads()
 * and sequencer_resync_types().
 */
void sequencer_gap(struct mt_seq *s, uint64_t ts, uint64_t lost, unsigned source);

/* One live thread for sequencer_resync_threads(). */
struct sequencer_thread_info {
	uint64_t tid;
	uint64_t name;   /* name id, 0: unknown */
};

/*
 * sequencer_resync_threads - the threads alive now (e.g. from /proc/PID/task):
 * threads the sequencer holds that are not in @live are destroyed, threads
 * of @live it does not know are created (flagged MT_EVF_RESYNC).
 */
void sequencer_resync_threads(struct mt_seq *s, uint64_t ts, const struct sequencer_thread_info *live,
			size_t n);

/* One live type for sequencer_resync_types(). */
struct sequencer_type_info {
	uint64_t key;    /* type key (events.h) */
	uint64_t name;   /* name id, 0: unknown */
};

/*
 * sequencer_resync_types - the types alive now (e.g. the JVM's class list, read
 * through VMStructs after a gap): types the sequencer holds that are not in
 * @live, or whose name differs, are reclaimed; types of @live it does not
 * hold are created and loaded. Reported as MT_EVF_RESYNC events where the
 * filters and pauses report type events (otherwise the usual lazy creation
 * applies when something refers to them). @live may hold a key twice (the
 * first wins).
 */
void sequencer_resync_types(struct mt_seq *s, uint64_t ts, const struct sequencer_type_info *live,
		      size_t n);

/* sequencer_stats - counters so far. */
const struct sequencer_stats *sequencer_stats(const struct mt_seq *s);

/* sequencer_ev_kind_name - "thread_create", ... for enum mt_ev_kind; NULL if invalid. */
const char *sequencer_ev_kind_name(unsigned kind);
/* sequencer_ev_kind_parse - the inverse; MT_EV_NONE when unknown. */
unsigned sequencer_ev_kind_parse(const char *name);

#endif
