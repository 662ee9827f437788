// SPDX-License-Identifier: GPL-2.0
/* heaphisto.c - instances and bytes per class of a snapshot (see heaphisto.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heaphisto.h"
#include "lib/idmap.h"

static int by_bytes(const void *a, const void *b)
{
	const struct heaphisto_row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	if (x->instances != y->instances)
		return x->instances < y->instances ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Each class's name, in @names (owned by @s's arena or by @own). */
static int class_names(const struct mt_snapshot *s, char **own, const char **names)
{
	size_t need = 0, at = 0;

	for (size_t i = 0; i < s->nclasses; i++)
		if (!s->classes[i].name)
			need += strlen(s->classes[i].sig) * 2 + 16;
	*own = malloc(need + 1);
	if (!*own)
		return -ENOMEM;
	for (size_t i = 0; i < s->nclasses; i++) {
		if (s->classes[i].name) {
			names[i] = s->classes[i].name;
			continue;
		}
		names[i] = snapshot_java_name(s->classes[i].sig, *own + at, need - at + 1);
		at += strlen(names[i]) + 1;
	}
	return 0;
}

int heaphisto_build(const struct mt_snapshot *s, struct heaphisto *h)
{
	struct heaphisto_row *r = calloc(s->nclasses + 1, sizeof(*r));
	const char **names = calloc(s->nclasses + 1, sizeof(*names));
	struct idmap_index byid = { 0 };
	uint64_t maxid = 0;
	size_t k = 0;
	int err = -ENOMEM;

	memset(h, 0, sizeof(*h));
	if (!r || !names || class_names(s, &h->names, names))
		goto out;
	for (size_t i = 0; i < s->nclasses; i++)
		if (s->classes[i].id > maxid && s->classes[i].id < (1ull << 28))
			maxid = s->classes[i].id;
	if (idmap_index_init(&byid, s->nclasses, maxid))
		goto out;
	for (size_t i = 0; i < s->nclasses; i++) {
		r[i].name = names[i];
		if (idmap_index_put(&byid, s->classes[i].id, (uint32_t)i))
			goto out;
	}
	r[s->nclasses].name = "<unknown class>";
	if (s->nhisto) {
		for (size_t i = 0; i < s->nhisto; i++) {
			uint32_t c = idmap_index_get(&byid, s->histo[i].cls);

			c = c == IDMAP_NOIDX ? (uint32_t)s->nclasses : c;
			r[c].instances += s->histo[i].count;
			r[c].bytes += s->histo[i].bytes;
		}
	} else {
		for (size_t i = 0; i < s->nobjs; i++) {
			uint32_t c = idmap_index_get(&byid, s->objs[i].cls);

			c = c == IDMAP_NOIDX ? (uint32_t)s->nclasses : c;
			r[c].instances++;
			r[c].bytes += s->objs[i].size;
		}
	}
	for (size_t i = 0; i <= s->nclasses; i++)
		if (r[i].instances)
			r[k++] = r[i];
	qsort(r, k, sizeof(*r), by_bytes);
	h->rows = r;
	h->n = k;
	r = NULL;
	err = 0;
out:
	idmap_index_free(&byid);
	free(names);
	free(r);
	if (err)
		heaphisto_free(h);
	return err;
}

void heaphisto_free(struct heaphisto *h)
{
	if (!h)
		return;
	free(h->rows);
	free(h->names);
	memset(h, 0, sizeof(*h));
}
