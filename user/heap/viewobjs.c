// SPDX-License-Identifier: GPL-2.0
/* viewobjs.c - the heap view's objects from records by position (see
 * viewobjs.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/viewobjs.h"

#define HEAPVIEW_MAX_OBJECT (1ull << 35)   /* bytes: long[2^31 - 1] is 16 GiB */
#define HEAPVIEW_MAX_HEAP (1ull << 50)     /* bytes */

int viewobjs_check(const struct mt_ap_hobj *o, uint64_t *total, char *why, size_t wn)
{
	/* no Java object exceeds 16 GiB (long[2^31 - 1]), no heap a PiB: a
	 * file that says otherwise is corrupt, and its sizes would wrap the
	 * sums (retained sizes, totals) */
	if (o->size > HEAPVIEW_MAX_OBJECT || (*total += o->size) > HEAPVIEW_MAX_HEAP) {
		snprintf(why, wn, "object %llu claims %llu bytes (%s): the snapshot is corrupt",
			 (unsigned long long)o->id, (unsigned long long)o->size,
			 o->size > HEAPVIEW_MAX_OBJECT ? "no Java object exceeds 16 GiB" :
							 "the heap would exceed 1 PiB");
		return -EINVAL;
	}
	return 0;
}

/* Objects by position for viewobjs_by_pos() to split in two threads: at
 * least this many, with two CPUs to run on (10 M objects: the pass 67 -> 45
 * ms in 2 MiB pages; in 4 KiB pages the same ~105 ms either way, each page
 * of the pool faulted in at ~1.25 us while the thread that maps the
 * references ahead takes a CPU too: bench/freshpages's mapmade) */
#define SPLIT_MIN (1u << 20)

/* An id the second half did not index itself: put in order after. */
struct later_id {
	uint64_t id;
	uint32_t pos;
};

/* One thread's half of the objects: [lo, hi). The first indexes ids and
 * counts classes into the view itself; the second (!first) writes only its
 * own objects, ages and bit words of the id index, counts its classes apart
 * and leaves the ids that are not their own position's for after. */
struct part {
	struct viewbuild *b;
	size_t lo, hi;
	bool first;
	size_t at;                /* the part's references: its objects' ref_first run from 0 */
	uint64_t total;           /* its bytes */
	uint64_t *count, *bytes;  /* per class: the view's (first) or its own */
	uint8_t *cref;            /* per class, CLASS references implied: b->cref_seen's
				    * (first) or its own; NULL: none left out */
	struct later_id *later;   /* !first: ids to put after */
	size_t nlater, caplater;
	int err;                  /* -EINVAL: why; -ENOMEM */
	char why[160];
};

/* Put @id at @pos in the second half's way: its own position's bit, or
 * later. 0 or -ENOMEM. */
static int later_put(struct part *p, uint64_t id, uint32_t pos)
{
	if (idmap_index_put_own(&p->b->objmap, id, pos))
		return 0;
	if (p->nlater == p->caplater) {
		size_t cap = p->caplater ? 2 * p->caplater : 64;
		struct later_id *l = realloc(p->later, cap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		p->later = l;
		p->caplater = cap;
	}
	p->later[p->nlater++] = (struct later_id){ id, pos };
	return 0;
}

static void run_part(struct part *p)
{
	struct viewbuild *b = p->b;
	struct dsl_hobject *out = b->objs;
	size_t nin = b->take->nrefpos;
	struct viewobjs_cls cc;
	uint32_t nmask = p->cref ? ~MT_AP_HOBJ_POS_CLASS : ~0u;

	memset(&cc, 0, sizeof(cc));
	for (size_t i = p->lo; i < p->hi; i++) {
		struct dsl_hobject *d = &out[i];
		struct mt_ap_hobj o;
		uint32_t ci, nr;

		memcpy(&o, d, sizeof(o)); /* the record, read before its place is written */
		if (b->fused) {
			p->err = viewobjs_check(&o, &p->total, p->why, sizeof(p->why));
			if (!p->err)
				p->err = p->first ? idmap_index_put(&b->objmap, o.id, (uint32_t)i) :
						    later_put(p, o.id, (uint32_t)i);
			if (p->err)
				return;
		}
		/* flags count its own references, which follow the object
		 * before's (its CLASS one first, or implied: MT_AP_HOBJ_POS_CLASS) */
		nr = o.flags & nmask;
		if (nr > nin - p->at) {
			snprintf(p->why, sizeof(p->why), "the frozen copy's object %zu claims more "
				 "references than it wrote: the snapshot is corrupt", i);
			p->err = -EINVAL;
			return;
		}
		ci = viewobjs_cls_index(b, &cc, o.cls);
		d->id = o.id;
		d->size = o.size;
		d->cls = ci == DSL_NOOBJ ? b->unknown : ci;
		d->length = o.length < 0 ? -1 : o.length;
		d->ref_first = (uint32_t)p->at;
		d->nrefs = nr;
		p->at += nr;
		if (p->cref) /* the same for every object of a class (checked after) */
			p->cref[d->cls] |= o.flags & MT_AP_HOBJ_POS_CLASS ? 1 : 2;
		if (p->first) /* an instance: a class (the second's, after) */
			b->aux[d->cls].known = b->aux[d->cls].inst = true;
		p->count[d->cls]++;
		p->bytes[d->cls] += d->size;
		if (b->ages) {
			uint64_t age = snapshot_age(b->s, o.id);

			b->ages[i] = age > UINT32_MAX ? UINT32_MAX : (uint32_t)age;
		}
		if (b->values) { /* one thread only */
			p->err = b->values_of(b, i);
			if (p->err)
				return;
		}
	}
}

static void *part_thread(void *arg)
{
	run_part(arg);
	return NULL;
}

/* Should the objects take two threads? */
static bool split_wanted(const struct viewbuild *b)
{
	if (b->values || b->n < 128 || (b->fused && !idmap_index_dense(&b->objmap)))
		return false;
	return viewrefs_two_threads(b->n, SPLIT_MIN);
}

/*
 * The second half's ids, once the first's are in: those it left for after
 * (named objects, whose ids are not their positions') put in order - or, if
 * any first-half id or one of those went into the dense range (what only a
 * corrupt snapshot does), all of the second half's again in order, as one
 * thread would have put them. 0 or -ENOMEM.
 */
static int second_ids(struct viewbuild *b, struct part *p)
{
	struct idmap_index *x = &b->objmap;
	bool redo = idmap_index_collides(x);
	int err = 0;

	for (size_t k = 0; k < p->nlater && !redo; k++)
		redo = idmap_index_in_dense(x, p->later[k].id);
	if (!redo) {
		for (size_t k = 0; k < p->nlater && !err; k++)
			err = idmap_index_put(x, p->later[k].id, p->later[k].pos);
		return err;
	}
	idmap_index_forget_from(x, (uint32_t)p->lo);
	for (size_t i = p->lo; i < p->hi && !err; i++)
		err = idmap_index_put(x, b->objs[i].id, (uint32_t)i);
	return err;
}

int viewobjs_by_pos(struct viewbuild *b)
{
	struct part p[2] = {
		{ .b = b, .lo = 0, .hi = b->n, .first = true,
		  .count = b->cls_count, .bytes = b->cls_bytes },
		{ .b = b, .hi = b->n },
	};
	bool two = false;
	pthread_t th;
	int err = 0;

	b->pos_mid = b->n;
	b->pos_off = 0;
	if (b->take->noclass) {
		b->cref_seen = p[0].cref = calloc(b->ncls, 1);
		if (!b->cref_seen)
			return -ENOMEM;
	}
	if (split_wanted(b)) {
		/* halves on a word of the id index's bits: each thread writes
		 * its own words */
		size_t mid = (b->n / 2) & ~(size_t)63;

		p[1].count = calloc(b->ncls, sizeof(*p[1].count));
		p[1].bytes = calloc(b->ncls, sizeof(*p[1].bytes));
		p[1].cref = b->cref_seen ? calloc(b->ncls, 1) : NULL;
		if (p[1].count && p[1].bytes && mid && (p[1].cref || !b->cref_seen)) {
			p[0].hi = p[1].lo = mid;
			two = !pthread_create(&th, NULL, part_thread, &p[1]);
			if (!two)
				p[0].hi = b->n; /* all here */
		}
	}
	run_part(&p[0]);
	if (two)
		pthread_join(th, NULL);
	if (p[0].err || (two && p[1].err)) {
		struct part *e = p[0].err ? &p[0] : &p[1];

		err = e->err;
		if (err == -EINVAL)
			snprintf(b->why, b->wn, "%s", e->why);
		goto cleanup;
	}
	if (two) {
		uint64_t total = p[0].total;

		if (b->fused && (total += p[1].total) > HEAPVIEW_MAX_HEAP) {
			snprintf(b->why, b->wn, "the objects claim %llu bytes (the heap would exceed "
				 "1 PiB): the snapshot is corrupt", (unsigned long long)total);
			err = -EINVAL;
			goto cleanup;
		}
		if (p[1].at > b->take->nrefpos - p[0].at) {
			snprintf(b->why, b->wn, "the frozen copy's objects claim more references "
				 "than it wrote: the snapshot is corrupt");
			err = -EINVAL;
			goto cleanup;
		}
		for (uint32_t c = 0; c < b->ncls; c++) {
			if (!p[1].count[c])
				continue;
			if (b->cref_seen)
				b->cref_seen[c] |= p[1].cref[c];
			b->cls_count[c] += p[1].count[c];
			b->cls_bytes[c] += p[1].bytes[c];
			b->aux[c].known = b->aux[c].inst = true;
		}
		if (b->fused) {
			err = second_ids(b, &p[1]);
			if (err)
				goto cleanup;
		}
		b->pos_mid = p[1].lo;
		b->pos_off = p[0].at;
		p[0].at += p[1].at;
	}
	if (p[0].at != b->take->nrefpos) {
		snprintf(b->why, b->wn, "the frozen copy's objects count %zu references of its "
			 "%zu: the snapshot is corrupt", p[0].at, b->take->nrefpos);
		err = -EINVAL;
	}
	for (uint32_t c = 0; !err && b->cref_seen && c < b->ncls; c++)
		if (b->cref_seen[c] == 3) {
			snprintf(b->why, b->wn, "the frozen copy left out the CLASS references of "
				 "some objects of class %u but not of others: the snapshot is "
				 "corrupt", c);
			err = -EINVAL;
		}
cleanup:
	free(p[1].count);
	free(p[1].bytes);
	free(p[1].cref);
	free(p[1].later);
	return err;
}
