/*
 * growthreport.h - the leak answer as `memtrace leaks` prints it: each holder
 * whose objects grew in every interval of a series of heap snapshots
 * (analysis/heapgrowth.h, heap/heapseries.h), with what grew, its ages, its
 * path from a GC root and where its objects were allocated (the sampled
 * objects of the session found under it, else the samples of its classes);
 * text, or one JSON object per line with --json.
 */
#ifndef MEMTRACE_GROWTHREPORT_H
#define MEMTRACE_GROWTHREPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/heapgrowth.h"
#include "analysis/samples.h"
#include "heap/heapseries.h"

struct growthreport_src {
	int pid;
	double elapsed;              /* the window, seconds */
	bool json;
	uint64_t top;                /* suspects shown */
	struct mt_samples *m;        /* the session's samples (sites), or NULL */
};

/*
 * growthreport_print - the suspects of @r (after heapgrowth_rank() on
 * @s's growth) to stdout. Returns how many were printed, or -ENOMEM
 * (printed).
 */
int growthreport_print(const struct heapgrowth_result *r, const struct heapseries *s,
		       const struct growthreport_src *src);

#endif
