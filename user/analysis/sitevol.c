// SPDX-License-Identifier: GPL-2.0
/* sitevol.c - allocation volume per Java method (sitevol.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sitevol.h"

void sitevol_free(struct mt_site_volumes *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i].method);
	free(v->v);
	memset(v, 0, sizeof(*v));
}

const struct mt_site_volume *sitevol_find(const struct mt_site_volumes *v, const char *method)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strcmp(v->v[i].method, method))
			return &v->v[i];
	return NULL;
}

int sitevol_add(struct mt_site_volumes *v, const char *method, uint64_t bytes,
		  uint64_t refills)
{
	struct mt_site_volume *e = (struct mt_site_volume *)sitevol_find(v, method), *t;

	if (e) {
		e->bytes += bytes;
		e->refills += refills;
		return 0;
	}
	/* a few hundred methods at most: linear lookup, doubling array */
	if (v->n == v->cap) {
		size_t ncap = v->cap ? 2 * v->cap : 16;

		t = realloc(v->v, ncap * sizeof(*t));
		if (!t)
			return -ENOMEM;
		v->v = t;
		v->cap = ncap;
	}
	e = &v->v[v->n];
	e->method = strdup(method);
	if (!e->method)
		return -ENOMEM;
	e->bytes = bytes;
	e->refills = refills;
	v->n++;
	return 0;
}

static int cmp_bytes(const void *pa, const void *pb)
{
	const struct mt_site_volume *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return strcmp(a->method, b->method);
}

void sitevol_sort(struct mt_site_volumes *v)
{
	if (v->n)
		qsort(v->v, v->n, sizeof(*v->v), cmp_bytes);
}
