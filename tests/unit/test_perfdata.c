// SPDX-License-Identifier: GPL-2.0
/* test_perfdata - hsperfdata files: counters read by name, corrupt files refused. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "jvm/perfdata.h"

/* A file as HotSpot lays it out: prologue, then entries (header, name, long). */
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
	b->buf[4] = 1; /* little endian */
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

static char *b_write(const struct builder *b, size_t len)
{
	static char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/test_perfdata.%d", (int)getpid());
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(b->buf, 1, len, f), len);
	fclose(f);
	return path;
}

static void test_counters(void **state)
{
	struct builder b;
	struct mt_perfdata *pd;
	struct mt_safepoints sp;
	char why[256];
	int64_t v;

	b_init(&b);
	b_long(&b, "sun.os.hrt.frequency", 1000000000);
	b_long(&b, "sun.rt.safepointSyncTime", 4268);
	b_long(&b, "sun.rt.safepointTime", 3868769);
	b_long(&b, "sun.rt.safepoints", 7);
	pd = perfdata_open_file(b_write(&b, b.len), why, sizeof(why));
	assert_non_null(pd);
	assert_int_equal(perfdata_long(pd, "sun.rt.safepoints", &v), 0);
	assert_int_equal(v, 7);
	assert_int_equal(perfdata_long(pd, "sun.rt.safepoint", &v), -ENOENT); /* exact names only */
	assert_int_equal(perfdata_safepoints(pd, &sp), 0);
	assert_int_equal(sp.count, 7);
	assert_int_equal(sp.sync_ns, 4268);
	assert_int_equal(sp.rest_ns, 3868769);
	assert_int_equal(sp.time_ns, 3868769 + 4268); /* the log's Total: reaching + the rest */
	perfdata_free(pd);
	perfdata_free(NULL);

	/* a 10 MHz clock: ticks scale to ns */
	b_init(&b);
	b_long(&b, "sun.os.hrt.frequency", 10000000);
	b_long(&b, "sun.rt.safepointTime", 123);
	b_long(&b, "sun.rt.safepointSyncTime", 2);
	b_long(&b, "sun.rt.safepoints", 1);
	pd = perfdata_open_file(b_write(&b, b.len), why, sizeof(why));
	assert_non_null(pd);
	assert_int_equal(perfdata_safepoints(pd, &sp), 0);
	assert_int_equal(sp.time_ns, 12500);
	perfdata_free(pd);

	/* a corrupt file's negative and huge tick counts: 0 and saturated, not
	 * an undefined conversion (fuzz_perfdata found it) */
	b_init(&b);
	b_long(&b, "sun.os.hrt.frequency", 1);
	b_long(&b, "sun.rt.safepointTime", INT64_MAX);
	b_long(&b, "sun.rt.safepointSyncTime", -5);
	b_long(&b, "sun.rt.safepoints", 1);
	pd = perfdata_open_file(b_write(&b, b.len), why, sizeof(why));
	assert_non_null(pd);
	assert_int_equal(perfdata_safepoints(pd, &sp), 0);
	assert_int_equal(sp.sync_ns, 0);
	assert_true(sp.rest_ns == UINT64_MAX && sp.time_ns == UINT64_MAX);
	perfdata_free(pd);

	/* no sync time: half of the pause is not a pause, -ENOENT */
	b_init(&b);
	b_long(&b, "sun.os.hrt.frequency", 1000000000);
	b_long(&b, "sun.rt.safepointTime", 123);
	b_long(&b, "sun.rt.safepoints", 1);
	pd = perfdata_open_file(b_write(&b, b.len), why, sizeof(why));
	assert_non_null(pd);
	assert_int_equal(perfdata_safepoints(pd, &sp), -ENOENT);
	perfdata_free(pd);

	/* no safepoint counters (another JVM): -ENOENT, not a guess */
	b_init(&b);
	b_long(&b, "sun.os.hrt.frequency", 1000000000);
	pd = perfdata_open_file(b_write(&b, b.len), why, sizeof(why));
	assert_non_null(pd);
	assert_int_equal(perfdata_safepoints(pd, &sp), -ENOENT);
	perfdata_free(pd);
	unlink(b_write(&b, 0));
}

/* A file with these safepoint counters (ns ticks; sync time 10 % of the rest). */
static struct mt_perfdata *counters(int64_t count, int64_t time_ns)
{
	struct builder b;
	char why[256];

	b_init(&b);
	b_long(&b, "sun.os.hrt.frequency", 1000000000);
	b_long(&b, "sun.rt.safepoints", count);
	b_long(&b, "sun.rt.safepointSyncTime", time_ns / 10);
	b_long(&b, "sun.rt.safepointTime", time_ns);
	return perfdata_open_file(b_write(&b, b.len), why, sizeof(why));
}

static void test_window(void **state)
{
	struct mt_perfdata *pd;
	struct mt_sp_window w;
	uint64_t ns = 0;

	perfdata_window_begin(NULL, &w); /* no file: unknown, never a guess */
	assert_int_equal(perfdata_window_end(NULL, &w, &ns), -1);
	pd = counters(4, 1000);
	assert_non_null(pd);
	perfdata_window_begin(pd, &w);
	assert_int_equal(perfdata_window_end(pd, &w, &ns), 0);
	perfdata_free(pd);
	pd = counters(5, 251000);              /* one safepoint later: its time, reaching it included */
	assert_non_null(pd);
	assert_int_equal(perfdata_window_end(pd, &w, &ns), 1);
	assert_int_equal(ns, 250000 + 25000);
	perfdata_free(pd);
	pd = counters(6, 300000);              /* two: their sum, and the count says so */
	assert_non_null(pd);
	assert_int_equal(perfdata_window_end(pd, &w, &ns), 2);
	assert_int_equal(ns, 299000 + 29900);
	perfdata_free(pd);
	{
		/* counted but its time not added yet (it has not ended): waited
		 * for, then unknown - never the sync time alone */
		struct builder b;
		char why[256];
		uint64_t t0 = 0;
		struct timespec ts;

		b_init(&b);
		b_long(&b, "sun.os.hrt.frequency", 1000000000);
		b_long(&b, "sun.rt.safepoints", 5);
		b_long(&b, "sun.rt.safepointSyncTime", 100 + 7000);
		b_long(&b, "sun.rt.safepointTime", 1000);
		pd = perfdata_open_file(b_write(&b, b.len), why, sizeof(why));
		assert_non_null(pd);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		t0 = (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
		assert_int_equal(perfdata_window_end(pd, &w, &ns), -1);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		assert_true((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000 - t0 >=
			    PERFDATA_SETTLE_MS);
		perfdata_free(pd);
	}
	pd = counters(3, 900);                 /* counters went back (another JVM): unknown */
	assert_non_null(pd);
	assert_int_equal(perfdata_window_end(pd, &w, &ns), -1);
	perfdata_free(pd);
}

static void test_corrupt(void **state)
{
	struct builder b;
	char why[256], *path;

	b_init(&b);
	b_long(&b, "sun.rt.safepoints", 1);
	/* every truncation is refused with a reason, never read past the end */
	for (size_t k = 0; k < b.len; k++) {
		why[0] = '\0';
		assert_null(perfdata_open_file(b_write(&b, k), why, sizeof(why)));
		assert_true(why[0] != '\0');
	}
	b.buf[0] = 0;
	assert_null(perfdata_open_file(b_write(&b, b.len), why, sizeof(why)));
	assert_non_null(strstr(why, "magic"));
	b_init(&b);
	b_long(&b, "x", 1);
	put32(b.buf + 28, 5); /* more entries than the file holds */
	assert_null(perfdata_open_file(b_write(&b, b.len), why, sizeof(why)));
	assert_non_null(strstr(why, "out of bounds"));
	b_init(&b);
	b_long(&b, "x", 1);
	put32(b.buf + 32 + 4, 4000); /* name offset outside the entry */
	assert_null(perfdata_open_file(b_write(&b, b.len), why, sizeof(why)));
	b_init(&b);
	b.buf[5] = 1; /* version 1 */
	assert_null(perfdata_open_file(b_write(&b, b.len), why, sizeof(why)));
	assert_non_null(strstr(why, "version"));
	path = b_write(&b, 0);
	unlink(path);
	assert_null(perfdata_open_file(path, why, sizeof(why)));
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counters),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_corrupt),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
