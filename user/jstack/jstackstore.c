/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jstackstore.c - the walker's stacks moved from their BPF map into user
 * space (see jstackstore.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/idmap.h"
#include "jstack/jstackstore.h"

/* A stack as kept here: only the frames it has. */
struct kept {
	uint32_t depth, stop;
	struct mt_jframe f[];
};

struct jstackstore {
	int fd;
	uint32_t max;        /* the map's max_entries: a drain's bound */
	uint32_t frames;     /* frames a value holds (its size's) */
	uint64_t max_kept;   /* stacks kept here at most */
	struct idmap stacks; /* key -> struct kept * */
};

void jstackstore_size_map(struct bpf_map *m, uint32_t depth)
{
	uint32_t n;

	if (depth < 1 || depth > MT_JSTACK_MAX_DEPTH)
		depth = MT_JSTACK_DEFAULT_DEPTH;
	n = MT_JSTACK_DRAINED_BYTES / MT_JSTACK_BYTES(depth);
	bpf_map__set_map_flags(m, 0);
	bpf_map__set_value_size(m, MT_JSTACK_BYTES(depth));
	bpf_map__set_max_entries(m, n > MT_JSTACK_DRAINED_MIN ? n : MT_JSTACK_DRAINED_MIN);
}

struct jstackstore *jstackstore_new(int map_fd, uint64_t max_kept)
{
	struct bpf_map_info info;
	uint32_t len = sizeof(info);
	struct jstackstore *s;

	memset(&info, 0, sizeof(info));
	if (map_fd < 0 || bpf_obj_get_info_by_fd(map_fd, &info, &len)) {
		errno = map_fd < 0 ? EBADF : errno;
		return NULL;
	}
	if (info.key_size != sizeof(uint64_t) || info.value_size < MT_JSTACK_BYTES(1) ||
	    info.value_size > sizeof(struct mt_jstack) ||
	    (info.value_size - MT_JSTACK_BYTES(0)) % sizeof(struct mt_jframe)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->fd = map_fd;
	s->max = info.max_entries;
	s->frames = (info.value_size - MT_JSTACK_BYTES(0)) / sizeof(struct mt_jframe);
	s->max_kept = max_kept;
	idmap_init(&s->stacks);
	return s;
}

void jstackstore_free(struct jstackstore *s)
{
	if (!s)
		return;
	idmap_free_vals(&s->stacks);
	free(s);
}

/* Keep @st under @key (a copy of its frames). 0 or -ENOMEM. */
static int keep(struct jstackstore *s, uint64_t key, const struct mt_jstack *st)
{
	uint32_t d = st->depth < s->frames ? st->depth : s->frames;
	struct kept *k = malloc(sizeof(*k) + d * sizeof(k->f[0]));

	if (!k)
		return -ENOMEM;
	k->depth = d;
	k->stop = st->stop;
	memcpy(k->f, st->f, d * sizeof(k->f[0]));
	if (idmap_put(&s->stacks, key, k)) {
		free(k);
		return -ENOMEM;
	}
	return 0;
}

int jstackstore_drain(struct jstackstore *s, jstackstore_fn fn, void *arg)
{
	struct mt_jstack st;
	uint64_t key;
	int moved = 0;

	/* deleting as it goes, the map's first key is always the next one */
	for (uint32_t i = 0; i < s->max && !bpf_map_get_next_key(s->fd, NULL, &key); i++) {
		if (bpf_map_lookup_elem(s->fd, &key, &st))
			continue; /* gone meanwhile */
		if (!idmap_get(&s->stacks, key)) {
			if (s->stacks.n >= s->max_kept)
				break; /* full: the map fills, and the walker counts what it cannot store */
			if (keep(s, key, &st))
				return -ENOMEM;
			if (fn)
				fn(arg, key, &st);
		}
		bpf_map_delete_elem(s->fd, &key);
		moved++;
	}
	return moved;
}

int jstackstore_get(const struct jstackstore *s, uint64_t key, struct mt_jstack *st)
{
	const struct kept *k = idmap_get(&s->stacks, key);

	if (!k) {
		if (bpf_map_lookup_elem(s->fd, &key, st))
			return -ENOENT;
		if (st->depth > s->frames)
			st->depth = s->frames;
		memset(st->f + st->depth, 0, (s->frames - st->depth) * sizeof(st->f[0]));
		return 0;
	}
	st->depth = k->depth;
	st->stop = k->stop;
	memcpy(st->f, k->f, k->depth * sizeof(k->f[0]));
	memset(st->f + k->depth, 0, (s->frames - k->depth) * sizeof(st->f[0]));
	return 0;
}

uint64_t jstackstore_count(const struct jstackstore *s)
{
	return s->stacks.n;
}
