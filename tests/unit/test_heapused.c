// SPDX-License-Identifier: GPL-2.0
/* test_heapused - the heap pools' used bytes read through VMStructs from
 * synthetic JVMs laid out as JDK 17 and JDK 25 lay them out (offsets as
 * `memtrace vmstructs --dump` shows them): G1's monitoring support, Parallel's
 * and Serial's spaces (top - bottom), the collector told by the pool names
 * when there is no .symtab (vmstructs_parse handles have none). The e2e case
 * serve_micrometer compares the figures with MemoryPoolMXBean on live JVMs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jvm/heapused.h"
#include "jvm/vmstructs.h"
#include "lib/util.h"
#include "fake_target.h"

static struct fake *new_fake(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->used = 64;
	return f;
}

static struct mt_vmstructs *parse(struct fake *f, const struct tfield *fl, size_t nf,
				  const struct ttype *ty, size_t nt)
{
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;

	build(f, &s, fl, nf, ty, nt, NULL, 0, NULL, 0);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
	return vs;
}

/* A space object with _bottom at @ob and _top at @ot holding @used bytes. */
static uint64_t space(struct fake *f, uint64_t ob, uint64_t ot, uint64_t used)
{
	uint64_t s = fake_alloc(f, 96);

	put64(f, s + ob, 0x700000000000ull);
	put64(f, s + ot, 0x700000000000ull + used);
	return s;
}

static void test_g1_jdk25(void **state)
{
	struct fake *f = new_fake();
	uint64_t heap = fake_alloc(f, 1024), mm = fake_alloc(f, 800), uvar = var(f, heap);
	const struct tfield fields[] = {
		{ "Universe", "_collectedHeap", "CollectedHeap*", 1, 0, uvar },
		{ "G1CollectedHeap", "_monitoring_support", "G1MonitoringSupport*", 0, 968, 0 },
		{ "G1MonitoringSupport", "_eden_space_used", "size_t", 0, 720, 0 },
		{ "G1MonitoringSupport", "_survivor_space_used", "size_t", 0, 736, 0 },
		{ "G1MonitoringSupport", "_old_gen_used", "size_t", 0, 744, 0 },
	};
	struct mt_vmstructs *vs;
	struct heapused h;
	uint64_t u;

	put64(f, heap + 968, mm);
	put64(f, mm + 720, 26214400);
	put64(f, mm + 736, 1048576);
	put64(f, mm + 744, 7340032);
	vs = parse(f, fields, MT_ARRAY_SIZE(fields), NULL, 0);
	/* no .symtab and no pool names yet: the collector is unknown */
	assert_int_equal(heapused_open(vs, NULL, &h), -ENOENT);
	assert_int_equal(heapused_read(&h, HEAPUSED_EDEN, &u), -ENOENT);
	assert_int_equal(heapused_open(vs, "G1 Old Gen", &h), 0);
	assert_int_equal(h.kind, HEAPUSED_G1);
	assert_int_equal(heapused_read(&h, heapused_space("G1 Eden Space"), &u), 0);
	assert_int_equal(u, 26214400);
	assert_int_equal(heapused_read(&h, heapused_space("G1 Survivor Space"), &u), 0);
	assert_int_equal(u, 1048576);
	assert_int_equal(heapused_read(&h, heapused_space("G1 Old Gen"), &u), 0);
	assert_int_equal(u, 7340032);
	/* the JVM moves on: read again, not cached */
	put64(f, mm + 720, 27262976);
	assert_int_equal(heapused_read(&h, HEAPUSED_EDEN, &u), 0);
	assert_int_equal(u, 27262976);
	assert_string_equal(heapused_pool_name(&h, HEAPUSED_OLD), "G1 Old Gen");
	assert_int_equal(heapused_space("Metaspace"), -1);
	assert_int_equal(heapused_space("CodeHeap 'profiled nmethods'"), -1);
	vmstructs_free(vs);
	free(f);
}

static void test_g1_jdk17(void **state)
{
	struct fake *f = new_fake();
	uint64_t heap = fake_alloc(f, 1024), mm = fake_alloc(f, 600), uvar = var(f, heap);
	const struct tfield fields[] = {
		{ "Universe", "_collectedHeap", "CollectedHeap*", 1, 0, uvar },
		{ "G1CollectedHeap", "_g1mm", "G1MonitoringSupport*", 0, 888, 0 },
		{ "G1MonitoringSupport", "_eden_space_used", "size_t", 0, 512, 0 },
		{ "G1MonitoringSupport", "_survivor_space_used", "size_t", 0, 528, 0 },
		{ "G1MonitoringSupport", "_old_gen_used", "size_t", 0, 536, 0 },
	};
	struct mt_vmstructs *vs;
	struct heapused h;
	uint64_t u;

	put64(f, heap + 888, mm);
	put64(f, mm + 536, 1325032);
	vs = parse(f, fields, MT_ARRAY_SIZE(fields), NULL, 0);
	assert_int_equal(heapused_open(vs, "G1 Eden Space", &h), 0);
	assert_int_equal(heapused_read(&h, HEAPUSED_OLD, &u), 0);
	assert_int_equal(u, 1325032);
	/* a hint of another collector: its layout is not there */
	assert_int_equal(heapused_open(vs, "PS Eden Space", &h), -ENOENT);
	assert_int_equal(h.kind, HEAPUSED_NONE);
	vmstructs_free(vs);
	free(f);
}

static void test_parallel(void **state)
{
	struct fake *f = new_fake();
	uint64_t young = fake_alloc(f, 128), old = fake_alloc(f, 256);
	uint64_t yvar = var(f, young), ovar = var(f, old), uvar = var(f, 0x5000);
	const struct tfield fields[] = {
		{ "Universe", "_collectedHeap", "CollectedHeap*", 1, 0, uvar },
		{ "ParallelScavengeHeap", "_young_gen", "PSYoungGen*", 1, 0, yvar },
		{ "ParallelScavengeHeap", "_old_gen", "PSOldGen*", 1, 0, ovar },
		{ "PSYoungGen", "_eden_space", "MutableSpace*", 0, 32, 0 },
		{ "PSYoungGen", "_from_space", "MutableSpace*", 0, 40, 0 },
		{ "PSOldGen", "_object_space", "MutableSpace*", 0, 160, 0 },
		{ "MutableSpace", "_bottom", "HeapWord*", 0, 40, 0 },
		{ "MutableSpace", "_top", "HeapWord*", 0, 48, 0 },
	};
	struct mt_vmstructs *vs;
	struct heapused h;
	uint64_t u;

	put64(f, young + 32, space(f, 40, 48, 1533800));
	put64(f, young + 40, space(f, 40, 48, 0));
	put64(f, old + 160, space(f, 40, 48, 804376));
	vs = parse(f, fields, MT_ARRAY_SIZE(fields), NULL, 0);
	assert_int_equal(heapused_open(vs, "PS Survivor Space", &h), 0);
	assert_int_equal(h.kind, HEAPUSED_PARALLEL);
	assert_int_equal(heapused_read(&h, HEAPUSED_EDEN, &u), 0);
	assert_int_equal(u, 1533800);
	assert_int_equal(heapused_read(&h, HEAPUSED_SURVIVOR, &u), 0);
	assert_int_equal(u, 0);
	assert_int_equal(heapused_read(&h, HEAPUSED_OLD, &u), 0);
	assert_int_equal(u, 804376);
	assert_string_equal(heapused_pool_name(&h, HEAPUSED_EDEN), "PS Eden Space");
	vmstructs_free(vs);
	free(f);
}

/* JDK 17: SerialHeap is a GenCollectedHeap, ContiguousSpace a Space (their
 * fields are the supertypes'); JDK 25: SerialHeap's and ContiguousSpace's own. */
static void test_serial(void **state)
{
	for (int jdk = 17; jdk <= 25; jdk += 8) {
		struct fake *f = new_fake();
		uint64_t heap = fake_alloc(f, 256), young = fake_alloc(f, 800), old = fake_alloc(f, 400);
		uint64_t uvar = var(f, heap);
		const struct tfield f17[] = {
			{ "Universe", "_collectedHeap", "CollectedHeap*", 1, 0, uvar },
			{ "GenCollectedHeap", "_young_gen", "Generation*", 0, 96, 0 },
			{ "GenCollectedHeap", "_old_gen", "Generation*", 0, 104, 0 },
			{ "DefNewGeneration", "_eden_space", "ContiguousSpace*", 0, 736, 0 },
			{ "DefNewGeneration", "_from_space", "ContiguousSpace*", 0, 744, 0 },
			{ "TenuredGeneration", "_the_space", "ContiguousSpace*", 0, 288, 0 },
			{ "Space", "_bottom", "HeapWord*", 0, 8, 0 },
			{ "ContiguousSpace", "_top", "HeapWord*", 0, 64, 0 },
		};
		const struct ttype t17[] = {
			{ "SerialHeap", "GenCollectedHeap", 0, 0, 0, 256 },
			{ "GenCollectedHeap", "CollectedHeap", 0, 0, 0, 200 },
			{ "ContiguousSpace", "CompactibleSpace", 0, 0, 0, 96 },
			{ "CompactibleSpace", "Space", 0, 0, 0, 64 },
		};
		const struct tfield f25[] = {
			{ "Universe", "_collectedHeap", "CollectedHeap*", 1, 0, uvar },
			{ "SerialHeap", "_young_gen", "DefNewGeneration*", 0, 112, 0 },
			{ "SerialHeap", "_old_gen", "TenuredGeneration*", 0, 120, 0 },
			{ "DefNewGeneration", "_eden_space", "ContiguousSpace*", 0, 656, 0 },
			{ "DefNewGeneration", "_from_space", "ContiguousSpace*", 0, 664, 0 },
			{ "TenuredGeneration", "_the_space", "ContiguousSpace*", 0, 216, 0 },
			{ "ContiguousSpace", "_bottom", "HeapWord*", 0, 0, 0 },
			{ "ContiguousSpace", "_top", "HeapWord*", 0, 16, 0 },
		};
		bool j17 = jdk == 17;
		uint64_t ob = j17 ? 8 : 0, ot = j17 ? 64 : 16;
		struct mt_vmstructs *vs;
		struct heapused h;
		uint64_t u;

		put64(f, heap + (j17 ? 96 : 112), young);
		put64(f, heap + (j17 ? 104 : 120), old);
		put64(f, young + (j17 ? 736 : 656), space(f, ob, ot, 354240));
		put64(f, young + (j17 ? 744 : 664), space(f, ob, ot, 4096));
		put64(f, old + (j17 ? 288 : 216), space(f, ob, ot, 1325672));
		vs = j17 ? parse(f, f17, MT_ARRAY_SIZE(f17), t17, MT_ARRAY_SIZE(t17)) :
			   parse(f, f25, MT_ARRAY_SIZE(f25), NULL, 0);
		assert_int_equal(heapused_open(vs, "Tenured Gen", &h), 0);
		assert_int_equal(h.kind, HEAPUSED_SERIAL);
		assert_int_equal(heapused_read(&h, heapused_space("Eden Space"), &u), 0);
		assert_int_equal(u, 354240);
		assert_int_equal(heapused_read(&h, heapused_space("Survivor Space"), &u), 0);
		assert_int_equal(u, 4096);
		assert_int_equal(heapused_read(&h, heapused_space("Tenured Gen"), &u), 0);
		assert_int_equal(u, 1325672);
		/* a torn read (top below bottom) is refused, not a huge number */
		{
			uint64_t sp;

			assert_int_equal(vmstructs_read_ptr(vs, young + (j17 ? 736 : 656), &sp), 0);
			put64(f, sp + ot, 0x700000000000ull - 8);
			assert_int_equal(heapused_read(&h, HEAPUSED_EDEN, &u), -EIO);
		}
		vmstructs_free(vs);
		free(f);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_g1_jdk25),
		cmocka_unit_test(test_g1_jdk17),
		cmocka_unit_test(test_parallel),
		cmocka_unit_test(test_serial),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
