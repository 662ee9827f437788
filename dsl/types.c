// SPDX-License-Identifier: GPL-2.0
/*
 * types.c - the type pass: resolves every name (lambda parameter, property,
 * context name, global, ref kind), gives every expression a type, and checks
 * class and field names against the heap schema before any walk.
 *
 * Contexts: have_names is evaluated in the global context; roots and the
 * properties' initial values in the global context with ENTITY bound;
 * membership and on_inclusion in the local context (THIS, REFERRER,
 * ref_kind, ENTITY). A lambda without parameters given to a list member
 * binds the element to `it`.
 */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "dsl.h"

static const struct dsl_type T_VOID = { .kind = DSL_T_VOID }, T_NULL = { .kind = DSL_T_NULL },
	T_BOOL = { .kind = DSL_T_BOOL }, T_INT = { .kind = DSL_T_INT },
	T_FLOAT = { .kind = DSL_T_FLOAT }, T_STRING = { .kind = DSL_T_STRING },
	T_OBJECT = { .kind = DSL_T_OBJECT }, T_CLASS = { .kind = DSL_T_CLASS },
	T_LOADER = { .kind = DSL_T_LOADER }, T_THREAD = { .kind = DSL_T_THREAD },
	T_REFKIND = { .kind = DSL_T_REFKIND }, T_UNASSIGNED = { .kind = DSL_T_UNASSIGNED },
	T_DYN = { .kind = DSL_T_DYN };
static const struct dsl_type T_LIST_OBJECT = { .kind = DSL_T_LIST, .elem = &T_OBJECT },
	T_LIST_CLASS = { .kind = DSL_T_LIST, .elem = &T_CLASS },
	T_LIST_LOADER = { .kind = DSL_T_LIST, .elem = &T_LOADER },
	T_LIST_THREAD = { .kind = DSL_T_LIST, .elem = &T_THREAD },
	T_LIST_STRING = { .kind = DSL_T_LIST, .elem = &T_STRING };

enum ctx { CTX_NAMES, CTX_GLOBAL, CTX_LOCAL };

struct frame {
	const char **names;
	const struct dsl_type **types;
	int n;
};

struct utype {
	const char *name;
	const struct dsl_type *ty;
};

struct tc {
	struct dsl_arena *a;
	const struct dsl_schema *schema;
	struct dsl_diags *d;
	int err;
	struct utype *utypes;
	int nutypes;
	struct dsl_typed *out;
	struct dsl_settype *set;   /* current set type, NULL in have_names */
	enum ctx ctx;
	struct frame frames[DSL_MAX_NESTING + 2];
	int level;
	int fcap, ccap;
};

static void error_at(struct tc *tc, const struct dsl_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void error_at(struct tc *tc, const struct dsl_node *n, const char *fmt, ...)
{
	char msg[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (!tc->err)
		tc->err = -EINVAL;
	dsl_diags_add(tc->d, n->tok ? n->tok->off : 0, "%s", msg);
}

static void *alloc(struct tc *tc, size_t size)
{
	void *p = dsl_arena_alloc(tc->a, size);

	if (!p && tc->err != -ENOMEM) {
		tc->err = -ENOMEM;
		dsl_diags_add(tc->d, 0, "out of memory");
	}
	return p;
}

const char *dsl_type_str(const struct dsl_type *t, char *buf, size_t n)
{
	static const char *const names[] = {
		[DSL_T_VOID] = "nothing", [DSL_T_NULL] = "null", [DSL_T_BOOL] = "bool",
		[DSL_T_INT] = "int", [DSL_T_FLOAT] = "float", [DSL_T_STRING] = "string",
		[DSL_T_OBJECT] = "Object", [DSL_T_CLASS] = "Class", [DSL_T_LOADER] = "Classloader",
		[DSL_T_THREAD] = "Thread", [DSL_T_REFKIND] = "ref_kind",
		[DSL_T_UNASSIGNED] = "Unassigned", [DSL_T_LAMBDA] = "lambda",
		[DSL_T_DYN] = "a field value",
	};
	char inner[96];

	if (!t)
		snprintf(buf, n, "?");
	else if (t->kind == DSL_T_LIST)
		snprintf(buf, n, "table_of %s", dsl_type_str(t->elem, inner, sizeof(inner)));
	else if (t->kind == DSL_T_STRUCT)
		snprintf(buf, n, "struct %s", t->name);
	else if (t->kind == DSL_T_INSTANCE)
		snprintf(buf, n, "instance of %s", t->name);
	else
		snprintf(buf, n, "%s", names[t->kind]);
	return buf;
}

/* A short-lived type name for messages (two per message at most). */
#define TS(t) dsl_type_str((t), (char[128]){ 0 }, 128)

static const struct dsl_type *list_of(struct tc *tc, const struct dsl_type *elem)
{
	struct dsl_type *t = alloc(tc, sizeof(*t));

	if (t) {
		t->kind = DSL_T_LIST;
		t->elem = elem;
	}
	return t;
}

static bool is_obj(const struct dsl_type *t)
{
	return t->kind == DSL_T_OBJECT || t->kind == DSL_T_CLASS || t->kind == DSL_T_LOADER ||
	       t->kind == DSL_T_THREAD;
}

static bool is_num(const struct dsl_type *t)
{
	return t->kind == DSL_T_INT || t->kind == DSL_T_FLOAT || t->kind == DSL_T_DYN;
}

static bool is_boolish(const struct dsl_type *t)
{
	return t->kind == DSL_T_BOOL || t->kind == DSL_T_DYN;
}

/* May a value of type from be stored where type to is expected? */
static bool assignable(const struct dsl_type *to, const struct dsl_type *from)
{
	if (to->kind == DSL_T_DYN || from->kind == DSL_T_DYN)
		return from->kind != DSL_T_VOID && from->kind != DSL_T_LAMBDA &&
		       from->kind != DSL_T_UNASSIGNED;
	if (from->kind == DSL_T_NULL)
		return to->kind != DSL_T_VOID && to->kind != DSL_T_LAMBDA;
	if (to->kind == DSL_T_OBJECT)
		return is_obj(from);
	if (to->kind == DSL_T_FLOAT)
		return from->kind == DSL_T_FLOAT || from->kind == DSL_T_INT;
	if (to->kind != from->kind)
		return false;
	switch (to->kind) {
	case DSL_T_LIST:
		return from->elem->kind == DSL_T_NULL || assignable(to->elem, from->elem);
	case DSL_T_STRUCT:
	case DSL_T_INSTANCE:
		return to == from;
	default:
		return true;
	}
}

/* Intern a field name; returns its id or -1. */
static int intern_field(struct tc *tc, const char *name, unsigned bits)
{
	struct dsl_typed *o = tc->out;

	for (int i = 0; i < o->nfields; i++)
		if (!strcmp(o->fields[i], name))
			return i;
	if (o->nfields == tc->fcap) {
		int cap = tc->fcap ? tc->fcap * 2 : 16;
		const char **f = alloc(tc, cap * sizeof(*f));
		unsigned *b = alloc(tc, cap * sizeof(*b));

		if (!f || !b)
			return -1;
		if (o->nfields) {
			memcpy(f, o->fields, o->nfields * sizeof(*f));
			memcpy(b, o->field_bits, o->nfields * sizeof(*b));
		}
		o->fields = f;
		o->field_bits = b;
		tc->fcap = cap;
	}
	o->fields[o->nfields] = name;
	o->field_bits[o->nfields] = bits;
	return o->nfields++;
}

static int intern_class(struct tc *tc, const char *name)
{
	struct dsl_typed *o = tc->out;

	for (int i = 0; i < o->nclasses; i++)
		if (!strcmp(o->classes[i], name))
			return i;
	if (o->nclasses == tc->ccap) {
		int cap = tc->ccap ? tc->ccap * 2 : 16;
		const char **c = alloc(tc, cap * sizeof(*c));

		if (!c)
			return -1;
		if (o->nclasses)
			memcpy(c, o->classes, o->nclasses * sizeof(*c));
		o->classes = c;
		tc->ccap = cap;
	}
	o->classes[o->nclasses] = name;
	return o->nclasses++;
}

/* typeref = builtin type name | user type | table_of typeref */
static const struct dsl_type *resolve_typeref(struct tc *tc, const struct dsl_node *n)
{
	static const struct { const char *name; const struct dsl_type *ty; } builtin[] = {
		{ "int", &T_INT }, { "bool", &T_BOOL }, { "string", &T_STRING },
		{ "float", &T_FLOAT }, { "Object", &T_OBJECT }, { "Class", &T_CLASS },
		{ "Classloader", &T_LOADER }, { "Thread", &T_THREAD },
		{ "ThreadGroup", &T_OBJECT },
	};
	const struct dsl_type *t = NULL;

	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]) && !t; i++)
		if (!strcmp(builtin[i].name, n->name))
			t = builtin[i].ty;
	for (int i = 0; i < tc->nutypes && !t; i++)
		if (!strcmp(tc->utypes[i].name, n->name))
			t = tc->utypes[i].ty;
	if (!t) {
		error_at(tc, n->bval ? n : n, "unknown type '%s'", n->name);
		return NULL;
	}
	return n->bval ? list_of(tc, t) : t;
}

static const struct dsl_type *check(struct tc *tc, struct dsl_node *n);
static const struct dsl_type *check_lambda(struct tc *tc, struct dsl_node *lam,
					   const struct dsl_type *elem);

static const struct dsl_type *builtin_type(int b)
{
	switch (b) {
	case DSL_B_CLASS: return &T_CLASS;
	case DSL_B_NAME: return &T_STRING;
	case DSL_B_CLASSLOADER: return &T_LOADER;
	case DSL_B_REFERRERS: return &T_LIST_OBJECT;
	case DSL_B_ROOT_PATH: return &T_LIST_STRING;
	default: return &T_INT;
	}
}

/* Builtin member of an object-like value of type t, or -1. `name` and
 * `classloader` are built-ins of every object-like type: a value of static
 * type Object may be a class or a thread at run time. */
static int object_builtin(const struct dsl_type *t, const char *name)
{
	static const struct { const char *name; int b; } all[] = {
		{ "class", DSL_B_CLASS }, { "size", DSL_B_SIZE }, { "length", DSL_B_LENGTH },
		{ "id", DSL_B_ID }, { "age", DSL_B_AGE }, { "retained", DSL_B_RETAINED },
		{ "referrers", DSL_B_REFERRERS }, { "root_path", DSL_B_ROOT_PATH },
	};

	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i].name, name))
			return all[i].b;
	if (!strcmp(name, "name") && t->kind != DSL_T_LOADER)
		return DSL_B_NAME;
	if (!strcmp(name, "classloader") && t->kind != DSL_T_LOADER && t->kind != DSL_T_THREAD)
		return DSL_B_CLASSLOADER;
	return -1;
}

/* Does built-in b take precedence over a Java field of the same name on a
 * value of static type t? docs/design.md: Class.name, Class.classloader,
 * Classloader.id, Thread.name; and memtrace's `referrers` and `root_path`
 * everywhere (no Java field name should hide them). */
static bool builtin_first(const struct dsl_type *t, int b)
{
	switch (b) {
	case DSL_B_NAME: return t->kind == DSL_T_CLASS || t->kind == DSL_T_THREAD;
	case DSL_B_CLASSLOADER: return t->kind == DSL_T_CLASS;
	case DSL_B_ID: return t->kind == DSL_T_LOADER;
	case DSL_B_REFERRERS:
	case DSL_B_ROOT_PATH: return true;
	default: return false;
	}
}

/* May an object of static type t be a class, loader or thread whose built-in
 * b takes precedence at run time (name, classloader, id)? */
static bool role_first(const struct dsl_type *t, int b)
{
	return (t->kind == DSL_T_OBJECT || t->kind == DSL_T_DYN) &&
	       (b == DSL_B_NAME || b == DSL_B_CLASSLOADER || b == DSL_B_ID);
}

/* The DSL type of a field from its DSL_FT_* bits. */
static const struct dsl_type *field_type(unsigned bits)
{
	switch (bits) {
	case DSL_FT_INT: return &T_INT;
	case DSL_FT_FLOAT: return &T_FLOAT;
	case DSL_FT_BOOL: return &T_BOOL;
	case DSL_FT_STRING: return &T_STRING;
	case DSL_FT_REF: return &T_OBJECT;
	default: return &T_DYN;
	}
}

/* member = lhs "." name: struct field, ENTITY.name, list size, Java field, builtin */
static const struct dsl_type *check_member(struct tc *tc, struct dsl_node *n)
{
	const struct dsl_type *lt = check(tc, n->lhs);

	if (!lt)
		return NULL;
	if (lt->kind == DSL_T_INSTANCE) {
		if (!strcmp(n->name, "name")) {
			n->res = DSL_RES_ENTITY_NAME;
			return tc->out->sets[lt->set].name_type;
		}
	} else if (lt->kind == DSL_T_STRUCT) {
		int i = 0;

		for (const struct dsl_node *f = lt->fields; f; f = f->next, i++) {
			if (!strcmp(f->name, n->name)) {
				n->res = DSL_RES_STRUCT_FIELD;
				n->slot = i;
				return f->ty;
			}
		}
		error_at(tc, n, "struct %s has no field '%s'", lt->name, n->name);
		return NULL;
	} else if (lt->kind == DSL_T_LIST) {
		if (!strcmp(n->name, "size")) {
			n->res = DSL_RES_BUILTIN;
			n->slot = DSL_B_LIST_SIZE;
			return &T_INT;
		}
		if (!strcmp(n->name, "filter") || !strcmp(n->name, "map") ||
		    !strcmp(n->name, "exists") || !strcmp(n->name, "foreach")) {
			error_at(tc, n, "'%s' needs a lambda argument: %s([it | ...])", n->name, n->name);
			return NULL;
		}
	} else if (is_obj(lt) || lt->kind == DSL_T_DYN) {
		int b = object_builtin(lt, n->name);
		unsigned bits = tc->schema ? tc->schema->field_types(tc->schema->ctx, n->name)
					   : DSL_FT_INT | DSL_FT_REF;

		if (!bits && b < 0) {
			error_at(tc, n, "no class of the heap has a field '%s'", n->name);
			return NULL;
		}
		if (b == DSL_B_AGE) {
			tc->out->uses_age = true;
			if (!bits && tc->schema && tc->schema->no_age) {
				error_at(tc, n, "objects have no 'age' here: %s", tc->schema->no_age);
				return NULL;
			}
		}
		tc->out->uses_retained |= b == DSL_B_RETAINED;
		tc->out->uses_referrers |= b == DSL_B_REFERRERS;
		tc->out->uses_root_path |= b == DSL_B_ROOT_PATH;
		if (b >= 0 && builtin_first(lt, b))
			bits = 0;
		if (bits) {
			n->slot = intern_field(tc, n->name, bits);
			if (n->slot < 0)
				return NULL;
		}
		if (bits && b >= 0) {
			const struct dsl_type *ft = field_type(bits), *bt = builtin_type(b);

			n->res = DSL_RES_FIELD_OR_BUILTIN;
			n->ival = b;
			n->bval = role_first(lt, b); /* a class, loader or thread: the built-in */
			return ft->kind == bt->kind ? bt : &T_DYN;
		}
		if (bits) {
			n->res = DSL_RES_FIELD;
			return tc->schema ? field_type(bits) : &T_DYN;
		}
		n->res = DSL_RES_BUILTIN;
		n->slot = b;
		return builtin_type(b);
	}
	error_at(tc, n, "%s has no member '%s'", TS(lt), n->name);
	return NULL;
}

/* call = lhs "." ( filter | map | exists | foreach ) "(" lambda ")" */
static const struct dsl_type *check_call(struct tc *tc, struct dsl_node *n)
{
	const struct dsl_type *lt = check(tc, n->lhs), *rt;
	int b;

	if (!lt)
		return NULL;
	if (!strcmp(n->name, "filter"))
		b = DSL_B_FILTER;
	else if (!strcmp(n->name, "map"))
		b = DSL_B_MAP;
	else if (!strcmp(n->name, "exists"))
		b = DSL_B_EXISTS;
	else if (!strcmp(n->name, "foreach"))
		b = DSL_B_FOREACH;
	else {
		error_at(tc, n, "unknown member function '%s' (lists have filter, map, exists, foreach)",
			 n->name);
		return NULL;
	}
	if (lt->kind != DSL_T_LIST) {
		error_at(tc, n, "'%s' needs a list (table_of ...), not %s", n->name, TS(lt));
		return NULL;
	}
	if (!n->args || n->args->next || n->args->kind != DSL_N_LAMBDA) {
		error_at(tc, n, "'%s' takes one lambda argument: %s([it | ...])", n->name, n->name);
		return NULL;
	}
	n->res = DSL_RES_BUILTIN;
	n->slot = b;
	if (!(rt = check_lambda(tc, n->args, lt->elem)))
		return NULL;
	switch (b) {
	case DSL_B_FILTER:
	case DSL_B_EXISTS:
		if (!is_boolish(rt)) {
			error_at(tc, n->args, "the lambda of '%s' must give bool, not %s", n->name, TS(rt));
			return NULL;
		}
		return b == DSL_B_FILTER ? lt : &T_BOOL;
	case DSL_B_MAP:
		if (rt->kind == DSL_T_VOID || rt->kind == DSL_T_UNASSIGNED) {
			error_at(tc, n->args, "the lambda of 'map' must give a value");
			return NULL;
		}
		return list_of(tc, rt);
	default:
		return &T_VOID;
	}
}

/* Resolve a name used as a value. */
static const struct dsl_type *check_ident(struct tc *tc, struct dsl_node *n)
{
	static const struct { const char *name; int res; const struct dsl_type *ty; } globals[] = {
		{ "objects", DSL_RES_OBJECTS, &T_LIST_OBJECT },
		{ "classes", DSL_RES_CLASSES, &T_LIST_CLASS },
		{ "classloaders", DSL_RES_LOADERS, &T_LIST_LOADER },
		{ "threads", DSL_RES_THREADS, &T_LIST_THREAD },
		{ "thread_groups", DSL_RES_TGROUPS, &T_LIST_OBJECT },
	};
	const char *name = n->name;

	for (int l = tc->level; l >= 1; l--) {
		const struct frame *f = &tc->frames[l];

		for (int i = 0; i < f->n; i++) {
			if (!strcmp(f->names[i], name)) {
				n->res = DSL_RES_PARAM;
				n->level = l;
				n->slot = i;
				return f->types[i];
			}
		}
	}
	if (tc->set && tc->ctx != CTX_NAMES) {
		for (int i = 0; i < tc->set->nprops; i++) {
			if (!strcmp(tc->set->props[i]->name, name)) {
				n->res = DSL_RES_PROP;
				n->slot = i;
				return tc->set->props[i]->ty;
			}
		}
	}
	if (!strcmp(name, "THIS") || !strcmp(name, "REFERRER") || !strcmp(name, "ref_kind")) {
		if (tc->ctx != CTX_LOCAL) {
			error_at(tc, n, "'%s' is only available in membership and on_inclusion", name);
			return NULL;
		}
		n->res = name[0] == 'T' ? DSL_RES_THIS : name[0] == 'R' ? DSL_RES_REFERRER
									: DSL_RES_REFKIND_VAR;
		return n->res == DSL_RES_REFKIND_VAR ? &T_REFKIND : &T_OBJECT;
	}
	if (!strcmp(name, "ENTITY")) {
		if (!tc->set || tc->ctx == CTX_NAMES) {
			error_at(tc, n, "'ENTITY' is not available in have_names");
			return NULL;
		}
		n->res = DSL_RES_ENTITY;
		return tc->set->inst_type;
	}
	if (!strcmp(name, "Unassigned")) {
		n->res = DSL_RES_UNASSIGNED;
		return &T_UNASSIGNED;
	}
	for (size_t i = 0; i < sizeof(globals) / sizeof(globals[0]); i++) {
		if (!strcmp(globals[i].name, name)) {
			n->res = globals[i].res;
			return globals[i].ty;
		}
	}
	for (int k = 0; k <= DSL_REF_ROOT; k++) {
		if (!strcmp(dsl_ref_kind_name(k), name)) {
			n->res = DSL_RES_REFKIND;
			n->slot = k;
			return &T_REFKIND;
		}
	}
	error_at(tc, n, "unknown name '%s'", name);
	return NULL;
}

static bool comparable(const struct dsl_type *a, const struct dsl_type *b)
{
	if (a->kind == DSL_T_NULL || b->kind == DSL_T_NULL)
		return true;
	if (a->kind == DSL_T_DYN || b->kind == DSL_T_DYN)
		return a->kind != DSL_T_LIST && b->kind != DSL_T_LIST && a->kind != DSL_T_STRUCT &&
		       b->kind != DSL_T_STRUCT;
	if (is_num(a) && is_num(b))
		return true;
	if (is_obj(a) && is_obj(b))
		return true;
	if (a->kind != b->kind)
		return false;
	return a->kind == DSL_T_STRING || a->kind == DSL_T_BOOL || a->kind == DSL_T_REFKIND ||
	       (a->kind == DSL_T_INSTANCE && a == b);
}

static const char *op_name(enum dsl_node_kind k)
{
	switch (k) {
	case DSL_N_ADD: return "+";
	case DSL_N_SUB: return "-";
	case DSL_N_MUL: return "*";
	case DSL_N_DIV: return "/";
	case DSL_N_MOD: return "%";
	case DSL_N_EQ: return "=";
	case DSL_N_NE: return "!=";
	case DSL_N_LT: return "<";
	case DSL_N_LE: return "<=";
	case DSL_N_GT: return ">";
	case DSL_N_GE: return ">=";
	case DSL_N_AND: return "and";
	case DSL_N_OR: return "or";
	default: return "?";
	}
}

static const struct dsl_type *check_binary(struct tc *tc, struct dsl_node *n)
{
	const struct dsl_type *l = check(tc, n->lhs), *r = check(tc, n->rhs);

	if (!l || !r)
		return NULL;
	switch (n->kind) {
	case DSL_N_AND:
	case DSL_N_OR:
		if (!is_boolish(l) || !is_boolish(r)) {
			error_at(tc, n, "'%s' needs bool operands, not %s and %s", op_name(n->kind),
				 TS(l), TS(r));
			return NULL;
		}
		return &T_BOOL;
	case DSL_N_EQ:
	case DSL_N_NE:
		if (!comparable(l, r)) {
			error_at(tc, n, "cannot compare %s with %s", TS(l), TS(r));
			return NULL;
		}
		return &T_BOOL;
	case DSL_N_LT: case DSL_N_LE: case DSL_N_GT: case DSL_N_GE:
		if (!((is_num(l) || l->kind == DSL_T_NULL) && (is_num(r) || r->kind == DSL_T_NULL)) &&
		    !((l->kind == DSL_T_STRING || l->kind == DSL_T_DYN) &&
		      (r->kind == DSL_T_STRING || r->kind == DSL_T_DYN))) {
			error_at(tc, n, "'%s' needs numbers or strings, not %s and %s",
				 op_name(n->kind), TS(l), TS(r));
			return NULL;
		}
		return &T_BOOL;
	default: /* arithmetic */
		if (!is_num(l) || !is_num(r)) {
			error_at(tc, n, "'%s' needs numbers, not %s and %s", op_name(n->kind), TS(l),
				 TS(r));
			return NULL;
		}
		if (l->kind == DSL_T_DYN || r->kind == DSL_T_DYN)
			return &T_DYN;
		return l->kind == DSL_T_FLOAT || r->kind == DSL_T_FLOAT ? &T_FLOAT : &T_INT;
	}
}

/* in = lhs "in" ( Unassigned | ENTITY | list ) */
static const struct dsl_type *check_in(struct tc *tc, struct dsl_node *n)
{
	const struct dsl_type *l = check(tc, n->lhs), *r = check(tc, n->rhs);

	if (!l || !r)
		return NULL;
	if (r->kind == DSL_T_UNASSIGNED || r->kind == DSL_T_INSTANCE) {
		if (!is_obj(l) && l->kind != DSL_T_DYN && l->kind != DSL_T_NULL) {
			error_at(tc, n, "only objects can be 'in' %s, not %s",
				 r->kind == DSL_T_UNASSIGNED ? "Unassigned" : "an instance", TS(l));
			return NULL;
		}
		return &T_BOOL;
	}
	if (r->kind == DSL_T_LIST) {
		if (!comparable(l, r->elem)) {
			error_at(tc, n, "cannot look for %s in %s", TS(l), TS(r));
			return NULL;
		}
		return &T_BOOL;
	}
	error_at(tc, n->rhs, "'in' needs Unassigned, ENTITY or a list on its right, not %s", TS(r));
	return NULL;
}

/* is = lhs "is" classname: the class must exist in the heap */
static const struct dsl_type *check_is(struct tc *tc, struct dsl_node *n)
{
	const struct dsl_type *l = check(tc, n->lhs);

	if (!l)
		return NULL;
	if (!is_obj(l) && l->kind != DSL_T_DYN && l->kind != DSL_T_NULL) {
		error_at(tc, n, "'is' needs an object on its left, not %s", TS(l));
		return NULL;
	}
	if (tc->schema && !tc->schema->has_class(tc->schema->ctx, n->name)) {
		struct dsl_node at = *n;

		at.tok = n->tok + 1; /* the class name token */
		error_at(tc, &at, "no class of the heap is named '%s'", n->name);
		return NULL;
	}
	if (tc->schema && tc->schema->no_ifaces && tc->schema->class_kinds) {
		/* the name, and for an array name its element type (E[] is an F[] when E is
		 * an F, interfaces included) */
		size_t len = strlen(n->name);
		char base[512];
		unsigned kinds = tc->schema->class_kinds(tc->schema->ctx, n->name);

		while (len > 2 && !strcmp(n->name + len - 2, "[]") && len < sizeof(base))
			len -= 2;
		if (len < strlen(n->name) && len < sizeof(base)) {
			memcpy(base, n->name, len);
			base[len] = '\0';
			kinds |= tc->schema->class_kinds(tc->schema->ctx, base);
		}
		if (kinds & (1u << DSL_CK_UNKNOWN | 1u << DSL_CK_INTERFACE)) {
			struct dsl_node at = *n;

			at.tok = n->tok + 1;
			error_at(tc, &at, "'%s' may be or hold an interface, and %s: 'is' would miss "
				 "the classes that implement it", n->name, tc->schema->no_ifaces);
			return NULL;
		}
	}
	n->slot = intern_class(tc, n->name);
	return n->slot < 0 ? NULL : &T_BOOL;
}

static const struct dsl_type *check_list(struct tc *tc, struct dsl_node *n)
{
	const struct dsl_type *elem = &T_NULL;

	for (struct dsl_node *e = n->args; e; e = e->next) {
		const struct dsl_type *t = check(tc, e);

		if (!t)
			return NULL;
		if (elem->kind == DSL_T_NULL) {
			elem = t;
		} else if (assignable(elem, t)) {
			/* keep */
		} else if (assignable(t, elem)) {
			elem = t;
		} else if (is_obj(elem) && is_obj(t)) {
			elem = &T_OBJECT;
		} else {
			error_at(tc, e, "list element is %s but earlier ones are %s", TS(t), TS(elem));
			return NULL;
		}
		if (t->kind == DSL_T_VOID || t->kind == DSL_T_UNASSIGNED || t->kind == DSL_T_LAMBDA) {
			error_at(tc, e, "%s cannot be a list element", TS(t));
			return NULL;
		}
	}
	return list_of(tc, elem);
}

static const struct dsl_type *check_structlit(struct tc *tc, struct dsl_node *n)
{
	const struct dsl_type *st = NULL;

	for (int i = 0; i < tc->nutypes; i++)
		if (!strcmp(tc->utypes[i].name, n->name))
			st = tc->utypes[i].ty;
	if (!st || st->kind != DSL_T_STRUCT) {
		error_at(tc, n, "'%s' is not a struct type", n->name);
		return NULL;
	}
	const struct dsl_node *f = st->fields;
	struct dsl_node *e = n->args;
	int i = 0;

	for (; f && e; f = f->next, e = e->next, i++) {
		const struct dsl_type *t = check(tc, e);

		if (!t)
			return NULL;
		if (!assignable(f->ty, t)) {
			error_at(tc, e, "field '%s' of struct %s is %s, not %s", f->name, st->name,
				 TS(f->ty), TS(t));
			return NULL;
		}
	}
	if (f || e) {
		error_at(tc, n, "struct %s has %d fields", st->name, st->nfields);
		return NULL;
	}
	return st;
}

static const struct dsl_type *check(struct tc *tc, struct dsl_node *n)
{
	const struct dsl_type *t = NULL, *l;

	switch (n->kind) {
	case DSL_N_INT: t = &T_INT; break;
	case DSL_N_FLOAT: t = &T_FLOAT; break;
	case DSL_N_STR: t = &T_STRING; break;
	case DSL_N_BOOL: t = &T_BOOL; break;
	case DSL_N_NULL: t = &T_NULL; break;
	case DSL_N_IDENT: t = check_ident(tc, n); break;
	case DSL_N_LIST: t = check_list(tc, n); break;
	case DSL_N_STRUCTLIT: t = check_structlit(tc, n); break;
	case DSL_N_MEMBER: t = check_member(tc, n); break;
	case DSL_N_CALL: t = check_call(tc, n); break;
	case DSL_N_IS: t = check_is(tc, n); break;
	case DSL_N_IN: t = check_in(tc, n); break;
	case DSL_N_NEG:
		if ((l = check(tc, n->lhs)) && !is_num(l))
			error_at(tc, n, "unary '-' needs a number, not %s", TS(l));
		else if (l)
			t = l;
		break;
	case DSL_N_NOT:
		if ((l = check(tc, n->lhs)) && !is_boolish(l))
			error_at(tc, n, "'not' needs bool, not %s", TS(l));
		else if (l)
			t = &T_BOOL;
		break;
	case DSL_N_LAMBDA:
		error_at(tc, n, "a lambda is only allowed as the argument of filter, map, exists, foreach or as on_inclusion");
		break;
	default:
		t = check_binary(tc, n);
		break;
	}
	n->ty = t;
	return t;
}

/* An expression in a place that takes a value (not Unassigned). */
static const struct dsl_type *check_value(struct tc *tc, struct dsl_node *n)
{
	const struct dsl_type *t = check(tc, n);

	if (t && (t->kind == DSL_T_UNASSIGNED || t->kind == DSL_T_VOID)) {
		error_at(tc, n, t->kind == DSL_T_VOID ? "this expression gives no value"
						      : "'Unassigned' may only follow 'in'");
		return NULL;
	}
	return t;
}

/* Check a lambda; elem is the list element type bound to its parameter
 * (`it` if it declares none), NULL for on_inclusion (no parameter).
 * Returns the result type (VOID when it has no final expression). */
static const struct dsl_type *check_lambda(struct tc *tc, struct dsl_node *lam,
					   const struct dsl_type *elem)
{
	int np = 0;
	const struct dsl_type *result = &T_VOID;

	for (const struct dsl_node *p = lam->args; p; p = p->next)
		np++;
	if (!elem && np) {
		error_at(tc, lam, "on_inclusion takes no parameters");
		return NULL;
	}
	if (elem && np > 1) {
		error_at(tc, lam->args->next, "this lambda takes one parameter, not %d", np);
		return NULL;
	}
	if (tc->level + 1 >= (int)(sizeof(tc->frames) / sizeof(tc->frames[0]))) {
		error_at(tc, lam, "lambdas nested too deeply");
		return NULL;
	}
	struct frame *f = &tc->frames[tc->level + 1];

	f->n = 0;
	f->names = alloc(tc, sizeof(*f->names));
	f->types = alloc(tc, sizeof(*f->types));
	if (!f->names || !f->types)
		return NULL;
	if (elem) {
		f->n = 1;
		f->names[0] = lam->args ? lam->args->name : "it";
		f->types[0] = elem;
		if (lam->args && lam->args->lhs) {
			const struct dsl_type *dt = resolve_typeref(tc, lam->args->lhs);

			if (!dt)
				return NULL;
			if (!assignable(dt, elem)) {
				error_at(tc, lam->args, "parameter '%s' is %s but the list holds %s",
					 lam->args->name, TS(dt), TS(elem));
				return NULL;
			}
			f->types[0] = dt;
		}
		if (lam->args)
			((struct dsl_node *)lam->args)->ty = f->types[0];
	}
	tc->level++;
	if (tc->level > tc->out->max_level)
		tc->out->max_level = tc->level;
	if (f->n > tc->out->max_params)
		tc->out->max_params = f->n;
	lam->level = tc->level;
	for (struct dsl_node *s = lam->body; s; s = s->next) {
		if (s->kind == DSL_N_RET) {
			/* a final foreach(...) is a statement: the lambda gives nothing */
			result = check(tc, s->lhs);
			if (result && result->kind == DSL_T_UNASSIGNED) {
				error_at(tc, s->lhs, "'Unassigned' may only follow 'in'");
				result = NULL;
			}
			s->ty = result;
			if (!result)
				break;
			continue;
		}
		/* assignment: to a parameter or a property */
		const struct dsl_type *target = NULL, *rt;
		struct dsl_node id = { .kind = DSL_N_IDENT, .tok = s->tok, .name = s->name };

		for (int l = tc->level; l >= 1 && !target; l--) {
			for (int i = 0; i < tc->frames[l].n; i++) {
				if (!strcmp(tc->frames[l].names[i], s->name)) {
					s->res = DSL_RES_PARAM;
					s->level = l;
					s->slot = i;
					target = tc->frames[l].types[i];
					break;
				}
			}
		}
		for (int i = 0; !target && tc->set && tc->ctx != CTX_NAMES && i < tc->set->nprops; i++) {
			if (!strcmp(tc->set->props[i]->name, s->name)) {
				s->res = DSL_RES_PROP;
				s->slot = i;
				target = tc->set->props[i]->ty;
			}
		}
		if (!target) {
			error_at(tc, &id, "assignment to undeclared name '%s'", s->name);
			continue;
		}
		rt = check_value(tc, s->rhs);
		if (rt && !assignable(target, rt))
			error_at(tc, s->rhs, "cannot assign %s to '%s' (%s)", TS(rt), s->name, TS(target));
	}
	tc->level--;
	lam->ty = result;
	return tc->err ? NULL : result;
}

/* Register the program's type declarations in order. */
static void check_typedecls(struct tc *tc, struct dsl_ast *ast)
{
	int n = 0;

	for (const struct dsl_node *t = ast->types; t; t = t->next)
		n++;
	tc->utypes = alloc(tc, (n + 1) * sizeof(*tc->utypes));
	if (!tc->utypes)
		return;
	for (struct dsl_node *t = ast->types; t; t = t->next) {
		const struct dsl_type *ty = NULL;

		for (int i = 0; i < tc->nutypes; i++)
			if (!strcmp(tc->utypes[i].name, t->name))
				error_at(tc, t, "type '%s' is declared twice", t->name);
		if (t->bval) { /* struct */
			struct dsl_type *st = alloc(tc, sizeof(*st));

			if (!st)
				return;
			st->kind = DSL_T_STRUCT;
			st->name = t->name;
			st->fields = t->args;
			for (struct dsl_node *f = t->args; f; f = f->next) {
				st->nfields++;
				f->ty = resolve_typeref(tc, f->lhs);
				for (const struct dsl_node *g = t->args; g != f; g = g->next)
					if (!strcmp(g->name, f->name))
						error_at(tc, f, "field '%s' is declared twice", f->name);
			}
			ty = st;
		} else {
			ty = resolve_typeref(tc, t->lhs);
		}
		if (ty) {
			tc->utypes[tc->nutypes].name = t->name;
			tc->utypes[tc->nutypes++].ty = ty;
		}
		t->ty = ty;
	}
}

/* Collect each set type's properties. */
static void collect_sets(struct tc *tc, struct dsl_ast *ast)
{
	struct dsl_typed *o = tc->out;

	for (const struct dsl_node *s = ast->sets; s; s = s->next)
		o->nsets++;
	o->sets = alloc(tc, (o->nsets + 1) * sizeof(*o->sets));
	if (!o->sets)
		return;
	int i = 0;

	for (struct dsl_node *s = ast->sets; s; s = s->next, i++) {
		struct dsl_settype *st = &o->sets[i];
		struct dsl_type *it = alloc(tc, sizeof(*it));
		int np = 0;

		if (!it)
			return;
		for (int j = 0; j < i; j++)
			if (!strcmp(o->sets[j].name, s->name))
				error_at(tc, s, "set type '%s' is declared twice", s->name);
		it->kind = DSL_T_INSTANCE;
		it->name = s->name;
		it->set = i;
		st->node = s;
		st->name = s->name;
		st->inst_type = it;
		st->name_type = &T_STRING;
		for (const struct dsl_node *p = s->body; p; p = p->next)
			np += p->prop == DSL_PROP_USER;
		st->props = alloc(tc, (np + 1) * sizeof(*st->props));
		if (!st->props)
			return;
		for (struct dsl_node *p = s->body; p; p = p->next) {
			const struct dsl_node **slot = NULL;
			const char *what = NULL;

			switch (p->prop) {
			case DSL_PROP_ROOTS: slot = &st->roots; what = "roots"; break;
			case DSL_PROP_MEMBERSHIP: slot = &st->membership; what = "membership"; break;
			case DSL_PROP_ON_INCLUSION: slot = &st->on_inclusion; what = "on_inclusion"; break;
			case DSL_PROP_USER:
				for (int j = 0; j < st->nprops; j++)
					if (!strcmp(st->props[j]->name, p->name))
						error_at(tc, p, "property '%s' is declared twice", p->name);
				p->lhs->ty = resolve_typeref(tc, p->lhs->lhs);
				p->ty = p->lhs->ty;
				if (p->ty && (p->ty->kind == DSL_T_VOID))
					p->ty = NULL;
				st->props[st->nprops++] = p;
				continue;
			}
			if (*slot)
				error_at(tc, p, "%s is set twice in set type '%s'", what, s->name);
			*slot = p->rhs;
		}
	}
}

/* instances_for T have_names = string | int | table_of string | table_of int */
static void check_instances(struct tc *tc, struct dsl_ast *ast)
{
	struct dsl_typed *o = tc->out;
	bool *seen = alloc(tc, (o->nsets + 1) * sizeof(*seen));

	if (!seen)
		return;
	for (struct dsl_node *n = ast->instances; n; n = n->next) {
		int si = -1;

		for (int i = 0; i < o->nsets; i++)
			if (!strcmp(o->sets[i].name, n->name))
				si = i;
		if (si < 0) {
			error_at(tc, n, "unknown set type '%s'", n->name);
			continue;
		}
		n->slot = si;
		tc->set = NULL;
		tc->ctx = CTX_NAMES;
		const struct dsl_type *t = check_value(tc, n->rhs), *nt;

		if (!t)
			continue;
		nt = t->kind == DSL_T_LIST ? t->elem : t;
		if (nt->kind == DSL_T_DYN || nt->kind == DSL_T_NULL)
			nt = &T_STRING;
		if (nt->kind != DSL_T_STRING && nt->kind != DSL_T_INT) {
			error_at(tc, n->rhs, "have_names must be a string, an int or a list of them, not %s",
				 TS(t));
			continue;
		}
		if (seen[si] && o->sets[si].name_type->kind != nt->kind)
			error_at(tc, n->rhs, "the names of '%s' were %s before, not %s", n->name,
				 TS(o->sets[si].name_type), TS(nt));
		seen[si] = true;
		o->sets[si].name_type = nt;
	}
}

static void check_set(struct tc *tc, struct dsl_settype *st)
{
	const struct dsl_type *t;

	tc->set = st;
	tc->ctx = CTX_GLOBAL;
	for (int i = 0; i < st->nprops; i++) {
		struct dsl_node *p = (struct dsl_node *)st->props[i];

		if (!p->ty)
			continue;
		t = check_value(tc, p->rhs);
		if (t && !assignable(p->ty, t))
			error_at(tc, p->rhs, "property '%s' is %s; its initial value is %s", p->name,
				 TS(p->ty), TS(t));
	}
	if (st->roots && (t = check_value(tc, (struct dsl_node *)st->roots))) {
		const struct dsl_type *e = t->kind == DSL_T_LIST ? t->elem : t;

		if (!is_obj(e) && e->kind != DSL_T_DYN && e->kind != DSL_T_NULL)
			error_at(tc, st->roots, "roots must be objects or a list of objects, not %s",
				 TS(t));
	}
	tc->ctx = CTX_LOCAL;
	if (st->membership && (t = check_value(tc, (struct dsl_node *)st->membership)) &&
	    !is_boolish(t))
		error_at(tc, st->membership, "membership must be bool, not %s", TS(t));
	if (st->on_inclusion) {
		struct dsl_node *oi = (struct dsl_node *)st->on_inclusion;

		if (oi->kind != DSL_N_LAMBDA)
			error_at(tc, oi, "on_inclusion must be a lambda: [ name <- value ... ]");
		else
			check_lambda(tc, oi, NULL);
	}
	const struct dsl_node *m = st->membership;

	if (m && !(m->kind == DSL_N_BOOL && !m->bval))
		tc->out->needs_refs = true;
}

int dsl_typecheck(struct dsl_arena *a, struct dsl_ast *ast, const struct dsl_schema *schema,
		  struct dsl_diags *d, struct dsl_typed *out)
{
	struct tc *tc = dsl_arena_alloc(a, sizeof(*tc));

	memset(out, 0, sizeof(*out));
	if (!tc) {
		dsl_diags_add(d, 0, "out of memory");
		return -ENOMEM;
	}
	tc->a = a;
	tc->schema = schema;
	tc->d = d;
	tc->out = out;
	check_typedecls(tc, ast);
	if (tc->err != -ENOMEM)
		collect_sets(tc, ast);
	if (tc->err != -ENOMEM)
		check_instances(tc, ast);
	for (int i = 0; i < out->nsets && tc->err != -ENOMEM; i++)
		check_set(tc, &out->sets[i]);
	return tc->err;
}
