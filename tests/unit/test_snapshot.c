// SPDX-License-Identifier: GPL-2.0
/* test_snapshot - heap records, the snapshot file format (round trip, every
 * truncation and corruption refused), the dsl_heap built from a snapshot and
 * the seed's programs run on it. */
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

#include "heap/snapshot.h"
#include "snap_fixture.h"
#include "lib/util.h"

static char recs[8192];

static void load_fixture(struct mt_snapshot *s, bool keep_raw)
{
	char why[128];
	size_t n = fx_records(recs, sizeof(recs));

	snapshot_init(s);
	assert_int_equal(snapshot_add_records(s, recs, n, keep_raw, why, sizeof(why)), 0);
}

static void test_records(void **state)
{
	struct mt_snapshot s;

	load_fixture(&s, false);
	assert_int_equal(s.nclasses, 4);
	assert_int_equal(s.nobjs, 10);
	assert_int_equal(s.nrefs, 6);
	assert_int_equal(s.nroots, 2);
	assert_int_equal(s.nprims, 2);
	assert_int_equal(s.nstrings, 3);
	assert_int_equal(s.nthreads, 1);
	assert_string_equal(s.classes[1].sig, "Lspec/jbb/Order;");
	assert_int_equal(s.classes[1].nfields, 3);
	assert_string_equal(s.classes[1].fields[1].name, "name");
	assert_int_equal(s.classes[1].fields[1].type, 'T');
	assert_string_equal(s.threads[0].name, "main");
	assert_string_equal(s.strings[0].s, "order-7");
	snapshot_free(&s);
}

static void test_malformed_records(void **state)
{
	struct mt_snapshot s;
	char buf[256], why[128];
	struct mt_ap_hobj o = { 1, 1, 16, -1, 0 };
	size_t off = 0;

	/* an OBJS record claiming more entries than its body holds */
	snapshot_init(&s);
	mt_ap_rec_put(buf, sizeof(buf), &off, MT_AP_HREC_OBJS, 2, &o, sizeof(o));
	assert_int_equal(snapshot_add_records(&s, buf, off, false, why, sizeof(why)), -EBADMSG);
	snapshot_free(&s);
	/* a STRING whose length runs past its body */
	off = 0;
	memset(buf, 0, sizeof(buf));
	mt_ap_rec_put(buf, sizeof(buf), &off, MT_AP_HREC_STRING, 100, "12345678abc", 12);
	assert_int_equal(snapshot_add_records(&s, buf, off, false, why, sizeof(why)), -EBADMSG);
	snapshot_free(&s);
	/* a CLASS with more fields than bytes */
	{
		struct mt_ap_hclass h = { .id = 1, .nfields = 3 };
		char body[64] = { 0 };

		memcpy(body, &h, sizeof(h));
		off = 0;
		mt_ap_rec_put(buf, sizeof(buf), &off, MT_AP_HREC_CLASS, 3, body, sizeof(h) + 2);
		assert_int_equal(snapshot_add_records(&s, buf, off, false, why, sizeof(why)),
				 -EBADMSG);
		snapshot_free(&s);
	}
	/* a record length that is not a multiple of 8 */
	memset(buf, 0, sizeof(buf));
	buf[0] = MT_AP_HREC_OBJS;
	buf[2] = 13;
	assert_int_equal(snapshot_add_records(&s, buf, 16, false, why, sizeof(why)), -EBADMSG);
	snapshot_free(&s);
	/* unknown kinds are skipped */
	off = 0;
	mt_ap_rec_put(buf, sizeof(buf), &off, 200, 0, "x", 1);
	assert_int_equal(snapshot_add_records(&s, buf, off, false, why, sizeof(why)), 0);
	snapshot_free(&s);
}

/* Save the fixture to a file and read the bytes back. */
static char *saved(size_t *n)
{
	struct mt_snapshot s;
	char path[] = "/tmp/mt-test-snap.XXXXXX";
	int fd = mkstemp(path);
	char *buf;
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	load_fixture(&s, true);
	s.info.objects = 10;
	s.info.pause_ns = 1234;
	s.pid = 42;
	assert_int_equal(snapshot_write(&s, path), 0);
	snapshot_free(&s);
	f = fopen(path, "rb");
	assert_non_null(f);
	buf = malloc(1 << 16);
	*n = fread(buf, 1, 1 << 16, f);
	fclose(f);
	unlink(path);
	return buf;
}

static void test_file_roundtrip(void **state)
{
	struct mt_snapshot s;
	char why[160];
	size_t n;
	char *buf = saved(&n);

	assert_memory_equal(buf, MT_SNAP_MAGIC, 8);
	assert_int_equal(snapshot_read_mem(buf, n, &s, why, sizeof(why)), 0);
	assert_int_equal(s.nobjs, 10);
	assert_int_equal(s.nclasses, 4);
	assert_int_equal(s.info.pause_ns, 1234);
	assert_int_equal(s.pid, 42);
	assert_string_equal(s.source, "snapshot");
	snapshot_free(&s);
	free(buf);
}

static void test_file_corrupt(void **state)
{
	struct mt_snapshot s;
	char why[160];
	size_t n;
	char *buf = saved(&n);

	/* every truncation is refused */
	for (size_t k = 0; k < n; k++) {
		assert_int_equal(snapshot_read_mem(buf, k, &s, why, sizeof(why)), -EINVAL);
		snapshot_free(&s);
	}
	/* every flipped byte is refused: magic, version, trailer or checksum */
	for (size_t k = 0; k < n; k++) {
		if (k >= 12 && k < 32) /* flags, time, pid: not checked */
			continue;
		buf[k] ^= 0x41;
		assert_int_equal(snapshot_read_mem(buf, n, &s, why, sizeof(why)), -EINVAL);
		snapshot_free(&s);
		buf[k] ^= 0x41;
	}
	buf[8] = 2;
	assert_int_equal(snapshot_read_mem(buf, n, &s, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "version 2"));
	free(buf);
}

/* Run program src on the fixture; the JSON result into out. */
static void run(const struct mt_snapshot *s, const char *src, char *out, size_t n)
{
	struct mt_heapview hv;
	struct dsl_schema schema;
	struct dsl_program *p = NULL;
	struct dsl_diags *d = dsl_diags_new();
	char why[128];
	FILE *f = fmemopen(out, n, "w");
	int err;

	assert_int_equal(snapshot_heap(s, NULL, &hv, why, sizeof(why)), 0);
	assert_int_equal(dsl_heap_check(&hv.heap, d), 0);
	dsl_heap_schema(&hv.heap, &schema);
	err = dsl_compile(src, strlen(src), "t.mq", &schema, &p, d);
	if (err)
		dsl_diags_render(d, stderr);
	assert_int_equal(err, 0);
	assert_int_equal(dsl_run(p, &hv.heap, f, d), 0);
	fclose(f);
	dsl_program_free(p);
	dsl_diags_free(d);
	heapview_free(&hv);
}

static void test_heap_programs(void **state)
{
	struct mt_snapshot s;
	char out[512];

	load_fixture(&s, false);
	run(&s, "set_type all:\n roots <- objects.filter([it | it is Order])\n"
		" membership <- false\n on_inclusion <- [ fault <- fault or THIS.field = 4242 ]\n"
		" fault : bool <- false\ninstances_for all have_names = \"all-jvm\"\n",
	    out, sizeof(out));
	assert_string_equal(out, "{\"all\":{\"all-jvm\":{\"fault\":true}}}\n");
	/* strings, and a reference field's value */
	run(&s, "set_type s:\n roots <- objects.filter([it | it is Order and it.name = \"order-7\""
		" and it.next.field = 7])\n membership <- false\n on_inclusion <- [ n <- n + 1 ]\n"
		" n : int <- 0\ninstances_for s have_names = \"x\"\n", out, sizeof(out));
	assert_string_equal(out, "{\"s\":{\"x\":{\"n\":1}}}\n");
	/* reachability from the threads: thread 14 and its name 15 */
	run(&s, "set_type all:\n roots <- threads\n membership <- THIS in Unassigned and "
		"REFERRER in ENTITY\n on_inclusion <- [ n <- n + 1 ]\n n : int <- 0\n"
		"instances_for all have_names = \"all\"\n", out, sizeof(out));
	assert_string_equal(out, "{\"all\":{\"all\":{\"n\":2}}}\n");
	snapshot_free(&s);
}

static void test_projection(void **state)
{
	struct mt_snapshot s;
	struct mt_heapview hv;
	const char *fields[] = { "field" };
	struct dsl_needs needs = { .fields = fields, .nfields = 1 };
	char why[128];

	load_fixture(&s, false);
	assert_int_equal(snapshot_heap(&s, &needs, &hv, why, sizeof(why)), 0);
	/* Orders carry values, Strings and Threads (no field named `field`) do not */
	assert_non_null(hv.heap.objects[4].values);
	assert_null(hv.heap.objects[8].values);
	assert_int_equal(hv.value_objects, 2);
	assert_int_equal(hv.heap.objects[4].values[0].kind, DSL_HV_INT);
	assert_int_equal(hv.heap.objects[4].values[0].u.i, 4242);
	heapview_free(&hv);
	snapshot_free(&s);
}

/* The heap frames of agent_proto.h: sizes checked like every other type. */
static void test_protocol(void **state)
{
	struct mt_ap_hdr h = { .magic = MT_AP_MAGIC, .version = MT_AP_VERSION };
	char frame[MT_AP_HDR_SIZE + sizeof(struct mt_ap_heap_done)];
	struct mt_ap_heap_done done = { .objects = 7 }, got;
	const void *payload;

	h.type = MT_AP_HEAP_DONE;
	h.len = sizeof(struct mt_ap_heap_done);
	assert_int_equal(mt_ap_check_hdr(&h), 0);
	h.len = 8;
	assert_int_equal(mt_ap_check_hdr(&h), -EPROTO);
	h.type = MT_AP_HEAP_REQUEST;
	h.len = 100;
	assert_int_equal(mt_ap_check_hdr(&h), 0);
	h.type = MT_AP_HEAP_DATA;
	h.len = MT_AP_MAX_PAYLOAD + 1;
	assert_int_equal(mt_ap_check_hdr(&h), -EMSGSIZE);
	h.type = MT_AP_TYPE_MAX + 1;
	h.len = 0;
	assert_int_equal(mt_ap_check_hdr(&h), -ENOMSG);
	assert_int_equal(mt_ap_encode(frame, sizeof(frame), MT_AP_HEAP_DONE, 3, &done, sizeof(done)),
			 sizeof(frame));
	assert_int_equal(mt_ap_decode(frame, sizeof(frame), &h, &payload), sizeof(frame));
	memcpy(&got, payload, sizeof(got));
	assert_int_equal(got.objects, 7);
	assert_int_equal(h.seq, 3);
}

/* An AGES body: header (gcs, n) and n (first_id, gcs) pairs. */
static size_t ages_body(char *buf, uint64_t gcs, uint32_t n, const uint64_t (*w)[2])
{
	struct mt_ap_hages h = { .gcs = gcs, .nwalks = n };

	memcpy(buf, &h, sizeof(h));
	for (uint32_t i = 0; i < n; i++) {
		struct mt_ap_hwalk x = { .first_id = w[i][0], .gcs = w[i][1] };

		memcpy(buf + sizeof(h) + i * sizeof(x), &x, sizeof(x));
	}
	return sizeof(h) + n * sizeof(struct mt_ap_hwalk);
}

/* id ranges -> ages: walk 1 handed out 1..10 at 0 GCs, walk 2 11..13 at 3,
 * walk 3 14.. at 4; now (walk 4, no new ids) 5 GCs. */
static void test_age_ranges(void **state)
{
	static const uint64_t w[][2] = { { 1, 0 }, { 11, 3 }, { 14, 4 } };
	static const uint64_t bad[][3][2] = {
		{ { 1, 0 }, { 11, 3 }, { 11, 4 } },  /* first ids not ascending */
		{ { 1, 0 }, { 11, 3 }, { 9, 4 } },
		{ { 1, 0 }, { 11, 3 }, { 14, 2 } },  /* GC counts decreasing */
		{ { 1, 0 }, { 11, 3 }, { 14, 6 } },  /* above the walk's own count */
	};
	char body[256], why[128];
	struct mt_snapshot s;
	size_t n;

	snapshot_init(&s);
	assert_int_equal(snapshot_age(&s, 5), 0); /* no ages: 0 */
	n = ages_body(body, 5, 3, w);
	assert_int_equal(snapshot_ages_set(&s, body, n, 3, why, sizeof(why)), 0);
	assert_true(s.has_ages);
	assert_int_equal(snapshot_age(&s, 1), 5);
	assert_int_equal(snapshot_age(&s, 10), 5);
	assert_int_equal(snapshot_age(&s, 11), 2);
	assert_int_equal(snapshot_age(&s, 13), 2);
	assert_int_equal(snapshot_age(&s, 14), 1);
	assert_int_equal(snapshot_age(&s, 1000), 1);
	/* malformed: refused, the earlier ages stay */
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = ages_body(body, 5, 3, bad[i]);
		assert_int_equal(snapshot_ages_set(&s, body, n, 3, why, sizeof(why)), -EBADMSG);
		assert_string_equal(why, "malformed age record");
	}
	n = ages_body(body, 5, 3, w);
	assert_int_equal(snapshot_ages_set(&s, body, n, 2, why, sizeof(why)), -EBADMSG); /* arg */
	assert_int_equal(snapshot_ages_set(&s, body, n - 1, 3, why, sizeof(why)), -EBADMSG);
	assert_int_equal(snapshot_ages_set(&s, body, 8, 0, why, sizeof(why)), -EBADMSG);
	n = ages_body(body, 0, 0, w);
	assert_int_equal(snapshot_ages_set(&s, body, n, 0, why, sizeof(why)), -EBADMSG); /* no walk */
	assert_int_equal(snapshot_age(&s, 11), 2);
	snapshot_free(&s);
}

/* The fixture with an AGES record (objects 1..4 and 10..11 first seen at 0
 * GCs, 12.. at 2; now 3): `age` in programs, through a file, and an error
 * that says why when the snapshot has none. */
static void test_heap_ages(void **state)
{
	static const uint64_t w[][2] = { { 1, 0 }, { 12, 2 } };
	char body[128], why[256], out[512], *buf;
	struct mt_snapshot s, t;
	struct mt_heapview hv;
	struct dsl_schema schema;
	struct dsl_program *p = NULL;
	struct dsl_diags *d;
	size_t off, n, len;
	const char *prog = "set_type a:\n roots <- objects.filter([it | it is Order or it is String])\n"
			   " membership <- false\n on_inclusion <- [ n <- n + 1  sum <- sum + THIS.age ]\n"
			   " n : int <- 0\n sum : int <- 0\n"
			   " old : int <- objects.filter([it | it.age = 3]).size\n"
			   "instances_for a have_names = \"x\"\n";

	n = fx_records(recs, sizeof(recs));
	off = n;
	mt_ap_rec_put(recs, sizeof(recs), &off, MT_AP_HREC_AGES, 2, body, ages_body(body, 3, 2, w));
	snapshot_init(&s);
	assert_int_equal(snapshot_add_records(&s, recs, off, true, why, sizeof(why)), 0);
	assert_true(s.has_ages);
	/* Order 10, 11 (age 3), String 12, 13, 15 (age 1) */
	run(&s, prog, out, sizeof(out));
	assert_string_equal(out, "{\"a\":{\"x\":{\"n\":5,\"sum\":9,\"old\":6}}}\n");
	/* through a file */
	snprintf(why, sizeof(why), "/tmp/test_snapshot_ages.%d", (int)getpid());
	assert_int_equal(snapshot_write(&s, why), 0);
	buf = read_file(why, &len);
	unlink(why);
	assert_non_null(buf);
	assert_int_equal(snapshot_read_mem(buf, len, &t, why, sizeof(why)), 0);
	free(buf);
	run(&t, prog, out, sizeof(out));
	assert_string_equal(out, "{\"a\":{\"x\":{\"n\":5,\"sum\":9,\"old\":6}}}\n");
	snapshot_free(&t);
	snapshot_free(&s);
	/* no AGES record: `age` does not compile, and says why */
	load_fixture(&s, false);
	s.source = "hprof";
	d = dsl_diags_new();
	assert_int_equal(snapshot_heap(&s, NULL, &hv, why, sizeof(why)), 0);
	dsl_heap_schema(&hv.heap, &schema);
	assert_int_equal(dsl_compile(prog, strlen(prog), "t.mq", &schema, &p, d), -EINVAL);
	{
		char *msg = NULL;
		size_t ml = 0;
		FILE *f = open_memstream(&msg, &ml);

		dsl_diags_render(d, f);
		fclose(f);
		assert_non_null(strstr(msg, "t.mq:4:50: error: objects have no 'age' here: a heap dump "
					    "(.hprof) carries no GC history"));
		free(msg);
	}
	dsl_diags_free(d);
	heapview_free(&hv);
	snapshot_free(&s);
}

static void test_java_names(void **state)
{
	char b[64];

	assert_string_equal(snapshot_java_name("Ljava/lang/String;", b, sizeof(b)), "java.lang.String");
	assert_string_equal(snapshot_java_name("[I", b, sizeof(b)), "int[]");
	assert_string_equal(snapshot_java_name("[[Ljava/util/HashMap$Node;", b, sizeof(b)),
			    "java.util.HashMap$Node[][]");
	assert_string_equal(snapshot_java_name("", b, sizeof(b)), "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_malformed_records),
		cmocka_unit_test(test_file_roundtrip),
		cmocka_unit_test(test_file_corrupt),
		cmocka_unit_test(test_heap_programs),
		cmocka_unit_test(test_projection),
		cmocka_unit_test(test_protocol),
		cmocka_unit_test(test_java_names),
		cmocka_unit_test(test_age_ranges),
		cmocka_unit_test(test_heap_ages),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
