// SPDX-License-Identifier: GPL-2.0
/* heapview.c - the struct dsl_heap a query runs on, built from a snapshot
 * (see heapview.h): ids become indexes (lib/idmap.h's idmap_index), each
 * object's references one run of the reference array. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heapview.h"
#include "lib/idmap.h"
#include "lib/util.h"

/* DSL_NOOBJ is the index's "no position": a miss is "no object". */
_Static_assert(DSL_NOOBJ == IDMAP_NOIDX, "DSL_NOOBJ is IDMAP_NOIDX");

/* A zeroed array of @n (at least 1) entries of @esz bytes, owned by @hv
 * (freed by heapview_free()); NULL on ENOMEM. */
static void *own(struct mt_heapview *hv, size_t n, size_t esz)
{
	void *p;

	if (snapshot_grow(&hv->owned, &hv->cap_owned, hv->nowned, 1, sizeof(void *)))
		return NULL;
	p = calloc(n ? n : 1, esz);
	if (p)
		hv->owned[hv->nowned++] = p;
	if (p && n * esz >= (8u << 20))
		util_hugepages(p, n * esz);
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
	if ((what & HEAPVIEW_PATHS) && !hv->via) {
		t0 = mono_ns();
		if (rootpaths_build(h, &hv->via))
			goto nomem;
		hv->paths_ns = mono_ns() - t0;
		h->root_via = hv->via;
	}
	return 0;
nomem:
	snprintf(why, wn, "out of memory for the heap's graph indexes (%u objects, %u references)",
		 h->nobjects, h->nrefs);
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

static int ref_kind(uint32_t k)
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

static bool name_needed(const struct dsl_needs *needs, const char *name)
{
	if (!needs)
		return true;
	for (int i = 0; i < needs->nfields; i++)
		if (!strcmp(needs->fields[i], name))
			return true;
	return false;
}

struct cls_aux {
	int32_t *slot;  /* [JVMTI index] -> field slot, -1 */
	int32_t nslot;
	int32_t *sslot; /* [static field index] -> index in heap.statics, -1 */
	int32_t nsslot;
	bool values;    /* objects of this class carry values */
	bool known;     /* a class: instances, subclasses or fields say so (no kind given) */
	bool inst;      /* has instances */
};

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

#define HEAPVIEW_MAX_OBJECT (1ull << 35)   /* bytes: long[2^31 - 1] is 16 GiB */
#define HEAPVIEW_MAX_HEAP (1ull << 50)     /* bytes */

int heapview_build(const struct mt_snapshot *s, const struct dsl_needs *needs,
		   struct mt_heapview *hv, char *why, size_t wn)
{
	struct idmap_index objmap = { 0 }, clsmap = { 0 }, loadmap = { 0 }, strmap = { 0 };
	struct dsl_hobject *objs;
	struct dsl_hclass *cls;
	struct dsl_hloader *loaders;
	struct dsl_hthread *threads;
	struct dsl_hroot *roots;
	struct dsl_href *refs;
	struct dsl_hstatic *statics;
	struct cls_aux *aux = NULL;
	uint32_t *rcount = NULL, nroots = 0, nloaders = 0, unknown, ncls, nstatics = 0;
	size_t nrefs = 0;
	uint64_t maxid = 0, total = 0;
	int err = -ENOMEM;

	memset(hv, 0, sizeof(*hv));
	if (s->nobjs >= DSL_NOOBJ - 1 || s->nclasses >= DSL_NOOBJ - 1 ||
	    s->nrefs + s->nobjs >= DSL_VIA_NONE || s->nroots >= DSL_NOOBJ) {
		snprintf(why, wn, "the snapshot is too large (more than 2^32 entries)");
		return -EINVAL;
	}
	ncls = (uint32_t)s->nclasses + 1; /* + "<unknown class>" */
	unknown = ncls - 1;
	for (size_t i = 0; i < s->nobjs; i++) {
		/* no Java object exceeds 16 GiB (long[2^31 - 1]), no heap a PiB:
		 * a file that says otherwise is corrupt, and its sizes would wrap
		 * the sums (retained sizes, totals) */
		if (s->objs[i].size > HEAPVIEW_MAX_OBJECT || (total += s->objs[i].size) > HEAPVIEW_MAX_HEAP) {
			snprintf(why, wn, "object %llu claims %llu bytes (%s): the snapshot is corrupt",
				 (unsigned long long)s->objs[i].id,
				 (unsigned long long)s->objs[i].size,
				 s->objs[i].size > HEAPVIEW_MAX_OBJECT ? "no Java object exceeds 16 GiB" :
									 "the heap would exceed 1 PiB");
			return -EINVAL;
		}
		maxid = s->objs[i].id > maxid ? s->objs[i].id : maxid;
	}
	for (size_t i = 0; i < s->nclasses; i++) {
		maxid = s->classes[i].id > maxid ? s->classes[i].id : maxid;
		maxid = s->classes[i].loader > maxid ? s->classes[i].loader : maxid;
	}
	for (size_t i = 0; i < s->nstrings; i++)
		maxid = s->strings[i].obj > maxid ? s->strings[i].obj : maxid;
	if (idmap_index_init(&objmap, s->nobjs, maxid) || idmap_index_init(&clsmap, ncls, maxid) ||
	    idmap_index_init(&loadmap, s->nclasses, maxid) ||
	    idmap_index_init(&strmap, s->nstrings, maxid))
		goto cleanup;
	objs = own(hv, s->nobjs, sizeof(*objs));
	cls = own(hv, ncls, sizeof(*cls));
	loaders = own(hv, s->nclasses + 1, sizeof(*loaders));
	threads = own(hv, s->nthreads, sizeof(*threads));
	roots = own(hv, s->nroots, sizeof(*roots));
	for (size_t i = 0; i < s->nclasses; i++)
		nstatics += s->classes[i].nstatics;
	statics = own(hv, nstatics, sizeof(*statics));
	aux = calloc(ncls, sizeof(*aux));
	rcount = calloc(s->nobjs + 1, sizeof(*rcount));
	if (!objs || !cls || !loaders || !threads || !roots || !aux || !rcount || !statics)
		goto cleanup;
	nstatics = 0;
	for (size_t i = 0; i < s->nobjs; i++)
		if (idmap_index_put(&objmap, s->objs[i].id, (uint32_t)i))
			goto cleanup;
	for (size_t i = 0; i < s->nclasses; i++)
		if (idmap_index_put(&clsmap, s->classes[i].id, (uint32_t)i))
			goto cleanup;
	for (size_t i = 0; i < s->nstrings; i++)
		if (idmap_index_put(&strmap, s->strings[i].obj, (uint32_t)i))
			goto cleanup;
	/* classes, loaders */
	for (size_t i = 0; i < s->nclasses; i++) {
		const struct mt_snap_class *c = &s->classes[i];
		struct dsl_hfield *f = own(hv, c->nfields, sizeof(*f));
		char nb[1024];
		char *name;
		int32_t maxi = -1;

		if (!f)
			goto cleanup;
		if (c->name) {
			name = (char *)c->name;
		} else {
			snapshot_java_name(c->sig, nb, sizeof(nb));
			name = own(hv, strlen(nb) + 1, 1);
			if (!name)
				goto cleanup;
			memcpy(name, nb, strlen(nb) + 1);
		}
		cls[i].name = name;
		cls[i].obj = idmap_index_get(&objmap, c->id);
		cls[i].super = c->super ? idmap_index_get(&clsmap, c->super) : DSL_NOOBJ;
		cls[i].loader = DSL_NOOBJ;
		if (c->loader) {
			uint32_t li = idmap_index_get(&loadmap, c->loader);

			if (li == DSL_NOOBJ) {
				li = nloaders++;
				if (idmap_index_put(&loadmap, c->loader, li))
					goto cleanup;
				loaders[li].obj = idmap_index_get(&objmap, c->loader);
				loaders[li].id = c->loader;
			}
			cls[i].loader = li;
		}
		for (uint32_t k = 0; k < c->nfields; k++) {
			f[k].name = c->fields[k].name;
			f[k].kind = field_kind(c->fields[k].type);
			if (c->fields[k].index > maxi)
				maxi = c->fields[k].index;
			if (name_needed(needs, f[k].name))
				aux[i].values = true;
		}
		cls[i].fields = f;
		cls[i].nfields = c->nfields;
		cls[i].kind = c->kind == MT_SNAP_CLASS ? DSL_CK_CLASS :
			      c->kind == MT_SNAP_INTERFACE ? DSL_CK_INTERFACE : DSL_CK_UNKNOWN;
		if (c->nifaces) {
			uint32_t *ifs = own(hv, c->nifaces, sizeof(*ifs));

			if (!ifs)
				goto cleanup;
			for (uint32_t k = 0; k < c->nifaces; k++) {
				uint32_t ii = idmap_index_get(&clsmap, c->ifaces[k]);

				if (ii != DSL_NOOBJ)
					ifs[cls[i].nifaces++] = ii;
			}
			cls[i].ifaces = ifs;
		}
		if (c->nstatics) {
			aux[i].sslot = slot_map(c->statics, c->nstatics, (int32_t)nstatics,
						&aux[i].nsslot);
			for (uint32_t k = 0; k < c->nstatics; k++)
				statics[nstatics++] = (struct dsl_hstatic){ c->statics[k].name,
									   (uint32_t)i };
		}
		if (c->nfields || (name[0] && strstr(name, "[]")))
			aux[i].known = true; /* instance fields or an array: not an interface */
		if (maxi >= 0 && maxi < (1 << 20)) {
			aux[i].slot = malloc(((size_t)maxi + 1) * sizeof(int32_t));
			if (!aux[i].slot)
				goto cleanup;
			aux[i].nslot = maxi + 1;
			memset(aux[i].slot, 0xff, ((size_t)maxi + 1) * sizeof(int32_t));
			for (uint32_t k = 0; k < c->nfields; k++)
				aux[i].slot[c->fields[k].index] = (int32_t)k;
		}
	}
	cls[unknown].name = "<unknown class>";
	cls[unknown].obj = cls[unknown].super = cls[unknown].loader = DSL_NOOBJ;
	/* objects */
	for (size_t i = 0; i < s->nobjs; i++) {
		const struct mt_ap_hobj *o = &s->objs[i];
		uint32_t ci = idmap_index_get(&clsmap, o->cls);

		objs[i].id = o->id;
		objs[i].cls = ci == DSL_NOOBJ ? unknown : ci;
		aux[objs[i].cls].known = aux[objs[i].cls].inst = true; /* an instance: a class */
		objs[i].size = o->size;
		objs[i].length = o->length < 0 ? -1 : o->length;
		if (s->has_ages) {
			uint64_t age = snapshot_age(s, o->id);

			objs[i].age = age > UINT32_MAX ? UINT32_MAX : (uint32_t)age;
		}
		if (aux[objs[i].cls].values && cls[objs[i].cls].nfields) {
			const struct dsl_hclass *c = &cls[objs[i].cls];
			struct dsl_hval *v = own(hv, c->nfields, sizeof(*v));

			if (!v)
				goto cleanup;
			for (uint32_t k = 0; k < c->nfields; k++) {
				switch (c->fields[k].kind) {
				case DSL_FK_INT: v[k].kind = DSL_HV_INT; break;
				case DSL_FK_FLOAT: v[k].kind = DSL_HV_FLOAT; break;
				case DSL_FK_BOOL: v[k].kind = DSL_HV_BOOL; break;
				default: break;
				}
			}
			objs[i].values = v;
			hv->value_objects++;
		}
	}
	/* primitive values */
	for (size_t i = 0; i < s->nprims; i++) {
		const struct mt_ap_hprim *p = &s->prims[i];
		uint32_t oi = idmap_index_get(&objmap, p->obj);
		struct dsl_hval *v;
		int32_t slot;

		if (oi == DSL_NOOBJ || !objs[oi].values)
			continue;
		if (p->index < 0 || p->index >= aux[objs[oi].cls].nslot)
			continue;
		slot = aux[objs[oi].cls].slot[p->index];
		if (slot < 0)
			continue;
		v = (struct dsl_hval *)&objs[oi].values[slot];
		switch (cls[objs[oi].cls].fields[slot].kind) {
		case DSL_FK_INT: v->u.i = (int64_t)p->bits; break;
		case DSL_FK_FLOAT: memcpy(&v->u.f, &p->bits, 8); break;
		case DSL_FK_BOOL: v->u.b = p->bits != 0; break;
		default: break;
		}
	}
	/* references: counted per referrer, then placed (a stable counting sort);
	 * first the CLASS references objects carry (MT_AP_HOBJ_CLASSREF), where
	 * the agent puts them among an object's own */
	for (size_t i = 0; i < s->nobjs; i++)
		if ((s->objs[i].flags & MT_AP_HOBJ_CLASSREF) &&
		    idmap_index_get(&objmap, s->objs[i].cls) != DSL_NOOBJ) {
			rcount[i]++;
			nrefs++;
		}
	for (size_t i = 0; i < s->nrefs; i++) {
		uint32_t from = idmap_index_get(&objmap, s->refs[i].from);
		uint32_t to = idmap_index_get(&objmap, s->refs[i].to);
		int k = ref_kind(s->refs[i].kind);

		if (from == DSL_NOOBJ || to == DSL_NOOBJ || k < 0 || DSL_REF_IS_ROOT(k))
			continue;
		rcount[from]++;
		nrefs++;
	}
	refs = own(hv, nrefs, sizeof(*refs));
	if (!refs)
		goto cleanup;
	{
		uint32_t acc = 0;

		for (size_t i = 0; i < s->nobjs; i++) {
			objs[i].ref_first = acc;
			acc += rcount[i];
			rcount[i] = objs[i].ref_first;
		}
	}
	for (size_t i = 0; i < s->nobjs; i++) {
		uint32_t to = s->objs[i].flags & MT_AP_HOBJ_CLASSREF ?
				      idmap_index_get(&objmap, s->objs[i].cls) : DSL_NOOBJ;

		if (to == DSL_NOOBJ)
			continue;
		refs[rcount[i]++] = (struct dsl_href){ .to = to, .index = -1,
						       .kind = DSL_REF_CLASS };
		objs[i].nrefs++;
	}
	for (size_t i = 0; i < s->nrefs; i++) {
		const struct mt_ap_href *r = &s->refs[i];
		uint32_t from = idmap_index_get(&objmap, r->from);
		uint32_t to = idmap_index_get(&objmap, r->to);
		int k = ref_kind(r->kind);
		struct dsl_href *d;
		const struct cls_aux *a;
		int32_t slot = -1;

		if (from == DSL_NOOBJ || to == DSL_NOOBJ || k < 0 || DSL_REF_IS_ROOT(k))
			continue;
		d = &refs[rcount[from]++];
		objs[from].nrefs++;
		d->to = to;
		d->kind = (uint8_t)k;
		d->index = k == DSL_REF_ARRAY_ELEMENT ? r->index : -1;
		if (k == DSL_REF_STATIC_FIELD && r->index >= 0) {
			uint32_t ci = idmap_index_get(&clsmap, r->from); /* from: the class object */

			if (ci != DSL_NOOBJ && r->index < aux[ci].nsslot)
				d->index = aux[ci].sslot[r->index];
		}
		a = &aux[objs[from].cls];
		if (k == DSL_REF_FIELD && r->index >= 0 && r->index < a->nslot)
			slot = a->slot[r->index];
		if (slot < 0)
			continue;
		d->index = slot;
		if (objs[from].values) {
			struct dsl_hval *v = (struct dsl_hval *)&objs[from].values[slot];

			if (cls[objs[from].cls].fields[slot].kind == DSL_FK_STRING) {
				uint32_t si = idmap_index_get(&strmap, r->to);

				if (si != DSL_NOOBJ) {
					v->kind = DSL_HV_STR;
					v->u.s = s->strings[si].s;
				}
			} else {
				v->kind = DSL_HV_REF;
				v->u.ref = to;
			}
		}
	}
	for (size_t i = 0; i < s->nroots; i++) {
		uint32_t to = idmap_index_get(&objmap, s->roots[i].to);
		int k = ref_kind(s->roots[i].kind);

		if (to == DSL_NOOBJ || k < 0 || !DSL_REF_IS_ROOT(k))
			continue;
		roots[nroots].obj = to;
		roots[nroots].kind = (uint8_t)k;
		nroots++;
	}
	{
		uint32_t nt = 0;

		for (size_t i = 0; i < s->nthreads; i++) {
			uint32_t o = idmap_index_get(&objmap, s->threads[i].id);

			if (o == DSL_NOOBJ)
				continue;
			threads[nt].obj = o;
			threads[nt].name = s->threads[i].name;
			nt++;
		}
		hv->heap.nthreads = nt;
	}
	hv->heap.objects = objs;
	hv->heap.nobjects = (uint32_t)s->nobjs;
	hv->heap.classes = cls;
	hv->heap.nclasses = ncls;
	hv->heap.refs = refs;
	hv->heap.nrefs = (uint32_t)nrefs;
	hv->heap.roots = roots;
	hv->heap.nroots = nroots;
	hv->heap.loaders = loaders;
	hv->heap.nloaders = nloaders;
	hv->heap.threads = threads;
	hv->heap.statics = statics;
	hv->heap.nstatics = nstatics;
	/* a source that does not say which classes are interfaces: a class with
	 * instances, instance fields or a subclass, or an array class, is none */
	hv->heap.no_ifaces = why_no_ifaces(s);
	if (!hv->heap.no_ifaces) {
		char b[512], *w;
		const char *r = unknown_ifaces_matter(s, cls, aux, b, sizeof(b));

		if (r) {
			w = own(hv, strlen(r) + 1, 1);
			if (!w)
				goto cleanup;
			memcpy(w, r, strlen(r) + 1);
			hv->heap.no_ifaces = w;
		}
	}
	for (uint32_t i = 0; i + 1 < ncls; i++)
		if (cls[i].super != DSL_NOOBJ)
			aux[cls[i].super].known = true;
	for (uint32_t i = 0; i + 1 < ncls; i++)
		if (cls[i].kind == DSL_CK_UNKNOWN && aux[i].known)
			cls[i].kind = DSL_CK_CLASS;
	cls[unknown].kind = DSL_CK_CLASS;
	if (!s->has_ages)
		hv->heap.no_age = s->source && !strcmp(s->source, "hprof") ?
			"a heap dump (.hprof) carries no GC history" :
			s->source && !strcmp(s->source, "live") ?
			"the agent in this JVM sends no GC history (an older memtrace agent)" :
			"this snapshot carries no GC history (saved by an older memtrace)";
	err = 0;
cleanup:
	if (err == -ENOMEM)
		snprintf(why, wn, "out of memory building the heap");
	if (aux)
		for (uint32_t i = 0; i < ncls; i++) {
			free(aux[i].slot);
			free(aux[i].sslot);
		}
	free(aux);
	free(rcount);
	idmap_index_free(&objmap);
	idmap_index_free(&clsmap);
	idmap_index_free(&loadmap);
	idmap_index_free(&strmap);
	if (err)
		heapview_free(hv);
	return err;
}
