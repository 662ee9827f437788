// SPDX-License-Identifier: GPL-2.0
/* json.c - results as one JSON document: {"Set": {"instance": {props}}}. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dsl.h"
#include "lib/util.h"

/* Shortest of %.15g / %.17g that reads back as the same double. */
static void json_float(FILE *f, double d)
{
	char buf[40];

	if (!isfinite(d)) {
		fputs("null", f);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", d);
	if (strtod(buf, NULL) != d)
		snprintf(buf, sizeof(buf), "%.17g", d);
	if (!strpbrk(buf, ".eEn"))
		strcat(buf, ".0");
	fputs(buf, f);
}

void dsl_json_value(const struct dsl_eval *ev, const struct dsl_value *v, FILE *f)
{
	const struct dsl_heap *h = ev->h;

	switch (v->kind) {
	case DSL_V_BOOL: fputs(v->u.b ? "true" : "false", f); break;
	case DSL_V_INT: fprintf(f, "%lld", (long long)v->u.i); break;
	case DSL_V_FLOAT: json_float(f, v->u.f); break;
	case DSL_V_STR: json_str(f, v->u.s); break;
	case DSL_V_OBJ: fprintf(f, "%llu", (unsigned long long)h->objects[v->u.idx].id); break;
	case DSL_V_CLASS: json_str(f, h->classes[v->u.idx].name); break;
	case DSL_V_LOADER: fprintf(f, "%llu", (unsigned long long)h->loaders[v->u.idx].id); break;
	case DSL_V_THREAD:
		if (h->threads[v->u.idx].name)
			json_str(f, h->threads[v->u.idx].name);
		else
			fputs("null", f);
		break;
	case DSL_V_REFKIND: json_str(f, dsl_ref_kind_name((int)v->u.idx)); break;
	case DSL_V_INST: dsl_json_value(ev, &ev->insts[v->u.idx].name, f); break;
	case DSL_V_LIST:
		fputc('[', f);
		for (size_t i = 0; i < v->u.l->n; i++) {
			struct dsl_value x = dsl_list_get(ev, v->u.l, i);

			if (i)
				fputc(',', f);
			dsl_json_value(ev, &x, f);
		}
		fputc(']', f);
		break;
	case DSL_V_STRUCT: {
		const struct dsl_node *fd = v->u.st->ty->fields;

		fputc('{', f);
		for (int i = 0; fd; fd = fd->next, i++) {
			if (i)
				fputc(',', f);
			json_str(f, fd->name);
			fputc(':', f);
			dsl_json_value(ev, &v->u.st->v[i], f);
		}
		fputc('}', f);
		break;
	}
	default: fputs("null", f); break;
	}
}

int dsl_json_results(const struct dsl_eval *ev, FILE *f)
{
	fputc('{', f);
	for (int s = 0; s < ev->t->nsets; s++) {
		const struct dsl_settype *st = &ev->t->sets[s];
		bool first = true;

		if (s)
			fputc(',', f);
		json_str(f, st->name);
		fputs(":{", f);
		for (int i = 0; i < ev->ninst; i++) {
			const struct dsl_inst *in = &ev->insts[i];

			if (in->set != s)
				continue;
			if (!first)
				fputc(',', f);
			first = false;
			if (in->name.kind == DSL_V_STR)
				json_str(f, in->name.u.s);
			else
				fprintf(f, "\"%lld\"", (long long)in->name.u.i);
			fputs(":{", f);
			for (int p = 0; p < st->nprops; p++) {
				if (p)
					fputc(',', f);
				json_str(f, st->props[p]->name);
				fputc(':', f);
				dsl_json_value(ev, &in->props[p], f);
			}
			fputc('}', f);
		}
		fputc('}', f);
	}
	fputs("}\n", f);
	return ferror(f) ? -EIO : 0;
}
