// SPDX-License-Identifier: GPL-2.0
/* walkvec.c - the heap walk's record vectors (walkvec.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "walkvec.h"

void walkvec_init(struct walkvec *v, size_t esz)
{
	memset(v, 0, sizeof(*v));
	v->esz = esz;
}

int walkvec_grow(struct walkvec *v)
{
	size_t nc = v->cap ? v->cap * 2 : 4096;
	char *np = realloc(v->p, nc * v->esz);

	if (!np) {
		v->oom = true;
		return -ENOMEM;
	}
	v->p = np;
	v->cap = nc;
	return 0;
}

void walkvec_reserve(struct walkvec *v, size_t n)
{
	char *np;

	if (n <= v->cap)
		return;
	np = realloc(v->p, n * v->esz);
	if (!np)
		return;
	memset(np + v->n * v->esz, 0, (n - v->n) * v->esz);
	v->p = np;
	v->cap = n;
}

int walkvec_room(struct walkvec *v, size_t n)
{
	char *np;

	if (n <= v->cap)
		return 0;
	np = realloc(v->p, n * v->esz);
	if (!np)
		return -ENOMEM;
	v->p = np;
	v->cap = n;
	return 0;
}

void walkvec_free(struct walkvec *v)
{
	free(v->p);
	memset(v, 0, sizeof(*v));
}
