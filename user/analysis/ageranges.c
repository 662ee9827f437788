// SPDX-License-Identifier: GPL-2.0
/* ageranges.c - age in GCs survived by binary search over id ranges. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/ageranges.h"

int ageranges_init(struct mt_ageranges *a, uint64_t first_id)
{
	memset(a, 0, sizeof(*a));
	a->cap = 64;
	a->r = calloc(a->cap, sizeof(*a->r));
	if (!a->r)
		return -ENOMEM;
	a->r[0] = (struct mt_agerange){ .start = first_id, .epoch = 0 };
	a->n = 1;
	return 0;
}

void ageranges_free(struct mt_ageranges *a)
{
	free(a->r);
	memset(a, 0, sizeof(*a));
}

int ageranges_gc(struct mt_ageranges *a, uint64_t next_id)
{
	struct mt_agerange *last = &a->r[a->n - 1];

	a->epoch++;
	if (next_id <= last->start) {
		/* no id handed out since the last GC: the range moves to this epoch */
		last->epoch = a->epoch;
		return 0;
	}
	if (a->n == MT_AGE_MAX_RANGES) {
		/* merge the two oldest: range 1's ids take range 0's (older) epoch */
		memmove(&a->r[1], &a->r[2], (a->n - 2) * sizeof(*a->r));
		a->n--;
		a->merged++;
	}
	if (a->n == a->cap) {
		size_t ncap = a->cap * 2;
		struct mt_agerange *r = realloc(a->r, ncap * sizeof(*r));

		if (!r)
			return -ENOMEM;
		a->r = r;
		a->cap = ncap;
	}
	a->r[a->n++] = (struct mt_agerange){ .start = next_id, .epoch = a->epoch };
	return 0;
}

/* Index of the range holding @id: the last with start <= id (0 if none). */
static size_t find(const struct mt_ageranges *a, uint64_t id)
{
	size_t lo = 0, hi = a->n; /* invariant: answer in [lo, hi) */

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (a->r[mid].start <= id)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

uint64_t ageranges_age(const struct mt_ageranges *a, uint64_t id)
{
	return a->epoch - a->r[find(a, id)].epoch;
}

uint64_t ageranges_age_at(const struct mt_ageranges *a, uint64_t id, uint64_t epoch)
{
	uint64_t e = a->r[find(a, id)].epoch;

	return epoch > e ? epoch - e : 0;
}

void ageranges_trim(struct mt_ageranges *a, uint64_t min_live_id)
{
	size_t k = find(a, min_live_id); /* ranges before k hold only ids < min_live_id */

	if (!k)
		return;
	memmove(&a->r[0], &a->r[k], (a->n - k) * sizeof(*a->r));
	a->n -= k;
}

int ageranges_bucket(uint64_t age)
{
	if (age < 2)
		return (int)age;
	if (age < 4)
		return 2;
	if (age < 8)
		return 3;
	if (age < 16)
		return 4;
	return 5;
}

const char *ageranges_bucket_name(int bucket)
{
	static const char *const names[MT_AGE_BUCKETS] = { "0", "1", "2-3", "4-7", "8-15", "16+" };

	return bucket >= 0 && bucket < MT_AGE_BUCKETS ? names[bucket] : "?";
}
