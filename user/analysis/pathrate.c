// SPDX-License-Identifier: GPL-2.0
/* pathrate.c - allocation paths over a live view's intervals (pathrate.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/pathrate.h"

void pathrate_init(struct pathrate *pr)
{
	memset(pr, 0, sizeof(*pr));
}

void pathrate_fini(struct pathrate *pr)
{
	for (size_t i = 0; i < pr->nstrs; i++)
		free(pr->strs[i]);
	free(pr->strs);
	free(pr->slots);
	free(pr->cur);
	free(pr->prev);
	memset(pr, 0, sizeof(*pr));
}

/* FNV-1a, 64 bits. */
static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

/* Grow the slot table to @n slots (a power of two) and re-place the strings. */
static int rehash(struct pathrate *pr, size_t n)
{
	size_t *slots = calloc(n, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < pr->nstrs; i++) {
		size_t k = (size_t)str_hash(pr->strs[i]) & (n - 1);

		while (slots[k])
			k = (k + 1) & (n - 1);
		slots[k] = i + 1;
	}
	free(pr->slots);
	pr->slots = slots;
	pr->nslots = n;
	return 0;
}

/* intern - the table's copy of @s, made on first sight; NULL on ENOMEM. */
static const char *intern(struct pathrate *pr, const char *s)
{
	size_t k;

	if (2 * (pr->nstrs + 1) > pr->nslots && rehash(pr, pr->nslots ? 2 * pr->nslots : 64))
		return NULL;
	k = (size_t)str_hash(s) & (pr->nslots - 1);
	for (; pr->slots[k]; k = (k + 1) & (pr->nslots - 1))
		if (!strcmp(pr->strs[pr->slots[k] - 1], s))
			return pr->strs[pr->slots[k] - 1];
	if (pr->nstrs == pr->capstrs) {
		size_t cap = pr->capstrs ? 2 * pr->capstrs : 64;
		char **n = realloc(pr->strs, cap * sizeof(*n));

		if (!n)
			return NULL;
		pr->strs = n;
		pr->capstrs = cap;
	}
	pr->strs[pr->nstrs] = strdup(s);
	if (!pr->strs[pr->nstrs])
		return NULL;
	pr->slots[k] = ++pr->nstrs;
	return pr->strs[pr->nstrs - 1];
}

void pathrate_begin(struct pathrate *pr)
{
	pr->ncur = 0;
}

int pathrate_add(struct pathrate *pr, const char *frames, const char *class_name,
		 uint64_t bytes, uint64_t samples)
{
	const char *f = intern(pr, frames ? frames : "");
	struct pathrate_path *p;

	if (!f)
		return -ENOMEM;
	if (pr->ncur == pr->capcur) {
		size_t cap = pr->capcur ? pr->capcur * 2 : 64;
		struct pathrate_path *n = realloc(pr->cur, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		pr->cur = n;
		pr->capcur = cap;
	}
	p = &pr->cur[pr->ncur++];
	memset(p, 0, sizeof(*p));
	p->frames = f;
	p->class_name = class_name ? class_name : "";
	p->total = bytes;
	p->samples = samples;
	return 0;
}

static int key_cmp(const void *a, const void *b)
{
	const struct pathrate_path *x = a, *y = b;

	/* interned: one string, one pointer, for as long as the table lives */
	if (x->frames != y->frames)
		return (uintptr_t)x->frames < (uintptr_t)y->frames ? -1 : 1;
	return strcmp(x->class_name, y->class_name);
}

static int rate_cmp(const void *a, const void *b)
{
	const struct pathrate_path *x = a, *y = b;

	if (x->interval != y->interval)
		return x->interval < y->interval ? 1 : -1;
	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return key_cmp(a, b);
}

/* Sort by key and sum the rows of one path into its first. */
static void merge_rows(struct pathrate *pr)
{
	size_t out = 0;

	if (pr->ncur)
		qsort(pr->cur, pr->ncur, sizeof(pr->cur[0]), key_cmp);
	for (size_t i = 0; i < pr->ncur; i++) {
		if (out && !key_cmp(&pr->cur[out - 1], &pr->cur[i])) {
			pr->cur[out - 1].total += pr->cur[i].total;
			pr->cur[out - 1].samples += pr->cur[i].samples;
			continue;
		}
		pr->cur[out++] = pr->cur[i];
	}
	pr->ncur = out;
}

int pathrate_end(struct pathrate *pr)
{
	merge_rows(pr);
	pr->interval_bytes = pr->total_bytes = 0;
	for (size_t i = 0; i < pr->ncur; i++) {
		struct pathrate_path *p = &pr->cur[i];
		const struct pathrate_path *was =
			pr->nprev ? bsearch(p, pr->prev, pr->nprev, sizeof(*p), key_cmp) : NULL;
		uint64_t before = was ? was->total : 0;

		p->interval = p->total > before ? p->total - before : 0;
		pr->interval_bytes += p->interval;
		pr->total_bytes += p->total;
	}
	/* keep this round by key for the next one */
	if (pr->ncur > pr->capprev) {
		struct pathrate_path *n = realloc(pr->prev, pr->ncur * sizeof(*n));

		if (!n)
			return -ENOMEM;
		pr->prev = n;
		pr->capprev = pr->ncur;
	}
	if (pr->ncur)
		memcpy(pr->prev, pr->cur, pr->ncur * sizeof(*pr->cur));
	pr->nprev = pr->ncur;
	if (pr->ncur)
		qsort(pr->cur, pr->ncur, sizeof(pr->cur[0]), rate_cmp);
	return 0;
}
