// SPDX-License-Identifier: GPL-2.0
/* fuzz_dsl.c - libFuzzer entry: lex, parse and type-check arbitrary input
 * against a small fixed schema, render the diagnostics, and run what
 * compiles on a small fixed heap. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "dsl/dsl.h"

static const struct dsl_hfield f_order[] = { { "field", DSL_FK_INT }, { "name", DSL_FK_STRING },
					     { "next", DSL_FK_REF } };
static const struct dsl_hfield f_entry[] = { { "key", DSL_FK_REF }, { "value", DSL_FK_REF },
					     { "data", DSL_FK_FLOAT } };
static const struct dsl_hclass classes[] = {
	{ "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, DSL_NOOBJ, NULL, 0 },
	{ "spec.jbb.Order", 0, 0, 0, f_order, 3 },
	{ "java.util.HashMap$Entry", DSL_NOOBJ, 0, DSL_NOOBJ, f_entry, 3 },
	{ "K3Object", DSL_NOOBJ, 0, 0, f_order, 3 },
};
static const struct dsl_hval v_order[] = { { DSL_HV_INT, { .i = 4242 } },
					   { DSL_HV_STR, { .s = "o" } }, { DSL_HV_REF, { .ref = 2 } } };
static const struct dsl_hval v_entry[] = { { DSL_HV_REF, { .ref = 1 } }, { DSL_HV_NULL, { 0 } },
					   { DSL_HV_FLOAT, { .f = 3.1415 } } };
static const struct dsl_href refs[] = { { .to = 2, .index = 2, .kind = DSL_REF_FIELD },
					{ .to = 1, .index = 0, .kind = DSL_REF_FIELD },
					{ .to = 3, .index = -1, .kind = DSL_REF_CLASS_LOADER } };
static const struct dsl_hobject objects[] = {
	{ .id = 1, .cls = 0, .size = 16, .length = -1, .ref_first = 0, .nrefs = 0 },
	{ .id = 2, .cls = 1, .size = 24, .length = -1, .ref_first = 0, .nrefs = 1 },
	{ .id = 3, .cls = 2, .size = 32, .length = -1, .ref_first = 1, .nrefs = 1 },
	{ .id = 4, .cls = 3, .size = 40, .length = 5, .ref_first = 2, .nrefs = 1 },
};
static const struct dsl_hval *const values[] = { NULL, v_order, v_entry, v_order };
static const uint32_t ages[] = { 0, 1, 2, 3 };
static const struct dsl_hroot roots[] = { { 1, DSL_ROOT_STACK_LOCAL }, { 3, DSL_ROOT_JNI_GLOBAL } };
static const struct dsl_hloader loaders[] = { { 0, 7 } };
static const struct dsl_hthread threads[] = { { 3, "main" } };
static const struct dsl_heap heap = {
	.objects = objects, .nobjects = 4, .classes = classes, .nclasses = 4, .refs = refs,
	.nrefs = 3, .roots = roots, .nroots = 2, .loaders = loaders, .nloaders = 1,
	.threads = threads, .nthreads = 1, .values = values, .ages = ages,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null_out;
	struct dsl_schema schema;
	struct dsl_diags *d = dsl_diags_new();
	struct dsl_program *p = NULL;

	if (!null_out)
		null_out = fopen("/dev/null", "w");
	if (!d)
		return 0;
	dsl_heap_schema(&heap, &schema);
	if (dsl_compile((const char *)data, size, "fuzz.mq", &schema, &p, d) == 0) {
		dsl_run(p, &heap, null_out, d);
		dsl_program_free(p);
	}
	free(dsl_diags_render_str(d));
	dsl_diags_free(d);
	return 0;
}
