// SPDX-License-Identifier: GPL-2.0
/*
 * eval.c - expressions on values. Every operation checks the run-time kinds
 * (heaps are heterogeneous and the type pass lets field values be dynamic).
 *
 * Null rules: a field the object's class lacks reads as null; a member of
 * null is null; every comparison with null is false (= and != alike);
 * `null in X` and `null is C` are false; null counts as false in and, or,
 * not; arithmetic on null is an error naming the object's class.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "dsl.h"

/* *v as null, field by field: a memset() of its 24 bytes (or a zeroed struct
 * assigned) became `rep stos` here, whose start-up cost was a fifth of the
 * evaluator's time on a query that counts 5 M objects */
static inline void vnull(struct dsl_value *v)
{
	v->kind = DSL_V_NULL;
	v->null_cls = 0;
	v->null_field = NULL;
	v->u.i = 0;
}

static int rt_error(struct dsl_eval *ev, const struct dsl_node *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int rt_error(struct dsl_eval *ev, const struct dsl_node *n, const char *fmt, ...)
{
	char msg[220];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dsl_diags_add(ev->d, n && n->tok ? n->tok->off : 0, "%s", msg);
	return -EINVAL;
}

static int oom(struct dsl_eval *ev, const struct dsl_node *n)
{
	dsl_diags_add(ev->d, n && n->tok ? n->tok->off : 0,
		      "out of memory (a query may use %llu MiB)",
		      (unsigned long long)(DSL_MAX_ARENA >> 20));
	return -ENOMEM;
}

static const char *kind_name(enum dsl_vkind k)
{
	static const char *const names[] = {
		"null", "bool", "int", "float", "string", "Object", "Class", "Classloader",
		"Thread", "list", "struct", "instance", "ref_kind", "Unassigned",
	};
	return names[k];
}

uint32_t dsl_value_obj(const struct dsl_eval *ev, const struct dsl_value *v)
{
	switch (v->kind) {
	case DSL_V_OBJ: return v->u.idx;
	case DSL_V_CLASS: return ev->h->classes[v->u.idx].obj;
	case DSL_V_LOADER: return ev->h->loaders[v->u.idx].obj;
	case DSL_V_THREAD: return ev->h->threads[v->u.idx].obj;
	default: return DSL_NOOBJ;
	}
}

struct dsl_value dsl_list_get(const struct dsl_eval *ev, const struct dsl_list *l, size_t i)
{
	struct dsl_value v = { .kind = DSL_V_OBJ };

	switch (l->kind) {
	case DSL_L_ARRAY: return l->v[i];
	case DSL_L_OBJECTS: v.kind = DSL_V_OBJ; break;
	case DSL_L_CLASSES: v.kind = DSL_V_CLASS; break;
	case DSL_L_LOADERS: v.kind = DSL_V_LOADER; break;
	case DSL_L_THREADS: v.kind = DSL_V_THREAD; break;
	}
	v.u.idx = (uint32_t)i;
	(void)ev;
	return v;
}

static bool truthy(const struct dsl_value *v)
{
	return v->kind == DSL_V_BOOL && v->u.b;
}

/* A growable array of values in ev->cur. */
struct vec {
	struct dsl_value *v;
	size_t n, cap;
};

static int vec_push(struct dsl_eval *ev, struct vec *a, const struct dsl_value *x)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 8;
		struct dsl_value *v = dsl_arena_alloc(ev->cur, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		if (a->n)
			memcpy(v, a->v, a->n * sizeof(*v));
		a->v = v;
		a->cap = cap;
	}
	a->v[a->n++] = *x;
	return 0;
}

static int make_list(struct dsl_eval *ev, struct vec *a, struct dsl_value *out)
{
	struct dsl_list *l = dsl_arena_alloc(ev->cur, sizeof(*l));

	if (!l)
		return -ENOMEM;
	l->kind = DSL_L_ARRAY;
	l->n = a->n;
	l->v = a->v;
	out->kind = DSL_V_LIST;
	out->u.l = l;
	return 0;
}

/* Coerce an int to float where the declared type is float. */
static void coerce(const struct dsl_type *t, struct dsl_value *v)
{
	if (t && t->kind == DSL_T_FLOAT && v->kind == DSL_V_INT) {
		v->kind = DSL_V_FLOAT;
		v->u.f = (double)v->u.i;
	}
}

static int copy_value(struct dsl_eval *ev, struct dsl_value *v, int depth)
{
	if (depth > DSL_MAX_AST_DEPTH)
		return 0;
	if (v->kind == DSL_V_LIST && v->u.l->kind == DSL_L_ARRAY) {
		const struct dsl_list *src = v->u.l;
		struct dsl_list *l = dsl_arena_alloc(ev->persist, sizeof(*l));
		struct dsl_value *a = dsl_arena_alloc(ev->persist, (src->n + 1) * sizeof(*a));

		if (!l || !a)
			return -ENOMEM;
		*l = *src;
		if (src->n)
			memcpy(a, src->v, src->n * sizeof(*a));
		l->v = a;
		for (size_t i = 0; i < l->n; i++)
			if (copy_value(ev, &a[i], depth + 1))
				return -ENOMEM;
		v->u.l = l;
	} else if (v->kind == DSL_V_STRUCT) {
		const struct dsl_structval *src = v->u.st;
		struct dsl_structval *s = dsl_arena_alloc(ev->persist, sizeof(*s));
		int n = src->ty->nfields;
		struct dsl_value *a = dsl_arena_alloc(ev->persist, (n + 1) * sizeof(*a));

		if (!s || !a)
			return -ENOMEM;
		s->ty = src->ty;
		if (n)
			memcpy(a, src->v, n * sizeof(*a));
		s->v = a;
		for (int i = 0; i < n; i++)
			if (copy_value(ev, &a[i], depth + 1))
				return -ENOMEM;
		v->u.st = s;
	}
	return 0;
}

int dsl_value_persist(struct dsl_eval *ev, struct dsl_value *v)
{
	if (ev->cur == ev->persist)
		return 0;
	return copy_value(ev, v, 0);
}

/* Read field id f of object o into out; absent fields give null. */
static void read_field(struct dsl_eval *ev, uint32_t o, int f, const char *name,
		       struct dsl_value *out)
{
	const struct dsl_hobject *obj = &ev->h->objects[o];
	int32_t slot = ev->fidx[(size_t)obj->cls * ev->t->nfields + f];

	vnull(out);
	if (slot < 0) {
		out->null_cls = obj->cls + 1;
		out->null_field = name;
		return;
	}
	const struct dsl_hval *vals = dsl_heap_values(ev->h, o);

	if (!vals)
		return;
	const struct dsl_hval *hv = &vals[slot];

	switch (hv->kind) {
	case DSL_HV_INT: out->kind = DSL_V_INT; out->u.i = hv->u.i; break;
	case DSL_HV_FLOAT: out->kind = DSL_V_FLOAT; out->u.f = hv->u.f; break;
	case DSL_HV_BOOL: out->kind = DSL_V_BOOL; out->u.b = hv->u.b; break;
	case DSL_HV_STR:
		if (hv->u.s) {
			out->kind = DSL_V_STR;
			out->u.s = hv->u.s;
		}
		break;
	case DSL_HV_REF:
		if (hv->u.ref < ev->h->nobjects) {
			out->kind = DSL_V_OBJ;
			out->u.idx = hv->u.ref;
		}
		break;
	default:
		break;
	}
}

/* Does field id f exist in the class of object o? */
static bool has_field(struct dsl_eval *ev, uint32_t o, int f)
{
	return ev->fidx[(size_t)ev->h->objects[o].cls * ev->t->nfields + f] >= 0;
}

static int cmp_role(const void *a, const void *b)
{
	const struct dsl_objrole *x = a, *y = b;

	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

/* The roles of the heap's objects (classes, loaders, threads), built once. */
static int build_roles(struct dsl_eval *ev)
{
	const struct dsl_heap *h = ev->h;
	size_t n = (size_t)h->nclasses + h->nloaders + h->nthreads, k = 0;
	struct dsl_objrole *r;

	ev->roles_built = true;
	r = dsl_arena_alloc(ev->persist, (n + 1) * sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->nclasses; i++)
		if (h->classes[i].obj != DSL_NOOBJ)
			r[k++] = (struct dsl_objrole){ h->classes[i].obj, i, DSL_V_CLASS };
	for (uint32_t i = 0; i < h->nloaders; i++)
		if (h->loaders[i].obj != DSL_NOOBJ)
			r[k++] = (struct dsl_objrole){ h->loaders[i].obj, i, DSL_V_LOADER };
	for (uint32_t i = 0; i < h->nthreads; i++)
		r[k++] = (struct dsl_objrole){ h->threads[i].obj, i, DSL_V_THREAD };
	qsort(r, k, sizeof(*r), cmp_role);
	ev->roles = r;
	ev->nroles = (uint32_t)k;
	return 0;
}

/* The object of v as the Class, Classloader or Thread it also is, for
 * built-in b (name: a class or a thread; classloader: a class; id: a
 * loader); false if it is none of those. */
static bool as_role(struct dsl_eval *ev, const struct dsl_value *v, int b, struct dsl_value *out)
{
	uint32_t lo = 0, hi;

	if (v->kind != DSL_V_OBJ || (b != DSL_B_NAME && b != DSL_B_CLASSLOADER && b != DSL_B_ID))
		return false;
	if (!ev->roles_built && build_roles(ev))
		return false;
	hi = ev->nroles;
	while (lo < hi) { /* the first role of the object */
		uint32_t mid = lo + (hi - lo) / 2;

		if (ev->roles[mid].obj < v->u.idx)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < ev->nroles && ev->roles[lo].obj == v->u.idx; lo++) {
		uint8_t k = ev->roles[lo].kind;

		if ((b == DSL_B_NAME && (k == DSL_V_CLASS || k == DSL_V_THREAD)) ||
		    (b == DSL_B_CLASSLOADER && k == DSL_V_CLASS) ||
		    (b == DSL_B_ID && k == DSL_V_LOADER)) {
			vnull(out);
			out->kind = k;
			out->u.idx = ev->roles[lo].idx;
			return true;
		}
	}
	return false;
}

/* root_path: the steps from a heap root to object o as strings. */
static int root_path(struct dsl_eval *ev, uint32_t o, struct dsl_value *out)
{
	struct dsl_pathstep st[64], *steps = st;
	size_t n = dsl_root_path(ev->h, o, st, 64);
	struct dsl_value *v;
	struct dsl_list *l;
	char buf[1024];

	if (!n)
		return 0; /* null: no root reaches it */
	if (n > 64) {
		steps = dsl_arena_alloc(ev->cur, n * sizeof(*steps));
		if (!steps)
			return -ENOMEM;
		dsl_root_path(ev->h, o, steps, n);
	}
	v = dsl_arena_alloc(ev->cur, n * sizeof(*v));
	l = dsl_arena_alloc(ev->cur, sizeof(*l));
	if (!v || !l)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		dsl_path_step_text(ev->h, &steps[i], buf, sizeof(buf));
		v[i].kind = DSL_V_STR;
		/* strings are not copied when a value is kept (dsl_value_persist):
		 * they live as long as the run */
		v[i].u.s = dsl_arena_strndup(ev->persist, buf, strlen(buf));
		if (!v[i].u.s)
			return -ENOMEM;
	}
	l->kind = DSL_L_ARRAY;
	l->n = n;
	l->v = v;
	out->kind = DSL_V_LIST;
	out->u.l = l;
	return 0;
}

/* referrers: one Object per referring object (an object referring twice
 * is listed once). */
static int referrers(struct dsl_eval *ev, uint32_t o, struct dsl_value *out)
{
	const struct dsl_heap *h = ev->h;
	uint32_t a = h->referrer_first[o], e = h->referrer_first[o + 1], k = 0;
	struct dsl_value *v = dsl_arena_alloc(ev->cur, ((size_t)(e - a) + 1) * sizeof(*v));
	struct dsl_list *l = dsl_arena_alloc(ev->cur, sizeof(*l));

	if (!v || !l)
		return -ENOMEM;
	for (uint32_t i = a; i < e; i++) {
		if (k && v[k - 1].u.idx == h->referrer[i])
			continue;
		v[k].kind = DSL_V_OBJ;
		v[k++].u.idx = h->referrer[i];
	}
	l->kind = DSL_L_ARRAY;
	l->n = k;
	l->v = v;
	out->kind = DSL_V_LIST;
	out->u.l = l;
	return 0;
}

static int builtin(struct dsl_eval *ev, const struct dsl_value *v, int b, struct dsl_value *out)
{
	const struct dsl_heap *h = ev->h;
	uint32_t o = dsl_value_obj(ev, v);
	struct dsl_value role;

	vnull(out);
	if (as_role(ev, v, b, &role))
		v = &role;
	switch (b) {
	case DSL_B_CLASS:
		if (o != DSL_NOOBJ) {
			out->kind = DSL_V_CLASS;
			out->u.idx = h->objects[o].cls;
		}
		break;
	case DSL_B_SIZE:
	case DSL_B_AGE:
		if (o != DSL_NOOBJ && !(b == DSL_B_AGE && h->no_age)) {
			out->kind = DSL_V_INT;
			out->u.i = b == DSL_B_SIZE ? (int64_t)h->objects[o].size : dsl_heap_age(h, o);
		}
		break;
	case DSL_B_RETAINED:
		if (o != DSL_NOOBJ && h->retained && h->retained[o] != DSL_NORETAINED) {
			out->kind = DSL_V_INT;
			out->u.i = (int64_t)h->retained[o];
		}
		break;
	case DSL_B_REFERRERS:
		if (o != DSL_NOOBJ && h->referrer_first)
			return referrers(ev, o, out);
		break;
	case DSL_B_ROOT_PATH:
		if (o != DSL_NOOBJ)
			return root_path(ev, o, out);
		break;
	case DSL_B_LENGTH:
		if (o != DSL_NOOBJ && h->objects[o].length >= 0) {
			out->kind = DSL_V_INT;
			out->u.i = h->objects[o].length;
		}
		break;
	case DSL_B_ID:
		if (v->kind == DSL_V_LOADER) {
			out->kind = DSL_V_INT;
			out->u.i = (int64_t)h->loaders[v->u.idx].id;
		} else if (o != DSL_NOOBJ) {
			out->kind = DSL_V_INT;
			out->u.i = (int64_t)h->objects[o].id;
		}
		break;
	case DSL_B_NAME:
		if (v->kind == DSL_V_CLASS || v->kind == DSL_V_THREAD) {
			const char *s = v->kind == DSL_V_CLASS ? h->classes[v->u.idx].name
							       : h->threads[v->u.idx].name;
			if (s) {
				out->kind = DSL_V_STR;
				out->u.s = s;
			}
		}
		break;
	case DSL_B_CLASSLOADER:
		if (v->kind == DSL_V_CLASS && h->classes[v->u.idx].loader != DSL_NOOBJ) {
			out->kind = DSL_V_LOADER;
			out->u.idx = h->classes[v->u.idx].loader;
		}
		break;
	case DSL_B_LIST_SIZE:
		if (v->kind == DSL_V_LIST) {
			out->kind = DSL_V_INT;
			out->u.i = (int64_t)v->u.l->n;
		}
		break;
	}
	return 0;
}

static int eval_member(struct dsl_eval *ev, const struct dsl_node *n, struct dsl_value *out)
{
	struct dsl_value l;
	int err = dsl_eval_expr(ev, n->lhs, &l);

	if (err)
		return err;
	if (l.kind == DSL_V_NULL) {
		*out = l;
		return 0;
	}
	switch (n->res) {
	case DSL_RES_ENTITY_NAME:
		if (l.kind != DSL_V_INST)
			break;
		*out = ev->insts[l.u.idx].name;
		return 0;
	case DSL_RES_STRUCT_FIELD:
		if (l.kind != DSL_V_STRUCT || n->slot >= l.u.st->ty->nfields)
			break;
		*out = l.u.st->v[n->slot];
		return 0;
	case DSL_RES_FIELD:
	case DSL_RES_FIELD_OR_BUILTIN: {
		uint32_t o = dsl_value_obj(ev, &l);
		struct dsl_value role;

		if (o == DSL_NOOBJ) {
			if (n->res == DSL_RES_FIELD_OR_BUILTIN)
				return builtin(ev, &l, (int)n->ival, out) ? oom(ev, n) : 0;
			vnull(out);
			return 0;
		}
		/* a class, loader or thread: its built-in before its Java field */
		if (n->res == DSL_RES_FIELD_OR_BUILTIN && n->bval &&
		    as_role(ev, &l, (int)n->ival, &role))
			return builtin(ev, &role, (int)n->ival, out) ? oom(ev, n) : 0;
		if (n->res == DSL_RES_FIELD || has_field(ev, o, n->slot))
			read_field(ev, o, n->slot, n->name, out);
		else if (builtin(ev, &l, (int)n->ival, out))
			return oom(ev, n);
		return 0;
	}
	case DSL_RES_BUILTIN:
		return builtin(ev, &l, n->slot, out) ? oom(ev, n) : 0;
	default:
		break;
	}
	return rt_error(ev, n, "%s has no member '%s'", kind_name(l.kind), n->name);
}

int dsl_eval_lambda(struct dsl_eval *ev, const struct dsl_node *lam,
		    const struct dsl_value *arg, struct dsl_value *out)
{
	struct dsl_value param, *saved = ev->frames[lam->level];
	int err = 0;

	vnull(out);
	if (arg)
		param = *arg;
	ev->frames[lam->level] = &param;
	for (const struct dsl_node *s = lam->body; s && !err; s = s->next) {
		struct dsl_value v;

		if (s->kind == DSL_N_RET) {
			err = dsl_eval_expr(ev, s->lhs, out);
			continue;
		}
		if ((err = dsl_eval_expr(ev, s->rhs, &v)))
			break;
		if (s->res == DSL_RES_PARAM) {
			ev->frames[s->level][s->slot] = v;
		} else if (s->res == DSL_RES_PROP && ev->inst >= 0) {
			const struct dsl_settype *st = &ev->t->sets[ev->insts[ev->inst].set];

			coerce(st->props[s->slot]->ty, &v);
			if ((err = dsl_value_persist(ev, &v)))
				return oom(ev, s);
			ev->insts[ev->inst].props[s->slot] = v;
		}
	}
	ev->frames[lam->level] = saved;
	return err;
}

/* list.filter / map / exists / foreach (lambda) */
static int eval_call(struct dsl_eval *ev, const struct dsl_node *n, struct dsl_value *out)
{
	struct dsl_value l, r;
	struct vec acc = { 0 };
	int err = dsl_eval_expr(ev, n->lhs, &l);

	if (err)
		return err;
	vnull(out);
	if (l.kind == DSL_V_NULL)
		return 0;
	if (l.kind != DSL_V_LIST)
		return rt_error(ev, n, "'%s' on %s", n->name, kind_name(l.kind));
	if (n->slot == DSL_B_EXISTS) {
		out->kind = DSL_V_BOOL;
		out->u.b = false;
	}
	for (size_t i = 0; i < l.u.l->n; i++) {
		struct dsl_value x = dsl_list_get(ev, l.u.l, i);

		if ((err = dsl_eval_lambda(ev, n->args, &x, &r)))
			return err;
		switch (n->slot) {
		case DSL_B_FILTER:
			if (truthy(&r) && vec_push(ev, &acc, &x))
				return oom(ev, n);
			break;
		case DSL_B_MAP:
			if (vec_push(ev, &acc, &r))
				return oom(ev, n);
			break;
		case DSL_B_EXISTS:
			if (truthy(&r)) {
				out->u.b = true;
				return 0;
			}
			break;
		default:
			break;
		}
	}
	if (n->slot == DSL_B_FILTER || n->slot == DSL_B_MAP)
		return make_list(ev, &acc, out) ? oom(ev, n) : 0;
	return 0;
}

static bool objlike(enum dsl_vkind k)
{
	return k == DSL_V_OBJ || k == DSL_V_CLASS || k == DSL_V_LOADER || k == DSL_V_THREAD;
}

/* Equality of two non-null values of any kinds. */
static bool equal(const struct dsl_eval *ev, const struct dsl_value *a, const struct dsl_value *b)
{
	if (a->kind == DSL_V_INT && b->kind == DSL_V_INT)
		return a->u.i == b->u.i;
	if ((a->kind == DSL_V_INT || a->kind == DSL_V_FLOAT) &&
	    (b->kind == DSL_V_INT || b->kind == DSL_V_FLOAT)) {
		double x = a->kind == DSL_V_INT ? (double)a->u.i : a->u.f;
		double y = b->kind == DSL_V_INT ? (double)b->u.i : b->u.f;

		return x == y;
	}
	if (objlike(a->kind) && objlike(b->kind)) {
		if (a->kind == b->kind && a->u.idx == b->u.idx)
			return true;
		uint32_t x = dsl_value_obj(ev, a), y = dsl_value_obj(ev, b);

		return x != DSL_NOOBJ && x == y;
	}
	if (a->kind != b->kind)
		return false;
	switch (a->kind) {
	case DSL_V_BOOL: return a->u.b == b->u.b;
	case DSL_V_STR: return !strcmp(a->u.s, b->u.s);
	case DSL_V_INST: return a->u.idx == b->u.idx;
	case DSL_V_REFKIND:
		if (a->u.idx == DSL_REF_ROOT)
			return DSL_REF_IS_ROOT(b->u.idx) || b->u.idx == DSL_REF_ROOT;
		if (b->u.idx == DSL_REF_ROOT)
			return DSL_REF_IS_ROOT(a->u.idx);
		return a->u.idx == b->u.idx;
	default: return false;
	}
}

static int null_arith(struct dsl_eval *ev, const struct dsl_node *n, const struct dsl_value *v)
{
	if (v->null_cls)
		return rt_error(ev, n, "arithmetic on null: class %s has no field '%s'",
				ev->h->classes[v->null_cls - 1].name, v->null_field);
	return rt_error(ev, n, "arithmetic on null");
}

static int arith(struct dsl_eval *ev, const struct dsl_node *n, const struct dsl_value *a,
		 const struct dsl_value *b, struct dsl_value *out)
{
	if (a->kind == DSL_V_NULL)
		return null_arith(ev, n, a);
	if (b && b->kind == DSL_V_NULL)
		return null_arith(ev, n, b);
	if ((a->kind != DSL_V_INT && a->kind != DSL_V_FLOAT) ||
	    (b && b->kind != DSL_V_INT && b->kind != DSL_V_FLOAT))
		return rt_error(ev, n, "arithmetic on %s", kind_name(a->kind == DSL_V_INT ||
			a->kind == DSL_V_FLOAT ? b->kind : a->kind));
	vnull(out);
	if (!b) { /* negation */
		*out = *a;
		if (a->kind == DSL_V_INT)
			out->u.i = (int64_t)(0 - (uint64_t)a->u.i);
		else
			out->u.f = -a->u.f;
		return 0;
	}
	if (a->kind == DSL_V_INT && b->kind == DSL_V_INT) {
		uint64_t x = (uint64_t)a->u.i, y = (uint64_t)b->u.i;

		out->kind = DSL_V_INT;
		switch (n->kind) {
		case DSL_N_ADD: out->u.i = (int64_t)(x + y); return 0;
		case DSL_N_SUB: out->u.i = (int64_t)(x - y); return 0;
		case DSL_N_MUL: out->u.i = (int64_t)(x * y); return 0;
		default:
			if (b->u.i == 0)
				return rt_error(ev, n, "division by zero");
			if (b->u.i == -1) /* INT64_MIN / -1 wraps */
				out->u.i = n->kind == DSL_N_DIV ? (int64_t)(0 - x) : 0;
			else
				out->u.i = n->kind == DSL_N_DIV ? a->u.i / b->u.i : a->u.i % b->u.i;
			return 0;
		}
	}
	double x = a->kind == DSL_V_INT ? (double)a->u.i : a->u.f;
	double y = b->kind == DSL_V_INT ? (double)b->u.i : b->u.f;

	out->kind = DSL_V_FLOAT;
	switch (n->kind) {
	case DSL_N_ADD: out->u.f = x + y; break;
	case DSL_N_SUB: out->u.f = x - y; break;
	case DSL_N_MUL: out->u.f = x * y; break;
	case DSL_N_DIV: out->u.f = x / y; break;
	default: out->u.f = fmod(x, y); break;
	}
	return 0;
}

/* < <= > >= on numbers or strings; false with null. */
static int relational(struct dsl_eval *ev, const struct dsl_node *n, const struct dsl_value *a,
		      const struct dsl_value *b, bool *res)
{
	int c;

	*res = false;
	if (a->kind == DSL_V_NULL || b->kind == DSL_V_NULL)
		return 0;
	if (a->kind == DSL_V_STR && b->kind == DSL_V_STR) {
		c = strcmp(a->u.s, b->u.s);
	} else if (a->kind == DSL_V_INT && b->kind == DSL_V_INT) {
		c = a->u.i < b->u.i ? -1 : a->u.i > b->u.i;
	} else if ((a->kind == DSL_V_INT || a->kind == DSL_V_FLOAT) &&
		   (b->kind == DSL_V_INT || b->kind == DSL_V_FLOAT)) {
		double x = a->kind == DSL_V_INT ? (double)a->u.i : a->u.f;
		double y = b->kind == DSL_V_INT ? (double)b->u.i : b->u.f;

		if (isnan(x) || isnan(y))
			return 0;
		c = x < y ? -1 : x > y;
	} else {
		return rt_error(ev, n, "cannot order %s and %s", kind_name(a->kind), kind_name(b->kind));
	}
	switch (n->kind) {
	case DSL_N_LT: *res = c < 0; break;
	case DSL_N_LE: *res = c <= 0; break;
	case DSL_N_GT: *res = c > 0; break;
	default: *res = c >= 0; break;
	}
	return 0;
}

static int eval_in(struct dsl_eval *ev, const struct dsl_node *n, struct dsl_value *out)
{
	struct dsl_value a, b;
	int err;

	if ((err = dsl_eval_expr(ev, n->lhs, &a)) || (err = dsl_eval_expr(ev, n->rhs, &b)))
		return err;
	out->kind = DSL_V_BOOL;
	out->u.b = false;
	if (a.kind == DSL_V_NULL)
		return 0;
	if (b.kind == DSL_V_UNASSIGNED || b.kind == DSL_V_INST) {
		uint32_t o = dsl_value_obj(ev, &a);

		if (o != DSL_NOOBJ)
			out->u.b = b.kind == DSL_V_UNASSIGNED ? !ev->owner[o]
							      : ev->owner[o] == (int32_t)b.u.idx + 1;
		return 0;
	}
	if (b.kind == DSL_V_LIST) {
		for (size_t i = 0; i < b.u.l->n && !out->u.b; i++) {
			struct dsl_value x = dsl_list_get(ev, b.u.l, i);

			out->u.b = x.kind != DSL_V_NULL && equal(ev, &a, &x);
		}
	}
	return 0;
}

/* thread_groups: the objects whose class is java.lang.ThreadGroup (or a subclass). */
static int thread_groups(struct dsl_eval *ev, struct dsl_value *out)
{
	const struct dsl_heap *h = ev->h;

	if (!ev->tgroups) {
		struct dsl_arena *cur = ev->cur;
		struct vec acc = { 0 };
		uint8_t *isg = dsl_arena_alloc(ev->persist, h->nclasses + 1);

		if (!isg)
			return -ENOMEM;
		for (uint32_t c = 0; c < h->nclasses; c++) {
			uint32_t k = c;

			for (uint32_t steps = 0; k != DSL_NOOBJ && steps <= h->nclasses; steps++) {
				if (!strcmp(h->classes[k].name, "java.lang.ThreadGroup"))
					isg[c] = 1;
				k = h->classes[k].super;
			}
		}
		ev->cur = ev->persist;
		for (uint32_t o = 0; o < h->nobjects; o++) {
			struct dsl_value v = { .kind = DSL_V_OBJ, .u.idx = o };

			if (isg[h->objects[o].cls] && vec_push(ev, &acc, &v)) {
				ev->cur = cur;
				return -ENOMEM;
			}
		}
		struct dsl_value lv;
		int err = make_list(ev, &acc, &lv);

		ev->cur = cur;
		if (err)
			return err;
		ev->tgroups = (struct dsl_list *)lv.u.l;
	}
	out->kind = DSL_V_LIST;
	out->u.l = ev->tgroups;
	return 0;
}

static int eval_ident(struct dsl_eval *ev, const struct dsl_node *n, struct dsl_value *out)
{
	static struct dsl_list lists[] = { [DSL_L_OBJECTS] = { .kind = DSL_L_OBJECTS },
					   [DSL_L_CLASSES] = { .kind = DSL_L_CLASSES },
					   [DSL_L_LOADERS] = { .kind = DSL_L_LOADERS },
					   [DSL_L_THREADS] = { .kind = DSL_L_THREADS } };
	struct dsl_list *l = NULL;

	vnull(out);
	switch (n->res) {
	case DSL_RES_PARAM:
		*out = ev->frames[n->level][n->slot];
		return 0;
	case DSL_RES_PROP:
		if (ev->inst >= 0)
			*out = ev->insts[ev->inst].props[n->slot];
		return 0;
	case DSL_RES_THIS:
	case DSL_RES_REFERRER: {
		uint32_t o = n->res == DSL_RES_THIS ? ev->this_obj : ev->referrer;

		if (o != DSL_NOOBJ) {
			out->kind = DSL_V_OBJ;
			out->u.idx = o;
		}
		return 0;
	}
	case DSL_RES_REFKIND_VAR:
		if (ev->refkind >= 0) {
			out->kind = DSL_V_REFKIND;
			out->u.idx = (uint32_t)ev->refkind;
		}
		return 0;
	case DSL_RES_REFKIND:
		out->kind = DSL_V_REFKIND;
		out->u.idx = (uint32_t)n->slot;
		return 0;
	case DSL_RES_ENTITY:
		if (ev->inst >= 0) {
			out->kind = DSL_V_INST;
			out->u.idx = (uint32_t)ev->inst;
		}
		return 0;
	case DSL_RES_UNASSIGNED:
		out->kind = DSL_V_UNASSIGNED;
		return 0;
	case DSL_RES_TGROUPS:
		return thread_groups(ev, out) ? oom(ev, n) : 0;
	case DSL_RES_OBJECTS: l = &lists[DSL_L_OBJECTS]; break;
	case DSL_RES_CLASSES: l = &lists[DSL_L_CLASSES]; break;
	case DSL_RES_LOADERS: l = &lists[DSL_L_LOADERS]; break;
	case DSL_RES_THREADS: l = &lists[DSL_L_THREADS]; break;
	default:
		return rt_error(ev, n, "unresolved name '%s'", n->name);
	}
	/* the heap's tables as lists: one list value per run, in the tmp-free arena */
	struct dsl_list *copy = dsl_arena_alloc(ev->cur, sizeof(*copy));

	if (!copy)
		return oom(ev, n);
	copy->kind = l->kind;
	copy->n = l->kind == DSL_L_OBJECTS ? ev->h->nobjects : l->kind == DSL_L_CLASSES ?
		  ev->h->nclasses : l->kind == DSL_L_LOADERS ? ev->h->nloaders : ev->h->nthreads;
	out->kind = DSL_V_LIST;
	out->u.l = copy;
	return 0;
}

static int eval_aggregate(struct dsl_eval *ev, const struct dsl_node *n, struct dsl_value *out)
{
	struct vec acc = { 0 };
	const struct dsl_node *f = n->kind == DSL_N_STRUCTLIT ? n->ty->fields : NULL;
	int err;

	for (const struct dsl_node *e = n->args; e; e = e->next) {
		struct dsl_value v;

		if ((err = dsl_eval_expr(ev, e, &v)))
			return err;
		if (f) {
			coerce(f->ty, &v);
			f = f->next;
		}
		if (vec_push(ev, &acc, &v))
			return oom(ev, n);
	}
	if (n->kind == DSL_N_LIST)
		return make_list(ev, &acc, out) ? oom(ev, n) : 0;
	struct dsl_structval *s = dsl_arena_alloc(ev->cur, sizeof(*s));

	if (!s)
		return oom(ev, n);
	s->ty = n->ty;
	s->v = acc.v;
	out->kind = DSL_V_STRUCT;
	out->u.st = s;
	return 0;
}

int dsl_eval_expr(struct dsl_eval *ev, const struct dsl_node *n, struct dsl_value *out)
{
	struct dsl_value a, b;
	bool r;
	int err;

	vnull(out);
	switch (n->kind) {
	case DSL_N_INT: out->kind = DSL_V_INT; out->u.i = n->ival; return 0;
	case DSL_N_FLOAT: out->kind = DSL_V_FLOAT; out->u.f = n->fval; return 0;
	case DSL_N_STR: out->kind = DSL_V_STR; out->u.s = n->sval; return 0;
	case DSL_N_BOOL: out->kind = DSL_V_BOOL; out->u.b = n->bval; return 0;
	case DSL_N_NULL: return 0;
	case DSL_N_IDENT: return eval_ident(ev, n, out);
	case DSL_N_LIST:
	case DSL_N_STRUCTLIT: return eval_aggregate(ev, n, out);
	case DSL_N_MEMBER: return eval_member(ev, n, out);
	case DSL_N_CALL: return eval_call(ev, n, out);
	case DSL_N_IN: return eval_in(ev, n, out);
	case DSL_N_NEG:
		if ((err = dsl_eval_expr(ev, n->lhs, &a)))
			return err;
		return arith(ev, n, &a, NULL, out);
	case DSL_N_NOT:
		if ((err = dsl_eval_expr(ev, n->lhs, &a)))
			return err;
		out->kind = DSL_V_BOOL;
		out->u.b = !truthy(&a);
		return 0;
	case DSL_N_AND:
	case DSL_N_OR:
		if ((err = dsl_eval_expr(ev, n->lhs, &a)))
			return err;
		out->kind = DSL_V_BOOL;
		if (truthy(&a) == (n->kind == DSL_N_OR)) {
			out->u.b = truthy(&a);
			return 0;
		}
		if ((err = dsl_eval_expr(ev, n->rhs, &b)))
			return err;
		out->u.b = truthy(&b);
		return 0;
	case DSL_N_IS: {
		if ((err = dsl_eval_expr(ev, n->lhs, &a)))
			return err;
		uint32_t o = dsl_value_obj(ev, &a);

		out->kind = DSL_V_BOOL;
		out->u.b = o != DSL_NOOBJ &&
			   ev->isv[(size_t)n->slot * ev->h->nclasses + ev->h->objects[o].cls];
		return 0;
	}
	default:
		break;
	}
	if ((err = dsl_eval_expr(ev, n->lhs, &a)) || (err = dsl_eval_expr(ev, n->rhs, &b)))
		return err;
	switch (n->kind) {
	case DSL_N_EQ:
	case DSL_N_NE:
		out->kind = DSL_V_BOOL;
		if (a.kind != DSL_V_NULL && b.kind != DSL_V_NULL)
			out->u.b = equal(ev, &a, &b) == (n->kind == DSL_N_EQ);
		return 0;
	case DSL_N_LT: case DSL_N_LE: case DSL_N_GT: case DSL_N_GE:
		if ((err = relational(ev, n, &a, &b, &r)))
			return err;
		out->kind = DSL_V_BOOL;
		out->u.b = r;
		return 0;
	case DSL_N_ADD: case DSL_N_SUB: case DSL_N_MUL: case DSL_N_DIV: case DSL_N_MOD:
		return arith(ev, n, &a, &b, out);
	default:
		return rt_error(ev, n, "cannot evaluate this expression");
	}
}
