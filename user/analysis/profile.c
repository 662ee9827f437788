// SPDX-License-Identifier: GPL-2.0
/* profile.c - weighted stack samples: interned frame names, merged stacks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile.h"
#include "lib/util.h"

/* Open-addressing tables hold index + 1 (0 = empty); capacity is a power of
 * two kept at most half full. */
struct table {
	uint32_t *slot;
	size_t cap;
};

struct profile {
	char **names;
	size_t nnames, names_cap;
	struct table name_tab;

	struct profile_stack *stacks;
	size_t nstacks, stacks_cap;
	struct table stack_tab;

	uint64_t total_bytes, total_count;
	uint64_t start_ns, duration_ns;
};

/* FNV-1a over bytes. */
static uint64_t hash_bytes(const void *data, size_t len, uint64_t h)
{
	const unsigned char *b = data;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

#define FNV_SEED 0xcbf29ce484222325ULL

static uint64_t hash_name(const char *s)
{
	return hash_bytes(s, strlen(s), FNV_SEED);
}

static uint64_t hash_stack(const uint32_t *ids, int n)
{
	return hash_bytes(ids, (size_t)n * sizeof(*ids), FNV_SEED);
}

struct profile *profile_new(void)
{
	struct profile *p = calloc(1, sizeof(*p));

	if (!p)
		errno = ENOMEM;
	return p;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nnames; i++)
		free(p->names[i]);
	for (size_t i = 0; i < p->nstacks; i++)
		free((void *)p->stacks[i].frames);
	free(p->names);
	free(p->stacks);
	free(p->name_tab.slot);
	free(p->stack_tab.slot);
	free(p);
}

/* Grow @t to hold @want entries at most half full, re-inserting with @rehash. */
static int table_reserve(struct table *t, size_t want, const struct profile *p,
			 uint64_t (*rehash)(const struct profile *, uint32_t))
{
	size_t cap = t->cap ? t->cap : 64;
	uint32_t *slot;

	while (cap < want * 2)
		cap *= 2;
	if (cap == t->cap)
		return 0;
	slot = calloc(cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		uint32_t v = t->slot[i];
		size_t j;

		if (!v)
			continue;
		j = rehash(p, v - 1) & (cap - 1);
		while (slot[j])
			j = (j + 1) & (cap - 1);
		slot[j] = v;
	}
	free(t->slot);
	t->slot = slot;
	t->cap = cap;
	return 0;
}

static uint64_t rehash_name(const struct profile *p, uint32_t i)
{
	return hash_name(p->names[i]);
}

static uint64_t rehash_stack(const struct profile *p, uint32_t i)
{
	return hash_stack(p->stacks[i].frames, p->stacks[i].n);
}

/* intern - the id of @name, adding it if new. Returns 0 or -ENOMEM. */
static int intern(struct profile *p, const char *name, uint32_t *id)
{
	uint64_t h = hash_name(name);
	size_t j;
	char *copy;

	if (table_reserve(&p->name_tab, p->nnames + 1, p, rehash_name))
		return -ENOMEM;
	for (j = h & (p->name_tab.cap - 1); p->name_tab.slot[j]; j = (j + 1) & (p->name_tab.cap - 1)) {
		uint32_t v = p->name_tab.slot[j] - 1;

		if (!strcmp(p->names[v], name)) {
			*id = v;
			return 0;
		}
	}
	if (p->nnames == p->names_cap) {
		size_t cap = p->names_cap ? p->names_cap * 2 : 256;
		char **names = realloc(p->names, cap * sizeof(*names));

		if (!names)
			return -ENOMEM;
		p->names = names;
		p->names_cap = cap;
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	p->names[p->nnames] = copy;
	p->name_tab.slot[j] = (uint32_t)p->nnames + 1;
	*id = (uint32_t)p->nnames++;
	return 0;
}

int profile_add(struct profile *p, const char *const *frames, int n, uint64_t bytes,
		uint64_t count)
{
	uint32_t *ids;
	uint64_t h;
	size_t j;
	int err;

	if (n < 1 || n > MT_PROFILE_MAX_DEPTH)
		return -EINVAL;
	ids = malloc((size_t)n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (int i = 0; i < n; i++) {
		err = intern(p, frames[i] ? frames[i] : "[unknown]", &ids[i]);
		if (err)
			goto err;
	}
	err = -ENOMEM;
	if (table_reserve(&p->stack_tab, p->nstacks + 1, p, rehash_stack))
		goto err;
	h = hash_stack(ids, n);
	for (j = h & (p->stack_tab.cap - 1); p->stack_tab.slot[j];
	     j = (j + 1) & (p->stack_tab.cap - 1)) {
		struct profile_stack *s = &p->stacks[p->stack_tab.slot[j] - 1];

		if (s->n == n && !memcmp(s->frames, ids, (size_t)n * sizeof(*ids))) {
			s->bytes += bytes;
			s->count += count;
			free(ids);
			goto added;
		}
	}
	if (p->nstacks == p->stacks_cap) {
		size_t cap = p->stacks_cap ? p->stacks_cap * 2 : 256;
		struct profile_stack *st = realloc(p->stacks, cap * sizeof(*st));

		if (!st)
			goto err;
		p->stacks = st;
		p->stacks_cap = cap;
	}
	p->stacks[p->nstacks] = (struct profile_stack){ ids, n, bytes, count };
	p->stack_tab.slot[j] = (uint32_t)p->nstacks + 1;
	p->nstacks++;
added:
	p->total_bytes += bytes;
	p->total_count += count;
	return 0;
err:
	free(ids);
	return err;
}

/* A Java method frame (pkg.Class.method), as opposed to VM code and stubs. */
static bool is_java(const char *f)
{
	return f[0] != '[' && strchr(f, '.') && !strstr(f, "::");
}

/* A sample with the walker's Java stack: that stack, the VM frames below it,
 * the class. */
static int add_walked(struct profile *p, const struct profile_alloc *a)
{
	const char **frames;
	int k = 0, m = 0, err;

	if (a->java_depth < 0 || a->depth < 0 ||
	    a->java_depth + a->depth + 1 > MT_PROFILE_MAX_DEPTH)
		return -EINVAL;
	frames = malloc((size_t)(a->java_depth + a->depth + 1) * sizeof(*frames));
	if (!frames)
		return -ENOMEM;
	memcpy(frames, a->java, (size_t)a->java_depth * sizeof(*frames));
	k = a->java_depth;
	/* m: the VM's allocation path, leaf first, up to the first Java frame */
	while (a->frames && m < a->depth && !is_java(a->frames[m]) && a->frames[m][0] != '[')
		m++;
	for (int d = m - 1; d >= 0; d--)
		frames[k++] = a->frames[d];
	frames[k++] = a->class_name;
	err = profile_add(p, frames, k, a->bytes, a->count);
	free(frames);
	return err;
}

int profile_add_alloc(struct profile *p, const struct profile_alloc *a)
{
	const char *leaf = a->java_leaf, **f, **frames;
	int depth = a->depth, k = 0, m = 0, err;

	if (a->java)
		return add_walked(p, a);
	if (!a->frames) {
		const char *two[] = { leaf ? leaf : "[no stack]", a->class_name };

		return profile_add(p, two, 2, a->bytes, a->count);
	}
	if (depth < 0 || depth > MT_PROFILE_MAX_DEPTH - 3)
		return -EINVAL;
	/* f: the walk's names, leaf first; frames: the stack, root first, at most
	 * depth + 3 names (marker, Java frame, class) */
	f = malloc((size_t)(2 * depth + 3) * sizeof(*f));
	if (!f)
		return -ENOMEM;
	frames = f + depth;
	memcpy(f, a->frames, (size_t)depth * sizeof(*f));
	/* the interpreter's innermost frame is the allocating method */
	for (int d = 0; leaf && a->interpreted && d < depth; d++)
		if (!strcmp(f[d], "[interpreted Java]")) {
			f[d] = leaf;
			break;
		}
	/* m: the first frame (from the leaf) above the VM's allocation path */
	while (m < depth && !is_java(f[m]) && f[m][0] != '[')
		m++;
	if (leaf && (m == depth || strcmp(f[m], leaf))) {
		bool lost = true; /* is everything above m unresolved? */

		for (int d = m; d < depth; d++)
			lost &= f[d][0] == '[' && strcmp(f[d], "[interpreted Java]");
		if (lost)
			frames[k++] = "[callers: run with -XX:+PreserveFramePointer]";
		else
			for (int d = depth - 1; d >= m; d--)
				frames[k++] = f[d];
		frames[k++] = leaf;
		for (int d = m - 1; d >= 0; d--)
			frames[k++] = f[d];
	} else {
		for (int d = depth - 1; d >= 0; d--)
			frames[k++] = f[d];
	}
	frames[k++] = a->class_name;
	err = profile_add(p, frames, k, a->bytes, a->count);
	free(f);
	return err;
}

void profile_set_window(struct profile *p, uint64_t start_epoch_ns, uint64_t duration_ns)
{
	p->start_ns = start_epoch_ns;
	p->duration_ns = duration_ns;
}

void profile_get_window(const struct profile *p, uint64_t *start_epoch_ns, uint64_t *duration_ns)
{
	*start_epoch_ns = p->start_ns;
	*duration_ns = p->duration_ns;
}

size_t profile_nstacks(const struct profile *p)
{
	return p->nstacks;
}

const struct profile_stack *profile_stack_at(const struct profile *p, size_t i)
{
	return i < p->nstacks ? &p->stacks[i] : NULL;
}

size_t profile_nnames(const struct profile *p)
{
	return p->nnames;
}

const char *profile_name(const struct profile *p, uint32_t id)
{
	return id < p->nnames ? p->names[id] : NULL;
}

uint64_t profile_total_bytes(const struct profile *p)
{
	return p->total_bytes;
}

uint64_t profile_total_count(const struct profile *p)
{
	return p->total_count;
}
