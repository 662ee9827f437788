// SPDX-License-Identifier: GPL-2.0
/*
 * parser.c - tokens to a flat AST, one function per grammar symbol with its
 * EBNF above it. Binary operators come from one precedence table (Lua's
 * subexpr); `enter` bounds recursion and every node's tree height is
 * bounded, so later passes may recurse freely.
 *
 * Top-level declarations may come in any order (the seed's grammar puts
 * types, then sets, then instances).
 */
#include <errno.h>
#include <string.h>

#include "dsl.h"

struct parser {
	struct dsl_arena *a;
	const struct dsl_token *t;  /* current token */
	const struct dsl_token *end;/* the EOF token */
	struct dsl_diags *d;
	int level;
	int err;                    /* first error: -EINVAL or -ENOMEM */
};

static void error_tok(struct parser *p, const struct dsl_token *t, const char *what)
{
	if (p->err)
		return;
	p->err = -EINVAL;
	if (t->kind == DSL_TK_IDENT)
		dsl_diags_add(p->d, t->off, "%s, found '%.40s'", what, t->str);
	else
		dsl_diags_add(p->d, t->off, "%s, found %s", what, dsl_tok_name(t->kind));
}

static void oom(struct parser *p)
{
	if (p->err)
		return;
	p->err = -ENOMEM;
	dsl_diags_add(p->d, p->t->off, "out of memory");
}

static bool at(struct parser *p, enum dsl_tok_kind k)
{
	return p->t->kind == k;
}

static const struct dsl_token *peek(struct parser *p, int n)
{
	const struct dsl_token *t = p->t;

	while (n-- > 0 && t < p->end)
		t++;
	return t;
}

static const struct dsl_token *advance(struct parser *p)
{
	const struct dsl_token *t = p->t;

	if (p->t < p->end)
		p->t++;
	return t;
}

static bool consume(struct parser *p, enum dsl_tok_kind k)
{
	if (!at(p, k))
		return false;
	advance(p);
	return true;
}

static const struct dsl_token *expect(struct parser *p, enum dsl_tok_kind k, const char *what)
{
	if (at(p, k))
		return advance(p);
	char msg[96];

	snprintf(msg, sizeof(msg), "expected %s", what ? what : dsl_tok_name(k));
	error_tok(p, p->t, msg);
	return NULL;
}

static bool enter(struct parser *p)
{
	if (++p->level > DSL_MAX_NESTING) {
		if (!p->err) {
			p->err = -EINVAL;
			dsl_diags_add(p->d, p->t->off, "nesting too deep (more than %d levels)",
				      DSL_MAX_NESTING);
		}
		return false;
	}
	return true;
}

static void leave(struct parser *p)
{
	p->level--;
}

static struct dsl_node *new_node(struct parser *p, enum dsl_node_kind kind,
				 const struct dsl_token *tok)
{
	struct dsl_node *n = dsl_arena_alloc(p->a, sizeof(*n));

	if (!n) {
		oom(p);
		return NULL;
	}
	n->kind = kind;
	n->tok = tok;
	n->depth = 1;
	return n;
}

/* Give n the height of its children + 1; an error past DSL_MAX_AST_DEPTH. */
static struct dsl_node *set_depth(struct parser *p, struct dsl_node *n)
{
	int d = 0;

	if (n->lhs && n->lhs->depth > d)
		d = n->lhs->depth;
	if (n->rhs && n->rhs->depth > d)
		d = n->rhs->depth;
	for (const struct dsl_node *c = n->args; c; c = c->next)
		if (c->depth > d)
			d = c->depth;
	for (const struct dsl_node *c = n->body; c; c = c->next)
		if (c->depth > d)
			d = c->depth;
	n->depth = d + 1;
	if (n->depth > DSL_MAX_AST_DEPTH && !p->err) {
		p->err = -EINVAL;
		dsl_diags_add(p->d, n->tok->off, "expression too deep (more than %d levels)",
			      DSL_MAX_AST_DEPTH);
		return NULL;
	}
	return n;
}

static struct dsl_node *expr(struct parser *p);

/* typeref = [ "table_of" ] ident */
static struct dsl_node *typeref(struct parser *p)
{
	const struct dsl_token *tok = p->t;
	bool table = consume(p, DSL_TK_TABLE_OF);
	const struct dsl_token *id = expect(p, DSL_TK_IDENT, "a type name");
	struct dsl_node *n;

	if (!id || !(n = new_node(p, DSL_N_TYPEREF, table ? tok : id)))
		return NULL;
	n->name = id->str;
	n->bval = table;
	return n;
}

/* decl = ident ":" typeref */
static struct dsl_node *decl(struct parser *p)
{
	const struct dsl_token *id = expect(p, DSL_TK_IDENT, "a name");
	struct dsl_node *n;

	if (!id || !expect(p, DSL_TK_COLON, NULL) || !(n = new_node(p, DSL_N_DECL, id)))
		return NULL;
	n->name = id->str;
	n->lhs = typeref(p);
	return n->lhs ? n : NULL;
}

/* exprlist = expr { "," expr }    (until the token `stop`) */
static struct dsl_node *exprlist(struct parser *p, enum dsl_tok_kind stop)
{
	struct dsl_node head = { 0 }, *cur = &head;

	if (at(p, stop))
		return NULL;
	do {
		cur = cur->next = expr(p);
		if (!cur)
			return NULL;
	} while (consume(p, DSL_TK_COMMA));
	return head.next;
}

/* Is the text after '[' a parameter list "{ ident [ ':' typeref ] [','] } '|'"? */
static bool lambda_has_params(struct parser *p)
{
	const struct dsl_token *t = p->t;

	for (;;) {
		if (t->kind == DSL_TK_BAR)
			return true;
		if (t->kind != DSL_TK_IDENT)
			return false;
		t++;
		if (t->kind == DSL_TK_COLON) {
			t++;
			if (t->kind == DSL_TK_TABLE_OF)
				t++;
			if (t->kind != DSL_TK_IDENT)
				return false;
			t++;
		}
		if (t->kind == DSL_TK_COMMA)
			t++;
	}
}

/* lambda = "[" [ params "|" ] { ident "<-" expr } [ [ "ret" ] expr ] "]"
 * params = { ident [ ":" typeref ] [ "," ] } */
static struct dsl_node *lambda(struct parser *p)
{
	const struct dsl_token *tok = advance(p); /* '[' */
	struct dsl_node *n = new_node(p, DSL_N_LAMBDA, tok);
	struct dsl_node head = { 0 }, *cur = &head;

	if (!n)
		return NULL;
	if (lambda_has_params(p)) {
		while (!at(p, DSL_TK_BAR)) {
			const struct dsl_token *id = advance(p);
			struct dsl_node *prm = new_node(p, DSL_N_DECL, id);

			if (!prm)
				return NULL;
			prm->name = id->str;
			if (consume(p, DSL_TK_COLON) && !(prm->lhs = typeref(p)))
				return NULL;
			consume(p, DSL_TK_COMMA);
			cur = cur->next = prm;
		}
		advance(p); /* '|' */
		n->args = head.next;
	}
	head.next = NULL;
	cur = &head;
	while (!at(p, DSL_TK_RBRACK)) {
		struct dsl_node *s;

		if (at(p, DSL_TK_IDENT) && peek(p, 1)->kind == DSL_TK_ARROW) {
			const struct dsl_token *id = advance(p);

			advance(p);
			if (!(s = new_node(p, DSL_N_ASSIGN, id)))
				return NULL;
			s->name = id->str;
			if (!(s->rhs = expr(p)))
				return NULL;
		} else {
			const struct dsl_token *rt = p->t;

			consume(p, DSL_TK_RET);
			if (!(s = new_node(p, DSL_N_RET, rt)) || !(s->lhs = expr(p)))
				return NULL;
			if (!at(p, DSL_TK_RBRACK)) {
				error_tok(p, p->t, "expected ']' after the lambda's result expression");
				return NULL;
			}
		}
		if (!set_depth(p, s))
			return NULL;
		cur = cur->next = s;
	}
	advance(p); /* ']' */
	n->body = head.next;
	return set_depth(p, n);
}

/* primary = ident | int | float | string | "true" | "false" | "null"
 *         | "(" expr ")" | lambda | "#[" [ exprlist ] "]"
 *         | "struct" ident [ exprlist ] "end" */
static struct dsl_node *primary(struct parser *p)
{
	const struct dsl_token *tok = p->t;
	struct dsl_node *n = NULL;

	switch (tok->kind) {
	case DSL_TK_IDENT:
		if ((n = new_node(p, DSL_N_IDENT, advance(p))))
			n->name = tok->str;
		return n;
	case DSL_TK_INT:
		if ((n = new_node(p, DSL_N_INT, advance(p))))
			n->ival = tok->ival;
		return n;
	case DSL_TK_FLOAT:
		if ((n = new_node(p, DSL_N_FLOAT, advance(p))))
			n->fval = tok->fval;
		return n;
	case DSL_TK_STR:
		if ((n = new_node(p, DSL_N_STR, advance(p))))
			n->sval = tok->str;
		return n;
	case DSL_TK_TRUE:
	case DSL_TK_FALSE:
		if ((n = new_node(p, DSL_N_BOOL, advance(p))))
			n->bval = tok->kind == DSL_TK_TRUE;
		return n;
	case DSL_TK_NULL:
		return new_node(p, DSL_N_NULL, advance(p));
	default:
		break;
	}
	/* nesting is counted by subexpr, which every nested expression passes */
	switch (tok->kind) {
	case DSL_TK_LPAREN:
		advance(p);
		n = expr(p);
		if (n && !expect(p, DSL_TK_RPAREN, "')'"))
			n = NULL;
		break;
	case DSL_TK_LBRACK:
		n = lambda(p);
		break;
	case DSL_TK_HASHBRACK:
		advance(p);
		if (!(n = new_node(p, DSL_N_LIST, tok)))
			break;
		n->args = exprlist(p, DSL_TK_RBRACK);
		if (p->err || !expect(p, DSL_TK_RBRACK, "']' or ','") || !set_depth(p, n))
			n = NULL;
		break;
	case DSL_TK_STRUCT: {
		advance(p);
		const struct dsl_token *id = expect(p, DSL_TK_IDENT, "a struct type name");

		if (!id || !(n = new_node(p, DSL_N_STRUCTLIT, tok)))
			break;
		n->name = id->str;
		n->args = exprlist(p, DSL_TK_END);
		if (p->err || !expect(p, DSL_TK_END, "'end' or ','") || !set_depth(p, n))
			n = NULL;
		break;
	}
	default:
		error_tok(p, tok, "expected an expression");
		break;
	}
	return n;
}

/* postfix = primary { "." ident [ "(" [ exprlist ] ")" ] } */
static struct dsl_node *postfix(struct parser *p)
{
	struct dsl_node *n = primary(p);

	while (n && at(p, DSL_TK_DOT)) {
		advance(p);
		const struct dsl_token *id = expect(p, DSL_TK_IDENT, "a member name after '.'");
		struct dsl_node *m;

		if (!id || !(m = new_node(p, DSL_N_MEMBER, id)))
			return NULL;
		m->name = id->str;
		m->lhs = n;
		if (consume(p, DSL_TK_LPAREN)) {
			m->kind = DSL_N_CALL;
			m->args = exprlist(p, DSL_TK_RPAREN);
			if (p->err || !expect(p, DSL_TK_RPAREN, "')' or ','"))
				return NULL;
		}
		n = set_depth(p, m);
	}
	return n;
}

/* Binary operators, lowest to highest priority (left = right: left-associative). */
static const struct binop {
	enum dsl_tok_kind tok;
	enum dsl_node_kind node;
	int prio;
} binops[] = {
	{ DSL_TK_OR, DSL_N_OR, 1 },
	{ DSL_TK_AND, DSL_N_AND, 2 },
	{ DSL_TK_EQ, DSL_N_EQ, 3 }, { DSL_TK_NE, DSL_N_NE, 3 },
	{ DSL_TK_LT, DSL_N_LT, 3 }, { DSL_TK_LE, DSL_N_LE, 3 },
	{ DSL_TK_GT, DSL_N_GT, 3 }, { DSL_TK_GE, DSL_N_GE, 3 },
	{ DSL_TK_IN, DSL_N_IN, 3 }, { DSL_TK_IS, DSL_N_IS, 3 },
	{ DSL_TK_PLUS, DSL_N_ADD, 4 }, { DSL_TK_MINUS, DSL_N_SUB, 4 },
	{ DSL_TK_STAR, DSL_N_MUL, 5 }, { DSL_TK_SLASH, DSL_N_DIV, 5 },
	{ DSL_TK_PERCENT, DSL_N_MOD, 5 },
};
#define NOT_PRIO   2 /* `not a = b and c` is `(not (a = b)) and c` */
#define UNARY_PRIO 6 /* `-a * b` is `(-a) * b` */

static const struct binop *find_binop(enum dsl_tok_kind k)
{
	for (size_t i = 0; i < sizeof(binops) / sizeof(binops[0]); i++)
		if (binops[i].tok == k)
			return &binops[i];
	return NULL;
}

/* classname = ident { "." ident } { "[" "]" }   (the right side of `is`) */
static const char *classname(struct parser *p)
{
	const struct dsl_token *first = expect(p, DSL_TK_IDENT, "a class name after 'is'");
	size_t n = 0, dims = 0;

	if (!first)
		return NULL;
	const struct dsl_token *last = first;

	while (at(p, DSL_TK_DOT) && peek(p, 1)->kind == DSL_TK_IDENT) {
		advance(p);
		last = advance(p);
	}
	while (at(p, DSL_TK_LBRACK) && peek(p, 1)->kind == DSL_TK_RBRACK && dims < 255) {
		advance(p);
		advance(p);
		dims++;
	}
	if (last == first && !dims)
		return first->str;
	/* rebuild "a.b.c[]" without the spaces the source may hold */
	for (const struct dsl_token *t = first; t <= last; t++)
		n += t->kind == DSL_TK_IDENT ? strlen(t->str) : 1;
	char *s = dsl_arena_alloc(p->a, n + 2 * dims + 1);

	if (!s) {
		oom(p);
		return NULL;
	}
	for (const struct dsl_token *t = first; t <= last; t++)
		strcat(s, t->kind == DSL_TK_IDENT ? t->str : ".");
	while (dims--)
		strcat(s, "[]");
	return s;
}

/* subexpr = ( ("not" | "-") subexpr | postfix ) { binop subexpr }
 *   where a binop binds only if its priority exceeds `limit`, and
 *   "is" takes a classname instead of a subexpr. */
static struct dsl_node *subexpr(struct parser *p, int limit)
{
	struct dsl_node *n;

	if (!enter(p))
		return NULL;
	if (at(p, DSL_TK_NOT) || at(p, DSL_TK_MINUS)) {
		const struct dsl_token *tok = advance(p);

		n = new_node(p, tok->kind == DSL_TK_NOT ? DSL_N_NOT : DSL_N_NEG, tok);
		if (n && (!(n->lhs = subexpr(p, tok->kind == DSL_TK_NOT ? NOT_PRIO : UNARY_PRIO)) ||
			  !set_depth(p, n)))
			n = NULL;
	} else {
		n = postfix(p);
	}
	const struct binop *op;

	while (n && (op = find_binop(p->t->kind)) && op->prio > limit) {
		struct dsl_node *b = new_node(p, op->node, advance(p));

		if (!b) {
			n = NULL;
			break;
		}
		b->lhs = n;
		if (op->node == DSL_N_IS)
			b->name = classname(p);
		else
			b->rhs = subexpr(p, op->prio);
		if ((op->node == DSL_N_IS ? !b->name : !b->rhs) || !set_depth(p, b))
			n = NULL;
		else
			n = b;
	}
	leave(p);
	return n;
}

/* expr = subexpr(0) */
static struct dsl_node *expr(struct parser *p)
{
	struct dsl_node *n = subexpr(p, 0);

	return p->err ? NULL : n;
}

/* typedecl = ident ":" ( "table_of" ident | "struct" { decl } "end" ) */
static struct dsl_node *typedecl(struct parser *p)
{
	const struct dsl_token *id = advance(p);
	struct dsl_node *n = new_node(p, DSL_N_TYPEDECL, id);

	if (!n || !expect(p, DSL_TK_COLON, NULL))
		return NULL;
	n->name = id->str;
	if (at(p, DSL_TK_TABLE_OF)) {
		n->lhs = typeref(p);
		return n->lhs ? n : NULL;
	}
	if (!expect(p, DSL_TK_STRUCT, "'table_of' or 'struct'"))
		return NULL;
	n->bval = true; /* struct */
	struct dsl_node head = { 0 }, *cur = &head;

	while (!at(p, DSL_TK_END)) {
		if (!at(p, DSL_TK_IDENT)) {
			error_tok(p, p->t, "expected a field declaration or 'end'");
			return NULL;
		}
		if (!(cur = cur->next = decl(p)))
			return NULL;
	}
	advance(p);
	n->args = head.next;
	return n;
}

/* Does `ident :` here start a top-level type declaration (not a property)? */
static bool at_typedecl(struct parser *p)
{
	const struct dsl_token *t = peek(p, 2);

	if (peek(p, 1)->kind != DSL_TK_COLON)
		return false;
	if (t->kind == DSL_TK_STRUCT)
		return true;
	return t->kind == DSL_TK_TABLE_OF && peek(p, 3)->kind == DSL_TK_IDENT &&
	       peek(p, 4)->kind != DSL_TK_ARROW;
}

/* property = ( "roots" | "membership" | "on_inclusion" ) "<-" expr
 *          | decl "<-" expr */
static struct dsl_node *property(struct parser *p)
{
	const struct dsl_token *tok = p->t;
	struct dsl_node *n = new_node(p, DSL_N_PROP, tok);

	if (!n)
		return NULL;
	switch (tok->kind) {
	case DSL_TK_ROOTS: n->prop = DSL_PROP_ROOTS; advance(p); break;
	case DSL_TK_MEMBERSHIP: n->prop = DSL_PROP_MEMBERSHIP; advance(p); break;
	case DSL_TK_ON_INCLUSION: n->prop = DSL_PROP_ON_INCLUSION; advance(p); break;
	default:
		n->prop = DSL_PROP_USER;
		if (!(n->lhs = decl(p)))
			return NULL;
		n->name = n->lhs->name;
		break;
	}
	if (!expect(p, DSL_TK_ARROW, "'<-'") || !(n->rhs = expr(p)))
		return NULL;
	return n;
}

/* settype = "set_type" ident ":" property { property } */
static struct dsl_node *settype(struct parser *p)
{
	const struct dsl_token *kw = advance(p);
	const struct dsl_token *id = expect(p, DSL_TK_IDENT, "a set type name");
	struct dsl_node *n;

	if (!id || !expect(p, DSL_TK_COLON, NULL) || !(n = new_node(p, DSL_N_SETTYPE, kw)))
		return NULL;
	n->name = id->str;
	n->tok = id;
	struct dsl_node head = { 0 }, *cur = &head;

	while (at(p, DSL_TK_ROOTS) || at(p, DSL_TK_MEMBERSHIP) || at(p, DSL_TK_ON_INCLUSION) ||
	       (at(p, DSL_TK_IDENT) && !at_typedecl(p))) {
		if (!(cur = cur->next = property(p)))
			return NULL;
	}
	if (!head.next) {
		error_tok(p, p->t, "expected a property ('roots', 'membership', 'on_inclusion' or 'name : type <- value')");
		return NULL;
	}
	n->body = head.next;
	return n;
}

/* instances = "instances_for" ident "have_names" "=" expr */
static struct dsl_node *instances(struct parser *p)
{
	advance(p);
	const struct dsl_token *id = expect(p, DSL_TK_IDENT, "a set type name");
	struct dsl_node *n;

	if (!id || !expect(p, DSL_TK_HAVE_NAMES, NULL) || !expect(p, DSL_TK_EQ, NULL) ||
	    !(n = new_node(p, DSL_N_INSTANCES, id)))
		return NULL;
	n->name = id->str;
	n->rhs = expr(p);
	return n->rhs ? n : NULL;
}

/* program = { typedecl | settype | instances } EOF */
int dsl_parse(struct dsl_arena *a, const struct dsl_token *toks, size_t ntok,
	      struct dsl_diags *d, struct dsl_ast *ast)
{
	struct parser p = { .a = a, .t = toks, .end = toks + ntok - 1, .d = d };
	struct dsl_node **types = &ast->types, **sets = &ast->sets, **insts = &ast->instances;

	memset(ast, 0, sizeof(*ast));
	if (ntok == 0 || toks[ntok - 1].kind != DSL_TK_EOF)
		return -EINVAL;
	while (!at(&p, DSL_TK_EOF) && !p.err) {
		struct dsl_node *n = NULL;

		if (at(&p, DSL_TK_SET_TYPE)) {
			if ((n = settype(&p)))
				*sets = n, sets = &n->next;
		} else if (at(&p, DSL_TK_INSTANCES_FOR)) {
			if ((n = instances(&p)))
				*insts = n, insts = &n->next;
		} else if (at(&p, DSL_TK_IDENT) && peek(&p, 1)->kind == DSL_TK_COLON) {
			if ((n = typedecl(&p)))
				*types = n, types = &n->next;
		} else {
			error_tok(&p, p.t, "expected 'set_type', 'instances_for' or a type declaration");
		}
		if (!n && !p.err)
			p.err = -EINVAL;
	}
	return p.err;
}
