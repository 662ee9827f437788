// SPDX-License-Identifier: GPL-2.0
/* test_sitematch - BPF per-site volumes matched to the agent's sites (leaks.h
 * states the rule): by method name, innermost frame first, then the callers;
 * shared in proportion to the agent's allocation estimate; survival. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/leaks.h"
#include "analysis/samples.h"
#include "probe/sitecount.h"

enum { M_LEAK = 1, M_CHURN, M_MAIN, M_COPYOF, M_GROW };
enum { C_BYTES = 1, C_LONGS };

struct fixture {
	struct mt_samples m;
	struct mt_leaks l;
	uint64_t next_id;
};

static void alloc(struct fixture *f, uint32_t cls, const uint32_t *meth, uint32_t depth, int n)
{
	struct mt_ap_frame fr[8];

	for (uint32_t k = 0; k < depth; k++)
		fr[k] = (struct mt_ap_frame){ meth[k], 10 + (int32_t)k };
	for (int i = 0; i < n; i++) {
		struct mt_ap_alloc a = { .id = f->next_id++, .size = 1000, .depth = depth };

		assert_int_equal(samples_alloc(&f->m, cls, &a, fr), 0);
	}
}

/*
 * 100 byte[] from App.leak (kept), 100 long[] from App.churn (freed), 100
 * long[] from Arrays.copyOf < App.grow (kept); all called from App.main.
 * K = 1; one GC after the allocations makes the kept ones old.
 */
static int setup(void **state)
{
	static const uint32_t leak[] = { M_LEAK, M_MAIN }, churn[] = { M_CHURN, M_MAIN },
			      grow[] = { M_COPYOF, M_GROW, M_MAIN };
	struct fixture *f = calloc(1, sizeof(*f));
	struct mt_ap_gc gc = { .gc_no = 1 };

	assert_non_null(f);
	f->next_id = 1;
	assert_int_equal(samples_init(&f->m, 1, 1000, 0), 0);
	leaks_init(&f->l, 1);
	f->m.on_alloc = leaks_on_alloc;
	f->m.on_alloc_ctx = &f->l;
	assert_int_equal(samples_define(&f->m, MT_AP_REC_CLASS, C_BYTES, "[B", NULL), 0);
	assert_int_equal(samples_define(&f->m, MT_AP_REC_CLASS, C_LONGS, "[J", NULL), 0);
	assert_int_equal(samples_define(&f->m, MT_AP_REC_METHOD, M_LEAK, "LApp;", "leak"), 0);
	assert_int_equal(samples_define(&f->m, MT_AP_REC_METHOD, M_CHURN, "LApp;", "churn"), 0);
	assert_int_equal(samples_define(&f->m, MT_AP_REC_METHOD, M_MAIN, "LApp;", "main"), 0);
	assert_int_equal(samples_define(&f->m, MT_AP_REC_METHOD, M_COPYOF, "Ljava/util/Arrays;",
					"copyOf"), 0);
	assert_int_equal(samples_define(&f->m, MT_AP_REC_METHOD, M_GROW, "LApp;", "grow"), 0);
	assert_int_equal(leaks_mark_mid(&f->l, &f->m, 0), 0);
	alloc(f, C_BYTES, leak, 2, 100);
	alloc(f, C_LONGS, churn, 2, 100);
	alloc(f, C_LONGS, grow, 3, 100);
	for (uint64_t id = 101; id <= 200; id++)
		samples_free_id(&f->m, id);
	gc.next_id = f->next_id;
	samples_gc(&f->m, &gc);
	assert_true(leaks_rank(&f->l, &f->m, 10) >= 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	leaks_free(&f->l);
	samples_free(&f->m);
	free(f);
	return 0;
}

static const struct mt_leak *group_of(const struct fixture *f, const char *site_prefix)
{
	for (size_t k = 0; k < f->l.n; k++) {
		const char *name = samples_site_name((struct mt_samples *)&f->m, f->l.g[k].site);

		if (!strncmp(name, site_prefix, strlen(site_prefix)))
			return &f->l.g[k];
	}
	fail_msg("no group %s", site_prefix);
	return NULL;
}

static void test_add_find(void **state)
{
	struct mt_site_volumes v = { 0 };

	for (int i = 0; i < 40; i++) {
		char name[32];

		snprintf(name, sizeof(name), "p.C.m%d", i % 20);
		assert_int_equal(sitevol_add(&v, name, 100, 1), 0);
	}
	assert_int_equal(v.n, 20);
	assert_non_null(sitevol_find(&v, "p.C.m7"));
	assert_int_equal(sitevol_find(&v, "p.C.m7")->bytes, 200);
	assert_int_equal(sitevol_find(&v, "p.C.m7")->refills, 2);
	assert_null(sitevol_find(&v, "p.C.m"));      /* whole names only */
	assert_null(sitevol_find(&v, "p.C.m77"));
	sitevol_free(&v);
	sitevol_free(&v); /* twice: no-op */
}

/* Interpreted (or separately compiled) sites: each group gets its own
 * method whole, plus a part of App.main (in every chain). */
static void test_match_own_frame(void **state)
{
	struct fixture *f = *state;
	struct mt_site_volumes v = { .seconds = 10 };
	const struct mt_leak *leak, *churn, *grow;
	double w = samples_weight(1000, 1000);

	assert_int_equal(sitevol_add(&v, "App.leak", 200000, 10), 0);
	assert_int_equal(sitevol_add(&v, "App.churn", 500000, 25), 0);
	assert_int_equal(sitevol_add(&v, "java.util.Arrays.copyOf", 80000, 4), 0);
	assert_int_equal(sitevol_add(&v, "App.main", 1000, 1), 0);
	assert_int_equal(leaks_match_volumes(&f->l, &f->m, &v, 10), 3);
	leak = group_of(f, "App.leak:");
	churn = group_of(f, "App.churn:");
	grow = group_of(f, "java.util.Arrays.copyOf:");
	assert_string_equal(leak->alloc_method, "App.leak");
	assert_int_equal(leak->match_depth, 0);
	assert_true(leak->alloc_bytes >= 200000 && leak->alloc_bytes <= 201000);
	assert_float_equal(leak->alloc_rate, leak->alloc_bytes / 10, 1e-6);
	assert_true(leak->alloc_refills >= 10 && leak->alloc_refills <= 11);
	assert_float_equal(leak->old_bytes_end, 100 * w, 1e-6);
	/* survival from the samples alone: all 100 kept, none dead */
	assert_float_equal(leak->survival, 1, 1e-9);
	assert_true(leak->survival_lo > 0.95 && leak->survival_hi == 1);
	assert_string_equal(grow->alloc_method, "java.util.Arrays.copyOf");
	assert_int_equal(grow->match_depth, 0);
	assert_true(grow->alloc_bytes >= 80000 && grow->alloc_bytes <= 81000);
	assert_string_equal(churn->alloc_method, "App.churn");
	assert_float_equal(churn->survival, 0, 1e-12);
	assert_true(churn->survival_lo == 0 && churn->survival_hi < 0.05);
	/* every byte is handed out once */
	assert_float_equal(leak->alloc_bytes + churn->alloc_bytes + grow->alloc_bytes,
			   200000 + 500000 + 80000 + 1000, 1e-3);
	assert_float_equal(churn->alloc_w, 100 * w, 1e-6); /* dead samples count */
	assert_int_equal(churn->alloc_n, 100);
	sitevol_free(&v);
}

/* Everything inlined into a compiled App.main: found through the callers and
 * shared by the agent's allocation estimates (equal here: a third each). */
static void test_match_inlined_caller(void **state)
{
	struct fixture *f = *state;
	struct mt_site_volumes v = { .seconds = 10 };
	const struct mt_leak *leak, *grow;

	assert_int_equal(sitevol_add(&v, "App.main", 900000, 30), 0);
	assert_int_equal(leaks_match_volumes(&f->l, &f->m, &v, 10), 3);
	leak = group_of(f, "App.leak:");
	grow = group_of(f, "java.util.Arrays.copyOf:");
	assert_string_equal(leak->alloc_method, "App.main");
	assert_int_equal(leak->match_depth, 1);
	assert_int_equal(grow->match_depth, 2);  /* copyOf, grow, then main */
	assert_float_equal(leak->alloc_bytes, 300000, 1e-3);
	assert_float_equal(grow->alloc_bytes, 300000, 1e-3);
	assert_float_equal(leak->alloc_refills, 10, 1e-6);
	assert_float_equal(group_of(f, "App.churn:")->alloc_bytes, 300000, 1e-3);
	sitevol_free(&v);
}

/* One site counted partly under itself (interpreted) and partly under the
 * caller that inlined it later: both parts reach it, and the caller's bytes
 * go where the other methods leave room (all three groups expect 210000). */
static void test_spread_over_chain(void **state)
{
	struct fixture *f = *state;
	struct mt_site_volumes v = { .seconds = 10 };
	const struct mt_leak *leak;

	assert_int_equal(sitevol_add(&v, "App.leak", 30000, 3), 0);
	assert_int_equal(sitevol_add(&v, "App.main", 600000, 60), 0);
	assert_int_equal(leaks_match_volumes(&f->l, &f->m, &v, 10), 3);
	leak = group_of(f, "App.leak:");
	assert_float_equal(leak->alloc_bytes, 210000, 100);
	assert_float_equal(leak->alloc_refills, 3 + 18, 0.01);
	assert_float_equal(group_of(f, "App.churn:")->alloc_bytes, 210000, 100);
	assert_string_equal(leak->alloc_method, "App.main"); /* the larger part */
	assert_int_equal(leak->match_depth, 1);
	sitevol_free(&v);
}

/* A volume counted over a longer time than the agent's window is scaled to it;
 * a site with no volume stays unknown (-1), never 0. */
static void test_scale_and_unmatched(void **state)
{
	struct fixture *f = *state;
	struct mt_site_volumes v = { .seconds = 20 };

	assert_int_equal(sitevol_add(&v, "App.leak", 400000, 20), 0);
	assert_int_equal(sitevol_add(&v, "Other.main", 400000, 20), 0);
	assert_int_equal(sitevol_add(&v, "App.leak", 0, 0), 0); /* merged by name */
	assert_int_equal(v.n, 2);
	assert_int_equal(leaks_match_volumes(&f->l, &f->m, &v, 10), 1);
	assert_float_equal(group_of(f, "App.leak:")->alloc_bytes, 200000, 1e-6);
	assert_float_equal(group_of(f, "App.churn:")->alloc_bytes, -1, 0);
	/* the survival needs no volume: the samples know it */
	assert_float_equal(group_of(f, "App.churn:")->survival, 0, 0);
	assert_null(group_of(f, "App.churn:")->alloc_method);
	sitevol_free(&v);
}

/* The ranking keeps suspects first; the volumes only break ties. */
static void test_order_kept(void **state)
{
	struct fixture *f = *state;
	struct mt_site_volumes v = { .seconds = 10 };

	assert_int_equal(sitevol_add(&v, "App.main", 900000, 30), 0);
	assert_true(leaks_match_volumes(&f->l, &f->m, &v, 10) > 0);
	for (size_t k = 1; k < f->l.n; k++)
		assert_true(f->l.g[k - 1].suspect >= f->l.g[k].suspect);
	sitevol_free(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_add_find),
		cmocka_unit_test_setup_teardown(test_match_own_frame, setup, teardown),
		cmocka_unit_test_setup_teardown(test_match_inlined_caller, setup, teardown),
		cmocka_unit_test_setup_teardown(test_spread_over_chain, setup, teardown),
		cmocka_unit_test_setup_teardown(test_scale_and_unmatched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_order_kept, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
