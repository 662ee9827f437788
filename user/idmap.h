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

struct idmap {
	uint64_t *keys;
	void **vals;
	unsigned char *used;
	size_t cap;   /* a power of two, or 0 before the first put */
	size_t n;
};

/* idmap_init - an empty map (no allocation until the first put). */
void idmap_init(struct idmap *m);
/* idmap_free - release the table (not the values); the map is empty after. */
void idmap_free(struct idmap *m);
/* idmap_get - the value of @key, or NULL when absent. */
void *idmap_get(const struct idmap *m, uint64_t key);
/* idmap_put - set @key to @val (replacing). Returns 0 or -ENOMEM. */
int idmap_put(struct idmap *m, uint64_t key, void *val);
/* idmap_del - remove @key; returns its value, NULL when absent. */
void *idmap_del(struct idmap *m, uint64_t key);

/* Iterate: for (size_t i = 0; i < m->cap; i++) if (m->used[i]) ... m->vals[i].
 * Do not put or delete while iterating; collect keys first. */

#endif
