/*
 * test_jstackstore.c - the walker's stacks drained from a real BPF hash map
 * (as bpf/jstack.bpf.h declares it) into user space. Needs CAP_BPF (make
 * check runs as root); skipped without it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <bpf/bpf.h>

#include "jstack/jstackstore.h"

struct seen {
	int calls;
	uint64_t keys[8];
};

static void on_new(void *arg, uint64_t key, const struct mt_jstack *st)
{
	struct seen *s = arg;

	assert_true(st->depth > 0);
	if (s->calls < 8)
		s->keys[s->calls] = key;
	s->calls++;
}

/* A stack of @depth frames whose words are made of @tag and the frame. */
static void make(struct mt_jstack *st, uint32_t depth, uint64_t tag)
{
	memset(st, 0xee, sizeof(*st)); /* what is beyond depth is not kept */
	st->depth = depth;
	st->stop = MT_JSTOP_END;
	for (uint32_t i = 0; i < depth; i++) {
		st->f[i].a = tag << 32 | i;
		st->f[i].b = (tag << 32 | i) | MT_JFRAME_COMPILED;
		st->f[i].m = tag * 1000 + i;
	}
}

static int map_new(uint32_t max)
{
	return bpf_map_create(BPF_MAP_TYPE_HASH, "t_jstacks", sizeof(uint64_t),
			      sizeof(struct mt_jstack), max, NULL);
}

static void test_drain(void **state)
{
	struct mt_jstack in, out;
	struct jstackstore *s;
	struct seen seen = { 0 };
	uint64_t key, depths[3] = { 1, 37, MT_JSTACK_MAX_DEPTH };
	int fd = map_new(8);

	(void)state;
	if (fd < 0)
		skip(); /* no CAP_BPF */
	s = jstackstore_new(fd, 64);
	assert_non_null(s);
	for (uint64_t k = 1; k <= 3; k++) {
		make(&in, (uint32_t)depths[k - 1], k);
		assert_int_equal(bpf_map_update_elem(fd, &k, &in, BPF_NOEXIST), 0);
	}
	/* before a drain the map answers */
	assert_int_equal(jstackstore_get(s, 2, &out), 0);
	assert_int_equal(out.depth, 37);
	assert_int_equal(jstackstore_drain(s, on_new, &seen), 3);
	assert_int_equal(seen.calls, 3);
	assert_int_equal(jstackstore_count(s), 3);
	assert_int_not_equal(bpf_map_get_next_key(fd, NULL, &key), 0); /* the map is empty */
	for (uint64_t k = 1; k <= 3; k++) {
		make(&in, (uint32_t)depths[k - 1], k);
		memset(in.f + in.depth, 0, (MT_JSTACK_MAX_DEPTH - in.depth) * sizeof(in.f[0]));
		assert_int_equal(jstackstore_get(s, k, &out), 0);
		assert_memory_equal(&in, &out, sizeof(in)); /* frames beyond depth read 0 */
	}
	/* a stack stored again after its drain: deleted, not new */
	make(&in, 37, 2);
	key = 2;
	assert_int_equal(bpf_map_update_elem(fd, &key, &in, BPF_NOEXIST), 0);
	key = 9;
	make(&in, 5, 9);
	assert_int_equal(bpf_map_update_elem(fd, &key, &in, BPF_NOEXIST), 0);
	assert_int_equal(jstackstore_drain(s, on_new, &seen), 2);
	assert_int_equal(seen.calls, 4);
	assert_int_equal(seen.keys[3], 9);
	assert_int_equal(jstackstore_count(s), 4);
	assert_int_equal(jstackstore_get(s, 77, &out), -ENOENT);
	/* the map holds 8: refilled and drained again, over and over */
	for (int round = 0; round < 5; round++) {
		for (uint64_t k = 100 + 8 * round; k < 108 + 8 * (uint64_t)round; k++) {
			make(&in, 3, k);
			assert_int_equal(bpf_map_update_elem(fd, &k, &in, BPF_NOEXIST), 0);
		}
		assert_int_equal(jstackstore_drain(s, NULL, NULL), 8);
	}
	assert_int_equal(jstackstore_count(s), 44);
	assert_int_equal(jstackstore_get(s, 139, &out), 0);
	assert_int_equal(out.f[2].m, 139 * 1000 + 2);
	jstackstore_free(s);
	close(fd);
}

/* A full store leaves new stacks in the map (which then fills, and the
 * walker counts what it cannot store); stacks kept are still found. */
static void test_full(void **state)
{
	struct mt_jstack in, out;
	struct jstackstore *s;
	uint64_t key;
	int fd = map_new(8);

	(void)state;
	if (fd < 0)
		skip();
	s = jstackstore_new(fd, 3);
	assert_non_null(s);
	for (uint64_t k = 1; k <= 5; k++) {
		make(&in, 4, k);
		assert_int_equal(bpf_map_update_elem(fd, &k, &in, BPF_NOEXIST), 0);
	}
	assert_int_equal(jstackstore_drain(s, NULL, NULL), 3);
	assert_int_equal(jstackstore_count(s), 3);
	assert_int_equal(jstackstore_drain(s, NULL, NULL), 0); /* full: nothing moves */
	for (uint64_t k = 1; k <= 5; k++) /* 3 here, 2 in the map */
		assert_int_equal(jstackstore_get(s, k, &out), 0);
	assert_int_equal(bpf_map_get_next_key(fd, NULL, &key), 0);
	jstackstore_free(s);
	close(fd);
}

/* A map sized for stacks of at most 100 frames (jstackstore_size_map's
 * values: the first MT_JSTACK_BYTES(100) bytes of a struct mt_jstack): its
 * stacks come back whole, frames past their depth read 0 up to the bound,
 * and a value size that is no such prefix is refused. */
static void test_bound(void **state)
{
	struct mt_jstack *in = calloc(1, sizeof(*in)), *out = calloc(1, sizeof(*out));
	struct jstackstore *s;
	uint64_t k;
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_jstacks100", sizeof(uint64_t),
				MT_JSTACK_BYTES(100), 8, NULL);

	(void)state;
	assert_non_null(in);
	assert_non_null(out);
	if (fd < 0) {
		free(in);
		free(out);
		skip();
	}
	s = jstackstore_new(fd, 64);
	assert_non_null(s);
	for (k = 1; k <= 2; k++) {
		make(in, k == 1 ? 37 : 100, k);
		assert_int_equal(bpf_map_update_elem(fd, &k, in, BPF_NOEXIST), 0);
	}
	for (int drained = 0; drained < 2; drained++) {
		for (k = 1; k <= 2; k++) {
			make(in, k == 1 ? 37 : 100, k);
			memset(in->f + in->depth, 0, (100 - in->depth) * sizeof(in->f[0]));
			memset(out, 0x5a, sizeof(*out));
			assert_int_equal(jstackstore_get(s, k, out), 0);
			assert_memory_equal(in, out, MT_JSTACK_BYTES(100));
		}
		if (!drained)
			assert_int_equal(jstackstore_drain(s, NULL, NULL), 2);
	}
	jstackstore_free(s);
	close(fd);
	/* 8 bytes more than 100 frames, or more than the most frames: not a stack map */
	for (int i = 0; i < 2; i++) {
		fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_jstacksbad", sizeof(uint64_t),
				    i ? sizeof(struct mt_jstack) + sizeof(struct mt_jframe) :
				    MT_JSTACK_BYTES(100) + 8, 8, NULL);
		assert_true(fd >= 0);
		errno = 0;
		assert_null(jstackstore_new(fd, 64));
		assert_int_equal(errno, EINVAL);
		close(fd);
	}
	free(in);
	free(out);
}

static void test_bad_map(void **state)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "t_other", sizeof(uint64_t), 8, 4, NULL);

	(void)state;
	jstackstore_free(NULL);
	errno = 0;
	assert_null(jstackstore_new(-1, 64));
	assert_int_equal(errno, EBADF);
	if (fd < 0)
		skip();
	errno = 0;
	assert_null(jstackstore_new(fd, 64)); /* not a map of stacks */
	assert_int_equal(errno, EINVAL);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_drain),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_bound),
		cmocka_unit_test(test_bad_map),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
