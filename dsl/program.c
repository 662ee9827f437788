// SPDX-License-Identifier: GPL-2.0
/* program.c - the API memtrace uses: compile, ask what the heap must hold, run. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsl.h"

struct dsl_program {
	struct dsl_arena *a;   /* tokens, AST, types: everything of the compile */
	struct dsl_ast ast;
	struct dsl_typed typed;
	struct dsl_needs needs;
};

int dsl_compile(const char *src, size_t len, const char *filename,
		const struct dsl_schema *schema, struct dsl_program **out,
		struct dsl_diags *diags)
{
	struct dsl_program *p;
	struct dsl_token *toks;
	size_t ntok;
	int err;

	*out = NULL;
	if (diags && (err = dsl_diags_set_source(diags, filename, src, len > DSL_MAX_SOURCE ?
						 0 : len)))
		return err;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->a = dsl_arena_new())) {
		free(p);
		dsl_diags_add(diags, 0, "out of memory");
		return -ENOMEM;
	}
	if ((err = dsl_lex(p->a, src, len, diags, &toks, &ntok)) ||
	    (err = dsl_parse(p->a, toks, ntok, diags, &p->ast)) ||
	    (err = dsl_typecheck(p->a, &p->ast, schema, diags, &p->typed))) {
		dsl_program_free(p);
		return err;
	}
	p->needs.age = p->typed.uses_age;
	p->needs.retained = p->typed.uses_retained;
	p->needs.referrers = p->typed.uses_referrers;
	p->needs.root_path = p->typed.uses_root_path;
	/* the walk's membership, and every graph built-in, needs every reference */
	p->needs.refs = p->typed.needs_refs || p->needs.retained || p->needs.referrers ||
			p->needs.root_path;
	p->needs.classes = p->typed.classes;
	p->needs.nclasses = p->typed.nclasses;
	p->needs.fields = p->typed.fields;
	p->needs.nfields = p->typed.nfields;
	for (int i = 0; i < p->typed.nfields; i++)
		if (p->typed.field_bits[i] & DSL_FT_STRING)
			p->needs.strings = true;
	*out = p;
	return 0;
}

void dsl_program_free(struct dsl_program *p)
{
	if (!p)
		return;
	dsl_arena_free(p->a);
	free(p);
}

const struct dsl_needs *dsl_program_needs(const struct dsl_program *p)
{
	return &p->needs;
}

int dsl_run(struct dsl_program *p, const struct dsl_heap *h, FILE *json_out,
	    struct dsl_diags *diags)
{
	struct dsl_eval ev = { .t = &p->typed, .h = h, .d = diags };
	int err;

	if (!h->consistent && (err = dsl_heap_check(h, diags)))
		return err;
	ev.persist = dsl_arena_new();
	ev.tmp = dsl_arena_new();
	if (!ev.persist || !ev.tmp) {
		err = -ENOMEM;
		dsl_diags_add(diags, 0, "out of memory");
		goto out;
	}
	ev.cur = ev.persist;
	if ((err = dsl_walk(&ev, &p->ast)))
		goto out;
	err = dsl_json_results(&ev, json_out);
out:
	dsl_arena_free(ev.tmp);
	dsl_arena_free(ev.persist);
	return err;
}
