// SPDX-License-Identifier: GPL-2.0
/*
 * test_walkestimate - the pause of a heap walk, before it: the used heap read
 * from hsperfdata counters laid out as HotSpot lays them (ZGC's one space; G1's
 * eden and survivors, the eden left out once collected), the defaults, what a
 * walk teaches (its cost and its used bytes per object), and the text.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "heap/walkestimate.h"
#include "jvm/perfdata.h"

#define MIB (1024 * 1024)

struct builder {
	unsigned char buf[4096];
	size_t len;
	uint32_t n;
};

static void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }

static void b_init(struct builder *b)
{
	memset(b, 0, sizeof(*b));
	b->buf[0] = 0xca, b->buf[1] = 0xfe, b->buf[2] = 0xc0, b->buf[3] = 0xc0;
	b->buf[4] = 1;
	b->buf[5] = 2, b->buf[6] = 0, b->buf[7] = 1;
	put32(b->buf + 24, 32);
	b->len = 32;
}

static void b_long(struct builder *b, const char *name, int64_t v)
{
	unsigned char *e = b->buf + b->len;
	size_t nl = strlen(name) + 1, data = (20 + nl + 7) & ~(size_t)7, elen = data + 8;

	put32(e, (uint32_t)elen);
	put32(e + 4, 20);
	put32(e + 8, 0);
	e[12] = 'J';
	put32(e + 16, (uint32_t)data);
	memcpy(e + 20, name, nl);
	memcpy(e + data, &v, 8);
	b->len += elen;
	put32(b->buf + 28, ++b->n);
}

static struct mt_perfdata *b_open(const struct builder *b)
{
	char path[64], why[128];
	struct mt_perfdata *pd;
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/test_walkestimate.%d", (int)getpid());
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b->buf, 1, b->len, f), b->len);
	fclose(f);
	pd = perfdata_open_file(path, why, sizeof(why));
	unlink(path);
	assert_non_null(pd);
	return pd;
}

/* ZGC (JDK 25): a young and an old generation of one space each. */
static void test_zgc_counters(void **state)
{
	struct walkestimate e;
	struct mt_perfdata *pd;
	struct builder b;
	char t[192];

	b_init(&b);
	b_long(&b, "sun.gc.generation.0.spaces", 1);
	b_long(&b, "sun.gc.generation.0.space.0.used", 64 * MIB);
	b_long(&b, "sun.gc.generation.1.spaces", 1);
	b_long(&b, "sun.gc.generation.1.space.0.used", 0);
	pd = b_open(&b);
	assert_int_equal(walkestimate_read(pd, false, &e), 0);
	assert_int_equal(e.used, 64 * MIB);
	assert_false(e.eden_out);
	assert_int_equal(e.objects, 64 * MIB / WALKEST_MEAN_BYTES);
	assert_int_equal(e.pause_ns, (uint64_t)e.objects * WALKEST_NS_PER_OBJECT);
	assert_false(e.measured);
	walkestimate_text(&e, t, sizeof(t));
	assert_string_equal(t, "about 524.29 ms: 64.0 MiB of heap used / 64 B an object = 1.05 M "
			       "objects x 500 ns (measured on other JVMs)");
	/* a walk that tags every object costs more */
	assert_int_equal(walkestimate_read(pd, true, &e), 0);
	assert_int_equal(e.pause_ns, (uint64_t)e.objects * WALKEST_NS_PER_OBJECT_TAGGED);
	/* the walk visited 1 M objects in 300 ms: 64 bytes of used heap each, 300 ns */
	walkestimate_learn(&e, 1000000, 300000000);
	assert_true(e.measured);
	assert_int_equal((uint64_t)e.mean_bytes, 64 * MIB / 1000000);
	assert_int_equal((uint64_t)e.ns_per_object, 300);
	assert_true(e.objects >= 999999 && e.objects <= 1000001);
	walkestimate_text(&e, t, sizeof(t));
	assert_non_null(strstr(t, "(as this JVM's last walk)"));
	/* a walk that visited nothing teaches nothing */
	walkestimate_learn(&e, 0, 5);
	assert_int_equal((uint64_t)e.ns_per_object, 300);
	perfdata_free(pd);
}

/* G1: eden, two survivors, an old space. The eden counts until the first
 * young collection, not after. */
static void test_g1_eden(void **state)
{
	struct walkestimate e;
	struct mt_perfdata *pd;
	struct builder b;

	for (int gcs = 0; gcs < 2; gcs++) {
		b_init(&b);
		b_long(&b, "sun.gc.collector.0.invocations", gcs);
		b_long(&b, "sun.gc.generation.0.spaces", 3);
		b_long(&b, "sun.gc.generation.0.space.0.used", 100 * MIB);
		b_long(&b, "sun.gc.generation.0.space.1.used", 1 * MIB);
		b_long(&b, "sun.gc.generation.0.space.2.used", 0);
		b_long(&b, "sun.gc.generation.1.spaces", 1);
		b_long(&b, "sun.gc.generation.1.space.0.used", 9 * MIB);
		pd = b_open(&b);
		assert_int_equal(walkestimate_read(pd, false, &e), 0);
		assert_int_equal(e.used, gcs ? 10 * MIB : 110 * MIB);
		assert_int_equal(e.eden_out, gcs == 1);
		perfdata_free(pd);
	}
}

/* An idle JVM whose counters say little (JDK 25's G1 moves them at
 * collections): its loaded classes are the floor. */
static void test_class_floor(void **state)
{
	struct walkestimate e;
	struct mt_perfdata *pd;
	struct builder b;
	char t[192];

	b_init(&b);
	b_long(&b, "java.cls.loadedClasses", 9);
	b_long(&b, "java.cls.sharedLoadedClasses", 614);
	b_long(&b, "java.cls.unloadedClasses", 0);
	b_long(&b, "sun.gc.generation.0.spaces", 3);
	b_long(&b, "sun.gc.generation.0.space.0.used", 0);
	b_long(&b, "sun.gc.generation.1.spaces", 1);
	b_long(&b, "sun.gc.generation.1.space.0.used", 0);
	pd = b_open(&b);
	assert_int_equal(walkestimate_read(pd, false, &e), 0);
	assert_int_equal(e.classes, 623);
	assert_int_equal(e.objects, 623 * WALKEST_OBJECTS_PER_CLASS);
	walkestimate_text(&e, t, sizeof(t));
	assert_string_equal(t, "about 9.97 ms: 0 B of heap used / 64 B an object = 0.02 M objects "
			       "(at least 32 a class: 623 classes) x 500 ns (measured on other JVMs)");
	perfdata_free(pd);
}

/* No counters: nothing to estimate from. */
static void test_none(void **state)
{
	struct walkestimate e;
	struct mt_perfdata *pd;
	struct builder b;

	assert_int_equal(walkestimate_read(NULL, false, &e), -ENOENT);
	b_init(&b);
	b_long(&b, "sun.os.hrt.frequency", 1000000000);
	pd = b_open(&b);
	assert_int_equal(walkestimate_read(pd, false, &e), -ENOENT);
	perfdata_free(pd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_zgc_counters),
		cmocka_unit_test(test_g1_eden),
		cmocka_unit_test(test_class_floor),
		cmocka_unit_test(test_none),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
