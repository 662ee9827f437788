// SPDX-License-Identifier: GPL-2.0
/* test_dsl_parser.c - expressions to S-expressions, the seed's five programs,
 * and syntax errors with line:col and caret. */
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

static const char *const ops[] = {
	[DSL_N_ADD] = "+", [DSL_N_SUB] = "-", [DSL_N_MUL] = "*", [DSL_N_DIV] = "/",
	[DSL_N_MOD] = "%", [DSL_N_EQ] = "=", [DSL_N_NE] = "!=", [DSL_N_LT] = "<",
	[DSL_N_LE] = "<=", [DSL_N_GT] = ">", [DSL_N_GE] = ">=", [DSL_N_AND] = "and",
	[DSL_N_OR] = "or", [DSL_N_IN] = "in",
};

static void dump(FILE *f, const struct dsl_node *n);

static void dump_list(FILE *f, const struct dsl_node *n)
{
	for (; n; n = n->next) {
		fputc(' ', f);
		dump(f, n);
	}
}

static void dump(FILE *f, const struct dsl_node *n)
{
	switch (n->kind) {
	case DSL_N_INT: fprintf(f, "%lld", (long long)n->ival); break;
	case DSL_N_FLOAT: fprintf(f, "%g", n->fval); break;
	case DSL_N_STR: fprintf(f, "\"%s\"", n->sval); break;
	case DSL_N_BOOL: fputs(n->bval ? "true" : "false", f); break;
	case DSL_N_NULL: fputs("null", f); break;
	case DSL_N_IDENT: fputs(n->name, f); break;
	case DSL_N_LIST: fputs("(list", f); dump_list(f, n->args); fputc(')', f); break;
	case DSL_N_STRUCTLIT:
		fprintf(f, "(struct %s", n->name);
		dump_list(f, n->args);
		fputc(')', f);
		break;
	case DSL_N_LAMBDA:
		fputs("(lambda (", f);
		for (const struct dsl_node *p = n->args; p; p = p->next) {
			fprintf(f, "%s%s", p == n->args ? "" : " ", p->name);
			if (p->lhs)
				fprintf(f, ":%s%s", p->lhs->bval ? "table_of " : "", p->lhs->name);
		}
		fputc(')', f);
		dump_list(f, n->body);
		fputc(')', f);
		break;
	case DSL_N_ASSIGN: fprintf(f, "(<- %s ", n->name); dump(f, n->rhs); fputc(')', f); break;
	case DSL_N_RET: fputs("(ret ", f); dump(f, n->lhs); fputc(')', f); break;
	case DSL_N_MEMBER: fputs("(. ", f); dump(f, n->lhs); fprintf(f, " %s)", n->name); break;
	case DSL_N_CALL:
		fputs("(call ", f);
		dump(f, n->lhs);
		fprintf(f, " %s", n->name);
		dump_list(f, n->args);
		fputc(')', f);
		break;
	case DSL_N_NEG: fputs("(neg ", f); dump(f, n->lhs); fputc(')', f); break;
	case DSL_N_NOT: fputs("(not ", f); dump(f, n->lhs); fputc(')', f); break;
	case DSL_N_IS: fputs("(is ", f); dump(f, n->lhs); fprintf(f, " %s)", n->name); break;
	default:
		fprintf(f, "(%s ", ops[n->kind]);
		dump(f, n->lhs);
		fputc(' ', f);
		dump(f, n->rhs);
		fputc(')', f);
		break;
	}
}

/* Parse src; on success return a malloc'd dump of the AST, else the rendered errors. */
static char *parse_dump(const char *src, int *rc)
{
	struct dsl_arena *a = dsl_arena_new();
	struct dsl_diags *d = dsl_diags_new();
	struct dsl_token *t;
	size_t n;
	struct dsl_ast ast;
	char *out = NULL;
	size_t len = 0;
	FILE *f;

	dsl_diags_set_source(d, "p.mq", src, strlen(src));
	*rc = dsl_lex(a, src, strlen(src), d, &t, &n);
	if (!*rc)
		*rc = dsl_parse(a, t, n, d, &ast);
	if (*rc) {
		out = dsl_diags_render_str(d);
	} else {
		f = open_memstream(&out, &len);
		for (const struct dsl_node *x = ast.types; x; x = x->next) {
			fprintf(f, "[type %s", x->name);
			if (x->bval)
				for (const struct dsl_node *fd = x->args; fd; fd = fd->next)
					fprintf(f, " %s:%s", fd->name, fd->lhs->name);
			else
				fprintf(f, " table_of %s", x->lhs->name);
			fputs("]", f);
		}
		for (const struct dsl_node *s = ast.sets; s; s = s->next) {
			fprintf(f, "[set %s", s->name);
			for (const struct dsl_node *p = s->body; p; p = p->next) {
				static const char *const pk[] = { "", "roots", "membership", "on_inclusion" };

				if (p->prop == DSL_PROP_USER)
					fprintf(f, " {%s:%s ", p->name, p->lhs->lhs->name);
				else
					fprintf(f, " {%s ", pk[p->prop]);
				dump(f, p->rhs);
				fputc('}', f);
			}
			fputc(']', f);
		}
		for (const struct dsl_node *i = ast.instances; i; i = i->next) {
			fprintf(f, "[instances %s ", i->name);
			dump(f, i->rhs);
			fputc(']', f);
		}
		fclose(f);
	}
	dsl_diags_free(d);
	dsl_arena_free(a);
	return out;
}

/* Expression source -> S-expression (chibicc's ASSERT table). */
static const struct { const char *expr, *sexp; } exprs[] = {
	{ "1 + 2 * 3", "(+ 1 (* 2 3))" },
	{ "(1 + 2) * 3", "(* (+ 1 2) 3)" },
	{ "1 - 2 - 3", "(- (- 1 2) 3)" },
	{ "-a * b", "(* (neg a) b)" },
	{ "a or b and c", "(or a (and b c))" },
	{ "not a = b and c", "(and (not (= a b)) c)" },
	{ "¬ a ∧ b ∨ c", "(or (and (not a) b) c)" },
	{ "a < b + 1", "(< a (+ b 1))" },
	{ "x ≥ 1 ∧ x ≤ 2 ∧ x ≠ 3", "(and (and (>= x 1) (<= x 2)) (!= x 3))" },
	{ "THIS in Unassigned and REFERRER ∈ ENTITY", "(and (in THIS Unassigned) (in REFERRER ENTITY))" },
	{ "THIS is HashMap.Entry and THIS.key is K3Object",
	  "(and (is THIS HashMap.Entry) (is (. THIS key) K3Object))" },
	{ "x is java . util . Map", "(is x java.util.Map)" },
	{ "THIS.class.classloader", "(. (. THIS class) classloader)" },
	{ "objects.filter([it | it.data > 3.141])",
	  "(call objects filter (lambda (it) (ret (> (. it data) 3.141))))" },
	{ "objects.filter([it|it is K3Object]).map([it|it.id])",
	  "(call (call objects filter (lambda (it) (ret (is it K3Object)))) map (lambda (it) (ret (. it id))))" },
	{ "xs.map([ x : Class, | ret x.name ])", "(call xs map (lambda (x:Class) (ret (. x name))))" },
	{ "xs.foreach([ n <- n + 1 ])", "(call xs foreach (lambda () (<- n (+ n 1))))" },
	{ "xs.exists([ a b | a <- 1  b <- 2  a = b ])",
	  "(call xs exists (lambda (a b) (<- a 1) (<- b 2) (ret (= a b))))" },
	{ "#[1, 2, 3]", "(list 1 2 3)" },
	{ "#[]", "(list)" },
	{ "struct Point 1, \"a\" end", "(struct Point 1 \"a\")" },
	{ "f.g(1, 2)", "(call f g 1 2)" },
	{ "\"s\" = null", "(= \"s\" null)" },
	{ "true != false", "(!= true false)" },
	{ "ref_kind = root", "(= ref_kind root)" },
	{ "7 % 2 / 1", "(/ (% 7 2) 1)" },
	{ "- - 1", "(neg (neg 1))" },
};

static void test_exprs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		char src[512], want[600];
		int rc;

		snprintf(src, sizeof(src), "set_type s:\n x : int <- %s", exprs[i].expr);
		snprintf(want, sizeof(want), "[set s {x:int %s}]", exprs[i].sexp);
		char *got = parse_dump(src, &rc);

		if (rc || strcmp(got, want))
			fail_msg("%s\n  got:  %s\n  want: %s", exprs[i].expr, got, want);
		free(got);
	}
}

static const struct { const char *src, *dump; } programs[] = {
	{ "Pair : struct a : int b : string end\nPairs : table_of Pair\n"
	  "set_type S: roots <- objects membership <- false\n"
	  "  ps : Pairs <- #[struct Pair 1, \"x\" end]\n"
	  "instances_for S have_names = #[\"a\", \"b\"]",
	  "[type Pair a:int b:string][type Pairs table_of Pair][set S {roots objects} {membership false} "
	  "{ps:Pairs (list (struct Pair 1 \"x\"))}][instances S (list \"a\" \"b\")]" },
	{ "set_type A: on_inclusion <- [ n <- n + 1 ] n : int <- 0 instances_for A have_names = \"x\"",
	  "[set A {on_inclusion (lambda () (<- n (+ n 1)))} {n:int 0}][instances A \"x\"]" },
	/* a type declaration may follow a set type */
	{ "set_type A: n : int <- 0\nT : table_of int\n",
	  "[type T table_of int][set A {n:int 0}]" },
};

static void test_programs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(programs) / sizeof(programs[0]); i++) {
		int rc;
		char *got = parse_dump(programs[i].src, &rc);

		if (rc || strcmp(got, programs[i].dump))
			fail_msg("program %zu\n  got:  %s\n  want: %s", i, got, programs[i].dump);
		free(got);
	}
}

static char *slurp(const char *name)
{
	char path[512];
	const char *file = __FILE__;
	const char *slash = strstr(file, "tests/unit/");
	FILE *f;

	snprintf(path, sizeof(path), "%.*stests/dsl/%s", slash ? (int)(slash - file) : 0, file, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	char *buf = calloc(1, 1 << 16);
	size_t n = fread(buf, 1, (1 << 16) - 1, f);

	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* The seed's five example programs, transcribed in tests/dsl/. */
static const struct { const char *file, *dump; } seeds[] = {
	{ "01_value_assertion.mq",
	  "[set all {roots (call objects filter (lambda (it) (ret (and (> (. it data) 3.141) (< (. it data) 3.142)))))}"
	  " {membership false} {on_inclusion (lambda () (<- fault true))} {fault:bool false}]"
	  "[instances all \"all-jvm\"]" },
	{ "02_pseudojbb.mq",
	  "[set all {roots (call objects filter (lambda (it) (ret (is it Order))))} {membership false}"
	  " {on_inclusion (lambda () (<- fault (or fault (= (. THIS field) 4242))))} {fault:bool false}]"
	  "[instances all \"all-jvm\"]" },
	{ "03_reachable_from_threads.mq",
	  "[set all {roots threads} {membership (and (in THIS Unassigned) (in REFERRER ENTITY))}"
	  " {on_inclusion (lambda () (<- nbObjects (+ nbObjects 1)) (<- nbSize (+ nbSize (. THIS size))))}"
	  " {nbObjects:int 0} {nbSize:int 0}][instances all \"all-jvm\"]" },
	{ "04_k3_aspects.mq",
	  "[set all {roots (call objects filter (lambda (it) (ret (and (is it K3Object) (= (. it id) (. ENTITY name))))))}"
	  " {membership (or (and (in REFERRER ENTITY) (in THIS Unassigned)) (and (and (is THIS HashMap.Entry)"
	  " (in (. THIS key) ENTITY)) (is (. THIS key) K3Object)))}"
	  " {on_inclusion (lambda () (<- nbSize (+ nbSize (. THIS size))))} {nbSize:int 0}]"
	  "[instances all (call (call objects filter (lambda (it) (ret (is it K3Object)))) map (lambda (it) (ret (. it id))))]" },
	{ "05_top_components.mq",
	  "[set Component {roots (call classloaders filter (lambda (it) (ret (= (. it id) (. ENTITY name)))))}"
	  " {membership (and (in THIS Unassigned) (or (and (= ref_kind root) (in (. (. THIS class) classloader) ENTITY))"
	  " (and (!= ref_kind root) (in REFERRER ENTITY))))}"
	  " {on_inclusion (lambda () (<- nbSize (+ nbSize (. THIS size))))} {nbSize:int 0}]"
	  "[instances Component (call classloaders map (lambda (it) (ret (. it id))))]" },
};

static void test_seed_programs(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++) {
		char *src = slurp(seeds[i].file);
		int rc;

		if (!src)
			fail_msg("cannot read tests/dsl/%s", seeds[i].file);
		char *got = parse_dump(src, &rc);

		if (rc || strcmp(got, seeds[i].dump))
			fail_msg("%s\n  got:  %s\n  want: %s", seeds[i].file, got, seeds[i].dump);
		free(got);
		free(src);
	}
}

static const struct { const char *src, *rendered; } errors[] = {
	{ "set_type all:\n  roots <- objects.filter([it | it.x >])\n",
	  "p.mq:2:39: error: expected an expression, found ']'\n"
	  "  roots <- objects.filter([it | it.x >])\n"
	  "                                      ^\n" },
	{ "set_type all\n  roots <- x",
	  "p.mq:2:3: error: expected ':', found 'roots'\n  roots <- x\n  ^\n" },
	{ "set_type s:\n  n : int <- (1 + 2",
	  "p.mq:2:20: error: expected ')', found end of input\n  n : int <- (1 + 2\n                   ^\n" },
	{ "set_type s:\n  n : int <- [ a <- 1  2  3 ]",
	  "p.mq:2:27: error: expected ']' after the lambda's result expression, found integer\n"
	  "  n : int <- [ a <- 1  2  3 ]\n                          ^\n" },
	{ "instances_for all have_names \"x\"",
	  "p.mq:1:30: error: expected '=', found string\ninstances_for all have_names \"x\"\n"
	  "                             ^\n" },
	{ "roots <- 1", "p.mq:1:1: error: expected 'set_type', 'instances_for' or a type declaration, found 'roots'\n"
	  "roots <- 1\n^\n" },
	{ "set_type s:\n", "p.mq:2:1: error: expected a property ('roots', 'membership', 'on_inclusion' or "
	  "'name : type <- value'), found end of input\n\n^\n" },
	{ "set_type s: x : int <- a.", "p.mq:1:26: error: expected a member name after '.', found end of input\n"
	  "set_type s: x : int <- a.\n                         ^\n" },
	{ "set_type s: x : int <- a is 3", "p.mq:1:29: error: expected a class name after 'is', found integer\n"
	  "set_type s: x : int <- a is 3\n                            ^\n" },
	{ "T : struct a : int", "p.mq:1:19: error: expected a field declaration or 'end', found end of input\n"
	  "T : struct a : int\n                  ^\n" },
};

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		int rc;
		char *got = parse_dump(errors[i].src, &rc);

		if (rc != -EINVAL || strcmp(got, errors[i].rendered))
			fail_msg("case %zu rc %d\n  got:  %s\n  want: %s", i, rc, got, errors[i].rendered);
		free(got);
	}
}

/* Nesting and tree depth are bounded: an error, never a crash. */
static void test_depth(void **state)
{
	size_t n = 100000;
	char *src = malloc(n * 2 + 64);
	int rc;

	(void)state;
	/* deep parentheses */
	strcpy(src, "set_type s: x : int <- ");
	size_t len = strlen(src);
	for (size_t i = 0; i < n; i++)
		src[len++] = '(';
	src[len++] = '1';
	for (size_t i = 0; i < n; i++)
		src[len++] = ')';
	src[len] = '\0';
	char *got = parse_dump(src, &rc);
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(got, "nesting too deep (more than 200 levels)"));
	free(got);

	/* 199 parentheses are fine */
	strcpy(src, "set_type s: x : int <- ");
	len = strlen(src);
	for (size_t i = 0; i < 190; i++)
		src[len++] = '(';
	src[len++] = '1';
	for (size_t i = 0; i < 190; i++)
		src[len++] = ')';
	src[len] = '\0';
	got = parse_dump(src, &rc);
	assert_int_equal(rc, 0);
	free(got);

	/* a long left-associative chain builds a deep tree without recursion */
	strcpy(src, "set_type s: x : int <- 1");
	len = strlen(src);
	for (size_t i = 0; i < n / 2 - 20; i++) {
		src[len++] = '+';
		src[len++] = '1';
	}
	src[len] = '\0';
	got = parse_dump(src, &rc);
	assert_int_equal(rc, -EINVAL);
	assert_non_null(strstr(got, "expression too deep (more than 1000 levels)"));
	free(got);

	/* a long member chain, unary chain and lambda nesting */
	const char *pieces[] = { ".a", "-", "not ", "[" };
	for (size_t k = 0; k < 4; k++) {
		strcpy(src, "set_type s: x : int <- ");
		len = strlen(src);
		if (k == 0)
			src[len++] = 'x';
		for (size_t i = 0; len < n; i++) {
			strcpy(src + len, pieces[k]);
			len += strlen(pieces[k]);
		}
		src[len] = '\0';
		got = parse_dump(src, &rc);
		assert_int_equal(rc, -EINVAL);
		free(got);
	}
	free(src);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exprs),
		cmocka_unit_test(test_programs),
		cmocka_unit_test(test_seed_programs),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_depth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
