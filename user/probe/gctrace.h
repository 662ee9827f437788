/* gctrace.h - load bpf/gc.bpf.c into the kernel, attach it to one JVM's
 * hotspot USDT probes, and feed the events to a gcpair. */
#ifndef MEMTRACE_GCTRACE_H
#define MEMTRACE_GCTRACE_H

#include "analysis/gcpair.h"
#include "jvm/proc.h"

struct gctrace;

/*
 * gctrace_new - open, set targ_tgid, load and attach for JVM @p.
 * Records go to @cb. Prints the failure with p_err() and returns NULL with
 * errno set; the caller frees with gctrace_free().
 */
struct gctrace *gctrace_new(const struct mt_proc *p, gcpair_cb cb, void *ctx);
/* gctrace_free - detach and unload; NULL is a no-op. */
void gctrace_free(struct gctrace *t);
/* gctrace_poll - wait up to @timeout_ms for events. Returns events handled, or -errno. */
int gctrace_poll(struct gctrace *t, int timeout_ms);
/* gctrace_finish - account events still open (call once at the end). */
void gctrace_finish(struct gctrace *t);
/* gctrace_lost - events the kernel could not queue (sum over CPUs). */
uint64_t gctrace_lost(struct gctrace *t);
/* gctrace_no_cause - why collections have no cause (a libjvm without the
 * symbols it needs), or NULL when they have one. */
const char *gctrace_no_cause(const struct gctrace *t);
/* gctrace_no_pauses - why the pauses of concurrent cycles are not timed by the
 * JVM's own GCTimer (a libjvm without the symbols: gc__begin/gc__end bracket
 * them, unnamed), or NULL when they are. */
const char *gctrace_no_pauses(const struct gctrace *t);
/* gctrace_pairing - the pairing state (unpaired/overflow counters). */
const struct gcpair *gctrace_pairing(struct gctrace *t);


#endif
