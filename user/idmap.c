// SPDX-License-Identifier: GPL-2.0
/* idmap.c - 64-bit id -> pointer hash map (linear probing, backward shift). */
#include <errno.h>
#include <stdlib.h>

#include "idmap.h"

static inline size_t slot_of(uint64_t key, size_t cap)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & (cap - 1);
}

void idmap_init(struct idmap *m)
{
	m->keys = NULL;
	m->vals = NULL;
	m->used = NULL;
	m->cap = m->n = 0;
}

void idmap_free(struct idmap *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	idmap_init(m);
}

void *idmap_get(const struct idmap *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key)
			return m->vals[i];
	return NULL;
}

static void insert(struct idmap *m, uint64_t key, void *val)
{
	size_t i;

	for (i = slot_of(key, m->cap); m->used[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return;
		}
	m->used[i] = 1;
	m->keys[i] = key;
	m->vals[i] = val;
	m->n++;
}

/* Double the table (or create it) and re-insert every entry. */
static int grow(struct idmap *m)
{
	struct idmap old = *m;
	size_t cap = old.cap ? old.cap * 2 : 64;

	m->keys = malloc(cap * sizeof(*m->keys));
	m->vals = malloc(cap * sizeof(*m->vals));
	m->used = calloc(cap, 1);
	if (!m->keys || !m->vals || !m->used) {
		free(m->keys);
		free(m->vals);
		free(m->used);
		*m = old;
		return -ENOMEM;
	}
	m->cap = cap;
	m->n = 0;
	for (size_t i = 0; i < old.cap; i++)
		if (old.used[i])
			insert(m, old.keys[i], old.vals[i]);
	free(old.keys);
	free(old.vals);
	free(old.used);
	return 0;
}

int idmap_put(struct idmap *m, uint64_t key, void *val)
{
	if ((m->n + 1) * 4 > m->cap * 3 && grow(m))
		return -ENOMEM;
	insert(m, key, val);
	return 0;
}

void *idmap_del(struct idmap *m, uint64_t key)
{
	size_t i, j, mask = m->cap - 1;
	void *val;

	if (!m->cap)
		return NULL;
	for (i = slot_of(key, m->cap); m->used[i]; i = (i + 1) & mask)
		if (m->keys[i] == key)
			break;
	if (!m->used[i])
		return NULL;
	val = m->vals[i];
	/* Backward shift: move later entries of the cluster into the hole. */
	for (j = (i + 1) & mask; m->used[j]; j = (j + 1) & mask) {
		size_t home = slot_of(m->keys[j], m->cap);

		/* Entry j may move to i only if its home is not in (i, j]. */
		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->used[i] = 0;
	m->n--;
	return val;
}
