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
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 1, .tid = 42, .is_full = 1 });
	feed(&gp, ev(MT_POOL_BEGIN, 2, "PS Scavenge", "PS Eden Space", 10));
	feed(&gp, ev(MT_POOL_END, 3, "PS Scavenge", "PS Eden Space", 0));
	feed(&gp, ev(MT_POOL_BEGIN, 4, "PS MarkSweep", "PS Eden Space", 0));
	feed(&gp, ev(MT_POOL_BEGIN, 4, "PS MarkSweep", "PS Old Gen", 50));
	feed(&gp, ev(MT_POOL_END, 9, "PS MarkSweep", "PS Eden Space", 0));
	feed(&gp, ev(MT_POOL_END, 9, "PS MarkSweep", "PS Old Gen", 20));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 10, .tid = 42 });
	assert_int_equal(s.n, 2);
	assert_false(s.recs[0].full);
	assert_int_equal(s.recs[0].kind, GC_KIND_YOUNG);
	assert_true(s.recs[1].full);
	assert_int_equal(s.recs[1].kind, GC_KIND_FULL);
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
	assert_int_equal(s.recs[0].kind, GC_KIND_PAUSE);
	assert_false(s.recs[0].timed);
	assert_int_equal(s.recs[0].end_ns - s.recs[0].start_ns, 500);
	assert_int_equal(s.recs[0].npools, 0);
}

/* JDK 21+ G1 remark without the GCTimer uprobes: the "G1 Concurrent GC"
 * cycle wraps the pause's gc__begin/gc__end on the same (VM) thread. One
 * record (the cycle), a pause of a concurrent cycle, not two. */
static void test_cycle_wrapping_pause(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;
	const char *m = "G1 Concurrent GC";

	gcpair_init(&gp, collect, &s);
	feed(&gp, ev(MT_POOL_BEGIN, 100, m, "G1 Old Gen", 50));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 110, .tid = 42 });
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 190, .tid = 42 });
	assert_int_equal(s.n, 0); /* no separate pause record */
	feed(&gp, ev(MT_POOL_END, 200, m, "G1 Old Gen", 40));
	assert_int_equal(s.n, 1);
	assert_true(s.recs[0].in_vmop);
	assert_false(s.recs[0].full);
	assert_int_equal(s.recs[0].kind, GC_KIND_PAUSE);
	assert_string_equal(s.recs[0].manager, m);
	assert_int_equal(s.recs[0].end_ns - s.recs[0].start_ns, 100);
}

static struct mt_gc_event pause_ev(uint32_t kind, uint32_t tid, uint64_t ts, uint64_t ticks,
				   const char *name)
{
	struct mt_gc_event e = { .kind = kind, .tid = tid, .ts_ns = ts, .ticks = ticks };

	if (name)
		strncpy(e.pause, name, sizeof(e.pause) - 1);
	return e;
}

static struct mt_gc_event cause_mgr(uint32_t tid, uint64_t ts, const char *cause,
				    const char *action, const char *mgr)
{
	struct mt_gc_event e = { .kind = MT_GC_CAUSE, .tid = tid, .ts_ns = ts };

	strncpy(e.cause, cause, sizeof(e.cause) - 1);
	strncpy(e.action, action, sizeof(e.action) - 1);
	strncpy(e.manager, mgr, sizeof(e.manager) - 1);
	return e;
}

/* Generational ZGC, as its probes fire: the minor cycle's pools begin on the
 * driver thread (9); each pause on the VM thread (5) is GCTimer's pause
 * around gc__begin/gc__end, with its pause manager's gc_end inside. Every
 * pause is a record of its own, lasting what its Ticks say (not the probes'
 * times); the cycle is a cycle, however many pauses it holds. */
static void test_zgc_pauses_and_cycle(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;
	struct mt_gc_event e;
	const char *cyc = "ZGC Minor Cycles";

	gcpair_init(&gp, collect, &s);
	e = ev(MT_POOL_BEGIN, 1000, cyc, "ZGC Young Generation", 100);
	e.tid = 9;
	feed(&gp, e);
	for (int i = 0; i < 3; i++) {
		uint64_t t = 2000 + 1000 * (uint64_t)i;

		feed(&gp, pause_ev(MT_PAUSE_BEGIN, 5, t, 50000 + t, i ? "Pause Mark End" : "Pause Mark Start"));
		feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = t + 2, .tid = 5 });
		feed(&gp, cause_mgr(5, t + 20, "Allocation Rate", "end of GC pause", "ZGC Minor Pauses"));
		feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = t + 25, .tid = 5 });
		assert_int_equal(s.n, i); /* the pause has not ended */
		feed(&gp, pause_ev(MT_PAUSE_END, 5, t + 40, 50000 + t + 30, NULL));
		assert_int_equal(s.n, i + 1);
	}
	feed(&gp, cause_mgr(9, 8000, "Allocation Rate", "end of GC cycle", cyc));
	e = ev(MT_POOL_END, 8010, cyc, "ZGC Young Generation", 40);
	e.tid = 9;
	feed(&gp, e);
	assert_int_equal(s.n, 4);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(s.recs[i].kind, GC_KIND_PAUSE);
		assert_true(gcpair_is_pause(&s.recs[i]));
		assert_true(s.recs[i].timed);
		assert_int_equal(s.recs[i].start_ns, 2000 + 1000 * i);
		assert_int_equal(s.recs[i].end_ns - s.recs[i].start_ns, 30); /* the Ticks' */
		assert_string_equal(s.recs[i].manager, "ZGC Minor Pauses");
		assert_string_equal(s.recs[i].cause, "Allocation Rate");
		assert_string_equal(s.recs[i].action, "end of GC pause");
	}
	assert_string_equal(s.recs[0].pause, "Pause Mark Start");
	assert_string_equal(s.recs[1].pause, "Pause Mark End");
	assert_int_equal(s.recs[3].kind, GC_KIND_CYCLE);
	assert_false(gcpair_is_pause(&s.recs[3]));
	assert_string_equal(s.recs[3].manager, cyc);
	assert_string_equal(s.recs[3].cause, "Allocation Rate");
	assert_int_equal(s.recs[3].end_ns - s.recs[3].start_ns, 7000);
	assert_int_equal(gp.unpaired_begin + gp.unpaired_end + gp.overflow, 0);
}

/* Shenandoah: the VM operation wraps the pause, and the pause manager's
 * gc_end (the cause) comes after the pause's end, before gc__end: the pause
 * waits for it. */
static void test_shenandoah_pause_inside_vmop(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;

	gcpair_init(&gp, collect, &s);
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 100, .tid = 5 });
	feed(&gp, pause_ev(MT_PAUSE_BEGIN, 5, 110, 7000, "Pause Init Mark"));
	feed(&gp, pause_ev(MT_PAUSE_END, 5, 150, 7033, NULL));
	feed(&gp, cause_mgr(5, 160, "Allocation Failure", "end of GC pause", "Shenandoah Pauses"));
	assert_int_equal(s.n, 0);
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 170, .tid = 5 });
	assert_int_equal(s.n, 1); /* one record: no second, untimed, for the operation */
	assert_int_equal(s.recs[0].kind, GC_KIND_PAUSE);
	assert_string_equal(s.recs[0].pause, "Pause Init Mark");
	assert_string_equal(s.recs[0].manager, "Shenandoah Pauses");
	assert_string_equal(s.recs[0].cause, "Allocation Failure");
	assert_int_equal(s.recs[0].end_ns - s.recs[0].start_ns, 33);
	assert_true(s.recs[0].in_vmop);
}

/* JDK 21+ G1 remark with the uprobes: GCTimer's pause wraps the "G1
 * Concurrent GC" cycle, which wraps gc__begin/gc__end, all on the VM thread:
 * one record with the pause's name and time and the cycle's manager and
 * pools. JDK 17's remark has no cycle: the pause alone, no manager. */
static void test_g1_remark(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;
	const char *m = "G1 Concurrent GC";

	gcpair_init(&gp, collect, &s);
	feed(&gp, pause_ev(MT_PAUSE_BEGIN, 42, 90, 1000, "Pause Remark"));
	feed(&gp, ev(MT_POOL_BEGIN, 100, m, "G1 Old Gen", 50));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 110, .tid = 42 });
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 190, .tid = 42 });
	feed(&gp, cause_mgr(42, 195, "No GC", "end of concurrent GC pause", m));
	feed(&gp, ev(MT_POOL_END, 200, m, "G1 Old Gen", 40));
	assert_int_equal(s.n, 0);
	feed(&gp, pause_ev(MT_PAUSE_END, 42, 210, 1118, NULL));
	assert_int_equal(s.n, 1);
	assert_int_equal(s.recs[0].kind, GC_KIND_PAUSE);
	assert_string_equal(s.recs[0].pause, "Pause Remark");
	assert_string_equal(s.recs[0].manager, m);
	assert_string_equal(s.recs[0].cause, "No GC");
	assert_int_equal(s.recs[0].npools, 1);
	assert_int_equal(s.recs[0].start_ns, 90);
	assert_int_equal(s.recs[0].end_ns, 90 + 118);
	/* JDK 17 */
	feed(&gp, pause_ev(MT_PAUSE_BEGIN, 42, 300, 2000, "Pause Cleanup"));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 310, .tid = 42 });
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 320, .tid = 42 });
	feed(&gp, pause_ev(MT_PAUSE_END, 42, 330, 2025, NULL));
	assert_int_equal(s.n, 2);
	assert_int_equal(s.recs[1].kind, GC_KIND_PAUSE);
	assert_string_equal(s.recs[1].pause, "Pause Cleanup");
	assert_string_equal(s.recs[1].manager, "");
	assert_int_equal(s.recs[1].end_ns - s.recs[1].start_ns, 25);
	/* a young collection after them keeps its own cause */
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 400, .tid = 42 });
	feed(&gp, ev(MT_POOL_BEGIN, 410, "G1 Young Generation", "G1 Eden Space", 10));
	feed(&gp, cause_mgr(42, 415, "G1 Evacuation Pause", "end of minor GC", "G1 Young Generation"));
	feed(&gp, ev(MT_POOL_END, 420, "G1 Young Generation", "G1 Eden Space", 0));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 430, .tid = 42 });
	assert_int_equal(s.n, 3);
	assert_int_equal(s.recs[2].kind, GC_KIND_YOUNG);
	assert_string_equal(s.recs[2].cause, "G1 Evacuation Pause");
	assert_int_equal(gp.unpaired_begin + gp.unpaired_end + gp.overflow, 0);
}

/* A ZGC JVM whose libjvm lacks the GCTimer symbols: each gc__begin/gc__end
 * while the driver's cycle runs is a pause (unnamed, untimed by the JVM), and
 * the cycle stays a cycle. An unreadable end Ticks falls back on the probes'
 * times. */
static void test_pauses_without_timer(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;
	struct mt_gc_event e;

	gcpair_init(&gp, collect, &s);
	e = ev(MT_POOL_BEGIN, 1000, "ZGC Cycles", "ZHeap", 100);
	e.tid = 9;
	feed(&gp, e);
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 1100, .tid = 5 });
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 1130, .tid = 5 });
	e = ev(MT_POOL_END, 2000, "ZGC Cycles", "ZHeap", 40);
	e.tid = 9;
	feed(&gp, e);
	assert_int_equal(s.n, 2);
	assert_int_equal(s.recs[0].kind, GC_KIND_PAUSE);
	assert_false(s.recs[0].timed);
	assert_int_equal(s.recs[0].end_ns - s.recs[0].start_ns, 30);
	assert_int_equal(s.recs[1].kind, GC_KIND_CYCLE);
	assert_false(s.recs[1].in_vmop);
	feed(&gp, pause_ev(MT_PAUSE_BEGIN, 5, 3000, 500, "Pause Mark Start"));
	feed(&gp, pause_ev(MT_PAUSE_END, 5, 3070, 0, NULL));
	assert_int_equal(s.n, 3);
	assert_false(s.recs[2].timed);
	assert_int_equal(s.recs[2].end_ns - s.recs[2].start_ns, 70);
	/* a begin whose end was lost is counted, once, at the next begin */
	feed(&gp, pause_ev(MT_PAUSE_BEGIN, 5, 4000, 600, "Pause Mark End"));
	feed(&gp, pause_ev(MT_PAUSE_BEGIN, 5, 5000, 700, "Pause Mark Start"));
	assert_int_equal(gp.unpaired_begin, 1);
	/* the last one, open when the probes stop, was in flight */
	gcpair_finish(&gp);
	assert_int_equal(gp.unpaired_begin, 1);
	assert_int_equal(gp.in_flight, 1);
	assert_int_equal(s.n, 3);
}

static struct mt_gc_event trace_ev(uint32_t kind, uint32_t tid, uint64_t ts, uint64_t ticks)
{
	return (struct mt_gc_event){ .kind = kind, .tid = tid, .ts_ns = ts, .ticks = ticks };
}

/* A pause whose timer was told late (ZGC's Pause Mark End on a loaded
 * machine: register_gc_pause_start() 4.7 ms after the pause began) starts when
 * its Ticks say, by the offset of the JVM's clock the prompt probes showed;
 * a collection too. Ticks that do not fit the probes' clock (placed after the
 * probe, or over a second before it) leave the probe's time. */
static void test_start_by_ticks(void **state)
{
	const uint64_t K = 7000000000ull; /* the JVM started at CLOCK_MONOTONIC K */
	struct sink s = { 0 };
	struct gcpair gp;

	(void)state;
	gcpair_init(&gp, collect, &s);
	/* a prompt pause: its probes 3 and 2 us after the JVM's clock reads */
	feed(&gp, pause_ev(MT_PAUSE_BEGIN, 5, K + 1000000 + 3000, 1000000, "Pause Mark Start"));
	feed(&gp, pause_ev(MT_PAUSE_END, 5, K + 1080000 + 2000, 1080000, NULL));
	assert_int_equal(s.n, 1);
	assert_int_equal(s.recs[0].start_ns, K + 1000000 + 2000); /* the promptest lag */
	assert_int_equal(s.recs[0].end_ns - s.recs[0].start_ns, 80000);
	/* the late one: began at Ticks 30 ms, its timer told at 34.7 ms */
	feed(&gp, pause_ev(MT_PAUSE_BEGIN, 5, K + 34700000, 30000000, "Pause Mark End"));
	feed(&gp, pause_ev(MT_PAUSE_END, 5, K + 35396236 + 2000, 35396236, NULL));
	assert_int_equal(s.n, 2);
	assert_true(s.recs[1].timed);
	assert_int_equal(s.recs[1].start_ns, K + 30000000 + 2000);
	assert_int_equal(s.recs[1].end_ns - s.recs[1].start_ns, 5396236);
	/* a collection (JFR's) told 3 ms late too */
	feed(&gp, trace_ev(MT_TRACE_BEGIN, 42, K + 53000000, 50000000));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = K + 53000100, .tid = 42 });
	feed(&gp, ev(MT_POOL_BEGIN, K + 53000200, "G1 Young Generation", "G1 Eden Space", 10));
	feed(&gp, ev(MT_POOL_END, K + 54000000, "G1 Young Generation", "G1 Eden Space", 0));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = K + 54000100, .tid = 42 });
	feed(&gp, trace_ev(MT_TRACE_END, 42, K + 54100000, 54098000));
	assert_int_equal(s.n, 3);
	assert_int_equal(s.recs[2].start_ns, K + 50000000 + 2000);
	assert_int_equal(s.recs[2].end_ns - s.recs[2].start_ns, 4098000);
	/* Ticks past the probe's time: not this clock, the probe's time */
	feed(&gp, pause_ev(MT_PAUSE_BEGIN, 6, K + 60000000, 90000000, "Pause Relocate Start"));
	feed(&gp, pause_ev(MT_PAUSE_END, 6, K + 60100000, 90100000, NULL));
	assert_int_equal(s.n, 4);
	assert_int_equal(s.recs[3].start_ns, K + 60000000);
	assert_int_equal(s.recs[3].end_ns - s.recs[3].start_ns, 100000);
	assert_int_equal(gp.unpaired_begin + gp.unpaired_end + gp.overflow, 0);
}

/* JFR's collections (GCTracer::report_gc_start/end) give the cycle they nest
 * with their start and duration: G1's wraps its young cycle (the record waits
 * for its end), Serial's sits inside its cycle (taken at the cycle's end).
 * One of another thread, or one that ended before the cycle began, is not
 * that cycle's. */
static void test_jfr_collections(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;
	struct mt_gc_event e;

	gcpair_init(&gp, collect, &s);
	/* G1: report_gc_start, gc__begin, the cycle, gc__end, report_gc_end */
	feed(&gp, trace_ev(MT_TRACE_BEGIN, 42, 100, 9000));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 101, .tid = 42 });
	feed(&gp, ev(MT_POOL_BEGIN, 110, "G1 Young Generation", "G1 Eden Space", 10));
	feed(&gp, ev(MT_POOL_END, 190, "G1 Young Generation", "G1 Eden Space", 0));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 195, .tid = 42 });
	assert_int_equal(s.n, 0); /* held */
	feed(&gp, trace_ev(MT_TRACE_END, 42, 205, 9000 + 103));
	assert_int_equal(s.n, 1);
	assert_int_equal(s.recs[0].kind, GC_KIND_YOUNG);
	assert_true(s.recs[0].timed);
	assert_int_equal(s.recs[0].start_ns, 100);
	assert_int_equal(s.recs[0].end_ns - s.recs[0].start_ns, 103);
	/* Serial: the cycle, report_gc_start/end inside it */
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 300, .tid = 42 });
	feed(&gp, ev(MT_POOL_BEGIN, 310, "Copy", "Eden Space", 10));
	feed(&gp, trace_ev(MT_TRACE_BEGIN, 42, 320, 20000));
	feed(&gp, trace_ev(MT_TRACE_END, 42, 370, 20047));
	feed(&gp, ev(MT_POOL_END, 390, "Copy", "Eden Space", 0));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 395, .tid = 42 });
	assert_int_equal(s.n, 2);
	assert_true(s.recs[1].timed);
	assert_int_equal(s.recs[1].start_ns, 320);
	assert_int_equal(s.recs[1].end_ns - s.recs[1].start_ns, 47);
	/* G1's concurrent cycle on its own thread (7) times nothing of thread 42's */
	feed(&gp, trace_ev(MT_TRACE_BEGIN, 7, 400, 30000));
	feed(&gp, trace_ev(MT_TRACE_END, 7, 900, 30500));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 1000, .tid = 42 });
	feed(&gp, ev(MT_POOL_BEGIN, 1010, "Copy", "Eden Space", 10));
	feed(&gp, ev(MT_POOL_END, 1090, "Copy", "Eden Space", 0));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 1095, .tid = 42 });
	assert_int_equal(s.n, 3);
	assert_false(s.recs[2].timed);
	assert_int_equal(s.recs[2].end_ns - s.recs[2].start_ns, 80);
	/* Shenandoah's session: JFR's collection begins before the cycle and ends first */
	feed(&gp, trace_ev(MT_TRACE_BEGIN, 11, 1500, 60000));
	e = ev(MT_POOL_BEGIN, 1510, "Shenandoah Cycles", "Shenandoah", 100);
	e.tid = 11;
	feed(&gp, e);
	feed(&gp, trace_ev(MT_TRACE_END, 11, 1800, 60290));
	e = ev(MT_POOL_END, 1820, "Shenandoah Cycles", "Shenandoah", 40);
	e.tid = 11;
	feed(&gp, e);
	assert_int_equal(s.n, 4);
	assert_true(s.recs[3].timed);
	assert_int_equal(s.recs[3].start_ns, 1500);
	assert_int_equal(s.recs[3].end_ns - s.recs[3].start_ns, 290);
	/* a ZGC cycle on its driver (9): the cycle wraps JFR's collection */
	e = ev(MT_POOL_BEGIN, 2000, "ZGC Cycles", "ZHeap", 100);
	e.tid = 9;
	feed(&gp, e);
	feed(&gp, trace_ev(MT_TRACE_BEGIN, 9, 2001, 40000));
	feed(&gp, trace_ev(MT_TRACE_END, 9, 2900, 40890));
	e = ev(MT_POOL_END, 2950, "ZGC Cycles", "ZHeap", 40);
	e.tid = 9;
	feed(&gp, e);
	assert_int_equal(s.n, 5);
	assert_int_equal(s.recs[4].kind, GC_KIND_CYCLE);
	assert_true(s.recs[4].timed);
	assert_int_equal(s.recs[4].end_ns - s.recs[4].start_ns, 890);
	/* a held cycle whose JFR collection never ends is not lost */
	feed(&gp, trace_ev(MT_TRACE_BEGIN, 42, 3000, 50000));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 3001, .tid = 42 });
	feed(&gp, ev(MT_POOL_BEGIN, 3010, "G1 Young Generation", "G1 Eden Space", 10));
	feed(&gp, ev(MT_POOL_END, 3090, "G1 Young Generation", "G1 Eden Space", 0));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 3095, .tid = 42 });
	gcpair_finish(&gp);
	assert_int_equal(s.n, 6);
	assert_false(s.recs[5].timed);
	assert_int_equal(gp.unpaired_begin, 0);
	assert_int_equal(gp.in_flight, 1);
}

/* Lost events: an end without a begin, a begin without an end; and apart
 * from them, the edges: an end before any begin of its kind (its collection
 * began before the probes attached) and a begin still open at the end. */
static void test_unpaired_counted(void **state)
{
	struct sink s = { 0 };
	struct gcpair gp;

	gcpair_init(&gp, collect, &s);
	/* in flight when the probes attached: ends before any begin */
	feed(&gp, ev(MT_POOL_END, 4, "Copy", "Survivor Space", 0));
	feed(&gp, ev(MT_POOL_END, 5, "Copy", "Eden Space", 0));
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 5, .tid = 7 });
	assert_int_equal(gp.in_flight, 3);
	assert_int_equal(gp.unpaired_end, 0);
	feed(&gp, ev(MT_POOL_BEGIN, 6, "Copy", "Eden Space", 9));
	feed(&gp, ev(MT_POOL_BEGIN, 7, "Copy", "Eden Space", 9)); /* the end of #1 was lost */
	assert_int_equal(gp.unpaired_begin, 1);
	feed(&gp, ev(MT_POOL_END, 8, "Copy", "Eden Space", 1));
	assert_int_equal(s.n, 1);
	assert_int_equal(s.recs[0].start_ns, 7);
	/* the manager has begun since: an end without its begin was lost */
	feed(&gp, ev(MT_POOL_END, 9, "Copy", "Eden Space", 1));
	assert_int_equal(gp.unpaired_end, 1);
	/* another manager's first end is still an edge */
	feed(&gp, ev(MT_POOL_END, 9, "MarkSweepCompact", "Tenured Gen", 1));
	assert_int_equal(gp.in_flight, 4);
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 9, .tid = 7 });
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 10, .tid = 7 });
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_END, .ts_ns = 11, .tid = 7 });
	assert_int_equal(gp.unpaired_end, 2);
	/* open when the probes stop: in flight, not lost */
	feed(&gp, (struct mt_gc_event){ .kind = MT_GC_BEGIN, .ts_ns = 12, .tid = 7 });
	feed(&gp, ev(MT_POOL_BEGIN, 13, "Copy", "Eden Space", 9));
	gcpair_finish(&gp);
	assert_int_equal(gp.unpaired_begin, 1);
	assert_int_equal(gp.unpaired_end, 2);
	assert_int_equal(gp.in_flight, 6);
	assert_int_equal(s.n, 2); /* #1 and the pause of the operation at 9 */
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
	assert_int_equal(s.recs[0].kind, GC_KIND_CYCLE);
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
		cmocka_unit_test(test_zgc_pauses_and_cycle),
		cmocka_unit_test(test_start_by_ticks),
		cmocka_unit_test(test_shenandoah_pause_inside_vmop),
		cmocka_unit_test(test_g1_remark),
		cmocka_unit_test(test_pauses_without_timer),
		cmocka_unit_test(test_jfr_collections),
		cmocka_unit_test(test_unpaired_counted),
		cmocka_unit_test(test_concurrent_cycle),
		cmocka_unit_test(test_pool_and_manager_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
