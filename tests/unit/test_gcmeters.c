// SPDX-License-Identifier: GPL-2.0
/* test_gcmeters - Micrometer's GC meters from collection records: allocated
 * (the eden's growth between collections, from the second one seen),
 * promoted (old-gen growth), live and max data (after a shrinking or an
 * old-generation collection), the classes of pools and collectors, and the
 * sliding-window maximum. The e2e case serve_micrometer compares the meters
 * with the JVM's own notifications on live JVMs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "serve/gcmeters.h"

#define MIB (1024ull * 1024)

static struct gc_record rec(const char *mgr, const char *cause, uint64_t eb, uint64_t ea,
			    uint64_t ob, uint64_t oa)
{
	struct gc_record r;

	memset(&r, 0, sizeof(r));
	strcpy(r.manager, mgr);
	strcpy(r.cause, cause);
	r.in_vmop = true;
	r.npools = 4;
	strcpy(r.pools[0].name, "G1 Eden Space");
	r.pools[0].heap = true, r.pools[0].used_before = eb, r.pools[0].used_after = ea;
	r.pools[0].max = UINT64_MAX;
	strcpy(r.pools[1].name, "G1 Survivor Space");
	r.pools[1].heap = true, r.pools[1].max = UINT64_MAX;
	strcpy(r.pools[2].name, "G1 Old Gen");
	r.pools[2].heap = true, r.pools[2].used_before = ob, r.pools[2].used_after = oa;
	r.pools[2].max = 512 * MIB;
	strcpy(r.pools[3].name, "Metaspace"); /* not heap: ignored */
	r.pools[3].used_before = 1, r.pools[3].used_after = 999 * MIB, r.pools[3].max = UINT64_MAX;
	return r;
}

static void test_g1(void **state)
{
	struct gcmeters g;
	struct gc_record r;

	gcmeters_init(&g);
	/* the first: a baseline for allocation; promotion counts already */
	r = rec("G1 Young Generation", "G1 Evacuation Pause", 100 * MIB, 0, 10 * MIB, 12 * MIB);
	gcmeters_record(&g, &r);
	assert_true(g.generational);
	assert_int_equal(g.allocated, 0);
	assert_int_equal(g.promoted, 2 * MIB);
	assert_false(g.have_live);        /* old grew, young collector */
	assert_true(g.have_max);
	assert_int_equal(g.max_data, 512 * MIB);
	/* eden 0 -> 60 MiB between collections: allocated; old grows by 1 MiB */
	r = rec("G1 Young Generation", "G1 Evacuation Pause", 60 * MIB, 0, 12 * MIB, 13 * MIB);
	gcmeters_record(&g, &r);
	assert_int_equal(g.allocated, 60 * MIB);
	assert_int_equal(g.promoted, 3 * MIB);
	/* a young collection that shrinks the old gen (G1 mixed): live data */
	r = rec("G1 Young Generation", "G1 Evacuation Pause", 30 * MIB, 2 * MIB, 13 * MIB, 9 * MIB);
	gcmeters_record(&g, &r);
	assert_int_equal(g.allocated, 90 * MIB);
	assert_int_equal(g.promoted, 3 * MIB);
	assert_true(g.have_live);
	assert_int_equal(g.live, 9 * MIB);
	/* a full one: eden before 5 MiB over the 2 MiB left -> 3 MiB; live set */
	r = rec("G1 Old Generation", "System.gc()", 5 * MIB, 0, 9 * MIB, 11 * MIB);
	gcmeters_record(&g, &r);
	assert_int_equal(g.allocated, 93 * MIB);
	assert_int_equal(g.promoted, 5 * MIB); /* old grew in a full GC: Micrometer counts it */
	assert_int_equal(g.live, 11 * MIB);
	/* a pause without a memory manager changes nothing */
	memset(&r, 0, sizeof(r));
	gcmeters_record(&g, &r);
	assert_int_equal(g.allocated, 93 * MIB);
}

static void test_classes(void **state)
{
	assert_true(gcmeters_allocation_pool("PS Eden Space"));
	assert_true(gcmeters_allocation_pool("Eden Space"));
	assert_false(gcmeters_allocation_pool("G1 Survivor Space"));
	assert_true(gcmeters_long_lived_pool("Tenured Gen"));
	assert_true(gcmeters_long_lived_pool("PS Old Gen"));
	assert_false(gcmeters_long_lived_pool("Metaspace"));
	assert_true(gcmeters_old_collector("PS MarkSweep"));
	assert_true(gcmeters_old_collector("MarkSweepCompact"));
	assert_false(gcmeters_old_collector("G1 Young Generation"));
	assert_false(gcmeters_old_collector("G1 Concurrent GC"));
}

static void test_winmax(void **state)
{
	const uint64_t s = 1000000000ull;
	struct winmax w;

	memset(&w, 0, sizeof(w));
	assert_true(winmax_get(&w, 0) == 0);
	winmax_record(&w, 1 * s, 0.5);
	winmax_record(&w, 2 * s, 0.2);
	assert_true(winmax_get(&w, 3 * s) == 0.5);
	/* still there 100 s later (the window is 80-120 s) */
	assert_true(winmax_get(&w, 100 * s) == 0.5);
	winmax_record(&w, 101 * s, 0.1);
	/* gone after 120 s, the later value stays */
	assert_true(winmax_get(&w, 125 * s) == 0.1);
	/* a long quiet stretch empties it */
	assert_true(winmax_get(&w, 1000 * s) == 0);
	winmax_record(&w, 1001 * s, 0.3);
	assert_true(winmax_get(&w, 1002 * s) == 0.3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_g1),
		cmocka_unit_test(test_classes),
		cmocka_unit_test(test_winmax),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
