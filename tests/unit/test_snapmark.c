/* test_snapmark.c - snapmark_pull(): the frozen copy's records read while it
 * writes them (MT_AP_FREEZE_LIVE), here out of this very process (the
 * "copy" is our own memory: process_vm_readv of getpid()). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <cmocka.h>

#include "heap/recpool.h"
#include "heap/snapmark.h"
#include "heap/snapshot.h"

#define N 10000

static struct mt_ap_hobj objs[N];
static struct mt_ap_href refs[2 * N];
static struct mt_ap_hlive live;

static void fill(void)
{
	for (uint64_t i = 0; i < N; i++)
		objs[i] = (struct mt_ap_hobj){ .id = 1000 + i, .cls = 7, .size = 16 + 8 * (i % 5),
					       .length = -1 };
	for (uint64_t i = 0; i < 2 * N; i++)
		refs[i] = (struct mt_ap_href){ .from = 1000 + i / 2, .to = 1000 + (i * 7) % N,
					       .index = (int32_t)(i % 2), .kind = 2 };
	live = (struct mt_ap_hlive){ .gen = 2, .objs = (uint64_t)(uintptr_t)objs,
				     .refs = (uint64_t)(uintptr_t)refs, .cap_objs = N,
				     .cap_refs = 2 * N };
}

static void attach(struct mt_snapshot *s)
{
	snapshot_init(s);
	s->has_live = true;
	s->live_pid = getpid();
	s->live_at = (uint64_t)(uintptr_t)&live;
}

/* What the copy has counted is read, in pieces, as it grows; nothing before
 * its arrays are there, nothing while gen is odd (they are moving). */
static void test_pull_as_written(void **state)
{
	struct mt_snapshot s;

	(void)state;
	fill();
	attach(&s);
	live.objs = 0; /* the mark has not begun writing */
	assert_int_equal(snapmark_pull(&s), 0);
	assert_int_equal(s.live_nobjs, 0);
	live.objs = (uint64_t)(uintptr_t)objs;
	live.nobjs = 3000;
	live.nrefs = 5000;
	assert_int_equal(snapmark_pull(&s), 0);
	assert_int_equal(s.live_nobjs, 3000);
	assert_int_equal(s.live_nrefs, 5000);
	assert_true(s.live_cap_objs >= N && s.live_cap_refs >= 2 * N); /* sized once */
	live.gen = 3; /* moving: what it reads now is not kept */
	live.nobjs = 6000;
	live.nrefs = 9000;
	assert_int_equal(snapmark_pull(&s), 0);
	assert_int_equal(s.live_nobjs, 3000);
	assert_int_equal(s.live_nrefs, 5000);
	live.gen = 4;
	live.nobjs = N;
	live.nrefs = 2 * N;
	assert_int_equal(snapmark_pull(&s), 0);
	assert_int_equal(s.live_nobjs, N);
	assert_int_equal(s.live_nrefs, 2 * N);
	assert_memory_equal(s.live_objs, objs, sizeof(objs));
	assert_memory_equal(s.live_refs, refs, sizeof(refs));
	assert_int_equal(s.live_pulls, 2);
	/* DONE, the mark went through: the pulled records are the snapshot's */
	s.has_mark = true;
	snapmark_live_done(&s);
	assert_false(s.has_live);
	assert_int_equal(s.nobjs, N);
	assert_int_equal(s.live_read_objs, N);
	assert_int_equal(s.nrefs, 2 * N);
	assert_memory_equal(s.objs, objs, sizeof(objs));
	assert_null(s.live_objs);
	snapshot_free(&s);
}

/* DONE without the mark's records (it stopped, or the walk went another
 * way and sent its own): what was pulled is dropped, nothing is mixed in. */
static void test_pull_dropped(void **state)
{
	struct mt_snapshot s;

	(void)state;
	fill();
	attach(&s);
	live.nobjs = 500;
	assert_int_equal(snapmark_pull(&s), 0);
	assert_int_equal(s.live_nobjs, 500);
	s.has_mark = true;
	s.mark.status = -EPROTO;
	snapmark_live_done(&s);
	assert_int_equal(s.nobjs, 0);
	assert_null(s.objs);
	assert_null(s.live_objs);
	snapshot_free(&s);
}

/* A copy that claims more records than its arrays hold, or that is gone:
 * an error, and the caller stops pulling; what was kept stays. */
static void test_pull_bad(void **state)
{
	struct mt_snapshot s;

	(void)state;
	fill();
	attach(&s);
	live.nobjs = 100;
	assert_int_equal(snapmark_pull(&s), 0);
	live.nobjs = N + 1; /* over cap_objs */
	assert_int_not_equal(snapmark_pull(&s), 0);
	assert_int_equal(s.live_nobjs, 100);
	live.nobjs = N;
	s.live_at = 8; /* nothing mapped there */
	assert_int_not_equal(snapmark_pull(&s), 0);
	assert_int_equal(s.live_nobjs, 100);
	snapshot_free(&s);
}

/* References by position read out of the copy (in_place() could not keep
 * them): by id again, each object's run from its count, the counts then
 * cleared; counts or positions that do not fit are refused. */
static void test_refs_by_id(void **state)
{
	struct mt_ap_hobj three[3] = {
		{ .id = 100, .cls = 102, .size = 16, .length = -1, .flags = 2 },
		{ .id = 7, .cls = 102, .size = 24, .length = 2, .flags = 3 },
		{ .id = 102, .cls = 0, .size = 96, .length = -1, .flags = 0 },
	};
	const struct mt_ap_hrefpos in[5] = {
		{ 2, -1, 1 }, { 1, 4, 2 },            /* 100: CLASS, a field to 7 */
		{ 2, -1, 1 }, { 0, 0, 3 }, { 0, 1, 3 }, /* 7: CLASS, [0] and [1] to 100 */
	};
	const struct mt_ap_href want[5] = {
		{ 100, 102, -1, 1 }, { 100, 7, 4, 2 }, { 7, 102, -1, 1 }, { 7, 100, 0, 3 },
		{ 7, 100, 1, 3 },
	};
	struct mt_snapshot s;

	(void)state;
	for (int bad = 0; bad < 4; bad++) {
		struct mt_ap_hrefpos b[5];

		snapshot_init(&s);
		s.objs = malloc(sizeof(three));
		assert_non_null(s.objs);
		memcpy(s.objs, three, sizeof(three));
		s.nobjs = s.cap_objs = 3;
		memcpy(b, in, sizeof(b));
		if (bad == 1)
			s.objs[0].flags = 3; /* more than there are */
		else if (bad == 2)
			b[3].to = 3;         /* past the objects */
		else if (bad == 3)
			s.objs[1].flags = 2; /* one left over */
		if (!bad) {
			assert_int_equal(snapmark_refs_by_id(&s, b, 5), 0);
			assert_int_equal(s.nrefs, 5);
			assert_memory_equal(s.refs, want, sizeof(want));
			for (size_t i = 0; i < 3; i++)
				assert_int_equal(s.objs[i].flags, 0);
		} else {
			assert_int_equal(snapmark_refs_by_id(&s, b, 5), -EPROTO);
		}
		snapshot_free(&s);
	}
}

/* The bytes of @pool's pages given so far. */
static uint64_t given(const struct recpool *pool)
{
	struct stat st;

	assert_int_equal(fstat(pool->fd, &st), 0);
	return (uint64_t)st.st_blocks * 512;
}

/* Was @pool's page at @at given before? (Given now: fallocate adds no
 * block for a page that is there; mincore and SEEK_DATA see a page given,
 * never written, as a hole.) */
static bool page_there(const struct recpool *pool, uint64_t at)
{
	uint64_t was = given(pool);

	assert_int_equal(fallocate(pool->fd, 0, (off_t)at, 4096), 0);
	return given(pool) == was;
}

/* MT_AP_FREEZE_INPLACE: once the copy sized its records, the pool is given
 * from both ends of each place (the copy's second thread writes from the
 * end down), until all of both is there. */
static void test_fill_both_ends(void **state)
{
	struct recpool *pool = recpool_new_sparse(512ull << 20);
	uint64_t half, ow, rw;
	struct mt_snapshot s;
	int pulls = 0;

	(void)state;
	assert_non_null(pool);
	half = mt_ap_inplace_refs(pool->bytes);
	attach(&s);
	s.inplace = true;
	s.refpos_asked = true;
	s.own_pool = pool;
	s.pool = pool;
	s.fill_limit = UINT64_MAX;
	live = (struct mt_ap_hlive){ .gen = 2, .pool = (uint64_t)(uintptr_t)pool->map,
				     .pool_bytes = pool->bytes, .cap_objs = 4u << 20,
				     .cap_refs = 8u << 20, .mark_objs = 4u << 20,
				     .mark_refs = 4u << 20 };
	live.objs = live.pool;
	live.refs = live.pool + half;
	ow = live.cap_objs * sizeof(struct mt_ap_hobj);         /* 128 MiB */
	rw = half + live.cap_refs * sizeof(struct mt_ap_hrefpos); /* 96 MiB */
	assert_int_equal(snapmark_pull(&s), 0);
	assert_int_equal(snapmark_pull(&s), 0);
	/* a step at each end of the objects' place (the larger), none between */
	assert_int_equal(given(pool), 2 * (32ull << 20));
	assert_int_equal(s.fill_oa, 32ull << 20);
	assert_int_equal(s.fill_ob, ow - (32ull << 20));
	assert_true(page_there(pool, 0));
	assert_true(page_there(pool, ow - 4096));
	assert_false(page_there(pool, ow / 2));
	assert_false(page_there(pool, half));
	do
		assert_int_equal(snapmark_pull(&s), 0);
	while (s.fill_more && ++pulls < 100);
	assert_false(s.fill_more);
	assert_true(s.fill_oa >= s.fill_ob && s.fill_ra >= s.fill_rb);
	/* both places whole, nothing else (the view's lead: none by position) */
	assert_int_equal(given(pool), ow + (rw - half));
	assert_true(page_there(pool, rw - 4096));
	assert_true(page_there(pool, half + (rw - half) / 2));
	snapshot_free(&s); /* and its own pool */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_refs_by_id),
		cmocka_unit_test(test_pull_as_written),
		cmocka_unit_test(test_pull_bad),
		cmocka_unit_test(test_pull_dropped),
		cmocka_unit_test(test_fill_both_ends),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
