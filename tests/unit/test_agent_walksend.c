/* test_agent_walksend.c - a walked snapshot cut into HEAP_DATA records
 * (user/agent/walksend.c, with walkstate.c and walkvec.c): every section in
 * order, each entry once, whatever the chunk size; a class too large for a
 * chunk skipped; a bare walk's classes, threads and ages left out. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "agent/walksend.h"
#include "agent/walkstate.h"

#define NOBJS 5000
#define NVISITS 9000

/* Entries of @n elements of @esz bytes, each filled with its index. */
static void fill(struct walkvec *v, size_t esz, size_t n)
{
	walkvec_init(v, esz);
	for (size_t i = 0; i < n; i++) {
		char *e = walkvec_push(v);

		assert_non_null(e);
		memset(e, 0, esz);
		memcpy(e, &i, sizeof(i) < esz ? sizeof(i) : esz);
	}
}

static void add_class(uint64_t id, const char *sig, const char *field)
{
	struct walk_class *c;

	hw.cls = realloc(hw.cls, (hw.ncls + 1) * sizeof(*hw.cls));
	assert_non_null(hw.cls);
	c = &hw.cls[hw.ncls++];
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->sig = strdup(sig);
	c->fields = calloc(1, sizeof(*c->fields));
	c->fields[0] = (struct walk_field){ .index = 3, .type = 'I', .name = strdup(field) };
	c->nfields = 1;
}

/* A snapshot with something in every section. */
static void snapshot(void)
{
	memset(&hw, 0, sizeof(hw));
	memset(&hs, 0, sizeof(hs));
	add_class(1, "Ljava/lang/Object;", "x");
	add_class(2, "LFoo;", "count");
	add_class(3, "LBar;", "name");
	hw.threads = calloc(2, sizeof(*hw.threads));
	hw.threads[0] = (struct walk_thread){ .id = 7, .name = strdup("main") };
	hw.threads[1] = (struct walk_thread){ .id = 8, .name = strdup("worker-1") };
	hw.nthreads = 2;
	fill(&hw.objs, sizeof(struct mt_ap_hobj), NOBJS);
	fill(&hw.refs, sizeof(struct mt_ap_href), 700);
	fill(&hw.roots, sizeof(struct mt_ap_hroot), 30);
	fill(&hw.prims, sizeof(struct mt_ap_hprim), 300);
	walkvec_init(&hw.strs, sizeof(struct walk_str));
	for (int i = 0; i < 2; i++) {
		struct walk_str *s = walkvec_push(&hw.strs);

		s->obj = 100 + (uint64_t)i;
		s->utf8 = strdup(i ? "hello" : "");
		s->len = (uint32_t)strlen(s->utf8);
		s->reserved = 0;
	}
	fill(&hw.named, sizeof(struct walk_named), 3);
	hw.named_next = 42;
	fill(&hw.visits, sizeof(struct mt_ap_hvisit), NVISITS);
	fill(&hw.sampled, sizeof(struct mt_ap_hsampled), 2);
	hs.nwalks = 2;
	hs.walks[0] = (struct mt_ap_hwalk){ .first_id = 1, .gcs = 0 };
	hs.walks[1] = (struct mt_ap_hwalk){ .first_id = 50, .gcs = 3 };
	hw.want_freeze = true;
	hw.fz.rec.child_pid = 1234;
	hw.want_copy = true;
	hw.copy.nvisits = 77;
	hw.done.objects = NOBJS;
}

/* The order the sections go out in. */
static const unsigned order[] = {
	MT_AP_HREC_CLASS, MT_AP_HREC_THREAD, MT_AP_HREC_OBJS, MT_AP_HREC_REFS,
	MT_AP_HREC_ROOTS, MT_AP_HREC_PRIMS, MT_AP_HREC_STRING, MT_AP_HREC_AGES,
	MT_AP_HREC_NAMED, MT_AP_HREC_VISITS, MT_AP_HREC_SAMPLED, MT_AP_HREC_FREEZE,
	MT_AP_HREC_COPY,
};

static int rank(unsigned kind)
{
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (order[i] == kind)
			return (int)i;
	fail_msg("record kind %u is no section's", kind);
	return -1;
}

/* What arrived: records per kind, entries (args) per kind, the chunks. */
struct seen {
	unsigned recs[64];
	uint64_t entries[64];
	int last_rank;
	size_t chunks;
};

/* Take every chunk of at most @cap bytes; each must hold whole records. */
static void drain(size_t cap, struct seen *s)
{
	char *buf = malloc(cap);
	long n;

	assert_non_null(buf);
	memset(s, 0, sizeof(*s));
	while (!walksend_all_sent()) {
		size_t off = 0;
		struct mt_ap_rec r;
		const void *body;
		size_t blen;
		int rc;

		n = walksend_chunk(buf, cap);
		assert_true(n >= 0 && (size_t)n <= cap);
		if (!n) /* nothing fitted: only possible once everything is out */
			break;
		s->chunks++;
		while ((rc = mt_ap_rec_next(buf, (size_t)n, &off, &r, &body, &blen)) > 0) {
			assert_true(r.kind < 64);
			assert_true(rank(r.kind) >= s->last_rank); /* sections in order */
			s->last_rank = rank(r.kind);
			s->recs[r.kind]++;
			s->entries[r.kind] += r.arg;
		}
		assert_int_equal(rc, 0); /* the chunk ends on a record's end */
	}
	free(buf);
}

static void test_every_section_once(void **state)
{
	static const size_t caps[] = { 65536, 4096, 1000 };

	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
		struct mt_ap_heap_done d;
		struct seen s;

		snapshot();
		assert_false(walksend_pending());
		walksend_begin();
		assert_true(walksend_pending());
		drain(caps[i], &s);
		assert_true(walksend_all_sent());
		assert_int_equal(s.recs[MT_AP_HREC_CLASS], 3);
		assert_int_equal(s.recs[MT_AP_HREC_THREAD], 2);
		assert_int_equal(s.entries[MT_AP_HREC_OBJS], NOBJS);
		assert_int_equal(s.entries[MT_AP_HREC_REFS], 700);
		assert_int_equal(s.entries[MT_AP_HREC_ROOTS], 30);
		assert_int_equal(s.entries[MT_AP_HREC_PRIMS], 300);
		assert_int_equal(s.recs[MT_AP_HREC_STRING], 2);
		assert_int_equal(s.entries[MT_AP_HREC_STRING], 5); /* arg: the UTF-8 bytes */
		assert_int_equal(s.recs[MT_AP_HREC_AGES], 1);
		assert_int_equal(s.entries[MT_AP_HREC_AGES], 2);
		assert_int_equal(s.entries[MT_AP_HREC_NAMED], 3);
		assert_int_equal(s.entries[MT_AP_HREC_VISITS], NVISITS);
		assert_int_equal(s.entries[MT_AP_HREC_SAMPLED], 2);
		assert_int_equal(s.recs[MT_AP_HREC_FREEZE], 1);
		assert_int_equal(s.recs[MT_AP_HREC_COPY], 1);
		/* batches of up to 64 KiB: more records than one for the objects */
		assert_true(s.recs[MT_AP_HREC_OBJS] >= 2);
		if (caps[i] < 65536)
			assert_true(s.chunks > 10);
		walksend_done_info(&d);
		assert_int_equal(d.objects, NOBJS);
		/* after the last chunk, nothing more */
		{
			char b[64];

			assert_int_equal(walksend_chunk(b, sizeof(b)), 0);
		}
		walkstate_free();
		assert_false(walksend_pending());
	}
}

static void test_class_too_large_is_skipped(void **state)
{
	char sig[2000];
	struct seen s;

	snapshot();
	memset(sig, 'A', sizeof(sig) - 1);
	sig[sizeof(sig) - 1] = '\0';
	free(hw.cls[1].sig);
	hw.cls[1].sig = strdup(sig); /* > 1000 bytes: fits in no chunk */
	walksend_begin();
	drain(1000, &s);
	assert_true(walksend_all_sent());
	assert_int_equal(s.recs[MT_AP_HREC_CLASS], 2);
	assert_int_equal(s.entries[MT_AP_HREC_OBJS], NOBJS);
	walkstate_free();
}

static void test_bare_walk_sends_no_tables(void **state)
{
	struct seen s;

	snapshot();
	hw.done.flags = MT_AP_HEAP_BARE;
	walksend_begin();
	drain(65536, &s);
	assert_true(walksend_all_sent());
	assert_int_equal(s.recs[MT_AP_HREC_CLASS], 0);
	assert_int_equal(s.recs[MT_AP_HREC_THREAD], 0);
	assert_int_equal(s.recs[MT_AP_HREC_AGES], 0);
	walkstate_free();
}

static void test_vectors(void **state)
{
	struct walkvec v;

	walkvec_init(&v, 24);
	for (int i = 0; i < 5000; i++)
		*(int *)walkvec_push(&v) = i;
	assert_int_equal(v.n, 5000);
	assert_true(v.cap >= 5000 && !v.oom);
	assert_int_equal(*(int *)(v.p + 24 * 4999), 4999);
	walkvec_reserve(&v, 20000);
	assert_int_equal(v.cap, 20000);
	assert_int_equal(*(int *)(v.p + 24 * 123), 123); /* kept */
	assert_int_equal(walkvec_room(&v, 100), 0);      /* no shrink */
	assert_int_equal(v.cap, 20000);
	walkvec_free(&v);
	assert_null(v.p);
	assert_int_equal(v.esz, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_section_once),
		cmocka_unit_test(test_class_too_large_is_skipped),
		cmocka_unit_test(test_bare_walk_sends_no_tables),
		cmocka_unit_test(test_vectors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
