// SPDX-License-Identifier: GPL-2.0
/*
 * accum.c - an on_inclusion that keeps running sums, run as additions.
 *
 * The seeds count and sum what a set claims: `n <- n + 1`, `bytes <- bytes +
 * THIS.size`. The evaluator takes ~40 ns a claimed object for those two
 * statements (expression nodes, values, coercion, persisting): 210 ms of a
 * reachability query's 355 at 5 M objects. Such a lambda is run here as the
 * same integer additions in the same order (two's complement, wrapping, as
 * eval.c's arith()). Whatever the evaluator would do differently is left to
 * it, decided before any addition is made: a property that is not an int
 * when the object is claimed (null: an error there), and THIS.size on an
 * object whose class has a Java field `size` (which THIS.size then reads,
 * types.c's DSL_RES_FIELD_OR_BUILTIN).
 */
#include <string.h>

#include "dsl.h"

/* Is @n the int property @prop of the set? */
static bool is_prop(const struct dsl_node *n, int prop)
{
	return n && n->kind == DSL_N_IDENT && n->res == DSL_RES_PROP && n->slot == prop;
}

/* @n as an addend into op @k of @a: an integer literal or THIS.size. */
static bool addend(const struct dsl_node *n, struct dsl_accum *a, int k)
{
	if (n->kind == DSL_N_INT) {
		a->op[k].size = false;
		a->op[k].k = n->ival;
		return true;
	}
	if (n->kind != DSL_N_MEMBER || !n->lhs || n->lhs->kind != DSL_N_IDENT ||
	    n->lhs->res != DSL_RES_THIS)
		return false;
	if (n->res == DSL_RES_BUILTIN && n->slot == DSL_B_SIZE) {
		a->op[k].size = true;
		a->op[k].field = -1;
		return true;
	}
	if (n->res == DSL_RES_FIELD_OR_BUILTIN && n->ival == DSL_B_SIZE) {
		a->op[k].size = true;
		a->op[k].field = n->slot;
		return true;
	}
	return false;
}

void dsl_accum_compile(const struct dsl_settype *st, const struct dsl_node *lam,
		       struct dsl_accum *a)
{
	int k = 0;

	memset(a, 0, sizeof(*a));
	if (!lam || lam->kind != DSL_N_LAMBDA || lam->args || !lam->body)
		return;
	for (const struct dsl_node *s = lam->body; s; s = s->next, k++) {
		const struct dsl_node *r = s->rhs;
		int p = s->slot;

		if (k == DSL_ACCUM_MAX || s->kind != DSL_N_ASSIGN || s->res != DSL_RES_PROP ||
		    p < 0 || p >= st->nprops || !st->props[p]->ty ||
		    st->props[p]->ty->kind != DSL_T_INT || !r || r->kind != DSL_N_ADD)
			return;
		if (!(is_prop(r->lhs, p) && addend(r->rhs, a, k)) &&
		    !(is_prop(r->rhs, p) && addend(r->lhs, a, k)))
			return;
		a->op[k].prop = p;
	}
	a->n = k;
}

int32_t dsl_accum_field(const struct dsl_eval *ev, const struct dsl_accum *a, int k, uint32_t cls)
{
	if (!a->op[k].size || a->op[k].field < 0)
		return -1;
	return ev->fidx[(size_t)cls * ev->t->nfields + a->op[k].field];
}

bool dsl_accum_run(const struct dsl_eval *ev, const struct dsl_accum *a, uint32_t o,
		   struct dsl_value *props)
{
	const struct dsl_hobject *obj = &ev->h->objects[o];

	for (int k = 0; k < a->n; k++) {
		if (props[a->op[k].prop].kind != DSL_V_INT)
			return false;
		if (dsl_accum_field(ev, a, k, obj->cls) >= 0)
			return false;
	}
	for (int k = 0; k < a->n; k++) {
		struct dsl_value *v = &props[a->op[k].prop];
		uint64_t x = a->op[k].size ? obj->size : (uint64_t)a->op[k].k;

		v->u.i = (int64_t)((uint64_t)v->u.i + x);
	}
	return true;
}
