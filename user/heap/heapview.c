// SPDX-License-Identifier: GPL-2.0
/* heapview.c - the struct dsl_heap a query runs on, built from a snapshot
 * (see heapview.h): ids become indexes (lib/idmap.h's idmap_index), each
 * object's references one run of the reference array - over the snapshot's
 * own object and reference arrays when the caller is done with them
 * (heapview_build_take()). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heapview.h"
#include "heap/recpool.h"
#include "heap/viewobjs.h"
#include "heap/viewrefs.h"
#include "lib/idmap.h"
#include "lib/util.h"

/* DSL_NOOBJ is the index's "no position": a miss is "no object". */
_Static_assert(DSL_NOOBJ == IDMAP_NOIDX, "DSL_NOOBJ is IDMAP_NOIDX");

/* Hand @p (malloc'ed) to @hv, which frees it. Returns 0 or -ENOMEM (then @p
 * is still the caller's). */
static int adopt(struct mt_heapview *hv, void *p)
{
	if (snapshot_grow(&hv->owned, &hv->cap_owned, hv->nowned, 1, sizeof(void *)))
		return -ENOMEM;
	hv->owned[hv->nowned++] = p;
	return 0;
}

/* A zeroed array of @n (at least 1) entries of @esz bytes, owned by @hv
 * (freed by heapview_free()); NULL on ENOMEM. */
static void *own(struct mt_heapview *hv, size_t n, size_t esz)
{
	void *p = util_big_calloc(n, esz);

	if (p && adopt(hv, p)) {
		free(p);
		return NULL;
	}
	return p;
}

void heapview_free(struct mt_heapview *hv)
{
	for (size_t i = 0; i < hv->nowned; i++)
		free(hv->owned[i]);
	free(hv->owned);
	referrers_free(&hv->referrers);
	dominators_free(&hv->dom);
	free(hv->via);
	free(hv->parent);
	recpool_free(hv->pool);
	memset(hv, 0, sizeof(*hv));
}

unsigned heapview_graph_for(const struct dsl_needs *n)
{
	return (n->referrers ? HEAPVIEW_REFERRERS : 0) | (n->retained ? HEAPVIEW_RETAINED : 0) |
	       (n->root_path ? HEAPVIEW_PATHS : 0);
}

int heapview_graph(struct mt_heapview *hv, unsigned what, char *why, size_t wn)
{
	struct dsl_heap *h = &hv->heap;
	uint64_t t0;

	if ((what & HEAPVIEW_REFERRERS) && !hv->referrers.first) {
		t0 = mono_ns();
		if (referrers_build(h, &hv->referrers))
			goto nomem;
		hv->referrers_ns = mono_ns() - t0;
		h->referrer_first = hv->referrers.first;
		h->referrer = hv->referrers.from;
	}
	if ((what & HEAPVIEW_RETAINED) && !hv->dom.idom) {
		t0 = mono_ns();
		if (dominators_compute(h, &hv->dom))
			goto nomem;
		hv->dom_ns = mono_ns() - t0;
		h->retained = hv->dom.retained;
	}
	if ((what & HEAPVIEW_PARENTS) && hv->via && !hv->parent) { /* again, with them */
		free(hv->via);
		hv->via = NULL;
		h->root_via = NULL;
	}
	if ((what & (HEAPVIEW_PATHS | HEAPVIEW_PARENTS)) && !hv->via) {
		t0 = mono_ns();
		if (rootpaths_build(h, &hv->via, (what & HEAPVIEW_PARENTS) ? &hv->parent : NULL))
			goto nomem;
		hv->paths_ns = mono_ns() - t0;
		h->root_via = hv->via;
		h->root_parent = hv->parent;
	}
	return 0;
nomem:
	snprintf(why, wn, "out of memory for the heap's graph indexes (%u objects, %u references)",
		 h->nobjects, h->nrefs + h->nimplied);
	return -ENOMEM;
}

static enum dsl_field_kind field_kind(char t)
{
	switch (t) {
	case 'B': case 'C': case 'S': case 'I': case 'J': return DSL_FK_INT;
	case 'F': case 'D': return DSL_FK_FLOAT;
	case 'Z': return DSL_FK_BOOL;
	case 'T': return DSL_FK_STRING;
	default: return DSL_FK_REF;
	}
}

static bool name_needed(const struct dsl_needs *needs, const char *name)
{
	if (!needs)
		return true;
	for (int i = 0; i < needs->nfields; i++)
		if (!strcmp(needs->fields[i], name))
			return true;
	return false;
}

/* Why a heap has no interfaces (NULL: every class says what it is). */
static const char *why_no_ifaces(const struct mt_snapshot *s)
{
	for (size_t i = 0; i < s->nclasses; i++) {
		if (s->classes[i].kind != MT_SNAP_UNKNOWN)
			continue;
		if (s->source && !strcmp(s->source, "hprof"))
			return "a heap dump (.hprof) records no interfaces (query the live JVM, "
			       "or a `memtrace snapshot` of it)";
		if (s->source && !strcmp(s->source, "live"))
			return "the agent in this JVM is older and sends no interfaces (it cannot "
			       "be unloaded: restart the JVM for a newer one)";
		return "this snapshot records no interfaces (saved by an older memtrace: save "
		       "it again)";
	}
	return NULL;
}

/*
 * A class whose kind is known but not its interfaces (the agent saw it loaded,
 * not linked) cannot change what `is` answers - it has no instance and no
 * class with instances extends it - unless arrays of it have instances (E[]
 * is an F[] when E is an F). Then the reason, in @buf; else NULL.
 */
static const char *unknown_ifaces_matter(const struct mt_snapshot *s, const struct dsl_hclass *cls,
					 const struct cls_aux *aux, char *buf, size_t n)
{
	for (size_t i = 0; i < s->nclasses; i++) {
		const char *a = cls[i].name;
		size_t len = strlen(a);

		if (!aux[i].inst || len < 3 || strcmp(a + len - 2, "[]"))
			continue;
		while (len > 2 && !strcmp(a + len - 2, "[]"))
			len -= 2;
		for (size_t j = 0; j < s->nclasses; j++)
			if (s->classes[j].ifaces_unknown && !strncmp(cls[j].name, a, len) &&
			    !cls[j].name[len]) {
				snprintf(buf, n, "the interfaces of %s are unknown (loaded, not linked "
					 "yet) and arrays of it exist", cls[j].name);
				return buf;
			}
	}
	return NULL;
}

/* [index] -> position map of a field table (-1 elsewhere), NULL if none. */
static int32_t *slot_map(const struct mt_snap_field *f, uint32_t n, int32_t base, int32_t *len)
{
	int32_t max = -1, *m;

	*len = 0;
	for (uint32_t k = 0; k < n; k++)
		if (f[k].index > max)
			max = f[k].index;
	if (max < 0 || max >= (1 << 20))
		return NULL;
	m = malloc(((size_t)max + 1) * sizeof(*m));
	if (!m)
		return NULL;
	memset(m, 0xff, ((size_t)max + 1) * sizeof(*m));
	for (uint32_t k = 0; k < n; k++)
		if (f[k].index >= 0)
			m[f[k].index] = base + (int32_t)k;
	*len = max + 1;
	return m;
}

#define DENSE_SAMPLES 64

/* Do the objects' ids run base + position (a frozen copy's mark numbers its
 * objects next_id + rank, a few named ones apart)? Some samples say. */
static bool ids_dense(const struct mt_snapshot *s, uint64_t *base)
{
	size_t n = s->nobjs, best = 0;
	uint64_t cand[DENSE_SAMPLES];

	if (n < DENSE_SAMPLES)
		return false;
	/* each sample's base (id - position); the most common one, if nearly
	 * all agree (any one object may be a named one: a class object, a
	 * thread, at the heap's end too) */
	for (size_t k = 0; k < DENSE_SAMPLES; k++) {
		size_t i = k * (n - 1) / (DENSE_SAMPLES - 1);

		cand[k] = s->objs[i].id >= i ? s->objs[i].id - i : UINT64_MAX;
	}
	for (size_t k = 0; k < DENSE_SAMPLES; k++) {
		size_t hits = 0;

		for (size_t j = 0; j < DENSE_SAMPLES; j++)
			hits += cand[j] == cand[k];
		if (cand[k] != UINT64_MAX && hits > best) {
			best = hits;
			*base = cand[k];
		}
	}
	return best >= DENSE_SAMPLES * 7 / 8;
}

/* Object record @o's size, added to *@total: 0, or -EINVAL with the reason
 * in b->why (a corrupt snapshot). */
static int check_object(struct viewbuild *b, const struct mt_ap_hobj *o, uint64_t *total)
{
	return viewobjs_check(o, total, b->why, b->wn);
}

/* b->fused: the objects of the classes and loaders, once every object's id
 * is indexed, and the CLASS references that lead to them counted. */
static void fused_objects(struct viewbuild *b)
{
	const struct mt_snapshot *s = b->s;

	for (size_t i = 0; i < s->nclasses; i++) {
		b->cls[i].obj = idmap_index_get(&b->objmap, s->classes[i].id);
		if (b->cls[i].obj != DSL_NOOBJ)
			b->nclassrefs += b->aux[i].pending;
	}
	for (uint32_t li = 0; li < b->nloaders; li++)
		b->loaders[li].obj = idmap_index_get(&b->objmap, b->loaders[li].id);
}

/* An object whose CLASS reference is found by id after every id is indexed. */
struct later_cref {
	uint32_t obj;
	uint64_t id;
};

/*
 * Check the objects' sizes and index the ids: objects (a take's dense ids:
 * as the objects are built, b->fused), classes, loaders, strings. Returns 0,
 * -ENOMEM, or -EINVAL with the reason in @why.
 */
static int index_ids(struct viewbuild *b, char *why, size_t wn)
{
	const struct mt_snapshot *s = b->s;
	uint64_t total = 0, maxid = 0, maxcls = 0, maxload = 0, maxstr = 0, base = 0;
	bool dense = ids_dense(s, &base);
	int err = dense ? idmap_index_init_dense(&b->objmap, b->n, base) : 0;

	/* a take's dense ids: indexed as the objects are built (one pass over
	 * the records fewer: 20-25 ms at 5 M objects) */
	b->fused = dense && b->take;
	for (size_t i = 0; i < b->n && !err && !b->fused; i++) {
		const struct mt_ap_hobj *o = &s->objs[i];

		if (check_object(b, o, &total))
			return -EINVAL;
		maxid = o->id > maxid ? o->id : maxid;
		if (dense)
			err = idmap_index_put(&b->objmap, o->id, (uint32_t)i);
	}
	if (err)
		return err;
	if (!dense) {
		err = idmap_index_init(&b->objmap, b->n, maxid);
		for (size_t i = 0; i < b->n && !err; i++)
			err = idmap_index_put(&b->objmap, s->objs[i].id, (uint32_t)i);
		if (err)
			return err;
	}
	for (size_t i = 0; i < s->nclasses; i++) {
		maxcls = s->classes[i].id > maxcls ? s->classes[i].id : maxcls;
		maxload = s->classes[i].loader > maxload ? s->classes[i].loader : maxload;
	}
	for (size_t i = 0; i < s->nstrings; i++)
		maxstr = s->strings[i].obj > maxstr ? s->strings[i].obj : maxstr;
	if (idmap_index_init(&b->clsmap, b->ncls, maxcls) ||
	    idmap_index_init(&b->loadmap, s->nclasses, maxload) ||
	    idmap_index_init(&b->strmap, s->nstrings, maxstr))
		return -ENOMEM;
	for (size_t i = 0; i < s->nclasses; i++)
		if (idmap_index_put(&b->clsmap, s->classes[i].id, (uint32_t)i))
			return -ENOMEM;
	for (size_t i = 0; i < s->nstrings; i++)
		if (idmap_index_put(&b->strmap, s->strings[i].obj, (uint32_t)i))
			return -ENOMEM;
	return 0;
}

/* The classes (and their loaders, fields, interfaces, statics) into b->cls. */
static int build_classes(struct viewbuild *b, struct dsl_hloader *loaders, uint32_t *nloaders,
			 struct dsl_hstatic *statics, uint32_t *nstatics)
{
	const struct mt_snapshot *s = b->s;
	struct dsl_hclass *cls = b->cls;
	struct cls_aux *aux = b->aux;

	for (size_t i = 0; i < s->nclasses; i++) {
		const struct mt_snap_class *c = &s->classes[i];
		struct dsl_hfield *f = own(b->hv, c->nfields, sizeof(*f));
		char nb[1024];
		char *name;
		int32_t maxi = -1;

		if (!f)
			return -ENOMEM;
		if (c->name) {
			name = (char *)c->name;
		} else {
			snapshot_java_name(c->sig, nb, sizeof(nb));
			name = own(b->hv, strlen(nb) + 1, 1);
			if (!name)
				return -ENOMEM;
			memcpy(name, nb, strlen(nb) + 1);
		}
		cls[i].name = name;
		cls[i].obj = idmap_index_get(&b->objmap, c->id);
		cls[i].super = c->super ? idmap_index_get(&b->clsmap, c->super) : DSL_NOOBJ;
		cls[i].loader = DSL_NOOBJ;
		if (c->loader) {
			uint32_t li = idmap_index_get(&b->loadmap, c->loader);

			if (li == DSL_NOOBJ) {
				li = (*nloaders)++;
				if (idmap_index_put(&b->loadmap, c->loader, li))
					return -ENOMEM;
				loaders[li].obj = idmap_index_get(&b->objmap, c->loader);
				loaders[li].id = c->loader;
			}
			cls[i].loader = li;
		}
		for (uint32_t k = 0; k < c->nfields; k++) {
			f[k].name = c->fields[k].name;
			f[k].kind = field_kind(c->fields[k].type);
			if (c->fields[k].index > maxi)
				maxi = c->fields[k].index;
			if (name_needed(b->needs, f[k].name))
				aux[i].values = true;
		}
		cls[i].fields = f;
		cls[i].nfields = c->nfields;
		cls[i].kind = c->kind == MT_SNAP_CLASS ? DSL_CK_CLASS :
			      c->kind == MT_SNAP_INTERFACE ? DSL_CK_INTERFACE : DSL_CK_UNKNOWN;
		if (c->nifaces) {
			uint32_t *ifs = own(b->hv, c->nifaces, sizeof(*ifs));

			if (!ifs)
				return -ENOMEM;
			for (uint32_t k = 0; k < c->nifaces; k++) {
				uint32_t ii = idmap_index_get(&b->clsmap, c->ifaces[k]);

				if (ii != DSL_NOOBJ)
					ifs[cls[i].nifaces++] = ii;
			}
			cls[i].ifaces = ifs;
		}
		if (c->nstatics) {
			aux[i].sslot = slot_map(c->statics, c->nstatics, (int32_t)*nstatics,
						&aux[i].nsslot);
			for (uint32_t k = 0; k < c->nstatics; k++)
				statics[(*nstatics)++] = (struct dsl_hstatic){ c->statics[k].name,
									      (uint32_t)i };
		}
		if (c->nfields || (name[0] && strstr(name, "[]")))
			aux[i].known = true; /* instance fields or an array: not an interface */
		if (maxi >= 0 && maxi < (1 << 20)) {
			aux[i].slot = malloc(((size_t)maxi + 1) * sizeof(int32_t));
			if (!aux[i].slot)
				return -ENOMEM;
			aux[i].nslot = maxi + 1;
			memset(aux[i].slot, 0xff, ((size_t)maxi + 1) * sizeof(int32_t));
			for (uint32_t k = 0; k < c->nfields; k++)
				aux[i].slot[c->fields[k].index] = (int32_t)k;
		}
	}
	cls[b->unknown].name = "<unknown class>";
	cls[b->unknown].obj = cls[b->unknown].super = cls[b->unknown].loader = DSL_NOOBJ;
	return 0;
}

/* b->values_of: object @i's values (viewrefs.h). */
static int values_of(struct viewbuild *b, size_t i)
{
	const struct dsl_hobject *d = &b->objs[i];
	const struct dsl_hclass *c = &b->cls[d->cls];
	struct dsl_hval *v;

	if (!b->values || !b->aux[d->cls].values || !c->nfields)
		return 0;
	v = own(b->hv, c->nfields, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t k = 0; k < c->nfields; k++) {
		switch (c->fields[k].kind) {
		case DSL_FK_INT: v[k].kind = DSL_HV_INT; break;
		case DSL_FK_FLOAT: v[k].kind = DSL_HV_FLOAT; break;
		case DSL_FK_BOOL: v[k].kind = DSL_HV_BOOL; break;
		default: break;
		}
	}
	b->values[i] = v;
	b->hv->value_objects++;
	return 0;
}

/*
 * The objects into b->objs: in the snapshot's own array when b->take (an
 * object of the view over its record, both 32 bytes), else in a new one;
 * their values and ages into b->values and b->ages when a program reads
 * them (NULL otherwise). Until the references are placed, ref_first holds
 * the index of the object's implied CLASS reference (MT_AP_HOBJ_CLASSREF) or
 * DSL_NOOBJ, and nrefs 0 - or, b->fused, 1 + the class whose object that
 * reference leads to (viewrefs_cref()). References by position: each
 * object's run set from its count (viewobjs_by_pos()).
 */
static int build_objects(struct viewbuild *b)
{
	const struct mt_snapshot *s = b->s;
	const struct mt_ap_hobj *in = s->objs;
	struct dsl_hobject *out;
	struct later_cref *later = NULL;
	size_t nlater = 0, caplater = 0;
	uint64_t total = 0;
	bool any_values = false, pos = b->take && b->take->refpos;
	struct viewobjs_cls cc;

	memset(&cc, 0, sizeof(cc));
	for (uint32_t c = 0; c < b->ncls && !any_values; c++)
		any_values = b->aux[c].values && b->cls[c].nfields;
	if (any_values) {
		/* zeroed by the kernel: only the pages of objects with values
		 * are ever touched */
		b->values = own(b->hv, b->n, sizeof(*b->values));
		if (!b->values)
			return -ENOMEM;
	}
	b->hv->cls_count = own(b->hv, b->ncls, sizeof(*b->hv->cls_count));
	b->hv->cls_bytes = own(b->hv, b->ncls, sizeof(*b->hv->cls_bytes));
	if (!b->hv->cls_count || !b->hv->cls_bytes) /* zeroed */
		return -ENOMEM;
	b->cls_count = b->hv->cls_count;
	b->cls_bytes = b->hv->cls_bytes;
	b->values_of = values_of;
	if (s->has_ages && (!b->needs || b->needs->age)) { /* only a program reads them */
		b->ages = own(b->hv, b->n, sizeof(*b->ages));
		if (!b->ages)
			return -ENOMEM;
	}
	/* a view's object is as large as a record: over the records when the
	 * view may take them (each object where its record was) */
	_Static_assert(sizeof(*out) == sizeof(*in), "a view's object is a record's size");
	if (b->take && b->n) { /* the pool's (the view's with it), or adopted */
		out = (struct dsl_hobject *)(void *)b->take->objs;
		b->take->objs = NULL;
		if (!b->take->recs_pooled && adopt(b->hv, out)) {
			free(out);
			return -ENOMEM;
		}
		in = (const struct mt_ap_hobj *)(const void *)out;
	} else {
		out = own(b->hv, b->n, sizeof(*out));
		if (!out)
			return -ENOMEM;
	}
	b->objs = out;
	if (pos) {
		int err = viewobjs_by_pos(b);

		if (!err && b->fused) /* every id indexed: the classes' and loaders' objects */
			fused_objects(b);
		return err;
	}
	for (size_t i = 0; i < b->n; i++) {
		struct dsl_hobject *d = &out[i];
		struct mt_ap_hobj o;
		uint32_t ci, cref = DSL_NOOBJ, pending = 0;

		memcpy(&o, &in[i], sizeof(o)); /* read before out[i] (which may be it) is written */
		if (b->fused) {
			int err = check_object(b, &o, &total);

			if (!err)
				err = idmap_index_put(&b->objmap, o.id, (uint32_t)i);
			if (err) {
				free(later);
				return err;
			}
		}
		ci = viewobjs_cls_index(b, &cc, o.cls);

		if ((o.flags & MT_AP_HOBJ_CLASSREF) && ci != DSL_NOOBJ && b->fused) {
			/* its class's object, whose index is known once every id
			 * is: nrefs holds the class until then (viewrefs_cref()) */
			pending = ci + 1;
			b->aux[ci].pending++;
		} else if ((o.flags & MT_AP_HOBJ_CLASSREF) && ci != DSL_NOOBJ) {
			cref = b->cls[ci].obj; /* the class object: its class's */
		} else if ((o.flags & MT_AP_HOBJ_CLASSREF) && !b->fused) {
			cref = idmap_index_get(&b->objmap, o.cls); /* or by id */
		} else if (o.flags & MT_AP_HOBJ_CLASSREF) { /* by id, once all are indexed */
			if (nlater == caplater) {
				size_t cap = caplater ? 2 * caplater : 256;
				struct later_cref *l = realloc(later, cap * sizeof(*l));

				if (!l) {
					free(later);
					return -ENOMEM;
				}
				later = l;
				caplater = cap;
			}
			later[nlater++] = (struct later_cref){ (uint32_t)i, o.cls };
		}
		b->nclassrefs += cref != DSL_NOOBJ;
		d->id = o.id;
		d->size = o.size;
		d->cls = ci == DSL_NOOBJ ? b->unknown : ci;
		d->length = o.length < 0 ? -1 : o.length;
		d->ref_first = cref;
		d->nrefs = pending;
		b->aux[d->cls].known = b->aux[d->cls].inst = true; /* an instance: a class */
		b->hv->cls_count[d->cls]++;
		b->hv->cls_bytes[d->cls] += d->size;
		if (b->ages) {
			uint64_t age = snapshot_age(s, o.id);

			b->ages[i] = age > UINT32_MAX ? UINT32_MAX : (uint32_t)age;
		}
		if (values_of(b, i)) {
			free(later);
			return -ENOMEM;
		}
	}
	for (size_t k = 0; k < nlater; k++) { /* class objects found by id */
		uint32_t cref = idmap_index_get(&b->objmap, later[k].id);

		out[later[k].obj].ref_first = cref;
		b->nclassrefs += cref != DSL_NOOBJ;
	}
	free(later);
	if (b->fused) /* every id indexed: the classes' and loaders' objects */
		fused_objects(b);
	return 0;
}

/* The primitive values into the objects that carry values (if any does). */
static void build_prims(struct viewbuild *b)
{
	const struct mt_snapshot *s = b->s;

	for (size_t i = 0; i < s->nprims && b->hv->value_objects; i++) {
		const struct mt_ap_hprim *p = &s->prims[i];
		uint32_t oi = idmap_index_get(&b->objmap, p->obj);
		struct dsl_hval *v;
		int32_t slot;

		if (oi == DSL_NOOBJ || !b->values || !b->values[oi])
			continue;
		if (p->index < 0 || p->index >= b->aux[b->objs[oi].cls].nslot)
			continue;
		slot = b->aux[b->objs[oi].cls].slot[p->index];
		if (slot < 0)
			continue;
		v = &b->values[oi][slot];
		switch (b->cls[b->objs[oi].cls].fields[slot].kind) {
		case DSL_FK_INT: v->u.i = (int64_t)p->bits; break;
		case DSL_FK_FLOAT: memcpy(&v->u.f, &p->bits, 8); break;
		case DSL_FK_BOOL: v->u.b = p->bits != 0; break;
		default: break;
		}
	}
}

/* The view's references (viewrefs.h), owned by the view. 0 or -ENOMEM. */
static int build_refs(struct viewbuild *b)
{
	struct dsl_href *refs;
	size_t n;
	int err = viewrefs_build(b, &refs, &n);

	if (err)
		return err;
	if (!recpool_contains(b->hv->pool, refs, 1) && adopt(b->hv, refs)) {
		free(refs);
		return -ENOMEM;
	}
	b->hv->heap.refs = refs;
	b->hv->heap.nrefs = (uint32_t)n;
	return 0;
}

/* Is @o a virtual thread (java.lang.BaseVirtualThread's subclasses: VirtualThread,
 * ThreadBuilders$BoundVirtualThread)? */
static bool is_vthread(const struct viewbuild *b, uint32_t o)
{
	uint32_t c = b->objs[o].cls;

	for (int depth = 0; c != DSL_NOOBJ && c < b->ncls && depth < 64; depth++) {
		const char *n = b->cls[c].name;

		if (n && (!strcmp(n, "java.lang.BaseVirtualThread") ||
			  !strcmp(n, "java.lang.VirtualThread")))
			return true;
		c = b->cls[c].super;
	}
	return false;
}

/*
 * Roots and threads whose objects are in the heap. A local is a virtual
 * thread's when the copy's mark found it in a parked one's stack chunk
 * (MT_AP_HROOT_VTHREAD), or when it follows an OTHER root to a virtual
 * thread: JVMTI (JDK 21+, JDK-8299414) reports a carrier's mounted virtual
 * thread so - that OTHER root, the virtual thread's frames, then the
 * carrier's THREAD root and its own frames. A marker (MT_AP_HROOT_TID, no
 * root: the copy's mark puts one before either's locals, JVMTI's walks
 * before each thread's) gives the tid of the thread whose locals follow; a
 * non-local root ends them.
 */
static void build_roots(struct viewbuild *b, struct dsl_hroot *roots, struct dsl_hthread *threads)
{
	const struct mt_snapshot *s = b->s;
	uint32_t nroots = 0, nt = 0;
	bool mounted = false; /* after an OTHER root to a virtual thread */
	uint64_t tid = 0;     /* the virtual thread's whose locals these are */

	for (size_t i = 0; i < s->nroots; i++) {
		uint32_t to, f = s->roots[i].flags;
		int k = viewrefs_kind(s->roots[i].kind);
		bool local = k == DSL_ROOT_STACK_LOCAL || k == DSL_ROOT_JNI_LOCAL;

		if (f & MT_AP_HROOT_TID) { /* `to` is a tid, not an object */
			tid = s->roots[i].to;
			continue;
		}
		to = idmap_index_get(&b->objmap, s->roots[i].to);
		if (to == DSL_NOOBJ || k < 0 || !DSL_REF_IS_ROOT(k))
			continue;
		if (!local) {
			mounted = k == DSL_ROOT_OTHER && is_vthread(b, to);
			tid = 0;
		}
		roots[nroots].obj = to;
		roots[nroots].kind = (uint8_t)k;
		roots[nroots].vthread = (f & MT_AP_HROOT_VTHREAD) || (local && mounted);
		roots[nroots].vtid = local && roots[nroots].vthread ? tid : 0;
		nroots++;
	}
	for (size_t i = 0; i < s->nthreads; i++) {
		uint32_t o = idmap_index_get(&b->objmap, s->threads[i].id);

		if (o == DSL_NOOBJ)
			continue;
		threads[nt].obj = o;
		threads[nt].name = s->threads[i].name;
		nt++;
	}
	b->hv->heap.roots = roots;
	b->hv->heap.nroots = nroots;
	b->hv->heap.threads = threads;
	b->hv->heap.nthreads = nt;
}

/* What the heap says of interfaces, class kinds and ages. */
static int build_kinds(struct viewbuild *b)
{
	const struct mt_snapshot *s = b->s;
	struct dsl_hclass *cls = b->cls;
	struct mt_heapview *hv = b->hv;

	/* a source that does not say which classes are interfaces: a class with
	 * instances, instance fields or a subclass, or an array class, is none */
	hv->heap.no_ifaces = why_no_ifaces(s);
	if (!hv->heap.no_ifaces) {
		char buf[512], *w;
		const char *r = unknown_ifaces_matter(s, cls, b->aux, buf, sizeof(buf));

		if (r) {
			w = own(hv, strlen(r) + 1, 1);
			if (!w)
				return -ENOMEM;
			memcpy(w, r, strlen(r) + 1);
			hv->heap.no_ifaces = w;
		}
	}
	for (uint32_t i = 0; i + 1 < b->ncls; i++)
		if (cls[i].super != DSL_NOOBJ)
			b->aux[cls[i].super].known = true;
	for (uint32_t i = 0; i + 1 < b->ncls; i++)
		if (cls[i].kind == DSL_CK_UNKNOWN && b->aux[i].known)
			cls[i].kind = DSL_CK_CLASS;
	cls[b->unknown].kind = DSL_CK_CLASS;
	if (!s->has_ages)
		hv->heap.no_age = s->source && !strcmp(s->source, "hprof") ?
			"a heap dump (.hprof) carries no GC history" :
			s->source && !strcmp(s->source, "live") ?
			"the agent in this JVM sends no GC history (an older memtrace agent)" :
			"this snapshot carries no GC history (saved by an older memtrace)";
	return 0;
}

static int build(const struct mt_snapshot *s, struct mt_snapshot *take,
		 const struct dsl_needs *needs, struct mt_heapview *hv, char *why, size_t wn)
{
	struct viewbuild b = { .s = s, .take = take, .needs = needs, .hv = hv, .n = s->nobjs,
			       .why = why, .wn = wn };
	struct dsl_hloader *loaders;
	struct dsl_hthread *threads;
	struct dsl_hroot *roots;
	struct dsl_hstatic *statics;
	uint32_t nloaders = 0, nstatics = 0;
	int err;

	memset(hv, 0, sizeof(*hv));
	if (take && take->recs_pooled) { /* the view lies in the pool: the view's now */
		hv->pool = take->own_pool;
		take->own_pool = NULL;
	}
	if (s->refpos && !take) { /* only a view built where they lie reads them */
		snprintf(why, wn, "references by position cannot be copied into a view");
		err = -EINVAL;
		goto cleanup;
	}
	if (s->nobjs >= DSL_NOOBJ - 1 || s->nclasses >= DSL_NOOBJ - 1 ||
	    s->nrefs + s->nrefpos + s->nobjs >= DSL_VIA_NONE || s->nroots >= DSL_NOOBJ) {
		snprintf(why, wn, "the snapshot is too large (more than 2^32 entries)");
		err = -EINVAL;
		goto cleanup;
	}
	b.ncls = (uint32_t)s->nclasses + 1; /* + "<unknown class>" */
	b.unknown = b.ncls - 1;
	err = index_ids(&b, why, wn);
	if (err)
		goto cleanup;
	err = -ENOMEM;
	b.cls = own(hv, b.ncls, sizeof(*b.cls));
	loaders = own(hv, s->nclasses + 1, sizeof(*loaders));
	threads = own(hv, s->nthreads, sizeof(*threads));
	roots = own(hv, s->nroots, sizeof(*roots));
	for (size_t i = 0; i < s->nclasses; i++)
		nstatics += s->classes[i].nstatics;
	statics = own(hv, nstatics, sizeof(*statics));
	b.aux = calloc(b.ncls, sizeof(*b.aux));
	if (!b.cls || !loaders || !threads || !roots || !b.aux || !statics)
		goto cleanup;
	nstatics = 0;
	err = build_classes(&b, loaders, &nloaders, statics, &nstatics);
	b.loaders = loaders;
	b.nloaders = nloaders;
	if (!err)
		err = build_objects(&b);
	if (!err && b.take && b.take->refpos && (!needs || needs->retained)) {
		/* runs for the dominators' search (dsl_heap.ref_runs) */
		b.runs = own(hv, b.n + 1, sizeof(*b.runs));
		if (!b.runs)
			err = -ENOMEM;
	}
	if (!err) {
		build_prims(&b);
		err = build_refs(&b);
	}
	if (err)
		goto cleanup;
	build_roots(&b, roots, threads);
	if (b.cref_seen) { /* CLASS references implied: each class's target */
		uint32_t *cr = own(hv, b.ncls, sizeof(*cr));
		uint64_t implied = 0;

		if (!cr) {
			err = -ENOMEM;
			goto cleanup;
		}
		for (uint32_t c = 0; c < b.ncls; c++) {
			cr[c] = b.cref_seen[c] == 1 ? b.cls[c].obj : DSL_NOOBJ;
			if (cr[c] != DSL_NOOBJ)
				implied += b.cls_count[c];
		}
		hv->heap.class_ref = cr;
		hv->heap.nimplied = (uint32_t)implied;
	}
	hv->heap.objects = b.objs;
	hv->heap.nobjects = (uint32_t)b.n;
	hv->heap.values = (const struct dsl_hval *const *)b.values;
	hv->heap.ages = b.ages;
	hv->heap.ref_runs = b.runs;
	hv->heap.consistent = true; /* by construction (tests/fuzz/fuzz_readers.c) */
	hv->heap.classes = b.cls;
	hv->heap.nclasses = b.ncls;
	hv->heap.loaders = loaders;
	hv->heap.nloaders = nloaders;
	hv->heap.statics = statics;
	hv->heap.nstatics = nstatics;
	err = build_kinds(&b);
cleanup:
	if (err == -ENOMEM)
		snprintf(why, wn, "out of memory building the heap");
	if (b.aux)
		for (uint32_t i = 0; i < b.ncls; i++) {
			free(b.aux[i].slot);
			free(b.aux[i].sslot);
		}
	free(b.aux);
	free(b.cref_seen);
	idmap_index_free(&b.objmap);
	idmap_index_free(&b.clsmap);
	idmap_index_free(&b.loadmap);
	idmap_index_free(&b.strmap);
	if (take)
		snapshot_drop_records(take);
	if (err)
		heapview_free(hv);
	return err;
}

int heapview_build(const struct mt_snapshot *s, const struct dsl_needs *needs,
		   struct mt_heapview *hv, char *why, size_t wn)
{
	return build(s, NULL, needs, hv, why, wn);
}

int heapview_build_take(struct mt_snapshot *s, const struct dsl_needs *needs,
			struct mt_heapview *hv, char *why, size_t wn)
{
	int err = build(s, s, needs, hv, why, wn);

	/* the thread that mapped the records for it (snapmark.c in_place())
	 * ends with the view, not later beside the graph's work */
	recpool_map_wait(hv->pool ? hv->pool : s->own_pool, err != 0);
	return err;
}
