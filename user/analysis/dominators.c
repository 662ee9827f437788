// SPDX-License-Identifier: GPL-2.0
/*
 * dominators.c - the dominator tree and retained sizes (see dominators.h).
 *
 * Everything below works on DFS numbers: 0 is the virtual root, 1 .. N-1 the
 * objects in the preorder of a depth-first search from the roots (in heap
 * order). Arrays indexed by DFS number: vertex (the object), anc (the DFS
 * parent, then the path-compressed forest link), semi, label, idom.
 *
 *  1. DFS: number the objects, record each one's DFS parent (iterative, an
 *     explicit stack of (object, next reference)).
 *  2. Semidominators, from N-1 down to 1: semi(w) is the smallest of its
 *     DFS parent and, over w's referrers v (the virtual root for a heap
 *     root: 0), semi(label) of eval(v) - the smallest semi on v's path up
 *     the forest of the already processed (higher-numbered) vertices, found
 *     with path compression. The forest is implicit: a vertex numbered above
 *     w counts as linked to its parent.
 *  3. idom(w), from 2 up: start at the DFS parent and climb idom links
 *     while above semi(w) (the nearest common ancestor of the two, since
 *     the parent's idom chain is final by then).
 *  4. Retained sizes: each vertex's shallow size, added to its idom's from
 *     N-1 down to 1 (a dominator always has a smaller DFS number).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/dominators.h"
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

struct dfs_frame {
	uint32_t obj;
	uint32_t next;  /* references of obj still to follow: next .. nrefs */
};

void dominators_free(struct mt_domtree *d)
{
	free(d->idom);
	free(d->retained);
	memset(d, 0, sizeof(*d));
}

/* eval(v): the vertex of smallest semi on v's path to the root of its tree in
 * the forest of vertices >= last, compressing the path (stack: scratch). */
static uint32_t eval(uint32_t v, uint32_t last, uint32_t *anc, uint32_t *label,
		     const uint32_t *semi, uint32_t *stack)
{
	uint32_t sp = 0, p, plabel;

	if (anc[v] < last)
		return label[v];
	do { /* every vertex whose link leads to a linked vertex */
		stack[sp++] = v;
		v = anc[v];
	} while (anc[v] >= last);
	/* v: the topmost linked vertex; its link is the tree's root */
	p = v;
	plabel = label[p];
	while (sp) {
		uint32_t x = stack[--sp];

		anc[x] = anc[p];
		if (semi[plabel] < semi[label[x]])
			label[x] = plabel;
		else
			plabel = label[x];
		p = x;
	}
	return label[p];
}

static bool bit(const uint64_t *b, uint32_t o)
{
	return (b[o >> 6] >> (o & 63)) & 1;
}

/* Does reference @r hold its object in the tree's graph? */
static bool held_ref(const struct mt_holds *g, const struct dsl_href *r)
{
	return r->kind != DSL_REF_CLASS || bit(g->by_class, r->to);
}

/* What the roots reach, a bit per object into @seen (zeroed by the caller),
 * over every reference (@all) or over the graph's edges so far (references
 * but CLASS ones, and @g's loader edges). @queue: n entries. */
static void reach(const struct dsl_heap *h, const struct mt_holds *g, bool all,
		  uint64_t *seen, uint32_t *queue)
{
	uint32_t head = 0, tail = 0;

	for (uint32_t i = 0; i < h->nroots; i++) {
		uint32_t o = h->roots[i].obj;

		if (!bit(seen, o)) {
			seen[o >> 6] |= 1ull << (o & 63);
			queue[tail++] = o;
		}
	}
	while (head < tail) {
		uint32_t o = queue[head++];
		const struct dsl_hobject *x = &h->objects[o];

		for (uint32_t k = 0; k < x->nrefs; k++) {
			const struct dsl_href *r = &h->refs[x->ref_first + k];

			if ((all || r->kind != DSL_REF_CLASS) && !bit(seen, r->to)) {
				seen[r->to >> 6] |= 1ull << (r->to & 63);
				queue[tail++] = r->to;
			}
		}
		if (all)
			continue;
		for (uint32_t k = g->lfirst[o]; k < g->lfirst[o + 1]; k++) {
			uint32_t c = g->lkid[k];

			if (!bit(seen, c)) {
				seen[c >> 6] |= 1ull << (c & 63);
				queue[tail++] = c;
			}
		}
	}
}

int dominators_holds(const struct dsl_heap *h, struct mt_holds *g)
{
	uint32_t n = h->nobjects, *cnt, *queue = NULL;
	size_t m = 0, nl = 0, words = ((size_t)n + 64) / 64;
	uint64_t *any = NULL;

	memset(g, 0, sizeof(*g));
	g->lfirst = calloc((size_t)n + 2, sizeof(*g->lfirst));
	g->held.first = calloc((size_t)n + 2, sizeof(*g->held.first));
	g->by_class = calloc(words, sizeof(*g->by_class));
	any = calloc(words, sizeof(*any));
	queue = big_malloc(((size_t)n + 1) * sizeof(*queue));
	if (!g->lfirst || !g->held.first || !g->by_class || !any || !queue)
		goto nomem;
	g->held.n = n;
	/* what any chain of references reaches: a loader's edges lead only there */
	reach(h, g, true, any, queue);
	/* a loader's classes: count, start, place */
	for (uint32_t c = 0; c < h->nclasses; c++) {
		const struct dsl_hclass *k = &h->classes[c];
		uint32_t lo;

		if (k->obj == DSL_NOOBJ || k->loader == DSL_NOOBJ ||
		    (lo = h->loaders[k->loader].obj) == DSL_NOOBJ || !bit(any, k->obj))
			continue;
		g->lfirst[lo + 1]++;
		nl++;
	}
	for (uint32_t o = 0; o < n; o++)
		g->lfirst[o + 1] += g->lfirst[o];
	g->lkid = malloc((nl + 1) * sizeof(*g->lkid));
	cnt = malloc(((size_t)n + 1) * sizeof(*cnt));
	if (!g->lkid || !cnt) {
		free(cnt);
		goto nomem;
	}
	memcpy(cnt, g->lfirst, ((size_t)n + 1) * sizeof(*cnt));
	for (uint32_t c = 0; c < h->nclasses; c++) {
		const struct dsl_hclass *k = &h->classes[c];
		uint32_t lo;

		if (k->obj == DSL_NOOBJ || k->loader == DSL_NOOBJ ||
		    (lo = h->loaders[k->loader].obj) == DSL_NOOBJ || !bit(any, k->obj))
			continue;
		g->lkid[cnt[lo]++] = k->obj;
	}
	free(cnt);
	/* a class nothing else holds is held by its instances: what those edges
	 * reach is then what every reference reaches */
	memset(any, 0, words * sizeof(*any));
	reach(h, g, false, any, queue);
	for (size_t w = 0; w < words; w++)
		g->by_class[w] = ~any[w];
	free(any);
	free(queue);
	any = NULL;
	queue = NULL;
	/* the referrers over the references that hold and the loaders' edges */
	for (uint32_t o = 0; o < n; o++) {
		const struct dsl_hobject *x = &h->objects[o];

		for (uint32_t k = 0; k < x->nrefs; k++)
			if (held_ref(g, &h->refs[x->ref_first + k])) {
				g->held.first[h->refs[x->ref_first + k].to + 1]++;
				m++;
			}
		for (uint32_t k = g->lfirst[o]; k < g->lfirst[o + 1]; k++) {
			g->held.first[g->lkid[k] + 1]++;
			m++;
		}
	}
	g->held.from = big_malloc((m + 1) * sizeof(*g->held.from));
	if (!g->held.from)
		goto nomem;
	for (uint32_t v = 0; v < n; v++)
		g->held.first[v + 1] += g->held.first[v];
	for (uint32_t o = 0; o < n; o++) {
		const struct dsl_hobject *x = &h->objects[o];

		for (uint32_t k = 0; k < x->nrefs; k++)
			if (held_ref(g, &h->refs[x->ref_first + k]))
				g->held.from[g->held.first[h->refs[x->ref_first + k].to]++] = o;
		for (uint32_t k = g->lfirst[o]; k < g->lfirst[o + 1]; k++)
			g->held.from[g->held.first[g->lkid[k]]++] = o;
	}
	for (uint32_t v = n; v > 0; v--)
		g->held.first[v] = g->held.first[v - 1];
	g->held.first[0] = 0;
	return 0;
nomem:
	free(any);
	if (queue)
		free(queue);
	dominators_holds_free(g);
	return -ENOMEM;
}

void dominators_holds_free(struct mt_holds *g)
{
	free(g->lfirst);
	free(g->lkid);
	free(g->by_class);
	referrers_free(&g->held);
	memset(g, 0, sizeof(*g));
}

/* The next object @f's holding edges lead to (its references but to its
 * class, then, for a loader, its classes), or DSL_NOOBJ when none is left. */
static uint32_t next_held(const struct dsl_heap *h, const struct mt_holds *g,
			  struct dfs_frame *f)
{
	const struct dsl_hobject *obj = &h->objects[f->obj];
	uint32_t nl = g->lfirst[f->obj + 1] - g->lfirst[f->obj];

	while (f->next < obj->nrefs) {
		const struct dsl_href *r = &h->refs[obj->ref_first + f->next++];

		if (held_ref(g, r))
			return r->to;
	}
	if (f->next < obj->nrefs + nl)
		return g->lkid[g->lfirst[f->obj] + (f->next++ - obj->nrefs)];
	return DSL_NOOBJ;
}

int dominators_compute(const struct dsl_heap *h, struct mt_domtree *d)
{
	uint32_t n = h->nobjects, N = 1;
	uint32_t *num = NULL, *vertex = NULL, *anc = NULL, *semi = NULL, *label = NULL;
	uint32_t *idom = NULL, *stack = NULL;
	uint8_t *isroot = NULL;
	struct dfs_frame *dfs = NULL;
	struct mt_holds g;
	const struct mt_referrers *r = &g.held;
	int err = -ENOMEM;

	memset(d, 0, sizeof(*d));
	if (dominators_holds(h, &g))
		return -ENOMEM;
	d->n = n;
	d->idom = big_malloc(((size_t)n + 1) * sizeof(*d->idom));
	d->retained = big_malloc(((size_t)n + 1) * sizeof(*d->retained));
	num = calloc((size_t)n + 1, sizeof(*num));
	vertex = big_malloc(((size_t)n + 2) * sizeof(*vertex));
	anc = big_malloc(((size_t)n + 2) * sizeof(*anc));
	isroot = calloc((size_t)n / 8 + 1, 1);
	dfs = big_malloc(((size_t)n + 1) * sizeof(*dfs));
	if (!d->idom || !d->retained || !num || !vertex || !anc || !isroot || !dfs)
		goto out;
	/* 1. DFS from every root, in heap order; num 0: not reached */
	vertex[0] = DSL_NOOBJ;
	anc[0] = 0;
	for (uint32_t i = 0; i < h->nroots; i++) {
		uint32_t o = h->roots[i].obj, sp = 0;

		isroot[o >> 3] |= (uint8_t)(1u << (o & 7));
		if (num[o])
			continue;
		num[o] = N;
		vertex[N] = o;
		anc[N++] = 0;
		dfs[sp++] = (struct dfs_frame){ o, 0 };
		while (sp) {
			struct dfs_frame *f = &dfs[sp - 1];
			uint32_t w = next_held(h, &g, f);

			if (w == DSL_NOOBJ) {
				sp--;
				continue;
			}
			if (num[w])
				continue;
			num[w] = N;
			vertex[N] = w;
			anc[N++] = num[f->obj];
			dfs[sp++] = (struct dfs_frame){ w, 0 };
		}
	}
	free(dfs);
	dfs = NULL;
	{
		uint64_t kept = ((uint64_t)n + 1) * 12, walk = ((uint64_t)n + 1) * 4 + 2 *
				((uint64_t)n + 2) * 4 + (uint64_t)n / 8 + 1;
		uint64_t dfs_b = ((uint64_t)n + 1) * sizeof(*dfs), semi_b = (uint64_t)N * 16;

		d->peak_bytes = kept + walk + (dfs_b > semi_b ? dfs_b : semi_b) +
				((uint64_t)n + 2) * 8 + (uint64_t)r->first[n] * 4; /* the graph */
	}
	semi = malloc((size_t)N * sizeof(*semi));
	label = malloc((size_t)N * sizeof(*label));
	idom = malloc((size_t)N * sizeof(*idom));
	stack = malloc((size_t)N * sizeof(*stack));
	if (!semi || !label || !idom || !stack)
		goto out;
	for (uint32_t i = 0; i < N; i++) {
		semi[i] = label[i] = i;
		idom[i] = anc[i];
	}
	/* 2. semidominators */
	for (uint32_t i = N - 1; i >= 1; i--) {
		uint32_t w = vertex[i], s = anc[i];

		if (isroot[w >> 3] & (1u << (w & 7)))
			s = 0; /* the virtual root refers to every heap root */
		for (uint32_t k = r->first[w]; k < r->first[w + 1] && s; k++) {
			uint32_t v = num[r->from[k]], u;

			if (!v)
				continue; /* a referrer no root reaches */
			u = eval(v, i + 1, anc, label, semi, stack);
			if (semi[u] < s)
				s = semi[u];
		}
		semi[i] = s;
	}
	/* 3. immediate dominators: the nearest common ancestor of parent and semi */
	for (uint32_t i = 2; i < N; i++) {
		uint32_t c = idom[i];

		while (c > semi[i])
			c = idom[c];
		idom[i] = c;
	}
	/* 4. the tree by object, retained sizes bottom-up */
	for (uint32_t o = 0; o < n; o++) {
		if (num[o]) {
			d->retained[o] = h->objects[o].size;
			d->reached_bytes += h->objects[o].size;
		} else {
			d->idom[o] = MT_DOM_UNREACHED;
			d->retained[o] = DSL_NORETAINED;
			d->unreached_bytes += h->objects[o].size;
		}
	}
	for (uint32_t i = N - 1; i >= 1; i--) {
		uint32_t o = vertex[i];

		if (idom[i]) {
			d->idom[o] = vertex[idom[i]];
			d->retained[vertex[idom[i]]] += d->retained[o];
		} else {
			d->idom[o] = MT_DOM_ROOT;
		}
	}
	d->reached = N - 1;
	err = 0;
out:
	dominators_holds_free(&g);
	free(num);
	free(vertex);
	free(anc);
	free(isroot);
	free(dfs);
	free(semi);
	free(label);
	free(idom);
	free(stack);
	if (err)
		dominators_free(d);
	return err;
}

int dominators_children(const struct mt_domtree *d, struct mt_domkids *k)
{
	uint32_t n = d->n;

	memset(k, 0, sizeof(*k));
	k->first = calloc((size_t)n + 3, sizeof(*k->first));
	k->kid = big_malloc(((size_t)d->reached + 1) * sizeof(*k->kid));
	if (!k->first || !k->kid) {
		dominators_children_free(k);
		return -ENOMEM;
	}
	k->n = n;
	/* the virtual root is parent n */
	for (uint32_t o = 0; o < n; o++) {
		uint32_t p = d->idom[o];

		if (p == MT_DOM_UNREACHED)
			continue;
		k->first[(p == MT_DOM_ROOT ? n : p) + 1]++;
	}
	for (uint32_t v = 0; v <= n; v++)
		k->first[v + 1] += k->first[v];
	for (uint32_t o = 0; o < n; o++) {
		uint32_t p = d->idom[o];

		if (p == MT_DOM_UNREACHED)
			continue;
		k->kid[k->first[p == MT_DOM_ROOT ? n : p]++] = o;
	}
	for (uint32_t v = n + 1; v > 0; v--)
		k->first[v] = k->first[v - 1];
	k->first[0] = 0;
	return 0;
}

void dominators_children_free(struct mt_domkids *k)
{
	free(k->first);
	free(k->kid);
	memset(k, 0, sizeof(*k));
}

int dominators_by_class(const struct dsl_heap *h, const struct mt_domtree *d,
			const struct mt_domkids *k, uint64_t *bytes, uint64_t *count)
{
	uint32_t n = d->n, sp = 0, *open = calloc((size_t)h->nclasses + 1, sizeof(*open));
	struct dfs_frame *stack = big_malloc(((size_t)d->reached + 2) * sizeof(*stack));

	if (!open || !stack) {
		free(open);
		free(stack);
		return -ENOMEM;
	}
	memset(bytes, 0, (size_t)h->nclasses * sizeof(*bytes));
	memset(count, 0, (size_t)h->nclasses * sizeof(*count));
	/* depth-first down the tree; open[c]: instances of c on the way down */
	stack[sp++] = (struct dfs_frame){ n, k->first[n] };
	while (sp) {
		struct dfs_frame *f = &stack[sp - 1];
		uint32_t o;

		if (f->next >= k->first[f->obj + 1]) {
			if (f->obj != n)
				open[h->objects[f->obj].cls]--;
			sp--;
			continue;
		}
		o = k->kid[f->next++];
		if (!open[h->objects[o].cls]++) {
			bytes[h->objects[o].cls] += d->retained[o];
			count[h->objects[o].cls]++;
		}
		stack[sp++] = (struct dfs_frame){ o, k->first[o] };
	}
	free(open);
	free(stack);
	return 0;
}
