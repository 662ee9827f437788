/* leaks_sampled.h - `memtrace leaks --sampled`, the sample-based ranking of
 * allocation sites by the growth of their old live bytes (leaks_sampled.c). */
#ifndef MEMTRACE_LEAKS_SAMPLED_H
#define MEMTRACE_LEAKS_SAMPLED_H

#include <stdbool.h>
#include <stdint.h>

#include "agentctl/sampling.h"
#include "cmd/cmdopt.h"

/*
 * leaks_sampled_run - sample with @o (its hooks are set here), rank groups
 * of samples that survived >= @min_age GCs; @counters: BPF per-site
 * allocation counters; @paths: a heap walk at the end gives each suspect
 * its path (a walk in a pause needs @co's --max-pause above the default
 * bound, heap/snaptake.h); @co->top groups shown. Returns the exit status
 * (0, or 1 printed).
 */
int leaks_sampled_run(struct mt_sampling_opts *o, uint64_t min_age, bool counters, bool paths,
		      const struct cmdopt *co);

#endif
