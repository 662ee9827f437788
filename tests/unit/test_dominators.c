// SPDX-License-Identifier: GPL-2.0
/* test_dominators - the dominator tree and retained sizes (analysis/
 * dominators.c) against a brute-force definition (d dominates o when o is
 * unreachable from the roots without d) on heaps known by construction and
 * on random graphs (cycles, self references, several roots, unreachable
 * parts); the referrers index and the shortest root paths (analysis/
 * heapgraph.c) against a plain breadth-first search; the by-class sums,
 * in one walker and two, against their definition;
 * heaps with classes and loaders against the iterative data-flow definition
 * of dominators on the graph built step by step as dominators.h says; a
 * chain of a million. */
#include <errno.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/dominators.h"
#include "analysis/heapgraph.h"
#include "dsl/dsl.h"

/* A heap of n objects with edges given as (from, to) pairs. */
struct g {
	struct dsl_heap h;
	struct dsl_hobject *obj;
	struct dsl_href *refs;
	struct dsl_hroot *roots;
	struct dsl_hclass cls[3];
};

static void g_build(struct g *g, uint32_t n, const uint32_t (*e)[2], uint32_t ne,
		    const uint32_t *roots, uint32_t nr, const uint64_t *size)
{
	uint32_t k = 0;

	memset(g, 0, sizeof(*g));
	g->obj = calloc(n + 1, sizeof(*g->obj));
	g->refs = calloc(ne + 1, sizeof(*g->refs));
	g->roots = calloc(nr + 1, sizeof(*g->roots));
	assert_non_null(g->obj);
	for (int c = 0; c < 3; c++)
		g->cls[c] = (struct dsl_hclass){ .name = c == 0 ? "A" : c == 1 ? "B" : "C",
						 .obj = DSL_NOOBJ, .super = DSL_NOOBJ,
						 .loader = DSL_NOOBJ };
	for (uint32_t o = 0; o < n; o++) {
		g->obj[o].id = 100 + o;
		g->obj[o].cls = o % 3;
		g->obj[o].size = size ? size[o] : 8 * (o + 1);
		g->obj[o].length = -1;
		g->obj[o].ref_first = k;
		for (uint32_t i = 0; i < ne; i++)
			if (e[i][0] == o)
				g->refs[k++] = (struct dsl_href){ .to = e[i][1], .index = -1,
								  .kind = DSL_REF_FIELD };
		g->obj[o].nrefs = k - g->obj[o].ref_first;
	}
	for (uint32_t i = 0; i < nr; i++)
		g->roots[i] = (struct dsl_hroot){ .obj = roots[i], .kind = DSL_ROOT_JNI_GLOBAL };
	g->h = (struct dsl_heap){ .objects = g->obj, .nobjects = n, .classes = g->cls,
				  .nclasses = 3, .refs = g->refs, .nrefs = k, .roots = g->roots,
				  .nroots = nr };
}

static void g_free(struct g *g)
{
	free(g->obj);
	free(g->refs);
	free(g->roots);
}

/* Objects reached from the roots, skipping object @skip (DSL_NOOBJ: none). */
static void reach(const struct dsl_heap *h, uint32_t skip, uint8_t *seen)
{
	uint32_t *q = malloc((h->nobjects + 1) * sizeof(*q)), head = 0, tail = 0;

	memset(seen, 0, h->nobjects);
	for (uint32_t i = 0; i < h->nroots; i++) {
		uint32_t o = h->roots[i].obj;

		if (o != skip && !seen[o]) {
			seen[o] = 1;
			q[tail++] = o;
		}
	}
	while (head < tail) {
		const struct dsl_hobject *x = &h->objects[q[head++]];

		for (uint32_t k = 0; k < x->nrefs; k++) {
			uint32_t t = h->refs[x->ref_first + k].to;

			if (t != skip && !seen[t]) {
				seen[t] = 1;
				q[tail++] = t;
			}
		}
	}
	free(q);
}

/* The brute-force definition, checked against dominators_compute(). */
static void check_against_definition(const struct dsl_heap *h)
{
	uint32_t n = h->nobjects;
	uint8_t *all = malloc(n + 1), *without = malloc(n + 1);
	uint8_t *dom = calloc((size_t)n * n + 1, 1); /* dom[d * n + o]: d dominates o */
	uint32_t *ndom = calloc(n + 1, sizeof(*ndom));
	struct mt_referrers r;
	struct mt_domtree d;

	assert_int_equal(referrers_build(h, &r), 0);
	assert_int_equal(dominators_compute(h, &d), 0);
	reach(h, DSL_NOOBJ, all);
	for (uint32_t x = 0; x < n; x++) {
		if (!all[x])
			continue;
		reach(h, x, without);
		for (uint32_t o = 0; o < n; o++)
			if (all[o] && (o == x || !without[o])) {
				dom[(size_t)x * n + o] = 1;
				ndom[o]++;
			}
	}
	uint32_t reached = 0;

	for (uint32_t o = 0; o < n; o++) {
		uint64_t ret = 0;
		uint32_t idom = MT_DOM_ROOT;

		if (!all[o]) {
			assert_int_equal(d.idom[o], MT_DOM_UNREACHED);
			assert_true(d.retained[o] == DSL_NORETAINED);
			continue;
		}
		reached++;
		/* the immediate dominator: the strict dominator with the most dominators */
		for (uint32_t x = 0; x < n; x++)
			if (x != o && dom[(size_t)x * n + o] &&
			    (idom == MT_DOM_ROOT || ndom[x] > ndom[idom]))
				idom = x;
		for (uint32_t y = 0; y < n; y++)
			if (dom[(size_t)o * n + y])
				ret += h->objects[y].size;
		if (d.idom[o] != idom)
			fail_msg("object %u: idom %u, expected %u", o, d.idom[o], idom);
		assert_int_equal(d.retained[o], ret);
	}
	assert_int_equal(d.reached, reached);
	dominators_free(&d);
	referrers_free(&r);
	free(all);
	free(without);
	free(dom);
	free(ndom);
}

/* Known by construction: two owners with exclusive subtrees and a shared object. */
static void test_known(void **state)
{
	/* 0 holder -> 1 owner A, 2 owner B; A -> 3, 4 (exclusive); B -> 5 (exclusive);
	 * A -> 6 and B -> 6 (shared); 6 -> 7; 7 -> 6 (a cycle); 8 unreachable -> 1 */
	static const uint32_t e[][2] = { { 0, 1 }, { 0, 2 }, { 1, 3 }, { 1, 4 }, { 2, 5 },
					 { 1, 6 }, { 2, 6 }, { 6, 7 }, { 7, 6 }, { 8, 1 },
					 { 3, 3 } };
	static const uint64_t size[] = { 16, 24, 32, 1000, 2000, 4000, 48, 56, 64 };
	uint32_t root = 0;
	struct g g;
	struct mt_referrers r;
	struct mt_domtree d;

	g_build(&g, 9, e, 11, &root, 1, size);
	assert_int_equal(referrers_build(&g.h, &r), 0);
	assert_int_equal(dominators_compute(&g.h, &d), 0);
	assert_int_equal(d.retained[1], 24 + 1000 + 2000);   /* A: not the shared 6, 7 */
	assert_int_equal(d.retained[2], 32 + 4000);          /* B */
	assert_int_equal(d.retained[6], 48 + 56);
	assert_int_equal(d.idom[6], 0);                      /* neither owner retains it */
	assert_int_equal(d.retained[0], 16 + 24 + 32 + 1000 + 2000 + 4000 + 48 + 56);
	assert_int_equal(d.idom[0], MT_DOM_ROOT);
	assert_int_equal(d.idom[8], MT_DOM_UNREACHED);
	assert_int_equal(d.unreached_bytes, 64);
	assert_int_equal(d.reached, 8);
	/* referrers: 6 is referred to by 1, 2 and 7, in object order */
	assert_int_equal(r.first[7] - r.first[6], 3);
	assert_int_equal(r.from[r.first[6]], 1);
	assert_int_equal(r.from[r.first[6] + 1], 2);
	assert_int_equal(r.from[r.first[6] + 2], 7);
	/* by class (o % 3): A = {0, 3, 6}, B = {1, 4, 7}, C = {2, 5, 8} */
	{
		struct mt_domkids k;
		uint64_t bytes[3], count[3];

		assert_int_equal(dominators_children(&d, &k), 0);
		assert_int_equal(dominators_by_class(&g.h, &d, &k, bytes, count, NULL), 0);
		assert_int_equal(bytes[0], d.retained[0]); /* 0 holds everything of class A */
		assert_int_equal(count[0], 1);
		/* 1 dominates 4; 7 is below 0's 6, not below a B: counted apart */
		assert_int_equal(bytes[1], d.retained[1] + d.retained[7]);
		assert_int_equal(count[1], 2);
		dominators_children_free(&k);
	}
	dominators_free(&d);
	referrers_free(&r);
	check_against_definition(&g.h);
	g_free(&g);
}

static uint64_t rng = 88172645463325252ull;

static uint32_t rnd(uint32_t n)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng % n);
}

/* Random graphs of many shapes against the definition, the search reading
 * the objects or only their runs (dsl_heap.ref_runs). */
static void test_random(void **state)
{
	for (int t = 0; t < 300; t++) {
		uint32_t n = 1 + rnd(60), ne = rnd(4 * n + 1), nr = 1 + rnd(4);
		uint32_t (*e)[2] = calloc(ne + 1, sizeof(*e)), roots[4];
		struct g g;

		for (uint32_t i = 0; i < ne; i++) {
			e[i][0] = rnd(n);
			/* mostly forward edges (tree-like heaps), some back and self */
			e[i][1] = rnd(4) ? (e[i][0] + 1 + rnd(5)) % n : rnd(n);
		}
		for (uint32_t i = 0; i < nr; i++)
			roots[i] = rnd(n);
		g_build(&g, n, (const uint32_t (*)[2])e, ne, roots, nr, NULL);
		check_against_definition(&g.h);
		/* the same search over the runs alone (dsl_heap.ref_runs): each
		 * object's run follows the one before here */
		uint32_t *runs = malloc((n + 1) * sizeof(*runs));

		assert_non_null(runs);
		for (uint32_t o = 0; o < n; o++)
			runs[o] = g.h.objects[o].ref_first;
		runs[n] = g.h.nrefs;
		g.h.ref_runs = runs;
		check_against_definition(&g.h);
		g.h.ref_runs = NULL;
		free(runs);
		g_free(&g);
		free(e);
	}
}

/* Retained by class by its definition: each reached instance with no
 * instance of its class on its idom chain, its retained bytes. */
static void by_class_brute(const struct dsl_heap *h, const struct mt_domtree *d, uint64_t *bytes,
			   uint64_t *count)
{
	memset(bytes, 0, h->nclasses * sizeof(*bytes));
	memset(count, 0, h->nclasses * sizeof(*count));
	for (uint32_t o = 0; o < h->nobjects; o++) {
		uint32_t c = h->objects[o].cls, p = d->idom[o];
		bool above = false;

		if (p == MT_DOM_UNREACHED)
			continue;
		for (; p != MT_DOM_ROOT && !above; p = d->idom[p])
			above = h->objects[p].cls == c;
		if (!above) {
			bytes[c] += d->retained[o];
			count[c]++;
		}
	}
}

/* A random heap of @n objects built fast (edges by referrer): mostly a
 * forest below a few roots, object @wide (if < n) with @fan children, some
 * edges back and across; classes random among 3. */
static void g_random_wide(struct g *g, uint32_t n, uint32_t wide, uint32_t fan)
{
	uint32_t cap = 8 * n + fan + 16, k = 0, nr = 1 + rnd(3);

	memset(g, 0, sizeof(*g));
	g->obj = calloc(n + 1, sizeof(*g->obj));
	g->refs = calloc(cap, sizeof(*g->refs));
	g->roots = calloc(nr + 1, sizeof(*g->roots));
	assert_non_null(g->obj);
	assert_non_null(g->refs);
	for (int c = 0; c < 3; c++)
		g->cls[c] = (struct dsl_hclass){ .name = c == 0 ? "A" : c == 1 ? "B" : "C",
						 .obj = DSL_NOOBJ, .super = DSL_NOOBJ,
						 .loader = DSL_NOOBJ };
	for (uint32_t o = 0; o < n; o++) {
		uint32_t m = o == wide ? fan : rnd(4);

		g->obj[o] = (struct dsl_hobject){ .id = 100 + o, .cls = rnd(3), .size = 8 + 8 * rnd(64),
						  .length = -1, .ref_first = k };
		for (uint32_t i = 0; i < m && k < cap; i++) {
			uint32_t to = o == wide ? o + 1 + i : rnd(8) ? o + 1 + rnd(6) : rnd(n);

			if (to < n)
				g->refs[k++] = (struct dsl_href){ .to = to, .index = -1,
								  .kind = DSL_REF_FIELD };
		}
		g->obj[o].nrefs = k - g->obj[o].ref_first;
	}
	for (uint32_t i = 0; i < nr; i++)
		g->roots[i] = (struct dsl_hroot){ .obj = i ? rnd(n) : 0, .kind = DSL_ROOT_JNI_GLOBAL };
	g->h = (struct dsl_heap){ .objects = g->obj, .nobjects = n, .classes = g->cls,
				  .nclasses = 3, .refs = g->refs, .nrefs = k, .roots = g->roots,
				  .nroots = nr };
}

/* dominators_by_class() in one walker and in two (the tree's top split into
 * tasks: ranges of a wide object's children, single children opened)
 * against the definition, on random heaps with and without a wide object. */
static void test_by_class_threads(void **state)
{
	uint32_t most = 0, split = 0;

	for (int t = 0; t < 120; t++) {
		uint32_t n = 2 + rnd(t < 60 ? 200 : 6000), ntasks = 0;
		uint32_t wide = t % 3 ? rnd(n) : n, fan = t % 3 ? 1 + rnd(3000) : 0;
		uint64_t want_b[3], want_c[3], b1[3], c1[3], b2[3], c2[3];
		struct mt_domtree d;
		struct mt_domkids k;
		struct g g;

		(void)state;
		g_random_wide(&g, n, wide, fan);
		assert_int_equal(dominators_compute(&g.h, &d), 0);
		assert_int_equal(dominators_children(&d, &k), 0);
		by_class_brute(&g.h, &d, want_b, want_c);
		assert_int_equal(dominators_by_class_threads(&g.h, &d, &k, b1, c1, 1, &ntasks), 0);
		assert_int_equal(ntasks, 1);
		assert_int_equal(dominators_by_class_threads(&g.h, &d, &k, b2, c2, 2, &ntasks), 0);
		most = ntasks > most ? ntasks : most;
		split += ntasks > 1;
		for (int c = 0; c < 3; c++) {
			if (b1[c] != want_b[c] || c1[c] != want_c[c] || b2[c] != want_b[c] ||
			    c2[c] != want_c[c])
				fail_msg("heap %d (%u objects, wide %u fan %u) class %d: one walker "
					 "%llu/%llu, two %llu/%llu, expected %llu/%llu", t, n, wide,
					 fan, c, (unsigned long long)b1[c], (unsigned long long)c1[c],
					 (unsigned long long)b2[c], (unsigned long long)c2[c],
					 (unsigned long long)want_b[c], (unsigned long long)want_c[c]);
		}
		dominators_children_free(&k);
		dominators_free(&d);
		g_free(&g);
	}
	/* the tree's top split on most heaps, a wide object's children in ranges */
	assert_true(split > 60);
	assert_true(most > 32);
}

/* A long chain: the DFS and eval stacks are explicit (no recursion). */
static void test_deep_chain(void **state)
{
	uint32_t n = 200000, root = 0;
	uint32_t (*e)[2] = calloc(n, sizeof(*e));
	struct g g;
	struct mt_referrers r;
	struct mt_domtree d;
	uint32_t *via;

	for (uint32_t i = 0; i + 1 < n; i++) {
		e[i][0] = i;
		e[i][1] = i + 1;
	}
	e[n - 1][0] = n - 1; /* and back to the start: a cycle */
	e[n - 1][1] = 0;
	memset(&g, 0, sizeof(g));
	g.obj = calloc(n, sizeof(*g.obj));
	g.refs = calloc(n, sizeof(*g.refs));
	g.roots = calloc(1, sizeof(*g.roots));
	g.cls[0] = (struct dsl_hclass){ .name = "A", .obj = DSL_NOOBJ, .super = DSL_NOOBJ,
					.loader = DSL_NOOBJ };
	for (uint32_t o = 0; o < n; o++) {
		g.obj[o] = (struct dsl_hobject){ .id = o + 1, .size = 8, .length = -1,
						 .ref_first = o, .nrefs = 1 };
		g.refs[o] = (struct dsl_href){ .to = e[o][1], .index = -1, .kind = DSL_REF_FIELD };
	}
	g.roots[0] = (struct dsl_hroot){ .obj = root, .kind = DSL_ROOT_THREAD };
	g.h = (struct dsl_heap){ .objects = g.obj, .nobjects = n, .classes = g.cls, .nclasses = 1,
				 .refs = g.refs, .nrefs = n, .roots = g.roots, .nroots = 1 };
	assert_int_equal(referrers_build(&g.h, &r), 0);
	assert_int_equal(dominators_compute(&g.h, &d), 0);
	for (uint32_t o = 1; o < n; o++)
		assert_int_equal(d.idom[o], o - 1);
	assert_int_equal(d.retained[0], 8ull * n);
	assert_int_equal(d.retained[n - 1], 8);
	assert_int_equal(rootpaths_build(&g.h, &via, NULL), 0);
	g.h.root_via = via;
	{
		struct dsl_pathstep st[4];

		assert_int_equal(dsl_root_path(&g.h, n - 1, st, 4), n);
		assert_int_equal(st[0].obj, 0);
		assert_int_equal(st[0].from, DSL_NOOBJ);
		assert_int_equal(st[1].obj, 1);
		assert_int_equal(st[1].from, 0);
	}
	free(via);
	dominators_free(&d);
	referrers_free(&r);
	g_free(&g);
	free(e);
}

/*
 * An independent reference for heaps with classes and loaders: the graph as
 * dominators.h defines it, built step by step (what every reference reaches,
 * the loader edges into that, what the graph without CLASS references
 * reaches, the CLASS references to the rest), then dominators by the
 * iterative data-flow definition - Dom(root) = {root}, Dom(o) = {o} plus
 * the intersection of Dom(p) over o's predecessors p - to a fixed point.
 */
struct mheap {
	struct dsl_heap h;
	struct dsl_hobject *obj;
	struct dsl_href *refs;
	struct dsl_hroot *roots;
	struct dsl_hclass *cls;
	struct dsl_hloader *ld;
};

/* @m's roots (@nr random JNI globals, then the bootstrap's classes' objects
 * as SYSTEM_CLASS roots, mostly) and its heap over its arrays (@k
 * references); m->roots has room for nr + nc. */
static void mheap_finish(struct mheap *m, uint32_t n, uint32_t nc, uint32_t nl, uint32_t nr,
			 uint32_t k)
{
	for (uint32_t i = 0; i < nr; i++)
		m->roots[i] = (struct dsl_hroot){ .obj = rnd(n), .kind = DSL_ROOT_JNI_GLOBAL };
	for (uint32_t c = 0; c < nc; c++)
		if (m->cls[c].obj != DSL_NOOBJ && m->cls[c].loader == DSL_NOOBJ && rnd(3))
			m->roots[nr++] = (struct dsl_hroot){ .obj = c,
							     .kind = DSL_ROOT_SYSTEM_CLASS };
	m->h = (struct dsl_heap){ .objects = m->obj, .nobjects = n, .classes = m->cls,
				  .nclasses = nc, .refs = m->refs, .nrefs = k, .roots = m->roots,
				  .nroots = nr, .loaders = m->ld, .nloaders = nl };
}

/* Reach over the edges (from, to) with use[] set, from the heap's roots. */
static void edge_reach(const struct dsl_heap *h, uint32_t ne, const uint32_t (*e)[2],
		       const uint8_t *use, uint8_t *seen)
{
	bool more = true;

	memset(seen, 0, h->nobjects);
	for (uint32_t i = 0; i < h->nroots; i++)
		seen[h->roots[i].obj] = 1;
	while (more) { /* a fixed point: the reference shares no code with a search */
		more = false;
		for (uint32_t k = 0; k < ne; k++)
			if (use[k] && seen[e[k][0]] && !seen[e[k][1]])
				seen[e[k][1]] = more = 1;
	}
}

/* How the heaps check_against_dataflow() saw were searched: one search,
 * a failed first one mended by splice() (objects added, or only dead ones
 * dropped), two or three searches. */
static unsigned searched_once, searched_spliced, searched_again, quick_held, quick_renumber;
static unsigned spliced_moved;

static void check_against_dataflow(const struct dsl_heap *h)
{
	uint32_t n = h->nobjects, ne = 0, words = (n + 1 + 63) / 64;
	uint32_t (*e)[2] = calloc(h->nrefs + h->nclasses + 1, sizeof(*e));
	uint8_t *use = calloc(h->nrefs + h->nclasses + 1, 1), *any = malloc(n + 1);
	uint8_t *rp = malloc(n + 1), *reached = malloc(n + 1);
	uint64_t *dom = calloc((size_t)(n + 1) * words, sizeof(*dom)); /* vertex n: the root */
	struct mt_domtree d;
	bool more = true;

	/* 1. every reference: what it reaches */
	for (uint32_t o = 0; o < n; o++)
		for (uint32_t k = 0; k < h->objects[o].nrefs; k++) {
			e[ne][0] = o;
			e[ne][1] = h->refs[h->objects[o].ref_first + k].to;
			use[ne++] = 1;
		}
	edge_reach(h, ne, (const uint32_t (*)[2])e, use, any);
	/* 2. loader edges to classes references reach; CLASS references out */
	for (uint32_t c = 0; c < h->nclasses; c++) {
		uint32_t lo = h->classes[c].loader == DSL_NOOBJ ? DSL_NOOBJ :
			      h->loaders[h->classes[c].loader].obj;

		if (h->classes[c].obj != DSL_NOOBJ && lo != DSL_NOOBJ && any[h->classes[c].obj]) {
			e[ne][0] = lo;
			e[ne][1] = h->classes[c].obj;
			use[ne++] = 1;
		}
	}
	for (uint32_t k = 0; k < h->nrefs; k++)
		use[k] = h->refs[k].kind != DSL_REF_CLASS;
	edge_reach(h, ne, (const uint32_t (*)[2])e, use, rp);
	/* 3. a CLASS reference holds a class nothing else does */
	for (uint32_t k = 0; k < h->nrefs; k++)
		use[k] = h->refs[k].kind != DSL_REF_CLASS || !rp[e[k][1]];
	edge_reach(h, ne, (const uint32_t (*)[2])e, use, reached);
	for (uint32_t o = 0; o < n; o++)
		assert_int_equal(reached[o], any[o]); /* the graph reaches what references do */
	/* 4. data flow: start from "everything" and shrink */
	for (uint32_t o = 0; o < n; o++)
		for (uint32_t w = 0; w < words; w++)
			dom[(size_t)o * words + w] = ~0ull;
	dom[(size_t)n * words + n / 64] = 1ull << (n % 64);
	while (more) {
		more = false;
		for (uint32_t o = 0; o < n; o++) {
			uint64_t nd[words];
			bool isroot = false;

			if (!reached[o])
				continue;
			for (uint32_t i = 0; i < h->nroots; i++)
				isroot |= h->roots[i].obj == o;
			for (uint32_t w = 0; w < words; w++)
				nd[w] = isroot ? dom[(size_t)n * words + w] : ~0ull;
			for (uint32_t k = 0; k < ne; k++)
				if (use[k] && e[k][1] == o && reached[e[k][0]])
					for (uint32_t w = 0; w < words; w++)
						nd[w] &= dom[(size_t)e[k][0] * words + w];
			nd[o / 64] |= 1ull << (o % 64);
			for (uint32_t w = 0; w < words; w++)
				if (nd[w] != dom[(size_t)o * words + w]) {
					dom[(size_t)o * words + w] = nd[w];
					more = true;
				}
		}
	}
	assert_int_equal(dominators_compute(h, &d), 0);
	if (d.searches > 1)
		searched_again++;
	else if (d.mend_added || d.mend_dropped)
		searched_spliced++;
	else
		searched_once++;
	spliced_moved += d.searches == 1 && d.mend_moved;
	quick_held += !!(d.mend_quick & MT_DOM_QUICK_HELD);
	quick_renumber += !!(d.mend_quick & MT_DOM_QUICK_RENUMBER);
	for (uint32_t o = 0; o < n; o++) {
		uint32_t idom = MT_DOM_ROOT, ndom = 0;
		uint64_t ret = 0;

		if (!reached[o]) {
			assert_int_equal(d.idom[o], MT_DOM_UNREACHED);
			assert_true(d.retained[o] == DSL_NORETAINED);
			continue;
		}
		for (uint32_t w = 0; w < words; w++)
			ndom += (uint32_t)__builtin_popcountll(dom[(size_t)o * words + w]);
		/* the strict dominator with one dominator less (the root counts) */
		for (uint32_t x = 0; x < n; x++) {
			uint32_t nx = 0;

			if (x == o || !((dom[(size_t)o * words + x / 64] >> (x % 64)) & 1))
				continue;
			for (uint32_t w = 0; w < words; w++)
				nx += (uint32_t)__builtin_popcountll(dom[(size_t)x * words + w]);
			if (nx == ndom - 1)
				idom = x;
		}
		for (uint32_t y = 0; y < n; y++)
			if (reached[y] && (dom[(size_t)y * words + o / 64] >> (o % 64)) & 1)
				ret += h->objects[y].size;
		if (d.idom[o] != idom)
			fail_msg("object %u: idom %u, expected %u", o, d.idom[o], idom);
		assert_int_equal(d.retained[o], ret);
	}
	dominators_free(&d);
	free(e);
	free(use);
	free(any);
	free(rp);
	free(reached);
	free(dom);
}

/*
 * Random heaps with classes and loaders against the data-flow definition:
 * class objects (some a loader's, some the bootstrap's with a SYSTEM_CLASS
 * root), instances with CLASS references to their class (some without, some
 * with a second), loaders with and without a field chain to their classes,
 * self references, the same reference twice, back edges, unreachable parts.
 * These reach every way the search can go: a class first reached over its
 * loader's edge but held by references too, one only a loader reaches, one
 * only its instances hold.
 */
static void test_random_loaders(void **state)
{
	(void)state;
	for (int t = 0; t < 400; t++) {
		uint32_t n = 2 + rnd(70), nc = 1 + rnd(6), nl = 1 + rnd(3), ne = 0, nr = 1 + rnd(4);
		uint32_t (*e)[3] = calloc(8 * n + 16, sizeof(*e)); /* from, to, kind */
		struct mheap m = { 0 };
		uint32_t k = 0;

		if (nc + nl > n)
			nc = nl = 1;
		m.obj = calloc(n, sizeof(*m.obj));
		m.refs = calloc(8 * n + 16, sizeof(*m.refs));
		m.roots = calloc(nr + nc, sizeof(*m.roots));
		m.cls = calloc(nc, sizeof(*m.cls));
		m.ld = calloc(nl, sizeof(*m.ld));
		/* objects 0 .. nc-1: class objects; nc .. nc+nl-1: loaders */
		for (uint32_t l = 0; l < nl; l++)
			m.ld[l] = (struct dsl_hloader){ .obj = rnd(4) ? nc + l : DSL_NOOBJ, .id = l + 1 };
		for (uint32_t c = 0; c < nc; c++)
			m.cls[c] = (struct dsl_hclass){ .name = "K", .obj = rnd(8) ? c : DSL_NOOBJ,
							.super = DSL_NOOBJ,
							.loader = rnd(4) ? rnd(nl) : DSL_NOOBJ };
		for (uint32_t o = 0; o < n; o++) {
			uint32_t c = rnd(nc), nf = rnd(4);

			/* a CLASS reference first, as JVMTI reports it (sometimes none) */
			if (m.cls[c].obj != DSL_NOOBJ && rnd(6)) {
				e[ne][0] = o, e[ne][1] = m.cls[c].obj, e[ne++][2] = DSL_REF_CLASS;
				if (!rnd(10)) /* a second, or one to another class */
					e[ne][0] = o, e[ne][1] = rnd(nc), e[ne++][2] = DSL_REF_CLASS;
			}
			m.obj[o] = (struct dsl_hobject){ .id = 1 + o, .cls = c, .length = -1,
							 .size = 8 + 8 * rnd(50) };
			for (uint32_t f = 0; f < nf; f++) {
				uint32_t to = rnd(5) ? (o + 1 + rnd(6)) % n : rnd(n);

				if (!rnd(12))
					to = o; /* self */
				e[ne][0] = o, e[ne][1] = to, e[ne++][2] =
					!rnd(8) ? DSL_REF_STATIC_FIELD : DSL_REF_FIELD;
				if (!rnd(10)) /* the same reference twice */
					e[ne][0] = o, e[ne][1] = to, e[ne++][2] = DSL_REF_ARRAY_ELEMENT;
			}
			if (o >= nc && o < nc + nl && rnd(2)) /* a loader's list of its classes */
				for (uint32_t c2 = 0; c2 < nc; c2++)
					if (m.cls[c2].obj != DSL_NOOBJ && rnd(2))
						e[ne][0] = o, e[ne][1] = c2, e[ne++][2] = DSL_REF_FIELD;
		}
		for (uint32_t o = 0; o < n; o++) {
			m.obj[o].ref_first = k;
			for (uint32_t i = 0; i < ne; i++)
				if (e[i][0] == o)
					m.refs[k++] = (struct dsl_href){ .to = e[i][1], .index = -1,
									 .kind = (uint8_t)e[i][2] };
			m.obj[o].nrefs = k - m.obj[o].ref_first;
		}
		mheap_finish(&m, n, nc, nl, nr, k);
		check_against_dataflow(&m.h);
		free(m.obj);
		free(m.refs);
		free(m.roots);
		free(m.cls);
		free(m.ld);
		free(e);
	}
	print_message("searched once %u, a first search mended %u (no held pass %u, renumbered "
		      "by the moves %u, vertices moved %u), searched again %u\n", searched_once,
		      searched_spliced, quick_held, quick_renumber, spliced_moved, searched_again);
	/* the heaps take every way: the mend (splice()), its short ways, and a
	 * second search where it cannot (an object it meets after another
	 * reference) */
	assert_true(searched_once > 0 && searched_spliced > 0 && searched_again > 0);
	assert_true(quick_held > 0 && quick_renumber > 0);
	/* and mends whose searches took vertices the first search had
	 * numbered later (move_vertex(): JDK 17's Tomcat) */
	assert_true(spliced_moved > 0);
}

/* Heaps whose CLASS references are implied (dsl_heap.class_ref: a view over
 * a frozen copy's records without them, MT_AP_FREEZE_NOCLASS) against the
 * same heaps with each a record, every object's first: the same dominator
 * tree, retained sizes, searches and mends, referrers, shortest paths from
 * the roots and their text, object by object. */
static void test_implied_class_refs(void **state)
{
	unsigned spliced = 0, again = 0;

	(void)state;
	for (int t = 0; t < 400; t++) {
		uint32_t n = 2 + rnd(70), nc = 1 + rnd(6), nl = 1 + rnd(3), nr = 1 + rnd(4);
		struct mheap m = { 0 };
		struct dsl_heap hi;
		struct dsl_href *irefs;
		uint32_t *cref, k = 0, ki = 0, nimp = 0;
		bool *has;

		if (nc + nl > n)
			nc = nl = 1;
		m.obj = calloc(n, sizeof(*m.obj));
		m.refs = calloc(8 * n + 16, sizeof(*m.refs));
		irefs = calloc(8 * n + 16, sizeof(*irefs));
		m.roots = calloc(nr + nc, sizeof(*m.roots));
		m.cls = calloc(nc, sizeof(*m.cls));
		m.ld = calloc(nl, sizeof(*m.ld));
		cref = calloc(nc, sizeof(*cref));
		has = calloc(nc, sizeof(*has));
		struct dsl_hobject *iobj = calloc(n, sizeof(*iobj));

		assert_non_null(iobj);
		for (uint32_t l = 0; l < nl; l++)
			m.ld[l] = (struct dsl_hloader){ .obj = rnd(4) ? nc + l : DSL_NOOBJ, .id = l + 1 };
		/* per class: its objects' CLASS references implied, or none (a
		 * class object's own class's, an unknown class object) */
		for (uint32_t c = 0; c < nc; c++) {
			m.cls[c] = (struct dsl_hclass){ .name = "K", .obj = rnd(8) ? c : DSL_NOOBJ,
							.super = DSL_NOOBJ,
							.loader = rnd(4) ? rnd(nl) : DSL_NOOBJ };
			has[c] = m.cls[c].obj != DSL_NOOBJ && rnd(6);
			cref[c] = has[c] ? m.cls[c].obj : DSL_NOOBJ;
		}
		for (uint32_t o = 0; o < n; o++) {
			uint32_t c = rnd(nc), nf = rnd(4);

			m.obj[o] = (struct dsl_hobject){ .id = 1 + o, .cls = c, .length = -1,
							 .size = 8 + 8 * rnd(50), .ref_first = k };
			iobj[o] = m.obj[o];
			iobj[o].ref_first = ki;
			if (has[c]) {
				m.refs[k++] = (struct dsl_href){ .to = m.cls[c].obj, .index = -1,
								 .kind = DSL_REF_CLASS };
				nimp++;
			}
			for (uint32_t f = 0; f < nf; f++) {
				uint32_t to = rnd(5) ? (o + 1 + rnd(6)) % n : rnd(n);
				struct dsl_href r = { .to = rnd(12) ? to : o, .index = -1,
						      .kind = !rnd(8) ? DSL_REF_STATIC_FIELD :
							      !rnd(6) ? DSL_REF_ARRAY_ELEMENT : DSL_REF_FIELD };

				if (r.kind == DSL_REF_ARRAY_ELEMENT) /* its slot, in the text */
					r.index = (int32_t)f;

				m.refs[k++] = r;
				irefs[ki++] = r;
			}
			if (o >= nc && o < nc + nl && rnd(2)) /* a loader's list of its classes */
				for (uint32_t c2 = 0; c2 < nc; c2++)
					if (m.cls[c2].obj != DSL_NOOBJ && rnd(2)) {
						struct dsl_href r = { .to = c2, .index = -1,
								      .kind = DSL_REF_FIELD };

						m.refs[k++] = r;
						irefs[ki++] = r;
					}
			m.obj[o].nrefs = k - m.obj[o].ref_first;
			iobj[o].nrefs = ki - iobj[o].ref_first;
		}
		mheap_finish(&m, n, nc, nl, nr, k);
		hi = m.h;
		hi.objects = iobj;
		hi.refs = irefs;
		hi.nrefs = ki;
		hi.class_ref = cref;
		hi.nimplied = nimp;
		{
			struct dsl_diags *dg = dsl_diags_new();

			assert_non_null(dg);
			assert_int_equal(dsl_heap_check(&hi, dg), 0);
			dsl_diags_free(dg);
		}
		/* the dominator tree */
		struct mt_domtree de, di;

		assert_int_equal(dominators_compute(&m.h, &de), 0);
		assert_int_equal(dominators_compute(&hi, &di), 0);
		for (uint32_t o = 0; o < n; o++) {
			assert_int_equal(de.idom[o], di.idom[o]);
			assert_true(de.retained[o] == di.retained[o]);
		}
		assert_int_equal(de.searches, di.searches);
		assert_int_equal(de.mend_added, di.mend_added);
		assert_int_equal(de.mend_dropped, di.mend_dropped);
		assert_int_equal(de.mend_moved, di.mend_moved);
		spliced += de.searches == 1 && (de.mend_added || de.mend_dropped);
		again += de.searches > 1;
		dominators_free(&de);
		dominators_free(&di);
		/* the referrers */
		struct mt_referrers re, ri;

		assert_int_equal(referrers_build(&m.h, &re), 0);
		assert_int_equal(referrers_build(&hi, &ri), 0);
		for (uint32_t o = 0; o <= n; o++)
			assert_int_equal(re.first[o], ri.first[o]);
		for (uint32_t i = 0; i < re.first[n]; i++)
			assert_int_equal(re.from[i], ri.from[i]);
		referrers_free(&re);
		referrers_free(&ri);
		/* the shortest paths: the same steps, owners, kinds and text */
		uint32_t *ve, *vi;

		assert_int_equal(rootpaths_build(&m.h, &ve, NULL), 0);
		assert_int_equal(rootpaths_build(&hi, &vi, NULL), 0);
		m.h.root_via = ve;
		hi.root_via = vi;
		for (uint32_t o = 0; o < n; o++) {
			struct dsl_pathstep pe[80], pi[80];
			size_t le = dsl_root_path(&m.h, o, pe, 80), li = dsl_root_path(&hi, o, pi, 80);
			char te[600], tx[600];

			assert_int_equal(ve[o] == DSL_VIA_NONE, vi[o] == DSL_VIA_NONE);
			assert_int_equal(le, li);
			for (size_t j = 0; j < le && j < 80; j++) {
				assert_int_equal(pe[j].obj, pi[j].obj);
				assert_int_equal(pe[j].from, pi[j].from);
				if (pe[j].from != DSL_NOOBJ) {
					struct dsl_href a = dsl_heap_ref(&m.h, pe[j].ref);
					struct dsl_href b = dsl_heap_ref(&hi, pi[j].ref);

					assert_int_equal(a.to, b.to);
					assert_int_equal(a.kind, b.kind);
					assert_int_equal(a.index, b.index);
					assert_int_equal(dsl_ref_owner(&hi, pi[j].ref), pi[j].from);
				}
				assert_string_equal(dsl_path_step_text(&m.h, &pe[j], te, sizeof(te)),
						    dsl_path_step_text(&hi, &pi[j], tx, sizeof(tx)));
			}
		}
		free(ve);
		free(vi);
		free(m.obj);
		free(m.refs);
		free(m.roots);
		free(m.cls);
		free(m.ld);
		free(iobj);
		free(irefs);
		free(cref);
		free(has);
	}
	print_message("implied CLASS references: %u mended, %u searched again\n", spliced, again);
	assert_true(spliced > 0 && again > 0);
}

/* The plain random graphs of test_random against the data-flow definition
 * too (a second independent reference). */
static void test_random_dataflow(void **state)
{
	(void)state;
	for (int t = 0; t < 200; t++) {
		uint32_t n = 1 + rnd(90), ne = rnd(3 * n + 1), nr = 1 + rnd(4);
		uint32_t (*e)[2] = calloc(ne + 1, sizeof(*e)), roots[4];
		struct g g;

		for (uint32_t i = 0; i < ne; i++) {
			e[i][0] = rnd(n);
			e[i][1] = rnd(3) ? (e[i][0] + 1 + rnd(4)) % n : rnd(n);
		}
		for (uint32_t i = 0; i < nr; i++)
			roots[i] = rnd(n);
		g_build(&g, n, (const uint32_t (*)[2])e, ne, roots, nr, NULL);
		check_against_dataflow(&g.h);
		g_free(&g);
		free(e);
	}
}

/* A chain of a million objects with back edges: the DFS stack and eval()'s
 * path compression go a million deep (no recursion); every back edge leads
 * to an object the chain already dominates, so idom(i) = i - 1. A million
 * is BEHIND_MIN: on two CPUs a thread faults anc and sl in while the search
 * writes them (dominators.c fault_behind()). */
static void test_million_chain(void **state)
{
	uint32_t n = 1000000, root = 0, nb = 0;
	struct g g;
	struct mt_domtree d;

	(void)state;
	memset(&g, 0, sizeof(g));
	g.obj = calloc(n, sizeof(*g.obj));
	g.refs = calloc(2 * n, sizeof(*g.refs));
	g.roots = calloc(1, sizeof(*g.roots));
	g.cls[0] = (struct dsl_hclass){ .name = "A", .obj = DSL_NOOBJ, .super = DSL_NOOBJ,
					.loader = DSL_NOOBJ };
	for (uint32_t o = 0, k = 0; o < n; o++) {
		g.obj[o] = (struct dsl_hobject){ .id = o + 1, .size = 16, .length = -1,
						 .ref_first = k };
		if (o + 1 < n)
			g.refs[k++] = (struct dsl_href){ .to = o + 1, .index = -1,
							 .kind = DSL_REF_FIELD };
		/* back to the start from the end, and now and then */
		if (o == n - 1 || o % 1000 == 999) {
			g.refs[k++] = (struct dsl_href){ .to = o == n - 1 ? 1 : o / 2, .index = -1,
							 .kind = DSL_REF_FIELD };
			nb++;
		}
		g.obj[o].nrefs = k - g.obj[o].ref_first;
	}
	g.roots[0] = (struct dsl_hroot){ .obj = root, .kind = DSL_ROOT_THREAD };
	g.h = (struct dsl_heap){ .objects = g.obj, .nobjects = n, .classes = g.cls, .nclasses = 1,
				 .refs = g.refs, .nrefs = n - 1 + nb, .roots = g.roots, .nroots = 1 };
	assert_int_equal(dominators_compute(&g.h, &d), 0);
	assert_int_equal(d.idom[0], MT_DOM_ROOT);
	for (uint32_t o = 1; o < n; o++)
		if (d.idom[o] != o - 1)
			fail_msg("object %u: idom %u", o, d.idom[o]);
	for (uint32_t o = 0; o < n; o++)
		if (d.retained[o] != 16ull * (n - o))
			fail_msg("object %u: retained %llu", o, (unsigned long long)d.retained[o]);
	assert_int_equal(d.reached, n);
	dominators_free(&d);
	g_free(&g);
}

/* Roots by how long they hold: a class's static first, then a thread, then a
 * local variable - each only for what the ones before do not reach. */
static void test_root_path_kinds(void **state)
{
	/* 0 static root -> 1 -> 2 -> 3; 4 thread -> 3, 4 -> 5; 6 local -> 5, 6 -> 7;
	 * 8 a live thread the static reaches (a thread group's): 0 -> 8 -> 3,
	 * 8 -> 9, 6 -> 9 */
	static const uint32_t e[][2] = { { 0, 1 }, { 1, 2 }, { 2, 3 }, { 4, 3 }, { 4, 5 },
					 { 6, 5 }, { 6, 7 }, { 0, 8 }, { 8, 3 }, { 8, 9 },
					 { 6, 9 } };
	struct dsl_hthread threads[] = { { 4, "t4" }, { 8, "t8" } };
	static const uint32_t roots[] = { 6, 4, 0 };
	static const int kinds[] = { DSL_ROOT_STACK_LOCAL, DSL_ROOT_THREAD, DSL_ROOT_SYSTEM_CLASS };
	struct dsl_pathstep st[8];
	struct g g;
	uint32_t *via;

	(void)state;
	g_build(&g, 10, e, 11, roots, 3, NULL);
	for (int i = 0; i < 3; i++)
		g.roots[i].kind = (uint8_t)kinds[i];
	g.h.threads = threads;
	g.h.nthreads = 2;
	assert_int_equal(rootpaths_build(&g.h, &via, NULL), 0);
	g.h.root_via = via;
	/* 3: through the static's chain (4 steps), not a thread (2 and 3) */
	assert_int_equal(dsl_root_path(&g.h, 3, st, 8), 4);
	assert_int_equal(st[0].obj, 0);
	assert_int_equal(st[1].obj, 1);
	/* 9: through the thread the static reaches, before the local variable */
	assert_int_equal(dsl_root_path(&g.h, 9, st, 8), 3);
	assert_int_equal(st[0].obj, 0);
	assert_int_equal(st[1].obj, 8);
	/* 5: the thread's, not the local variable's (both 2 steps) */
	assert_int_equal(dsl_root_path(&g.h, 5, st, 8), 2);
	assert_int_equal(st[0].obj, 4);
	/* 7: only the local variable holds it */
	assert_int_equal(dsl_root_path(&g.h, 7, st, 8), 2);
	assert_int_equal(st[0].obj, 6);
	free(via);
	g_free(&g);
}

/* Shortest paths: as long as a plain BFS's distances, each step a real edge. */
static void test_root_paths(void **state)
{
	for (int t = 0; t < 200; t++) {
		uint32_t n = 1 + rnd(80), ne = rnd(3 * n + 1), nr = 1 + rnd(3);
		uint32_t (*e)[2] = calloc(ne + 1, sizeof(*e)), roots[3];
		uint32_t *via, *dist = malloc((n + 1) * sizeof(*dist)), *q = malloc((n + 1) * 4);
		uint32_t head = 0, tail = 0;
		struct g g;

		for (uint32_t i = 0; i < ne; i++) {
			e[i][0] = rnd(n);
			e[i][1] = rnd(n);
		}
		for (uint32_t i = 0; i < nr; i++)
			roots[i] = rnd(n);
		g_build(&g, n, (const uint32_t (*)[2])e, ne, roots, nr, NULL);
		for (uint32_t o = 0; o < n; o++)
			dist[o] = UINT32_MAX;
		for (uint32_t i = 0; i < nr; i++)
			if (dist[roots[i]] == UINT32_MAX) {
				dist[roots[i]] = 1;
				q[tail++] = roots[i];
			}
		while (head < tail) {
			uint32_t x = q[head++];

			for (uint32_t k = 0; k < g.obj[x].nrefs; k++) {
				uint32_t y = g.refs[g.obj[x].ref_first + k].to;

				if (dist[y] == UINT32_MAX) {
					dist[y] = dist[x] + 1;
					q[tail++] = y;
				}
			}
		}
		assert_int_equal(rootpaths_build(&g.h, &via, NULL), 0);
		g.h.root_via = via;
		for (uint32_t o = 0; o < n; o++) {
			struct dsl_pathstep st[128];
			size_t len = dsl_root_path(&g.h, o, st, 128);

			if (dist[o] == UINT32_MAX) {
				assert_int_equal(len, 0);
				continue;
			}
			assert_int_equal(len, dist[o]);
			assert_int_equal(st[len - 1].obj, o);
			assert_int_equal(st[0].from, DSL_NOOBJ);
			assert_int_equal(g.roots[st[0].ref].obj, st[0].obj);
			for (size_t i = 1; i < len; i++) {
				assert_int_equal(st[i].from, st[i - 1].obj);
				assert_int_equal(g.refs[st[i].ref].to, st[i].obj);
				assert_int_equal(dsl_ref_owner(&g.h, st[i].ref), st[i].from);
			}
		}
		free(via);
		free(dist);
		free(q);
		g_free(&g);
		free(e);
	}
}

/* Text of references: fields, array elements, statics, other kinds. */
/*
 * MAT's semantics: a class is held by its loader, never by an instance. L is
 * a loader (a root), M the class object of class C (loader L), X and Y
 * instances of C (roots) with their CLASS references to M; S a system
 * class's object (a SYSTEM_CLASS root) that only Z's CLASS reference and a
 * field of X reach. Before: X dominated M when it was M's only referrer.
 */
static void test_class_held_by_loader(void **state)
{
	enum { L, M, X, Y, S, Z, F, N };
	struct dsl_hobject obj[N] = { 0 };
	struct dsl_href refs[8];
	struct dsl_hroot roots[5] = {
		{ .obj = L, .kind = DSL_ROOT_JNI_GLOBAL }, { .obj = X, .kind = DSL_ROOT_JNI_GLOBAL },
		{ .obj = Y, .kind = DSL_ROOT_STACK_LOCAL }, { .obj = S, .kind = DSL_ROOT_SYSTEM_CLASS },
		{ .obj = Z, .kind = DSL_ROOT_JNI_GLOBAL },
	};
	struct dsl_hloader loaders[1] = { { .obj = L, .id = 1 } };
	struct dsl_hclass cls[3] = {
		{ .name = "Loader", .obj = DSL_NOOBJ, .super = DSL_NOOBJ, .loader = DSL_NOOBJ },
		{ .name = "C", .obj = M, .super = DSL_NOOBJ, .loader = 0 },
		{ .name = "java.lang.Sys", .obj = S, .super = DSL_NOOBJ, .loader = DSL_NOOBJ },
	};
	struct dsl_heap h;
	struct mt_domtree d;
	uint32_t k = 0;

	(void)state;
	for (uint32_t o = 0; o < N; o++)
		obj[o] = (struct dsl_hobject){ .id = 10 + o, .cls = o == X || o == Y ? 1 : 0,
					       .size = 16 * (o + 1), .length = -1 };
	/* X: CLASS -> M, FIELD -> F; Y: CLASS -> M; Z: CLASS -> S; M -> L (its loader) */
	obj[X].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = M, .index = -1, .kind = DSL_REF_CLASS };
	refs[k++] = (struct dsl_href){ .to = F, .index = -1, .kind = DSL_REF_FIELD };
	obj[X].nrefs = 2;
	obj[Y].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = M, .index = -1, .kind = DSL_REF_CLASS };
	obj[Y].nrefs = 1;
	obj[Z].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = S, .index = -1, .kind = DSL_REF_CLASS };
	obj[Z].nrefs = 1;
	obj[M].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = L, .index = -1, .kind = DSL_REF_CLASS_LOADER };
	obj[M].nrefs = 1;
	h = (struct dsl_heap){ .objects = obj, .nobjects = N, .classes = cls, .nclasses = 3,
			       .refs = refs, .nrefs = k, .roots = roots, .nroots = 5,
			       .loaders = loaders, .nloaders = 1 };
	assert_int_equal(dominators_compute(&h, &d), 0);
	assert_int_equal(d.idom[M], L);           /* held by its loader */
	assert_int_equal(d.idom[F], X);
	assert_int_equal(d.retained[X], obj[X].size + obj[F].size); /* not M's */
	assert_int_equal(d.retained[L], obj[L].size + obj[M].size);
	assert_int_equal(d.idom[S], MT_DOM_ROOT);  /* a system class: a root */
	assert_int_equal(d.retained[Z], obj[Z].size);
	dominators_free(&d);
	/* a loader no root reaches but through its classes: the class nothing
	 * else holds is held by its instances (X and Y, both roots: the virtual
	 * root dominates it), and the loader by the class - every object a
	 * chain of references reaches is in the tree (dsl_root_path() finds
	 * them all: fuzz_readers checks both agree) */
	roots[0].obj = X;
	assert_int_equal(dominators_compute(&h, &d), 0);
	assert_int_equal(d.idom[M], MT_DOM_ROOT);
	assert_int_equal(d.idom[L], M);
	assert_int_equal(d.retained[X], obj[X].size + obj[F].size); /* still not M's */
	dominators_free(&d);
	/* a loader's edge leads only where references lead: L reached, its
	 * class M not (no instance, no root): M stays out of the tree */
	roots[0].obj = L;
	obj[X].nrefs = 0;
	obj[Y].nrefs = 0;
	roots[1].obj = L;
	roots[2].obj = L;
	assert_int_equal(dominators_compute(&h, &d), 0);
	assert_int_equal(d.idom[M], MT_DOM_UNREACHED);
	assert_int_equal(d.idom[L], MT_DOM_ROOT);
	dominators_free(&d);
}

/*
 * Tomcat's heap on JDK 25 (no reflection accessor classes since JDK 18): the
 * first search fails only because a loader's edge reached KA, the class
 * object of K[] that no reference reaches. R (a root) holds W (the web
 * application's loader) and I, an instance of K (class object KO, loader
 * W). The first search is mended, not run again: KA dropped, nothing added;
 * KO held by its loader. Checked by hand and against the data-flow
 * definition.
 */
static void test_dead_class_mended(void **state)
{
	enum { R, W, I, KO, KA, N };
	struct dsl_hobject obj[N] = { 0 };
	struct dsl_href refs[8];
	struct dsl_hroot roots[1] = { { .obj = R, .kind = DSL_ROOT_JNI_GLOBAL } };
	struct dsl_hloader loaders[1] = { { .obj = W, .id = 1 } };
	struct dsl_hclass cls[3] = {
		{ .name = "Obj", .obj = DSL_NOOBJ, .super = DSL_NOOBJ, .loader = DSL_NOOBJ },
		{ .name = "K", .obj = KO, .super = DSL_NOOBJ, .loader = 0 },
		{ .name = "K[]", .obj = KA, .super = DSL_NOOBJ, .loader = 0 },
	};
	struct dsl_heap h;
	struct mt_domtree d;
	uint32_t k = 0;

	(void)state;
	for (uint32_t o = 0; o < N; o++)
		obj[o] = (struct dsl_hobject){ .id = 10 + o, .cls = o == I ? 1 : 0,
					       .size = 16 * (o + 1), .length = -1 };
	obj[R].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = W, .index = -1, .kind = DSL_REF_FIELD };
	refs[k++] = (struct dsl_href){ .to = I, .index = -1, .kind = DSL_REF_FIELD };
	obj[R].nrefs = 2;
	obj[I].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = KO, .index = -1, .kind = DSL_REF_CLASS };
	obj[I].nrefs = 1;
	obj[KO].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = W, .index = -1, .kind = DSL_REF_CLASS_LOADER };
	obj[KO].nrefs = 1;
	obj[KA].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = W, .index = -1, .kind = DSL_REF_CLASS_LOADER };
	refs[k++] = (struct dsl_href){ .to = KO, .index = -1, .kind = DSL_REF_FIELD };
	obj[KA].nrefs = 2;
	h = (struct dsl_heap){ .objects = obj, .nobjects = N, .classes = cls, .nclasses = 3,
			       .refs = refs, .nrefs = k, .roots = roots, .nroots = 1,
			       .loaders = loaders, .nloaders = 1 };
	assert_int_equal(dominators_compute(&h, &d), 0);
	assert_int_equal(d.searches, 1);
	assert_int_equal(d.mend_added, 0);
	assert_int_equal(d.mend_dropped, 1);
	assert_int_equal(d.idom[KA], MT_DOM_UNREACHED);
	assert_int_equal(d.idom[KO], W);
	assert_int_equal(d.idom[W], R);
	assert_int_equal(d.idom[I], R);
	assert_int_equal(d.retained[W], obj[W].size + obj[KO].size);
	assert_int_equal(d.reached, 4);
	assert_true(d.mend_quick & MT_DOM_QUICK_RENUMBER); /* one number gone */
	dominators_free(&d);
	check_against_dataflow(&h);
}

/* The same with 5000 class objects of W's that no reference reaches: more
 * numbers gone than renumber_objects() moves by a list (FEW_MOVES), so each
 * is looked up; the same tree. */
static void test_many_dead_mended(void **state)
{
	enum { R, W, I, KO, KA, M = 5000, N = KA + M };
	struct dsl_hobject *obj = calloc(N, sizeof(*obj));
	struct dsl_href *refs = calloc(N + 8, sizeof(*refs));
	struct dsl_hclass *cls = calloc(M + 2, sizeof(*cls));
	struct dsl_hroot roots[1] = { { .obj = R, .kind = DSL_ROOT_JNI_GLOBAL } };
	struct dsl_hloader loaders[1] = { { .obj = W, .id = 1 } };
	struct dsl_heap h;
	struct mt_domtree d;
	uint32_t k = 0;

	(void)state;
	assert_true(obj && refs && cls);
	cls[0] = (struct dsl_hclass){ .name = "Obj", .obj = DSL_NOOBJ, .super = DSL_NOOBJ,
				      .loader = DSL_NOOBJ };
	cls[1] = (struct dsl_hclass){ .name = "K", .obj = KO, .super = DSL_NOOBJ, .loader = 0 };
	for (uint32_t c = 0; c < M; c++)
		cls[2 + c] = (struct dsl_hclass){ .name = "K[]", .obj = KA + c, .super = DSL_NOOBJ,
						  .loader = 0 };
	for (uint32_t o = 0; o < N; o++)
		obj[o] = (struct dsl_hobject){ .id = 10 + o, .cls = o == I ? 1 : 0,
					       .size = 16, .length = -1 };
	obj[R].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = W, .index = -1, .kind = DSL_REF_FIELD };
	refs[k++] = (struct dsl_href){ .to = I, .index = -1, .kind = DSL_REF_FIELD };
	obj[R].nrefs = 2;
	obj[I].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = KO, .index = -1, .kind = DSL_REF_CLASS };
	obj[I].nrefs = 1;
	obj[KO].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = W, .index = -1, .kind = DSL_REF_CLASS_LOADER };
	obj[KO].nrefs = 1;
	for (uint32_t c = 0; c < M; c++) {
		obj[KA + c].ref_first = k;
		refs[k++] = (struct dsl_href){ .to = W, .index = -1, .kind = DSL_REF_CLASS_LOADER };
		obj[KA + c].nrefs = 1;
	}
	h = (struct dsl_heap){ .objects = obj, .nobjects = N, .classes = cls, .nclasses = M + 2,
			       .refs = refs, .nrefs = k, .roots = roots, .nroots = 1,
			       .loaders = loaders, .nloaders = 1 };
	assert_int_equal(dominators_compute(&h, &d), 0);
	assert_int_equal(d.searches, 1);
	assert_int_equal(d.mend_dropped, M);
	assert_false(d.mend_quick & MT_DOM_QUICK_RENUMBER);
	for (uint32_t c = 0; c < M; c++)
		assert_int_equal(d.idom[KA + c], MT_DOM_UNREACHED);
	assert_int_equal(d.idom[KO], W);
	assert_int_equal(d.idom[W], R);
	assert_int_equal(d.idom[I], R);
	assert_int_equal(d.retained[W], obj[W].size + obj[KO].size);
	assert_int_equal(d.retained[R], 4 * 16);
	assert_int_equal(d.reached, 4);
	dominators_free(&d);
	free(obj);
	free(refs);
	free(cls);
}

/*
 * The shape of Tomcat's heap on JDK 17 that made the first search fail both
 * its checks (issue #29). R (a root) holds W (the web application's loader),
 * I (an instance of K, class object KO, loader W) and A (an instance of a
 * reflection accessor class G, class object GA): G's loader D only GA holds
 * (GA -> D), D's parent is W, and GA only A's CLASS reference holds. KA, the
 * class object of K[] (loader W, no instance, nothing refers to it) reaches
 * KO and T: the loader's edge reached it first, but no chain of references
 * does, so it and T stay out of the tree. Twice: with KO numbered before KA
 * in the loader's edges (the objects below KA none a reference chain
 * reaches), and with KO after it and S (held by a static field of GA) below
 * it too. Checked against the data-flow definition and by hand.
 */
static void test_reflection_accessors(void **state)
{
	enum { R, W, I, A, GA, D, S, T, X, N };
	struct dsl_hobject obj[N + 1] = { 0 };
	struct dsl_href refs[16];
	struct dsl_hroot roots[1] = { { .obj = R, .kind = DSL_ROOT_JNI_GLOBAL } };
	struct dsl_hloader loaders[2] = { { .obj = W, .id = 1 }, { .obj = D, .id = 2 } };
	struct dsl_hclass cls[4] = {
		{ .name = "Obj", .obj = DSL_NOOBJ, .super = DSL_NOOBJ, .loader = DSL_NOOBJ },
		{ .name = "K", .super = DSL_NOOBJ, .loader = 0 },
		{ .name = "GeneratedMethodAccessor1", .obj = GA, .super = DSL_NOOBJ, .loader = 1 },
		{ .name = "K[]", .super = DSL_NOOBJ, .loader = 0 },
	};
	struct dsl_heap h;
	struct mt_domtree d;

	(void)state;
	for (int variant = 0; variant < 2; variant++) {
		/* variant 0: KO = X, KA = N (after it); 1: the other way round */
		uint32_t KO = variant ? N : X, KA = variant ? X : N, k = 0;

		cls[1].obj = KO;
		cls[3].obj = KA;
		for (uint32_t o = 0; o <= N; o++)
			obj[o] = (struct dsl_hobject){ .id = 100 + o, .size = 8 * (o + 2),
						       .length = -1, .cls = 0 };
		obj[I].cls = 1;
		obj[A].cls = 2;
		obj[R].ref_first = k;
		refs[k++] = (struct dsl_href){ .to = W, .index = 0, .kind = DSL_REF_FIELD };
		refs[k++] = (struct dsl_href){ .to = I, .index = 1, .kind = DSL_REF_FIELD };
		refs[k++] = (struct dsl_href){ .to = A, .index = 2, .kind = DSL_REF_FIELD };
		obj[R].nrefs = k - obj[R].ref_first;
		obj[I].ref_first = k;
		refs[k++] = (struct dsl_href){ .to = KO, .index = -1, .kind = DSL_REF_CLASS };
		obj[I].nrefs = 1;
		obj[A].ref_first = k;
		refs[k++] = (struct dsl_href){ .to = GA, .index = -1, .kind = DSL_REF_CLASS };
		obj[A].nrefs = 1;
		obj[GA].ref_first = k;
		refs[k++] = (struct dsl_href){ .to = D, .index = -1, .kind = DSL_REF_CLASS_LOADER };
		if (variant)
			refs[k++] = (struct dsl_href){ .to = S, .index = 0,
						       .kind = DSL_REF_STATIC_FIELD };
		obj[GA].nrefs = k - obj[GA].ref_first;
		obj[D].ref_first = k;
		refs[k++] = (struct dsl_href){ .to = W, .index = 0, .kind = DSL_REF_FIELD };
		obj[D].nrefs = 1;
		obj[KA].ref_first = k;
		refs[k++] = (struct dsl_href){ .to = KO, .index = 0, .kind = DSL_REF_FIELD };
		refs[k++] = (struct dsl_href){ .to = T, .index = 1, .kind = DSL_REF_FIELD };
		if (variant)
			refs[k++] = (struct dsl_href){ .to = S, .index = 2, .kind = DSL_REF_FIELD };
		obj[KA].nrefs = k - obj[KA].ref_first;
		obj[KO].ref_first = k;
		refs[k++] = (struct dsl_href){ .to = W, .index = -1, .kind = DSL_REF_CLASS_LOADER };
		obj[KO].nrefs = 1;
		h = (struct dsl_heap){ .objects = obj, .nobjects = N + 1, .classes = cls,
				       .nclasses = 4, .refs = refs, .nrefs = k, .roots = roots,
				       .nroots = 1, .loaders = loaders, .nloaders = 2 };
		check_against_dataflow(&h);
		assert_int_equal(dominators_compute(&h, &d), 0);
		assert_int_equal(d.idom[GA], A);  /* only its instance holds it */
		assert_int_equal(d.idom[D], GA);
		assert_int_equal(d.idom[KO], W);  /* its loader, not I */
		assert_int_equal(d.idom[KA], MT_DOM_UNREACHED);
		assert_int_equal(d.idom[T], MT_DOM_UNREACHED);
		assert_int_equal(d.idom[S], variant ? GA : MT_DOM_UNREACHED);
		assert_int_equal(d.retained[A], obj[A].size + obj[GA].size + obj[D].size +
						(variant ? obj[S].size : 0));
		assert_int_equal(d.reached, variant ? 8 : 7);
		dominators_free(&d);
	}
}

static void test_ref_text(void **state)
{
	static const struct dsl_hfield f[] = { { "next", DSL_FK_REF }, { "value", DSL_FK_REF } };
	struct dsl_hclass cls[] = {
		{ .name = "pkg.Node", .obj = DSL_NOOBJ, .super = DSL_NOOBJ, .loader = DSL_NOOBJ,
		  .fields = f, .nfields = 2 },
		{ .name = "java.lang.Object[]", .obj = DSL_NOOBJ, .super = DSL_NOOBJ,
		  .loader = DSL_NOOBJ },
		{ .name = "java.lang.Class", .obj = DSL_NOOBJ, .super = DSL_NOOBJ,
		  .loader = DSL_NOOBJ },
		{ .name = "pkg.Holder", .obj = 2, .super = DSL_NOOBJ, .loader = DSL_NOOBJ },
	};
	struct dsl_hstatic st[] = { { "CACHE", 3 } };
	struct dsl_href refs[] = { { .to = 1, .index = 1, .kind = DSL_REF_FIELD },
				   { .to = 0, .index = 7, .kind = DSL_REF_ARRAY_ELEMENT },
				   { .to = 1, .index = 0, .kind = DSL_REF_STATIC_FIELD },
				   { .to = 2, .index = -1, .kind = DSL_REF_CLASS } };
	struct dsl_hobject obj[] = { { .id = 1, .cls = 0, .ref_first = 0, .nrefs = 1 },
				     { .id = 2, .cls = 1, .ref_first = 1, .nrefs = 1 },
				     { .id = 3, .cls = 2, .ref_first = 2, .nrefs = 2 } };
	struct dsl_heap h = { .objects = obj, .nobjects = 3, .classes = cls, .nclasses = 4,
			      .refs = refs, .nrefs = 4, .statics = st, .nstatics = 1 };
	char b[256];

	assert_string_equal(dsl_ref_text(&h, 0, &refs[0], b, sizeof(b)), "pkg.Node.value");
	assert_string_equal(dsl_ref_text(&h, 1, &refs[1], b, sizeof(b)), "java.lang.Object[][7]");
	assert_string_equal(dsl_ref_text(&h, 2, &refs[2], b, sizeof(b)), "static pkg.Holder.CACHE");
	assert_string_equal(dsl_ref_text(&h, 2, &refs[3], b, sizeof(b)), "java.lang.Class (class)");
	assert_string_equal(dsl_obj_class_text(&h, 2, b, sizeof(b)), "class pkg.Holder");
	assert_int_equal(dsl_ref_owner(&h, 0), 0);
	assert_int_equal(dsl_ref_owner(&h, 1), 1);
	assert_int_equal(dsl_ref_owner(&h, 3), 2);
	assert_int_equal(dsl_ref_owner(&h, 4), DSL_NOOBJ);
}

/*
 * JDK 17's Tomcat, the mend that moves (issue #29): R (a root) refers to A,
 * then to C; C to B. A is an instance of the reflection accessor class G
 * (class object GA, loader D, which only GA holds); GA holds B in a static
 * field too, and only A's CLASS reference holds GA. The first search numbers
 * R A C B and never reaches GA; a new search would meet GA at A's CLASS
 * reference and B below it, before C. The mend's search from GA moves B into
 * itself: one search, GA and D added, B moved; B's idom is R (C's path and
 * GA's), checked by hand and against the data-flow definition.
 */
static void test_splice_moves(void **state)
{
	enum { R, A, C, B, GA, D, N };
	struct dsl_hobject obj[N];
	struct dsl_href refs[8];
	struct dsl_hroot roots[1] = { { .obj = R, .kind = DSL_ROOT_JNI_GLOBAL } };
	struct dsl_hloader loaders[1] = { { .obj = D, .id = 1 } };
	struct dsl_hclass cls[2] = {
		{ .name = "Obj", .obj = DSL_NOOBJ, .super = DSL_NOOBJ, .loader = DSL_NOOBJ },
		{ .name = "GeneratedMethodAccessor1", .obj = GA, .super = DSL_NOOBJ, .loader = 0 },
	};
	struct dsl_heap h;
	struct mt_domtree d;
	uint32_t k = 0;

	(void)state;
	for (uint32_t o = 0; o < N; o++)
		obj[o] = (struct dsl_hobject){ .id = 100 + o, .size = 8 * (o + 2), .length = -1 };
	obj[A].cls = 1;
	obj[R].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = A, .index = 0, .kind = DSL_REF_FIELD };
	refs[k++] = (struct dsl_href){ .to = C, .index = 1, .kind = DSL_REF_FIELD };
	obj[R].nrefs = 2;
	obj[A].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = GA, .index = -1, .kind = DSL_REF_CLASS };
	obj[A].nrefs = 1;
	obj[C].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = B, .index = 0, .kind = DSL_REF_FIELD };
	obj[C].nrefs = 1;
	obj[B].ref_first = k;
	obj[GA].ref_first = k;
	refs[k++] = (struct dsl_href){ .to = D, .index = -1, .kind = DSL_REF_CLASS_LOADER };
	refs[k++] = (struct dsl_href){ .to = B, .index = 0, .kind = DSL_REF_STATIC_FIELD };
	obj[GA].nrefs = 2;
	obj[D].ref_first = k;
	h = (struct dsl_heap){ .objects = obj, .nobjects = N, .classes = cls, .nclasses = 2,
			       .refs = refs, .nrefs = k, .roots = roots, .nroots = 1,
			       .loaders = loaders, .nloaders = 1 };
	check_against_dataflow(&h);
	assert_int_equal(dominators_compute(&h, &d), 0);
	assert_int_equal(d.searches, 1);
	assert_int_equal(d.mend_added, 2);
	assert_int_equal(d.mend_moved, 1);
	assert_int_equal(d.mend_dropped, 0);
	assert_int_equal(d.idom[A], R);
	assert_int_equal(d.idom[GA], A);
	assert_int_equal(d.idom[D], GA);
	assert_int_equal(d.idom[C], R);
	assert_int_equal(d.idom[B], R);
	assert_int_equal(d.retained[A], obj[A].size + obj[GA].size + obj[D].size);
	assert_int_equal(d.retained[R], obj[R].size + obj[A].size + obj[GA].size + obj[D].size +
					obj[C].size + obj[B].size);
	assert_int_equal(d.reached, N);
	dominators_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_known),
		cmocka_unit_test(test_random),
		cmocka_unit_test(test_deep_chain),
		cmocka_unit_test(test_root_paths),
		cmocka_unit_test(test_root_path_kinds),
		cmocka_unit_test(test_ref_text),
		cmocka_unit_test(test_class_held_by_loader),
		cmocka_unit_test(test_random_loaders),
		cmocka_unit_test(test_reflection_accessors),
		cmocka_unit_test(test_splice_moves),
		cmocka_unit_test(test_dead_class_mended),
		cmocka_unit_test(test_many_dead_mended),
		cmocka_unit_test(test_random_dataflow),
		cmocka_unit_test(test_implied_class_refs),
		cmocka_unit_test(test_million_chain),
		cmocka_unit_test(test_by_class_threads),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
