// SPDX-License-Identifier: GPL-2.0
/* test_ageranges - age ranges, the sample store and record decoding, leak ranking. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <math.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/ageranges.h"
#include "analysis/leaks.h"
#include "analysis/samples.h"

static void test_ranges_basic(void **state)
{
	struct mt_ageranges a;

	assert_int_equal(ageranges_init(&a, 100), 0);
	assert_int_equal(ageranges_age(&a, 100), 0);
	ageranges_gc(&a, 110);          /* ids 100..109: epoch 0 */
	ageranges_gc(&a, 110);          /* nothing allocated: range 110 moves to epoch 2 */
	ageranges_gc(&a, 150);          /* ids 110..149: epoch 2 → 150.. epoch 3 */
	assert_int_equal(a.epoch, 3);
	assert_int_equal(ageranges_age(&a, 100), 3);
	assert_int_equal(ageranges_age(&a, 109), 3);
	assert_int_equal(ageranges_age(&a, 110), 1);
	assert_int_equal(ageranges_age(&a, 149), 1);
	assert_int_equal(ageranges_age(&a, 150), 0);
	assert_int_equal(ageranges_age(&a, 99), 3); /* below the first: the oldest */
	assert_int_equal(ageranges_age_at(&a, 100, 1), 1);
	assert_int_equal(ageranges_age_at(&a, 150, 1), 0);
	ageranges_trim(&a, 120);
	assert_int_equal(a.n, 2);
	assert_int_equal(ageranges_age(&a, 120), 1);
	ageranges_free(&a);
	ageranges_free(&a); /* twice: no-op */
}

static void test_ranges_bound(void **state)
{
	struct mt_ageranges a;

	assert_int_equal(ageranges_init(&a, 1), 0);
	for (uint64_t g = 1; g <= MT_AGE_MAX_RANGES + 10; g++)
		assert_int_equal(ageranges_gc(&a, 1 + g * 10), 0);
	assert_true(a.n <= MT_AGE_MAX_RANGES);
	assert_int_equal(a.merged, 11);
	/* the youngest ranges are exact */
	assert_int_equal(ageranges_age(&a, 1 + (MT_AGE_MAX_RANGES + 10) * 10), 0);
	assert_int_equal(ageranges_age(&a, 1 + (MT_AGE_MAX_RANGES + 9) * 10), 1);
	assert_int_equal(ageranges_age(&a, 1 + (MT_AGE_MAX_RANGES) * 10 + 5), 10);
	ageranges_free(&a);
}

static void test_buckets(void **state)
{
	static const int want[] = { 0, 1, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 4, 4, 4, 4, 5, 5 };

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(ageranges_bucket(i), want[i]);
	assert_int_equal(ageranges_bucket(1000000), 5);
	assert_string_equal(ageranges_bucket_name(2), "2-3");
	assert_string_equal(ageranges_bucket_name(5), "16+");
}

static void test_java_names(void **state)
{
	char b[64];

	java_name_of_sig("[B", b, sizeof(b));
	assert_string_equal(b, "byte[]");
	java_name_of_sig("[[J", b, sizeof(b));
	assert_string_equal(b, "long[][]");
	java_name_of_sig("Ljava/util/HashMap$Node;", b, sizeof(b));
	assert_string_equal(b, "java.util.HashMap$Node");
	java_name_of_sig("[Ljava/lang/Object;", b, sizeof(b));
	assert_string_equal(b, "java.lang.Object[]");
	java_name_of_sig("Ljava/lang/String;", b, 5);
	assert_string_equal(b, "java");
}

static void test_weight(void **state)
{
	/* tiny objects stand for ~I bytes, huge ones for themselves */
	assert_true(fabs(samples_weight(16, 1 << 19) - (1 << 19)) < 16);
	assert_true(fabs(samples_weight(100u << 20, 1 << 19) - (100u << 20)) < 1);
	assert_true(samples_weight(1 << 19, 1 << 19) > (1 << 19));
}

/* Build an EVENTS payload: two names, three allocs, one free, one GC, stats. */
static size_t build_payload(char *buf, size_t cap)
{
	size_t off = 0;
	struct {
		struct mt_ap_alloc a;
		struct mt_ap_frame f[2];
	} al = { .a = { .id = 10, .size = 24, .depth = 2 },
		 .f = { { .method = 1, .line = 12 }, { .method = 2, .line = 40 } } };
	uint64_t ids[1] = { 11 };
	struct mt_ap_gc gc = { .gc_no = 1, .next_id = 13 };
	struct mt_ap_sample_stats st = { .sampled = 3 };

	assert_true(mt_ap_rec_put(buf, cap, &off, MT_AP_REC_CLASS, 1, "[B", 3) > 0);
	assert_true(mt_ap_rec_put(buf, cap, &off, MT_AP_REC_METHOD, 1, "Ljava/util/Arrays;\0copyOf", 26) > 0);
	assert_true(mt_ap_rec_put(buf, cap, &off, MT_AP_REC_METHOD, 2, "LApp;\0leak", 11) > 0);
	for (uint64_t id = 10; id <= 12; id++) {
		al.a.id = id;
		assert_true(mt_ap_rec_put(buf, cap, &off, MT_AP_REC_ALLOC, 1, &al, sizeof(al)) > 0);
	}
	assert_true(mt_ap_rec_put(buf, cap, &off, MT_AP_REC_FREE, 1, ids, sizeof(ids)) > 0);
	assert_true(mt_ap_rec_put(buf, cap, &off, MT_AP_REC_GC, 0, &gc, sizeof(gc)) > 0);
	assert_true(mt_ap_rec_put(buf, cap, &off, MT_AP_REC_STATS, 0, &st, sizeof(st)) > 0);
	return off;
}

static void test_feed(void **state)
{
	char buf[2048];
	size_t n = build_payload(buf, sizeof(buf));
	struct mt_samples m;

	assert_int_equal(samples_init(&m, 10, 1024, 0), 0);
	assert_int_equal(samples_feed(&m, buf, n), 0);
	assert_int_equal(m.n, 2);
	assert_int_equal(m.allocs, 3);
	assert_int_equal(m.frees, 1);
	assert_int_equal(m.gcs, 1);
	assert_true(m.have_agent_stats);
	assert_int_equal(m.agent.sampled, 3);
	assert_string_equal(samples_class_name(&m, m.s[0].cls), "byte[]");
	/* the site runs through the JDK frame up to the application's */
	assert_string_equal(samples_site_name(&m, m.s[0].site),
			    "java.util.Arrays.copyOf:12 < App.leak:40");
	assert_int_equal(samples_age(&m, &m.s[0]), 1);
	samples_free(&m);
}

static void test_malformed_records(void **state)
{
	char buf[2048];
	size_t n = build_payload(buf, sizeof(buf)), off = 0, blen;
	struct mt_ap_rec r, *w = (struct mt_ap_rec *)buf;
	const void *body;
	struct mt_samples m;
	struct mt_ap_alloc *a;

	w->len = 12; /* not a multiple of 8 */
	assert_int_equal(mt_ap_rec_next(buf, n, &off, &r, &body, &blen), -EBADMSG);
	w->len = 0xfff0; /* past the end */
	assert_int_equal(mt_ap_rec_next(buf, n, &off, &r, &body, &blen), -EBADMSG);
	w->len = 16;
	memset(buf + 8, 'x', 8); /* CLASS without its NUL */
	assert_int_equal(mt_ap_rec_next(buf, n, &off, &r, &body, &blen), -EBADMSG);
	n = build_payload(buf, sizeof(buf));
	/* an ALLOC whose depth claims more frames than it carries */
	off = 0;
	for (int i = 0; i < 3; i++)
		assert_int_equal(mt_ap_rec_next(buf, n, &off, &r, &body, &blen), 1);
	a = (struct mt_ap_alloc *)(buf + off + 8);
	a->depth = 3;
	assert_int_equal(mt_ap_rec_next(buf, n, &off, &r, &body, &blen), -EBADMSG);
	a->depth = MT_AP_MAX_DEPTH + 1;
	assert_int_equal(mt_ap_rec_next(buf, n, &off, &r, &body, &blen), -EBADMSG);
	assert_int_equal(samples_init(&m, 10, 1024, 0), 0);
	assert_int_equal(samples_feed(&m, buf, n), -EBADMSG);
	assert_int_equal(m.bad_records, 1);
	assert_int_equal(m.allocs, 0); /* stopped at the bad record */
	samples_free(&m);
	/* the header accepts EVENTS of any size up to the limit */
	struct mt_ap_hdr h = { .magic = MT_AP_MAGIC, .version = MT_AP_VERSION,
			       .type = MT_AP_EVENTS, .len = 12345 };
	assert_int_equal(mt_ap_check_hdr(&h), 0);
	h.len = MT_AP_MAX_PAYLOAD + 1;
	assert_int_equal(mt_ap_check_hdr(&h), -EMSGSIZE);
}

static void alloc_at(struct mt_samples *m, uint64_t id, uint32_t method)
{
	struct mt_ap_alloc a = { .id = id, .size = 32, .depth = 1 };
	struct mt_ap_frame f = { .method = method, .line = 1 };

	assert_int_equal(samples_alloc(m, 1, &a, &f), 0);
}

static void test_eviction(void **state)
{
	struct mt_samples m;
	double before = 0, after = 0;

	assert_int_equal(samples_init(&m, 1, 1024, 64), 0);
	samples_define(&m, MT_AP_REC_METHOD, 1, "LApp;", "a");
	for (uint64_t id = 1; id <= 64; id++)
		alloc_at(&m, id, 1);
	for (size_t k = 0; k < m.n; k++)
		before += samples_est(&m, &m.s[k]);
	for (uint64_t id = 65; id <= 1064; id++)
		alloc_at(&m, id, 1);
	assert_int_equal(m.n, 64);
	assert_int_equal(m.evicted, 1000); /* 1000 arrivals past the bound: each evicts or is not kept */
	assert_int_equal(m.pop, 1064);
	for (size_t k = 0; k < m.n; k++)
		after += samples_est(&m, &m.s[k]);
	/* scaling by P/n keeps the total an estimate of all 1064 live samples' bytes */
	assert_true(fabs(after - before * 1064 / 64) < 1);
	/* the index stays consistent: every tracked id is found, frees work */
	for (size_t k = m.n; k > 0; k--)
		samples_free_id(&m, m.s[k - 1].id);
	assert_int_equal(m.n, 0);
	samples_free_id(&m, 5);
	assert_true(m.frees_unknown >= 1);
	samples_free(&m);
	/* frees leave dead slots that later arrivals refill: the bound holds */
	assert_int_equal(samples_init(&m, 1, 1024, 64), 0);
	for (uint64_t id = 1; id <= 5000; id++) {
		alloc_at(&m, id, 1);
		if (id % 2 == 0)
			samples_free_id(&m, id);
		assert_true(m.n <= 64);
	}
	assert_int_equal(m.pop, 2500);
	assert_true(m.n > 32); /* deaths are compensated: the reservoir stays nearly full */
	samples_free(&m);
}

/* leaks_cap_live()'s figure for class X: *ctx; others unknown (-1). */
static double cap_bytes(void *ctx, const char *cls)
{
	return !strcmp(cls, "X") ? *(double *)ctx : -1;
}

/*
 * Leak ranking: site 1 keeps every object (a leak), site 2 fills once at the
 * start (a cache), site 3 churns (each object dies after one GC).
 */
static void test_leak_rank(void **state)
{
	struct mt_samples m;
	struct mt_leaks l;
	struct mt_ap_gc g = { 0 };
	uint64_t id = 1;
	int n;

	assert_int_equal(samples_init(&m, 1, 1024, 0), 0);
	samples_define(&m, MT_AP_REC_CLASS, 1, "LX;", NULL);
	samples_define(&m, MT_AP_REC_METHOD, 1, "LApp;", "leak");
	samples_define(&m, MT_AP_REC_METHOD, 2, "LApp;", "cache");
	samples_define(&m, MT_AP_REC_METHOD, 3, "LApp;", "churn");
	leaks_init(&l, 2);
	for (int i = 0; i < 200; i++)
		alloc_at(&m, id++, 2); /* the cache, once */
	for (int gc = 1; gc <= 40; gc++) {
		uint64_t churn0 = id;

		for (int i = 0; i < 5; i++)
			alloc_at(&m, id++, 1);
		for (int i = 0; i < 20; i++)
			alloc_at(&m, id++, 3);
		g.next_id = id;
		samples_gc(&m, &g);
		for (uint64_t c = churn0; c < id; c++) /* churn dies after its first GC */
			if (c >= churn0 + 5)
				samples_free_id(&m, c);
		if (gc == 20)
			assert_int_equal(leaks_mark_mid(&l, &m, 10.0), 0);
	}
	n = leaks_rank(&l, &m, 20.0);
	assert_int_equal(n, 1);
	assert_string_equal(samples_site_name(&m, l.g[0].site), "App.leak:1");
	assert_int_equal(l.g[0].added, 100);
	assert_int_equal(l.g[0].removed, 0);
	assert_true(l.g[0].confidence > 0.999);
	assert_true(l.g[0].growth > 0);
	assert_true(l.g[0].live_lo < l.g[0].live_bytes && l.g[0].live_bytes < l.g[0].live_hi);
	for (size_t k = 1; k < l.n; k++)
		assert_false(l.g[k].suspect);
	/* no estimate above what a heap walk at the end found of the class */
	{
		double est = l.g[0].live_bytes, heap = est / 2;

		leaks_cap_live(&l, &m, cap_bytes, &heap);
		assert_true(l.g[0].capped);
		assert_true(l.g[0].live_bytes == heap && l.g[0].live_hi == heap);
		assert_true(l.g[0].live_lo <= heap);
		assert_true(l.g[0].heap_bytes == heap);
		heap = est * 4; /* a heap holding more: the estimates stay */
		leaks_cap_live(&l, &m, cap_bytes, &heap);
		assert_false(l.g[0].capped);
		assert_true(l.g[0].live_bytes == est / 2);
	}
	leaks_free(&l);
	samples_free(&m);
	assert_true(fabs(leaks_phi(0) - 0.5) < 1e-9);
	assert_true(fabs(leaks_phi(MT_LEAK_Z) - 0.95) < 1e-4);
}

static void test_poisson(void **state)
{
	double lo, hi;

	poisson_ci95(0, &lo, &hi);
	assert_true(lo == 0 && fabs(hi - 3.69) < 0.05);
	poisson_ci95(100, &lo, &hi);
	assert_true(fabs(lo - 81.4) < 0.5 && fabs(hi - 121.6) < 0.5);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ranges_basic),
		cmocka_unit_test(test_ranges_bound),
		cmocka_unit_test(test_buckets),
		cmocka_unit_test(test_java_names),
		cmocka_unit_test(test_weight),
		cmocka_unit_test(test_feed),
		cmocka_unit_test(test_malformed_records),
		cmocka_unit_test(test_eviction),
		cmocka_unit_test(test_leak_rank),
		cmocka_unit_test(test_poisson),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
