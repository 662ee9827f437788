/* test_dsl_heap.h - build small in-memory heaps for the DSL tests. */
#ifndef TEST_DSL_HEAP_H
#define TEST_DSL_HEAP_H

#include <stdlib.h>
#include <string.h>

#include "dsl/dsl.h"

#define HB_MAX 64

struct hb {
	struct dsl_hobject obj[HB_MAX];
	struct dsl_hclass cls[HB_MAX];
	struct dsl_href refs[HB_MAX * 2];
	uint32_t ref_from[HB_MAX * 2];
	struct dsl_href sorted[HB_MAX * 2];
	struct dsl_hroot roots[HB_MAX];
	struct dsl_hloader loaders[8];
	struct dsl_hthread threads[8];
	struct dsl_hval vals[HB_MAX][8];
	const struct dsl_hval *values[HB_MAX]; /* heap.values: vals[o] each */
	uint32_t ages[HB_MAX];                 /* heap.ages */
	uint32_t nobj, ncls, nrefs, nroots, nloaders, nthreads;
	struct dsl_heap heap;
};

/* A class with fields (kinds from a string: i f b s r per field). */
static inline uint32_t hb_class(struct hb *b, const char *name, uint32_t super, uint32_t loader,
				const struct dsl_hfield *fields, uint32_t nfields)
{
	struct dsl_hclass *c = &b->cls[b->ncls];

	c->name = name;
	c->obj = DSL_NOOBJ;
	c->super = super;
	c->loader = loader;
	c->fields = fields;
	c->nfields = nfields;
	return b->ncls++;
}

static inline uint32_t hb_obj(struct hb *b, uint32_t cls, uint64_t size)
{
	struct dsl_hobject *o = &b->obj[b->nobj];

	o->id = 1000 + b->nobj;
	o->cls = cls;
	o->size = size;
	o->length = -1;
	b->values[b->nobj] = b->vals[b->nobj];
	b->ages[b->nobj] = 0;
	return b->nobj++;
}

/* A reference; @index: the field slot (FIELD), element index (ARRAY_ELEMENT), or -1. */
static inline void hb_ref(struct hb *b, uint32_t from, uint32_t to, int kind, int32_t index)
{
	b->ref_from[b->nrefs] = from;
	b->refs[b->nrefs].to = to;
	b->refs[b->nrefs].kind = (uint8_t)kind;
	b->refs[b->nrefs].index = index;
	b->nrefs++;
}

static inline void hb_root(struct hb *b, uint32_t obj, int kind)
{
	b->roots[b->nroots].obj = obj;
	b->roots[b->nroots++].kind = (uint8_t)kind;
}

static inline void hb_int(struct hb *b, uint32_t obj, int slot, int64_t v)
{
	b->vals[obj][slot].kind = DSL_HV_INT;
	b->vals[obj][slot].u.i = v;
}

static inline void hb_float(struct hb *b, uint32_t obj, int slot, double v)
{
	b->vals[obj][slot].kind = DSL_HV_FLOAT;
	b->vals[obj][slot].u.f = v;
}

/* A reference field value, and the matching field reference. */
static inline void hb_field_ref(struct hb *b, uint32_t obj, int slot, uint32_t to)
{
	b->vals[obj][slot].kind = DSL_HV_REF;
	b->vals[obj][slot].u.ref = to;
	hb_ref(b, obj, to, DSL_REF_FIELD, slot);
}

/* Group references by their source (stable) and fill the heap. */
static inline struct dsl_heap *hb_heap(struct hb *b)
{
	uint32_t k = 0;

	for (uint32_t o = 0; o < b->nobj; o++) {
		b->obj[o].ref_first = k;
		for (uint32_t r = 0; r < b->nrefs; r++)
			if (b->ref_from[r] == o)
				b->sorted[k++] = b->refs[r];
		b->obj[o].nrefs = k - b->obj[o].ref_first;
	}
	b->heap = (struct dsl_heap){
		.objects = b->obj, .nobjects = b->nobj, .classes = b->cls, .nclasses = b->ncls,
		.refs = b->sorted, .nrefs = b->nrefs, .roots = b->roots, .nroots = b->nroots,
		.loaders = b->loaders, .nloaders = b->nloaders, .threads = b->threads,
		.nthreads = b->nthreads, .values = b->values, .ages = b->ages,
	};
	return &b->heap;
}

#endif
