// SPDX-License-Identifier: GPL-2.0
/* test_hprof - HPROF import: a synthetic dump's classes, objects, values,
 * strings, roots and threads; the seed's programs on it; every truncation and
 * byte corruption is an error or a valid import, never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "heap/heapview.h"
#include "heap/hprof.h"
#include "snap_fixture.h"

static void test_import(void **state)
{
	struct mt_snapshot s;
	char why[160];
	size_t n;
	unsigned char *buf = fx_hprof(&n);
	const struct mt_snap_class *order = NULL;

	assert_true(hprof_is(buf, n));
	assert_int_equal(hprof_read_mem(buf, n, &s, why, sizeof(why)), 0);
	assert_string_equal(s.source, "hprof");
	assert_int_equal(s.nclasses, 6);
	/* 6 class objects, 3 instances (2 Orders, a Thread), 3 Strings, 3 byte[] */
	assert_int_equal(s.nobjs, 15);
	assert_int_equal(s.nroots, 2);
	assert_int_equal(s.nstrings, 3);
	assert_int_equal(s.nthreads, 1);
	assert_string_equal(s.threads[0].name, "main");
	for (size_t i = 0; i < s.nclasses; i++)
		if (!strcmp(s.classes[i].sig, "Lspec/jbb/Order;"))
			order = &s.classes[i];
	assert_non_null(order);
	assert_int_equal(order->nfields, 3);
	assert_string_equal(order->fields[0].name, "field");
	assert_int_equal(order->fields[0].type, 'I');
	assert_int_equal(order->fields[1].type, 'T'); /* every value a String */
	assert_int_equal(order->fields[2].type, 'L');
	snapshot_free(&s);
	free(buf);
}

static void run(const struct mt_snapshot *s, const char *src, char *out, size_t n)
{
	struct mt_heapview hv;
	struct dsl_schema schema;
	struct dsl_program *p = NULL;
	struct dsl_diags *d = dsl_diags_new();
	char why[128];
	FILE *f = fmemopen(out, n, "w");

	assert_int_equal(heapview_build(s, NULL, &hv, why, sizeof(why)), 0);
	assert_int_equal(dsl_heap_check(&hv.heap, d), 0);
	dsl_heap_schema(&hv.heap, &schema);
	assert_int_equal(dsl_compile(src, strlen(src), "t.mq", &schema, &p, d), 0);
	assert_int_equal(dsl_run(p, &hv.heap, f, d), 0);
	fclose(f);
	dsl_program_free(p);
	dsl_diags_free(d);
	heapview_free(&hv);
}

static void test_programs(void **state)
{
	struct mt_snapshot s;
	char why[160], out[512];
	size_t n;
	unsigned char *buf = fx_hprof(&n);

	assert_int_equal(hprof_read_mem(buf, n, &s, why, sizeof(why)), 0);
	run(&s, "set_type all:\n roots <- objects.filter([it | it is Order])\n"
		" membership <- false\n on_inclusion <- [ fault <- fault or THIS.field = 4242 ]\n"
		" fault : bool <- false\ninstances_for all have_names = \"all-jvm\"\n",
	    out, sizeof(out));
	assert_string_equal(out, "{\"all\":{\"all-jvm\":{\"fault\":true}}}\n");
	run(&s, "set_type s:\n roots <- objects.filter([it | it is Order and it.name = \"order-7\""
		" and it.next.field = 7])\n membership <- false\n on_inclusion <- [ n <- n + 1 ]\n"
		" n : int <- 0\ninstances_for s have_names = \"x\"\n", out, sizeof(out));
	assert_string_equal(out, "{\"s\":{\"x\":{\"n\":1}}}\n");
	/* from the Order root over fields only: Order 0x1000, its String and byte[],
	 * Order 0x1001, its String and byte[] */
	run(&s, "set_type r:\n roots <- objects.filter([it | it is Order and it.field = 4242])\n"
		" membership <- THIS in Unassigned and REFERRER in ENTITY and "
		"(ref_kind = field or ref_kind = array_element)\n on_inclusion <- [ n <- n + 1 ]\n"
		" n : int <- 0\ninstances_for r have_names = \"x\"\n", out, sizeof(out));
	assert_string_equal(out, "{\"r\":{\"x\":{\"n\":6}}}\n");
	snapshot_free(&s);
	free(buf);
}

static void test_truncated_and_corrupt(void **state)
{
	struct mt_snapshot s;
	char why[160];
	size_t n;
	unsigned char *buf = fx_hprof(&n);

	for (size_t k = 0; k < n; k++) {
		int err = hprof_read_mem(buf, k, &s, why, sizeof(why));

		assert_true(err == 0 || err == -EINVAL);
		snapshot_free(&s);
	}
	for (size_t k = 0; k < n; k++) {
		for (int x = 1; x < 256; x <<= 2) {
			int err;

			buf[k] ^= (unsigned char)x;
			err = hprof_read_mem(buf, n, &s, why, sizeof(why));
			assert_true(err == 0 || err == -EINVAL);
			if (!err) { /* whatever imported must build a valid heap */
				struct mt_heapview hv;
				struct dsl_diags *d = dsl_diags_new();

				if (!heapview_build(&s, NULL, &hv, why, sizeof(why))) {
					assert_int_equal(dsl_heap_check(&hv.heap, d), 0);
					heapview_free(&hv);
				}
				dsl_diags_free(d);
			}
			snapshot_free(&s);
			buf[k] ^= (unsigned char)x;
		}
	}
	assert_int_equal(hprof_read_mem("JAVA PROFILE 1.0.2", 18, &s, why, sizeof(why)), -EINVAL);
	assert_int_equal(hprof_read_mem("hello", 5, &s, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "not an HPROF"));
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_import),
		cmocka_unit_test(test_programs),
		cmocka_unit_test(test_truncated_and_corrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
