/*
 * objstream.h - sampled objects from memtrace's JVMTI agent as entity
 * events: each sample (SampledObjectAlloc, tagged with a sequential id) is an
 * object creation (id: the tag, ref: its type, v[0]: its size), each
 * ObjectFree of a tagged object its reclamation. Types come through
 * callbacks of the caller (the collector), so an object's type is created
 * before the object (rule 2).
 */
#ifndef MEMTRACE_OBJSTREAM_H
#define MEMTRACE_OBJSTREAM_H

#include <stdint.h>

#include "memtrace/agent_proto.h"
#include "memtrace/events.h"
#include "jvm/proc.h"

struct objstream;

/* Feed one event to the sequencer (through the caller's pause schedule). */
typedef void (*objstream_feed_fn)(void *ctx, struct mt_ev *e);
/* The type key of Java class @name at @ts, creating the type if needed. */
typedef uint64_t (*objstream_type_fn)(void *ctx, const char *name, uint64_t ts);

/* Frames the agent takes per sample (a recording's allocation sites). */
#define MT_OBJSTREAM_DEPTH 16

/*
 * A tap on the agent's records, for a recording's object-sampling lines
 * (recording.h). Every member may be NULL. alloc is called before the
 * sample's creation is fed; stats with the agent's counters so far (the
 * last call has the final ones).
 */
struct objstream_tap {
	void (*started)(void *ctx, const struct mt_ap_sample_started *st);
	void (*method)(void *ctx, uint32_t id, const char *name); /* "pkg.C.m" */
	void (*alloc)(void *ctx, const struct mt_ap_alloc *a, const struct mt_ap_frame *f);
	void (*gc)(void *ctx, const struct mt_ap_gc *g);
	void (*stats)(void *ctx, const struct mt_ap_sample_stats *s);
	void *ctx;
};

struct objstream_stats {
	uint64_t created, reclaimed;     /* events fed */
	uint64_t dropped_allocs, dropped_frees; /* lost in the agent (its final count) */
};

/*
 * objstream_new - load the agent into @p if needed, connect, start sampling
 * every @interval bytes (mean), MT_OBJSTREAM_DEPTH frames per sample. Prints the reason and returns NULL on failure.
 */
struct objstream *objstream_new(const struct mt_proc *p, uint32_t interval,
				objstream_feed_fn feed, objstream_type_fn type, void *ctx);
/* objstream_poll - feed what arrived within @timeout_ms. Frames read; -ESRCH
 * (not printed) when the JVM exited; other -errno (printed). */
int objstream_poll(struct objstream *o, int timeout_ms);
/* objstream_free - stop sampling (what the agent still holds is fed first),
 * detach (the agent goes dormant), and give the final counters in *@final
 * (if not NULL). NULL is a no-op. */
void objstream_free(struct objstream *o, struct objstream_stats *final);
/* objstream_set_tap - tap the records from now on (@t copied; NULL: none);
 * t->started is called at once with the session's start. */
void objstream_set_tap(struct objstream *o, const struct objstream_tap *t);
/* objstream_stats - counters so far. */
const struct objstream_stats *objstream_stats(const struct objstream *o);

#endif
