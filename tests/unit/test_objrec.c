// SPDX-License-Identifier: GPL-2.0
/* test_objrec - a recording's object-sampling lines: written through the
 * objstream tap, read back, replayed into the age and leaks analyses with the
 * same results as feeding the sample store directly (the live path). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <cmocka.h>

#include "monitor/objrec.h"
#include "sink/objreport.h"
#include "monitor/recording.h"
#include "monitor/recording_read.h"
#include "analysis/samples.h"
#include "lib/util.h"

#define T0 1000000000ull /* sampling began (ns) */
#define SEC 1000000000ull

static char path[64];

static int setup(void **state)
{
	int fd;

	snprintf(path, sizeof(path), "/tmp/test_objrec.XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int teardown(void **state)
{
	unlink(path);
	return 0;
}

/* ---- a synthetic workload, written as `record` writes it ---- */

struct wr {
	struct recording_writer *w;
	struct objrec_writer *ow;
	struct objstream_tap tap;
	uint64_t next_name;
};

static void ev(struct wr *w, uint16_t kind, uint64_t ts, uint64_t id, uint64_t ref,
	       uint64_t name, uint64_t size, const char *text)
{
	struct mt_ev e = { .ts = ts, .kind = kind, .id = id, .ref = ref, .name = name };

	e.v[0] = size;
	assert_int_equal(recording_write(w->w, &e, text), 0);
}

/* A class type @key named @name. */
static void type(struct wr *w, uint64_t key, const char *name)
{
	uint64_t n = ++w->next_name;

	ev(w, MT_EV_NAME, 0, n, 0, 0, 0, name);
	ev(w, MT_EV_TYPE_CREATE, T0, key, 0, n, 0, NULL);
}

/* A sample @id of class type @key allocated at App.<method @site>:@site. */
static void sample(struct wr *w, uint64_t id, uint64_t key, uint32_t site, uint64_t ts,
		   bool reported)
{
	struct mt_ap_frame f[2] = { { .method = site, .line = (int32_t)site },
				    { .method = 9, .line = -1 } };
	struct mt_ap_alloc a = { .id = id, .size = 64, .ts_ns = ts, .depth = 2 };

	w->tap.alloc(w->tap.ctx, &a, f);
	if (reported)
		ev(w, MT_EV_OBJ_CREATE, ts, id, key, 0, 64, NULL);
}

static void gc(struct wr *w, uint64_t no, uint64_t next_id, uint64_t ts)
{
	struct mt_ap_gc g = { .gc_no = no, .next_id = next_id, .end_ns = ts };

	w->tap.gc(w->tap.ctx, &g);
}

/*
 * Site 1 leaks (keeps every object), site 2 is a cache filled once, site 3
 * churns (each object dies after one GC); 40 GCs, one every 0.5 s, the
 * window 20 s (the middle after GC 20). Also a monitor (an object of size
 * 0), a reclaim of an id that is no sample, and samples hidden by a filter
 * (their ostack line is written, their obj_create not). Fed to @m and @l
 * directly as well (the live path), with the middle marked at GC 20.
 */
static void write_workload(bool objects, struct mt_samples *m, struct mt_leaks *l)
{
	struct recording_header h = { .pid = 42, .start_mono_ns = T0 };
	struct mt_ap_sample_started st = { .max_depth = 16, .interval = 1024, .first_id = 1,
					   .start_ns = T0 };
	struct mt_ap_sample_stats stats = { .sampled = 0 };
	struct mt_site_volumes vol = { .seconds = 20, .keys = 3 };
	struct recording_trailer tr = { .present = true, .ts = T0 + 20 * SEC, .duration_s = 20 };
	struct mt_ap_frame f[2] = { { 0 }, { .method = 9, .line = -1 } };
	struct mt_ap_alloc a = { .size = 64, .depth = 2 };
	struct wr w = { 0 };
	uint64_t id = 1;

	w.w = recording_create(path, &h);
	assert_non_null(w.w);
	type(&w, 7, "X");
	type(&w, 8, "java.lang.Object");
	ev(&w, MT_EV_OBJ_CREATE, T0, 0x7000, 8, 0, 0, NULL); /* a monitor: no size */
	if (objects) {
		w.ow = objrec_writer_new(w.w);
		assert_non_null(w.ow);
		objrec_writer_tap(w.ow, &w.tap);
		w.tap.started(w.tap.ctx, &st);
		w.tap.method(w.tap.ctx, 1, "App.leak");
		w.tap.method(w.tap.ctx, 2, "App.cache");
		w.tap.method(w.tap.ctx, 3, "App.churn");
		w.tap.method(w.tap.ctx, 9, "App.main");
	}
	assert_int_equal(samples_init(m, 1, 1024, 0), 0);
	samples_name(m, MT_AP_REC_CLASS, 1, "X");
	samples_name(m, MT_AP_REC_METHOD, 1, "App.leak");
	samples_name(m, MT_AP_REC_METHOD, 2, "App.cache");
	samples_name(m, MT_AP_REC_METHOD, 3, "App.churn");
	samples_name(m, MT_AP_REC_METHOD, 9, "App.main");
	m->on_alloc = leaks_on_alloc;
	m->on_alloc_ctx = l;
	leaks_init(l, 2);
#define SAMPLE(site_, ts_, rep_)                                                  \
	do {                                                                      \
		if (objects)                                                      \
			sample(&w, id, 7, site_, ts_, rep_);                      \
		else                                                              \
			ev(&w, MT_EV_OBJ_CREATE, ts_, id, 7, 0, 64, NULL);        \
		if (rep_) {                                                       \
			a.id = id;                                                \
			a.ts_ns = ts_;                                            \
			f[0] = (struct mt_ap_frame){ site_, (int32_t)(site_) };   \
			assert_int_equal(samples_alloc(m, 1, &a, f), 0);          \
		}                                                                 \
		id++;                                                             \
	} while (0)
	for (int i = 0; i < 200; i++)
		SAMPLE(2, T0 + 1, true);
	SAMPLE(2, T0 + 1, false); /* hidden by a filter: never counts */
	for (int g = 1; g <= 40; g++) {
		uint64_t ts = T0 + (uint64_t)g * SEC / 2, churn0 = id;
		struct mt_ap_gc ag = { .gc_no = (uint64_t)g, .end_ns = ts };

		for (int i = 0; i < 5; i++)
			SAMPLE(1, ts - 1000, true);
		for (int i = 0; i < 20; i++)
			SAMPLE(3, ts - 1000, true);
		if (g == 20) /* the first line at the middle (10 s) is this GC */
			assert_int_equal(leaks_mark_mid(l, m, 10.0), 0);
		if (objects)
			gc(&w, (uint64_t)g, id, ts);
		ag.next_id = id;
		samples_gc(m, &ag);
		for (uint64_t c = churn0 + 5; c < id; c++) {
			ev(&w, MT_EV_OBJ_RECLAIM, ts + 1, c, 0, 0, 0, NULL);
			samples_free_id(m, c);
		}
	}
	ev(&w, MT_EV_OBJ_RECLAIM, T0 + 20 * SEC - 1, 0x7000, 0, 0, 0, NULL); /* the monitor */
	if (objects) {
		stats.sampled = id - 1;
		stats.gcs = 40;
		w.tap.stats(w.tap.ctx, &stats);
		/* what the samples stand for: 1056 bytes each */
		sitevol_add(&vol, "App.leak", 5 * 40 * 1056, 4);
		sitevol_add(&vol, "App.churn", 20 * 40 * 1056, 16);
		vol.all_bytes = 25 * 40 * 1056;
		assert_int_equal(objrec_writer_volumes(w.ow, &vol), 0);
		sitevol_free(&vol);
		assert_int_equal(objrec_writer_err(w.ow), 0);
		objrec_writer_free(w.ow);
	}
#undef SAMPLE
	assert_int_equal(recording_close(w.w, &tr), 0);
}

/* ---- reading ---- */

struct seen {
	int kinds[REC_SIDE_SITEVOLS + 1];
	struct recording_side stack2;  /* the second stack line */
	char method1[64];
	uint64_t first_id, interval, sampled;
	double sec;
};

static void on_side(void *ctx, const struct recording_side *s)
{
	struct seen *sn = ctx;

	sn->kinds[s->kind]++;
	if (s->kind == REC_SIDE_STACK && s->id == 2)
		sn->stack2 = *s;
	if (s->kind == REC_SIDE_METHOD && s->id == 1)
		snprintf(sn->method1, sizeof(sn->method1), "%s", s->s);
	if (s->kind == REC_SIDE_OSESSION) {
		sn->first_id = s->v[0];
		sn->interval = s->v[1];
	}
	if (s->kind == REC_SIDE_OSTATS)
		sn->sampled = s->v[0];
	if (s->kind == REC_SIDE_SITEVOLS)
		sn->sec = s->sec;
}

static void test_lines_roundtrip(void **state)
{
	struct mt_samples m;
	struct mt_leaks l;
	struct recording_header h;
	struct recording_reader *r;
	struct seen sn = { 0 };
	uint64_t line, events = 0, reclaims = 0;
	const char *text;
	struct mt_ev e;
	int rc;

	write_workload(true, &m, &l);
	samples_free(&m);
	leaks_free(&l);
	r = recording_open(path, &h);
	assert_non_null(r);
	assert_int_equal(h.pid, 42);
	recording_on_side(r, on_side, &sn);
	while ((rc = recording_next(r, &e, &text, &line)) > 0) {
		events++;
		assert_true(e.kind != MT_EV_NONE);
		reclaims += e.kind == MT_EV_OBJ_RECLAIM;
	}
	assert_int_equal(rc, 0);
	assert_true(recording_trailer(r)->present);
	recording_close_read(r);
	/* 4 names + 2 types + the monitor + 1200 samples + 800 churn deaths + its end */
	assert_int_equal(events, 4 + 1 + 200 + 40 * 25 + 40 * 20 + 1);
	assert_int_equal(reclaims, 40 * 20 + 1);
	assert_int_equal(sn.kinds[REC_SIDE_OSESSION], 1);
	assert_int_equal(sn.first_id, 1);
	assert_int_equal(sn.interval, 1024);
	assert_int_equal(sn.kinds[REC_SIDE_METHOD], 4);
	assert_string_equal(sn.method1, "App.leak");
	assert_int_equal(sn.kinds[REC_SIDE_STACK], 3); /* one line per distinct stack */
	assert_int_equal(sn.stack2.nfr, 2);
	assert_int_equal(sn.stack2.fr[1].method, 9);
	assert_int_equal(sn.stack2.fr[1].line, -1); /* signed lines survive */
	assert_int_equal(sn.kinds[REC_SIDE_OSTACK], 1201); /* the hidden sample's too */
	assert_int_equal(sn.kinds[REC_SIDE_OGC], 40);
	assert_int_equal(sn.kinds[REC_SIDE_OSTATS], 1);
	assert_int_equal(sn.sampled, 1201);
	assert_int_equal(sn.kinds[REC_SIDE_SITEVOL], 2);
	assert_int_equal(sn.kinds[REC_SIDE_SITEVOLS], 1);
	assert_true(sn.sec > 19.99 && sn.sec < 20.01);

	/* without a handler, the lines are skipped: `check` sees the events only */
	r = recording_open(path, &h);
	assert_non_null(r);
	events = 0;
	while ((rc = recording_next(r, &e, &text, &line)) > 0)
		events++;
	assert_int_equal(rc, 0);
	assert_int_equal(events, 4 + 1 + 200 + 40 * 25 + 40 * 20 + 1);
	recording_close_read(r);
}

/* Replay @path into @rr (ended at the trailer's time). */
static int replay(struct objrec_replay *rr)
{
	struct recording_header h;
	struct recording_reader *r = recording_open(path, &h);
	uint64_t line;
	const char *text;
	struct mt_ev e;
	int rc;

	assert_non_null(r);
	objrec_replay_init(rr, 2, T0 + 20 * SEC);
	recording_on_side(r, objrec_replay_side, rr);
	while ((rc = recording_next(r, &e, &text, &line)) > 0)
		objrec_replay_event(rr, &e, text);
	assert_int_equal(rc, 0);
	recording_close_read(r);
	return objrec_replay_finish(rr);
}

static void test_replay_equals_live(void **state)
{
	struct objrec_replay rr;
	struct mt_samples m;
	struct mt_leaks l;
	int n, live_n;

	write_workload(true, &m, &l);
	live_n = leaks_rank(&l, &m, 20.0);
	n = replay(&rr);
	assert_int_equal(n, 1);
	assert_int_equal(live_n, 1);
	/* the same store: samples, GCs, ranges, ages */
	assert_int_equal(rr.samples, 1200);
	assert_int_equal(rr.no_stack, 0);
	assert_int_equal(rr.m.n, m.n);
	assert_int_equal(rr.m.n, 200 + 40 * 5); /* churn died after each GC */
	assert_int_equal(rr.m.gcs, 40);
	assert_int_equal(rr.m.ages.epoch, m.ages.epoch);
	assert_int_equal(rr.m.frees, 800);
	assert_int_equal(rr.m.frees_unknown, 0); /* the monitor's reclaim is no free */
	assert_true(rr.m.have_agent_stats);
	assert_int_equal(rr.m.agent.sampled, 1201);
	for (size_t k = 0; k < rr.m.n; k++) {
		const struct mt_sample *s = &rr.m.s[k];
		uint64_t age = samples_age(&rr.m, s);

		if (s->id <= 200)
			assert_int_equal(age, 40); /* the cache: before the first GC */
		else
			assert_int_equal(age, 40 - (s->id - 202) / 25); /* the leak */
		assert_string_equal(samples_site_name(&rr.m, s->site), s->id <= 200 ?
				    "App.cache:2" : "App.leak:1");
		assert_string_equal(samples_class_name(&rr.m, s->cls), "X");
	}
	/* the same leak analysis */
	assert_false(rr.mid_at_end);
	assert_int_equal(rr.l.epoch_mid, l.epoch_mid);
	assert_int_equal(rr.l.epoch_mid, 19);
	assert_string_equal(samples_site_name(&rr.m, rr.l.g[0].site), "App.leak:1");
	assert_int_equal(rr.l.g[0].added, l.g[0].added);
	assert_int_equal(rr.l.g[0].added, 105); /* old at the end (GCs 1-39) - old at mid (1-18) */
	assert_int_equal(rr.l.g[0].removed, 0);
	assert_true(rr.l.g[0].growth > 0);
	assert_true(rr.l.g[0].growth == l.g[0].growth);
	assert_true(rr.l.g[0].confidence == l.g[0].confidence);
	for (size_t k = 1; k < rr.l.n; k++)
		assert_false(rr.l.g[k].suspect);
	/* the recorded volumes: the leak keeps what it allocates */
	assert_true(rr.have_vol);
	assert_true(rr.l.g[0].alloc_bytes > 0);
	assert_string_equal(rr.l.g[0].alloc_method, "App.leak");
	assert_true(rr.l.g[0].survival > 0.5 && rr.l.g[0].survival <= 1);
	assert_true(rr.l.g[0].survival_lo <= rr.l.g[0].survival &&
		    rr.l.g[0].survival <= rr.l.g[0].survival_hi && rr.l.g[0].survival_hi <= 1);
	assert_true(objrec_replay_window(&rr) > 19.99 && objrec_replay_window(&rr) < 20.01);
	objrec_replay_free(&rr);
	objrec_replay_free(&rr); /* twice: no-op */
	leaks_free(&l);
	samples_free(&m);
}

/* A recording with object events but no object-sampling lines. */
static void test_replay_without_lines(void **state)
{
	struct objrec_replay rr;
	struct mt_samples m;
	struct mt_leaks l;

	write_workload(false, &m, &l);
	assert_int_equal(replay(&rr), -ENOENT);
	assert_false(rr.have_session);
	assert_int_equal(rr.samples, 0);
	objrec_replay_free(&rr);
	leaks_free(&l);
	samples_free(&m);
}

static void write_raw(const char *text)
{
	gzFile gz = gzopen(path, "wb");

	assert_non_null(gz);
	gzputs(gz, "{\"memtrace_recording\":1,\"pid\":1}\n");
	gzputs(gz, text);
	gzclose(gz);
}

static void test_bad_lines(void **state)
{
	static const char *const bad[] = {
		"{\"k\":\"stack\",\"id\":1,\"fr\":[1,2,3]}\n",         /* odd count */
		"{\"k\":\"ogc\",\"t\":1,\"v\":[1,2,3,4,5,6,7,8,9]}\n", /* too many values */
		"{\"k\":\"method\",\"id\":1,\"s\":\"x}\n",              /* unterminated */
		"{\"k\":\"ostack\",\"id\":1,\"st\":x}\n",
	};
	struct recording_header h;
	struct recording_reader *r;
	uint64_t line;
	const char *text;
	struct mt_ev e;

	for (size_t i = 0; i < MT_ARRAY_SIZE(bad); i++) {
		write_raw(bad[i]);
		r = recording_open(path, &h);
		assert_non_null(r);
		assert_int_equal(recording_next(r, &e, &text, &line), -EINVAL);
		assert_int_equal(line, 2);
		assert_non_null(strstr(recording_error(r), "line 2"));
		recording_close_read(r);
	}
	/* a stack of MT_AP_MAX_DEPTH frames is fine, one more is not */
	{
		char buf[1024];
		size_t n = (size_t)snprintf(buf, sizeof(buf), "{\"k\":\"stack\",\"id\":1,\"fr\":[");
		struct seen sn = { 0 };

		for (int k = 0; k < MT_AP_MAX_DEPTH; k++)
			n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%d,-1", k ? "," : "", k);
		snprintf(buf + n, sizeof(buf) - n, "]}\n");
		write_raw(buf);
		r = recording_open(path, &h);
		recording_on_side(r, on_side, &sn);
		assert_int_equal(recording_next(r, &e, &text, &line), 0);
		assert_int_equal(sn.kinds[REC_SIDE_STACK], 1);
		recording_close_read(r);
		snprintf(buf + n, sizeof(buf) - n, ",1,2]}\n");
		write_raw(buf);
		r = recording_open(path, &h);
		assert_int_equal(recording_next(r, &e, &text, &line), -EINVAL);
		recording_close_read(r);
	}
}

/* Run @fn with stdout going to a file; its text into @out. */
static void capture(void (*fn)(void *), void *arg, char *out, size_t n)
{
	char cap[64] = "/tmp/test_objrec_out.XXXXXX";
	int fd = mkstemp(cap), saved;
	FILE *f;
	size_t k;

	assert_true(fd >= 0);
	fflush(stdout);
	saved = dup(1);
	dup2(fd, 1);
	fn(arg);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	close(fd);
	f = fopen(cap, "r");
	assert_non_null(f);
	k = fread(out, 1, n - 1, f);
	out[k] = '\0';
	fclose(f);
	unlink(cap);
}

struct print_arg {
	struct objrec_replay *rr;
	struct objreport_src src;
	int suspects;
};

static void print_both(void *arg)
{
	struct print_arg *p = arg;

	assert_int_equal(objreport_age(&p->rr->m, &p->src, true, 20), 0);
	objreport_leaks(&p->rr->m, &p->rr->l, NULL, &p->src, p->suspects, 10);
}

static void test_report_output(void **state)
{
	static char out[65536];
	struct mt_samples m;
	struct mt_leaks l;
	struct objrec_replay rr;
	struct print_arg p = { .rr = &rr, .src = { .pid = 42, .elapsed = 20, .json = true,
						   .note = "a note", .no_volumes = "none here" } };

	write_workload(true, &m, &l);
	p.suspects = replay(&rr);
	capture(print_both, &p, out, sizeof(out));
	assert_non_null(strstr(out, "{\"event\":\"age\",\"pid\":42,\"note\":\"a note\",\"by\":\"site\""));
	assert_non_null(strstr(out, "\"site\":\"App.cache:2\",\"samples\":200,"
				    "\"live_bytes\":"));
	assert_non_null(strstr(out, "\"16+\":{\"samples\":200,"));
	assert_non_null(strstr(out, "{\"event\":\"leaks\",\"pid\":42,\"note\":\"a note\","));
	assert_non_null(strstr(out, "\"site_counters\":null,\"site_counters_missing\":\"none here\""));
	assert_non_null(strstr(out, "\"suspects\":[{\"rank\":1,\"class\":\"X\","
				    "\"site\":\"App.leak:1\""));
	/* live: no note, no missing-counters remark */
	p.src.note = NULL;
	p.src.no_volumes = NULL;
	capture(print_both, &p, out, sizeof(out));
	assert_non_null(strstr(out, "{\"event\":\"age\",\"pid\":42,\"by\":\"site\""));
	assert_non_null(strstr(out, "{\"event\":\"leaks\",\"pid\":42,\"duration_s\":20.000,"));
	assert_null(strstr(out, "site_counters"));
	/* text */
	p.src.json = false;
	p.src.note = "a note";
	p.src.no_volumes = "none here";
	capture(print_both, &p, out, sizeof(out));
	assert_non_null(strstr(out, "JVM 42: 400 live samples after 20.0 s, 40 GCs"));
	assert_non_null(strstr(out, "note: a note\n"));
	assert_non_null(strstr(out, "no allocation rates: none here\n"));
	assert_non_null(strstr(out, "#1 "));
	assert_non_null(strstr(out, "    site  App.leak:1\n"));
	objrec_replay_free(&rr);
	leaks_free(&l);
	samples_free(&m);
}

static void print_age_text(void *arg)
{
	struct print_arg *p = arg;

	assert_int_equal(objreport_age(&p->rr->m, &p->src, false, 5), 0);
}

/* No sample alive at the end (the window ended just after a young GC): the
 * table is empty and a note says how many were sampled and why none is left. */
static void test_report_none_alive(void **state)
{
	static char out[4096];
	struct objrec_replay rr = { 0 };
	struct print_arg p = { .rr = &rr, .src = { .pid = 7, .elapsed = 3 } };

	(void)state;
	assert_int_equal(samples_init(&rr.m, 1, 524288, 1000), 0);
	rr.m.allocs = 2500;
	rr.m.gcs = 47;
	capture(print_age_text, &p, out, sizeof(out));
	assert_non_null(strstr(out, "JVM 7: 0 live samples after 3.0 s, 47 GCs"));
	assert_non_null(strstr(out, "note: none of the 2500 sampled objects is alive at the end "
				    "(the window's 47 GCs collected them all)"));
	/* the column line, and no row below it */
	assert_non_null(strstr(out, "(GCs survived: samples)\n"));
	assert_true(out[strlen(out) - 1] == '\n' &&
		    strstr(out, "(GCs survived: samples)\n") + strlen("(GCs survived: samples)\n") ==
			    out + strlen(out));
	samples_free(&rr.m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lines_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replay_equals_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replay_without_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_lines, setup, teardown),
		cmocka_unit_test(test_report_none_alive),
		cmocka_unit_test_setup_teardown(test_report_output, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
