// SPDX-License-Identifier: GPL-2.0
/* heapgraph.c - the referrers index and the shortest paths from the heap
 * roots (see heapgraph.h). Both are linear in objects + references. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heapgraph.h"
#include "lib/util.h"


/* malloc() for a per-object array: huge pages behind it when it is large
 * (util_hugepages: far fewer page faults on a heap of millions). */
static void *big_malloc(size_t n)
{
	void *p = malloc(n);

	if (p && n >= (8u << 20))
		util_hugepages(p, n);
	return p;
}

int referrers_build(const struct dsl_heap *h, struct mt_referrers *r)
{
	uint32_t n = h->nobjects;

	memset(r, 0, sizeof(*r));
	r->first = calloc((size_t)n + 2, sizeof(*r->first));
	r->from = big_malloc(((size_t)h->nrefs + 1) * sizeof(*r->from));
	if (!r->first || !r->from) {
		referrers_free(r);
		return -ENOMEM;
	}
	r->n = n;
	/* count into first[to + 1], then starts, then place: first[to]++ is the
	 * cursor, which leaves first[to] at the start of to + 1 - shifted back */
	for (uint32_t i = 0; i < h->nrefs; i++)
		r->first[h->refs[i].to + 1]++;
	for (uint32_t v = 0; v < n; v++)
		r->first[v + 1] += r->first[v];
	for (uint32_t o = 0; o < n; o++) {
		const struct dsl_hobject *obj = &h->objects[o];

		for (uint32_t k = 0; k < obj->nrefs; k++)
			r->from[r->first[h->refs[obj->ref_first + k].to]++] = o;
	}
	for (uint32_t v = n; v > 0; v--)
		r->first[v] = r->first[v - 1];
	r->first[0] = 0;
	return 0;
}

void referrers_free(struct mt_referrers *r)
{
	free(r->first);
	free(r->from);
	memset(r, 0, sizeof(*r));
}

int rootpaths_build(const struct dsl_heap *h, uint32_t **via)
{
	uint32_t n = h->nobjects, head = 0, tail = 0;
	uint32_t *v, *queue;

	*via = NULL;
	v = big_malloc(((size_t)n + 1) * sizeof(*v));
	queue = big_malloc(((size_t)n + 1) * sizeof(*queue));
	if (!v || !queue) {
		free(v);
		free(queue);
		return -ENOMEM;
	}
	for (uint32_t o = 0; o < n; o++)
		v[o] = DSL_VIA_NONE;
	/* phase 0: the roots that outlive a method call; phase 1: stack and JNI
	 * local references, for what the others do not reach */
	for (int phase = 0; phase < 2; phase++) {
		for (uint32_t i = 0; i < h->nroots; i++) {
			uint32_t o = h->roots[i].obj;
			int k = h->roots[i].kind;
			bool local = k == DSL_ROOT_STACK_LOCAL || k == DSL_ROOT_JNI_LOCAL;

			if (local == (phase == 1) && v[o] == DSL_VIA_NONE) {
				v[o] = DSL_VIA_ROOT;
				queue[tail++] = o;
			}
		}
		while (head < tail) {
			const struct dsl_hobject *obj = &h->objects[queue[head++]];

			for (uint32_t k = 0; k < obj->nrefs; k++) {
				uint32_t ri = obj->ref_first + k, to = h->refs[ri].to;

				if (v[to] == DSL_VIA_NONE) {
					v[to] = ri;
					queue[tail++] = to;
				}
			}
		}
	}
	free(queue);
	*via = v;
	return 0;
}
