// SPDX-License-Identifier: GPL-2.0
/* querylive.c - run a compiled query on a snapshot (see querylive.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heapview.h"
#include "heap/querylive.h"
#include "lib/util.h"

uint32_t querylive_heap_flags(const struct dsl_needs *n)
{
	uint32_t f = 0;

	if (n->refs)
		f |= MT_AP_HEAP_REFS;
	/* compiled without a heap, the program cannot know which fields are
	 * strings: the agent sends strings only if a projected field is one */
	if (n->strings || n->nfields)
		f |= MT_AP_HEAP_STRINGS;
	return f;
}

enum querylive_status querylive_eval(struct dsl_program **prog, const char *src, size_t len,
			     const char *filename, struct mt_snapshot *s, bool drop,
			     const struct dsl_needs *needs, struct dsl_diags *diags,
			     struct querylive_out *o)
{
	struct mt_heapview hv = { 0 };
	struct dsl_schema schema;
	enum querylive_status st;
	uint64_t t0;
	FILE *mem;
	int err;

	memset(o, 0, sizeof(*o));
	err = drop ? heapview_build_take(s, needs, &hv, o->why, sizeof(o->why))
		   : heapview_build(s, needs, &hv, o->why, sizeof(o->why));
	util_phase("heap view");
	/* retained, referrers, root_path: the graph indexes the program reads */
	if (!err)
		err = heapview_graph(&hv, heapview_graph_for(dsl_program_needs(*prog)), o->why,
				     sizeof(o->why));
	util_phase("graph (what the program reads)");
	if (err) {
		if (err == -ENOMEM && !o->why[0])
			snprintf(o->why, sizeof(o->why), "out of memory");
		st = QUERY_HEAP;
		goto out;
	}
	/* compile again against the heap: unknown classes and fields are errors now */
	dsl_program_free(*prog);
	*prog = NULL;
	dsl_heap_schema(&hv.heap, &schema);
	if (dsl_compile(src, len, filename, &schema, prog, diags)) {
		st = QUERY_FIT;
		goto out;
	}
	mem = open_memstream(&o->json, &o->len);
	if (!mem) {
		st = QUERY_NOMEM;
		goto out;
	}
	t0 = mono_ns();
	err = dsl_run(*prog, &hv.heap, mem, diags);
	o->eval_ns = mono_ns() - t0;
	util_phase("program run");
	fclose(mem);
	o->objects = hv.heap.nobjects;
	if (err) {
		free(o->json);
		o->json = NULL;
		o->len = 0;
		st = QUERY_RUN;
		goto out;
	}
	st = QUERY_OK;
out:
	heapview_free(&hv);
	return st;
}

enum querylive_status querylive_fit(struct dsl_program **prog, const char *src, size_t len,
			    const char *filename, const struct mt_snapshot *classes,
			    struct dsl_diags *diags, struct querylive_out *o)
{
	struct mt_heapview hv = { 0 };
	struct dsl_schema schema;
	enum querylive_status st = QUERY_OK;
	int err;

	memset(o, 0, sizeof(*o));
	err = heapview_build(classes, NULL, &hv, o->why, sizeof(o->why));
	if (err) {
		if (err == -ENOMEM && !o->why[0])
			snprintf(o->why, sizeof(o->why), "out of memory");
		st = QUERY_HEAP;
		goto out;
	}
	/* what the walk will find has no age yet: the walk asks for them */
	dsl_heap_schema(&hv.heap, &schema);
	schema.no_age = NULL;
	dsl_program_free(*prog);
	*prog = NULL;
	if (dsl_compile(src, len, filename, &schema, prog, diags))
		st = QUERY_FIT;
out:
	heapview_free(&hv);
	return st;
}
