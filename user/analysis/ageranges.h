/* ageranges.h - object age in GCs survived, from allocation-ordered ids
 * (seed 002's "age ranges", out of process).
 *
 * The agent hands out sample ids in allocation order and reports, at the end
 * of each GC, the next id it would hand out. So the ids allocated between two
 * GCs form one contiguous range, and every object of a range has survived the
 * same number of GCs (if it is alive at all). We keep one (start id, epoch)
 * pair per range: memory per GC, not per object. An object's age is the
 * current epoch minus its range's epoch, found by binary search.
 *
 * Bounded: beyond MT_AGE_MAX_RANGES ranges the two oldest are merged (their
 * objects take the older range's epoch: only objects older than ~4096 GCs can
 * be over-aged, and by at most the merged span). ageranges_trim() drops
 * ranges that hold no live sample any more.
 */
#ifndef MEMTRACE_AGERANGES_H
#define MEMTRACE_AGERANGES_H

#include <stddef.h>
#include <stdint.h>

#define MT_AGE_MAX_RANGES 4096

/* The age buckets reported: 0, 1, 2-3, 4-7, 8-15, 16+ GCs survived. */
#define MT_AGE_BUCKETS 6

struct mt_agerange {
	uint64_t start; /* first id of the range */
	uint64_t epoch; /* GCs finished when the range's first id was handed out */
};

struct mt_ageranges {
	struct mt_agerange *r; /* ascending start and epoch */
	size_t n, cap;
	uint64_t epoch;        /* GCs finished so far: the current epoch */
	uint64_t merged;       /* ranges merged away by the bound */
};

/*
 * ageranges_init - start with one range beginning at @first_id, epoch 0.
 * Returns 0 or -ENOMEM. ageranges_free() releases (no-op on a zeroed struct).
 */
int ageranges_init(struct mt_ageranges *a, uint64_t first_id);
void ageranges_free(struct mt_ageranges *a);

/*
 * ageranges_gc - a GC finished when @next_id was the next id to hand out:
 * the epoch advances and ids from @next_id on belong to the new epoch.
 * A @next_id below the last range's start (a reordered record) is clamped to
 * it. Returns 0 or -ENOMEM (the epoch still advances; ranges stay coarser).
 */
int ageranges_gc(struct mt_ageranges *a, uint64_t next_id);

/* ageranges_age - GCs survived by the object with @id (ids below the first
 * range count as the oldest range). */
uint64_t ageranges_age(const struct mt_ageranges *a, uint64_t id);

/* ageranges_age_at - the age @id had when the epoch was @epoch (<= current);
 * 0 if it was not allocated yet then. */
uint64_t ageranges_age_at(const struct mt_ageranges *a, uint64_t id, uint64_t epoch);

/* ageranges_trim - forget ranges that end at or below @min_live_id (the
 * smallest id of a live sample): they can no longer be asked about. */
void ageranges_trim(struct mt_ageranges *a, uint64_t min_live_id);

/* ageranges_bucket - the bucket (0..MT_AGE_BUCKETS-1) of @age. */
int ageranges_bucket(uint64_t age);

/* ageranges_bucket_name - "0", "1", "2-3", "4-7", "8-15", "16+". */
const char *ageranges_bucket_name(int bucket);

#endif
