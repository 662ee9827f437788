// SPDX-License-Identifier: GPL-2.0
/*
 * test_gcreplay.c - `memtrace gc`'s records and summary (sink/gcreplay.c)
 * from paired probe events: a young collection, a concurrent cycle (ZGC's,
 * on a thread of its own) with a pause timed by GCTimer inside it, a pause
 * without a memory manager or a timer, a full collection, an unpaired
 * begin and a collection in flight at the end, the causes of the young and the full one (heard before their pool
 * ends) and of the pause (heard inside it), printed as text and as JSON
 * lines, byte for byte.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sink/gcreplay.h"

#define MIB (1024ULL * 1024)
#define T0 1000000000ULL                  /* tracing started at 1 s (monotonic) */
#define M2R 1700000000000000000ULL        /* monotonic -> epoch */

static void vmop(struct gcreplay *r, uint32_t kind, uint64_t ts, bool full)
{
	struct mt_gc_event e = { .kind = kind, .ts_ns = ts, .tid = 42, .is_full = full };

	gcreplay_feed(r, &e);
}

static void pool(struct gcreplay *r, uint32_t kind, uint64_t ts, const char *mgr,
		 const char *name, uint64_t used, uint64_t committed, uint64_t max)
{
	struct mt_gc_event e = { .kind = kind, .ts_ns = ts, .tid = 42, .used = used,
				 .committed = committed, .max = max };

	snprintf(e.manager, sizeof(e.manager), "%s", mgr);
	snprintf(e.pool, sizeof(e.pool), "%s", name);
	gcreplay_feed(r, &e);
}

static void cause(struct gcreplay *r, uint64_t ts, const char *c, const char *action)
{
	struct mt_gc_event e = { .kind = MT_GC_CAUSE, .ts_ns = ts, .tid = 42 };

	snprintf(e.cause, sizeof(e.cause), "%s", c);
	snprintf(e.action, sizeof(e.action), "%s", action);
	gcreplay_feed(r, &e);
}

/* ZGC's cycle pools on its driver thread (9) */
static void zpool(struct gcreplay *r, uint32_t kind, uint64_t ts, uint64_t used)
{
	struct mt_gc_event e = { .kind = kind, .ts_ns = ts, .tid = 9, .used = used,
				 .committed = 256 * MIB, .max = 1024 * MIB };

	snprintf(e.manager, sizeof(e.manager), "ZGC Minor Cycles");
	snprintf(e.pool, sizeof(e.pool), "ZGC Young Generation");
	gcreplay_feed(r, &e);
}

/* A ZGC pause on the VM thread (42): GCTimer's Ticks say it lasted @ticks ns
 * (the JVM's clock: CLOCK_MONOTONIC less 1 s; its end probe 2 us late). */
static void zpause(struct gcreplay *r, uint64_t ts, uint64_t ticks)
{
	const uint64_t t0 = ts - 1000000000ull;
	struct mt_gc_event e = { .kind = MT_PAUSE_BEGIN, .ts_ns = ts, .tid = 42, .ticks = t0 };

	snprintf(e.pause, sizeof(e.pause), "Pause Mark Start");
	gcreplay_feed(r, &e);
	vmop(r, MT_GC_BEGIN, ts + 1000, false);
	e = (struct mt_gc_event){ .kind = MT_GC_CAUSE, .ts_ns = ts + 2000, .tid = 42 };
	snprintf(e.cause, sizeof(e.cause), "Allocation Rate");
	snprintf(e.action, sizeof(e.action), "end of GC pause");
	snprintf(e.manager, sizeof(e.manager), "ZGC Minor Pauses");
	gcreplay_feed(r, &e);
	vmop(r, MT_GC_END, ts + 3000, false);
	e = (struct mt_gc_event){ .kind = MT_PAUSE_END, .ts_ns = ts + ticks + 2000, .tid = 42,
				  .ticks = t0 + ticks };
	gcreplay_feed(r, &e);
}

/* The stream: four collections, then a pool that begins and never ends. */
static char *replay(bool json)
{
	const char *young = "G1 Young Generation", *old = "G1 Old Generation";
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gcreplay *r;

	assert_non_null(f);
	r = gcreplay_new(f, json, T0, M2R);
	assert_non_null(r);
	/* #1 young, 2.5 ms: Eden 64 MiB -> 0, Old 10 -> 12 MiB, Metaspace (not heap) */
	vmop(r, MT_GC_BEGIN, 2000000000ULL, false);
	pool(r, MT_POOL_BEGIN, 2000100000ULL, young, "G1 Eden Space", 64 * MIB, 128 * MIB, UINT64_MAX);
	pool(r, MT_POOL_BEGIN, 2000100000ULL, young, "G1 Old Gen", 10 * MIB, 256 * MIB, 1024 * MIB);
	pool(r, MT_POOL_BEGIN, 2000100000ULL, young, "Metaspace", 5 * MIB, 6 * MIB, UINT64_MAX);
	cause(r, 2002600000ULL, "G1 Evacuation Pause", "end of minor GC");
	pool(r, MT_POOL_END, 2002600000ULL, young, "G1 Eden Space", 0, 120 * MIB, UINT64_MAX);
	pool(r, MT_POOL_END, 2002600000ULL, young, "G1 Old Gen", 12 * MIB, 256 * MIB, 1024 * MIB);
	pool(r, MT_POOL_END, 2002600000ULL, young, "Metaspace", 5 * MIB, 6 * MIB, UINT64_MAX);
	vmop(r, MT_GC_END, 2002700000ULL, false);
	/* #3 a concurrent cycle of its own thread: 1.2 s, with #2, a 31 us pause */
	zpool(r, MT_POOL_BEGIN, 3000000000ULL, 100 * MIB);
	zpause(r, 3100000000ULL, 31000);
	zpool(r, MT_POOL_END, 4200000000ULL, 40 * MIB);
	/* #4 a pause of no memory manager, untimed (G1 remark, JDK 17, no symbols): 800 us */
	vmop(r, MT_GC_BEGIN, 5000000000ULL, false);
	vmop(r, MT_GC_END, 5000800000ULL, false);
	/* #5 full, 150 ms */
	vmop(r, MT_GC_BEGIN, 6000000000ULL, true);
	pool(r, MT_POOL_BEGIN, 6000000000ULL, old, "G1 Old Gen", 200 * MIB, 256 * MIB, 1024 * MIB);
	cause(r, 6150000000ULL, "System.gc()", "end of major GC");
	pool(r, MT_POOL_END, 6150000000ULL, old, "G1 Old Gen", 30 * MIB, 64 * MIB, 1024 * MIB);
	vmop(r, MT_GC_END, 6150000000ULL, false);
	/* its end lost (unpaired), then one still in flight at the end */
	pool(r, MT_POOL_BEGIN, 7000000000ULL, young, "G1 Eden Space", 8 * MIB, 128 * MIB, UINT64_MAX);
	pool(r, MT_POOL_BEGIN, 7500000000ULL, young, "G1 Eden Space", 8 * MIB, 128 * MIB, UINT64_MAX);
	gcreplay_finish(r, 3, 9.25, true);
	gcreplay_free(r);
	fclose(f);
	return buf;
}

static void test_text(void **state)
{
	char *s = replay(false);

	assert_string_equal(s,
		"#1       1.000s  G1 Young Generation    young         2.50 ms  heap 74.0 "
		"MiB -> 12.0 MiB (committed 376.0 MiB)  cause: G1 Evacuation Pause\n"
		"        G1 Eden Space                64.0 MiB -> 0 B        committed "
		"120.0 MiB  max -\n"
		"        G1 Old Gen                   10.0 MiB -> 12.0 MiB   committed "
		"256.0 MiB  max 1.0 GiB\n"
		"#2       2.100s  ZGC Minor Pauses       pause         31.0 us  Pause Mark Start"
		"  cause: Allocation Rate\n"
		"#3       2.000s  ZGC Minor Cycles       cycle         1.200 s  heap 100.0 "
		"MiB -> 40.0 MiB (committed 256.0 MiB)\n"
		"        ZGC Young Generation        100.0 MiB -> 40.0 MiB   committed "
		"256.0 MiB  max 1.0 GiB\n"
		"#4       4.000s  (no memory manager)    pause        800.0 us\n"
		"#5       5.000s  G1 Old Generation      full        150.00 ms  heap 200.0 "
		"MiB -> 30.0 MiB (committed 64.0 MiB)  cause: System.gc()\n"
		"        G1 Old Gen                  200.0 MiB -> 30.0 MiB   committed "
		"64.0 MiB   max 1.0 GiB\n"
		"\n"
		"summary: 1 young, 1 full, 2 pauses of concurrent cycles, 1 concurrent cycle "
		"in 9.2 s (the JVM exited)\n"
		"         4 pauses: total 153.33 ms, max 150.00 ms, mean 38.33 ms\n"
		"         concurrent cycles: total 1.200 s (beside the application, not pauses)\n"
		"         causes: 1 G1 Evacuation Pause, 1 Allocation Rate, 1 System.gc()\n"
		"         lost events: 3, unpaired: 1, in flight at attach or exit: 1\n");
	free(s);
}

static void test_json(void **state)
{
	char *s = replay(true);

	assert_string_equal(s,
		"{\"event\":\"gc\",\"seq\":1,\"start_ns\":1700000002000100000,"
		"\"start_mono_ns\":2000100000,\"duration_ns\":2500000,\"full\":false,"
		"\"kind\":\"young\",\"collector\":\"G1 Young Generation\",\"timed\":false,"
		"\"cause\":\"G1 Evacuation Pause\",\"action\":\"end of minor GC\","
		"\"pools\":[{\"name\":\"G1 Eden Space\",\"heap\":true,"
		"\"used_before\":67108864,\"used_after\":0,\"committed\":125829120,"
		"\"max\":-1},{\"name\":\"G1 Old Gen\",\"heap\":true,"
		"\"used_before\":10485760,\"used_after\":12582912,\"committed\":268435456,"
		"\"max\":1073741824},{\"name\":\"Metaspace\",\"heap\":false,"
		"\"used_before\":5242880,\"used_after\":5242880,\"committed\":6291456,"
		"\"max\":-1}]}\n"
		"{\"event\":\"gc\",\"seq\":2,\"start_ns\":1700000003100000000,"
		"\"start_mono_ns\":3100000000,\"duration_ns\":31000,\"full\":false,"
		"\"kind\":\"pause\",\"collector\":\"ZGC Minor Pauses\","
		"\"pause\":\"Pause Mark Start\",\"timed\":true,"
		"\"cause\":\"Allocation Rate\",\"action\":\"end of GC pause\",\"pools\":[]}\n"
		"{\"event\":\"gc\",\"seq\":3,\"start_ns\":1700000003000000000,"
		"\"start_mono_ns\":3000000000,\"duration_ns\":1200000000,\"full\":false,"
		"\"kind\":\"cycle\",\"collector\":\"ZGC Minor Cycles\",\"timed\":false,"
		"\"cause\":\"\",\"action\":\"\","
		"\"pools\":[{\"name\":\"ZGC Young Generation\",\"heap\":true,"
		"\"used_before\":104857600,\"used_after\":41943040,\"committed\":268435456,"
		"\"max\":1073741824}]}\n"
		"{\"event\":\"gc\",\"seq\":4,\"start_ns\":1700000005000000000,"
		"\"start_mono_ns\":5000000000,\"duration_ns\":800000,\"full\":false,"
		"\"kind\":\"pause\",\"collector\":\"\",\"pause\":\"\",\"timed\":false,"
		"\"cause\":\"\",\"action\":\"\",\"pools\":[]}\n"
		"{\"event\":\"gc\",\"seq\":5,\"start_ns\":1700000006000000000,"
		"\"start_mono_ns\":6000000000,\"duration_ns\":150000000,\"full\":true,"
		"\"kind\":\"full\",\"collector\":\"G1 Old Generation\",\"timed\":false,"
		"\"cause\":\"System.gc()\",\"action\":\"end of major GC\","
		"\"pools\":[{\"name\":\"G1 Old Gen\",\"heap\":true,"
		"\"used_before\":209715200,\"used_after\":31457280,\"committed\":67108864,"
		"\"max\":1073741824}]}\n"
		"{\"event\":\"summary\",\"gc_count\":5,\"young\":1,\"full\":1,\"pauses\":2,"
		"\"cycles\":1,\"pause_count\":4,\"pause_total_ns\":153331000,"
		"\"pause_max_ns\":150000000,\"pause_mean_ns\":38332750,"
		"\"cycle_total_ns\":1200000000,\"lost_events\":3,\"unpaired_events\":1,"
		"\"in_flight_events\":1,"
		"\"duration_s\":9.250,\"jvm_exited\":true,"
		"\"causes\":{\"G1 Evacuation Pause\":1,\"Allocation Rate\":1,\"System.gc()\":1}}\n");
	free(s);
}

/* `memtrace gc`'s way: records from a pairing of its own (gctrace's), the
 * summary with that pairing's counts. */
static void test_live_pairing(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct mt_gc_event e = { .kind = MT_GC_BEGIN, .ts_ns = 5000000000ULL, .tid = 7 };
	struct gcreplay *r;
	struct gcpair gp;

	assert_non_null(f);
	r = gcreplay_new(f, false, T0, M2R);
	assert_non_null(r);
	gcpair_init(&gp, gcreplay_record, r);
	gcpair_feed(&gp, &e);
	e.kind = MT_GC_END, e.ts_ns = 5000800000ULL;
	gcpair_feed(&gp, &e);
	e.kind = MT_GC_END; /* an end without its begin */
	gcpair_feed(&gp, &e);
	gcpair_finish(&gp);
	gcreplay_summary(r, &gp, 0, 1.04, false);
	gcreplay_free(r);
	fclose(f);
	assert_string_equal(buf,
		"#1       4.000s  (no memory manager)    pause        800.0 us\n"
		"\n"
		"summary: 0 young, 0 full, 1 pause of concurrent cycles in 1.0 s\n"
		"         1 pause: total 800.0 us, max 800.0 us, mean 800.0 us\n"
		"         lost events: 0, unpaired: 1, in flight at attach or exit: 0\n");
	free(buf);
}

/* Nothing collected: the summary alone. */
static void test_empty(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gcreplay *r;

	assert_non_null(f);
	r = gcreplay_new(f, false, T0, M2R);
	assert_non_null(r);
	gcreplay_finish(r, 0, 0.5, false);
	gcreplay_free(r);
	r = gcreplay_new(f, true, T0, M2R);
	assert_non_null(r);
	gcreplay_finish(r, 0, 0.5, false);
	gcreplay_free(r);
	gcreplay_free(NULL);
	fclose(f);
	assert_string_equal(buf,
		"\n"
		"summary: 0 young, 0 full in 0.5 s\n"
		"         0 pauses: total 0.0 us, max 0.0 us, mean 0.0 us\n"
		"         lost events: 0, unpaired: 0, in flight at attach or exit: 0\n"
		"{\"event\":\"summary\",\"gc_count\":0,\"young\":0,\"full\":0,\"pauses\":0,"
		"\"cycles\":0,\"pause_count\":0,\"pause_total_ns\":0,\"pause_max_ns\":0,"
		"\"pause_mean_ns\":0,\"cycle_total_ns\":0,"
		"\"lost_events\":0,\"unpaired_events\":0,\"in_flight_events\":0,\"duration_s\":0.500,"
		"\"jvm_exited\":false,\"causes\":{}}\n");
	free(buf);
}

/* A recording whose probes attached 150 ms after its header's start: the
 * summary says from when its records observe (a collection before is in
 * none), in text and JSON. */
static void test_observed_from(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct gcreplay *r;

	assert_non_null(f);
	for (int json = 0; json < 2; json++) {
		r = gcreplay_new(f, json, T0, M2R);
		assert_non_null(r);
		gcreplay_observed_from(r, T0 + 150000000ULL);
		gcreplay_finish(r, 0, 0.5, false);
		gcreplay_free(r);
	}
	fclose(f);
	assert_string_equal(buf,
		"\n"
		"summary: 0 young, 0 full in 0.5 s\n"
		"         observed from 0.150 s on (its probes all attached then: a collection "
		"before may be missing)\n"
		"         0 pauses: total 0.0 us, max 0.0 us, mean 0.0 us\n"
		"         lost events: 0, unpaired: 0, in flight at attach or exit: 0\n"
		"{\"event\":\"summary\",\"gc_count\":0,\"young\":0,\"full\":0,\"pauses\":0,"
		"\"cycles\":0,\"pause_count\":0,\"pause_total_ns\":0,\"pause_max_ns\":0,"
		"\"pause_mean_ns\":0,\"cycle_total_ns\":0,"
		"\"lost_events\":0,\"unpaired_events\":0,\"in_flight_events\":0,\"duration_s\":0.500,"
		"\"jvm_exited\":false,\"observed_from_ns\":1700000001150000000,\"causes\":{}}\n");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_live_pairing),
		cmocka_unit_test(test_empty),
		cmocka_unit_test(test_observed_from),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
