/* test_gcpair.c - pairing GC probe events into records. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "analysis/gcpair.h"

#define MAXREC 8
struct sink {
	int n;
	struct gc_record recs[MAXREC];
};

static void collect(const struct gc_record *r, void *ctx)
{
	struct sink *s = ctx;

	if (s->n < MAXREC)
		s->recs[s->n] = *r;
	s->n++;
}

static struct mt_gc_event ev(uint32_t kind, uint64_t ts, const char *mgr, const char *pool,
			     uint64_t used)
{
	struct mt_gc_event e;

	memset(&e, 0, sizeof(e));
	e.kind = kind;
	e.ts_ns = ts;
	e.tid = 42;
	e.used = used;
	e.committed = used * 2;
	e.max = UINT64_MAX;
	if (mgr)
		strncpy(e.manager, mgr, sizeof(e.manager) - 1);
	if (pool)
		strncpy(e.pool, pool, sizeof(e.pool) - 1);
	return e;
}

static void feed(struct gcpair *gp, struct mt_gc_event e)
{
	gcpair_feed(gp, &e);
}

/* Pool events interleaved across pools must not overwrite each other's
 * "before" values (BCC's per-thread keying bug). */
static void test_young_collection_pairs_per_pool(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;
	const char *m = "G1 Young Generation";

	gcpair_init(&gp, collect, &s);
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 100, .tid = 42, .is_full = 0 });
	feed(&gp, ev(MT_POOL_BEGIN, 110, m, "G1 Eden Space", 1000));
	feed(&gp, ev(MT_POOL_BEGIN, 111, m, "G1 Old Gen", 500));
	feed(&gp, ev(MT_POOL_BEGIN, 112, m, "Metaspace", 77));
	feed(&gp, ev(MT_POOL_END, 200, m, "G1 Eden Space", 0));
	feed(&gp, ev(MT_POOL_END, 201, m, "G1 Old Gen", 600));
	assert_int_equal(s.n, 0); /* Metaspace still open */
	feed(&gp, ev(MT_POOL_END, 202, m, "Metaspace", 77));
	assert_int_equal(s.n, 1);
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 210, .tid = 42 });
	assert_int_equal(s.n, 1); /* no extra "pause" record */

	struct gc_record *r = &s.recs[0];
	assert_int_equal(r->seq, 1);
	assert_string_equal(r->manager, m);
	assert_false(r->full);
	assert_true(r->in_vmop);
	assert_int_equal(r->start_ns, 110);
	assert_int_equal(r->end_ns, 202);
	assert_int_equal(r->npools, 3);
	assert_int_equal(r->pools[0].used_before, 1000);
	assert_int_equal(r->pools[0].used_after, 0);
	assert_true(r->pools[0].heap);
	assert_int_equal(r->pools[1].used_before, 500);
	assert_int_equal(r->pools[1].used_after, 600);
	assert_int_equal(r->pools[1].committed, 1200);
	assert_false(r->pools[2].heap);
	assert_int_equal(gp.unpaired_begin + gp.unpaired_end + gp.overflow, 0);
}

/* Parallel's System.gc(): one full VM operation holding a young cycle
 * (PS Scavenge) and then a full one (PS MarkSweep): two records, and only
 * the second is full. */
static void test_two_cycles_in_one_vmop(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;

	gcpair_init(&gp, collect, &s);
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 1, .tid = 7, .is_full = 1 });
	feed(&gp, ev(MT_POOL_BEGIN, 2, "PS Scavenge", "PS Eden Space", 10));
	feed(&gp, ev(MT_POOL_END, 3, "PS Scavenge", "PS Eden Space", 0));
	feed(&gp, ev(MT_POOL_BEGIN, 4, "PS MarkSweep", "PS Eden Space", 0));
	feed(&gp, ev(MT_POOL_BEGIN, 4, "PS MarkSweep", "PS Old Gen", 50));
	feed(&gp, ev(MT_POOL_END, 9, "PS MarkSweep", "PS Eden Space", 0));
	feed(&gp, ev(MT_POOL_END, 9, "PS MarkSweep", "PS Old Gen", 20));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 10, .tid = 7 });
	assert_int_equal(s.n, 2);
	assert_false(s.recs[0].full);
	assert_true(s.recs[1].full);
	assert_int_equal(s.recs[1].seq, 2);
	assert_int_equal(s.recs[1].end_ns - s.recs[1].start_ns, 5);
}

/* A pause with no memory-manager cycle inside (G1 remark on JDK 17). */
static void test_pause_without_manager(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;

	gcpair_init(&gp, collect, &s);
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 1000, .tid = 7 });
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 1500, .tid = 7 });
	assert_int_equal(s.n, 1);
	assert_string_equal(s.recs[0].manager, "");
	assert_int_equal(s.recs[0].end_ns - s.recs[0].start_ns, 500);
	assert_int_equal(s.recs[0].npools, 0);
}

/* JDK 21+ G1 remark: the "G1 Concurrent GC" cycle wraps the pause's
 * gc__begin/gc__end. One record (the cycle), stop-the-world, not two. */
static void test_cycle_wrapping_pause(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;
	const char *m = "G1 Concurrent GC";

	gcpair_init(&gp, collect, &s);
	feed(&gp, ev(MT_POOL_BEGIN, 100, m, "G1 Old Gen", 50));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 110, .tid = 7 });
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 190, .tid = 7 });
	assert_int_equal(s.n, 0); /* no separate pause record */
	feed(&gp, ev(MT_POOL_END, 200, m, "G1 Old Gen", 40));
	assert_int_equal(s.n, 1);
	assert_true(s.recs[0].in_vmop);
	assert_false(s.recs[0].full);
	assert_string_equal(s.recs[0].manager, m);
	assert_int_equal(s.recs[0].end_ns - s.recs[0].start_ns, 100);
}

/* Lost events: an end without a begin, a begin without an end. */
static void test_unpaired_counted(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;

	gcpair_init(&gp, collect, &s);
	feed(&gp, ev(MT_POOL_END, 5, "Copy", "Eden Space", 0)); /* its begin was lost */
	assert_int_equal(gp.unpaired_end, 1);
	feed(&gp, ev(MT_POOL_BEGIN, 6, "Copy", "Eden Space", 9));
	feed(&gp, ev(MT_POOL_BEGIN, 7, "Copy", "Eden Space", 9)); /* the end of #1 was lost */
	assert_int_equal(gp.unpaired_begin, 1);
	feed(&gp, ev(MT_POOL_END, 8, "Copy", "Eden Space", 1));
	assert_int_equal(s.n, 1);
	assert_int_equal(s.recs[0].start_ns, 7);
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 9, .tid = 7 });
	gcpair_finish(&gp);
	assert_int_equal(gp.unpaired_begin, 2);
	assert_int_equal(s.n, 1);
}

/* Concurrent collectors' cycles outside any VM operation. */
static void test_concurrent_cycle(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;

	gcpair_init(&gp, collect, &s);
	feed(&gp, ev(MT_POOL_BEGIN, 1, "ZGC Cycles", "ZHeap", 100));
	feed(&gp, ev(MT_POOL_END, 50, "ZGC Cycles", "ZHeap", 40));
	assert_int_equal(s.n, 1);
	assert_false(s.recs[0].in_vmop);
	assert_false(s.recs[0].full);
}

static void test_pool_and_manager_names(void **state)
{
	assert_true(gcpair_is_heap_pool("G1 Eden Space"));
	assert_true(gcpair_is_heap_pool("Tenured Gen"));
	assert_false(gcpair_is_heap_pool("Metaspace"));
	assert_false(gcpair_is_heap_pool("CodeHeap 'profiled nmethods'"));
	assert_false(gcpair_is_heap_pool("Compressed Class Space"));
	assert_true(gcpair_manager_is_full("G1 Old Generation"));
	assert_true(gcpair_manager_is_full("PS MarkSweep"));
	assert_true(gcpair_manager_is_full("MarkSweepCompact"));
	assert_false(gcpair_manager_is_full("G1 Young Generation"));
	assert_false(gcpair_manager_is_full("Copy"));
	assert_false(gcpair_manager_is_full("PS Scavenge"));
	assert_false(gcpair_manager_is_full("G1 Concurrent GC"));
}

static struct mt_gc_event cause_ev(uint32_t tid, uint64_t ts, const char *cause,
				   const char *action)
{
	struct mt_gc_event e = { .kind = MT_GC_CAUSE, .tid = tid, .ts_ns = ts };

	strncpy(e.cause, cause, sizeof(e.cause) - 1);
	strncpy(e.action, action, sizeof(e.action) - 1);
	return e;
}

/* A cause heard on a thread goes to the next cycle whose pool ends on that
 * thread, once; a cycle of another thread, or one without a cause heard,
 * has none (Parallel's System.gc(): a young then a full cycle, each with
 * its own gc_end). The cause's time (gc_end's entry, where HotSpot reads
 * GcInfo's end time) ends the cycle; the pool ends after it are not the
 * pause, and a cause older than the cycle's start is not its end. */
static void test_causes(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;
	struct mt_gc_event e;

	gcpair_init(&gp, collect, &s);
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 100, .tid = 42, .is_full = 1 });
	feed(&gp, ev(MT_POOL_BEGIN, 110, "PS Scavenge", "PS Eden Space", 1000));
	feed(&gp, cause_ev(42, 115, "System.gc()", "end of minor GC"));
	feed(&gp, ev(MT_POOL_END, 120, "PS Scavenge", "PS Eden Space", 0));
	feed(&gp, ev(MT_POOL_BEGIN, 130, "PS MarkSweep", "PS Old Gen", 500));
	feed(&gp, cause_ev(7, 132, "G1 Evacuation Pause", "end of minor GC")); /* another thread */
	feed(&gp, cause_ev(42, 135, "System.gc()", "end of major GC"));
	feed(&gp, ev(MT_POOL_END, 140, "PS MarkSweep", "PS Old Gen", 300));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 150, .tid = 42 });
	/* a cycle whose cause was not heard (a libjvm without the uprobe) */
	feed(&gp, ev(MT_POOL_BEGIN, 200, "PS Scavenge", "PS Eden Space", 1000));
	feed(&gp, ev(MT_POOL_END, 210, "PS Scavenge", "PS Eden Space", 0));
	/* thread 7's cause goes to its own cycle */
	e = ev(MT_POOL_BEGIN, 300, "G1 Young Generation", "G1 Eden Space", 10);
	e.tid = 7;
	feed(&gp, e);
	e = ev(MT_POOL_END, 310, "G1 Young Generation", "G1 Eden Space", 0);
	e.tid = 7;
	feed(&gp, e);
	assert_int_equal(s.n, 4);
	assert_string_equal(s.recs[0].cause, "System.gc()");
	assert_string_equal(s.recs[0].action, "end of minor GC");
	assert_string_equal(s.recs[1].cause, "System.gc()");
	assert_string_equal(s.recs[1].action, "end of major GC");
	assert_string_equal(s.recs[2].cause, "");
	assert_string_equal(s.recs[2].action, "");
	assert_string_equal(s.recs[3].cause, "G1 Evacuation Pause");
	assert_int_equal(s.recs[0].end_ns, 115);
	assert_int_equal(s.recs[1].start_ns, 130);
	assert_int_equal(s.recs[1].end_ns, 135);
	assert_int_equal(s.recs[2].end_ns, 210);
	assert_int_equal(s.recs[3].end_ns, 310); /* its cause (132) predates it */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_causes),
		cmocka_unit_test(test_young_collection_pairs_per_pool),
		cmocka_unit_test(test_two_cycles_in_one_vmop),
		cmocka_unit_test(test_pause_without_manager),
		cmocka_unit_test(test_cycle_wrapping_pause),
		cmocka_unit_test(test_unpaired_counted),
		cmocka_unit_test(test_concurrent_cycle),
		cmocka_unit_test(test_pool_and_manager_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
