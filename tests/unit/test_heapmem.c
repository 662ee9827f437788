/* test_heapmem - user/heap/heapmem.c's pure parts: the memory a heap answer
 * takes (per use, per object and reference), and when a snapshot is refused
 * (--max-memory, the machine's or a cgroup's memory left, the frozen copy's
 * records while it lives, a walk by JVMTI's visits) with what the message
 * says. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "heap/heapfreeze.h"
#include "heap/heapmem.h"

#define MiB (1ull << 20)

static void test_need(void **state)
{
	/* nothing bounded for counts */
	assert_true(heapmem_need(HEAPMEM_NONE, 5000000, 5000000) == 0);
	assert_true(heapmem_need(HEAPMEM_LAST + 1, 1, 1) == 0);
	/* the base alone for an empty heap */
	assert_true(heapmem_need(HEAPMEM_VIEW, 0, 0) == HEAPMEM_BASE);
	/* each use its costs: linear in objects and references */
	assert_true(heapmem_need(HEAPMEM_RETAINED, 1000000, 0) == HEAPMEM_BASE + 44000000ull);
	assert_true(heapmem_need(HEAPMEM_RETAINED, 0, 1000000) == HEAPMEM_BASE + 44000000ull);
	assert_true(heapmem_need(HEAPMEM_RECORDS, 10, 10) == HEAPMEM_BASE + 520 + 260);
	/* more is built, more is held: records < view < retained < series */
	assert_true(heapmem_need(HEAPMEM_RECORDS, 5000000, 5000000) <
		    heapmem_need(HEAPMEM_VIEW, 5000000, 5000000));
	assert_true(heapmem_need(HEAPMEM_VIEW, 5000000, 5000000) <
		    heapmem_need(HEAPMEM_RETAINED, 5000000, 5000000));
	assert_true(heapmem_need(HEAPMEM_RETAINED, 5000000, 5000000) <
		    heapmem_need(HEAPMEM_SERIES, 5000000, 5000000));
	/* measured: FreezeWorkload 5.02 M objects, 5.04 M references, heap
	 * --retained peaked at 385 MiB (a view's objects 32 bytes); the bound is
	 * above and within 1.35x */
	assert_true(heapmem_need(HEAPMEM_RETAINED, 5024351, 5040000) > 385 * MiB);
	assert_true(heapmem_need(HEAPMEM_RETAINED, 5024351, 5040000) < 385 * MiB * 135 / 100);
	assert_true(heapmem_records(2, 3) == 2 * 32 + 3 * 24);
	/* references by position (heapmem.c): 12 bytes a reference fewer, one
	 * record an object more for a tree; a view's measured */
	assert_int_equal(heapmem_by_position(HEAPMEM_RETAINED, false), HEAPMEM_RETAINED_POS);
	assert_int_equal(heapmem_by_position(HEAPMEM_VIEW, false), HEAPMEM_VIEW_POS);
	assert_int_equal(heapmem_by_position(HEAPMEM_SERIES, false), HEAPMEM_SERIES_POS);
	assert_int_equal(heapmem_by_position(HEAPMEM_RECORDS, false), HEAPMEM_RECORDS);
	assert_int_equal(heapmem_by_position(HEAPMEM_RETAINED, true), HEAPMEM_RETAINED_IMPLIED);
	assert_int_equal(heapmem_by_position(HEAPMEM_VIEW, true), HEAPMEM_VIEW_IMPLIED);
	assert_int_equal(heapmem_by_position(HEAPMEM_SERIES, true), HEAPMEM_SERIES_IMPLIED);
	assert_int_equal(heapmem_by_position(HEAPMEM_RECORDS, true), HEAPMEM_RECORDS);
	/* 12 bytes an object fewer (each CLASS reference implied): 10 M
	 * objects and references, a view and its tree peaked at 677 MiB */
	assert_true(heapmem_need(HEAPMEM_RETAINED_IMPLIED, 1000000, 0) == HEAPMEM_BASE + 48000000ull);
	assert_true(heapmem_need(HEAPMEM_RETAINED_IMPLIED, 10020000, 10040000) > 677 * MiB);
	assert_true(heapmem_need(HEAPMEM_RETAINED_POS, 1000000, 0) == HEAPMEM_BASE + 60000000ull);
	assert_true(heapmem_need(HEAPMEM_RETAINED_POS, 0, 1000000) == HEAPMEM_BASE + 32000000ull);
	/* measured, JDK 25: RefDense 2000000 (2.02 M objects, 14 M references)
	 * peaked at 467 MiB (heap --retained) and 276 (query, seed 03) */
	assert_true(heapmem_need(HEAPMEM_RETAINED_POS, 2020000, 14000000) > 467 * MiB);
	assert_true(heapmem_need(HEAPMEM_RETAINED_POS, 2020000, 14000000) < 467 * MiB * 135 / 100);
	assert_true(heapmem_need(HEAPMEM_VIEW_POS, 2020000, 14000000) > 276 * MiB);
	assert_true(heapmem_need(HEAPMEM_VIEW_POS, 2020000, 14000000) < 276 * MiB * 135 / 100);
	/* a leak search's, measured (heapmem.c): FreezeWorkload 2500000 peaked
	 * at 557 MiB, RefDense 2000000 at 502 */
	assert_true(heapmem_need(HEAPMEM_SERIES_POS, 5030000, 5050000) > 557 * MiB);
	assert_true(heapmem_need(HEAPMEM_SERIES_POS, 5030000, 5050000) < 557 * MiB * 135 / 100);
	assert_true(heapmem_need(HEAPMEM_SERIES_POS, 2030000, 14050000) > 502 * MiB);
	assert_true(heapmem_need(HEAPMEM_SERIES_POS, 2030000, 14050000) < 502 * MiB * 135 / 100);
	assert_true(heapmem_need(HEAPMEM_SERIES_POS, 5000000, 5000000) <
		    heapmem_need(HEAPMEM_SERIES, 5000000, 5000000));
}

static void test_fits_max(void **state)
{
	struct heapmem_room r = { .free = UINT64_MAX, .held = 10 * MiB, .max = 300 * MiB };
	char why[1024];

	/* 5 M objects and references: 452 MiB > 300 MiB */
	assert_int_equal(heapmem_fits(HEAPMEM_RETAINED, 5000000, 5000000, true, &r, why,
				      sizeof(why)), -ENOMEM);
	assert_non_null(strstr(why, "a heap view and its dominator tree of 5.00 M objects and "
				    "5.00 M references would take memtrace about 451.6 MiB"));
	assert_non_null(strstr(why, "over --max-memory 300.0 MiB"));
	assert_non_null(strstr(why, "memtrace histo"));
	/* under it: fits */
	assert_int_equal(heapmem_fits(HEAPMEM_RETAINED, 1000000, 1000000, true, &r, why,
				      sizeof(why)), 0);
	/* counts only: never refused */
	r.max = 1;
	assert_int_equal(heapmem_fits(HEAPMEM_NONE, 5000000, 5000000, true, &r, why,
				      sizeof(why)), 0);
	/* a short buffer is cut, not overrun */
	assert_int_equal(heapmem_fits(HEAPMEM_VIEW, 5000000, 0, false, &r, why, 16), -ENOMEM);
	assert_int_equal(strlen(why), 15);
}

static void test_fits_free(void **state)
{
	uint64_t need = heapmem_need(HEAPMEM_VIEW, 1000000, 1000000);
	struct heapmem_room r = { .held = 20 * MiB };
	char why[1024];

	/* what memtrace holds counts toward the need; the margin is kept */
	r.free = need - r.held + HEAPFREEZE_MARGIN;
	assert_int_equal(heapmem_fits(HEAPMEM_VIEW, 1000000, 1000000, false, &r, why,
				      sizeof(why)), 0);
	r.free--;
	assert_int_equal(heapmem_fits(HEAPMEM_VIEW, 1000000, 1000000, false, &r, why,
				      sizeof(why)), -ENOMEM);
	assert_non_null(strstr(why, "this machine has"));
	assert_non_null(strstr(why, "(MemAvailable)"));
	assert_non_null(strstr(why, "memtrace did not hold it"));
	assert_non_null(strstr(why, "`memtrace snapshot -o FILE` about"));
	assert_null(strstr(why, "frozen copy lives"));
	/* a cgroup's limit said as such */
	r.by_cgroup = true;
	assert_int_equal(heapmem_fits(HEAPMEM_VIEW, 1000000, 1000000, false, &r, why,
				      sizeof(why)), -ENOMEM);
	assert_non_null(strstr(why, "memtrace's memory cgroup has"));
	assert_non_null(strstr(why, "(under its limit)"));
	/* records alone: no advice to save them */
	assert_int_equal(heapmem_fits(HEAPMEM_RECORDS, 4000000, 4000000, false, &r, why,
				      sizeof(why)), -ENOMEM);
	assert_null(strstr(why, "snapshot -o"));
	/* nothing known of the machine: no bound but --max-memory */
	r.free = UINT64_MAX;
	assert_int_equal(heapmem_fits(HEAPMEM_SERIES, 50000000, 50000000, true, &r, why,
				      sizeof(why)), 0);
}

static void test_fits_copy(void **state)
{
	/* records only: while the copy lives its records and memtrace's copy
	 * of them, twice the records, exceed the records' need */
	uint64_t rec = heapmem_records(1000000, 1000000);
	struct heapmem_room r = { .held = 0 };
	char why[1024];

	r.free = heapmem_need(HEAPMEM_RECORDS, 1000000, 1000000) + HEAPFREEZE_MARGIN;
	assert_int_equal(heapmem_fits(HEAPMEM_RECORDS, 1000000, 1000000, false, &r, why,
				      sizeof(why)), 0);
	assert_true(2 * rec + HEAPMEM_BASE > heapmem_need(HEAPMEM_RECORDS, 1000000, 1000000));
	assert_int_equal(heapmem_fits(HEAPMEM_RECORDS, 1000000, 1000000, true, &r, why,
				      sizeof(why)), -ENOMEM);
	assert_non_null(strstr(why, "while the frozen copy lives"));
	r.free = 2 * rec + HEAPMEM_BASE + HEAPFREEZE_MARGIN;
	assert_int_equal(heapmem_fits(HEAPMEM_RECORDS, 1000000, 1000000, true, &r, why,
				      sizeof(why)), 0);
}

static void test_fits_pool(void **state)
{
	/* memory kept for the copy's records (heap/recpool.h) is memtrace's:
	 * --max-memory counts it; the copy writes its records there, so they
	 * take no more of the machine while it lives */
	uint64_t rec = heapmem_records(1000000, 1000000);
	uint64_t need = heapmem_need(HEAPMEM_SERIES, 1000000, 1000000);
	struct heapmem_room r = { .free = UINT64_MAX, .max = need + 10 * MiB };
	char why[1024], b[256];

	assert_int_equal(heapmem_fits(HEAPMEM_SERIES, 1000000, 1000000, true, &r, why,
				      sizeof(why)), 0);
	r.pool = rec + rec / 8;
	assert_int_equal(heapmem_fits(HEAPMEM_SERIES, 1000000, 1000000, true, &r, why,
				      sizeof(why)), -ENOMEM);
	assert_non_null(strstr(why, "it keeps for the frozen copy's records"));
	assert_non_null(strstr(why, "over --max-memory"));
	/* the machine: need and pool held (held counts the pool), no second
	 * copy of the records while the copy lives */
	r.max = 0;
	r.held = r.pool;
	r.free = need + HEAPFREEZE_MARGIN;
	assert_int_equal(heapmem_fits(HEAPMEM_SERIES, 1000000, 1000000, true, &r, why,
				      sizeof(why)), 0);
	r.pool = rec / 2; /* too small for them: the copy writes its own again */
	r.held = r.pool;
	r.free = heapmem_need(HEAPMEM_RECORDS, 1000000, 1000000) + HEAPFREEZE_MARGIN;
	assert_int_equal(heapmem_fits(HEAPMEM_RECORDS, 1000000, 1000000, true, &r, why,
				      sizeof(why)), -ENOMEM);
	assert_non_null(strstr(why, "while the frozen copy lives"));
	/* said: the figure with the pool, and how much of it the pool is */
	heapmem_text(HEAPMEM_VIEW, 950, 1500, 2 * MiB, b, sizeof(b));
	assert_non_null(strstr(b, "(2.0 MiB of it kept for the frozen copies' records)"));
	(void)state;
}

static void test_fits_visits(void **state)
{
	struct heapmem_room r = { .free = UINT64_MAX, .held = 10 * MiB, .max = 300 * MiB };
	char why[1024];

	/* a walk by JVMTI holds more per reference than a frozen one */
	assert_true(heapmem_visit_bytes(HEAPMEM_NONE) < heapmem_visit_bytes(HEAPMEM_RECORDS));
	assert_true(heapmem_visit_bytes(HEAPMEM_RECORDS) < heapmem_visit_bytes(HEAPMEM_RETAINED));
	assert_true(heapmem_visit_bytes(HEAPMEM_VIEW) == heapmem_visit_bytes(HEAPMEM_SERIES));
	/* measured: 10.1 M visits, heap --retained peaked at 1.62 GB */
	assert_true(HEAPMEM_BASE + 10066559ull * heapmem_visit_bytes(HEAPMEM_RETAINED) >
		    1621184ull * 1024);
	/* 2.07 M visits x 192: 410.7 MiB > 300 MiB */
	assert_int_equal(heapmem_fits_visits(HEAPMEM_RETAINED, 2068119, &r, why, sizeof(why)),
			 -ENOMEM);
	assert_non_null(strstr(why, "reports each reference, 2.07 M so far"));
	assert_non_null(strstr(why, "about 410.7 MiB for those alone, over --max-memory 300.0 MiB: "
				    "raise it"));
	assert_null(strstr(why, "histo")); /* a walk in a pause: histo is no cheaper */
	/* counts only: 96 bytes each, under the bound */
	assert_int_equal(heapmem_fits_visits(HEAPMEM_NONE, 2068119, &r, why, sizeof(why)), 0);
	/* the machine's memory: no advice to save a file or ask histo */
	r.max = 0;
	r.free = 100 * MiB;
	assert_int_equal(heapmem_fits_visits(HEAPMEM_VIEW, 2068119, &r, why, sizeof(why)), -ENOMEM);
	assert_non_null(strstr(why, "memtrace did not hold it"));
	assert_null(strstr(why, "snapshot -o"));
	assert_null(strstr(why, "histo"));
}

static void test_limit(void **state)
{
	struct heapmem_room r = { .free = UINT64_MAX };
	char why[1024];

	assert_true(heapmem_limit(&r) == UINT64_MAX); /* nothing known, nothing given */
	r.max = 300 * MiB;
	assert_true(heapmem_limit(&r) == 300 * MiB);
	/* free memory and what memtrace holds, less the margin */
	r.max = 0;
	r.free = 1024 * MiB;
	r.held = 20 * MiB;
	assert_true(heapmem_limit(&r) == 1024 * MiB - HEAPFREEZE_MARGIN + 20 * MiB);
	r.max = 2048 * MiB; /* the lesser */
	assert_true(heapmem_limit(&r) == 1024 * MiB - HEAPFREEZE_MARGIN + 20 * MiB);
	r.free = 10 * MiB; /* under the margin: what it holds */
	assert_true(heapmem_limit(&r) == 20 * MiB);
	/* the limit is where heapmem_fits() refuses: a need at it fits, above not */
	r.free = 1024 * MiB;
	r.max = 0;
	{
		uint64_t objs = (heapmem_limit(&r) - HEAPMEM_BASE) / 44;

		assert_int_equal(heapmem_fits(HEAPMEM_RETAINED, objs, 0, false, &r, why, sizeof(why)),
				 0);
		assert_int_equal(heapmem_fits(HEAPMEM_RETAINED, objs + 1, 0, false, &r, why,
					      sizeof(why)), -ENOMEM);
	}
}

static void test_text(void **state)
{
	char b[256];

	assert_string_equal(heapmem_text(HEAPMEM_VIEW, 950, 1500, 0, b, sizeof(b)),
			    "a heap view of 950 objects and 1.5 k references: memtrace holds at "
			    "most 32.1 MiB for it");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_need),
		cmocka_unit_test(test_fits_max),
		cmocka_unit_test(test_fits_free),
		cmocka_unit_test(test_fits_copy),
		cmocka_unit_test(test_fits_pool),
		cmocka_unit_test(test_fits_visits),
		cmocka_unit_test(test_limit),
		cmocka_unit_test(test_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
