// SPDX-License-Identifier: GPL-2.0
/* test_dsl_types.c - the type pass: accepted programs, and type, name, class
 * and field errors with line:col and caret, against a heap schema. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dsl/dsl.h"
#include "test_dsl_heap.h"

static const struct dsl_hfield f_order[] = { { "field", DSL_FK_INT }, { "name", DSL_FK_STRING } };
static const struct dsl_hfield f_entry[] = { { "key", DSL_FK_REF }, { "value", DSL_FK_REF } };
static const struct dsl_hfield f_mixed1[] = { { "data", DSL_FK_FLOAT } };
static const struct dsl_hfield f_mixed2[] = { { "data", DSL_FK_STRING } };

static struct hb heapb;

static struct dsl_schema *schema(void)
{
	static struct dsl_schema s;
	struct hb *b = &heapb;

	if (!b->ncls) {
		uint32_t obj = hb_class(b, "java.lang.Object", DSL_NOOBJ, DSL_NOOBJ, NULL, 0);
		hb_class(b, "spec.jbb.Order", obj, DSL_NOOBJ, f_order, 2);
		hb_class(b, "java.util.HashMap$Entry", obj, DSL_NOOBJ, f_entry, 2);
		hb_class(b, "a.M1", obj, DSL_NOOBJ, f_mixed1, 1);
		hb_class(b, "a.M2", obj, DSL_NOOBJ, f_mixed2, 1);
	}
	dsl_heap_schema(hb_heap(b), &s);
	return &s;
}

/* "" when src compiles, else the rendered diagnostics. */
static char *compile(const char *src)
{
	struct dsl_diags *d = dsl_diags_new();
	struct dsl_program *p = NULL;
	char *out;

	if (dsl_compile(src, strlen(src), "t.mq", schema(), &p, d) == 0)
		out = strdup("");
	else
		out = dsl_diags_render_str(d);
	dsl_program_free(p);
	dsl_diags_free(d);
	return out;
}

#define ST "set_type s:\n"
#define INST "\ninstances_for s have_names = \"i\""

static const char *const ok[] = {
	ST "  x : int <- 1" INST,
	ST "  roots <- objects.filter([it | it is Order and it.field = 3])\n  membership <- false" INST,
	ST "  membership <- THIS is HashMap.Entry and THIS.key in ENTITY" INST,
	ST "  membership <- THIS.data = 1 or THIS.data = \"x\"" INST, /* dynamic: float or string */
	ST "  x : float <- 1\n  on_inclusion <- [ x <- x + THIS.size ]" INST,
	ST "  x : string <- ENTITY.name" INST,
	"set_type s: x : int <- ENTITY.name\ninstances_for s have_names = #[1, 2]",
	ST "  x : bool <- classes.exists([c : Class | c.name = \"x\" and c.classloader = null])" INST,
	ST "  x : bool <- threads.exists([t | t.name = \"main\"])" INST,
	ST "  x : bool <- classloaders.exists([l | l.id = 0])" INST,
	ST "  membership <- ref_kind = root or ref_kind = array_element" INST,
	"P : struct a : int b : table_of string end\n" ST "  p : P <- struct P 1, #[\"x\"] end" INST,
	ST "  x : int <- #[1,2].map([v | v * 2]).size" INST,
	ST "  x : table_of Object <- thread_groups" INST,
	ST "  x : int <- 0\n  on_inclusion <- [ #[1].foreach([v | x <- x + v]) ]" INST,
};

static const struct { const char *src, *rendered; } errors[] = {
	{ ST "  membership <- 3" INST,
	  "t.mq:2:17: error: membership must be bool, not int\n  membership <- 3\n                ^\n" },
	{ ST "  x : bool <- true and 3" INST,
	  "t.mq:2:20: error: 'and' needs bool operands, not bool and int\n  x : bool <- true and 3\n"
	  "                   ^\n" },
	{ ST "  on_inclusion <- [ nope <- 1 ]" INST,
	  "t.mq:2:21: error: assignment to undeclared name 'nope'\n  on_inclusion <- [ nope <- 1 ]\n"
	  "                    ^\n" },
	{ ST "  roots <- objects.filter([it | it is Ordr])" INST,
	  "t.mq:2:39: error: no class of the heap is named 'Ordr'\n"
	  "  roots <- objects.filter([it | it is Ordr])\n                                      ^\n" },
	{ ST "  roots <- objects.filter([it | it.feild = 1])" INST,
	  "t.mq:2:36: error: no class of the heap has a field 'feild'\n"
	  "  roots <- objects.filter([it | it.feild = 1])\n                                   ^\n" },
	{ ST "  x : int <- THIS.size" INST,
	  "t.mq:2:14: error: 'THIS' is only available in membership and on_inclusion\n"
	  "  x : int <- THIS.size\n             ^\n" },
	{ ST "  x : int <- \"a\"" INST,
	  "t.mq:2:14: error: property 'x' is int; its initial value is string\n  x : int <- \"a\"\n"
	  "             ^\n" },
	{ ST "  x : int <- y" INST, "t.mq:2:14: error: unknown name 'y'\n  x : int <- y\n             ^\n" },
	{ ST "  x : Foo <- 1" INST, "t.mq:2:7: error: unknown type 'Foo'\n  x : Foo <- 1\n      ^\n" },
	{ ST "  x : int <- 1" "\ninstances_for t have_names = \"i\"",
	  "t.mq:3:15: error: unknown set type 't'\ninstances_for t have_names = \"i\"\n              ^\n" },
	{ ST "  x : int <- 1" "\ninstances_for s have_names = 1.5",
	  "t.mq:3:30: error: have_names must be a string, an int or a list of them, not float\n"
	  "instances_for s have_names = 1.5\n                             ^\n" },
	{ ST "  x : bool <- objects.filter([it | it.size])" INST,
	  "t.mq:2:30: error: the lambda of 'filter' must give bool, not int\n"
	  "  x : bool <- objects.filter([it | it.size])\n                             ^\n" },
	{ ST "  x : bool <- 1 in Unassigned" INST,
	  "t.mq:2:17: error: only objects can be 'in' Unassigned, not int\n"
	  "  x : bool <- 1 in Unassigned\n                ^\n" },
	{ ST "  x : bool <- Unassigned" INST,
	  "t.mq:2:15: error: 'Unassigned' may only follow 'in'\n  x : bool <- Unassigned\n              ^\n" },
	{ ST "  on_inclusion <- 1" INST,
	  "t.mq:2:19: error: on_inclusion must be a lambda: [ name <- value ... ]\n"
	  "  on_inclusion <- 1\n                  ^\n" },
	{ ST "  x : int <- 1\n  x : int <- 2" INST,
	  "t.mq:3:3: error: property 'x' is declared twice\n  x : int <- 2\n  ^\n" },
	{ ST "  x : int <- objects.sort([it | it])" INST,
	  "t.mq:2:22: error: unknown member function 'sort' (lists have filter, map, exists, foreach)\n"
	  "  x : int <- objects.sort([it | it])\n                     ^\n" },
	{ ST "  x : int <- 1 + \"a\"" INST,
	  "t.mq:2:16: error: '+' needs numbers, not int and string\n  x : int <- 1 + \"a\"\n"
	  "               ^\n" },
	{ ST "  x : bool <- objects = 1" INST,
	  "t.mq:2:23: error: cannot compare table_of Object with int\n  x : bool <- objects = 1\n"
	  "                      ^\n" },
	{ ST "  x : int <- [ 1 ]" INST,
	  "t.mq:2:14: error: a lambda is only allowed as the argument of filter, map, exists, foreach or as on_inclusion\n"
	  "  x : int <- [ 1 ]\n             ^\n" },
	{ "set_type s: x : int <- 1\ninstances_for s have_names = ENTITY.name",
	  "t.mq:2:30: error: 'ENTITY' is not available in have_names\n"
	  "instances_for s have_names = ENTITY.name\n                             ^\n" },
	{ ST "  x : int <- 1.5" INST,
	  "t.mq:2:14: error: property 'x' is int; its initial value is float\n  x : int <- 1.5\n"
	  "             ^\n" },
	/* several errors are all reported */
	{ ST "  x : int <- a\n  y : int <- b" INST,
	  "t.mq:2:14: error: unknown name 'a'\n  x : int <- a\n             ^\n"
	  "t.mq:3:14: error: unknown name 'b'\n  y : int <- b\n             ^\n" },
};

static void test_ok(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		char *got = compile(ok[i]);

		if (strcmp(got, ""))
			fail_msg("%s\n  -> %s", ok[i], got);
		free(got);
	}
}

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		char *got = compile(errors[i].src);

		if (strcmp(got, errors[i].rendered))
			fail_msg("case %zu\n  got:  %s\n  want: %s", i, got, errors[i].rendered);
		free(got);
	}
}

/* Without a schema class and field names are not checked. */
static void test_no_schema(void **state)
{
	const char *src = ST "  roots <- objects.filter([it | it is Nope and it.zzz = 1])" INST;
	struct dsl_program *p;

	(void)state;
	assert_int_equal(dsl_compile(src, strlen(src), "t", NULL, &p, NULL), 0);
	dsl_program_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ok),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_no_schema),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
