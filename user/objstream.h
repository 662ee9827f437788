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

#include "memtrace/events.h"
#include "proc.h"

struct objstream;

/* Feed one event to the sequencer (through the caller's pause schedule). */
typedef void (*objstream_feed_fn)(void *ctx, struct mt_ev *e);
/* The type key of Java class @name at @ts, creating the type if needed. */
typedef uint64_t (*objstream_type_fn)(void *ctx, const char *name, uint64_t ts);

struct objstream_stats {
	uint64_t created, reclaimed;     /* events fed */
	uint64_t dropped_allocs, dropped_frees; /* lost in the agent (its final count) */
};

/*
 * objstream_new - load the agent into @p if needed, connect, start sampling
 * every @interval bytes (mean). Prints the reason and returns NULL on failure.
 */
struct objstream *objstream_new(const struct mt_proc *p, uint32_t interval,
				objstream_feed_fn feed, objstream_type_fn type, void *ctx);
/* objstream_poll - feed what arrived within @timeout_ms. Frames read, or -errno (printed). */
int objstream_poll(struct objstream *o, int timeout_ms);
/* objstream_free - stop sampling (what the agent still holds is fed first),
 * detach (the agent goes dormant), and give the final counters in *@final
 * (if not NULL). NULL is a no-op. */
void objstream_free(struct objstream *o, struct objstream_stats *final);
/* objstream_stats - counters so far. */
const struct objstream_stats *objstream_stats(const struct objstream *o);

#endif
