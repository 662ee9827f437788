// SPDX-License-Identifier: GPL-2.0
/* alloctable.c - allocation by class, in `memtrace alloc`'s output format. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink/alloctable.h"
#include "lib/util.h"

struct arow {
	char *name;
	uint64_t bytes, samples;
};

struct alloctable {
	struct arow *rows;
	size_t n, cap;          /* rows; an index by name hash beside them */
	size_t *index, icap;    /* open addressing, values row + 1 */
	uint64_t samples;
};

struct alloctable *alloctable_new(void)
{
	return calloc(1, sizeof(struct alloctable));
}

void alloctable_free(struct alloctable *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		free(t->rows[i].name);
	free(t->rows);
	free(t->index);
	free(t);
}

static size_t hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

/* Rebuild the index for one more row, at most half full. */
static int reindex(struct alloctable *t)
{
	size_t cap = t->icap ? t->icap * 2 : 256;
	size_t *ix;

	while (cap < (t->n + 1) * 2) /* after alloctable_print(): icap is 0, n is not */
		cap *= 2;
	ix = calloc(cap, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	for (size_t r = 0; r < t->n; r++) {
		size_t j = hash(t->rows[r].name) & (cap - 1);

		while (ix[j])
			j = (j + 1) & (cap - 1);
		ix[j] = r + 1;
	}
	free(t->index);
	t->index = ix;
	t->icap = cap;
	return 0;
}

int alloctable_add(struct alloctable *t, const char *name, uint64_t bytes)
{
	size_t j;

	if ((t->n + 1) * 2 > t->icap && reindex(t))
		return -ENOMEM;
	for (j = hash(name) & (t->icap - 1); t->index[j]; j = (j + 1) & (t->icap - 1)) {
		struct arow *r = &t->rows[t->index[j] - 1];

		if (!strcmp(r->name, name)) {
			r->bytes += bytes;
			r->samples++;
			t->samples++;
			return 0;
		}
	}
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 128;
		struct arow *nr = realloc(t->rows, cap * sizeof(*nr));

		if (!nr)
			return -ENOMEM;
		t->rows = nr;
		t->cap = cap;
	}
	t->rows[t->n].name = strdup(name);
	if (!t->rows[t->n].name)
		return -ENOMEM;
	t->rows[t->n].bytes = bytes;
	t->rows[t->n].samples = 1;
	t->index[j] = ++t->n;
	t->samples++;
	return 0;
}

uint64_t alloctable_samples(const struct alloctable *t)
{
	return t->samples;
}

/* Largest first, then by name (as `memtrace alloc`). */
static int by_bytes(const void *a, const void *b)
{
	const struct arow *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->name, y->name);
}

void alloctable_print(FILE *f, struct alloctable *t, const struct alloctable_info *i, bool json)
{
	uint64_t total = 0;
	double secs = i->secs;
	char b[32], r[32];

	for (size_t k = 0; k < t->n; k++)
		total += t->rows[k].bytes;
	if (t->n)
		qsort(t->rows, t->n, sizeof(*t->rows), by_bytes);
	free(t->index); /* the order changed: the index is stale */
	t->index = NULL;
	t->icap = 0;
	if (json) {
		fprintf(f, "{\"event\":\"alloc\",\"pid\":%d,\"mode\":\"tlab\",\"duration_s\":%.3f,"
			"\"total_bytes\":%llu,\"total_samples\":%llu,\"lost_events\":%llu,"
			"\"lost_keys\":0,\"stacks_not_captured\":0,\"classes_unloaded\":%llu,"
			"\"frames_resolved\":0,\"frames_unresolved\":0,\"jvm_exited\":%s,"
			"\"bytes_known\":true,\"classes\":[",
			i->pid, secs, (unsigned long long)total, (unsigned long long)t->samples,
			(unsigned long long)i->lost, (unsigned long long)i->unloads,
			i->jvm_exited ? "true" : "false");
		for (size_t k = 0; k < t->n && (int)k < i->top; k++) {
			fprintf(f, "%s{\"class\":", k ? "," : "");
			json_str(f, t->rows[k].name);
			fprintf(f, ",\"bytes\":%llu,\"samples\":%llu,\"share\":%.6f,\"bytes_per_s\":%.0f}",
				(unsigned long long)t->rows[k].bytes,
				(unsigned long long)t->rows[k].samples,
				total ? (double)t->rows[k].bytes / total : 0,
				secs > 0 ? t->rows[k].bytes / secs : 0);
		}
		fprintf(f, "]}\n");
		return;
	}
	fprintf(f, "%s allocated by pid %d in %.1f s (%s/s), %llu samples (estimated from TLAB "
		"refills)\n",
		fmt_bytes(total, b, sizeof(b)), i->pid, secs,
		fmt_bytes(secs > 0 ? (uint64_t)(total / secs) : 0, r, sizeof(r)),
		(unsigned long long)t->samples);
	fprintf(f, "%-50s %12s %7s %12s %9s\n", "CLASS", "BYTES", "SHARE", "RATE/s", "SAMPLES");
	for (size_t k = 0; k < t->n && (int)k < i->top; k++)
		fprintf(f, "%-50s %12s %6.1f%% %12s %9llu\n", t->rows[k].name,
			fmt_bytes(t->rows[k].bytes, b, sizeof(b)),
			total ? 100.0 * t->rows[k].bytes / total : 0,
			fmt_bytes(secs > 0 ? (uint64_t)(t->rows[k].bytes / secs) : 0, r, sizeof(r)),
			(unsigned long long)t->rows[k].samples);
	fprintf(f, "lost events: %llu", (unsigned long long)i->lost);
	if (i->unloads)
		fprintf(f, ", classes unloaded meanwhile: %llu", (unsigned long long)i->unloads);
	fprintf(f, "\n");
}
