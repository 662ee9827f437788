// SPDX-License-Identifier: GPL-2.0
/* test_heapgrowth - growth by holder across snapshots (analysis/heapgrowth.c)
 * on heaps built by construction, four snapshots of each:
 *   - a static HashMap that only grows (its table array replaced as it
 *     grows, entries chained): its holder is the map, the nodes and values
 *     its growth, paths without indices;
 *   - an ArrayList held by a local variable of thread "leaker", another by a
 *     parked virtual thread's (no thread named), a third by one whose tid
 *     the copy's mark read (named "#21");
 *   - an application object's list;
 * and what must not be a suspect: an LRU of constant size whose entries are
 * replaced, a cache filled once, a count that goes up and down, growth below
 * the minimum. Ages: each interval's gain and the GCs after it. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/heapgraph.h"
#include "analysis/heapgrowth.h"
#include "dsl/dsl.h"

enum { C_APP, C_MAP, C_NODE, C_NODES, C_VAL, C_LIST, C_OBJS, C_THREAD, C_LRU, C_LEAK,
       C_CACHE, C_TMP, C_MGR, NCLS };

static const struct dsl_hfield node_f[] = { { .name = "next" }, { .name = "value" } };
static const struct dsl_hfield map_f[] = { { .name = "table" } };
static const struct dsl_hfield list_f[] = { { .name = "elementData" } };
static const struct dsl_hfield app_f[] = { { .name = "items" } };
static const struct dsl_hfield mgr_f[] = { { .name = "sessions" } };

/* A heap under construction: objects, each with its references. */
struct b {
	struct dsl_hobject o[20000];
	uint32_t n;
	struct { uint32_t from, to; int kind; int32_t index; } e[40000];
	uint32_t ne;
	struct dsl_hroot roots[64];
	uint32_t nroots;
	struct dsl_hthread threads[4];
	uint32_t nthreads;
	struct dsl_hclass cls[NCLS];
	struct dsl_hstatic statics[4];
	struct dsl_href *refs;
	struct dsl_heap h;
	uint32_t *via;
	uint32_t *parent;
};

/* finish(): the root search keeps each object's parent (heap.root_parent,
 * as the leak search asks), or heapgrowth finds them itself. */
static bool with_parents;

static uint32_t obj(struct b *b, uint32_t cls, uint64_t size)
{
	assert_true(b->n < 20000);
	b->o[b->n] = (struct dsl_hobject){ .id = 1000 + b->n, .cls = cls, .size = size,
					   .length = -1 };
	return b->n++;
}

static void ref(struct b *b, uint32_t from, uint32_t to, int kind, int32_t index)
{
	assert_true(b->ne < 40000);
	b->e[b->ne].from = from;
	b->e[b->ne].to = to;
	b->e[b->ne].kind = kind;
	b->e[b->ne++].index = index;
}

static void root(struct b *b, uint32_t o, int kind)
{
	b->roots[b->nroots++] = (struct dsl_hroot){ .obj = o, .kind = (uint8_t)kind };
}

static void finish(struct b *b)
{
	uint32_t k = 0;

	b->refs = calloc(b->ne + 1, sizeof(*b->refs));
	assert_non_null(b->refs);
	for (uint32_t i = 0; i < b->n; i++) { /* each object's references, in order */
		b->o[i].ref_first = k;
		for (uint32_t j = 0; j < b->ne; j++)
			if (b->e[j].from == i)
				b->refs[k++] = (struct dsl_href){ .to = b->e[j].to,
								  .kind = (uint8_t)b->e[j].kind,
								  .index = b->e[j].index };
		b->o[i].nrefs = k - b->o[i].ref_first;
	}
	b->h = (struct dsl_heap){ .objects = b->o, .nobjects = b->n, .classes = b->cls,
				  .nclasses = NCLS, .refs = b->refs, .nrefs = k, .roots = b->roots,
				  .nroots = b->nroots, .threads = b->threads,
				  .nthreads = b->nthreads, .statics = b->statics, .nstatics = 4 };
	assert_int_equal(rootpaths_build(&b->h, &b->via, with_parents ? &b->parent : NULL), 0);
	b->h.root_via = b->via;
	b->h.root_parent = b->parent;
	for (uint32_t o = 0; o < b->n && b->parent; o++) { /* the owner of via's reference */
		uint32_t v = b->via[o], p = b->parent[o];

		if (v == DSL_VIA_ROOT || v == DSL_VIA_NONE)
			continue;
		assert_true(p < b->n && v >= b->o[p].ref_first &&
			    v < b->o[p].ref_first + b->o[p].nrefs);
	}
}

static void classes(struct b *b)
{
	static const char *const names[NCLS] = {
		"App", "java.util.HashMap", "java.util.HashMap$Node", "java.util.HashMap$Node[]",
		"LeakValue", "java.util.ArrayList", "java.lang.Object[]", "java.lang.Thread",
		"java.util.LinkedHashMap", "Leaker", "CacheEntry", "Tmp", "Manager",
	};

	for (int i = 0; i < NCLS; i++)
		b->cls[i] = (struct dsl_hclass){ .name = names[i], .obj = DSL_NOOBJ,
						 .super = DSL_NOOBJ, .loader = DSL_NOOBJ };
	b->cls[C_NODE].fields = node_f;
	b->cls[C_NODE].nfields = 2;
	b->cls[C_MAP].fields = map_f;
	b->cls[C_MAP].nfields = 1;
	b->cls[C_LRU].fields = map_f;
	b->cls[C_LRU].nfields = 1;
	b->cls[C_LIST].fields = list_f;
	b->cls[C_LIST].nfields = 1;
	b->cls[C_APP].fields = app_f;
	b->cls[C_APP].nfields = 1;
	b->cls[C_MGR].fields = mgr_f;
	b->cls[C_MGR].nfields = 1;
	b->statics[0] = (struct dsl_hstatic){ .name = "BY_ID", .cls = C_LEAK };
	b->statics[1] = (struct dsl_hstatic){ .name = "LRU", .cls = C_LEAK };
	b->statics[2] = (struct dsl_hstatic){ .name = "CACHE", .cls = C_LEAK };
	b->statics[3] = (struct dsl_hstatic){ .name = "APP", .cls = C_LEAK };
}

/* A map of @n entries (chained two per bin) under @from's reference. */
static uint32_t map(struct b *b, uint32_t cls, uint32_t n, uint32_t valcls)
{
	uint32_t m = obj(b, cls, 48), t = obj(b, C_NODES, 16 + 4 * (n + 1)), prev = DSL_NOOBJ;

	ref(b, m, t, DSL_REF_FIELD, 0);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t nd = obj(b, C_NODE, 32), v = obj(b, valcls, 24);

		ref(b, nd, v, DSL_REF_FIELD, 1);
		if (i % 2 && prev != DSL_NOOBJ)
			ref(b, prev, nd, DSL_REF_FIELD, 0); /* a bin's chain */
		else
			ref(b, t, nd, DSL_REF_ARRAY_ELEMENT, (int32_t)i);
		prev = nd;
	}
	return m;
}

static uint32_t list(struct b *b, uint32_t n, uint32_t itemcls)
{
	uint32_t l = obj(b, C_LIST, 24), a = obj(b, C_OBJS, 16 + 4 * n);

	ref(b, l, a, DSL_REF_FIELD, 0);
	for (uint32_t i = 0; i < n; i++)
		ref(b, a, obj(b, itemcls, 16), DSL_REF_ARRAY_ELEMENT, (int32_t)i);
	return l;
}

/* Snapshot @k of the heap: the leak at 10 + 40 k entries, the thread's list
 * at 40 k items, the app's list at 35 k, the LRU at 50, the cache at 200,
 * transient objects up and down, a small growth (10 k) below the minimum. */
/* snapshot(): in the two middle snapshots thread "leaker" is inside
 * HashMap.putVal() on the static map, and inside ArrayList.add() on the list
 * only its local variable holds: the table and the list's array local
 * variables too. */
static bool inside_put;

static void snapshot(struct b *b, int k)
{
	static const uint32_t tmp[] = { 5, 9, 3, 7 };
	uint32_t mirror, thread, app, small, by_id, local;

	b->ne = b->n = b->nroots = b->nthreads = 0;
	classes(b);
	mirror = obj(b, C_THREAD, 200); /* Leaker's class object (its class: immaterial) */
	b->cls[C_LEAK].obj = mirror;
	root(b, mirror, DSL_ROOT_SYSTEM_CLASS);
	by_id = map(b, C_MAP, 10 + 40 * k, C_VAL);
	ref(b, mirror, by_id, DSL_REF_STATIC_FIELD, 0);
	ref(b, mirror, map(b, C_LRU, 50, C_VAL), DSL_REF_STATIC_FIELD, 1);
	ref(b, mirror, list(b, 200, C_CACHE), DSL_REF_STATIC_FIELD, 2);
	app = obj(b, C_APP, 16);
	ref(b, mirror, app, DSL_REF_STATIC_FIELD, 3);
	ref(b, app, list(b, 35 * k, C_VAL), DSL_REF_FIELD, 0);
	thread = obj(b, C_THREAD, 120);
	b->threads[b->nthreads++] = (struct dsl_hthread){ .obj = thread, .name = "leaker" };
	root(b, thread, DSL_ROOT_THREAD);
	if (inside_put && (k == 1 || k == 2))
		root(b, by_id + 1, DSL_ROOT_STACK_LOCAL); /* its table (map()) */
	local = list(b, 40 * k, C_VAL);
	if (inside_put && (k == 1 || k == 2))
		root(b, local + 1, DSL_ROOT_STACK_LOCAL); /* its array (list()), first */
	root(b, local, DSL_ROOT_STACK_LOCAL);
	for (uint32_t i = 0; i < tmp[k]; i++)
		root(b, obj(b, C_TMP, 16), DSL_ROOT_STACK_LOCAL);
	/* a parked virtual thread's local (the copy's mark: its stack chunk),
	 * after the platform thread's: not that thread's */
	b->roots[b->nroots++] = (struct dsl_hroot){ .obj = list(b, 45 * k, C_VAL),
						    .kind = DSL_ROOT_STACK_LOCAL, .vthread = true };
	/* one whose tid the mark read (its chunk's continuation, its thread) */
	b->roots[b->nroots++] = (struct dsl_hroot){ .obj = list(b, 50 * k, C_VAL),
						    .kind = DSL_ROOT_STACK_LOCAL, .vthread = true,
						    .vtid = 21 };
	small = list(b, 10 * k, C_TMP);
	root(b, small, DSL_ROOT_JNI_GLOBAL);
	finish(b);
}

static const struct heapgrowth_holder *find(const struct heapgrowth_result *r, const char *path)
{
	for (uint32_t i = 0; i < r->nholders; i++)
		if (!strcmp(r->holders[i].path, path))
			return &r->holders[i];
	return NULL;
}

static int64_t class_growth(const struct heapgrowth_holder *h, const char *cls)
{
	int64_t g = 0;

	for (uint32_t i = 0; i < h->nclasses; i++)
		if (!strcmp(h->classes[i].name, cls))
			g += h->classes[i].growth;
	return g;
}

static void holders(bool parents)
{
	struct b *b = calloc(1, sizeof(*b));
	struct heapgrowth *g = heapgrowth_new();
	struct heapgrowth_result r;
	const struct heapgrowth_holder *h;

	assert_non_null(b);
	assert_non_null(g);
	with_parents = parents;
	for (int k = 0; k < 4; k++) {
		snapshot(b, k);
		assert_int_equal(heapgrowth_add(g, &b->h, 10.0 * k, 3 * (uint64_t)k), 0);
		if (k < 3) {
			free(b->refs);
			free(b->via);
			free(b->parent);
			b->parent = NULL;
		}
	}
	assert_int_equal(heapgrowth_rank(g, NULL, &r), 0);
	for (uint32_t i = 0; i < r.nholders; i++)
		print_message("holder %s: +%lld\n", r.holders[i].path,
			      (long long)r.holders[i].growth);
	assert_int_equal(r.nholders, 5);
	assert_int_equal(r.nsnaps, 4);
	/* the static map: its nodes and values, chained or not, one place each */
	h = find(&r, "class Leaker -> static Leaker.BY_ID (java.util.HashMap)");
	assert_non_null(h);
	assert_int_equal(class_growth(h, "java.util.HashMap$Node"), 120);
	assert_int_equal(class_growth(h, "LeakValue"), 120);
	assert_int_equal(h->growth, 240);
	assert_int_equal(h->intervals, 3);
	assert_true(h->one_object);
	assert_true(h->chance < 1.0 / 23);
	assert_int_equal(h->count[0], 20);
	assert_int_equal(h->count[3], 260);
	/* the list held by a local variable of thread "leaker" */
	h = find(&r, "a local variable in thread \"leaker\" (java.util.ArrayList)");
	assert_non_null(h);
	assert_int_equal(class_growth(h, "LeakValue"), 120);
	/* the list a parked virtual thread's local holds: no thread named */
	h = find(&r, "a local variable in a virtual thread (java.util.ArrayList)");
	assert_non_null(h);
	assert_int_equal(class_growth(h, "LeakValue"), 135);
	/* one whose tid is known: named as Thread.dump_to_file names it */
	h = find(&r, "a local variable in virtual thread #21 (java.util.ArrayList)");
	assert_non_null(h);
	assert_int_equal(class_growth(h, "LeakValue"), 150);
	/* an application object's list: held by that field */
	h = find(&r, "class Leaker -> static Leaker.APP -> App.items (java.util.ArrayList)");
	assert_non_null(h);
	assert_int_equal(h->growth, 105);
	/* the biggest growth first */
	assert_true(r.holders[0].growth >= r.holders[1].growth);
	/* the last heap's objects know their holder */
	assert_int_equal(heapgrowth_holder_of(g, r.holders[0].sample_obj), 0);
	assert_int_equal(heapgrowth_holder_of(g, 0), -1); /* the class object */
	/* a lower minimum makes the small list a suspect too */
	{
		struct heapgrowth_opts o = { .min_growth = 30 };

		assert_int_equal(heapgrowth_rank(g, &o, &r), 0);
		assert_int_equal(r.nholders, 6);
		assert_non_null(find(&r, "jni_global (java.util.ArrayList)"));
	}
	free(b->refs);
	free(b->via);
	free(b->parent);
	with_parents = false;
	heapgrowth_free(g);
	heapgrowth_free(NULL);
	free(b);
}

static void test_holders(void **state)
{
	(void)state;
	holders(false);
}

/* The same heaps, the parents from the root search (the leak search's way):
 * the same holders and counts. */
static void test_holders_parents(void **state)
{
	(void)state;
	holders(true);
}

/* The same heaps, a thread inside HashMap.putVal() and ArrayList.add() in
 * two of them (the table and the local list's array local variables there
 * too): the same holders, each one's objects below it in every snapshot
 * (e2e leaks_growth lost a leak's growth so once). */
static void test_holders_inside_put(void **state)
{
	(void)state;
	inside_put = true;
	holders(false);
	holders(true);
	inside_put = false;
}

/* A growing map in an application object (a server's session manager) that
 * the shortest root path reaches one way in some snapshots and another way
 * in others: through a worker thread (its context class loader, during a
 * request) and through a static's chain. Its growth is the same place. */
static void test_moving_path(void **state)
{
	struct b *b = calloc(1, sizeof(*b));
	struct heapgrowth *g = heapgrowth_new();
	struct heapgrowth_result r;

	(void)state;
	assert_non_null(b);
	assert_non_null(g);
	for (int k = 0; k < 4; k++) {
		uint32_t mirror, mgr, app, thread, l;

		b->ne = b->n = b->nroots = b->nthreads = 0;
		classes(b);
		mirror = obj(b, C_THREAD, 200);
		b->cls[C_LEAK].obj = mirror;
		root(b, mirror, DSL_ROOT_SYSTEM_CLASS);
		mgr = obj(b, C_MGR, 24);
		ref(b, mgr, map(b, C_MAP, 10 + 40 * k, C_VAL), DSL_REF_FIELD, 0);
		app = obj(b, C_APP, 16);
		ref(b, mirror, app, DSL_REF_STATIC_FIELD, 3);
		l = list(b, 3, C_CACHE);
		ref(b, app, l, DSL_REF_FIELD, 0);
		thread = obj(b, C_THREAD, 120);
		b->threads[b->nthreads++] = (struct dsl_hthread){ .obj = thread, .name = "w" };
		root(b, thread, DSL_ROOT_THREAD);
		if (k % 2) /* a static's chain: Leaker.APP -> App.items -> the list -> mgr */
			ref(b, l + 1, mgr, DSL_REF_ARRAY_ELEMENT, 3);
		else       /* only the worker thread holds it now */
			ref(b, thread, mgr, DSL_REF_FIELD, -1);
		finish(b);
		assert_int_equal(heapgrowth_add(g, &b->h, 10.0 * k, (uint64_t)k), 0);
		if (k < 3) {
			free(b->refs);
			free(b->via);
		}
	}
	assert_int_equal(heapgrowth_rank(g, NULL, &r), 0);
	for (uint32_t i = 0; i < r.nholders; i++)
		print_message("holder %s: +%lld\n", r.holders[i].path,
			      (long long)r.holders[i].growth);
	assert_int_equal(r.nholders, 1);
	assert_int_equal(r.holders[0].growth, 240); /* 120 nodes and their values */
	assert_non_null(strstr(r.holders[0].path, "Manager.sessions (java.util.HashMap)"));
	free(b->refs);
	free(b->via);
	heapgrowth_free(g);
	free(b);
}

static void test_edges(void **state)
{
	struct heapgrowth *g = heapgrowth_new();
	struct heapgrowth_result r;
	struct dsl_heap h = { 0 };

	(void)state;
	assert_int_equal(heapgrowth_add(g, &h, 0, 0), -EINVAL); /* no root paths */
	assert_int_equal(heapgrowth_rank(g, NULL, &r), -EINVAL);
	assert_true(heapgrowth_internal("java.util.HashMap"));
	assert_true(heapgrowth_internal("int[]"));
	assert_true(heapgrowth_internal("java.lang.Object[][]"));
	assert_false(heapgrowth_internal("org.apache.catalina.session.StandardManager"));
	assert_false(heapgrowth_internal("Leaker[]"));
	heapgrowth_free(g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_holders),
		cmocka_unit_test(test_holders_parents),
		cmocka_unit_test(test_holders_inside_put),
		cmocka_unit_test(test_moving_path),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
