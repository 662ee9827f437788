// SPDX-License-Identifier: GPL-2.0
/*
 * walkids.c - ids for an untagged heap walk (see walkids.h and, for why the
 * agent sends addresses, user/agent/heapwalk.c). The keys are addresses
 * during one pause: an offmap (8-byte slots) when they span less than
 * 32 GiB, else an idmap. Two passes over the visits in the order JVMTI
 * reported them: ids and objects, then classes, references and roots.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/idmap.h"
#include "lib/offmap.h"
#include "heap/snapshot.h"
#include "heap/walkids.h"

/* Address key -> id. */
struct keymap {
	bool off;
	struct offmap om;
	struct idmap im;
	uint64_t base;
};

static void widen(uint64_t key, uint64_t *lo, uint64_t *hi)
{
	if (key & MT_AP_HV_ADDR) {
		uint64_t a = key & ~MT_AP_HV_ADDR;

		if (a < *lo)
			*lo = a;
		if (a > *hi)
			*hi = a;
	}
}

static int keymap_init(struct keymap *k, const struct mt_snapshot *s, uint64_t base, size_t expect)
{
	uint64_t lo = UINT64_MAX, hi = 0;

	for (size_t i = 0; i < s->nnamed; i++)
		widen(s->named[i].addr | MT_AP_HV_ADDR, &lo, &hi);
	for (size_t i = 0; i < s->nvisits; i++) {
		if (s->visits[i].kind & MT_AP_HV_TID)
			continue;
		widen(s->visits[i].to, &lo, &hi);
		widen(s->visits[i].from, &lo, &hi);
	}
	memset(k, 0, sizeof(*k));
	k->base = base;
	idmap_init(&k->im);
	if (hi >= lo && !offmap_init(&k->om, lo, hi, expect)) {
		k->off = true;
		return 0;
	}
	offmap_free(&k->om);
	return idmap_reserve(&k->im, expect);
}

/* The id of address key @key into *@cur: the one it has, or @id. */
static int keymap_put_new(struct keymap *k, uint64_t key, uint64_t id, uint64_t *cur)
{
	if (k->off) {
		uint32_t v;
		int err;

		if (id - k->base > UINT32_MAX)
			return -ENOMEM; /* 4 G objects in one walk */
		err = offmap_put_new(&k->om, key & ~MT_AP_HV_ADDR, (uint32_t)(id - k->base), &v);
		*cur = k->base + v;
		return err == -EINVAL ? -EPROTO : err;
	} else {
		void *v;
		int err = idmap_put_new(&k->im, key, (void *)(uintptr_t)id, &v);

		*cur = (uint64_t)(uintptr_t)v;
		return err;
	}
}

/* The id of @key: itself if it is an id already, 0 if unknown. */
static uint64_t keymap_id(const struct keymap *k, uint64_t key)
{
	if (!(key & MT_AP_HV_ADDR))
		return key;
	if (k->off) {
		uint32_t v;

		return offmap_get(&k->om, key & ~MT_AP_HV_ADDR, &v) ? k->base + v : 0;
	}
	return (uint64_t)(uintptr_t)idmap_get(&k->im, key);
}

static void keymap_free(struct keymap *k)
{
	offmap_free(&k->om);
	idmap_free(&k->im);
}

/* Per class: the type char of each projected JVMTI index, 0 elsewhere. */
struct proj {
	struct idmap cls;   /* class id -> index + 1 */
	char **types;       /* [class index] -> [JVMTI index] */
	int32_t *n;
	size_t ncls;
};

static bool wanted(const char *name, const char *const *fields, int nfields, bool all)
{
	if (all)
		return true;
	for (int i = 0; i < nfields; i++)
		if (!strcmp(fields[i], name))
			return true;
	return false;
}

static int proj_init(struct proj *p, const struct mt_snapshot *s, const char *const *fields,
		     int nfields)
{
	bool all = s->info.flags & MT_AP_HEAP_ALLFIELDS;

	memset(p, 0, sizeof(*p));
	idmap_init(&p->cls);
	p->ncls = s->nclasses;
	p->types = calloc(s->nclasses + 1, sizeof(*p->types));
	p->n = calloc(s->nclasses + 1, sizeof(*p->n));
	if (!p->types || !p->n)
		return -ENOMEM;
	for (size_t i = 0; i < s->nclasses; i++) {
		const struct mt_snap_class *c = &s->classes[i];
		int32_t max = -1;

		if (idmap_put(&p->cls, c->id, (void *)(uintptr_t)(i + 1)))
			return -ENOMEM;
		for (uint32_t j = 0; j < c->nfields; j++)
			if (c->fields[j].index > max && c->fields[j].index < (1 << 20) &&
			    wanted(c->fields[j].name, fields, nfields, all))
				max = c->fields[j].index;
		if (max < 0)
			continue;
		p->types[i] = calloc((size_t)max + 1, 1);
		if (!p->types[i])
			return -ENOMEM;
		p->n[i] = max + 1;
		for (uint32_t j = 0; j < c->nfields; j++) {
			const struct mt_snap_field *f = &c->fields[j];

			if (f->index >= 0 && f->index <= max && wanted(f->name, fields, nfields, all))
				p->types[i][f->index] = f->type;
		}
	}
	return 0;
}

static bool is_class(const struct proj *p, uint64_t id)
{
	return id && idmap_get(&p->cls, id);
}

/* The type char of field @idx of class @cls if projected, else 0. */
static char proj_type(const struct proj *p, uint64_t cls, int32_t idx)
{
	size_t ci = cls ? (size_t)(uintptr_t)idmap_get(&p->cls, cls) : 0;

	if (!ci-- || !p->types[ci] || idx < 0 || idx >= p->n[ci])
		return 0;
	return p->types[ci][idx];
}

static void proj_free(struct proj *p)
{
	for (size_t i = 0; p->types && i < p->ncls; i++)
		free(p->types[i]);
	free(p->types);
	free(p->n);
	idmap_free(&p->cls);
}

static int push(void *pp, size_t *n, size_t *cap, const void *e, size_t esz)
{
	if (snapshot_grow(pp, cap, *n, 1, esz))
		return -ENOMEM;
	memcpy(*(char **)pp + *n * esz, e, esz);
	(*n)++;
	return 0;
}

int walkids_resolve(struct mt_snapshot *s, const char *const *fields, int nfields,
		    char *why, size_t wn)
{
	uint64_t base = s->named_next, next = s->named_next, *cls_of = NULL, class_cls = 0;
	uint64_t last_key = 0, last_id = 0;
	uint8_t *seen = NULL;
	struct keymap ids = { 0 };
	struct proj proj;
	int err;

	if (!s->nvisits && !s->nnamed)
		return 0;
	for (size_t i = 0; i < s->nnamed; i++)
		if (s->named[i].id && s->named[i].id < base)
			base = s->named[i].id;
	/* the agent numbers the named objects just below next_id, one id each */
	if (next - base > 2 * (uint64_t)s->nnamed + 16 || next > UINT64_MAX / 2) {
		snprintf(why, wn, "the named objects' ids do not end at next_id");
		return -EPROTO;
	}
	err = proj_init(&proj, s, fields, nfields);
	if (!err)
		err = keymap_init(&ids, s, base, s->nvisits / 3 + s->nnamed);
	for (size_t i = 0; i < s->nclasses; i++)
		if (s->classes[i].sig && !strcmp(s->classes[i].sig, "Ljava/lang/Class;"))
			class_cls = s->classes[i].id;
	for (size_t i = 0; i < s->nnamed && !err; i++) {
		uint64_t cur;

		if (!s->named[i].addr || !s->named[i].id || s->named[i].id >= next)
			continue; /* not resolved in the pause, or not an id of this walk */
		err = keymap_put_new(&ids, s->named[i].addr | MT_AP_HV_ADDR, s->named[i].id, &cur);
		if (!err && cur != s->named[i].id) {
			snprintf(why, wn, "two named objects at one address");
			err = -EPROTO;
		}
	}
	/* pass 1: ids (written into the visits) and one object record per object */
	for (size_t i = 0; i < s->nvisits && !err; i++) {
		struct mt_ap_hvisit *v = &s->visits[i];
		uint64_t id = v->to;

		if (v->kind & MT_AP_HV_TID) /* no object: a tid (pass 2) */
			continue;
		if (v->to & MT_AP_HV_ADDR) {
			err = keymap_put_new(&ids, v->to, next, &id);
			if (err)
				break;
			if (id == next)
				next++;
		}
		if (v->from == v->to)
			v->from = id;
		v->to = id;
	}
	if (!err) {
		cls_of = calloc((size_t)(next - base) + 1, sizeof(*cls_of));
		seen = calloc((size_t)(next - base) + 1, 1);
		if (!cls_of || !seen)
			err = -ENOMEM;
	}
	for (size_t i = 0; i < s->nvisits && !err; i++) {
		const struct mt_ap_hvisit *v = &s->visits[i];
		struct mt_ap_hobj o = { .id = v->to, .size = (uint64_t)v->size8 << 3,
					.length = v->length };

		if (v->kind & MT_AP_HV_TID)
			continue;
		if (v->to < base || v->to >= next) {
			snprintf(why, wn, "an object id outside the walk's");
			err = -EPROTO;
			break;
		}
		if (seen[v->to - base])
			continue;
		seen[v->to - base] = 1;
		err = push(&s->objs, &s->nobjs, &s->cap_objs, &o, sizeof(o));
		s->info.bytes += o.size;
	}
	/* pass 2: classes, references, roots */
	for (size_t i = 0; i < s->nvisits && !err; i++) {
		const struct mt_ap_hvisit *v = &s->visits[i];
		uint32_t kind = MT_AP_HV_KIND(v->kind);
		uint64_t id = v->to, from = v->from;

		if (v->kind & MT_AP_HV_TID) { /* the marker root before a thread's locals */
			struct mt_ap_hroot r = { .to = v->to, .flags = MT_AP_HROOT_TID };

			err = push(&s->roots, &s->nroots, &s->cap_roots, &r, sizeof(r));
			continue;
		}
		if (!(v->kind & (MT_AP_HV_KEEP | MT_AP_HV_MAYBE)) && kind != 1 /* CLASS */)
			continue;
		if (from & MT_AP_HV_ADDR) { /* one object's references come one after another */
			if (from != last_key) {
				last_key = from;
				last_id = keymap_id(&ids, from);
			}
			from = last_id;
		}
		if (v->from && (from < base || from >= next)) {
			snprintf(why, wn, "a referrer that is no object of the walk");
			err = -EPROTO;
			break;
		}
		if (kind == 1) {
			if (!v->from || !is_class(&proj, id)) {
				snprintf(why, wn, "a CLASS reference that leads to no class");
				err = -EPROTO;
				break;
			}
			cls_of[from - base] = id;
		}
		if (!(v->kind & (MT_AP_HV_KEEP | MT_AP_HV_MAYBE)))
			continue;
		if (v->kind & MT_AP_HV_MAYBE) {
			char t = v->from ? proj_type(&proj, cls_of[from - base], v->index) : 0;

			if (t != 'L' && t != '[' && t != 'T')
				continue;
		}
		if (!v->from) {
			struct mt_ap_hroot r = { .to = id, .kind = kind,
						 .flags = (v->kind & MT_AP_HV_VTHREAD) ? MT_AP_HROOT_VTHREAD
										   : 0 };

			err = push(&s->roots, &s->nroots, &s->cap_roots, &r, sizeof(r));
		} else {
			struct mt_ap_href r = { .from = from, .to = id, .index = v->index, .kind = kind };

			err = push(&s->refs, &s->nrefs, &s->cap_refs, &r, sizeof(r));
		}
	}
	for (size_t i = 0; i < s->nobjs && cls_of && !err; i++) {
		struct mt_ap_hobj *o = &s->objs[i];

		if (o->id >= base && o->id < next)
			o->cls = cls_of[o->id - base];
		if (!o->cls && is_class(&proj, o->id))
			o->cls = class_cls; /* a class object: no CLASS reference of its own */
	}
	/* the values' owners and their projection, the strings' owners */
	if (!err) {
		size_t k = 0;

		for (size_t i = 0; i < s->nprims; i++) {
			struct mt_ap_hprim p = s->prims[i];
			uint64_t cls;
			char t;

			p.obj = keymap_id(&ids, p.obj);
			if (p.obj < base || p.obj >= next) {
				snprintf(why, wn, "a value whose owner is no object of the walk");
				err = -EPROTO;
				break;
			}
			cls = cls_of[p.obj - base];
			if (!cls && is_class(&proj, p.obj))
				cls = class_cls;
			t = proj_type(&proj, cls, p.index);
			if (!t)
				continue;
			if (t != (char)p.type) {
				s->info.mismatches++;
				continue;
			}
			s->prims[k++] = p;
		}
		if (!err)
			s->nprims = k;
	}
	for (size_t i = 0; i < s->nstrings && !err; i++) {
		s->strings[i].obj = keymap_id(&ids, s->strings[i].obj);
		if (!s->strings[i].obj) {
			snprintf(why, wn, "a string whose owner is no object of the walk");
			err = -EPROTO;
		}
	}
	s->info.objects = s->nobjs;
	s->info.refs = s->nrefs;
	s->info.roots = s->nroots;
	s->info.values = s->nprims;
	s->info.strings = s->nstrings;
	free(seen);
	free(cls_of);
	keymap_free(&ids);
	proj_free(&proj);
	free(s->visits);
	free(s->named);
	s->visits = NULL;
	s->named = NULL;
	s->nvisits = s->cap_visits = s->nnamed = s->cap_named = 0;
	if (err == -ENOMEM)
		snprintf(why, wn, "out of memory");
	return err;
}
