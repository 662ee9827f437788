/*
 * gcreplay.h - `memtrace gc`'s output: one record per collection as it
 * ends, then a summary, in text or JSON lines. `memtrace gc` feeds it the
 * records of its live probes (gcreplay_record() is a gcpair_cb);
 * `memtrace report` replays a recording's probe events through its own
 * pairing (gcreplay_feed(), gcreplay_finish()), so both print the same.
 */
#ifndef MEMTRACE_GCREPLAY_H
#define MEMTRACE_GCREPLAY_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analysis/gcpair.h"

struct gcreplay;

/* gcreplay_new - print to @f (text, or JSON lines if @json); record times
 * are printed relative to monotonic @t0, and @mono_to_real added to a
 * monotonic ns gives epoch ns. @f must outlive the result; the caller owns
 * it (free with gcreplay_free()). Returns NULL with errno = ENOMEM. */
struct gcreplay *gcreplay_new(FILE *f, bool json, uint64_t t0, uint64_t mono_to_real);
/* gcreplay_free - NULL is a no-op. Prints nothing. */
void gcreplay_free(struct gcreplay *r);
/* gcreplay_record - a gcpair_cb (@ctx: the gcreplay): count and print @rec. */
void gcreplay_record(const struct gc_record *rec, void *ctx);
/* gcreplay_summary - print the summary of the records so far; @gp: the
 * pairing that made them (its unpaired and overflow counts are printed),
 * @lost: events lost, @secs: the window. */
void gcreplay_summary(struct gcreplay *r, const struct gcpair *gp, uint64_t lost, double secs,
		      bool jvm_exited);
/* gcreplay_feed - one probe event into @r's own pairing; a collection that
 * ends prints at once. */
void gcreplay_feed(struct gcreplay *r, const struct mt_gc_event *e);
/* gcreplay_observed_from - @r's events were observed from monotonic
 * @mono_ns on, after its t0 (a recording's probes attached after its
 * header's start): the summary says so (JSON "observed_from_ns", epoch ns),
 * a collection before it may be in no record (the probes attach one after
 * another, the gc ones among the first). */
void gcreplay_observed_from(struct gcreplay *r, uint64_t mono_ns);
/* gcreplay_finish - close @r's own pairing (what is open counts as
 * unpaired) and print the summary (gcreplay_summary()). */
void gcreplay_finish(struct gcreplay *r, uint64_t lost, double secs, bool jvm_exited);

#endif
