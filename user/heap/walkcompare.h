/* walkcompare.h - the frozen copy's own mark against HotSpot's JVMTI walk of
 * the same frozen image (MT_AP_FREEZE_COMPARE, `memtrace selftest-walks`),
 * object by object, by address: what each found, of which class and size,
 * and why they differ where they may. */
#ifndef MEMTRACE_WALKCOMPARE_H
#define MEMTRACE_WALKCOMPARE_H

#include <stdint.h>
#include <stdio.h>

#include "heap/snapshot.h"

struct walkcompare {
	uint64_t jvmti, mark;       /* objects each found */
	uint64_t both;              /* found by both */
	uint64_t cls_diff;          /* found by both, of another class */
	uint64_t size_diff;         /* found by both, of another size */
	uint64_t jvmti_only;        /* found by JVMTI alone ... */
	uint64_t weak_only;         /* ... of which reachable only through a weak
				     * referent (the mark leaves those: as the collector) */
	uint64_t mark_only;         /* found by the mark alone (roots and edges JVMTI
				     * does not report: hidden threads, a class's own
				     * fields, its loader's data) */
};

/*
 * walkcompare_run - compare @jv (a frozen walk's JVMTI records: visits keyed
 * by address, named objects, classes; before walkids_resolve()) with @mk (the
 * mark's records of the same image, with mk->addrs). Writes the counts into
 * @out and, when @f is not NULL, one JSON line per class where they differ
 * (at most 40 each way) to @f. Returns 0 or -ENOMEM.
 */
int walkcompare_run(const struct mt_snapshot *jv, const struct mt_snapshot *mk,
		    struct walkcompare *out, FILE *f);

#endif
