// SPDX-License-Identifier: GPL-2.0
/* test_dsl_eval.c - the five seed programs on heaps built to mirror their Java
 * workloads (exact answers by construction), the walk's order rules,
 * expression semantics, and run-time errors. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dsl/dsl.h"
#include "test_dsl_heap.h"

/* Compile src against h's schema and run it: the JSON, or "ERR " + rendered diagnostics. */
static char *run(const char *src, const struct dsl_heap *h)
{
	struct dsl_schema schema;
	struct dsl_diags *d = dsl_diags_new();
	struct dsl_program *p;
	char *out = NULL;
	size_t len = 0;

	dsl_heap_schema(h, &schema);
	int rc = dsl_compile(src, strlen(src), "q.mq", &schema, &p, d);

	if (!rc) {
		FILE *f = open_memstream(&out, &len);

		rc = dsl_run(p, h, f, d);
		fclose(f);
		dsl_program_free(p);
	}
	if (rc) {
		char *r = dsl_diags_render_str(d);

		free(out);
		if (asprintf(&out, "ERR %s", r) < 0)
			out = NULL;
		free(r);
	}
	dsl_diags_free(d);
	return out;
}

static char *slurp(const char *name)
{
	char path[512];
	const char *file = __FILE__;
	const char *slash = strstr(file, "tests/unit/");
	FILE *f;

	snprintf(path, sizeof(path), "%.*stests/dsl/%s", slash ? (int)(slash - file) : 0, file, name);
	f = fopen(path, "r");
	assert_non_null(f);
	char *buf = calloc(1, 1 << 16);
	size_t n = fread(buf, 1, (1 << 16) - 1, f);

	buf[n] = '\0';
	fclose(f);
	return buf;
}

#define ASSERT_RUN(want, src, heap)                                     \
	do {                                                            \
		char *got_ = run((src), (heap));                        \
		if (!got_ || strcmp(got_, (want)))                      \
			fail_msg("%s\ngot:  %s\nwant: %s", (src), got_, (want));   \
		free(got_);                                             \
	} while (0)

#define ASSERT_FILE(want, file, heap)                                   \
	do {                                                            \
		char *src_ = slurp(file);                               \
		ASSERT_RUN(want, src_, heap);                           \
		free(src_);                                             \
	} while (0)

static const struct dsl_hfield f_holder[] = { { "data", DSL_FK_FLOAT } };
static const struct dsl_hfield f_other[] = { { "x", DSL_FK_INT } };

/* Seed 1: objects of several classes, only some with `data`. */
static void test_value_assertion(void **state)
{
	struct hb *b = calloc(1, sizeof(*b));
	(void)state;
	uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t holder = hb_class(b, "com.example.Holder", obj, DSL_NOOBJ, f_holder, 1);
	uint32_t other = hb_class(b, "com.example.Other", obj, DSL_NOOBJ, f_other, 1);

	hb_float(b, hb_obj(b, holder, 16), 0, 1.0);
	hb_int(b, hb_obj(b, other, 16), 0, 3);
	uint32_t pi = hb_obj(b, holder, 16);
	hb_float(b, pi, 0, 3.1415);
	hb_obj(b, holder, 16); /* data is null */
	ASSERT_FILE("{\"all\":{\"all-jvm\":{\"fault\":true}}}\n", "01_value_assertion.mq", hb_heap(b));
	/* the same heap without the value */
	hb_float(b, pi, 0, 3.2);
	ASSERT_FILE("{\"all\":{\"all-jvm\":{\"fault\":false}}}\n", "01_value_assertion.mq", hb_heap(b));
	free(b);
}

static const struct dsl_hfield f_order[] = { { "field", DSL_FK_INT }, { "customer", DSL_FK_REF } };

/* Seed 2: pseudojbb's Orders, one of them planted with the special value. */
static void test_pseudojbb(void **state)
{
	struct hb *b = calloc(1, sizeof(*b));
	(void)state;
	uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t order = hb_class(b, "spec.jbb.Order", obj, DSL_NOOBJ, f_order, 2);
	uint32_t cust = hb_class(b, "spec.jbb.Customer", obj, DSL_NOOBJ, f_other, 1);
	uint32_t c = hb_obj(b, cust, 24);

	for (int i = 0; i < 5; i++) {
		uint32_t o = hb_obj(b, order, 32);

		hb_int(b, o, 0, i);
		hb_field_ref(b, o, 1, c);
	}
	ASSERT_FILE("{\"all\":{\"all-jvm\":{\"fault\":false}}}\n", "02_pseudojbb.mq", hb_heap(b));
	uint32_t planted = hb_obj(b, order, 32);
	hb_int(b, planted, 0, 4242);
	ASSERT_FILE("{\"all\":{\"all-jvm\":{\"fault\":true}}}\n", "02_pseudojbb.mq", hb_heap(b));
	free(b);
}

static const struct dsl_hfield f_node[] = { { "next", DSL_FK_REF }, { "other", DSL_FK_REF } };

/* Seed 3: two threads and what they reach; a global graph they do not reach. */
static void test_reachable_from_threads(void **state)
{
	struct hb *b = calloc(1, sizeof(*b));
	(void)state;
	uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t thr = hb_class(b, "java.lang.Thread", obj, DSL_NOOBJ, f_node, 2);
	uint32_t node = hb_class(b, "app.Node", obj, DSL_NOOBJ, f_node, 2);
	uint32_t e = hb_obj(b, node, 1000), f = hb_obj(b, node, 8); /* global only */
	uint32_t t1 = hb_obj(b, thr, 100), t2 = hb_obj(b, thr, 120);
	uint32_t a = hb_obj(b, node, 16), bb = hb_obj(b, node, 24);
	uint32_t c = hb_obj(b, node, 32), d = hb_obj(b, node, 40);

	hb_field_ref(b, e, 0, f);
	hb_field_ref(b, t1, 0, a);
	hb_field_ref(b, a, 0, bb);
	hb_field_ref(b, t2, 0, c);
	hb_field_ref(b, c, 0, a); /* already claimed */
	hb_field_ref(b, c, 1, d);
	hb_root(b, e, DSL_ROOT_JNI_GLOBAL);
	hb_root(b, t1, DSL_ROOT_THREAD);
	hb_root(b, t2, DSL_ROOT_THREAD);
	b->threads[0] = (struct dsl_hthread){ .obj = t1, .name = "main" };
	b->threads[1] = (struct dsl_hthread){ .obj = t2, .name = "worker" };
	b->nthreads = 2;
	/* roots count too: 6 objects, 100+120+16+24+32+40 bytes */
	ASSERT_FILE("{\"all\":{\"all-jvm\":{\"nbObjects\":6,\"nbSize\":332}}}\n",
		    "03_reachable_from_threads.mq", hb_heap(b));
	free(b);
}

/* The walk decides "THIS in Unassigned and REFERRER in ENTITY" itself
 * (walk.c, the seeds' reachability): on random heaps with two sets
 * competing, the same answers as a membership the evaluator computes. */
static void test_reach_membership_same(void **state)
{
	static const char *const forms[] = {
		"THIS in Unassigned and REFERRER in ENTITY",  /* decided by the walk */
		"REFERRER in ENTITY and THIS in Unassigned",  /* decided by the walk */
		"THIS in Unassigned and REFERRER in ENTITY and true", /* evaluated */
	};
	const char *head = "set_type T:\n"
			   "  roots <- threads\n"
			   "  membership <- ";
	const char *tail =
		"\n"
		"  on_inclusion <- [ n <- n + 1  size <- size + THIS.size ]\n"
		"  n : int <- 0\n  size : int <- 0\n"
		"set_type G:\n"
		"  roots <- #[]\n"
		"  membership <- REFERRER in ENTITY or THIS.size > 90\n"
		"  on_inclusion <- [ n <- n + 1 ]\n"
		"  n : int <- 0\n"
		"instances_for T have_names = \"t\"\n"
		"instances_for G have_names = \"g\"\n";
	unsigned seed = 12345;
	(void)state;

	for (int round = 0; round < 200; round++) {
		struct hb *b = calloc(1, sizeof(*b));
		char src[3][1024], *out[3];
		uint32_t obj, thr, node, n;

		assert_non_null(b);
		obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
		thr = hb_class(b, "java.lang.Thread", obj, DSL_NOOBJ, f_node, 2);
		node = hb_class(b, "app.Node", obj, DSL_NOOBJ, f_node, 2);
		n = 4 + (uint32_t)(rand_r(&seed) % (HB_MAX - 4));
		for (uint32_t i = 0; i < n; i++)
			hb_obj(b, i < 2 ? thr : node, 8 + (uint64_t)(rand_r(&seed) % 100));
		for (uint32_t k = (uint32_t)(rand_r(&seed) % (2 * n)); k; k--)
			hb_ref(b, (uint32_t)rand_r(&seed) % n, (uint32_t)rand_r(&seed) % n,
			       DSL_REF_FIELD, rand_r(&seed) % 2);
		for (uint32_t t = 0; t < 2; t++) {
			hb_root(b, t, DSL_ROOT_THREAD);
			b->threads[t] = (struct dsl_hthread){ .obj = t, .name = t ? "w" : "main" };
		}
		if (rand_r(&seed) % 2)
			hb_root(b, 2, DSL_ROOT_JNI_GLOBAL);
		b->nthreads = 2;
		for (int f = 0; f < 3; f++) {
			snprintf(src[f], sizeof(src[f]), "%s%s%s", head, forms[f], tail);
			out[f] = run(src[f], hb_heap(b));
			assert_non_null(out[f]);
		}
		for (int f = 0; f < 2; f++)
			if (strcmp(out[f], out[2]))
				fail_msg("round %d: %s\ngot:  %s\nwant: %s", round, forms[f], out[f],
					 out[2]);
		for (int f = 0; f < 3; f++)
			free(out[f]);
		/* every membership reachability (the walk's own drain), a set
		 * without one among them: the same as the evaluator's */
		for (int f = 0; f < 3; f++) {
			snprintf(src[f], sizeof(src[f]),
				 "%s%s\n  on_inclusion <- [ n <- n + 1  size <- size + THIS.size ]\n"
				 "  n : int <- 0\n  size : int <- 0\n"
				 "set_type B:\n  roots <- objects.filter([it | it.size > 90])\n"
				 "  membership <- %s\n  on_inclusion <- [ n <- n + 1 ]\n  n : int <- 0\n"
				 "set_type C:\n  roots <- objects.filter([it | it.size < 20])\n"
				 "  on_inclusion <- [ n <- n + 1 ]\n  n : int <- 0\n"
				 "instances_for C have_names = \"c\"\n"
				 "instances_for T have_names = \"t\"\n"
				 "instances_for B have_names = \"b\"\n", head, forms[f], forms[f]);
			out[f] = run(src[f], hb_heap(b));
			assert_non_null(out[f]);
		}
		for (int f = 0; f < 2; f++)
			if (strcmp(out[f], out[2]))
				fail_msg("round %d, all reach: %s\ngot:  %s\nwant: %s", round, forms[f],
					 out[f], out[2]);
		for (int f = 0; f < 3; f++)
			free(out[f]);
		free(b);
	}
}

static const struct dsl_hfield f_sized[] = { { "next", DSL_FK_REF }, { "size", DSL_FK_INT } };

/* run() with the reachability walk in @threads threads (reach.c). */
static char *run_threads(const char *src, const struct dsl_heap *h, const char *threads)
{
	char *out;

	setenv("MEMTRACE_DSL_THREADS", threads, 1);
	out = run(src, h);
	unsetenv("MEMTRACE_DSL_THREADS");
	return out;
}

/* reach.c's two threads claim what the walk alone claims: on random heaps,
 * programs it takes (one reachability set, running sums or none, a set of
 * roots only beside it; objects of a class whose Java field `size` THIS.size
 * reads summed by the evaluator after, or the claims undone where that field
 * holds a float) and those it leaves to the walk (two reachability sets, an
 * on_inclusion that is not sums), the same answers with
 * MEMTRACE_DSL_THREADS=2 as =1. */
static void test_reach_threads_same(void **state)
{
	static const char *const progs[] = {
		"set_type T:\n  roots <- threads\n"
		"  membership <- THIS in Unassigned and REFERRER in ENTITY\n"
		"  on_inclusion <- [ n <- n + 1  s <- s + THIS.size  s <- s + 3 ]\n"
		"  n : int <- 0\n  s : int <- 0\n"
		"instances_for T have_names = \"t\"\n",
		"set_type C:\n  roots <- objects.filter([it | it.size < 20])\n"
		"  on_inclusion <- [ n <- n + 1 ]\n  n : int <- 0\n"
		"set_type T:\n  roots <- threads\n"
		"  membership <- THIS in Unassigned and REFERRER in ENTITY\n"
		"  on_inclusion <- [ n <- n + 1  s <- s + THIS.size ]\n"
		"  n : int <- 0\n  s : int <- 0\n"
		"instances_for C have_names = \"c\"\n"
		"instances_for T have_names = \"t\"\n",
		"set_type T:\n  roots <- threads\n"
		"  membership <- THIS in Unassigned and REFERRER in ENTITY\n"
		"  n : int <- 0\n"
		"set_type U:\n  roots <- objects.filter([it | it.size > 90])\n"
		"  membership <- THIS in Unassigned and REFERRER in ENTITY\n"
		"  on_inclusion <- [ n <- n + 1 ]\n  n : int <- 0\n"
		"instances_for T have_names = \"t\"\n"
		"instances_for U have_names = \"u\"\n",
		"set_type T:\n  roots <- threads\n"
		"  membership <- THIS in Unassigned and REFERRER in ENTITY\n"
		"  on_inclusion <- [ n <- n + 1  m <- THIS.size ]\n"
		"  n : int <- 0\n  m : int <- 0\n"
		"instances_for T have_names = \"t\"\n",
		"set_type T:\n  roots <- threads\n"
		"  membership <- THIS in Unassigned and REFERRER in ENTITY\n"
		"  on_inclusion <- [ s <- s + THIS.size ]\n  s : int <- 0\n"
		"instances_for T have_names = \"t\"\n",
	};
	unsigned seed = 4242;
	(void)state;

	for (int round = 0; round < 150; round++) {
		struct hb *b = calloc(1, sizeof(*b));
		uint32_t obj, thr, node, sized, n;

		assert_non_null(b);
		obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
		thr = hb_class(b, "java.lang.Thread", obj, DSL_NOOBJ, f_node, 2);
		node = hb_class(b, "app.Node", obj, DSL_NOOBJ, f_node, 2);
		sized = hb_class(b, "app.Sized", obj, DSL_NOOBJ, f_sized, 2);
		n = 4 + (uint32_t)(rand_r(&seed) % (HB_MAX - 4));
		for (uint32_t i = 0; i < n; i++) {
			/* a Sized now and then: THIS.size reads its field `size` */
			uint32_t o = hb_obj(b, i < 2 ? thr : round % 3 || rand_r(&seed) % 4 ? node :
								   sized,
					    8 + (uint64_t)(rand_r(&seed) % 100));

			/* a float now and then: the two threads' claims undone */
			if (b->obj[o].cls == sized && round % 5 == 1 && i % 2)
				hb_float(b, o, 1, 0.5 + i);
			else if (b->obj[o].cls == sized)
				hb_int(b, o, 1, 100000 + (int64_t)i);
		}
		for (uint32_t k = (uint32_t)(rand_r(&seed) % (2 * n)); k; k--)
			hb_ref(b, (uint32_t)rand_r(&seed) % n, (uint32_t)rand_r(&seed) % n,
			       DSL_REF_FIELD, rand_r(&seed) % 2);
		for (uint32_t t = 0; t < 2; t++) {
			hb_root(b, t, DSL_ROOT_THREAD);
			b->threads[t] = (struct dsl_hthread){ .obj = t, .name = t ? "w" : "main" };
		}
		b->nthreads = 2;
		for (size_t p = 0; p < sizeof(progs) / sizeof(progs[0]); p++) {
			char *one = run_threads(progs[p], hb_heap(b), "1");
			char *two = run_threads(progs[p], hb_heap(b), "2");

			assert_non_null(one);
			assert_non_null(two);
			if (strcmp(one, two))
				fail_msg("round %d, program %zu:\ntwo threads: %s\none: %s", round, p,
					 two, one);
			free(one);
			free(two);
		}
		free(b);
	}
}

/* The two threads on a heap of 300 k objects (a random graph with long
 * chains, hand-overs between the threads all along): the count and bytes of
 * what the threads reach, as one thread finds them. */
static void test_reach_threads_big(void **state)
{
	const uint32_t n = 300000;
	struct dsl_hobject *objs = calloc(n, sizeof(*objs));
	struct dsl_href *refs = calloc(3 * (size_t)n, sizeof(*refs));
	struct dsl_hclass cls[2] = {
		{ .name = "java.lang.Thread", .obj = DSL_NOOBJ, .super = DSL_NOOBJ,
		  .loader = DSL_NOOBJ },
		{ .name = "app.Node", .obj = DSL_NOOBJ, .super = DSL_NOOBJ, .loader = DSL_NOOBJ },
	};
	struct dsl_hroot roots[2] = { { .obj = 0, .kind = DSL_ROOT_THREAD },
				      { .obj = 1, .kind = DSL_ROOT_THREAD } };
	struct dsl_hthread threads[2] = { { .obj = 0, .name = "main" }, { .obj = 1, .name = "w" } };
	struct dsl_heap h;
	unsigned seed = 99;
	uint32_t nr = 0;
	char *one, *two, *src;
	(void)state;

	assert_non_null(objs);
	assert_non_null(refs);
	for (uint32_t o = 0; o < n; o++) {
		/* a fifth lead nowhere */
		uint32_t k = o < 2 ? 3 : rand_r(&seed) % 5 == 0 ? 0 : 1 + (uint32_t)(rand_r(&seed) % 3);

		objs[o] = (struct dsl_hobject){ .id = 1000 + o, .size = 16 + o % 50,
						.cls = o < 2 ? 0 : 1, .length = -1,
						.ref_first = nr };
		/* the others lead on to the next (long chains) and anywhere */
		for (uint32_t j = 0; j < k && nr < 3 * n; j++)
			refs[nr++] = (struct dsl_href){ .to = j == 0 && o + 1 < n ?
							o + 1 : (uint32_t)rand_r(&seed) % n,
							.index = -1, .kind = DSL_REF_FIELD };
		objs[o].nrefs = nr - objs[o].ref_first;
	}
	h = (struct dsl_heap){ .objects = objs, .nobjects = n, .classes = cls, .nclasses = 2,
			       .refs = refs, .nrefs = nr, .roots = roots, .nroots = 2,
			       .threads = threads, .nthreads = 2 };
	src = slurp("03_reachable_from_threads.mq");
	one = run_threads(src, &h, "1");
	two = run_threads(src, &h, "2");
	free(src);
	assert_non_null(one);
	assert_non_null(two);
	assert_null(strstr(one, "ERR"));
	assert_string_equal(two, one);
	free(one);
	free(two);
	free(objs);
	free(refs);
}

/* run() with on_inclusion's running sums by accum.c (@fast) or the evaluator. */
static char *run_mode(const char *src, const struct dsl_heap *h, bool fast)
{
	char *out;

	if (fast)
		unsetenv("MEMTRACE_DSL_NO_ACCUM");
	else
		setenv("MEMTRACE_DSL_NO_ACCUM", "1", 1);
	out = run(src, h);
	unsetenv("MEMTRACE_DSL_NO_ACCUM");
	return out;
}

/* accum.c runs `P <- P + 1`, `P <- P + THIS.size` as additions: on random
 * heaps, with a class whose Java field `size` THIS.size then reads, the same
 * answers as the evaluator, for the lambdas it takes and those it leaves
 * (floats, negated literals, other statements, a null property's error),
 * wrapping as the evaluator does. */
static void test_accum_same(void **state)
{
	static const char *const forms[] = {
		"[ n <- n + 1  s <- s + THIS.size ]",
		"[ s <- THIS.size + s  n <- 2 + n  n <- n + 5 ]",
		"[ n <- n + -3  f <- f + 1 ]",
		"[ big <- big + 1  n <- n + THIS.size ]",
		"[ n <- n + 1  s <- n ]",
		"[ z <- z + 1 ]",
	};
	unsigned seed = 777;
	(void)state;

	for (int round = 0; round < 60; round++) {
		struct hb *b = calloc(1, sizeof(*b));
		uint32_t obj, thr, node, sized, n;

		assert_non_null(b);
		obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
		thr = hb_class(b, "java.lang.Thread", obj, DSL_NOOBJ, f_node, 2);
		node = hb_class(b, "app.Node", obj, DSL_NOOBJ, f_node, 2);
		sized = hb_class(b, "app.Sized", obj, DSL_NOOBJ, f_sized, 2);
		n = 4 + (uint32_t)(rand_r(&seed) % (HB_MAX - 4));
		for (uint32_t i = 0; i < n; i++) {
			uint32_t o = hb_obj(b, i < 2 ? thr : rand_r(&seed) % 3 ? node : sized,
					    8 + (uint64_t)(rand_r(&seed) % 100));

			if (b->obj[o].cls == sized)
				hb_int(b, o, 1, 100000 + (int64_t)i);
		}
		for (uint32_t k = (uint32_t)(rand_r(&seed) % (2 * n)); k; k--)
			hb_ref(b, (uint32_t)rand_r(&seed) % n, (uint32_t)rand_r(&seed) % n,
			       DSL_REF_FIELD, 0);
		for (uint32_t t = 0; t < 2; t++) {
			hb_root(b, t, DSL_ROOT_THREAD);
			b->threads[t] = (struct dsl_hthread){ .obj = t, .name = t ? "w" : "main" };
		}
		b->nthreads = 2;
		for (size_t f = 0; f < sizeof(forms) / sizeof(forms[0]); f++) {
			char src[1024], *fast, *slow;

			snprintf(src, sizeof(src),
				 "set_type T:\n"
				 "  roots <- threads\n"
				 "  membership <- THIS in Unassigned and REFERRER in ENTITY\n"
				 "  on_inclusion <- %s\n"
				 "  n : int <- 0\n  s : int <- 0\n  f : float <- 0\n"
				 "  big : int <- 9223372036854775807\n  z : int <- null\n"
				 "instances_for T have_names = \"t\"\n", forms[f]);
			fast = run_mode(src, hb_heap(b), true);
			slow = run_mode(src, hb_heap(b), false);
			assert_non_null(fast);
			assert_non_null(slow);
			if (strcmp(fast, slow))
				fail_msg("round %d: %s\nfast: %s\nslow: %s", round, forms[f], fast,
					 slow);
			if (f == 5 && strncmp(fast, "ERR ", 4)) /* arithmetic on null */
				fail_msg("round %d: %s: no error: %s", round, forms[f], fast);
			if (f == 3 && !strstr(fast, "\"big\":-922337203685477"))
				fail_msg("round %d: %s: did not wrap: %s", round, forms[f], fast);
			free(fast);
			free(slow);
		}
		free(b);
	}
}

static const struct dsl_hfield f_entry[] = {
	{ "key", DSL_FK_REF }, { "value", DSL_FK_REF }, { "next", DSL_FK_REF } };
static const struct dsl_hfield f_map[] = { { "table", DSL_FK_REF } };
static const struct dsl_hfield f_k3[] = { { "state", DSL_FK_REF } };

/* Seed 4: K3-Al aspects in a HashMap keyed by the aspectized object. */
static void test_k3(void **state)
{
	struct hb *b = calloc(1, sizeof(*b));
	(void)state;
	uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t map = hb_class(b, "java.util.HashMap", obj, DSL_NOOBJ, f_map, 1);
	uint32_t tab = hb_class(b, "[Ljava.util.HashMap$Entry;", obj, DSL_NOOBJ, NULL, 0);
	uint32_t k3 = hb_class(b, "org.k3.K3Object", obj, DSL_NOOBJ, f_k3, 1);
	uint32_t ent = hb_class(b, "java.util.HashMap$Entry", obj, DSL_NOOBJ, f_entry, 3);
	uint32_t asp = hb_class(b, "org.k3.AspectState", obj, DSL_NOOBJ, f_k3, 1);
	uint32_t bytes = hb_class(b, "[B", obj, DSL_NOOBJ, NULL, 0);

	uint32_t m = hb_obj(b, map, 48), t = hb_obj(b, tab, 80);
	uint32_t k1 = hb_obj(b, k3, 24), k2 = hb_obj(b, k3, 24);
	uint32_t e1 = hb_obj(b, ent, 32), e2 = hb_obj(b, ent, 32);
	uint32_t d1 = hb_obj(b, bytes, 200), d2 = hb_obj(b, bytes, 300);
	uint32_t a1 = hb_obj(b, asp, 40), a2 = hb_obj(b, asp, 40);
	uint32_t s1 = hb_obj(b, bytes, 1000), s2 = hb_obj(b, bytes, 2000);

	b->obj[k1].id = 100;
	b->obj[k2].id = 200;
	hb_field_ref(b, m, 0, t);
	hb_ref(b, t, e1, DSL_REF_ARRAY_ELEMENT, 0);
	hb_ref(b, t, e2, DSL_REF_ARRAY_ELEMENT, 1);
	hb_field_ref(b, k1, 0, d1);
	hb_field_ref(b, k2, 0, d2);
	hb_field_ref(b, e1, 0, k1);
	hb_field_ref(b, e1, 1, a1);
	hb_field_ref(b, e2, 0, k2);
	hb_field_ref(b, e2, 1, a2);
	hb_field_ref(b, a1, 0, s1);
	hb_field_ref(b, a2, 0, s2);
	hb_root(b, m, DSL_ROOT_STACK_LOCAL);
	hb_root(b, k1, DSL_ROOT_STACK_LOCAL);
	hb_root(b, k2, DSL_ROOT_STACK_LOCAL);
	/* k1: 24 + 200 + entry 32 + aspect 40 + 1000; k2: 24 + 300 + 32 + 40 + 2000 */
	ASSERT_FILE("{\"all\":{\"100\":{\"nbSize\":1296},\"200\":{\"nbSize\":2396}}}\n",
		    "04_k3_aspects.mq", hb_heap(b));
	free(b);
}

/* Seed 5: three class loaders with known payloads. */
static void test_top_components(void **state)
{
	struct hb *b = calloc(1, sizeof(*b));
	(void)state;
	uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t ldr = hb_class(b, "org.osgi.BundleLoader", obj, DSL_NOOBJ, NULL, 0);
	uint32_t bytes = hb_class(b, "[B", obj, DSL_NOOBJ, NULL, 0);
	uint32_t l1 = hb_obj(b, ldr, 64), l2 = hb_obj(b, ldr, 64), l3 = hb_obj(b, ldr, 64);

	b->loaders[0] = (struct dsl_hloader){ .obj = l1, .id = 11 };
	b->loaders[1] = (struct dsl_hloader){ .obj = l2, .id = 22 };
	b->loaders[2] = (struct dsl_hloader){ .obj = l3, .id = 33 };
	b->nloaders = 3;
	uint32_t c1 = hb_class(b, "com.b1.Main", obj, 0, f_node, 2);
	uint32_t c2 = hb_class(b, "com.b2.Main", obj, 1, f_node, 2);
	uint32_t c3 = hb_class(b, "com.b3.Main", obj, 2, f_node, 2);
	uint32_t m1 = hb_obj(b, c1, 16), m2 = hb_obj(b, c2, 16), m3 = hb_obj(b, c3, 16);
	uint32_t p1 = hb_obj(b, bytes, 1000), p2 = hb_obj(b, bytes, 2000);
	uint32_t p2b = hb_obj(b, bytes, 500), p3 = hb_obj(b, bytes, 3000);
	uint32_t orphan = hb_obj(b, bytes, 77);

	hb_field_ref(b, m1, 0, p1);
	hb_field_ref(b, m2, 0, p2);
	hb_field_ref(b, m2, 1, p2b);
	hb_field_ref(b, m3, 0, p3);
	hb_root(b, l1, DSL_ROOT_JNI_GLOBAL);
	hb_root(b, m1, DSL_ROOT_STACK_LOCAL);
	hb_root(b, m2, DSL_ROOT_STACK_LOCAL);
	hb_root(b, m3, DSL_ROOT_JNI_LOCAL);
	hb_root(b, orphan, DSL_ROOT_STACK_LOCAL);
	ASSERT_FILE("{\"Component\":{\"11\":{\"nbSize\":1080},\"22\":{\"nbSize\":2580},"
		    "\"33\":{\"nbSize\":3080}}}\n", "05_top_components.mq", hb_heap(b));
	free(b);
}

/* An object claimed late (in the object pass) still passes membership on. */
static void test_late_claim(void **state)
{
	struct hb *b = calloc(1, sizeof(*b));
	(void)state;
	uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t plain = hb_class(b, "app.Plain", obj, DSL_NOOBJ, f_node, 2);
	uint32_t special = hb_class(b, "app.Special", obj, DSL_NOOBJ, f_node, 2);
	uint32_t p = hb_obj(b, plain, 10), q = hb_obj(b, plain, 20);
	uint32_t s = hb_obj(b, special, 30), r = hb_obj(b, plain, 40);

	hb_field_ref(b, p, 0, q);  /* offered first: P is not claimed yet */
	hb_field_ref(b, s, 0, p);  /* S is not claimed yet either */
	hb_field_ref(b, r, 0, s);  /* claims S, whose references are offered again */
	/* S (30), then P (10) and Q (20) through S's re-offered reference */
	ASSERT_RUN("{\"S\":{\"s\":{\"n\":3,\"size\":60}}}\n",
		   "set_type S:\n"
		   "  roots <- #[]\n"
		   "  membership <- REFERRER in ENTITY or THIS is Special\n"
		   "  on_inclusion <- [ n <- n + 1  size <- size + THIS.size ]\n"
		   "  n : int <- 0\n  size : int <- 0\n"
		   "instances_for S have_names = \"s\"\n", hb_heap(b));
	free(b);
}

static const struct dsl_hfield f_val[] = {
	{ "v", DSL_FK_INT }, { "name", DSL_FK_STRING }, { "w", DSL_FK_INT } };
static const struct dsl_hfield f_f[] = { { "v", DSL_FK_FLOAT } };

/* Expressions: value -> JSON (chibicc's ASSERT table), on a small heap. */
static const struct { const char *type, *expr, *json; } exprs[] = {
	{ "int", "1 + 2 * 3", "7" },
	{ "int", "(1 + 2) * 3", "9" },
	{ "int", "7 / 2", "3" },
	{ "int", "7 % 3", "1" },
	{ "int", "-9223372036854775807 - 2", "9223372036854775807" },
	{ "float", "7 / 2.0", "3.5" },
	{ "float", "1", "1.0" },
	{ "bool", "1 < 2 and 2 <= 2 and 3 > 2 and 3 >= 4", "false" },
	{ "bool", "\"a\" < \"b\"", "true" },
	{ "bool", "not (1 = 2)", "true" },
	{ "bool", "1 = 1.0", "true" },
	{ "bool", "null = null", "false" },
	{ "bool", "null != 1", "false" },
	{ "bool", "null in #[1]", "false" },
	{ "bool", "2 in #[1, 2, 3]", "true" },
	{ "string", "\"x\\\"y\"", "\"x\\\"y\"" },
	{ "int", "objects.size", "4" },
	{ "int", "objects.filter([o | o is Val]).size", "2" },
	{ "int", "objects.filter([o | o is java.lang.Object]).size", "4" },
	{ "int", "objects.filter([o | o is Outer.Inner]).size", "1" },
	{ "int", "objects.filter([o | o.v > 1]).size", "2" },
	{ "int", "objects.filter([o | o.v = null]).size", "0" },
	{ "bool", "objects.exists([o | o.name = \"second\"])", "true" },
	{ "bool", "objects.exists([ it.name = \"third\" ])", "false" },
	{ "T", "objects.filter([o | o is Val]).map([o | o.v])", "[1,2]" },
	{ "table_of string", "classes.map([c | c.name])",
	  "[\"java.lang.Object\",\"app.Val\",\"app.Outer$Inner\",\"app.F\"]" },
	{ "table_of Object", "objects.filter([o | o.size > 10])", "[1001,1003]" },
	{ "P", "struct P 1, \"a\" end", "{\"a\":1.0,\"b\":\"a\"}" },
	{ "table_of P", "#[struct P 2, \"b\" end]", "[{\"a\":2.0,\"b\":\"b\"}]" },
	{ "int", "objects.map([o | o.id]).filter([i | i > 1001]).size", "2" },
	{ "int", "objects.filter([o | o is Val]).map([o | o.class]).size", "2" },
	{ "bool", "objects.exists([o | o.class.name = \"app.F\" and o.v > 2.5])", "true" },
	{ "int", "objects.filter([o | o.length = 3]).size", "1" },
	{ "int", "objects.filter([o | o.age >= 2]).size", "1" },
	{ "bool", "#[1,2].exists([x | #[3,4].exists([y | x + y = 6])])", "true" },
};

static void test_exprs(void **state)
{
	struct hb *b = calloc(1, sizeof(*b));
	(void)state;
	uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t val = hb_class(b, "app.Val", obj, DSL_NOOBJ, f_val, 3);
	uint32_t inner = hb_class(b, "app.Outer$Inner", obj, DSL_NOOBJ, NULL, 0);
	uint32_t fl = hb_class(b, "app.F", obj, DSL_NOOBJ, f_f, 1);
	uint32_t v1 = hb_obj(b, val, 8), v2 = hb_obj(b, val, 16), in = hb_obj(b, inner, 8);
	uint32_t f1 = hb_obj(b, fl, 24);

	hb_int(b, v1, 0, 1);
	b->vals[v1][1] = (struct dsl_hval){ .kind = DSL_HV_STR, .u.s = "first" };
	hb_int(b, v2, 0, 2);
	b->vals[v2][1] = (struct dsl_hval){ .kind = DSL_HV_STR, .u.s = "second" };
	hb_float(b, f1, 0, 3.0);
	b->obj[in].length = 3;
	b->ages[f1] = 5;
	for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		char src[1024], want[512];

		snprintf(src, sizeof(src),
			 "P : struct a : float b : string end\nT : table_of int\n"
			 "set_type s: x : %s <- %s\ninstances_for s have_names = \"i\"",
			 exprs[i].type, exprs[i].expr);
		snprintf(want, sizeof(want), "{\"s\":{\"i\":{\"x\":%s}}}\n", exprs[i].json);
		ASSERT_RUN(want, src, hb_heap(b));
	}
	free(b);
}

/* Run-time errors carry the location and name the object's class. */
/* dsl_heap_check refuses a heap whose indices point outside it, each with
 * its own reason: a class index, a reference range, a field slot its class
 * lacks, a target, a static field (a sound heap passes). */
static void test_heap_check(void **state)
{
	static const char *const why[] = { NULL, "bad class index", "bad reference range",
					   "a reference from a field its class lacks",
					   "bad target or kind", "bad static field" };

	(void)state;
	for (int fault = 0; fault < 6; fault++) {
		struct hb *b = calloc(1, sizeof(*b));
		struct dsl_diags *d = dsl_diags_new();
		struct dsl_heap *h;
		char *text;

		assert_non_null(b);
		uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
		uint32_t holder = hb_class(b, "com.example.Holder", obj, DSL_NOOBJ, f_other, 1);
		uint32_t a = hb_obj(b, holder, 16), c = hb_obj(b, holder, 16);

		hb_ref(b, a, c, DSL_REF_FIELD, 0);
		hb_ref(b, c, a, DSL_REF_ARRAY_ELEMENT, 3);
		h = hb_heap(b);
		switch (fault) {
		case 1: b->obj[c].cls = 7; break;
		case 2: b->obj[a].nrefs = 9; break;
		case 3: b->sorted[0].index = 1; break; /* Holder has one field */
		case 4: b->sorted[1].to = 2; break;
		case 5: b->sorted[1].kind = DSL_REF_STATIC_FIELD; b->sorted[1].index = 0; break;
		default: break;
		}
		assert_int_equal(dsl_heap_check(h, d), fault ? -EINVAL : 0);
		text = dsl_diags_render_str(d);
		assert_non_null(text);
		if (fault)
			assert_non_null(strstr(text, why[fault]));
		free(text);
		dsl_diags_free(d);
		free(b);
	}
}

static void test_runtime_errors(void **state)
{
	struct hb *b = calloc(1, sizeof(*b));
	(void)state;
	uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t val = hb_class(b, "app.Val", obj, DSL_NOOBJ, f_val, 3);
	uint32_t fl = hb_class(b, "app.F", obj, DSL_NOOBJ, f_f, 1);

	uint32_t v = hb_obj(b, val, 8);

	hb_int(b, v, 0, 1);
	hb_int(b, v, 2, 5);
	hb_float(b, hb_obj(b, fl, 8), 0, 1.5);
	ASSERT_RUN("ERR q.mq:3:59: error: arithmetic on null: class app.F has no field 'w'\n"
		   "  x : T <- objects.filter([o | o.v + 1 > 0]).map([o | o.w + 1])\n"
		   "                                                          ^\n",
		   "T : table_of int\nset_type s:\n"
		   "  x : T <- objects.filter([o | o.v + 1 > 0]).map([o | o.w + 1])\n"
		   "instances_for s have_names = \"i\"", hb_heap(b));
	ASSERT_RUN("ERR q.mq:1:26: error: division by zero\nset_type s: x : int <- 1 / (2 - 2)\n"
		   "                         ^\n",
		   "set_type s: x : int <- 1 / (2 - 2)\ninstances_for s have_names = \"i\"", hb_heap(b));
	free(b);
}

/* Instances in declaration order, first instance wins, several set types. */
static void test_order(void **state)
{
	struct hb *b = calloc(1, sizeof(*b));
	(void)state;
	uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t node = hb_class(b, "app.Node", obj, DSL_NOOBJ, f_node, 2);
	uint32_t r = hb_obj(b, node, 1), a = hb_obj(b, node, 2), c = hb_obj(b, node, 4);

	hb_field_ref(b, r, 0, a);
	hb_field_ref(b, r, 1, c);
	hb_root(b, r, DSL_ROOT_STACK_LOCAL);
	/* B's root c is claimed before the walk; a1 claims r (heap root) then a */
	ASSERT_RUN("{\"A\":{\"a1\":{\"n\":3},\"a2\":{\"n\":0}},\"B\":{\"b\":{\"k\":\"claimed\"}}}\n",
		   "set_type A:\n"
		   "  membership <- true\n"
		   "  on_inclusion <- [ n <- n + THIS.size ]\n"
		   "  n : int <- 0\n"
		   "set_type B:\n"
		   "  roots <- objects.filter([o | o.size = 4])\n"
		   "  on_inclusion <- [ k <- \"claimed\" ]\n"
		   "  k : string <- \"none\"\n"
		   "instances_for B have_names = \"b\"\n"
		   "instances_for A have_names = #[\"a1\", \"a2\"]\n", hb_heap(b));
	/* ref_kind is readable in membership */
	ASSERT_RUN("{\"A\":{\"a\":{\"n\":1}}}\n",
		   "set_type A:\n"
		   "  membership <- ref_kind = stack_local and ref_kind = root and ref_kind != field\n"
		   "  on_inclusion <- [ n <- n + THIS.size ]\n"
		   "  n : int <- 0\n"
		   "instances_for A have_names = \"a\"\n", hb_heap(b));
	free(b);
}

static void test_needs(void **state)
{
	struct hb *b = calloc(1, sizeof(*b));
	struct dsl_schema schema;
	struct dsl_program *p;
	(void)state;
	uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	hb_class(b, "spec.jbb.Order", obj, DSL_NOOBJ, f_order, 2);
	hb_class(b, "app.Val", obj, DSL_NOOBJ, f_val, 2);
	dsl_heap_schema(hb_heap(b), &schema);
	char *src = slurp("02_pseudojbb.mq");

	assert_int_equal(dsl_compile(src, strlen(src), "q", &schema, &p, NULL), 0);
	const struct dsl_needs *n = dsl_program_needs(p);
	assert_false(n->refs);
	assert_int_equal(n->nclasses, 1);
	assert_string_equal(n->classes[0], "Order");
	assert_int_equal(n->nfields, 1);
	assert_string_equal(n->fields[0], "field");
	assert_false(n->strings);
	dsl_program_free(p);
	free(src);
	src = slurp("03_reachable_from_threads.mq");
	assert_int_equal(dsl_compile(src, strlen(src), "q", &schema, &p, NULL), 0);
	assert_true(dsl_program_needs(p)->refs);
	assert_int_equal(dsl_program_needs(p)->nfields, 0);
	dsl_program_free(p);
	free(src);
	const char *s2 = "set_type s: roots <- objects.filter([o | o.name = \"x\"]) instances_for s have_names = \"a\"";
	assert_int_equal(dsl_compile(s2, strlen(s2), "q", &schema, &p, NULL), 0);
	assert_true(dsl_program_needs(p)->strings);
	dsl_program_free(p);
	dsl_program_free(NULL);
	free(b);
}

#define PROG1(prop) "set_type s:\n  " prop "\ninstances_for s have_names = \"x\"\n"

/* `is` is Java's instanceof: superinterfaces, arrays, covariance. */
static void test_instanceof(void **state)
{
	struct hb *b = calloc(1, sizeof(*b));
	uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t clo = hb_class(b, "java.lang.Cloneable", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t ser = hb_class(b, "java.io.Serializable", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t i1 = hb_class(b, "p.Shape", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t i2 = hb_class(b, "p.Round", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t c = hb_class(b, "p.Circle", obj, DSL_NOOBJ, NULL, 0);
	uint32_t d = hb_class(b, "p.Outer$Disc", c, DSL_NOOBJ, NULL, 0);
	uint32_t ca = hb_class(b, "p.Circle[]", obj, DSL_NOOBJ, NULL, 0);
	uint32_t caa = hb_class(b, "p.Circle[][]", obj, DSL_NOOBJ, NULL, 0);
	uint32_t ia = hb_class(b, "int[]", obj, DSL_NOOBJ, NULL, 0);
	uint32_t sa = hb_class(b, "p.Shape[]", obj, DSL_NOOBJ, NULL, 0);
	uint32_t oa = hb_class(b, "java.lang.Object[]", obj, DSL_NOOBJ, NULL, 0);
	uint32_t oaa = hb_class(b, "java.lang.Object[][]", obj, DSL_NOOBJ, NULL, 0);
	static uint32_t i2_ifaces[1], c_ifaces[1];

	i2_ifaces[0] = i1; /* Round extends Shape */
	c_ifaces[0] = i2;  /* Circle implements Round */
	b->cls[i2].ifaces = i2_ifaces;
	b->cls[i2].nifaces = 1;
	b->cls[c].ifaces = c_ifaces;
	b->cls[c].nifaces = 1;
	for (uint32_t k = 0; k < b->ncls; k++)
		b->cls[k].kind = k == clo || k == ser || k == i1 || k == i2 ? DSL_CK_INTERFACE
									: DSL_CK_CLASS;
	hb_obj(b, c, 16);
	hb_obj(b, d, 16);
	hb_obj(b, ca, 24);
	hb_obj(b, caa, 24);
	hb_obj(b, ia, 24);
	hb_obj(b, obj, 16);
	(void)sa;
	(void)oa;
	(void)oaa;
	ASSERT_RUN("{\"s\":{\"x\":{\"a\":2,\"b\":2,\"c\":1,\"d\":1,\"e\":3,\"f\":2,"
		   "\"g\":2,\"h\":1,\"i\":6,\"j\":1}}}\n",
		   PROG1("a : int <- objects.filter([it | it is Shape]).size\n"
			 "  b : int <- objects.filter([it | it is p.Round]).size\n"
			 "  c : int <- objects.filter([it | it is Outer.Disc]).size\n"
			 "  d : int <- objects.filter([it | it is Shape[]]).size\n"
			 "  e : int <- objects.filter([it | it is java.lang.Cloneable]).size\n"
			 "  f : int <- objects.filter([it | it is java.lang.Object[]]).size\n"
			 "  g : int <- objects.filter([it | it is p.Circle[]]).size + 1\n"
			 "  h : int <- objects.filter([it | it is int[]]).size\n"
			 "  i : int <- objects.filter([it | it is Object]).size\n"
			 "  j : int <- objects.filter([it | it is Object[][]]).size"), hb_heap(b));
	/* without interfaces (a dump): a name that may be one is a compile error */
	b->heap.no_ifaces = "a heap dump (.hprof) records no interfaces";
	for (uint32_t k = 0; k < b->ncls; k++)
		b->cls[k].kind = k == i1 || k == i2 ? DSL_CK_UNKNOWN : DSL_CK_CLASS;
	{
		struct dsl_heap h = *hb_heap(b);
		char *got;

		h.no_ifaces = "a heap dump (.hprof) records no interfaces";
		got = run(PROG1("a : int <- objects.filter([it | it is Shape]).size"), &h);
		assert_non_null(strstr(got, "'Shape' may be or hold an interface, and a heap dump"));
		free(got);
		got = run(PROG1("a : int <- objects.filter([it | it is p.Shape[]]).size"), &h);
		assert_non_null(strstr(got, "may be or hold an interface"));
		free(got);
		ASSERT_RUN("{\"s\":{\"x\":{\"a\":2}}}\n",
			   PROG1("a : int <- objects.filter([it | it is p.Circle]).size"), &h);
	}
	free(b);
}

static const struct dsl_hfield f_named[] = { { "name", DSL_FK_STRING }, { "id", DSL_FK_INT } };

/* Built-ins before Java fields: Class.name, Thread.name, Classloader.id, also
 * through an Object; Java fields first for other objects (`id`). */
static void test_builtin_precedence(void **state)
{
	struct hb *b = calloc(1, sizeof(*b));
	uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
	uint32_t cc = hb_class(b, "java.lang.Class", obj, DSL_NOOBJ, f_named, 1);
	uint32_t tc = hb_class(b, "java.lang.Thread", obj, DSL_NOOBJ, f_named, 1);
	uint32_t lc = hb_class(b, "p.Loader", obj, DSL_NOOBJ, f_named, 2);
	uint32_t uc = hb_class(b, "p.User", obj, 0, f_named, 2);
	uint32_t mirror = hb_obj(b, cc, 96), th = hb_obj(b, tc, 120), ld = hb_obj(b, lc, 40);
	uint32_t u = hb_obj(b, uc, 24);

	for (uint32_t k = 0; k < b->ncls; k++)
		b->cls[k].kind = DSL_CK_CLASS;
	b->cls[uc].obj = mirror; /* the class object of p.User */
	b->threads[0] = (struct dsl_hthread){ .obj = th, .name = "worker" };
	b->nthreads = 1;
	b->loaders[0] = (struct dsl_hloader){ .obj = ld, .id = b->obj[ld].id };
	b->nloaders = 1;
	/* Java fields that would say otherwise (JVMTI reports no Class.name) */
	b->vals[mirror][0].kind = DSL_HV_STR;
	b->vals[mirror][0].u.s = "not-the-class-name";
	b->vals[th][0].kind = DSL_HV_STR;
	b->vals[th][0].u.s = "field-name";
	hb_int(b, ld, 1, 77);
	hb_int(b, u, 1, 5);
	/* f: the loader's Java field id (77) is hidden by Classloader.id, also on an Object */
	ASSERT_RUN("{\"s\":{\"x\":{\"a\":1,\"b\":1,\"c\":1,\"d\":1,\"e\":true,\"f\":0,"
		   "\"g\":1}}}\n",
		   PROG1("a : int <- classes.filter([it | it.name = \"p.User\"]).size\n"
			 "  b : int <- objects.filter([it | it is java.lang.Class and "
			 "it.name = \"p.User\"]).size\n"
			 "  c : int <- threads.filter([it | it.name = \"worker\"]).size\n"
			 "  d : int <- objects.filter([it | it.name = \"worker\"]).size\n"
			 "  e : bool <- classloaders.exists([l | l.id = 1002])\n"
			 "  f : int <- objects.filter([it | it.id = 77]).size\n"
			 "  g : int <- objects.filter([it | it.id = 5]).size"), hb_heap(b));
	free(b);
}

/* retained, referrers, root_path from the heap's indexes (null without them). */
static void test_graph_builtins(void **state)
{
	static const struct dsl_hfield f_n[] = { { "next", DSL_FK_REF } };
	struct hb *b = calloc(1, sizeof(*b));
	uint32_t nc = hb_class(b, "p.Node", DSL_NOOBJ, DSL_NOOBJ, f_n, 1);
	uint32_t a = hb_obj(b, nc, 16), x = hb_obj(b, nc, 24), y = hb_obj(b, nc, 32);
	static uint64_t ret[3];
	static uint32_t rfirst[4], rfrom[2], via[3];

	hb_field_ref(b, a, 0, x);
	hb_field_ref(b, x, 0, y);
	hb_root(b, a, DSL_ROOT_JNI_GLOBAL);
	ret[0] = 72; ret[1] = 56; ret[2] = 32;
	rfirst[0] = 0; rfirst[1] = 0; rfirst[2] = 1; rfirst[3] = 2;
	rfrom[0] = a; rfrom[1] = x;
	via[0] = DSL_VIA_ROOT; via[1] = 0; via[2] = 1;
	{
		struct dsl_heap h = *hb_heap(b);

		ASSERT_RUN("{\"s\":{\"x\":{\"r\":[null,null,null],\"p\":[null,null,null]}}}\n",
			   PROG1("r : table_of int <- objects.map([it | it.retained])\n"
				 "  p : table_of int <- objects.map([it | it.root_path.size])"), &h);
		h.retained = ret;
		h.referrer_first = rfirst;
		h.referrer = rfrom;
		h.root_via = via;
		ASSERT_RUN("{\"s\":{\"x\":{\"r\":[72,56,32],\"n\":[0,1,1],\"p\":[1,2,3]}}}\n",
			   PROG1("r : table_of int <- objects.map([it | it.retained])\n"
				 "  n : table_of int <- objects.map([it | it.referrers.size])\n"
				 "  p : table_of int <- objects.map([it | it.root_path.size])"), &h);
		ASSERT_RUN("{\"s\":{\"x\":{\"p\":[\"jni_global p.Node (id 1000)\","
			   "\"p.Node.next -> p.Node (id 1001)\",\"p.Node.next -> p.Node (id 1002)\"],"
			   "\"q\":[1001]}}}\n",
			   "set_type s:\n  roots <- objects.filter([it | it.retained = 32])\n"
			   "  membership <- false\n"
			   "  on_inclusion <- [ p <- THIS.root_path  q <- THIS.referrers ]\n"
			   "  p : table_of string <- #[\"none\"]\n"
			   "  q : table_of Object <- #[]\n"
			   "instances_for s have_names = \"x\"\n", &h);
	}
	free(b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_instanceof),
		cmocka_unit_test(test_builtin_precedence),
		cmocka_unit_test(test_graph_builtins),
		cmocka_unit_test(test_value_assertion),
		cmocka_unit_test(test_pseudojbb),
		cmocka_unit_test(test_reachable_from_threads),
		cmocka_unit_test(test_k3),
		cmocka_unit_test(test_top_components),
		cmocka_unit_test(test_late_claim),
		cmocka_unit_test(test_exprs),
		cmocka_unit_test(test_runtime_errors),
		cmocka_unit_test(test_heap_check),
		cmocka_unit_test(test_order),
		cmocka_unit_test(test_needs),
		cmocka_unit_test(test_reach_membership_same),
		cmocka_unit_test(test_accum_same),
		cmocka_unit_test(test_reach_threads_same),
		cmocka_unit_test(test_reach_threads_big),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
