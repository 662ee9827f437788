// SPDX-License-Identifier: GPL-2.0
/*
 * collector_bench.c - how many GC probe events the collector decodes and
 * pairs per second on one core: a synthetic ring replay. Each synthetic
 * collection is what a G1 young collection fires on JDK 17: gc__begin, then
 * mem__pool__gc__begin and _end for 8 pools, then gc__end (18 events).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analysis/gcpair.h"

static unsigned long long records;

static void on_record(const struct gc_record *r, void *ctx)
{
	records += r->npools;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const char *const pools[8] = {
		"CodeHeap 'non-nmethods'", "CodeHeap 'profiled nmethods'",
		"CodeHeap 'non-profiled nmethods'", "Metaspace", "Compressed Class Space",
		"G1 Eden Space", "G1 Survivor Space", "G1 Old Gen",
	};
	long collections = argc > 1 ? atol(argv[1]) : 2000000;
	struct mt_gc_event *ev = calloc(18, sizeof(*ev));
	struct gcpair gp;
	double t0, dt;
	uint64_t ts = 1;

	if (!ev)
		return 1;
	/* one collection's events, replayed with fresh timestamps */
	ev[0].kind = MT_GC_BEGIN;
	for (int i = 0; i < 8; i++) {
		ev[1 + i].kind = MT_POOL_BEGIN;
		ev[9 + i].kind = MT_POOL_END;
		snprintf(ev[1 + i].manager, MT_GC_NAME_LEN, "G1 Young Generation");
		snprintf(ev[9 + i].manager, MT_GC_NAME_LEN, "G1 Young Generation");
		snprintf(ev[1 + i].pool, MT_GC_NAME_LEN, "%s", pools[i]);
		snprintf(ev[9 + i].pool, MT_GC_NAME_LEN, "%s", pools[i]);
		ev[1 + i].used = 1000 + i;
		ev[9 + i].used = 10 + i;
	}
	ev[17].kind = MT_GC_END;
	for (int i = 0; i < 18; i++)
		ev[i].tid = 7;
	gcpair_init(&gp, on_record, NULL);
	t0 = now();
	for (long c = 0; c < collections; c++)
		for (int i = 0; i < 18; i++) {
			ev[i].ts_ns = ts++;
			gcpair_feed(&gp, &ev[i]);
		}
	dt = now() - t0;
	printf("collector: %ld collections, %ld events in %.3f s: %.2f M events/s on one core "
	       "(%llu pool records, unpaired %llu)\n",
	       collections, collections * 18, dt, collections * 18 / dt / 1e6, records,
	       (unsigned long long)(gp.unpaired_begin + gp.unpaired_end));
	free(ev);
	return 0;
}
