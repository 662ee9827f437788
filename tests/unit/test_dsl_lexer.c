// SPDX-License-Identifier: GPL-2.0
/* test_dsl_lexer.c - tokens of sources, and lexical errors with line:col. */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dsl/dsl.h"

#define MAXT 16

static const struct lex_case {
	const char *src;
	enum dsl_tok_kind kinds[MAXT]; /* ends with DSL_TK_EOF */
} cases[] = {
	{ "", { DSL_TK_EOF } },
	{ "  // only a comment\n", { DSL_TK_EOF } },
	{ "a <- 1", { DSL_TK_IDENT, DSL_TK_ARROW, DSL_TK_INT, DSL_TK_EOF } },
	{ "a ← 1", { DSL_TK_IDENT, DSL_TK_ARROW, DSL_TK_INT, DSL_TK_EOF } },
	{ "x ∧ y ∨ ¬ z", { DSL_TK_IDENT, DSL_TK_AND, DSL_TK_IDENT, DSL_TK_OR, DSL_TK_NOT,
			   DSL_TK_IDENT, DSL_TK_EOF } },
	{ "x and y or not z", { DSL_TK_IDENT, DSL_TK_AND, DSL_TK_IDENT, DSL_TK_OR, DSL_TK_NOT,
				DSL_TK_IDENT, DSL_TK_EOF } },
	{ "a ∈ b ≠ c ≤ d ≥ e", { DSL_TK_IDENT, DSL_TK_IN, DSL_TK_IDENT, DSL_TK_NE, DSL_TK_IDENT,
				 DSL_TK_LE, DSL_TK_IDENT, DSL_TK_GE, DSL_TK_IDENT, DSL_TK_EOF } },
	{ "a in b != c <= d >= e", { DSL_TK_IDENT, DSL_TK_IN, DSL_TK_IDENT, DSL_TK_NE, DSL_TK_IDENT,
				     DSL_TK_LE, DSL_TK_IDENT, DSL_TK_GE, DSL_TK_IDENT, DSL_TK_EOF } },
	{ "= == < > + - * / %", { DSL_TK_EQ, DSL_TK_EQ, DSL_TK_LT, DSL_TK_GT, DSL_TK_PLUS,
				  DSL_TK_MINUS, DSL_TK_STAR, DSL_TK_SLASH, DSL_TK_PERCENT,
				  DSL_TK_EOF } },
	{ "( ) [ #[ ] | , . :", { DSL_TK_LPAREN, DSL_TK_RPAREN, DSL_TK_LBRACK, DSL_TK_HASHBRACK,
				  DSL_TK_RBRACK, DSL_TK_BAR, DSL_TK_COMMA, DSL_TK_DOT,
				  DSL_TK_COLON, DSL_TK_EOF } },
	{ "set_type roots membership on_inclusion instances_for have_names",
	  { DSL_TK_SET_TYPE, DSL_TK_ROOTS, DSL_TK_MEMBERSHIP, DSL_TK_ON_INCLUSION,
	    DSL_TK_INSTANCES_FOR, DSL_TK_HAVE_NAMES, DSL_TK_EOF } },
	{ "table_of struct end ret is true false null",
	  { DSL_TK_TABLE_OF, DSL_TK_STRUCT, DSL_TK_END, DSL_TK_RET, DSL_TK_IS, DSL_TK_TRUE,
	    DSL_TK_FALSE, DSL_TK_NULL, DSL_TK_EOF } },
	{ "THIS REFERRER ENTITY Unassigned ref_kind objects java$x _y",
	  { DSL_TK_IDENT, DSL_TK_IDENT, DSL_TK_IDENT, DSL_TK_IDENT, DSL_TK_IDENT, DSL_TK_IDENT,
	    DSL_TK_IDENT, DSL_TK_IDENT, DSL_TK_EOF } },
	{ "3.141 42 1e3 it.data", { DSL_TK_FLOAT, DSL_TK_INT, DSL_TK_FLOAT, DSL_TK_IDENT,
				    DSL_TK_DOT, DSL_TK_IDENT, DSL_TK_EOF } },
	{ "\"all-jvm\" \"a\\\"b\"", { DSL_TK_STR, DSL_TK_STR, DSL_TK_EOF } },
	{ "roots<-x//c\nend", { DSL_TK_ROOTS, DSL_TK_ARROW, DSL_TK_IDENT, DSL_TK_END, DSL_TK_EOF } },
	{ "a<-b", { DSL_TK_IDENT, DSL_TK_ARROW, DSL_TK_IDENT, DSL_TK_EOF } },
	{ "a < -b", { DSL_TK_IDENT, DSL_TK_LT, DSL_TK_MINUS, DSL_TK_IDENT, DSL_TK_EOF } },
};

static void test_kinds(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
		struct dsl_arena *a = dsl_arena_new();
		struct dsl_token *t;
		size_t n;

		assert_int_equal(dsl_lex(a, cases[c].src, strlen(cases[c].src), NULL, &t, &n), 0);
		for (size_t i = 0; i < n; i++) {
			if (t[i].kind != cases[c].kinds[i])
				fail_msg("case %zu (%s): token %zu is %s, expected %s", c, cases[c].src,
					 i, dsl_tok_name(t[i].kind), dsl_tok_name(cases[c].kinds[i]));
		}
		assert_int_equal(cases[c].kinds[n - 1], DSL_TK_EOF);
		dsl_arena_free(a);
	}
}

static void test_values(void **state)
{
	const char *src = "3.141 42 \"a\\tb\\\"c\" name\n  x";
	struct dsl_arena *a = dsl_arena_new();
	struct dsl_token *t;
	size_t n;

	(void)state;
	assert_int_equal(dsl_lex(a, src, strlen(src), NULL, &t, &n), 0);
	assert_int_equal(n, 6);
	assert_true(t[0].fval == 3.141);
	assert_int_equal(t[1].ival, 42);
	assert_string_equal(t[2].str, "a\tb\"c");
	assert_string_equal(t[3].str, "name");
	assert_int_equal(t[4].line, 2);
	assert_int_equal(t[4].col, 3);
	assert_int_equal(t[1].col, 7);
	dsl_arena_free(a);
}

/* Columns count characters, not bytes. */
static void test_utf8_columns(void **state)
{
	const char *src = "a ← b ∧ c";
	struct dsl_arena *a = dsl_arena_new();
	struct dsl_token *t;
	size_t n;

	(void)state;
	assert_int_equal(dsl_lex(a, src, strlen(src), NULL, &t, &n), 0);
	assert_int_equal(t[2].col, 5);
	assert_int_equal(t[4].col, 9);
	dsl_arena_free(a);
}

static const struct err_case {
	const char *src;
	const char *rendered;
} errors[] = {
	{ "a <- \"abc", "t.mq:1:6: error: unterminated string literal\na <- \"abc\n     ^\n" },
	{ "x\n  y @ z", "t.mq:2:5: error: unexpected character '@'\n  y @ z\n    ^\n" },
	{ "x <- 12ab", "t.mq:1:8: error: invalid character 'a' in number\nx <- 12ab\n       ^\n" },
	{ "n ← 99999999999999999999",
	  "t.mq:1:5: error: integer literal too large (the maximum is 9223372036854775807)\n"
	  "n ← 99999999999999999999\n    ^\n" },
	{ "a ∀ b", "t.mq:1:3: error: unexpected character U+2200\na ∀ b\n  ^\n" },
	{ "\tq ! r", "t.mq:1:4: error: unexpected character '!'\n\tq ! r\n\t  ^\n" },
	{ "\"a\\qb\"", "t.mq:1:3: error: unknown escape sequence '\\q'\n\"a\\qb\"\n  ^\n" },
	{ "a \xff", "t.mq:1:3: error: invalid UTF-8 byte 0xff\na \xff\n  ^\n" },
};

static void test_errors(void **state)
{
	(void)state;
	for (size_t c = 0; c < sizeof(errors) / sizeof(errors[0]); c++) {
		struct dsl_arena *a = dsl_arena_new();
		struct dsl_diags *d = dsl_diags_new();
		struct dsl_token *t;
		size_t n;
		const char *src = errors[c].src;

		assert_int_equal(dsl_diags_set_source(d, "t.mq", src, strlen(src)), 0);
		assert_int_equal(dsl_lex(a, src, strlen(src), d, &t, &n), -EINVAL);
		char *r = dsl_diags_render_str(d);

		assert_string_equal(r, errors[c].rendered);
		free(r);
		dsl_diags_free(d);
		dsl_arena_free(a);
	}
}

static void test_too_big(void **state)
{
	size_t len = DSL_MAX_SOURCE + 1;
	char *src = malloc(len);
	struct dsl_arena *a = dsl_arena_new();
	struct dsl_diags *d = dsl_diags_new();
	struct dsl_token *t;
	size_t n;

	(void)state;
	memset(src, ' ', len);
	assert_int_equal(dsl_lex(a, src, len, d, &t, &n), -E2BIG);
	assert_int_equal(d->n, 1);
	assert_non_null(strstr(d->v[0].msg, "limit is 1048576 bytes"));
	/* exactly the limit is fine */
	assert_int_equal(dsl_lex(a, src, DSL_MAX_SOURCE, d, &t, &n), 0);
	free(src);
	dsl_diags_free(d);
	dsl_arena_free(a);
}

static void test_arena(void **state)
{
	struct dsl_arena *a = dsl_arena_new();

	(void)state;
	dsl_arena_free(NULL);
	dsl_diags_free(NULL);
	char *p = dsl_arena_alloc(a, 10);
	struct dsl_arena_mark m = dsl_arena_mark(a);

	for (int i = 0; i < 100; i++)
		assert_non_null(dsl_arena_alloc(a, 10000));
	assert_true(dsl_arena_used(a) > 1000000);
	dsl_arena_reset(a, m);
	assert_true(dsl_arena_used(a) < 100000);
	assert_non_null(p);
	assert_null(dsl_arena_alloc(a, (size_t)DSL_MAX_ARENA + 1));
	assert_string_equal(dsl_arena_strndup(a, "abcdef", 3), "abc");
	dsl_arena_free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kinds),
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_utf8_columns),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_too_big),
		cmocka_unit_test(test_arena),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
