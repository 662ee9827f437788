// SPDX-License-Identifier: GPL-2.0
/* lexer.c - source text to tokens: ASCII spelling plus the Unicode aliases
 * ← ∧ ∨ ¬ ∈ ≠ ≤ ≥ (UTF-8), `//` comments, strings, numbers, keywords. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dsl.h"

static const char *const tok_names[DSL_TK__COUNT] = {
	[DSL_TK_EOF] = "end of input", [DSL_TK_IDENT] = "identifier",
	[DSL_TK_INT] = "integer", [DSL_TK_FLOAT] = "number", [DSL_TK_STR] = "string",
	[DSL_TK_ARROW] = "'<-'", [DSL_TK_EQ] = "'='", [DSL_TK_NE] = "'!='",
	[DSL_TK_LT] = "'<'", [DSL_TK_LE] = "'<='", [DSL_TK_GT] = "'>'", [DSL_TK_GE] = "'>='",
	[DSL_TK_PLUS] = "'+'", [DSL_TK_MINUS] = "'-'", [DSL_TK_STAR] = "'*'",
	[DSL_TK_SLASH] = "'/'", [DSL_TK_PERCENT] = "'%'", [DSL_TK_LPAREN] = "'('",
	[DSL_TK_RPAREN] = "')'", [DSL_TK_LBRACK] = "'['", [DSL_TK_HASHBRACK] = "'#['",
	[DSL_TK_RBRACK] = "']'", [DSL_TK_BAR] = "'|'", [DSL_TK_COMMA] = "','",
	[DSL_TK_DOT] = "'.'", [DSL_TK_COLON] = "':'",
	[DSL_TK_SET_TYPE] = "'set_type'", [DSL_TK_ROOTS] = "'roots'",
	[DSL_TK_MEMBERSHIP] = "'membership'", [DSL_TK_ON_INCLUSION] = "'on_inclusion'",
	[DSL_TK_INSTANCES_FOR] = "'instances_for'", [DSL_TK_HAVE_NAMES] = "'have_names'",
	[DSL_TK_TABLE_OF] = "'table_of'", [DSL_TK_STRUCT] = "'struct'", [DSL_TK_END] = "'end'",
	[DSL_TK_RET] = "'ret'", [DSL_TK_IS] = "'is'", [DSL_TK_IN] = "'in'",
	[DSL_TK_AND] = "'and'", [DSL_TK_OR] = "'or'", [DSL_TK_NOT] = "'not'",
	[DSL_TK_TRUE] = "'true'", [DSL_TK_FALSE] = "'false'", [DSL_TK_NULL] = "'null'",
};

const char *dsl_tok_name(enum dsl_tok_kind k)
{
	if ((unsigned)k >= DSL_TK__COUNT)
		return "?";
	return tok_names[k];
}

static const struct { const char *word; enum dsl_tok_kind kind; } keywords[] = {
	{ "set_type", DSL_TK_SET_TYPE }, { "roots", DSL_TK_ROOTS },
	{ "membership", DSL_TK_MEMBERSHIP }, { "on_inclusion", DSL_TK_ON_INCLUSION },
	{ "instances_for", DSL_TK_INSTANCES_FOR }, { "have_names", DSL_TK_HAVE_NAMES },
	{ "table_of", DSL_TK_TABLE_OF }, { "struct", DSL_TK_STRUCT }, { "end", DSL_TK_END },
	{ "ret", DSL_TK_RET }, { "is", DSL_TK_IS }, { "in", DSL_TK_IN }, { "and", DSL_TK_AND },
	{ "or", DSL_TK_OR }, { "not", DSL_TK_NOT }, { "true", DSL_TK_TRUE },
	{ "false", DSL_TK_FALSE }, { "null", DSL_TK_NULL },
};

/* Punctuation, longest spelling first; the UTF-8 aliases are punctuation too. */
static const struct { const char *s; enum dsl_tok_kind kind; } puncts[] = {
	{ "\xe2\x86\x90", DSL_TK_ARROW }, /* ← */
	{ "\xe2\x88\xa7", DSL_TK_AND },   /* ∧ */
	{ "\xe2\x88\xa8", DSL_TK_OR },    /* ∨ */
	{ "\xe2\x88\x88", DSL_TK_IN },    /* ∈ */
	{ "\xe2\x89\xa0", DSL_TK_NE },    /* ≠ */
	{ "\xe2\x89\xa4", DSL_TK_LE },    /* ≤ */
	{ "\xe2\x89\xa5", DSL_TK_GE },    /* ≥ */
	{ "\xc2\xac", DSL_TK_NOT },       /* ¬ */
	{ "<-", DSL_TK_ARROW }, { "==", DSL_TK_EQ }, { "!=", DSL_TK_NE },
	{ "<=", DSL_TK_LE }, { ">=", DSL_TK_GE }, { "#[", DSL_TK_HASHBRACK },
	{ "=", DSL_TK_EQ }, { "<", DSL_TK_LT }, { ">", DSL_TK_GT }, { "+", DSL_TK_PLUS },
	{ "-", DSL_TK_MINUS }, { "*", DSL_TK_STAR }, { "/", DSL_TK_SLASH },
	{ "%", DSL_TK_PERCENT }, { "(", DSL_TK_LPAREN }, { ")", DSL_TK_RPAREN },
	{ "[", DSL_TK_LBRACK }, { "]", DSL_TK_RBRACK }, { "|", DSL_TK_BAR },
	{ ",", DSL_TK_COMMA }, { ".", DSL_TK_DOT }, { ":", DSL_TK_COLON },
};

struct lexer {
	struct dsl_arena *a;
	const char *src;
	size_t len;
	size_t pos;
	int line;
	size_t line_start;      /* offset of the current line */
	int col_base;           /* characters before pos on this line, cached */
	size_t col_pos;
	struct dsl_diags *d;
	struct dsl_token *v;    /* malloc'd while lexing */
	size_t n, cap;
};

static bool is_ident_start(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}

static bool is_digit(int c)
{
	return c >= '0' && c <= '9';
}

/* Column (in characters) of offset off on the current line. */
static int column(struct lexer *l, size_t off)
{
	if (l->col_pos < l->line_start || l->col_pos > off) {
		l->col_pos = l->line_start;
		l->col_base = 1;
	}
	for (size_t i = l->col_pos; i < off; i++)
		if (((unsigned char)l->src[i] & 0xC0) != 0x80)
			l->col_base++;
	l->col_pos = off;
	return l->col_base;
}

static struct dsl_token *push(struct lexer *l, enum dsl_tok_kind kind, size_t off, size_t len)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		struct dsl_token *v = realloc(l->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	struct dsl_token *t = &l->v[l->n++];

	memset(t, 0, sizeof(*t));
	t->kind = kind;
	t->off = off;
	t->len = len;
	t->line = l->line;
	t->col = column(l, off);
	return t;
}

/* Decode one UTF-8 character at p (for messages); returns its length. */
static int utf8_decode(const unsigned char *p, size_t avail, unsigned *cp)
{
	int n;

	if (p[0] < 0x80) {
		*cp = p[0];
		return 1;
	}
	if ((p[0] & 0xE0) == 0xC0)
		n = 2, *cp = p[0] & 0x1F;
	else if ((p[0] & 0xF0) == 0xE0)
		n = 3, *cp = p[0] & 0x0F;
	else if ((p[0] & 0xF8) == 0xF0)
		n = 4, *cp = p[0] & 0x07;
	else
		return 0;
	if ((size_t)n > avail)
		return 0;
	for (int i = 1; i < n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return 0;
		*cp = (*cp << 6) | (p[i] & 0x3F);
	}
	return n;
}

/* string = '"' { char | '\' ( 'n' | 't' | 'r' | '\' | '"' ) } '"' */
static int lex_string(struct lexer *l)
{
	size_t start = l->pos, i = start + 1;
	char *buf;
	size_t n = 0;

	for (; i < l->len && l->src[i] != '"'; i++) {
		if (l->src[i] == '\n')
			break;
		if (l->src[i] == '\\')
			i++;
	}
	if (i >= l->len || l->src[i] != '"') {
		dsl_diags_add(l->d, start, "unterminated string literal");
		return -EINVAL;
	}
	buf = dsl_arena_alloc(l->a, i - start);
	if (!buf)
		return -ENOMEM;
	for (size_t j = start + 1; j < i; j++) {
		char c = l->src[j];

		if (c == '\\') {
			c = l->src[++j];
			switch (c) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case '\\': case '"': break;
			default:
				dsl_diags_add(l->d, j - 1, "unknown escape sequence '\\%c'",
					      c >= 32 && c < 127 ? c : '?');
				return -EINVAL;
			}
		}
		if (c == '\0') {
			dsl_diags_add(l->d, j, "NUL byte in string literal");
			return -EINVAL;
		}
		buf[n++] = c;
	}
	buf[n] = '\0';
	struct dsl_token *t = push(l, DSL_TK_STR, start, i + 1 - start);

	if (!t)
		return -ENOMEM;
	t->str = buf;
	l->pos = i + 1;
	return 0;
}

/* number = digit { digit } [ '.' digit { digit } ] [ ('e'|'E') ['+'|'-'] digit { digit } ] */
static int lex_number(struct lexer *l)
{
	size_t start = l->pos, i = start;
	bool is_float = false;
	char tmp[128];

	while (i < l->len && is_digit(l->src[i]))
		i++;
	if (i + 1 < l->len && l->src[i] == '.' && is_digit(l->src[i + 1])) {
		is_float = true;
		i++;
		while (i < l->len && is_digit(l->src[i]))
			i++;
	}
	if (i < l->len && (l->src[i] == 'e' || l->src[i] == 'E')) {
		size_t j = i + 1;

		if (j < l->len && (l->src[j] == '+' || l->src[j] == '-'))
			j++;
		if (j < l->len && is_digit(l->src[j])) {
			is_float = true;
			i = j;
			while (i < l->len && is_digit(l->src[i]))
				i++;
		}
	}
	if (i < l->len && (is_ident_start(l->src[i]) || is_digit(l->src[i]))) {
		dsl_diags_add(l->d, i, "invalid character '%c' in number", l->src[i]);
		return -EINVAL;
	}
	if (i - start >= sizeof(tmp)) {
		dsl_diags_add(l->d, start, "number literal too long");
		return -EINVAL;
	}
	memcpy(tmp, l->src + start, i - start);
	tmp[i - start] = '\0';
	struct dsl_token *t = push(l, is_float ? DSL_TK_FLOAT : DSL_TK_INT, start, i - start);

	if (!t)
		return -ENOMEM;
	errno = 0;
	if (is_float) {
		t->fval = strtod(tmp, NULL);
		if (errno == ERANGE && isinf(t->fval)) {
			dsl_diags_add(l->d, start, "number literal out of range");
			return -EINVAL;
		}
	} else {
		unsigned long long v = strtoull(tmp, NULL, 10);

		if (errno == ERANGE || v > INT64_MAX) {
			dsl_diags_add(l->d, start, "integer literal too large (the maximum is %lld)",
				      (long long)INT64_MAX);
			return -EINVAL;
		}
		t->ival = (int64_t)v;
	}
	l->pos = i;
	return 0;
}

/* ident = ( letter | '_' | '$' ) { letter | digit | '_' | '$' } ; keywords are reserved */
static int lex_ident(struct lexer *l)
{
	size_t start = l->pos, i = start;

	while (i < l->len && (is_ident_start(l->src[i]) || is_digit(l->src[i])))
		i++;
	enum dsl_tok_kind kind = DSL_TK_IDENT;

	for (size_t k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++)
		if (strlen(keywords[k].word) == i - start &&
		    !memcmp(keywords[k].word, l->src + start, i - start))
			kind = keywords[k].kind;
	struct dsl_token *t = push(l, kind, start, i - start);

	if (!t)
		return -ENOMEM;
	t->str = dsl_arena_strndup(l->a, l->src + start, i - start);
	if (!t->str)
		return -ENOMEM;
	l->pos = i;
	return 0;
}

static int lex_punct(struct lexer *l)
{
	for (size_t k = 0; k < sizeof(puncts) / sizeof(puncts[0]); k++) {
		size_t n = strlen(puncts[k].s);

		if (l->len - l->pos >= n && !memcmp(l->src + l->pos, puncts[k].s, n)) {
			if (!push(l, puncts[k].kind, l->pos, n))
				return -ENOMEM;
			l->pos += n;
			return 0;
		}
	}
	unsigned char c = (unsigned char)l->src[l->pos];
	unsigned cp;

	if (c >= 0x80) {
		if (utf8_decode((const unsigned char *)l->src + l->pos, l->len - l->pos, &cp))
			dsl_diags_add(l->d, l->pos, "unexpected character U+%04X", cp);
		else
			dsl_diags_add(l->d, l->pos, "invalid UTF-8 byte 0x%02x", c);
	} else if (c >= 32 && c < 127) {
		dsl_diags_add(l->d, l->pos, "unexpected character '%c'", c);
	} else {
		dsl_diags_add(l->d, l->pos, "unexpected byte 0x%02x", c);
	}
	return -EINVAL;
}

static int lex_all(struct lexer *l)
{
	int err;

	while (l->pos < l->len) {
		char c = l->src[l->pos];

		if (c == '\n') {
			l->pos++;
			l->line++;
			l->line_start = l->pos;
			continue;
		}
		if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
			l->pos++;
			continue;
		}
		if (c == '/' && l->pos + 1 < l->len && l->src[l->pos + 1] == '/') {
			while (l->pos < l->len && l->src[l->pos] != '\n')
				l->pos++;
			continue;
		}
		if (c == '"')
			err = lex_string(l);
		else if (is_digit(c))
			err = lex_number(l);
		else if (is_ident_start(c))
			err = lex_ident(l);
		else
			err = lex_punct(l);
		if (err)
			return err;
	}
	return push(l, DSL_TK_EOF, l->len, 0) ? 0 : -ENOMEM;
}

int dsl_lex(struct dsl_arena *a, const char *src, size_t len,
	    struct dsl_diags *d, struct dsl_token **out, size_t *ntok)
{
	struct lexer l = { .a = a, .src = src, .len = len, .line = 1, .col_base = 1, .d = d };
	int err;

	*out = NULL;
	*ntok = 0;
	if (len > DSL_MAX_SOURCE) {
		dsl_diags_add(d, 0, "program is %zu bytes; the limit is %u bytes", len,
			      DSL_MAX_SOURCE);
		return -E2BIG;
	}
	err = lex_all(&l);
	if (!err) {
		*out = dsl_arena_alloc(a, l.n * sizeof(**out));
		if (*out) {
			memcpy(*out, l.v, l.n * sizeof(**out));
			*ntok = l.n;
		} else {
			err = -ENOMEM;
		}
	}
	if (err == -ENOMEM)
		dsl_diags_add(d, l.pos, "out of memory");
	free(l.v);
	return err;
}
