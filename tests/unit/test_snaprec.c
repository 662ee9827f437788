// SPDX-License-Identifier: GPL-2.0
/* test_snaprec - the agent's heap records into a snapshot (user/heap/snaprec.c):
 * every kind, malformed records refused, unknown kinds skipped, the heap
 * frames' sizes, and the AGES record's ranges. */
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

#include "heap/snaprec.h"
#include "heap/snapshot.h"
#include "snap_fixture.h"

static char recs[8192];

static void load_fixture(struct mt_snapshot *s, bool keep_raw)
{
	char why[128];
	size_t n = fx_records(recs, sizeof(recs));

	snapshot_init(s);
	assert_int_equal(snaprec_add(s, recs, n, keep_raw, why, sizeof(why)), 0);
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
	assert_int_equal(snaprec_add(&s, buf, off, false, why, sizeof(why)), -EBADMSG);
	snapshot_free(&s);
	/* a STRING whose length runs past its body */
	off = 0;
	memset(buf, 0, sizeof(buf));
	mt_ap_rec_put(buf, sizeof(buf), &off, MT_AP_HREC_STRING, 100, "12345678abc", 12);
	assert_int_equal(snaprec_add(&s, buf, off, false, why, sizeof(why)), -EBADMSG);
	snapshot_free(&s);
	/* a CLASS with more fields than bytes */
	{
		struct mt_ap_hclass h = { .id = 1, .nfields = 3 };
		char body[64] = { 0 };

		memcpy(body, &h, sizeof(h));
		off = 0;
		mt_ap_rec_put(buf, sizeof(buf), &off, MT_AP_HREC_CLASS, 3, body, sizeof(h) + 2);
		assert_int_equal(snaprec_add(&s, buf, off, false, why, sizeof(why)),
				 -EBADMSG);
		snapshot_free(&s);
	}
	/* a record length that is not a multiple of 8 */
	memset(buf, 0, sizeof(buf));
	buf[0] = MT_AP_HREC_OBJS;
	buf[2] = 13;
	assert_int_equal(snaprec_add(&s, buf, 16, false, why, sizeof(why)), -EBADMSG);
	snapshot_free(&s);
	/* unknown kinds are skipped */
	off = 0;
	mt_ap_rec_put(buf, sizeof(buf), &off, 200, 0, "x", 1);
	assert_int_equal(snaprec_add(&s, buf, off, false, why, sizeof(why)), 0);
	snapshot_free(&s);
}

/* keep_raw: the records as received, call after call (for saving) */
static void test_keep_raw(void **state)
{
	struct mt_snapshot s;
	char why[128];
	size_t n;

	load_fixture(&s, false);
	assert_int_equal(s.raw_len, 0);
	snapshot_free(&s);
	load_fixture(&s, true);
	n = s.raw_len;
	assert_memory_equal(s.raw, recs, n);
	assert_int_equal(snaprec_add(&s, recs, n, true, why, sizeof(why)), 0);
	assert_int_equal(s.raw_len, 2 * n);
	assert_memory_equal(s.raw + n, recs, n);
	assert_int_equal(s.nobjs, 20);
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
	assert_int_equal(snaprec_ages(&s, body, n, 3, why, sizeof(why)), 0);
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
		assert_int_equal(snaprec_ages(&s, body, n, 3, why, sizeof(why)), -EBADMSG);
		assert_string_equal(why, "malformed age record");
	}
	n = ages_body(body, 5, 3, w);
	assert_int_equal(snaprec_ages(&s, body, n, 2, why, sizeof(why)), -EBADMSG); /* arg */
	assert_int_equal(snaprec_ages(&s, body, n - 1, 3, why, sizeof(why)), -EBADMSG);
	assert_int_equal(snaprec_ages(&s, body, 8, 0, why, sizeof(why)), -EBADMSG);
	n = ages_body(body, 0, 0, w);
	assert_int_equal(snaprec_ages(&s, body, n, 0, why, sizeof(why)), -EBADMSG); /* no walk */
	assert_int_equal(snapshot_age(&s, 11), 2);
	snapshot_free(&s);
}

/* FREEZE: how a frozen walk went, kept as sent; frozen only with status 0
 * and a copy; a short body refused. */
static void test_freeze_record(void **state)
{
	struct mt_ap_hfreeze fr = { .status = 0, .child_pid = 77, .fork_ns = 2000000,
				    .walk_ns = 59000000, .unshared_bytes = 1 << 20 };
	char buf[512], why[128];
	size_t off = 0;
	struct mt_snapshot s;

	snapshot_init(&s);
	memset(fr.why, 'x', sizeof(fr.why)); /* unterminated: cut at the end */
	assert_true(mt_ap_rec_put(buf, sizeof(buf), &off, MT_AP_HREC_FREEZE, 0, &fr, sizeof(fr)) > 0);
	assert_int_equal(snaprec_add(&s, buf, off, false, why, sizeof(why)), 0);
	assert_true(s.has_freeze && s.frozen);
	assert_int_equal(s.freeze.child_pid, 77);
	assert_true(s.freeze.walk_ns == 59000000);
	assert_int_equal(strlen(s.freeze.why), sizeof(s.freeze.why) - 1);
	snapshot_free(&s);
	/* a fallback: the walk was done in a pause */
	snapshot_init(&s);
	fr.status = -ETIMEDOUT;
	off = 0;
	mt_ap_rec_put(buf, sizeof(buf), &off, MT_AP_HREC_FREEZE, 0, &fr, sizeof(fr));
	assert_int_equal(snaprec_add(&s, buf, off, false, why, sizeof(why)), 0);
	assert_true(s.has_freeze && !s.frozen);
	snapshot_free(&s);
	/* an older agent's record, without fork_at_ns */
	snapshot_init(&s);
	off = 0;
	fr.status = 0;
	fr.fork_at_ns = 123;
	mt_ap_rec_put(buf, sizeof(buf), &off, MT_AP_HREC_FREEZE, 0, &fr,
		      offsetof(struct mt_ap_hfreeze, fork_at_ns));
	assert_int_equal(snaprec_add(&s, buf, off, false, why, sizeof(why)), 0);
	assert_true(s.frozen && s.freeze.child_pid == 77 && s.freeze.fork_at_ns == 0);
	snapshot_free(&s);
	/* cut short */
	snapshot_init(&s);
	off = 0;
	mt_ap_rec_put(buf, sizeof(buf), &off, MT_AP_HREC_FREEZE, 0, &fr,
		      offsetof(struct mt_ap_hfreeze, fork_at_ns) - 8);
	assert_int_equal(snaprec_add(&s, buf, off, false, why, sizeof(why)), -EBADMSG);
	snapshot_free(&s);
}

/* A CLASS record with the extension: interfaces, reference statics, kind. */
static size_t class_ext(char *buf, size_t cap, uint64_t id, uint32_t flags, uint32_t nifaces,
			const uint64_t *ifaces, const char *static_name, uint32_t claim_ifaces)
{
	char body[512];
	struct mt_ap_hclass h = { .id = id, .super = 1, .nfields = 1, .flags = flags };
	struct mt_ap_hclass_ext x = { .nifaces = claim_ifaces, .nstatics = static_name ? 1 : 0 };
	size_t b = 0, off = 0;
	int32_t idx = 0;

	memcpy(body + b, &h, sizeof(h));
	b += sizeof(h);
	memcpy(body + b, "Lp/C;", 6);
	b += 6;
	memcpy(body + b, &idx, 4);
	body[b + 4] = 'I';
	memcpy(body + b + 5, "k", 2);
	b += 7;
	memcpy(body + b, &x, sizeof(x));
	b += sizeof(x);
	if (nifaces)
		memcpy(body + b, ifaces, nifaces * 8);
	b += nifaces * 8;
	if (static_name) {
		idx = 3;
		memcpy(body + b, &idx, 4);
		body[b + 4] = 'L';
		memcpy(body + b + 5, static_name, strlen(static_name) + 1);
		b += 5 + strlen(static_name) + 1;
	}
	mt_ap_rec_put(buf, cap, &off, MT_AP_HREC_CLASS, 1, body, b);
	return off;
}

/* MT_AP_HCLASS_EXT: interfaces, statics, kind; SAMPLED records; an older
 * agent's class (no flag): kind unknown. */
static void test_class_ext_and_sampled(void **state)
{
	static const uint64_t ifs[2] = { 7, 8 };
	const struct mt_ap_hsampled sm[2] = { { 20, 5 }, { 21, 9 } };
	struct mt_snapshot s;
	char buf[1024], why[128];
	size_t n;

	snapshot_init(&s);
	n = class_ext(buf, sizeof(buf), 2, MT_AP_HCLASS_EXT, 2, ifs, "CACHE", 2);
	assert_int_equal(snaprec_add(&s, buf, n, false, why, sizeof(why)), 0);
	n = class_ext(buf, sizeof(buf), 3, MT_AP_HCLASS_EXT | MT_AP_HCLASS_IFACE, 0, NULL, NULL, 0);
	assert_int_equal(snaprec_add(&s, buf, n, false, why, sizeof(why)), 0);
	n = class_ext(buf, sizeof(buf), 4, MT_AP_HCLASS_EXT | MT_AP_HCLASS_NOIFACES, 0, NULL, NULL, 0);
	assert_int_equal(snaprec_add(&s, buf, n, false, why, sizeof(why)), 0);
	n = class_ext(buf, sizeof(buf), 5, 0, 2, ifs, "X", 2); /* no flag: the rest ignored */
	assert_int_equal(snaprec_add(&s, buf, n, false, why, sizeof(why)), 0);
	n = 0;
	mt_ap_rec_put(buf, sizeof(buf), &n, MT_AP_HREC_SAMPLED, 2, sm, sizeof(sm));
	assert_int_equal(snaprec_add(&s, buf, n, false, why, sizeof(why)), 0);
	assert_int_equal(s.nclasses, 4);
	assert_int_equal(s.classes[0].kind, MT_SNAP_CLASS);
	assert_int_equal(s.classes[0].nifaces, 2);
	assert_int_equal(s.classes[0].ifaces[1], 8);
	assert_int_equal(s.classes[0].nstatics, 1);
	assert_string_equal(s.classes[0].statics[0].name, "CACHE");
	assert_int_equal(s.classes[0].statics[0].index, 3);
	assert_int_equal(s.classes[1].kind, MT_SNAP_INTERFACE);
	assert_int_equal(s.classes[2].kind, MT_SNAP_CLASS);
	assert_true(s.classes[2].ifaces_unknown);
	assert_int_equal(s.classes[3].kind, MT_SNAP_UNKNOWN);
	assert_int_equal(s.classes[3].nifaces, 0);
	assert_int_equal(s.nsampled, 2);
	assert_int_equal(s.sampled[1].id, 21);
	assert_int_equal(s.sampled[1].sample, 9);
	snapshot_free(&s);
	/* more interfaces claimed than the record holds */
	snapshot_init(&s);
	n = class_ext(buf, sizeof(buf), 2, MT_AP_HCLASS_EXT, 1, ifs, NULL, 1000);
	assert_int_equal(snaprec_add(&s, buf, n, false, why, sizeof(why)), -EBADMSG);
	snapshot_free(&s);
	/* a SAMPLED record shorter than its count */
	snapshot_init(&s);
	n = 0;
	mt_ap_rec_put(buf, sizeof(buf), &n, MT_AP_HREC_SAMPLED, 3, sm, sizeof(sm));
	assert_int_equal(snaprec_add(&s, buf, n, false, why, sizeof(why)), -EBADMSG);
	snapshot_free(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_class_ext_and_sampled),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_malformed_records),
		cmocka_unit_test(test_keep_raw),
		cmocka_unit_test(test_protocol),
		cmocka_unit_test(test_age_ranges),
		cmocka_unit_test(test_freeze_record),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
