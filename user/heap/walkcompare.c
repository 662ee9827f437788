// SPDX-License-Identifier: GPL-2.0
/* walkcompare.c - the mark against the JVMTI walk of one frozen image (see
 * walkcompare.h). Both sides are sorted by address and merged; the objects
 * only JVMTI found are then explained, or not, by a weak referent: the
 * objects some Reference's referent field leads to, and what only they lead
 * to in JVMTI's graph. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "heap/walkcompare.h"
#include "lib/util.h"

struct wobj {
	uint64_t addr;
	uint64_t cls;      /* its class object's address */
	uint64_t size;
	uint8_t only;      /* JVMTI side: 1 found by JVMTI alone, 2 and weakly reachable */
};

struct pair {
	uint64_t a, b;
};

static int by_addr(const void *x, const void *y)
{
	const struct wobj *a = x, *b = y;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int by_a(const void *x, const void *y)
{
	const struct pair *a = x, *b = y;

	return a->a < b->a ? -1 : a->a > b->a;
}

static struct wobj *find(struct wobj *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].addr == addr ? &v[lo] : NULL;
}

static const struct pair *find_pair(const struct pair *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].a < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && v[lo].a == a ? &v[lo] : NULL;
}

/* JVMTI's objects (by address), each with its class object and size. */
static int jvmti_objects(const struct mt_snapshot *s, struct wobj **out, size_t *n)
{
	struct wobj *v = calloc(s->nvisits + 1, sizeof(*v));
	struct pair *cls = calloc(s->nvisits + 1, sizeof(*cls));
	size_t k = 0, nc = 0, u = 0;

	if (!v || !cls) {
		free(v);
		free(cls);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->nvisits; i++) {
		const struct mt_ap_hvisit *x = &s->visits[i];

		if (x->kind & MT_AP_HV_TID) /* no object: a root marker */
			continue;
		v[k++] = (struct wobj){ .addr = x->to & ~MT_AP_HV_ADDR,
					.size = (uint64_t)x->size8 << 3 };
		if (MT_AP_HV_KIND(x->kind) == 1 && x->from) /* CLASS: the referrer's class */
			cls[nc++] = (struct pair){ x->from & ~MT_AP_HV_ADDR, x->to & ~MT_AP_HV_ADDR };
	}
	qsort(v, k, sizeof(*v), by_addr);
	for (size_t i = 0; i < k; i++)
		if (!u || v[u - 1].addr != v[i].addr)
			v[u++] = v[i];
	qsort(cls, nc, sizeof(*cls), by_a);
	for (size_t i = 0; i < u; i++) {
		const struct pair *c = find_pair(cls, nc, v[i].addr);

		v[i].cls = c ? c->b : 0; /* a class object: none of its own */
	}
	free(cls);
	*out = v;
	*n = u;
	return 0;
}

/* The mark's objects (by address), each with its class object's address. */
static int mark_objects(const struct mt_snapshot *m, struct wobj **out, size_t *n)
{
	struct wobj *v = calloc(m->nobjs + 1, sizeof(*v));
	struct pair *ids = calloc(m->nobjs + 1, sizeof(*ids));

	if (!v || !ids) {
		free(v);
		free(ids);
		return -ENOMEM;
	}
	for (size_t i = 0; i < m->nobjs; i++)
		ids[i] = (struct pair){ m->objs[i].id, m->addrs[i] };
	qsort(ids, m->nobjs, sizeof(*ids), by_a);
	for (size_t i = 0; i < m->nobjs; i++) {
		const struct pair *c = find_pair(ids, m->nobjs, m->objs[i].cls);

		v[i] = (struct wobj){ .addr = m->addrs[i], .size = m->objs[i].size,
				      .cls = c ? c->b : 0 };
	}
	free(ids);
	qsort(v, m->nobjs, sizeof(*v), by_addr);
	*out = v;
	*n = m->nobjs;
	return 0;
}

/* Is field @index of the class whose object is at @cls_addr "referent"? */
static bool is_referent(const struct mt_snapshot *s, const struct pair *named, size_t nn,
			uint64_t cls_addr, int32_t index)
{
	const struct pair *p = find_pair(named, nn, cls_addr);

	for (size_t i = 0; p && i < s->nclasses; i++) {
		const struct mt_snap_class *c = &s->classes[i];

		if (c->id != p->b)
			continue;
		for (uint32_t f = 0; f < c->nfields; f++)
			if (c->fields[f].index == index)
				return !strcmp(c->fields[f].name, "referent");
		return false;
	}
	return false;
}

/* The JVMTI-only objects a weak referent explains: seeds, then what they
 * alone lead to (a fixpoint over JVMTI's edges between such objects). */
static uint64_t explain_weak(const struct mt_snapshot *s, struct wobj *jv, size_t nj,
			     const struct pair *named, size_t nn)
{
	uint64_t n = 0;
	bool more = true;

	for (size_t i = 0; i < s->nvisits; i++) {
		const struct mt_ap_hvisit *x = &s->visits[i];
		struct wobj *to, *from;

		if (MT_AP_HV_KIND(x->kind) != 2 || !x->from) /* FIELD */
			continue;
		to = find(jv, nj, x->to & ~MT_AP_HV_ADDR);
		from = find(jv, nj, x->from & ~MT_AP_HV_ADDR);
		if (to && to->only == 1 && from && is_referent(s, named, nn, from->cls, x->index)) {
			to->only = 2;
			n++;
		}
	}
	while (more) {
		more = false;
		for (size_t i = 0; i < s->nvisits; i++) {
			const struct mt_ap_hvisit *x = &s->visits[i];
			struct wobj *to, *from;

			if (!x->from)
				continue;
			from = find(jv, nj, x->from & ~MT_AP_HV_ADDR);
			to = find(jv, nj, x->to & ~MT_AP_HV_ADDR);
			if (from && from->only == 2 && to && to->only == 1) {
				to->only = 2;
				n++;
				more = true;
			}
		}
	}
	return n;
}

/* The name of the class whose object is at @cls (JVMTI's named objects). */
static const char *class_name(const struct mt_snapshot *s, const struct pair *named, size_t nn,
			      uint64_t cls, char *buf, size_t len)
{
	const struct pair *p = find_pair(named, nn, cls);

	for (size_t i = 0; p && i < s->nclasses; i++)
		if (s->classes[i].id == p->b)
			return s->classes[i].name ? s->classes[i].name
						  : snapshot_java_name(s->classes[i].sig, buf, len);
	snprintf(buf, len, cls ? "<class at 0x%llx>" : "java.lang.Class", (unsigned long long)cls);
	return buf;
}

/* One JSON line per class of @v's entries with only == @only (at most 40). */
static void report(FILE *f, const char *side, struct wobj *v, size_t n, uint8_t only,
		   const struct mt_snapshot *s, const struct pair *named, size_t nn)
{
	struct pair *by = calloc(n + 1, sizeof(*by));
	size_t k = 0, lines = 0;

	if (!by)
		return;
	for (size_t i = 0; i < n; i++)
		if (v[i].only == only)
			by[k++] = (struct pair){ v[i].cls, 1 };
	qsort(by, k, sizeof(*by), by_a);
	for (size_t i = 0; i < k && lines < 40;) {
		size_t j = i;
		char buf[1024];

		while (j < k && by[j].a == by[i].a)
			j++;
		fprintf(f, "{\"only\":\"%s\",\"class\":", side);
		json_str(f, class_name(s, named, nn, by[i].a, buf, sizeof(buf)));
		fprintf(f, ",\"objects\":%zu}\n", j - i);
		lines++;
		i = j;
	}
	free(by);
}

int walkcompare_run(const struct mt_snapshot *jv, const struct mt_snapshot *mk,
		    struct walkcompare *out, FILE *f)
{
	struct wobj *a = NULL, *b = NULL;
	struct pair *named = calloc(jv->nnamed + 1, sizeof(*named));
	size_t na = 0, nb = 0, i = 0, j = 0;
	int err = -ENOMEM;

	memset(out, 0, sizeof(*out));
	if (!named || !mk->addrs || jvmti_objects(jv, &a, &na) || mark_objects(mk, &b, &nb))
		goto cleanup;
	for (size_t k = 0; k < jv->nnamed; k++)
		named[k] = (struct pair){ jv->named[k].addr, jv->named[k].id };
	qsort(named, jv->nnamed, sizeof(*named), by_a);
	/* JVMTI reports no class for a class object: java.lang.Class's, by name */
	{
		uint64_t class_id = 0, class_addr = 0;

		for (size_t k = 0; k < jv->nclasses && !class_id; k++)
			if (!strcmp(jv->classes[k].sig, "Ljava/lang/Class;"))
				class_id = jv->classes[k].id;
		for (size_t k = 0; k < jv->nnamed && class_id; k++)
			if (jv->named[k].id == class_id)
				class_addr = jv->named[k].addr;
		for (size_t k = 0; k < na; k++)
			if (!a[k].cls)
				a[k].cls = class_addr;
	}
	out->jvmti = na;
	out->mark = nb;
	while (i < na || j < nb) {
		if (j >= nb || (i < na && a[i].addr < b[j].addr)) {
			a[i++].only = 1;
			out->jvmti_only++;
		} else if (i >= na || b[j].addr < a[i].addr) {
			b[j++].only = 1;
			out->mark_only++;
		} else {
			out->both++;
			out->cls_diff += a[i].cls != b[j].cls;
			out->size_diff += a[i].size != b[j].size;
			i++;
			j++;
		}
	}
	out->weak_only = explain_weak(jv, a, na, named, jv->nnamed);
	if (f) {
		report(f, "jvmti", a, na, 1, jv, named, jv->nnamed);
		report(f, "jvmti_weak", a, na, 2, jv, named, jv->nnamed);
		report(f, "mark", b, nb, 1, jv, named, jv->nnamed);
	}
	err = 0;
cleanup:
	free(a);
	free(b);
	free(named);
	return err;
}
