/*
 * objrec.h - the age and leaks analyses on a recording: the writer side taps
 * the agent's records during `memtrace record` and writes the
 * object-sampling lines (recording.h); the replay side rebuilds, from those
 * lines and the reported obj_create/obj_reclaim events, the same sample
 * store (samples.h: sites, age ranges) and leak analysis (leaks.h, with the
 * window's middle at half the sampling window) that `age` and `leaks` build
 * live, so `report` prints them with the same code.
 */
#ifndef MEMTRACE_OBJREC_H
#define MEMTRACE_OBJREC_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/idmap.h"
#include "analysis/leaks.h"
#include "agentctl/objstream.h"
#include "monitor/recording.h"
#include "analysis/samples.h"
#include "analysis/sitevol.h"

/* ---- writing ---- */

struct objrec_writer;

/*
 * objrec_writer_new - write object-sampling lines to @w (not owned; it must
 * outlive the writer). NULL with errno ENOMEM. Free with objrec_writer_free().
 */
struct objrec_writer *objrec_writer_new(struct recording_writer *w);
/* objrec_writer_free - NULL is a no-op. */
void objrec_writer_free(struct objrec_writer *ow);
/* objrec_writer_tap - fill *@t with callbacks writing @ow's lines (for
 * objstream_set_tap). */
void objrec_writer_tap(struct objrec_writer *ow, struct objstream_tap *t);
/* objrec_writer_volumes - write BPF per-site volumes @v (sitevol lines and
 * the sitevols summary). 0 or -EIO. */
int objrec_writer_volumes(struct objrec_writer *ow, const struct mt_site_volumes *v);
/* objrec_writer_err - 0, or the first write error (-EIO, -ENOMEM). */
int objrec_writer_err(const struct objrec_writer *ow);

/* ---- replay ---- */

struct objrec_replay {
	struct mt_samples m;     /* valid once have_session */
	struct mt_leaks l;
	struct mt_site_volumes vol;
	bool have_session, have_vol, mid_at_end;
	uint64_t t0_ns, mid_ns, end_ns; /* sampling began, the window's middle, its end */
	struct idmap names;      /* recording name id -> char * (owned) */
	struct idmap types;      /* type key -> name id */
	struct idmap cls;        /* name id -> class index + 1 */
	uint32_t ncls;
	struct idmap stacks;     /* stack id -> struct objrec_stack * (owned) */
	struct idmap pending;    /* object id -> stack id + 1 (ostack before its obj_create) */
	struct idmap live;       /* ids of the samples created and not yet reclaimed */
	uint64_t samples, no_stack; /* samples replayed; of them without a stack line */
	int err;                 /* first error (-ENOMEM) */
};

/*
 * objrec_replay_init - an empty replay; leaks counts "old" from @min_age GCs;
 * the window ends at @end_ns (the recording's end: its trailer's time, else
 * its last event's). objrec_replay_free() releases (no-op on a zeroed struct).
 */
void objrec_replay_init(struct objrec_replay *r, uint64_t min_age, uint64_t end_ns);
void objrec_replay_free(struct objrec_replay *r);
/* objrec_replay_side - a recording_side_fn (@ctx: struct objrec_replay *). */
void objrec_replay_side(void *ctx, const struct recording_side *s);
/* objrec_replay_event - one event of the recording (names, types, objects). */
void objrec_replay_event(struct objrec_replay *r, const struct mt_ev *e, const char *text);
/*
 * objrec_replay_finish - after the last line: rank the leak groups at the
 * window's end (marking the middle now if no line came after it:
 * mid_at_end) and match the volumes if the recording has them. Returns the
 * number of suspects, -ENOENT without a sampling session, or -ENOMEM.
 */
int objrec_replay_finish(struct objrec_replay *r);
/* objrec_replay_window - seconds from the start of sampling to the end. */
double objrec_replay_window(const struct objrec_replay *r);

#endif
