// SPDX-License-Identifier: GPL-2.0
/* allocnames.c - the allocation tracer's class names; see allocnames.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jstack/jwalk.h"
#include "jvm/klassname.h"
#include "jvm/proc.h"
#include "lib/hash.h"
#include "probe/allocnames.h"

/* (klass, gen) -> Java class name, filled when the kernel announces a key. */
struct allocnames_ent {
	uint64_t klass;
	uint32_t gen;
	char *name;
};

void allocnames_init(struct allocnames *n, int pid, bool exact, struct mt_klassname_cache *cache)
{
	memset(n, 0, sizeof(*n));
	n->pid = pid;
	n->exact = exact;
	n->cache = cache;
}

void allocnames_free(struct allocnames *n)
{
	for (size_t i = 0; i < n->cap; i++)
		free(n->ents[i].name);
	free(n->ents);
	klassname_cache_free(n->cache);
	n->ents = NULL;
	n->cache = NULL;
	n->nents = n->cap = 0;
}

/* Open addressing on (klass, gen); cap is a power of two, at most half full. */
static size_t slot(const struct allocnames *n, uint64_t klass, uint32_t gen)
{
	return (size_t)(hash_fib64(klass ^ ((uint64_t)gen << 48)) >> 20) & (n->cap - 1);
}

static struct allocnames_ent *find_ent(struct allocnames *n, uint64_t klass, uint32_t gen)
{
	if (!n->cap)
		return NULL;
	for (size_t i = slot(n, klass, gen);; i = (i + 1) & (n->cap - 1)) {
		struct allocnames_ent *e = &n->ents[i];

		if (!e->name)
			return NULL;
		if (e->klass == klass && e->gen == gen)
			return e;
	}
}

static int grow(struct allocnames *n)
{
	size_t cap = n->cap ? 2 * n->cap : 1024, old = n->cap;
	struct allocnames_ent *ents = calloc(cap, sizeof(*ents)), *prev = n->ents;

	if (!ents)
		return -ENOMEM;
	n->ents = ents;
	n->cap = cap;
	for (size_t i = 0; i < old; i++) {
		size_t j;

		if (!prev[i].name)
			continue;
		for (j = slot(n, prev[i].klass, prev[i].gen); ents[j].name; j = (j + 1) & (cap - 1))
			;
		ents[j] = prev[i];
	}
	free(prev);
	return 0;
}

/* Read the name of (@klass, @gen) into @name (@len bytes); "" when it cannot be. */
static void read_name(struct allocnames *n, uint64_t klass, uint32_t gen, uint32_t name_len,
		      char *name, size_t len)
{
	char raw[512];

	name[0] = '\0';
	if (gen < n->seen_gen) {
		/* a class was unloaded since this key was made: its memory may
		 * hold another class now, so its name is not read */
		snprintf(name, len, "(class unloaded before its name was read)");
		n->unnamed++;
	} else if (n->exact) {
		size_t k = name_len < sizeof(raw) ? name_len : sizeof(raw) - 1;

		if (proc_read_mem(n->pid, klass, raw, k) || klassname_to_java(raw, k, name, len) < 0)
			name[0] = '\0';
	} else if (klassname_cache_get(n->cache, klass, name, len) < 0) {
		name[0] = '\0';
	}
}

void allocnames_resolve(struct allocnames *n, uint64_t klass, uint32_t gen, uint32_t name_len)
{
	char name[512];
	size_t i;

	if (find_ent(n, klass, gen))
		return;
	if (n->nents * 2 >= n->cap && grow(n))
		return;
	read_name(n, klass, gen, name_len, name, sizeof(name));
	if (!name[0] || !jwalk_name_ok(name)) { /* nothing unprintable reaches an output */
		snprintf(name, sizeof(name), "(unknown class 0x%llx)", (unsigned long long)klass);
		n->unnamed++;
	}
	for (i = slot(n, klass, gen); n->ents[i].name; i = (i + 1) & (n->cap - 1))
		;
	n->ents[i].klass = klass;
	n->ents[i].gen = gen;
	n->ents[i].name = strdup(name);
	if (n->ents[i].name)
		n->nents++;
}

const char *allocnames_get(struct allocnames *n, uint64_t klass, uint32_t gen)
{
	struct allocnames_ent *e = find_ent(n, klass, gen);

	if (!e) { /* its announcement was lost: read the name now */
		allocnames_resolve(n, klass, gen, 0);
		e = find_ent(n, klass, gen);
	}
	return e ? e->name : "(unknown class)";
}

void allocnames_unload(struct allocnames *n, uint32_t gen)
{
	n->unloads++;
	if (gen > n->seen_gen)
		n->seen_gen = gen;
	/* a Klass* may now be reused: forget cached names */
	if (n->cache)
		klassname_cache_clear(n->cache);
}
