/*
 * idmap.h - a map from 64-bit scoped identities (addresses, tids, keys) to
 * pointers: open addressing, linear probing, backward-shift deletion. Any
 * key is valid, 0 included. Not thread-safe.
 */
#ifndef MEMTRACE_IDMAP_H
#define MEMTRACE_IDMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One slot: key and value side by side, so a probe touches one cache line
 * (the agent's heap walk maps millions of addresses). key 0 marks an empty
 * slot; the key 0 itself lives in zero_val. */
struct idmap_slot {
	uint64_t key;
	void *val;
};

struct idmap {
	struct idmap_slot *slots;
	size_t cap;   /* a power of two, or 0 before the first put */
	size_t n;     /* keys held, key 0 included */
	bool has_zero;
	void *zero_val;
};

/* idmap_init - an empty map (no allocation until the first put). */
void idmap_init(struct idmap *m);
/* idmap_free - release the table (not the values); the map is empty after. */
void idmap_free(struct idmap *m);
/* idmap_free_vals - free() every value, then idmap_free(). */
void idmap_free_vals(struct idmap *m);
/* idmap_get - the value of @key, or NULL when absent. */
void *idmap_get(const struct idmap *m, uint64_t key);
/* idmap_put - set @key to @val (replacing). Returns 0 or -ENOMEM. */
int idmap_put(struct idmap *m, uint64_t key, void *val);
/* idmap_put_new - set @key to @val unless it has a value: *@cur is the value
 * it has now (@val if it was absent). One probe. Returns 0 or -ENOMEM. */
int idmap_put_new(struct idmap *m, uint64_t key, void *val, void **cur);
/* idmap_reserve - room for @n keys at most half full (no growth until then).
 * Returns 0 or -ENOMEM (the map is unchanged). */
int idmap_reserve(struct idmap *m, size_t n);
/* idmap_del - remove @key; returns its value, NULL when absent. */
void *idmap_del(struct idmap *m, uint64_t key);
/* idmap_next - iterate: start with *@pos = 0; each call gives one key and
 * value and returns true, false when done. Do not put or delete meanwhile
 * (collect keys first). */
bool idmap_next(const struct idmap *m, size_t *pos, uint64_t *key, void **val);

/* Or by slot: for (size_t i = 0; i < idmap_slots(m); i++) if (idmap_used(m, i))
 * ... idmap_key_at(m, i), idmap_val_at(m, i). Slot cap is the key 0. */
static inline size_t idmap_slots(const struct idmap *m)
{
	return m->cap + 1;
}

static inline bool idmap_used(const struct idmap *m, size_t i)
{
	return i < m->cap ? m->slots[i].key != 0 : m->has_zero;
}

static inline uint64_t idmap_key_at(const struct idmap *m, size_t i)
{
	return i < m->cap ? m->slots[i].key : 0;
}

static inline void *idmap_val_at(const struct idmap *m, size_t i)
{
	return i < m->cap ? m->slots[i].val : m->zero_val;
}

/*
 * An index of 64-bit ids to 32-bit positions, built once and then looked up
 * often (the heap a query runs on: each reference looks up two ids). Three
 * ways, the same answers:
 *  - ids base + position for nearly every position (a frozen copy's mark
 *    numbers objects next_id + their rank, a few named ones apart): a bit
 *    per position says the id is its own, the others go to the map - no
 *    array of positions at all (idmap_index_init_dense());
 *  - the largest id close to their number (the agent numbers objects
 *    densely from 1): the ids index an array directly;
 *  - otherwise (addresses, from a heap dump) an idmap holds position + 1.
 * Id 0 is no id: never stored, never found. The first position put for an
 * id stays.
 */
#define IDMAP_NOIDX UINT32_MAX /* "no position" */

struct idmap_index {
	uint32_t *direct; /* [id] -> position or IDMAP_NOIDX for ids <= max; NULL: map */
	uint64_t max;
	uint64_t *bits;   /* dense: bit p set: position p has id base + p; NULL: not dense */
	uint64_t base;
	size_t nbits;
	bool collide;     /* dense: the map holds an id in [base, base + nbits) */
	struct idmap map;
};

/* idmap_index_init - an empty index for about @n ids, none above @maxid.
 * Returns 0 or -ENOMEM; *@x can be freed either way. */
int idmap_index_init(struct idmap_index *x, size_t n, uint64_t maxid);
/* idmap_index_init_dense - an empty index for positions 0 .. @n - 1, most of
 * which get id @base + position (n / 8 bytes; the others go to a map).
 * Returns 0 or -ENOMEM; *@x can be freed either way. */
int idmap_index_init_dense(struct idmap_index *x, size_t n, uint64_t base);
/* idmap_index_put - give @id position @pos unless it has one (or is 0, or
 * above the direct array's @maxid). Returns 0 or -ENOMEM. */
int idmap_index_put(struct idmap_index *x, uint64_t id, uint32_t pos);
/*
 * Two threads may fill a dense index at once (heap/viewobjs.c): the first
 * with idmap_index_put(), the second with idmap_index_put_own() on
 * positions whose bit words are its own (from a multiple of 64 on), keeping
 * the ids it is refused for; after both, the first puts those in order -
 * unless idmap_index_collides() or one of them idmap_index_in_dense(), when
 * it forgets the second's positions (idmap_index_forget_from()) and puts
 * all of them again in order, as one thread would have.
 */
/* idmap_index_dense - is @x a dense index (idmap_index_init_dense())? */
static inline bool idmap_index_dense(const struct idmap_index *x)
{
	return x->bits != NULL;
}

/* idmap_index_put_own - if @id is @pos's own (base + pos) in dense @x, its
 * bit set (written with a relaxed atomic store: the first thread may read
 * the word) and true; false otherwise (nothing written). */
static inline bool idmap_index_put_own(struct idmap_index *x, uint64_t id, uint32_t pos)
{
	uint64_t p = id - x->base;

	if (!x->bits || p != pos || p >= x->nbits)
		return false;
	__atomic_store_n(&x->bits[p >> 6], __atomic_load_n(&x->bits[p >> 6], __ATOMIC_RELAXED) |
			 1ull << (p & 63), __ATOMIC_RELAXED);
	return true;
}

/* idmap_index_collides - has dense @x's map an id of its bits' range? */
static inline bool idmap_index_collides(const struct idmap_index *x)
{
	return x->collide;
}

/* idmap_index_in_dense - is @id in dense @x's range of own ids? */
static inline bool idmap_index_in_dense(const struct idmap_index *x, uint64_t id)
{
	return x->bits && id - x->base < x->nbits;
}

/* idmap_index_forget_from - dense @x's bits of positions @pos (a multiple
 * of 64) on cleared. */
void idmap_index_forget_from(struct idmap_index *x, uint32_t pos);

/* idmap_index_free - release the index; a zeroed or freed one is a no-op. */
void idmap_index_free(struct idmap_index *x);

/* idmap_index_get - the position of @id, IDMAP_NOIDX if it has none. */
static inline uint32_t idmap_index_get(const struct idmap_index *x, uint64_t id)
{
	void *v;

	if (x->bits) {
		uint64_t p = id - x->base;

		if (p < x->nbits && (x->bits[p >> 6] >> (p & 63) & 1))
			return (uint32_t)p;
	} else if (x->direct) {
		return id <= x->max ? x->direct[id] : IDMAP_NOIDX;
	}
	v = idmap_get(&x->map, id);
	return v ? (uint32_t)((uintptr_t)v - 1) : IDMAP_NOIDX;
}

#endif
