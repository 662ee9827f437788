// SPDX-License-Identifier: GPL-2.0
/* test_viewobjs.c - the heap view's objects from records by position
 * (user/heap/viewobjs.c): sizes checked, class indexes, each object's run of
 * references from the counts its record carries, per-class counts - the
 * same in one thread and in two, where the second half's runs are left
 * relative for the references' pass (pos_mid, pos_off). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heap/viewobjs.h"

static void test_check(void **state)
{
	struct mt_ap_hobj o = { .id = 7, .size = 24 };
	uint64_t total = 0;
	char why[160];

	(void)state;
	assert_int_equal(viewobjs_check(&o, &total, why, sizeof(why)), 0);
	assert_int_equal(total, 24);
	o.size = (1ull << 35) + 8; /* past long[2^31 - 1] */
	assert_int_equal(viewobjs_check(&o, &total, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "16 GiB"));
	o.size = 1ull << 34;
	total = (1ull << 50) - 8; /* the heap past a PiB */
	assert_int_equal(viewobjs_check(&o, &total, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "1 PiB"));
}

#define N 3000
#define NCLS 3

/* N objects of classes with ids 100..102 (every third object's class
 * unknown: id 99), object i with i % 5 references, by position. */
struct fixture {
	struct mt_snapshot s;
	struct viewbuild b;
	struct dsl_hobject objs[N];
	struct cls_aux aux[NCLS + 1];
	uint64_t count[NCLS + 1], bytes[NCLS + 1];
	size_t nrefs;
	char why[160];
};

static void fixture_init(struct fixture *f)
{
	memset(f, 0, sizeof(*f));
	for (uint32_t i = 0; i < N; i++) {
		struct mt_ap_hobj o = { .id = 1000 + i, .cls = i % 3 == 2 ? 99 : 100 + i % 2,
					.size = 16 + 8 * (i % 4), .length = i % 7 == 0 ? (int32_t)i : -1,
					.flags = i % 5 };

		memcpy(&f->objs[i], &o, sizeof(o)); /* records where the view's objects go */
		f->nrefs += i % 5;
	}
	f->s.nrefpos = f->nrefs;
	f->b.s = &f->s;
	f->b.take = &f->s;
	f->b.objs = f->objs;
	f->b.n = N;
	f->b.ncls = NCLS + 1;
	f->b.unknown = NCLS;
	f->b.aux = f->aux;
	f->b.cls_count = f->count;
	f->b.cls_bytes = f->bytes;
	f->b.why = f->why;
	f->b.wn = sizeof(f->why);
	assert_int_equal(idmap_index_init(&f->b.clsmap, NCLS, 200), 0);
	for (uint32_t c = 0; c < NCLS; c++)
		assert_int_equal(idmap_index_put(&f->b.clsmap, 100 + c, c), 0);
}

static void fixture_free(struct fixture *f)
{
	idmap_index_free(&f->b.clsmap);
}

/* One thread and two: the same objects once the second half's runs are
 * moved by pos_off, the same counts. */
static void test_one_and_two(void **state)
{
	static struct fixture f[2];

	(void)state;
	for (int t = 0; t < 2; t++) {
		setenv("MEMTRACE_VIEW_THREADS", t ? "2" : "1", 1);
		fixture_init(&f[t]);
		assert_int_equal(viewobjs_by_pos(&f[t].b), 0);
	}
	unsetenv("MEMTRACE_VIEW_THREADS");
	assert_int_equal(f[0].b.pos_mid, N);
	assert_int_equal(f[0].b.pos_off, 0);
	assert_int_equal(f[1].b.pos_mid, (N / 2) & ~63u); /* split on a bit word */
	assert_true(f[1].b.pos_off > 0);
	for (uint32_t i = 0, at = 0; i < N; i++) {
		const struct dsl_hobject *a = &f[0].objs[i], *b = &f[1].objs[i];
		size_t first = b->ref_first + (i >= f[1].b.pos_mid ? f[1].b.pos_off : 0);

		assert_int_equal(a->id, 1000 + i);
		assert_int_equal(a->cls, i % 3 == 2 ? NCLS : i % 2);
		assert_int_equal(a->ref_first, at);
		assert_int_equal(a->nrefs, i % 5);
		assert_int_equal(a->length, i % 7 == 0 ? (int32_t)i : -1);
		assert_int_equal(first, a->ref_first);
		assert_int_equal(b->id, a->id);
		assert_int_equal(b->cls, a->cls);
		assert_int_equal(b->size, a->size);
		assert_int_equal(b->length, a->length);
		assert_int_equal(b->nrefs, a->nrefs);
		at += i % 5;
	}
	for (uint32_t c = 0; c <= NCLS; c++) { /* class 102 has none */
		assert_int_equal(f[0].count[c] > 0, c != 2);
		assert_int_equal(f[0].count[c], f[1].count[c]);
		assert_int_equal(f[0].bytes[c], f[1].bytes[c]);
		assert_int_equal(f[1].aux[c].inst, c != 2);
		assert_int_equal(f[1].aux[c].known, c != 2);
	}
	assert_int_equal(f[0].count[0] + f[0].count[1] + f[0].count[NCLS], N);
	fixture_free(&f[0]);
	fixture_free(&f[1]);
}

/* Counts that do not add up to the references written: corrupt, in either
 * half, in one thread or two. */
static void test_counts_corrupt(void **state)
{
	static struct fixture f;
	static const uint32_t at[] = { 10, N - 10 };

	(void)state;
	for (int t = 0; t < 4; t++) {
		struct mt_ap_hobj o;

		setenv("MEMTRACE_VIEW_THREADS", t & 1 ? "2" : "1", 1);
		fixture_init(&f);
		memcpy(&o, &f.objs[at[t / 2]], sizeof(o));
		o.flags += 3;
		memcpy(&f.objs[at[t / 2]], &o, sizeof(o));
		assert_int_equal(viewobjs_by_pos(&f.b), -EINVAL);
		assert_non_null(strstr(f.why, "corrupt"));
		fixture_free(&f);
		fixture_init(&f);
		f.s.nrefpos = f.nrefs + 1; /* one written that no object claims */
		assert_int_equal(viewobjs_by_pos(&f.b), -EINVAL);
		assert_non_null(strstr(f.why, "corrupt"));
		fixture_free(&f);
	}
	unsetenv("MEMTRACE_VIEW_THREADS");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_one_and_two),
		cmocka_unit_test(test_counts_corrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
