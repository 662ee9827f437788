/*
 * gcreplay.h - `memtrace gc`'s records and summary from events replayed out
 * of a recording (implemented in cmd_gc.c, so the output is the live one's).
 */
#ifndef MEMTRACE_GCREPLAY_H
#define MEMTRACE_GCREPLAY_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/gcpair.h"

struct gc_replay;

/* gcreplay_new - times are printed relative to monotonic @t0; @mono_to_real
 * converts to epoch. NULL on ENOMEM. */
struct gc_replay *gcreplay_new(uint64_t t0, uint64_t mono_to_real);
/* gcreplay_feed - one probe event; finished collections print at once. */
void gcreplay_feed(struct gc_replay *r, const struct mt_gc_event *e);
/* gcreplay_finish - print the summary line(s) as `memtrace gc` does, free @r. */
void gcreplay_finish(struct gc_replay *r, uint64_t lost, double secs, bool jvm_exited);

#endif
