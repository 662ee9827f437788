// SPDX-License-Identifier: GPL-2.0
/* heap.c - the abstract heap: ref-kind names, class-name matching, a schema
 * answering from an in-memory heap, and index validation. */
#include <errno.h>
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

void dsl_heap_schema(const struct dsl_heap *h, struct dsl_schema *out)
{
	out->has_class = heap_has_class;
	out->field_types = heap_field_types;
	out->ctx = (void *)h;
	out->no_age = h->no_age;
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
	}
	for (uint32_t i = 0; i < h->nobjects; i++) {
		const struct dsl_hobject *o = &h->objects[i];

		BAD(o->cls >= h->nclasses, "heap: object %u: bad class index", i);
		BAD(o->ref_first > h->nrefs || o->nrefs > h->nrefs - o->ref_first,
		    "heap: object %u: bad reference range", i);
	}
	for (uint32_t i = 0; i < h->nrefs; i++)
		BAD(h->refs[i].to >= h->nobjects || h->refs[i].kind > DSL_REF_SUPERCLASS,
		    "heap: reference %u: bad target or kind", i);
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
