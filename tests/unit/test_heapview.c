// SPDX-License-Identifier: GPL-2.0
/* test_heapview - the dsl_heap built from a snapshot (user/heap/heapview.c)
 * and the seed's programs run on it: values, strings, references, threads,
 * the projection, ages, and the same heap from dense ids and from sparse
 * ones (addresses, as in a heap dump), and from every way the view is built
 * (a generated heap as a frozen copy's mark sends it). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "heap/heapview.h"
#include "heap/recpool.h"
#include "heap/snapfile.h"
#include "heap/snaprec.h"
#include "heap/snapshot.h"
#include "lib/util.h"
#include "snap_fixture.h"

static char recs[8192];

static void load_fixture(struct mt_snapshot *s, bool keep_raw)
{
	char why[128];
	size_t n = fx_records(recs, sizeof(recs));

	snapshot_init(s);
	assert_int_equal(snaprec_add(s, recs, n, keep_raw, why, sizeof(why)), 0);
}

/* Run program src on the fixture; the JSON result into out. */
static void run(const struct mt_snapshot *s, const char *src, char *out, size_t n)
{
	struct mt_heapview hv;
	struct dsl_schema schema;
	struct dsl_program *p = NULL;
	struct dsl_diags *d = dsl_diags_new();
	char why[128];
	FILE *f = fmemopen(out, n, "w");
	int err;

	assert_int_equal(heapview_build(s, NULL, &hv, why, sizeof(why)), 0);
	assert_int_equal(dsl_heap_check(&hv.heap, d), 0);
	dsl_heap_schema(&hv.heap, &schema);
	err = dsl_compile(src, strlen(src), "t.mq", &schema, &p, d);
	if (err)
		dsl_diags_render(d, stderr);
	assert_int_equal(err, 0);
	assert_int_equal(dsl_run(p, &hv.heap, f, d), 0);
	fclose(f);
	dsl_program_free(p);
	dsl_diags_free(d);
	heapview_free(&hv);
}

static void test_heap_programs(void **state)
{
	struct mt_snapshot s;
	char out[512];

	load_fixture(&s, false);
	run(&s, "set_type all:\n roots <- objects.filter([it | it is Order])\n"
		" membership <- false\n on_inclusion <- [ fault <- fault or THIS.field = 4242 ]\n"
		" fault : bool <- false\ninstances_for all have_names = \"all-jvm\"\n",
	    out, sizeof(out));
	assert_string_equal(out, "{\"all\":{\"all-jvm\":{\"fault\":true}}}\n");
	/* strings, and a reference field's value */
	run(&s, "set_type s:\n roots <- objects.filter([it | it is Order and it.name = \"order-7\""
		" and it.next.field = 7])\n membership <- false\n on_inclusion <- [ n <- n + 1 ]\n"
		" n : int <- 0\ninstances_for s have_names = \"x\"\n", out, sizeof(out));
	assert_string_equal(out, "{\"s\":{\"x\":{\"n\":1}}}\n");
	/* reachability from the threads: thread 14 and its name 15 */
	run(&s, "set_type all:\n roots <- threads\n membership <- THIS in Unassigned and "
		"REFERRER in ENTITY\n on_inclusion <- [ n <- n + 1 ]\n n : int <- 0\n"
		"instances_for all have_names = \"all\"\n", out, sizeof(out));
	assert_string_equal(out, "{\"all\":{\"all\":{\"n\":2}}}\n");
	snapshot_free(&s);
}

/* A size no Java object can have (a corrupt file, a fuzzed stream) is
 * refused with a reason: it would wrap the retained sizes and totals. */
static void test_impossible_size(void **state)
{
	struct mt_snapshot s;
	struct mt_heapview hv;
	char why[160];

	load_fixture(&s, false);
	s.objs[1].size = UINT64_MAX - 40;
	assert_int_equal(heapview_build(&s, NULL, &hv, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "corrupt"));
	assert_non_null(strstr(why, "16 GiB"));
	s.objs[1].size = 1ull << 34; /* long[2^31 - 1]: possible */
	assert_int_equal(heapview_build(&s, NULL, &hv, why, sizeof(why)), 0);
	heapview_free(&hv);
	snapshot_free(&s);
}

/* The fixture's ids moved far apart (ids of a heap dump are addresses): the
 * index goes through the hash map, not the dense array, and the programs
 * see the same heap. */
static void test_sparse_ids(void **state)
{
	const uint64_t k = 0x7f0000000ull;
	struct mt_snapshot s;
	struct mt_heapview hv;
	char out[512], why[128];

#define FAR(x) ((x) ? (x) * 8 + k : 0)
	load_fixture(&s, false);
	for (size_t i = 0; i < s.nobjs; i++) {
		s.objs[i].id = FAR(s.objs[i].id);
		s.objs[i].cls = FAR(s.objs[i].cls);
	}
	for (size_t i = 0; i < s.nclasses; i++) {
		s.classes[i].id = FAR(s.classes[i].id);
		s.classes[i].super = FAR(s.classes[i].super);
		s.classes[i].loader = FAR(s.classes[i].loader);
	}
	for (size_t i = 0; i < s.nrefs; i++) {
		s.refs[i].from = FAR(s.refs[i].from);
		s.refs[i].to = FAR(s.refs[i].to);
	}
	for (size_t i = 0; i < s.nroots; i++)
		s.roots[i].to = FAR(s.roots[i].to);
	for (size_t i = 0; i < s.nprims; i++)
		s.prims[i].obj = FAR(s.prims[i].obj);
	for (size_t i = 0; i < s.nstrings; i++)
		s.strings[i].obj = FAR(s.strings[i].obj);
	for (size_t i = 0; i < s.nthreads; i++)
		s.threads[i].id = FAR(s.threads[i].id);
#undef FAR
	assert_int_equal(heapview_build(&s, NULL, &hv, why, sizeof(why)), 0);
	assert_int_equal(hv.heap.nobjects, 10);
	assert_int_equal(hv.heap.nroots, 2);
	assert_int_equal(hv.heap.nthreads, 1);
	heapview_free(&hv);
	run(&s, "set_type s:\n roots <- objects.filter([it | it is Order and it.name = \"order-7\""
		" and it.next.field = 7])\n membership <- false\n on_inclusion <- [ n <- n + 1 ]\n"
		" n : int <- 0\ninstances_for s have_names = \"x\"\n", out, sizeof(out));
	assert_string_equal(out, "{\"s\":{\"x\":{\"n\":1}}}\n");
	run(&s, "set_type all:\n roots <- threads\n membership <- THIS in Unassigned and "
		"REFERRER in ENTITY\n on_inclusion <- [ n <- n + 1 ]\n n : int <- 0\n"
		"instances_for all have_names = \"all\"\n", out, sizeof(out));
	assert_string_equal(out, "{\"all\":{\"all\":{\"n\":2}}}\n");
	snapshot_free(&s);
}

/* The references of object @i of @h, sorted (to, kind, index) into @out. */
static size_t refs_of(const struct dsl_heap *h, uint32_t i, struct dsl_href *out, size_t cap)
{
	const struct dsl_hobject *o = &h->objects[i];
	size_t n = o->nrefs < cap ? o->nrefs : cap;

	memcpy(out, &h->refs[o->ref_first], n * sizeof(*out));
	for (size_t a = 1; a < n; a++) /* insertion sort: a handful */
		for (size_t b = a; b > 0; b--) {
			struct dsl_href *x = &out[b - 1], *y = &out[b], t;

			if (x->to < y->to || (x->to == y->to && (x->kind < y->kind ||
			    (x->kind == y->kind && x->index <= y->index))))
				break;
			t = *x, *x = *y, *y = t;
		}
	return n;
}

/* A CLASS reference carried by its object (MT_AP_HOBJ_CLASSREF, as the frozen
 * copy's mark sends them) makes the same heap as one sent as a record. */
static void test_implied_class_refs(void **state)
{
	struct mt_snapshot s;
	struct mt_heapview a, b;
	struct dsl_href ra[64], rb[64];
	char why[128];
	size_t moved = 0, k = 0;

	(void)state;
	load_fixture(&s, false);
	assert_int_equal(heapview_build(&s, NULL, &a, why, sizeof(why)), 0);
	for (size_t i = 0; i < s.nrefs; i++) {
		const struct mt_ap_href *r = &s.refs[i];
		size_t o;

		if (r->kind == 1 /* CLASS */) {
			for (o = 0; o < s.nobjs && s.objs[o].id != r->from; o++)
				;
			assert_true(o < s.nobjs && s.objs[o].cls == r->to);
			s.objs[o].flags |= MT_AP_HOBJ_CLASSREF;
			moved++;
			continue;
		}
		s.refs[k++] = *r;
	}
	assert_int_equal(moved, 2); /* the fixture has two, from Orders 10 and 11 */
	s.nrefs = k;
	assert_int_equal(heapview_build(&s, NULL, &b, why, sizeof(why)), 0);
	assert_int_equal(a.heap.nobjects, b.heap.nobjects);
	assert_int_equal(a.heap.nrefs, b.heap.nrefs);
	for (uint32_t i = 0; i < a.heap.nobjects; i++) {
		size_t na = refs_of(&a.heap, i, ra, 64), nb = refs_of(&b.heap, i, rb, 64);

		assert_int_equal(na, nb);
		for (size_t j = 0; j < na; j++) {
			assert_int_equal(ra[j].to, rb[j].to);
			assert_int_equal(ra[j].kind, rb[j].kind);
			assert_int_equal(ra[j].index, rb[j].index);
		}
	}
	heapview_free(&a);
	heapview_free(&b);
	snapshot_free(&s);
}

static void test_projection(void **state)
{
	struct mt_snapshot s;
	struct mt_heapview hv;
	const char *fields[] = { "field" };
	struct dsl_needs needs = { .fields = fields, .nfields = 1 };
	char why[128];

	load_fixture(&s, false);
	assert_int_equal(heapview_build(&s, &needs, &hv, why, sizeof(why)), 0);
	/* Orders carry values, Strings and Threads (no field named `field`) do not */
	assert_non_null(dsl_heap_values(&hv.heap, 4));
	assert_null(dsl_heap_values(&hv.heap, 8));
	assert_int_equal(hv.value_objects, 2);
	assert_int_equal(dsl_heap_values(&hv.heap, 4)[0].kind, DSL_HV_INT);
	assert_int_equal(dsl_heap_values(&hv.heap, 4)[0].u.i, 4242);
	heapview_free(&hv);
	snapshot_free(&s);
}

/* An AGES body: header (gcs, n) and n (first_id, gcs) pairs. */
static size_t ages_body(char *buf, uint64_t gcs, uint32_t n, const uint64_t (*w)[2])
{
	struct mt_ap_hages h = { .gcs = gcs, .nwalks = n };

	memcpy(buf, &h, sizeof(h));
	for (uint32_t i = 0; i < n; i++) {
		struct mt_ap_hwalk x = { .first_id = w[i][0], .gcs = w[i][1] };

		memcpy(buf + sizeof(h) + i * sizeof(x), &x, sizeof(x));
	}
	return sizeof(h) + n * sizeof(struct mt_ap_hwalk);
}

/* The fixture with an AGES record (objects 1..4 and 10..11 first seen at 0
 * GCs, 12.. at 2; now 3): `age` in programs, through a file, and an error
 * that says why when the snapshot has none. */
static void test_heap_ages(void **state)
{
	static const uint64_t w[][2] = { { 1, 0 }, { 12, 2 } };
	char body[128], why[256], path[64], out[512], *buf;
	struct mt_snapshot s, t;
	struct mt_heapview hv;
	struct dsl_schema schema;
	struct dsl_program *p = NULL;
	struct dsl_diags *d;
	size_t off, n, len;
	const char *prog = "set_type a:\n roots <- objects.filter([it | it is Order or it is String])\n"
			   " membership <- false\n on_inclusion <- [ n <- n + 1  sum <- sum + THIS.age ]\n"
			   " n : int <- 0\n sum : int <- 0\n"
			   " old : int <- objects.filter([it | it.age = 3]).size\n"
			   "instances_for a have_names = \"x\"\n";

	n = fx_records(recs, sizeof(recs));
	off = n;
	mt_ap_rec_put(recs, sizeof(recs), &off, MT_AP_HREC_AGES, 2, body, ages_body(body, 3, 2, w));
	snapshot_init(&s);
	assert_int_equal(snaprec_add(&s, recs, off, true, why, sizeof(why)), 0);
	assert_true(s.has_ages);
	/* Order 10, 11 (age 3), String 12, 13, 15 (age 1) */
	run(&s, prog, out, sizeof(out));
	assert_string_equal(out, "{\"a\":{\"x\":{\"n\":5,\"sum\":9,\"old\":6}}}\n");
	/* through a file */
	snprintf(path, sizeof(path), "/tmp/test_heapview_ages.%d", (int)getpid());
	assert_int_equal(snapfile_write(&s, path, why, sizeof(why)), 0);
	buf = read_file(path, &len);
	unlink(path);
	assert_non_null(buf);
	assert_int_equal(snapfile_read_mem(buf, len, &t, why, sizeof(why)), 0);
	free(buf);
	run(&t, prog, out, sizeof(out));
	assert_string_equal(out, "{\"a\":{\"x\":{\"n\":5,\"sum\":9,\"old\":6}}}\n");
	snapshot_free(&t);
	snapshot_free(&s);
	/* no AGES record: `age` does not compile, and says why */
	load_fixture(&s, false);
	s.source = "hprof";
	d = dsl_diags_new();
	assert_int_equal(heapview_build(&s, NULL, &hv, why, sizeof(why)), 0);
	dsl_heap_schema(&hv.heap, &schema);
	assert_int_equal(dsl_compile(prog, strlen(prog), "t.mq", &schema, &p, d), -EINVAL);
	{
		char *msg = NULL;
		size_t ml = 0;
		FILE *f = open_memstream(&msg, &ml);

		dsl_diags_render(d, f);
		fclose(f);
		assert_non_null(strstr(msg, "t.mq:4:50: error: objects have no 'age' here: a heap dump "
					    "(.hprof) carries no GC history"));
		free(msg);
	}
	dsl_diags_free(d);
	heapview_free(&hv);
	snapshot_free(&s);
}

/* Interfaces, class kinds and static field names from the source, and what
 * a source that does not say (an .hprof dump, an older agent) leaves. */
static void test_kinds_statics(void **state)
{
	struct mt_snapshot s;
	struct mt_heapview hv;
	struct dsl_schema schema;
	struct dsl_program *p = NULL;
	struct dsl_diags *d = dsl_diags_new();
	char out[512], why[128], b[256];
	const char *src = "set_type s:\n n : int <- objects.filter([it | it is p.Named]).size\n"
			  "instances_for s have_names = \"x\"\n";
	struct mt_snap_class *named;
	struct mt_ap_href st = { .from = 2, .to = 11, .index = 5, .kind = 8 /* STATIC_FIELD */ };

	load_fixture(&s, false);
	/* p.Named, an interface Order implements; Order's static LAST (index 5) */
	assert_int_equal(snapshot_grow(&s.classes, &s.cap_classes, s.nclasses, 1,
				       sizeof(*s.classes)), 0);
	named = &s.classes[s.nclasses++];
	memset(named, 0, sizeof(*named));
	named->id = 6;
	named->sig = "Lp/Named;";
	for (size_t i = 0; i < s.nclasses; i++)
		s.classes[i].kind = i == s.nclasses - 1 ? MT_SNAP_INTERFACE : MT_SNAP_CLASS;
	s.classes[1].ifaces = malloc(sizeof(uint64_t));
	s.classes[1].ifaces[0] = 6;
	s.classes[1].nifaces = 1;
	s.classes[1].statics = calloc(1, sizeof(*s.classes[1].statics));
	s.classes[1].statics[0] = (struct mt_snap_field){ .index = 5, .type = 'L', .name = "LAST" };
	s.classes[1].nstatics = 1;
	assert_int_equal(snapshot_grow(&s.refs, &s.cap_refs, s.nrefs, 1, sizeof(*s.refs)), 0);
	s.refs[s.nrefs++] = st;
	assert_int_equal(heapview_build(&s, NULL, &hv, why, sizeof(why)), 0);
	assert_null(hv.heap.no_ifaces);
	assert_int_equal(hv.heap.nstatics, 1);
	for (uint32_t o = 0; o < hv.heap.nobjects; o++)
		for (uint32_t k = 0; k < hv.heap.objects[o].nrefs; k++) {
			const struct dsl_href *r = &hv.heap.refs[hv.heap.objects[o].ref_first + k];

			if (r->kind == DSL_REF_STATIC_FIELD)
				assert_string_equal(dsl_ref_text(&hv.heap, o, r, b, sizeof(b)),
						    "static spec.jbb.Order.LAST");
		}
	heapview_free(&hv);
	run(&s, src, out, sizeof(out));
	assert_string_equal(out, "{\"s\":{\"x\":{\"n\":2}}}\n");
	/* a dump: no kinds, no interfaces - what has instances, subclasses or
	 * instance fields is a class; p.Named may be an interface: an error */
	for (size_t i = 0; i < s.nclasses; i++)
		s.classes[i].kind = MT_SNAP_UNKNOWN;
	s.source = "hprof";
	assert_int_equal(heapview_build(&s, NULL, &hv, why, sizeof(why)), 0);
	assert_non_null(strstr(hv.heap.no_ifaces, "records no interfaces"));
	for (uint32_t c = 0; c < 4; c++)
		assert_int_equal(hv.heap.classes[c].kind, DSL_CK_CLASS);
	assert_int_equal(hv.heap.classes[4].kind, DSL_CK_UNKNOWN);
	dsl_heap_schema(&hv.heap, &schema);
	assert_int_equal(dsl_compile(src, strlen(src), "t.mq", &schema, &p, d), -EINVAL);
	assert_non_null(strstr(d->v[0].msg, "may be or hold an interface"));
	dsl_program_free(p);
	heapview_free(&hv);
	dsl_diags_free(d);
	snapshot_free(&s);
}

/* A heap as a frozen copy's mark sends it (tests of the view's ways to the
 * same heap): GEN_N objects in address order, among them the class objects
 * (ids 1 .. GEN_CLASSES, as named objects are), every other object's id
 * next_id + its position; an object's references right after it, its CLASS
 * reference carried (MT_AP_HOBJ_CLASSREF). Nodes (class 1: int value, Node
 * next, String name; a static INSTANCE) point at anything, some nowhere
 * (dropped), Object[]s (2) hold elements; the first @lead objects hold no
 * reference. What the view must be is kept in the gen_expect. */
#define GEN_N 6000
#define GEN_CLASSES 5
#define GEN_NEXT_ID (GEN_CLASSES + 1)
#define GEN_MAXREFS (4 * GEN_N)

struct gen_expect {
	uint32_t first[GEN_N], n[GEN_N];
	struct dsl_href refs[GEN_N + GEN_MAXREFS];
	uint32_t nrefs;
};

static uint32_t gen_rand(uint64_t *r)
{
	*r = *r * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*r >> 33);
}

/* Position of class object k (1-based). */
static uint32_t gen_class_pos(uint32_t k)
{
	return k * 997 % GEN_N;
}

static uint64_t gen_id(uint32_t p)
{
	for (uint32_t k = 1; k <= GEN_CLASSES; k++)
		if (gen_class_pos(k) == p)
			return k;
	return GEN_NEXT_ID + p;
}

static void gen_add_class(struct mt_snapshot *s, const char *sig, int nf)
{
	static const char *const names[] = { "value", "next", "name" };
	static const char types[] = "ILT";
	struct mt_snap_class *c;

	assert_int_equal(snapshot_grow(&s->classes, &s->cap_classes, s->nclasses, 1,
				       sizeof(*s->classes)), 0);
	c = &s->classes[s->nclasses++];
	memset(c, 0, sizeof(*c));
	c->id = s->nclasses;
	c->sig = snapshot_strdup(s, sig, strlen(sig));
	c->kind = MT_SNAP_CLASS;
	c->super = c->id == 1 ? 0 : 1;
	c->fields = calloc(3, sizeof(*c->fields));
	for (int k = 0; k < nf; k++)
		c->fields[k] = (struct mt_snap_field){ k, types[k], names[k] };
	c->nfields = (uint32_t)nf;
	if (c->id == 1) {
		c->statics = calloc(1, sizeof(*c->statics));
		c->statics[0] = (struct mt_snap_field){ 0, 'L', "INSTANCE" };
		c->nstatics = 1;
	}
}

/* One reference record from object @p, and what the view makes of it (if
 * @keep) into @e. */
static void gen_ref(struct mt_ap_href *out, size_t *nout, uint32_t *fromp, struct gen_expect *e,
		    uint32_t p, uint64_t to, uint32_t kind, int32_t index, bool keep, uint32_t to_pos,
		    uint8_t dkind, int32_t dindex)
{
	fromp[*nout] = p;
	out[(*nout)++] = (struct mt_ap_href){ gen_id(p), to, index, kind };
	if (keep)
		e->refs[e->nrefs++] = (struct dsl_href){ .to = to_pos, .index = dindex,
							  .kind = dkind };
}

static void gen_heap(struct mt_snapshot *s, struct gen_expect *e, uint32_t lead, bool unsorted)
{
	static struct mt_ap_href refs[GEN_MAXREFS];
	static uint32_t fromp[GEN_MAXREFS];
	uint64_t r = 42;
	size_t nrefs = 0;

	snapshot_init(s);
	memset(e, 0, sizeof(*e));
	s->source = "snapshot";
	gen_add_class(s, "LNode;", 3);
	gen_add_class(s, "[Ljava/lang/Object;", 0);
	gen_add_class(s, "[B", 0);
	gen_add_class(s, "Ljava/lang/String;", 0);
	gen_add_class(s, "Ljava/lang/Class;", 0);
	assert_int_equal(snapshot_grow(&s->objs, &s->cap_objs, 0, GEN_N, sizeof(*s->objs)), 0);
	for (uint32_t p = 0; p < GEN_N; p++) {
		uint64_t id = gen_id(p);
		uint32_t cls = id <= GEN_CLASSES ? 5 : 1 + p % 4, nr = gen_rand(&r) % 4;
		struct mt_ap_hobj *o = &s->objs[s->nobjs++];

		*o = (struct mt_ap_hobj){ id, cls, 16 + p % 100, cls == 2 || cls == 3 ? (int32_t)(p % 7) : -1,
					  cls == 5 ? 0 : MT_AP_HOBJ_CLASSREF };
		e->first[p] = e->nrefs;
		if (o->flags)
			e->refs[e->nrefs++] = (struct dsl_href){ .to = gen_class_pos(cls), .index = -1,
								  .kind = DSL_REF_CLASS };
		if (p < lead)
			nr = 0;
		for (uint32_t k = 0; k < nr; k++) {
			uint32_t q = gen_rand(&r) % GEN_N, how = gen_rand(&r) % 8;

			if (how == 0) /* to nothing the heap has: left out */
				gen_ref(refs, &nrefs, fromp, e, p, 1ull << 40, 2, 1, false, 0, 0, 0);
			else if (how == 1) /* a root's kind among references: left out */
				gen_ref(refs, &nrefs, fromp, e, p, gen_id(q), 24, -1, false, 0, 0, 0);
			else if (cls == 1)
				gen_ref(refs, &nrefs, fromp, e, p, gen_id(q), 2, 1 + (int32_t)(how & 1),
					true, q, DSL_REF_FIELD, 1 + (int32_t)(how & 1));
			else if (cls == 2)
				gen_ref(refs, &nrefs, fromp, e, p, gen_id(q), 3, (int32_t)k, true, q,
					DSL_REF_ARRAY_ELEMENT, (int32_t)k);
			else if (id == 1) /* Node's class object: its static INSTANCE */
				gen_ref(refs, &nrefs, fromp, e, p, gen_id(q), 8, 0, true, q,
					DSL_REF_STATIC_FIELD, 0);
		}
		e->n[p] = e->nrefs - e->first[p];
		if (cls == 1) {
			assert_int_equal(snapshot_grow(&s->prims, &s->cap_prims, s->nprims, 1,
						       sizeof(*s->prims)), 0);
			s->prims[s->nprims++] = (struct mt_ap_hprim){ id, p, 0, 'I' };
		}
		if (cls == 4 && p % 3 == 0) {
			char t[32];
			int len = snprintf(t, sizeof(t), "s%u", p);

			assert_int_equal(snapshot_grow(&s->strings, &s->cap_strings, s->nstrings, 1,
						       sizeof(*s->strings)), 0);
			s->strings[s->nstrings++] = (struct mt_snap_string){
				id, snapshot_strdup(s, t, (size_t)len) };
		}
	}
	/* as the mark: the records in a just large enough array (its doubling) */
	assert_int_equal(snapshot_grow(&s->refs, &s->cap_refs, 0, nrefs, sizeof(*s->refs)), 0);
	for (int pass = 0; pass < 2; pass++) /* unsorted: the odd objects' after the even's */
		for (size_t i = 0; i < nrefs; i++)
			if (!unsorted ? !pass : (int)(fromp[i] & 1) == pass)
				s->refs[s->nrefs++] = refs[i];
	assert_int_equal(snapshot_grow(&s->roots, &s->cap_roots, 0, 2, sizeof(*s->roots)), 0);
	s->roots[s->nroots++] = (struct mt_ap_hroot){ gen_id(7), 24, 0 };
	s->roots[s->nroots++] = (struct mt_ap_hroot){ gen_id(gen_class_pos(1)), 22, 0 };
}

/* Ids far apart (a heap dump's addresses): the index hashes them. */
static void gen_far(struct mt_snapshot *s)
{
#define FAR(x) ((x) && (x) < (1ull << 40) ? (x) * 8 + 0x7f0000000ull : (x))
	for (size_t i = 0; i < s->nobjs; i++) {
		s->objs[i].id = FAR(s->objs[i].id);
		s->objs[i].cls = FAR(s->objs[i].cls);
	}
	for (size_t i = 0; i < s->nclasses; i++) {
		s->classes[i].id = FAR(s->classes[i].id);
		s->classes[i].super = FAR(s->classes[i].super);
	}
	for (size_t i = 0; i < s->nrefs; i++) {
		s->refs[i].from = FAR(s->refs[i].from);
		s->refs[i].to = FAR(s->refs[i].to);
	}
	for (size_t i = 0; i < s->nroots; i++)
		s->roots[i].to = FAR(s->roots[i].to);
	for (size_t i = 0; i < s->nprims; i++)
		s->prims[i].obj = FAR(s->prims[i].obj);
	for (size_t i = 0; i < s->nstrings; i++)
		s->strings[i].obj = FAR(s->strings[i].obj);
#undef FAR
}

/* The view is what the generator meant. */
static void assert_view_meant(const struct dsl_heap *h, const struct gen_expect *e)
{
	assert_int_equal(h->nobjects, GEN_N);
	assert_int_equal(h->nrefs, e->nrefs);
	for (uint32_t p = 0; p < GEN_N; p++) {
		const struct dsl_hobject *o = &h->objects[p];

		assert_int_equal(o->ref_first, e->first[p]);
		assert_int_equal(o->nrefs, e->n[p]);
		if (h->classes[o->cls].nfields) {
			assert_non_null(dsl_heap_values(h, p));
			assert_int_equal(dsl_heap_values(h, p)[0].kind, DSL_HV_INT);
			assert_int_equal(dsl_heap_values(h, p)[0].u.i, p);
		}
	}
	for (uint32_t i = 0; i < e->nrefs; i++) {
		assert_int_equal(h->refs[i].to, e->refs[i].to);
		assert_int_equal(h->refs[i].kind, e->refs[i].kind);
		assert_int_equal(h->refs[i].index, e->refs[i].index);
	}
	assert_int_equal(h->nroots, 2);
	assert_int_equal(h->nstatics, 1);
}

/* Two views of one heap are the same, ids apart if @ids is false; both as
 * consistent as they say (dsl_run() then checks neither). */
static void assert_same_heap(const struct dsl_heap *a, const struct dsl_heap *b, bool ids)
{
	struct dsl_diags *d = dsl_diags_new();

	assert_non_null(d);
	assert_true(a->consistent && b->consistent);
	assert_int_equal(dsl_heap_check(a, d), 0);
	assert_int_equal(dsl_heap_check(b, d), 0);
	dsl_diags_free(d);
	assert_int_equal(a->nobjects, b->nobjects);
	assert_int_equal(a->nrefs, b->nrefs);
	assert_int_equal(a->nclasses, b->nclasses);
	assert_int_equal(a->nroots, b->nroots);
	assert_int_equal(a->nloaders, b->nloaders);
	assert_int_equal(a->nstatics, b->nstatics);
	for (uint32_t i = 0; i < a->nobjects; i++) {
		const struct dsl_hobject *x = &a->objects[i], *y = &b->objects[i];
		const struct dsl_hval *xv = dsl_heap_values(a, i), *yv = dsl_heap_values(b, i);

		if (ids)
			assert_int_equal(x->id, y->id);
		assert_int_equal(x->size, y->size);
		assert_int_equal(x->length, y->length);
		assert_int_equal(x->cls, y->cls);
		assert_int_equal(dsl_heap_age(a, i), dsl_heap_age(b, i));
		assert_int_equal(x->ref_first, y->ref_first);
		assert_int_equal(x->nrefs, y->nrefs);
		assert_int_equal(!xv, !yv);
		for (uint32_t k = 0; xv && k < a->classes[x->cls].nfields; k++) {
			assert_int_equal(xv[k].kind, yv[k].kind);
			if (xv[k].kind == DSL_HV_STR)
				assert_string_equal(xv[k].u.s, yv[k].u.s);
			else if (xv[k].kind == DSL_HV_REF)
				assert_int_equal(xv[k].u.ref, yv[k].u.ref);
			else if (xv[k].kind == DSL_HV_INT)
				assert_int_equal(xv[k].u.i, yv[k].u.i);
		}
	}
	for (uint32_t i = 0; i < a->nrefs; i++) {
		assert_int_equal(a->refs[i].to, b->refs[i].to);
		assert_int_equal(a->refs[i].kind, b->refs[i].kind);
		assert_int_equal(a->refs[i].index, b->refs[i].index);
	}
	for (uint32_t i = 0; i < a->nclasses; i++) {
		assert_string_equal(a->classes[i].name, b->classes[i].name);
		assert_int_equal(a->classes[i].obj, b->classes[i].obj);
		assert_int_equal(a->classes[i].super, b->classes[i].super);
		assert_int_equal(a->classes[i].kind, b->classes[i].kind);
	}
	for (uint32_t i = 0; i < a->nroots; i++) {
		assert_int_equal(a->roots[i].obj, b->roots[i].obj);
		assert_int_equal(a->roots[i].kind, b->roots[i].kind);
	}
}

/* One heap, every way to its view: ids base + position (a bit each) or
 * hashed, references in their referrers' order (one pass) or not (counted),
 * in a new array or over the records (heapview_build_take(): which drops
 * them), with CLASS references ahead of the records read (the first @lead
 * objects hold no other) - the same view, the one the generator meant. */
static void test_ways_same_heap(void **state)
{
	static struct gen_expect e;
	static const uint32_t leads[] = { 0, 2500, 4500 };
	struct mt_heapview a, b;
	struct mt_snapshot r, s;
	char why[128];

	for (size_t l = 0; l < MT_ARRAY_SIZE(leads); l++) {
		gen_heap(&r, &e, leads[l], false);
		assert_int_equal(heapview_build(&r, NULL, &a, why, sizeof(why)), 0);
		assert_view_meant(&a.heap, &e);
		for (int way = 0; way < 6; way++) {
			bool take = way & 1, unsorted = way & 2, far = way & 4;

			gen_heap(&s, &e, leads[l], unsorted);
			if (far)
				gen_far(&s);
			assert_int_equal(take ? heapview_build_take(&s, NULL, &b, why, sizeof(why))
					      : heapview_build(&s, NULL, &b, why, sizeof(why)), 0);
			if (take) { /* dropped, the names kept */
				assert_null(s.objs);
				assert_null(s.refs);
				assert_int_equal(s.nobjs, 0);
				assert_non_null(s.names);
			}
			assert_same_heap(&a.heap, &b.heap, !far);
			heapview_free(&b);
			snapshot_free(&s);
		}
		heapview_free(&a);
		snapshot_free(&r);
	}
}

/* @s's object and reference records moved into a take's own pool, laid out
 * as the copy writes them there (MT_AP_FREEZE_INPLACE): the objects at its
 * start with room for @room more objects' records after them, the
 * references at its middle. */
static void to_pool(struct mt_snapshot *s, size_t room, size_t lead)
{
	struct recpool *p = recpool_new_sparse(64u << 20);
	uint64_t half;

	assert_non_null(p);
	half = mt_ap_inplace_refs(p->bytes);
	assert_true((s->nobjs + room) * sizeof(*s->objs) <= half);
	memcpy(p->map, s->objs, s->nobjs * sizeof(*s->objs));
	memcpy(p->map + half, s->refs, s->nrefs * sizeof(*s->refs));
	free(s->objs);
	free(s->refs);
	s->objs = (struct mt_ap_hobj *)(void *)p->map;
	s->cap_objs = s->nobjs + room;
	s->refs = (struct mt_ap_href *)(void *)(p->map + half);
	s->cap_refs = s->nrefs;
	s->own_pool = p;
	s->pool = p;
	s->recs_pooled = true;
	s->refs_lead = lead; /* the view's references may start below the records' */
	assert_true((s->nobjs + room) * sizeof(*s->objs) + lead * sizeof(struct dsl_href) <= half);
}

/* The records kept where a frozen copy wrote them, in a take's own pool
 * (snapmark.c's in_place()): the view built over them - its objects over
 * theirs (as large; the room a copy leaves after them is not needed), its
 * references over theirs, the pool then the view's; the same view either
 * way, and the snapshot frees none of the pool's memory. */
static void test_view_in_pool(void **state)
{
	static struct gen_expect e;
	struct mt_heapview a, b;
	struct mt_snapshot r, s;
	char why[128];

	(void)state;
	for (int way = 0; way < 5; way++) {
		/* way 3: CLASS references ahead of the records read - the view's
		 * references outrun them and move to memory of their own; way 4:
		 * the same, the view's references starting below the records'
		 * (snapmark.c's refs_lead): they stay in the pool */
		uint32_t lead = way >= 3 ? 2500 : 0;

		gen_heap(&r, &e, lead, false);
		assert_int_equal(heapview_build(&r, NULL, &a, why, sizeof(why)), 0);
		gen_heap(&s, &e, lead, false);
		/* room after the records (which an older view needed), none, or odd */
		to_pool(&s, way == 1 ? 0 : way == 2 ? s.nobjs / 2 - 1 : (s.nobjs + 1) / 2,
			way == 4 ? s.nobjs + 1 : 0);
		if (way != 2) {
			assert_int_equal(heapview_build_take(&s, NULL, &b, why, sizeof(why)), 0);
			assert_null(s.own_pool); /* the view's now */
			assert_non_null(b.pool);
			assert_false(s.recs_pooled);
		} else { /* not taken: the pool stays the snapshot's */
			assert_int_equal(heapview_build(&s, NULL, &b, why, sizeof(why)), 0);
			assert_null(b.pool);
			assert_non_null(s.own_pool);
		}
		assert_int_equal(recpool_contains(b.pool, b.heap.objects, 1), way != 2);
		assert_int_equal(recpool_contains(b.pool, b.heap.refs, 1), way < 2 || way == 4);
		assert_same_heap(&a.heap, &b.heap, true);
		heapview_free(&b);
		snapshot_free(&s);
		heapview_free(&a);
		snapshot_free(&r);
	}
}

/* The position of the object with @id in @s, UINT32_MAX for none. */
static uint32_t pos_of_id(const struct mt_snapshot *s, uint64_t id)
{
	for (uint32_t p = 0; p < s->nobjs; p++)
		if (s->objs[p].id == id)
			return p;
	return UINT32_MAX;
}

/* @s's records as a copy writes references by position into a take's own
 * pool (MT_AP_FREEZE_REFPOS): the objects at its start, each one's CLASS
 * reference a record and its first, then its others; those the view leaves
 * out (no such object, a root's kind) never written; each object's count in
 * its flags. */
static void to_pool_pos_as(struct mt_snapshot *s, bool noclass);

static void to_pool_pos(struct mt_snapshot *s)
{
	to_pool_pos_as(s, false);
}

/* ... @noclass: each CLASS reference implied, not a record (its object's
 * count's MT_AP_HOBJ_POS_CLASS, MT_AP_FREEZE_NOCLASS). */
static void to_pool_pos_as(struct mt_snapshot *s, bool noclass)
{
	struct recpool *p = recpool_new_sparse(64u << 20);
	struct mt_ap_hrefpos *pr;
	size_t k = 0, np = 0;

	assert_non_null(p);
	pr = (struct mt_ap_hrefpos *)(void *)(p->map + mt_ap_inplace_refs(p->bytes));
	for (uint32_t o = 0; o < s->nobjs; o++) {
		struct mt_ap_hobj *x = &s->objs[o];
		uint32_t c = 0;

		bool cref = false;

		if ((x->flags & MT_AP_HOBJ_CLASSREF) && noclass) {
			cref = true;
		} else if (x->flags & MT_AP_HOBJ_CLASSREF) {
			pr[np++] = (struct mt_ap_hrefpos){ pos_of_id(s, x->cls), -1,
							   1 }; /* JVMTI's CLASS */
			c++;
		}
		for (; k < s->nrefs && s->refs[k].from == x->id; k++) {
			uint32_t to = pos_of_id(s, s->refs[k].to);

			if (to == UINT32_MAX || !s->refs[k].kind || s->refs[k].kind > 10)
				continue;
			pr[np++] = (struct mt_ap_hrefpos){ to, s->refs[k].index, s->refs[k].kind };
			c++;
		}
		x->flags = c | (cref ? MT_AP_HOBJ_POS_CLASS : 0);
	}
	assert_int_equal(k, s->nrefs);
	memcpy(p->map, s->objs, s->nobjs * sizeof(*s->objs));
	free(s->objs);
	free(s->refs);
	s->objs = (struct mt_ap_hobj *)(void *)p->map;
	s->cap_objs = s->nobjs;
	s->refs = NULL;
	s->nrefs = s->cap_refs = 0;
	s->refpos = pr;
	s->nrefpos = np;
	s->noclass = noclass;
	s->own_pool = p;
	s->pool = p;
	s->recs_pooled = true;
}

/* References by position where the copy wrote them: the view takes each
 * record as its reference in place, the same view as from the records by
 * id, in one thread or in two (each the references of half the objects);
 * its objects in one thread or two as well (each half the objects, the
 * second's runs placed with the references); counts, sizes or positions
 * that do not fit the objects are a corrupt snapshot, said (in either
 * half); a view that is not taken cannot read them. */
static void test_view_by_position(void **state)
{
	static struct gen_expect e;
	static const struct dsl_needs novalues = { .refs = true };
	struct mt_heapview a, b, c;
	struct mt_snapshot r, s, u;
	char why[160];

	(void)state;
	gen_heap(&r, &e, 0, false);
	/* values read (one thread for the objects) or not (two may) */
	for (int nv = 0; nv < 2; nv++) {
		assert_int_equal(heapview_build(&r, nv ? &novalues : NULL, &a, why, sizeof(why)), 0);
		for (int threads = 1; threads <= 2; threads++) {
			setenv("MEMTRACE_VIEW_THREADS", threads == 1 ? "1" : "2", 1);
			gen_heap(&s, &e, 0, false);
			to_pool_pos(&s);
			assert_int_equal(heapview_build_take(&s, nv ? &novalues : NULL, &b, why,
							     sizeof(why)), 0);
			assert_null(s.refpos);
			assert_true(recpool_contains(b.pool, b.heap.refs, 1));
			assert_true(recpool_contains(b.pool, b.heap.objects, 1));
			/* each object's run for the dominators (checked with the
			 * heap) when they may be asked for */
			assert_int_equal(b.heap.ref_runs != NULL, !nv);
			assert_same_heap(&a.heap, &b.heap, true);
			heapview_free(&b);
			snapshot_free(&s);
		}
		if (!nv)
			heapview_free(&a);
	}
	/* two threads where one thread's order decides: a first-half object
	 * with a second-half object's id (the second half's ids redone in
	 * order) - the same view either way */
	for (int threads = 1; threads <= 2; threads++) {
		struct mt_snapshot *t = threads == 1 ? &s : &u;

		setenv("MEMTRACE_VIEW_THREADS", threads == 1 ? "1" : "2", 1);
		gen_heap(t, &e, 0, false);
		to_pool_pos(t);
		t->objs[10].id = t->objs[GEN_N - 10].id;
		assert_int_equal(heapview_build_take(t, &novalues, threads == 1 ? &b : &c, why,
						     sizeof(why)), 0);
	}
	assert_same_heap(&b.heap, &c.heap, true);
	heapview_free(&b);
	heapview_free(&c);
	snapshot_free(&s);
	snapshot_free(&u);
	for (int bad = 0; bad < 14; bad++) {
		setenv("MEMTRACE_VIEW_THREADS", bad < 7 ? "1" : "2", 1);
		gen_heap(&s, &e, 0, false);
		to_pool_pos(&s);
		if (bad % 7 == 5) {
			s.objs[GEN_N - 10].size = 1ull << 40; /* an object of 1 TiB (the second half) */
		} else if (bad % 7 == 6) {
			s.objs[GEN_N - 1].flags += 1;   /* the last claims one more */
		} else if (bad % 7 == 0) {
			s.objs[GEN_N / 2].flags += 1;   /* one more than written */
		} else if (bad % 7 == 1) { /* fewer than written: the last object with any */
			for (uint32_t o = GEN_N - 1; o > 0; o--)
				if (s.objs[o].flags) {
					s.objs[o].flags--;
					break;
				}
		} else if (bad % 7 == 2) {
			s.refpos[s.nrefpos / 2].to = GEN_N; /* past the objects */
		} else if (bad % 7 == 3) {
			s.refpos[s.nrefpos / 3].kind = 24;  /* a root's kind (the first half) */
		} else {
			s.refpos[s.nrefpos - 2].kind = 24;  /* ... and the second's */
		}
		assert_int_equal(heapview_build_take(&s, &novalues, &b, why, sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, "corrupt"));
		snapshot_free(&s);
	}
	unsetenv("MEMTRACE_VIEW_THREADS");
	gen_heap(&s, &e, 0, false);
	to_pool_pos(&s);
	assert_int_equal(heapview_build(&s, NULL, &b, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "by position"));
	snapshot_free(&s);
	heapview_free(&a);
	snapshot_free(&r);
}

/* @h's implied CLASS references made records again, each its object's first
 * (the caller frees *@objs and *@refs): the view an agent before stop 58 made. */
static struct dsl_heap with_class_records(const struct dsl_heap *h, struct dsl_hobject **objs,
					  struct dsl_href **refs)
{
	struct dsl_heap m = *h;
	uint32_t k = 0;

	*objs = calloc(h->nobjects + 1, sizeof(**objs));
	*refs = calloc((size_t)h->nrefs + h->nimplied + 1, sizeof(**refs));
	assert_non_null(*objs);
	assert_non_null(*refs);
	for (uint32_t o = 0; o < h->nobjects; o++) {
		const struct dsl_hobject *x = &h->objects[o];
		uint32_t c = dsl_heap_cref(h, o);

		(*objs)[o] = *x;
		(*objs)[o].ref_first = k;
		if (c != DSL_NOOBJ)
			(*refs)[k++] = (struct dsl_href){ .to = c, .index = -1, .kind = DSL_REF_CLASS };
		for (uint32_t j = 0; j < x->nrefs; j++)
			(*refs)[k++] = h->refs[x->ref_first + j];
		(*objs)[o].nrefs = k - (*objs)[o].ref_first;
	}
	assert_int_equal(k, h->nrefs + h->nimplied);
	m.objects = *objs;
	m.refs = *refs;
	m.nrefs = k;
	m.class_ref = NULL;
	m.nimplied = 0;
	m.ref_runs = NULL;
	return m;
}

/* References by position without CLASS records (MT_AP_FREEZE_NOCLASS): the
 * view's class_ref gives each class's CLASS reference, and with them made
 * records again it is the view from the records by id, in one thread or
 * two; an object whose count says otherwise than its class's others is a
 * corrupt snapshot. */
static void test_view_by_position_implied(void **state)
{
	static struct gen_expect e;
	static const struct dsl_needs novalues = { .refs = true };
	struct mt_heapview a, b;
	struct mt_snapshot r, s;
	char why[160];

	(void)state;
	gen_heap(&r, &e, 0, false);
	assert_int_equal(heapview_build(&r, &novalues, &a, why, sizeof(why)), 0);
	for (int threads = 1; threads <= 2; threads++) {
		struct dsl_hobject *objs;
		struct dsl_href *refs;
		struct dsl_heap m;
		uint32_t implied = 0;

		setenv("MEMTRACE_VIEW_THREADS", threads == 1 ? "1" : "2", 1);
		gen_heap(&s, &e, 0, false);
		to_pool_pos_as(&s, true);
		assert_int_equal(heapview_build_take(&s, &novalues, &b, why, sizeof(why)), 0);
		assert_non_null(b.heap.class_ref);
		for (uint32_t o = 0; o < b.heap.nobjects; o++)
			implied += dsl_heap_cref(&b.heap, o) != DSL_NOOBJ;
		assert_true(implied > 0);
		assert_int_equal(implied, b.heap.nimplied);
		assert_int_equal(b.heap.nrefs + b.heap.nimplied, a.heap.nrefs);
		m = with_class_records(&b.heap, &objs, &refs);
		assert_same_heap(&a.heap, &m, true);
		free(objs);
		free(refs);
		heapview_free(&b);
		snapshot_free(&s);
	}
	for (int threads = 1; threads <= 2; threads++) {
		uint32_t first = UINT32_MAX, other = UINT32_MAX;

		setenv("MEMTRACE_VIEW_THREADS", threads == 1 ? "1" : "2", 1);
		gen_heap(&s, &e, 0, false);
		to_pool_pos_as(&s, true);
		/* an object of a class whose first object implies one, late in
		 * the heap (the second half's), says it implies none */
		for (uint32_t o = 0; o < s.nobjs && other == UINT32_MAX; o++)
			if (s.objs[o].flags & MT_AP_HOBJ_POS_CLASS)
				first = first == UINT32_MAX ? o : first;
		for (uint32_t o = (uint32_t)s.nobjs - 1; o > first && other == UINT32_MAX; o--)
			if (s.objs[o].cls == s.objs[first].cls)
				other = o;
		assert_true(other != UINT32_MAX);
		s.objs[other].flags &= ~MT_AP_HOBJ_POS_CLASS;
		assert_int_equal(heapview_build_take(&s, &novalues, &b, why, sizeof(why)), -EINVAL);
		assert_non_null(strstr(why, "corrupt"));
		snapshot_free(&s);
	}
	unsetenv("MEMTRACE_VIEW_THREADS");
	heapview_free(&a);
	snapshot_free(&r);
}

/* A take of dense ids indexes them as its objects are built (one pass over
 * the records): a size no Java object can have is refused there too, and a
 * CLASS reference to an object found by id, not by its class, still placed. */
static void test_take_fused(void **state)
{
	static struct gen_expect e;
	struct mt_heapview a, b;
	struct mt_snapshot r, s;
	char why[160];

	(void)state;
	gen_heap(&s, &e, 0, false);
	s.objs[GEN_N / 2].size = UINT64_MAX - 40;
	assert_int_equal(heapview_build_take(&s, NULL, &b, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "corrupt"));
	assert_non_null(strstr(why, "16 GiB"));
	snapshot_free(&s);
	/* an object whose class record names no class of the snapshot, its
	 * CLASS reference to that class object's id: found once all are indexed */
	gen_heap(&r, &e, 0, false);
	gen_heap(&s, &e, 0, false);
	for (size_t i = GEN_N / 2, found = 0; i < GEN_N - 1 && !found; i++) {
		found = 1;
		for (size_t k = 0; k < r.nclasses; k++)
			found &= r.classes[k].id != r.objs[i].id;
		if (!found)
			continue;
		/* an object no class record names: the first object's CLASS
		 * reference leads to it by id (an object after it) */
		r.objs[0].cls = s.objs[0].cls = r.objs[i].id;
		r.objs[0].flags = s.objs[0].flags = MT_AP_HOBJ_CLASSREF;
	}
	assert_int_equal(heapview_build(&r, NULL, &a, why, sizeof(why)), 0);
	assert_int_equal(heapview_build_take(&s, NULL, &b, why, sizeof(why)), 0);
	assert_same_heap(&a.heap, &b.heap, true);
	assert_true(a.heap.objects[0].nrefs >= 1);
	assert_int_equal(a.heap.refs[a.heap.objects[0].ref_first].kind, DSL_REF_CLASS);
	assert_true(a.heap.refs[a.heap.objects[0].ref_first].to >= GEN_N / 2);
	/* the instances and shallow bytes per class, counted as it was built */
	for (uint32_t c = 0; c < b.heap.nclasses; c++) {
		uint64_t n = 0, bytes = 0;

		for (uint32_t o = 0; o < b.heap.nobjects; o++)
			if (b.heap.objects[o].cls == c) {
				n++;
				bytes += b.heap.objects[o].size;
			}
		assert_int_equal(b.cls_count[c], n);
		assert_int_equal(b.cls_bytes[c], bytes);
		assert_int_equal(a.cls_count[c], n);
	}
	heapview_free(&b);
	snapshot_free(&s);
	heapview_free(&a);
	snapshot_free(&r);
}

/* A virtual thread's locals: a parked one's from the copy's mark (flagged), a
 * mounted one's after JVMTI's OTHER root to it (JDK 21+: that root, the
 * virtual thread's frames, then the carrier's THREAD root and its frames);
 * a platform thread's, the carrier's and those after an OTHER root to any
 * other object are not. A tid marker names the virtual thread of the locals
 * after it, and is no root itself. */
static void test_vthread_locals(void **state)
{
	static const char *const sigs[] = { "Ljava/lang/Thread;", "Ljava/lang/BaseVirtualThread;",
					    "Ljava/lang/VirtualThread;", "Ljava/util/ArrayList;" };
	static const uint64_t supers[] = { 0, 1, 2, 0 };
	/* objects 100.. of classes 1..4 */
	static const uint64_t cls_of[] = { 1, 4, 3, 4, 1, 4, 4, 4 };
	/* the copy's mark puts a tid marker (no root) before a virtual
	 * thread's locals; a non-local root ends them */
	static const struct mt_ap_hroot roots[] = {
		{ 100, 26, 0 }, { 101, 24, 0 },                  /* a platform thread, its local */
		{ 102, 27, 0 }, { 77, 0, MT_AP_HROOT_TID },      /* mounted: OTHER, its tid, */
		{ 103, 24, 0 }, { 103, 25, 0 },                  /* its frames */
		{ 104, 26, 0 }, { 105, 24, 0 },                  /* the carrier, its own frame */
		{ 106, 24, MT_AP_HROOT_VTHREAD },                /* a parked one's (a chunk) */
		{ 101, 27, 0 }, { 107, 25, 0 },                  /* OTHER to no thread: no */
		{ 78, 0, MT_AP_HROOT_TID | MT_AP_HROOT_VTHREAD }, /* a parked one's, named */
		{ 105, 24, MT_AP_HROOT_VTHREAD },
		{ 104, 26, 0 }, { 107, 24, 0 },                  /* a thread again: not named */
	};
	enum { NR = 15, NV = 13 }; /* roots, roots in the view */
	static const uint32_t in_view[NV] = { 0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 12, 13, 14 };
	static const bool want[NV] = { false, false, false, true, true, false, false, true,
				       false, false, true, false, false };
	static const uint64_t want_tid[NV] = { 0, 0, 0, 77, 77, 0, 0, 0, 0, 0, 78, 0, 0 };
	struct mt_snapshot s;
	struct mt_heapview hv;
	char why[128];

	(void)state;
	snapshot_init(&s);
	s.source = "live";
	assert_int_equal(snapshot_grow(&s.classes, &s.cap_classes, 0, 4, sizeof(*s.classes)), 0);
	for (int i = 0; i < 4; i++) {
		struct mt_snap_class *c = &s.classes[s.nclasses++];

		memset(c, 0, sizeof(*c));
		c->id = (uint64_t)i + 1;
		c->super = supers[i];
		c->sig = snapshot_strdup(&s, sigs[i], strlen(sigs[i]));
		c->kind = MT_SNAP_CLASS;
	}
	assert_int_equal(snapshot_grow(&s.objs, &s.cap_objs, 0, 8, sizeof(*s.objs)), 0);
	for (int i = 0; i < 8; i++)
		s.objs[s.nobjs++] = (struct mt_ap_hobj){ 100 + (uint64_t)i, cls_of[i], 24, -1, 0 };
	assert_int_equal(snapshot_grow(&s.roots, &s.cap_roots, 0, NR, sizeof(*s.roots)), 0);
	for (int i = 0; i < NR; i++)
		s.roots[s.nroots++] = roots[i];
	assert_int_equal(heapview_build(&s, NULL, &hv, why, sizeof(why)), 0);
	assert_int_equal(hv.heap.nroots, NV);
	for (int i = 0; i < NV; i++) {
		assert_int_equal(hv.heap.objects[hv.heap.roots[i].obj].id, roots[in_view[i]].to);
		assert_int_equal(hv.heap.roots[i].vthread, want[i]);
		assert_int_equal(hv.heap.roots[i].vtid, want_tid[i]);
	}
	heapview_free(&hv);
	snapshot_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds_statics),
		cmocka_unit_test(test_heap_programs),
		cmocka_unit_test(test_sparse_ids),
		cmocka_unit_test(test_implied_class_refs),
		cmocka_unit_test(test_impossible_size),
		cmocka_unit_test(test_projection),
		cmocka_unit_test(test_heap_ages),
		cmocka_unit_test(test_ways_same_heap),
		cmocka_unit_test(test_view_in_pool),
		cmocka_unit_test(test_view_by_position),
		cmocka_unit_test(test_view_by_position_implied),
		cmocka_unit_test(test_take_fused),
		cmocka_unit_test(test_vthread_locals),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
