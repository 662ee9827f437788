/* sampling.h - one sampling session with the agent, for `age` and `leaks`:
 * load/connect, SAMPLE_START, feed EVENTS into a sample store for a duration
 * (or until SIGINT/SIGTERM), SAMPLE_STOP (the rest arrives before STOPPED),
 * DETACH. The agent goes dormant when we leave, however we leave. */
#ifndef MEMTRACE_SAMPLING_H
#define MEMTRACE_SAMPLING_H

#include <stdint.h>

#include "agentctl/agentsock.h"
#include "jvm/proc.h"
#include "analysis/samples.h"

struct mt_sampling_opts {
	int pid;
	double duration;     /* seconds (> 0) */
	uint32_t interval;   /* bytes between samples */
	unsigned depth;      /* frames per sample */
	size_t max_samples;  /* tracked live samples bound */
	/* optional hooks of the caller (ctx = the tick's ctx): */
	mt_samples_on_alloc on_alloc;   /* every arriving sample (samples.h) */
	/* sampling started in @p / the window just ended (before SAMPLE_STOP);
	 * nonzero from on_start ends the session */
	int (*on_start)(void *ctx, const struct mt_proc *p);
	void (*on_end)(void *ctx, const struct mt_proc *p, double elapsed);
	/* after on_end, sampling still on (the samples' tags alive): a last use
	 * of the session's socket @s, e.g. a heap walk (`leaks --paths`); frames
	 * arriving meanwhile are the caller's to feed to @m (samples_feed).
	 * Nonzero: the agent closed the session - what arrived is reported, no
	 * final counters. */
	int (*on_last)(void *ctx, const struct mt_proc *p, struct mt_agentsock *s,
		       struct mt_samples *m);
	/* during the window: the session's socket @s at @t seconds, when sampling
	 * starts and then every walk_every seconds (0: never) until the window
	 * ends (on_last takes the last turn); as on_last otherwise. walks > 0:
	 * exactly that many on_walk turns - when they run late (a walk that
	 * takes longer than walk_every on a big heap or a busy machine) the
	 * next follows at once and the window lasts until the last is done */
	double walk_every;
	uint32_t walks;
	int (*on_walk)(void *ctx, const struct mt_proc *p, struct mt_agentsock *s,
		       struct mt_samples *m, double t);
};

/* Called about every 200 ms with the seconds since sampling began. */
typedef int (*mt_sampling_tick)(void *ctx, struct mt_samples *m, double t);

/*
 * sampling_run - run the session, filling @m (initialized here; the caller
 * frees it with samples_free()) and @p. *@elapsed gets the window length in
 * seconds. Returns 0, or -errno after printing the reason once (with @m still
 * usable for what arrived if it was initialized).
 */
int sampling_run(const struct mt_sampling_opts *o, struct mt_proc *p, struct mt_samples *m,
		 mt_sampling_tick tick, void *ctx, double *elapsed);

/* sampling_parse_interval - "512k", "64K", "1m", "4096" → bytes (1..1 GiB;
 * parse_bytes()'s units). */
int sampling_parse_interval(const char *s, uint32_t *out);

/* sampling_print_losses - warnings for every loss (drops, evictions, bad
 * records); with --json the counts are in the caller's record instead. */
void sampling_print_losses(const struct mt_samples *m);

/* sampling_json_losses - `"dropped_allocs":N,...` (no braces) on stdout. */
void sampling_json_losses(const struct mt_samples *m);

/*
 * sampling_common_opt - handle option @c (getopt value) shared by age and
 * leaks: p pid, d duration, i interval, D depth, M max-samples, j json.
 * Returns 0 if handled, 1 if not ours, 2 for a bad value (printed).
 */
int sampling_common_opt(int c, const char *arg, struct mt_sampling_opts *o);

#endif
