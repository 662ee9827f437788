// SPDX-License-Identifier: GPL-2.0
/* heapgraph.c - the referrers index and the shortest paths from the heap
 * roots (see heapgraph.h). Both are linear in objects + references. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heapgraph.h"
#include "lib/util.h"

int referrers_build(const struct dsl_heap *h, struct mt_referrers *r)
{
	uint32_t n = h->nobjects;
	size_t total = h->nrefs;

	memset(r, 0, sizeof(*r));
	r->first = util_big_calloc((size_t)n + 2, sizeof(*r->first));
	if (!r->first)
		return -ENOMEM;
	r->n = n;
	/* count into first[to + 1], then starts, then place: first[to]++ is the
	 * cursor, which leaves first[to] at the start of to + 1 - shifted back.
	 * An implied CLASS reference (dsl_heap.class_ref) counts as its
	 * object's first. */
	for (uint32_t i = 0; i < h->nrefs; i++)
		r->first[h->refs[i].to + 1]++;
	for (uint32_t o = 0; h->class_ref && o < n; o++) {
		uint32_t c = dsl_heap_cref(h, o);

		if (c != DSL_NOOBJ) {
			r->first[c + 1]++;
			total++;
		}
	}
	r->from = util_big_alloc(total + 1, sizeof(*r->from));
	if (!r->from) {
		referrers_free(r);
		return -ENOMEM;
	}
	for (uint32_t v = 0; v < n; v++)
		r->first[v + 1] += r->first[v];
	for (uint32_t o = 0; o < n; o++) {
		const struct dsl_hobject *obj = &h->objects[o];
		uint32_t c = dsl_heap_cref(h, o);

		if (c != DSL_NOOBJ)
			r->from[r->first[c]++] = o;
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

/* Is object @o one of the heap's live threads? (@thr: a bit per object) */
static bool is_thread(const uint64_t *thr, uint32_t o)
{
	return thr && (thr[o >> 6] >> (o & 63)) & 1;
}

int rootpaths_build(const struct dsl_heap *h, uint32_t **via, uint32_t **parent)
{
	uint32_t n = h->nobjects, head = 0, tail = 0, ndefer = 0;
	uint32_t *v, *queue, *defer = NULL, *par = NULL;
	uint64_t *thr = NULL;

	*via = NULL;
	if (parent)
		*parent = NULL;
	v = util_big_alloc((size_t)n + 1, sizeof(*v));
	queue = util_big_alloc((size_t)n + 1, sizeof(*queue));
	if (parent)
		par = util_big_alloc((size_t)n + 1, sizeof(*par));
	if (h->nthreads) {
		thr = calloc(((size_t)n + 64) / 64, sizeof(*thr));
		defer = malloc((size_t)h->nthreads * sizeof(*defer));
	}
	if (!v || !queue || (parent && !par) || (h->nthreads && (!thr || !defer))) {
		free(v);
		free(queue);
		free(par);
		free(thr);
		free(defer);
		return -ENOMEM;
	}
	for (uint32_t o = 0; o < n; o++)
		v[o] = DSL_VIA_NONE;
	for (uint32_t i = 0; i < h->nthreads; i++)
		if (h->threads[i].obj < n)
			thr[h->threads[i].obj >> 6] |= 1ull << (h->threads[i].obj & 63);
	/* phase 0: the roots that outlive a thread (class objects, JNI globals,
	 * the VM's own); phase 1: the threads, for what those do not reach -
	 * a thread met in phase 0 (a thread group's, a static list's) waits
	 * for it, so a path goes through a thread only for what no other
	 * reaches; phase 2: stack and JNI local references, for what none
	 * reach */
	for (int phase = 0; phase < 3; phase++) {
		for (uint32_t i = 0; phase == 1 && i < ndefer; i++)
			queue[tail++] = defer[i];
		for (uint32_t i = 0; i < h->nroots; i++) {
			uint32_t o = h->roots[i].obj;
			int k = h->roots[i].kind;
			int p = k == DSL_ROOT_STACK_LOCAL || k == DSL_ROOT_JNI_LOCAL ? 2 :
				k == DSL_ROOT_THREAD || is_thread(thr, o) ? 1 : 0;

			if (p == phase && v[o] == DSL_VIA_NONE) {
				v[o] = DSL_VIA_ROOT;
				queue[tail++] = o;
			}
		}
		while (head < tail) {
			uint32_t from = queue[head++];
			const struct dsl_hobject *obj = &h->objects[from];
			uint32_t c = dsl_heap_cref(h, from);

			/* k -1: its implied CLASS reference, first as a record's was */
			for (int64_t k = c != DSL_NOOBJ ? -1 : 0; k < (int64_t)obj->nrefs; k++) {
				uint32_t ri = k < 0 ? h->nrefs + from : obj->ref_first + (uint32_t)k;
				uint32_t to = k < 0 ? c : h->refs[ri].to;

				if (v[to] != DSL_VIA_NONE)
					continue;
				v[to] = ri;
				if (par)
					par[to] = from;
				if (phase == 0 && is_thread(thr, to) && ndefer < h->nthreads)
					defer[ndefer++] = to;
				else
					queue[tail++] = to;
			}
		}
	}
	free(thr);
	free(defer);
	free(queue);
	*via = v;
	if (parent)
		*parent = par;
	return 0;
}
