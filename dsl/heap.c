// SPDX-License-Identifier: GPL-2.0
/* heap.c - the abstract heap: ref-kind names, class-name matching, a schema
 * answering from an in-memory heap, and index validation. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "dsl.h"

static const char *const ref_kind_names[] = {
	[DSL_REF_FIELD] = "field", [DSL_REF_ARRAY_ELEMENT] = "array_element",
	[DSL_REF_STATIC_FIELD] = "static_field", [DSL_REF_CONSTANT_POOL] = "constant_pool",
	[DSL_REF_CLASS] = "class", [DSL_REF_CLASS_LOADER] = "class_loader",
	[DSL_REF_SIGNERS] = "signers", [DSL_REF_PROTECTION_DOMAIN] = "protection_domain",
	[DSL_REF_INTERFACE] = "interface", [DSL_REF_SUPERCLASS] = "superclass",
	[DSL_ROOT_JNI_GLOBAL] = "jni_global", [DSL_ROOT_SYSTEM_CLASS] = "system_class",
	[DSL_ROOT_MONITOR] = "monitor", [DSL_ROOT_STACK_LOCAL] = "stack_local",
	[DSL_ROOT_JNI_LOCAL] = "jni_local", [DSL_ROOT_THREAD] = "thread",
	[DSL_ROOT_OTHER] = "other", [DSL_REF_ROOT] = "root",
};

const char *dsl_ref_kind_name(int k)
{
	if (k < 0 || k > DSL_REF_ROOT)
		return NULL;
	return ref_kind_names[k];
}

static char norm(char c)
{
	return c == '$' ? '.' : c;
}

/* Match from the end, '$' and '.' alike: qname must be all of cname or a
 * suffix of it starting after a '.' or '$'. */
bool dsl_class_name_matches(const char *cname, const char *qname)
{
	size_t cn = strlen(cname), qn = strlen(qname);

	if (qn == 0 || qn > cn)
		return false;
	for (size_t i = 1; i <= qn; i++)
		if (norm(cname[cn - i]) != norm(qname[qn - i]))
			return false;
	return qn == cn || norm(cname[cn - qn - 1]) == '.';
}

static bool heap_has_class(void *ctx, const char *name)
{
	const struct dsl_heap *h = ctx;

	for (uint32_t i = 0; i < h->nclasses; i++)
		if (h->classes[i].name && dsl_class_name_matches(h->classes[i].name, name))
			return true;
	return false;
}

static unsigned heap_field_types(void *ctx, const char *name)
{
	const struct dsl_heap *h = ctx;
	unsigned bits = 0;

	for (uint32_t i = 0; i < h->nclasses; i++) {
		const struct dsl_hclass *c = &h->classes[i];

		for (uint32_t j = 0; j < c->nfields; j++)
			if (c->fields[j].name && !strcmp(c->fields[j].name, name))
				bits |= 1u << c->fields[j].kind;
	}
	return bits;
}

static unsigned heap_class_kinds(void *ctx, const char *name)
{
	const struct dsl_heap *h = ctx;
	unsigned bits = 0;

	for (uint32_t i = 0; i < h->nclasses; i++)
		if (h->classes[i].name && dsl_class_name_matches(h->classes[i].name, name))
			bits |= 1u << (h->classes[i].kind <= DSL_CK_INTERFACE ? h->classes[i].kind
									   : DSL_CK_UNKNOWN);
	return bits;
}

void dsl_heap_schema(const struct dsl_heap *h, struct dsl_schema *out)
{
	out->has_class = heap_has_class;
	out->class_kinds = heap_class_kinds;
	out->field_types = heap_field_types;
	out->ctx = (void *)h;
	out->no_age = h->no_age;
	out->no_ifaces = h->no_ifaces;
}

#define BAD(cond, ...) do { if (cond) { dsl_diags_add(d, 0, __VA_ARGS__); return -EINVAL; } } while (0)

int dsl_heap_check(const struct dsl_heap *h, struct dsl_diags *d)
{
	for (uint32_t i = 0; i < h->nclasses; i++) {
		const struct dsl_hclass *c = &h->classes[i];

		BAD(!c->name, "heap: class %u has no name", i);
		BAD(c->obj != DSL_NOOBJ && c->obj >= h->nobjects, "heap: class %s: bad object index", c->name);
		BAD(c->super != DSL_NOOBJ && c->super >= h->nclasses, "heap: class %s: bad superclass", c->name);
		BAD(c->loader != DSL_NOOBJ && c->loader >= h->nloaders, "heap: class %s: bad loader", c->name);
		BAD(c->nfields && !c->fields, "heap: class %s: no field table", c->name);
		for (uint32_t j = 0; j < c->nfields; j++)
			BAD(!c->fields[j].name || c->fields[j].kind > DSL_FK_REF,
			    "heap: class %s: bad field %u", c->name, j);
		BAD(c->nifaces && !c->ifaces, "heap: class %s: no interface table", c->name);
		for (uint32_t j = 0; j < c->nifaces; j++)
			BAD(c->ifaces[j] >= h->nclasses, "heap: class %s: bad interface", c->name);
	}
	for (uint32_t i = 0; i < h->nstatics; i++)
		BAD(!h->statics[i].name || h->statics[i].cls >= h->nclasses,
		    "heap: static field %u: bad name or class", i);
	/* the objects and their references' fields in one pass (a heap of
	 * millions: each pass reads ~50 bytes an object), then every reference */
	for (uint32_t i = 0; i < h->nobjects; i++) {
		const struct dsl_hobject *o = &h->objects[i];

		BAD(o->cls >= h->nclasses, "heap: object %u: bad class index", i);
		BAD(o->ref_first > h->nrefs || o->nrefs > h->nrefs - o->ref_first,
		    "heap: object %u: bad reference range", i);
		for (uint32_t k = 0; k < o->nrefs; k++) {
			const struct dsl_href *r = &h->refs[o->ref_first + k];

			BAD(r->kind == DSL_REF_FIELD && r->index >= 0 &&
			    (uint32_t)r->index >= h->classes[o->cls].nfields,
			    "heap: object %u: a reference from a field its class lacks", i);
		}
	}
	for (uint32_t i = 0; h->ref_runs && i < h->nobjects; i++) {
		const struct dsl_hobject *o = &h->objects[i];

		BAD(h->ref_runs[i] != o->ref_first || h->ref_runs[i + 1] != o->ref_first + o->nrefs,
		    "heap: object %u: its run says other references than its own", i);
	}
	for (uint32_t i = 0; i < h->nrefs; i++) {
		const struct dsl_href *r = &h->refs[i];

		BAD(r->to >= h->nobjects || r->kind > DSL_REF_SUPERCLASS,
		    "heap: reference %u: bad target or kind", i);
		BAD(r->kind == DSL_REF_STATIC_FIELD && r->index >= 0 &&
		    (uint32_t)r->index >= h->nstatics, "heap: reference %u: bad static field", i);
	}
	for (uint32_t i = 0; h->class_ref && i < h->nclasses; i++)
		BAD(h->class_ref[i] != DSL_NOOBJ && h->class_ref[i] >= h->nobjects,
		    "heap: class %u: bad implied CLASS reference", i);
	BAD(h->class_ref && (uint64_t)h->nrefs + h->nobjects >= DSL_VIA_NONE,
	    "heap: too many references to number the implied ones");
	for (uint32_t i = 0; i < h->nroots; i++)
		BAD(h->roots[i].obj >= h->nobjects || !DSL_REF_IS_ROOT(h->roots[i].kind),
		    "heap: root %u: bad object or kind", i);
	for (uint32_t i = 0; i < h->nloaders; i++)
		BAD(h->loaders[i].obj != DSL_NOOBJ && h->loaders[i].obj >= h->nobjects,
		    "heap: loader %u: bad object index", i);
	for (uint32_t i = 0; i < h->nthreads; i++)
		BAD(h->threads[i].obj >= h->nobjects, "heap: thread %u: bad object index", i);
	return 0;
}

uint32_t dsl_ref_owner(const struct dsl_heap *h, uint32_t ref)
{
	uint32_t lo = 0, hi = h->nobjects;

	if (ref >= h->nrefs) /* an implied CLASS reference: its object's number */
		return h->class_ref && ref - h->nrefs < h->nobjects &&
		       dsl_heap_cref(h, ref - h->nrefs) != DSL_NOOBJ ? ref - h->nrefs : DSL_NOOBJ;
	/* the last object whose references start at or before ref and hold it */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const struct dsl_hobject *o = &h->objects[mid];

		if (o->nrefs && ref >= o->ref_first && ref - o->ref_first < o->nrefs)
			return mid;
		if (o->ref_first + o->nrefs <= ref)
			lo = mid + 1;
		else
			hi = mid;
	}
	return DSL_NOOBJ;
}

const char *dsl_ref_text(const struct dsl_heap *h, uint32_t from, const struct dsl_href *r,
			 char *buf, size_t n)
{
	const struct dsl_hclass *c = from < h->nobjects ? &h->classes[h->objects[from].cls] : NULL;

	if (r->kind == DSL_REF_FIELD && c && r->index >= 0 && (uint32_t)r->index < c->nfields)
		snprintf(buf, n, "%s.%s", c->name, c->fields[r->index].name);
	else if (r->kind == DSL_REF_ARRAY_ELEMENT && c && r->index >= 0)
		snprintf(buf, n, "%s[%d]", c->name, r->index);
	else if (r->kind == DSL_REF_STATIC_FIELD && r->index >= 0 &&
		 (uint32_t)r->index < h->nstatics)
		snprintf(buf, n, "static %s.%s", h->classes[h->statics[r->index].cls].name,
			 h->statics[r->index].name);
	else if (c)
		snprintf(buf, n, "%s (%s)", c->name, dsl_ref_kind_name(r->kind));
	else
		snprintf(buf, n, "(%s)", dsl_ref_kind_name(r->kind));
	return buf;
}

size_t dsl_root_path(const struct dsl_heap *h, uint32_t o, struct dsl_pathstep *out,
		     size_t max)
{
	size_t len = 0, k;
	uint32_t x = o;

	if (!h->root_via || o >= h->nobjects || h->root_via[o] == DSL_VIA_NONE)
		return 0;
	/* the length first (a shortest path: at most one step per object) */
	while (h->root_via[x] != DSL_VIA_ROOT && len <= h->nobjects) {
		x = dsl_ref_owner(h, h->root_via[x]);
		if (x == DSL_NOOBJ)
			return 0;
		len++;
	}
	len++;
	/* then the steps from o back, written root first */
	x = o;
	for (k = len; k-- > 0;) {
		struct dsl_pathstep s = { .obj = x, .from = DSL_NOOBJ };

		if (h->root_via[x] == DSL_VIA_ROOT) {
			/* its first root entry, one that is no local reference if any is */
			s.ref = DSL_NOOBJ;
			for (uint32_t i = 0; i < h->nroots; i++) {
				int kd = h->roots[i].kind;

				if (h->roots[i].obj != x)
					continue;
				if (s.ref == DSL_NOOBJ)
					s.ref = i;
				if (kd != DSL_ROOT_STACK_LOCAL && kd != DSL_ROOT_JNI_LOCAL) {
					s.ref = i;
					break;
				}
			}
		} else {
			s.ref = h->root_via[x];
			s.from = dsl_ref_owner(h, s.ref);
		}
		if (k < max)
			out[k] = s;
		x = s.from;
	}
	return len;
}

const char *dsl_obj_class_text(const struct dsl_heap *h, uint32_t o, char *buf, size_t n)
{
	const char *cname = h->classes[h->objects[o].cls].name;

	if (!strcmp(cname, "java.lang.Class"))
		for (uint32_t i = 0; i < h->nclasses; i++)
			if (h->classes[i].obj == o) {
				snprintf(buf, n, "class %s", h->classes[i].name);
				return buf;
			}
	return cname;
}

const char *dsl_path_step_text(const struct dsl_heap *h, const struct dsl_pathstep *s,
			       char *buf, size_t n)
{
	char cb[512], rt[512];
	const char *cname = dsl_obj_class_text(h, s->obj, cb, sizeof(cb));
	unsigned long long id = (unsigned long long)h->objects[s->obj].id;

	if (s->from == DSL_NOOBJ) {
		snprintf(buf, n, "%s %s (id %llu)",
			 s->ref < h->nroots ? dsl_ref_kind_name(h->roots[s->ref].kind) : "root",
			 cname, id);
		return buf;
	}
	struct dsl_href r = dsl_heap_ref(h, s->ref);

	snprintf(buf, n, "%s -> %s (id %llu)",
		 dsl_ref_text(h, s->from, &r, rt, sizeof(rt)), cname, id);
	return buf;
}
