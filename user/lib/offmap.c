// SPDX-License-Identifier: GPL-2.0
/* offmap.c - bounded-range address -> 32-bit value map (see offmap.h):
 * linear probing, Fibonacci hashing of the word index (the top bits of the
 * product choose the slot). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/hash.h"
#include "lib/offmap.h"

static inline size_t slot_of(uint32_t key, unsigned bits)
{
	return (size_t)(hash_fib64(key) >> (64 - bits));
}

/* The key of addr (non-zero), or 0 if it is outside the range or unaligned. */
static inline uint32_t key_of(const struct offmap *m, uint64_t addr)
{
	if (addr < m->lo || addr > m->hi || (addr & 7))
		return 0;
	return (uint32_t)((addr - m->lo) >> 3) + 1;
}

static int alloc_slots(struct offmap *m, unsigned bits)
{
	m->slots = calloc((size_t)1 << bits, sizeof(*m->slots));
	if (!m->slots)
		return -ENOMEM;
	m->bits = bits;
	return 0;
}

int offmap_init(struct offmap *m, uint64_t lo, uint64_t hi, size_t expect)
{
	unsigned bits = 10;

	memset(m, 0, sizeof(*m));
	if (hi < lo || ((hi - lo) >> 3) >= UINT32_MAX - 1)
		return -ERANGE;
	m->lo = lo;
	m->hi = hi;
	while (bits < 40 && ((size_t)3 << bits) < 4 * expect)
		bits++;
	return alloc_slots(m, bits);
}

/* The slot holding @key, or the empty slot where it would go. */
static uint64_t *find(const struct offmap *m, uint32_t key)
{
	size_t mask = ((size_t)1 << m->bits) - 1, i;

	for (i = slot_of(key, m->bits); m->slots[i]; i = (i + 1) & mask)
		if ((uint32_t)(m->slots[i] >> 32) == key)
			break;
	return &m->slots[i];
}

/* Double the table. */
static int grow(struct offmap *m)
{
	uint64_t *old = m->slots;
	size_t old_n = (size_t)1 << m->bits;

	if (alloc_slots(m, m->bits + 1)) {
		m->slots = old;
		return -ENOMEM;
	}
	for (size_t i = 0; i < old_n; i++)
		if (old[i])
			*find(m, (uint32_t)(old[i] >> 32)) = old[i];
	free(old);
	return 0;
}

int offmap_put_new(struct offmap *m, uint64_t addr, uint32_t val, uint32_t *cur)
{
	uint32_t key = key_of(m, addr);
	uint64_t *s;

	if (!key)
		return -EINVAL;
	if (4 * (m->n + 1) > ((size_t)3 << m->bits) && grow(m))
		return -ENOMEM;
	s = find(m, key);
	if (!*s) {
		*s = (uint64_t)key << 32 | val;
		m->n++;
	}
	*cur = (uint32_t)*s;
	return 0;
}

bool offmap_get(const struct offmap *m, uint64_t addr, uint32_t *val)
{
	uint32_t key = key_of(m, addr);
	uint64_t *s;

	if (!key || !m->slots)
		return false;
	s = find(m, key);
	if (!*s)
		return false;
	*val = (uint32_t)*s;
	return true;
}

void offmap_free(struct offmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
