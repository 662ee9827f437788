// SPDX-License-Identifier: GPL-2.0
/* arena.c - one arena per query: bump allocation in chunks, freed at once. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsl.h"
#include "lib/util.h"

#define CHUNK_MIN (64u * 1024)
#define CHUNK_GROW (32u << 20)

struct chunk {
	struct chunk *prev;
	size_t cap;
	size_t used;
	_Alignas(16) unsigned char data[];
};

struct dsl_arena {
	struct chunk *cur;
	size_t total;   /* bytes of all chunks' data */
};

struct dsl_arena *dsl_arena_new(void)
{
	struct dsl_arena *a = calloc(1, sizeof(*a));

	if (!a)
		errno = ENOMEM;
	return a;
}

static void free_chunks(struct chunk *c, const struct chunk *stop)
{
	while (c && c != stop) {
		struct chunk *prev = c->prev;

		free(c);
		c = prev;
	}
}

void dsl_arena_free(struct dsl_arena *a)
{
	if (!a)
		return;
	free_chunks(a->cur, NULL);
	free(a);
}

void *dsl_arena_alloc(struct dsl_arena *a, size_t size)
{
	struct chunk *c = a->cur;
	size_t need = (size + 15) & ~(size_t)15;

	if (size == 0)
		need = 16;
	if (need < size || need > DSL_MAX_ARENA)
		return NULL;
	if (!c || c->cap - c->used < need) {
		/* at least a quarter of what the arena holds (up to CHUNK_GROW):
		 * millions of small values (a query's instances and their
		 * properties) in few big chunks, each in 2 MiB pages - a 4 KiB
		 * page's first touch is a host fault on a VM whose host shadows
		 * the page tables (seed 03 at 10 M objects: 19.6 k page faults,
		 * ~130 ms of its 480-690 ms run) */
		size_t grow = a->total / 4 < CHUNK_GROW ? a->total / 4 : CHUNK_GROW;
		size_t cap = need > CHUNK_MIN ? need : CHUNK_MIN;

		if (cap < grow && a->total + grow <= DSL_MAX_ARENA)
			cap = grow;
		if (a->total + cap > DSL_MAX_ARENA)
			return NULL;
		c = util_big_alloc(sizeof(*c) + cap, 1);
		if (!c)
			return NULL;
		c->prev = a->cur;
		c->cap = cap;
		c->used = 0;
		a->cur = c;
		a->total += cap;
	}
	void *p = c->data + c->used;
	c->used += need;
	memset(p, 0, need);
	return p;
}

char *dsl_arena_strndup(struct dsl_arena *a, const char *s, size_t n)
{
	if (n + 1 == 0)
		return NULL;
	char *p = dsl_arena_alloc(a, n + 1);

	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

size_t dsl_arena_used(const struct dsl_arena *a)
{
	return a->total;
}

struct dsl_arena_mark dsl_arena_mark(const struct dsl_arena *a)
{
	struct dsl_arena_mark m = { a->cur, a->cur ? a->cur->used : 0, a->total };

	return m;
}

/* Free the chunks allocated after the mark and rewind the marked chunk. */
void dsl_arena_reset(struct dsl_arena *a, struct dsl_arena_mark m)
{
	free_chunks(a->cur, m.chunk);
	a->cur = m.chunk;
	if (a->cur)
		a->cur->used = m.used;
	a->total = m.total;
}
