// SPDX-License-Identifier: GPL-2.0
/* test_viewrefs.c - the heap view's references placed from records
 * (user/heap/viewrefs.c): JVMTI kinds mapped, each object's run in record
 * order with its implied CLASS reference first, the same whether the
 * records come sorted by referrer, unsorted, or are given up to be written
 * over. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heap/viewrefs.h"

static void test_kinds(void **state)
{
	(void)state;
	assert_int_equal(viewrefs_kind(1), DSL_REF_CLASS);
	assert_int_equal(viewrefs_kind(2), DSL_REF_FIELD);
	assert_int_equal(viewrefs_kind(3), DSL_REF_ARRAY_ELEMENT);
	assert_int_equal(viewrefs_kind(8), DSL_REF_STATIC_FIELD);
	assert_int_equal(viewrefs_kind(21), DSL_ROOT_JNI_GLOBAL);
	assert_int_equal(viewrefs_kind(26), DSL_ROOT_THREAD);
	assert_int_equal(viewrefs_kind(0), -1);
	assert_int_equal(viewrefs_kind(11), -1);
	assert_int_equal(viewrefs_kind(20), -1);
	assert_int_equal(viewrefs_kind(28), -1);
	assert_int_equal(viewrefs_kind(1u << 31), -1);
}

/* Three objects (ids 1-3) of one class with two reference fields (JVMTI
 * indices 0 and 1); object 3 carries a CLASS reference to object 1. */
struct fixture {
	struct mt_snapshot s;
	struct viewbuild b;
	struct dsl_hobject objs[3];
	struct dsl_hclass cls[1];
	struct cls_aux aux[1];
	int32_t slot[2];
};

static void setup(struct fixture *f, const struct mt_ap_href *recs, size_t n, bool take)
{
	memset(f, 0, sizeof(*f));
	f->s.refs = malloc(n * sizeof(*recs));
	assert_non_null(f->s.refs);
	memcpy(f->s.refs, recs, n * sizeof(*recs));
	f->s.nrefs = f->s.cap_refs = n;
	f->slot[0] = 0;
	f->slot[1] = 1;
	f->aux[0] = (struct cls_aux){ .slot = f->slot, .nslot = 2 };
	for (uint32_t i = 0; i < 3; i++)
		f->objs[i] = (struct dsl_hobject){ .id = i + 1, .cls = 0, .length = -1,
						   .ref_first = i == 2 ? 0 : DSL_NOOBJ };
	f->b = (struct viewbuild){ .s = &f->s, .take = take ? &f->s : NULL, .aux = f->aux,
				   .cls = f->cls, .objs = f->objs, .n = 3, .ncls = 1,
				   .nclassrefs = 1 };
	assert_int_equal(idmap_index_init(&f->b.objmap, 3, 3), 0);
	assert_int_equal(idmap_index_init(&f->b.clsmap, 1, 3), 0);
	assert_int_equal(idmap_index_init(&f->b.strmap, 1, 3), 0);
	for (uint32_t i = 0; i < 3; i++)
		assert_int_equal(idmap_index_put(&f->b.objmap, i + 1, i), 0);
}

static void teardown(struct fixture *f)
{
	idmap_index_free(&f->b.objmap);
	idmap_index_free(&f->b.clsmap);
	idmap_index_free(&f->b.strmap);
	free(f->s.refs);
}

/* Place @recs and check the runs: 1 -> [2 (slot 0), 3 (slot 1)], 2 -> [3
 * (slot 0)], 3 -> [CLASS 1]; a record to an id not in the heap left out. */
static void place_and_check(const struct mt_ap_href *recs, size_t n, bool take)
{
	struct fixture *f = calloc(1, sizeof(*f));
	struct dsl_href *out = NULL;
	size_t nout = 0;

	assert_non_null(f);
	setup(f, recs, n, take);
	assert_int_equal(viewrefs_build(&f->b, &out, &nout), 0);
	assert_int_equal(nout, 4);
	assert_int_equal(f->objs[0].ref_first, 0);
	assert_int_equal(f->objs[0].nrefs, 2);
	assert_int_equal(out[0].to, 1);
	assert_int_equal(out[0].index, 0);
	assert_int_equal(out[0].kind, DSL_REF_FIELD);
	assert_int_equal(out[1].to, 2);
	assert_int_equal(out[1].index, 1);
	assert_int_equal(f->objs[1].ref_first, 2);
	assert_int_equal(f->objs[1].nrefs, 1);
	assert_int_equal(out[2].to, 2);
	assert_int_equal(out[2].index, 0);
	assert_int_equal(f->objs[2].ref_first, 3);
	assert_int_equal(f->objs[2].nrefs, 1);
	assert_int_equal(out[3].kind, DSL_REF_CLASS);
	assert_int_equal(out[3].to, 0);
	if (take)
		assert_null(f->s.refs); /* given up: the view's now, or freed */
	free(out);
	teardown(f);
	free(f);
}

static const struct mt_ap_href sorted[] = {
	{ .from = 1, .to = 2, .index = 0, .kind = 2 },
	{ .from = 1, .to = 3, .index = 1, .kind = 2 },
	{ .from = 1, .to = 99, .index = 0, .kind = 2 }, /* not in the heap */
	{ .from = 2, .to = 3, .index = 0, .kind = 2 },
};
static const struct mt_ap_href unsorted[] = {
	{ .from = 2, .to = 3, .index = 0, .kind = 2 },
	{ .from = 1, .to = 2, .index = 0, .kind = 2 },
	{ .from = 1, .to = 3, .index = 1, .kind = 2 },
	{ .from = 3, .to = 1, .index = -1, .kind = 26 }, /* a root's kind: left out */
};

static void test_sorted(void **state)
{
	(void)state;
	place_and_check(sorted, 4, false);
	place_and_check(sorted, 4, true);
}

static void test_unsorted(void **state)
{
	(void)state;
	place_and_check(unsorted, 4, false);
	place_and_check(unsorted, 4, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_sorted),
		cmocka_unit_test(test_unsorted),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
