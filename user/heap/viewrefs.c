// SPDX-License-Identifier: GPL-2.0
/* viewrefs.c - the heap view's references (see viewrefs.h). */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/viewrefs.h"
#include "lib/util.h"

int viewrefs_kind(uint32_t k)
{
	static const int8_t map[] = {
		[1] = DSL_REF_CLASS, [2] = DSL_REF_FIELD, [3] = DSL_REF_ARRAY_ELEMENT,
		[4] = DSL_REF_CLASS_LOADER, [5] = DSL_REF_SIGNERS, [6] = DSL_REF_PROTECTION_DOMAIN,
		[7] = DSL_REF_INTERFACE, [8] = DSL_REF_STATIC_FIELD, [9] = DSL_REF_CONSTANT_POOL,
		[10] = DSL_REF_SUPERCLASS, [21] = DSL_ROOT_JNI_GLOBAL, [22] = DSL_ROOT_SYSTEM_CLASS,
		[23] = DSL_ROOT_MONITOR, [24] = DSL_ROOT_STACK_LOCAL, [25] = DSL_ROOT_JNI_LOCAL,
		[26] = DSL_ROOT_THREAD, [27] = DSL_ROOT_OTHER,
	};

	if (k >= MT_ARRAY_SIZE(map) || (k > 10 && k < 21) || k == 0)
		return -1;
	return map[k];
}

/* The ends of reference @r as object indexes and its kind; false if the view
 * leaves it out (an end not in the heap, a root's or an unknown kind). */
static inline bool ref_ends(const struct viewbuild *b, const struct mt_ap_href *r, uint32_t *from,
		     uint32_t *to, int *k)
{
	*k = viewrefs_kind(r->kind);
	if (*k < 0 || DSL_REF_IS_ROOT(*k))
		return false;
	*from = idmap_index_get(&b->objmap, r->from);
	*to = idmap_index_get(&b->objmap, r->to);
	return *from != DSL_NOOBJ && *to != DSL_NOOBJ;
}

/* A reference record's index and its ends' ids (NO_ID: the view's object's,
 * looked up only where needed - references by position carry none). */
#define NO_ID UINT64_MAX

/* The reference with @index from @from to @to (ids @from_id, @to_id) as the
 * view's reference *@d (its field slot, static or element index), and the
 * value of that field in its referrer @from. *@d may be where the record
 * was (read before). */
static inline void ref_fill(struct viewbuild *b, int32_t index, uint64_t from_id, uint64_t to_id,
			    uint32_t from, uint32_t to, int k, struct dsl_href *d)
{
	const struct cls_aux *a = &b->aux[b->objs[from].cls];
	int32_t slot = -1;

	d->to = to;
	d->kind = (uint8_t)k;
	d->index = k == DSL_REF_ARRAY_ELEMENT ? index : -1;
	if (k == DSL_REF_STATIC_FIELD && index >= 0) {
		/* from: the class object */
		uint32_t ci = idmap_index_get(&b->clsmap, from_id == NO_ID ? b->objs[from].id
									  : from_id);

		if (ci != DSL_NOOBJ && index < b->aux[ci].nsslot)
			d->index = b->aux[ci].sslot[index];
	}
	if (k == DSL_REF_FIELD && index >= 0 && index < a->nslot)
		slot = a->slot[index];
	if (slot < 0)
		return;
	d->index = slot;
	/* (its class's objects carry values: else b->values[from], zero, is
	 * not read - a read of the array's untouched pages faults each in) */
	if (b->values && a->values && b->values[from]) {
		struct dsl_hval *v = &b->values[from][slot];

		if (b->cls[b->objs[from].cls].fields[slot].kind == DSL_FK_STRING) {
			uint32_t si = idmap_index_get(&b->strmap,
						      to_id == NO_ID ? b->objs[to].id : to_id);

			if (si != DSL_NOOBJ) {
				v->kind = DSL_HV_STR;
				v->u.s = b->s->strings[si].s;
			}
		} else {
			v->kind = DSL_HV_REF;
			v->u.ref = to;
		}
	}
}

/* The CLASS reference an object carries (MT_AP_HOBJ_CLASSREF), to @to. */
static struct dsl_href class_ref(uint32_t to)
{
	return (struct dsl_href){ .to = to, .index = -1, .kind = DSL_REF_CLASS };
}

/* Records of references copied ahead of the one read, in chunks (while the
 * view's references are written over the records, none of these is lost). */
#define STAGE 1024

/* Where the view's references go (build_refs()). */
struct place {
	const struct mt_ap_href *in; /* the records */
	size_t nin;
	struct mt_ap_href *ring;     /* records [ahead - 2 STAGE, ahead) at [i % (2 STAGE)] */
	size_t ahead;                /* records copied to the ring */
	struct dsl_href *out;        /* the view's references */
	size_t cap, n;               /* entries of out, and used */
	size_t lim;                  /* out[n] may be written while n < lim */
	bool over_records;           /* out is the records' own array: never written past
				      * what is in the ring */
	size_t lead;                 /* ... starting this many entries below the records
				      * (snapshot.refs_lead) */
	bool pooled;                 /* ... in a pool's mapping: never realloc'ed or freed */
	void *records;               /* the records' array, to free when out left it */
	size_t bound;                /* the most references the view can have */
};

/* out's end, or while over the records the first one not copied yet. */
static void set_lim(struct place *p)
{
	p->lim = p->over_records && p->ahead < p->nin ?
			 p->lead + p->ahead * sizeof(*p->in) / sizeof(*p->out) : p->cap;
}

/* Copy records to the ring until @i has STAGE records after it (or the last). */
static void stage(struct place *p, size_t i)
{
	while (p->ahead < p->nin && p->ahead <= i + STAGE) {
		size_t k = p->nin - p->ahead < STAGE ? p->nin - p->ahead : STAGE;

		memcpy(&p->ring[p->ahead % (2 * STAGE)], &p->in[p->ahead], k * sizeof(*p->in));
		p->ahead += k;
		set_lim(p);
	}
}

/* out[n] past lim: a larger array (the records' stays, for what is still to
 * read). Returns 0 or -ENOMEM. */
static int grow(struct place *p)
{
	struct dsl_href *o;

	if (p->over_records && (p->ahead < p->nin || p->pooled)) {
		o = util_big_alloc(p->bound, sizeof(*o));
		if (!o)
			return -ENOMEM;
		memcpy(o, p->out, p->n * sizeof(*o));
		p->over_records = false; /* p->records is freed at the end */
	} else {
		o = realloc(p->out, p->bound * sizeof(*o));
		if (!o)
			return -ENOMEM;
		if (p->over_records)
			p->records = o;
	}
	p->out = o;
	p->cap = p->bound;
	set_lim(p);
	return 0;
}

/* Room for the view's next reference: out[n] neither past out's end nor over
 * a record not copied yet. Returns 0 or -ENOMEM. */
static inline int room(struct place *p)
{
	return p->n < p->lim ? 0 : grow(p);
}

/* Open object @o's run of references at out[n]: its CLASS reference first
 * (whose target ref_first held), ref_first and nrefs set. */
static inline int open_run(struct viewbuild *b, struct place *p, size_t o)
{
	struct dsl_hobject *x = &b->objs[o];
	uint32_t cref = viewrefs_cref(b, x);

	x->ref_first = (uint32_t)p->n;
	x->nrefs = 0;
	if (cref == DSL_NOOBJ)
		return 0;
	if (room(p))
		return -ENOMEM;
	p->out[p->n++] = class_ref(cref);
	x->nrefs = 1;
	return 0;
}

/*
 * The records from @i on are not in their referrers' order (a tagged walk's,
 * a dump's): the runs of objects below @cur are in p->out, the others not
 * opened. Place them all in a new array, the records left after those placed
 * - a stable counting sort. Returns 0 or -ENOMEM.
 */
static int refs_unsorted(struct viewbuild *b, struct place *p, size_t i, size_t cur)
{
	size_t nrest = p->nin - i, at = 0, behind = p->ahead > i ? p->ahead - i : 0;
	struct mt_ap_href *rest = malloc((nrest ? nrest : 1) * sizeof(*rest));
	uint32_t *next = util_big_calloc(b->n + 1, sizeof(*next)), from, to;
	struct dsl_href *dst = NULL;
	int kind, err = -ENOMEM;

	if (!rest || !next)
		goto out;
	for (size_t k = 0; k < nrest; k++) /* what the ring holds, then the rest */
		memcpy(&rest[k], k < behind ? &p->ring[(i + k) % (2 * STAGE)] : &p->in[i + k],
		       sizeof(*rest));
	for (size_t k = 0; k < nrest; k++)
		if (ref_ends(b, &rest[k], &from, &to, &kind))
			next[from]++;
	dst = util_big_alloc(p->bound, sizeof(*dst));
	if (!dst)
		goto out;
	for (size_t o = 0; o < b->n; o++) {
		struct dsl_hobject *x = &b->objs[o];
		uint32_t more = next[o];

		if (o < cur) {
			memcpy(&dst[at], &p->out[x->ref_first], x->nrefs * sizeof(*dst));
			x->ref_first = (uint32_t)at;
			at += x->nrefs;
		} else {
			uint32_t cref = viewrefs_cref(b, x);

			x->ref_first = (uint32_t)at;
			x->nrefs = 0;
			if (cref != DSL_NOOBJ) {
				dst[at++] = class_ref(cref);
				x->nrefs = 1;
			}
		}
		next[o] = (uint32_t)at;
		at += more;
		x->nrefs += more;
	}
	for (size_t k = 0; k < nrest; k++)
		if (ref_ends(b, &rest[k], &from, &to, &kind))
			ref_fill(b, rest[k].index, rest[k].from, rest[k].to, from, to, kind,
				 &dst[next[from]++]);
	if (!p->over_records)
		free(p->out);
	p->out = dst;
	p->cap = p->bound;
	p->n = at;
	p->over_records = false;
	set_lim(p);
	err = 0;
out:
	free(rest);
	free(next);
	return err;
}

/* One thread's part of refs_by_pos(): the references of objects [lo, hi);
 * the first that makes no sense stops it (bad: its index, err set). */
struct pos_part {
	struct viewbuild *b;
	uint32_t lo, hi;
	size_t bad;
	struct mt_ap_hrefpos r; /* the one that made no sense */
	int err;
};

static void pos_range(struct pos_part *p)
{
	struct viewbuild *b = p->b;
	struct mt_ap_hrefpos *in = b->take->refpos;
	struct dsl_href *d = (struct dsl_href *)(void *)in;

	for (uint32_t o = p->lo; o < p->hi; o++) {
		struct dsl_hobject *x = &b->objs[o];

		if (o >= b->pos_mid) /* the objects' second half: its run's true place */
			x->ref_first += (uint32_t)b->pos_off;
		if (b->runs)
			b->runs[o] = x->ref_first;

		for (size_t i = x->ref_first; i < (size_t)x->ref_first + x->nrefs; i++) {
			struct mt_ap_hrefpos r = in[i]; /* before d[i], its place, is written */
			int k = viewrefs_kind(r.kind);

			if (k < 0 || DSL_REF_IS_ROOT(k) || r.to >= b->n) {
				p->bad = i;
				p->r = r;
				p->err = -EINVAL;
				return;
			}
			ref_fill(b, r.index, NO_ID, NO_ID, o, r.to, k, &d[i]);
		}
	}
}

static void *pos_run(void *arg)
{
	pos_range(arg);
	return NULL;
}

bool viewrefs_two_threads(size_t n, size_t min)
{
	const char *env = getenv("MEMTRACE_VIEW_THREADS"); /* tests: "1" or "2" */

	return env ? !strcmp(env, "2") : n >= min && util_cpus() >= 2;
}

/* Object @o's ref_first, whether placed yet or not (b->pos_mid). */
static size_t true_first(const struct viewbuild *b, uint32_t o)
{
	return b->objs[o].ref_first + (o >= b->pos_mid ? b->pos_off : 0);
}

/* References by position for refs_by_pos() to split in two threads: at
 * least this many, with two CPUs to run on (10 M objects and 25 M
 * references: the whole view 169-184 -> 145-173 ms, its records' mapping
 * thread beside them) */
#define POS_SPLIT_MIN (1u << 20)

/*
 * References by position where the copy wrote them (b->take->refpos): each
 * record becomes the view's reference in its place, the runs set by the
 * objects' counts (viewobjs.c, whose second half's runs it moves to their
 * place as it goes: b->pos_off); many in two threads, each the references of
 * half the objects (ref_fill() writes only its reference and its referrer's
 * values). Returns 0, or -EINVAL with b->why (a kind the view has no
 * reference of, a position past the objects).
 */
static int refs_by_pos(struct viewbuild *b, struct dsl_href **out, size_t *n)
{
	struct mt_snapshot *t = b->take;
	struct pos_part part[2] = { { .b = b, .lo = 0, .hi = (uint32_t)b->n },
				    { .b = b, .hi = (uint32_t)b->n } };
	size_t nin = t->nrefpos;
	bool split = viewrefs_two_threads(nin, POS_SPLIT_MIN);
	bool two = false;
	pthread_t th;

	_Static_assert(sizeof(struct mt_ap_hrefpos) == sizeof(struct dsl_href),
		       "a reference by position is a view's");
	if (split && b->n > 1) {
		uint32_t lo = 0, hi = (uint32_t)b->n; /* the first object past half */

		while (lo < hi) {
			uint32_t m = lo + (hi - lo) / 2;

			if (true_first(b, m) < nin / 2)
				lo = m + 1;
			else
				hi = m;
		}
		part[0].hi = part[1].lo = lo;
		two = !pthread_create(&th, NULL, pos_run, &part[1]);
		if (!two)
			part[0].hi = (uint32_t)b->n; /* all here */
	}
	pos_range(&part[0]);
	if (two)
		pthread_join(th, NULL);
	for (int k = 0; k < 2; k++) {
		if (!part[k].err)
			continue;
		snprintf(b->why, b->wn, "the frozen copy's reference %zu (kind %u, to %u of %zu "
			 "objects) makes no sense: the snapshot is corrupt", part[k].bad,
			 part[k].r.kind, part[k].r.to, b->n);
		return -EINVAL;
	}
	if (b->runs)
		b->runs[b->n] = (uint32_t)nin;
	*out = (struct dsl_href *)(void *)t->refpos;
	t->refpos = NULL; /* the view's now (in the pool, which the view holds) */
	t->nrefpos = 0;
	*n = nin;
	return 0;
}

int viewrefs_build(struct viewbuild *b, struct dsl_href **out, size_t *n)
{
	const struct mt_snapshot *s = b->s;
	struct place p = { .in = s->refs, .nin = s->nrefs, .bound = s->nrefs + b->nclassrefs };
	size_t cur = 0;
	int err = -ENOMEM;

	if (b->take && b->take->refpos)
		return refs_by_pos(b, out, n);
	p.ring = malloc(2 * STAGE * sizeof(*p.ring));
	if (!p.ring)
		return -ENOMEM;
	if (b->take && p.nin) {
		p.out = (struct dsl_href *)b->take->refs;
		p.pooled = b->take->recs_pooled; /* the pool's: the view's with it */
		p.records = p.pooled ? NULL : p.out;
		p.cap = b->take->cap_refs * sizeof(*p.in) / sizeof(*p.out);
		if (p.pooled && b->take->refs_lead) { /* from below the records */
			p.lead = b->take->refs_lead;
			p.out -= p.lead;
			p.cap += p.lead;
		}
		p.over_records = true;
		b->take->refs = NULL; /* ours now: p.records */
	} else {
		p.out = util_big_alloc(p.bound, sizeof(*p.out));
		p.cap = p.bound;
		if (!p.out)
			goto out;
	}
	set_lim(&p);
	for (size_t i = 0; i < p.nin; i++) {
		const struct mt_ap_href *r = &p.ring[i % (2 * STAGE)];
		uint32_t from, to;
		int kind;

		stage(&p, i);
		if (!ref_ends(b, r, &from, &to, &kind))
			continue;
		if (from + 1 < cur) { /* its run is behind */
			err = refs_unsorted(b, &p, i, cur);
			if (err)
				goto out;
			cur = b->n;
			break;
		}
		for (; cur <= from; cur++)
			if (open_run(b, &p, cur))
				goto out;
		if (room(&p))
			goto out;
		ref_fill(b, r->index, r->from, r->to, from, to, kind, &p.out[p.n++]);
		b->objs[from].nrefs++;
	}
	for (; cur < b->n; cur++)
		if (open_run(b, &p, cur))
			goto out;
	*out = p.out;
	*n = p.n;
	if (p.records == p.out)
		p.records = NULL;
	p.out = NULL;
	err = 0;
out:
	if (p.out != p.records && !(p.pooled && p.over_records))
		free(p.out);
	free(p.records);
	free(p.ring);
	return err;
}
