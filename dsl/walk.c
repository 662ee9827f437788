// SPDX-License-Identifier: GPL-2.0
/*
 * walk.c - the execution semantics of issue 7.
 *
 *  1. Instances: set types in declaration order; for each, its
 *     instances_for declarations in order, one instance per name of
 *     have_names (evaluated in the global context). Then for each instance,
 *     in that order, its properties' initial values (declaration order) and
 *     its roots, with ENTITY bound to the instance.
 *  2. Roots: for each instance in order, each root in list order: an
 *     unclaimed root is claimed by it (first instance wins) and on_inclusion
 *     runs with THIS = the root, REFERRER = null, ref_kind = null.
 *  3. Walk. Every claim appends the object to a FIFO queue; "drain" offers
 *     the outgoing references of queued objects (in reference order) until
 *     the queue is empty. The order of offering is:
 *       a. drain (the references of the roots claimed in step 2);
 *       b. every heap root in the heap's order (REFERRER = null, ref_kind =
 *          the root kind), draining after each;
 *       c. every object in index order, each of its references in order
 *          (REFERRER = the object, ref_kind = the reference kind), draining
 *          after each.
 *     Offering REFERRER->THIS: if THIS is claimed nothing happens; otherwise
 *     the instances are asked in order, the first whose membership holds
 *     claims THIS and its on_inclusion runs once. So an object claimed late
 *     (in c) still passes membership on: its references are offered again.
 *     Each reference is offered at most twice; the walk is linear.
 *  4. Output (json.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "dsl.h"

struct walk {
	struct dsl_eval *ev;
	uint32_t *queue;
	size_t qhead, qtail;
	/* per instance: its set's membership is "THIS in Unassigned and
	 * REFERRER in ENTITY" (reachability, as the seeds write it), decided
	 * here without the evaluator: REFERRER one of the instance's objects */
	bool *reach;
	/* per set type: its on_inclusion as running sums (accum.c), if it is */
	struct dsl_accum *accum;
};

/* Is @n the name @res resolved to (types.c)? */
static bool is_name(const struct dsl_node *n, int res)
{
	return n && n->kind == DSL_N_IDENT && n->res == res;
}

/* Is @n "L in R" with L and R the names @l and @r? */
static bool is_in(const struct dsl_node *n, int l, int r)
{
	return n && n->kind == DSL_N_IN && is_name(n->lhs, l) && is_name(n->rhs, r);
}

/* Is membership @n "THIS in Unassigned and REFERRER in ENTITY", either way round? */
static bool is_reach(const struct dsl_node *n)
{
	return n && n->kind == DSL_N_AND &&
	       ((is_in(n->lhs, DSL_RES_THIS, DSL_RES_UNASSIGNED) &&
		 is_in(n->rhs, DSL_RES_REFERRER, DSL_RES_ENTITY)) ||
		(is_in(n->lhs, DSL_RES_REFERRER, DSL_RES_ENTITY) &&
		 is_in(n->rhs, DSL_RES_THIS, DSL_RES_UNASSIGNED)));
}

/* Which field slot each class has for each field name the program reads. */
static int build_field_index(struct dsl_eval *ev)
{
	const struct dsl_heap *h = ev->h;
	size_t nf = ev->t->nfields;

	ev->fidx = dsl_arena_alloc(ev->persist, ((size_t)h->nclasses * nf + 1) * sizeof(int32_t));
	if (!ev->fidx)
		return -ENOMEM;
	for (uint32_t c = 0; c < h->nclasses; c++) {
		const struct dsl_hclass *k = &h->classes[c];

		for (size_t f = 0; f < nf; f++) {
			ev->fidx[c * nf + f] = -1;
			for (uint32_t j = 0; j < k->nfields; j++) {
				if (!strcmp(k->fields[j].name, ev->t->fields[f])) {
					ev->fidx[c * nf + f] = (int32_t)j;
					break;
				}
			}
		}
	}
	return 0;
}

/*
 * `x is Name` is Java's instanceof: x's class, its superclasses and every
 * superinterface, transitively (by name, dsl_class_name_matches). An array
 * class is also a java.lang.Cloneable and a java.io.Serializable (its
 * superclass is java.lang.Object), and E[] is an F[] when E is an F (array
 * covariance of reference element types). One table per name of the
 * program: isv[name * nclasses + class].
 */
struct istab {
	const struct dsl_heap *h;
	uint32_t *byname;            /* class indices sorted by name */
	uint32_t cloneable, serializable;
	uint8_t *state;              /* per class: 0 unknown, 1 open, 2 no, 3 yes */
	uint32_t *stack;
};

static int cmp_byname(const void *a, const void *b, void *heap)
{
	const struct dsl_heap *h = heap;

	return strcmp(h->classes[*(const uint32_t *)a].name, h->classes[*(const uint32_t *)b].name);
}

/* The class named exactly name[0..len), or DSL_NOOBJ. */
static uint32_t class_named(const struct istab *t, const char *name, size_t len)
{
	uint32_t lo = 0, hi = t->h->nclasses;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		const char *c = t->h->classes[t->byname[mid]].name;
		int d = strncmp(c, name, len);

		if (!d && c[len])
			d = 1;
		if (!d)
			return t->byname[mid];
		if (d < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return DSL_NOOBJ;
}

static bool is_array_name(const char *n)
{
	size_t l = strlen(n);

	return l > 2 && !strcmp(n + l - 2, "[]");
}

/* The element class of array class c (a reference type), or DSL_NOOBJ. */
static uint32_t elem_class(const struct istab *t, uint32_t c)
{
	const char *n = t->h->classes[c].name;

	return is_array_name(n) ? class_named(t, n, strlen(n) - 2) : DSL_NOOBJ;
}

/* The i-th type c extends or implements: DSL_NOOBJ - 1 for none at that
 * place (no superclass, a missing Cloneable), DSL_NOOBJ past the last. */
static uint32_t supertype(const struct istab *t, uint32_t c, uint32_t i)
{
	const struct dsl_hclass *k = &t->h->classes[c];
	uint32_t s;

	if (i == 0)
		s = k->super;
	else if (i - 1 < k->nifaces)
		s = k->ifaces[i - 1];
	else if (is_array_name(k->name) && i - 1 - k->nifaces < 2)
		s = i - 1 == k->nifaces ? t->cloneable : t->serializable;
	else
		return DSL_NOOBJ;
	return s == DSL_NOOBJ ? DSL_NOOBJ - 1 : s;
}

/* tab[c] = 1 when a class c is a `name`; @elem: the table of the name
 * without its last "[]" (NULL if it has none). */
static void is_table(struct istab *t, const char *name, const uint8_t *elem, uint8_t *tab)
{
	const struct dsl_heap *h = t->h;
	uint32_t n = h->nclasses;

	memset(t->state, 0, n);
	for (uint32_t c0 = 0; c0 < n; c0++) {
		uint32_t sp = 0;

		if (t->state[c0])
			continue;
		t->stack[sp++] = c0;
		t->state[c0] = 1;
		while (sp) { /* depth-first over the supertypes, each class once */
			uint32_t c = t->stack[sp - 1], e, i, s;
			bool yes = dsl_class_name_matches(h->classes[c].name, name), pushed = false;

			if (!yes && elem && (e = elem_class(t, c)) != DSL_NOOBJ && elem[e])
				yes = true;
			for (i = 0; !yes && (s = supertype(t, c, i)) != DSL_NOOBJ; i++) {
				if (s >= n)
					continue;
				if (t->state[s] == 0) {
					t->state[s] = 1;
					t->stack[sp++] = s;
					pushed = true;
					break;
				}
				yes = t->state[s] == 3; /* open (a cycle): not through it */
			}
			if (pushed)
				continue;
			t->state[c] = yes ? 3 : 2;
			sp--;
		}
	}
	for (uint32_t c = 0; c < n; c++)
		tab[c] = t->state[c] == 3;
}

/* The table of @name into @tab, with those of its element names first. */
static int is_table_name(struct istab *t, struct dsl_arena *a, const char *name, uint8_t *tab)
{
	uint8_t *elem = NULL;
	size_t l = strlen(name);

	if (is_array_name(name)) {
		char *en = dsl_arena_strndup(a, name, l - 2);

		elem = dsl_arena_alloc(a, (size_t)t->h->nclasses + 1);
		if (!en || !elem || is_table_name(t, a, en, elem))
			return -ENOMEM;
	}
	is_table(t, name, elem, tab);
	return 0;
}

static int build_is_table(struct dsl_eval *ev)
{
	const struct dsl_heap *h = ev->h;
	struct istab t = { .h = h };
	int err = -ENOMEM;

	ev->isv = dsl_arena_alloc(ev->persist, (size_t)ev->t->nclasses * h->nclasses + 1);
	if (!ev->isv)
		return -ENOMEM;
	if (!ev->t->nclasses)
		return 0;
	t.byname = malloc(((size_t)h->nclasses + 1) * sizeof(*t.byname));
	t.state = malloc((size_t)h->nclasses + 1);
	t.stack = malloc(((size_t)h->nclasses + 1) * sizeof(*t.stack));
	if (!t.byname || !t.state || !t.stack)
		goto out;
	for (uint32_t c = 0; c < h->nclasses; c++)
		t.byname[c] = c;
	qsort_r(t.byname, h->nclasses, sizeof(*t.byname), cmp_byname, (void *)h);
	t.cloneable = class_named(&t, "java.lang.Cloneable", 19);
	t.serializable = class_named(&t, "java.io.Serializable", 20);
	for (int n = 0; n < ev->t->nclasses; n++)
		if (is_table_name(&t, ev->persist, ev->t->classes[n],
				  &ev->isv[(size_t)n * h->nclasses]))
			goto out;
	err = 0;
out:
	free(t.byname);
	free(t.state);
	free(t.stack);
	return err;
}

static int add_instance(struct dsl_eval *ev, int set, const struct dsl_value *name, size_t *cap)
{
	if ((size_t)ev->ninst == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct dsl_inst *v = dsl_arena_alloc(ev->persist, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		if (ev->ninst)
			memcpy(v, ev->insts, ev->ninst * sizeof(*v));
		ev->insts = v;
		*cap = ncap;
	}
	if (ev->ninst == INT32_MAX)
		return -E2BIG;
	struct dsl_inst *in = &ev->insts[ev->ninst];
	int np = ev->t->sets[set].nprops;

	in->set = set;
	in->name = *name;
	in->props = dsl_arena_alloc(ev->persist, (np + 1) * sizeof(*in->props));
	if (!in->props)
		return -ENOMEM;
	ev->ninst++;
	return 0;
}

/* Step 1: instances, initial values, roots. */
static int create_instances(struct dsl_eval *ev, const struct dsl_ast *ast)
{
	size_t cap = 0;
	int err;

	ev->cur = ev->persist;
	for (int s = 0; s < ev->t->nsets; s++) {
		for (const struct dsl_node *n = ast->instances; n; n = n->next) {
			struct dsl_value names;

			if (n->slot != s)
				continue;
			ev->inst = -1;
			if ((err = dsl_eval_expr(ev, n->rhs, &names)))
				return err;
			if (names.kind == DSL_V_LIST) {
				for (size_t i = 0; i < names.u.l->n; i++) {
					struct dsl_value v = dsl_list_get(ev, names.u.l, i);

					if (v.kind != DSL_V_STR && v.kind != DSL_V_INT)
						continue; /* a null name (absent field) names nothing */
					if ((err = add_instance(ev, s, &v, &cap)))
						return err;
				}
			} else if (names.kind == DSL_V_STR || names.kind == DSL_V_INT) {
				if ((err = add_instance(ev, s, &names, &cap)))
					return err;
			}
		}
	}
	for (int i = 0; i < ev->ninst; i++) {
		struct dsl_inst *in = &ev->insts[i];
		const struct dsl_settype *st = &ev->t->sets[in->set];

		ev->inst = i;
		for (int p = 0; p < st->nprops; p++) {
			struct dsl_value v;

			if ((err = dsl_eval_expr(ev, st->props[p]->rhs, &v)))
				return err;
			if (st->props[p]->ty && st->props[p]->ty->kind == DSL_T_FLOAT &&
			    v.kind == DSL_V_INT) {
				v.kind = DSL_V_FLOAT;
				v.u.f = (double)v.u.i;
			}
			in->props[p] = v;
		}
		if (st->roots && (err = dsl_eval_expr(ev, st->roots, &in->roots)))
			return err;
	}
	return 0;
}

static int claim(struct walk *w, int inst, uint32_t obj)
{
	struct dsl_eval *ev = w->ev;
	const struct dsl_settype *st = &ev->t->sets[ev->insts[inst].set];
	struct dsl_value r;

	ev->owner[obj] = inst + 1;
	w->queue[w->qtail++] = obj;
	if (!st->on_inclusion)
		return 0;
	if (w->accum && w->accum[ev->insts[inst].set].n &&
	    dsl_accum_run(ev, &w->accum[ev->insts[inst].set], obj, ev->insts[inst].props))
		return 0;
	ev->inst = inst;
	ev->this_obj = obj;
	return dsl_eval_lambda(ev, st->on_inclusion, NULL, &r);
}

/* Offer REFERRER -> THIS over a reference of kind refkind. */
static int offer(struct walk *w, uint32_t referrer, int refkind, uint32_t obj)
{
	struct dsl_eval *ev = w->ev;
	int err = 0;

	if (ev->owner[obj])
		return 0;
	struct dsl_arena_mark m = dsl_arena_mark(ev->tmp);

	ev->cur = ev->tmp;
	ev->this_obj = obj;
	ev->referrer = referrer;
	ev->refkind = refkind;
	for (int i = 0; i < ev->ninst; i++) {
		const struct dsl_settype *st = &ev->t->sets[ev->insts[i].set];
		struct dsl_value v;

		if (!st->membership)
			continue;
		if (w->reach[i]) { /* THIS is unowned (above): REFERRER decides */
			if (referrer != DSL_NOOBJ && ev->owner[referrer] == i + 1) {
				ev->inst = i;
				err = claim(w, i, obj);
				break;
			}
			continue;
		}
		ev->inst = i;
		if ((err = dsl_eval_expr(ev, st->membership, &v)))
			break;
		if (v.kind == DSL_V_BOOL && v.u.b) {
			err = claim(w, i, obj);
			break;
		}
	}
	dsl_arena_reset(ev->tmp, m);
	return err;
}

static int drain(struct walk *w)
{
	const struct dsl_heap *h = w->ev->h;
	int err;

	while (w->qhead < w->qtail) {
		uint32_t o = w->queue[w->qhead++], c = dsl_heap_cref(h, o);
		const struct dsl_hobject *obj = &h->objects[o];

		/* an implied CLASS reference first, where a record's would be */
		if (c != DSL_NOOBJ && (err = offer(w, o, DSL_REF_CLASS, c)))
			return err;
		for (uint32_t r = 0; r < obj->nrefs; r++) {
			const struct dsl_href *ref = &h->refs[obj->ref_first + r];

			if ((err = offer(w, o, ref->kind, ref->to)))
				return err;
		}
	}
	return 0;
}

/* drain() when every membership is reachability (reach_only()): a target
 * nobody owns is claimed by its referrer's instance, if that one has a
 * membership - what offer() would decide, without asking each instance for
 * each reference. What a claim's on_inclusion leaves in the scratch arena
 * (nothing when it is running sums) is freed every CLAIMS_PER_RESET claims,
 * not after each (no value of one outlives it). */
#define CLAIMS_PER_RESET 256

static int drain_reach(struct walk *w)
{
	struct dsl_eval *ev = w->ev;
	const struct dsl_heap *h = ev->h;
	struct dsl_arena_mark m = dsl_arena_mark(ev->tmp);
	unsigned since = 0;
	int err = 0;

	while (w->qhead < w->qtail && !err) {
		uint32_t o = w->queue[w->qhead++];
		const struct dsl_hobject *obj = &h->objects[o];
		int i = ev->owner[o] - 1;

		if (i < 0 || !ev->t->sets[ev->insts[i].set].membership)
			continue;
		/* r -1: an implied CLASS reference, first where a record's would be */
		for (int64_t r = h->class_ref ? -1 : 0; r < (int64_t)obj->nrefs && !err; r++) {
			struct dsl_href ref = r < 0 ? (struct dsl_href){ .to = dsl_heap_cref(h, o),
					.index = -1, .kind = DSL_REF_CLASS } :
						      h->refs[obj->ref_first + r];

			if (ref.to == DSL_NOOBJ || ev->owner[ref.to])
				continue;
			ev->cur = ev->tmp;
			ev->this_obj = ref.to;
			ev->referrer = o;
			ev->refkind = ref.kind;
			ev->inst = i;
			err = claim(w, i, ref.to);
			if (++since == CLAIMS_PER_RESET) {
				dsl_arena_reset(ev->tmp, m);
				since = 0;
			}
		}
	}
	dsl_arena_reset(ev->tmp, m);
	return err;
}

/* Are @a's additions on int properties (else dsl_accum_run() leaves every
 * object to the evaluator)? */
static bool accum_ints(const struct dsl_accum *a, const struct dsl_value *props)
{
	for (int k = 0; k < a->n; k++)
		if (props[a->op[k].prop].kind != DSL_V_INT)
			return false;
	return true;
}

/* Per class: are @a's additions what on_inclusion does for its objects
 * (THIS.size not a Java field there: dsl_accum_run())? In ev->tmp. */
static uint8_t *plain_classes(struct dsl_eval *ev, const struct dsl_accum *a)
{
	uint32_t nc = ev->h->nclasses;
	uint8_t *plain = dsl_arena_alloc(ev->tmp, (size_t)nc + 1);

	if (!plain)
		return NULL;
	for (uint32_t c = 0; c < nc; c++) {
		plain[c] = 1;
		for (int k = 0; a && k < a->n; k++)
			if (dsl_accum_field(ev, a, k, c) >= 0)
				plain[c] = 0;
	}
	return plain;
}

/* Does each of the @n objects left out hold an int in its Java field `size`
 * (what the evaluator then adds without an error, an int as before)? */
static bool later_ints(const struct dsl_eval *ev, const struct dsl_accum *a, const uint32_t *later,
		       size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct dsl_hval *vals = dsl_heap_values(ev->h, later[i]);
		uint32_t c = ev->h->objects[later[i]].cls;

		for (int k = 0; k < a->n; k++) {
			int32_t slot = dsl_accum_field(ev, a, k, c);

			if (slot >= 0 && (!vals || vals[slot].kind != DSL_HV_INT))
				return false;
		}
	}
	return true;
}

/* on_inclusion of instance @r for each of the @n objects left out, by the
 * evaluator (as claim() runs it, REFERRER unknown: running sums read none). */
static int run_later(struct walk *w, int r, const uint32_t *later, size_t n)
{
	struct dsl_eval *ev = w->ev;
	const struct dsl_settype *st = &ev->t->sets[ev->insts[r].set];
	struct dsl_arena_mark m = dsl_arena_mark(ev->tmp);
	struct dsl_value v;
	int err = 0;

	for (size_t i = 0; i < n && !err; i++) {
		ev->cur = ev->tmp;
		ev->this_obj = later[i];
		ev->referrer = DSL_NOOBJ;
		ev->refkind = -1;
		ev->inst = r;
		err = dsl_eval_lambda(ev, st->on_inclusion, NULL, &v);
		if ((i + 1) % CLAIMS_PER_RESET == 0)
			dsl_arena_reset(ev->tmp, m);
	}
	dsl_arena_reset(ev->tmp, m);
	ev->cur = ev->persist;
	return err;
}

/* What drain_reach_par() changes, to undo it. */
struct reach_undo {
	uint32_t *queue;             /* the queue's entries [qhead, qtail) */
	int32_t *owner;              /* ... and their owners */
	struct dsl_value *props;     /* the instance's properties */
};

/* Undo drain_reach_par()'s claims of instance @r: the objects it owns
 * but the queue's go back to nobody, the queue and properties as saved. */
static void undo(struct walk *w, int r, const struct reach_undo *u)
{
	struct dsl_eval *ev = w->ev;
	size_t nq = w->qtail - w->qhead;

	for (uint32_t o = 0; o < ev->h->nobjects; o++)
		if (ev->owner[o] == r + 1)
			ev->owner[o] = 0;
	for (size_t i = 0; i < nq; i++) {
		w->queue[w->qhead + i] = u->queue[i];
		ev->owner[u->queue[i]] = u->owner[i];
	}
	memcpy(ev->insts[r].props, u->props,
	       (size_t)ev->t->sets[ev->insts[r].set].nprops * sizeof(*u->props));
}

/*
 * drain_reach() in two threads (reach.c), where what it claims cannot
 * depend on the order: one instance has a membership (reachability), the
 * others none (they own their roots, nothing more), and its on_inclusion is
 * none or running sums on int properties (accum.c) - added apart for the
 * objects whose THIS.size is their built-in, by the evaluator after for the
 * others when their Java field `size` holds an int (integer additions
 * commute), else undone. 0, or -EAGAIN: nothing done (drain_reach() walks),
 * or the evaluator's error.
 */
static int drain_reach_par(struct walk *w)
{
	struct dsl_eval *ev = w->ev;
	struct dsl_reach_out out = { 0 };
	struct reach_undo u = { 0 };
	struct dsl_reach_in in = { .h = ev->h, .owner = ev->owner, .stack = w->queue };
	const struct dsl_settype *st;
	size_t nq = w->qtail - w->qhead, np;
	int r = -1, err;

	for (int i = 0; i < ev->ninst; i++) {
		if (!ev->t->sets[ev->insts[i].set].membership)
			continue;
		if (r >= 0)
			return -EAGAIN;
		r = i;
	}
	if (r < 0)
		return -EAGAIN;
	st = &ev->t->sets[ev->insts[r].set];
	np = (size_t)st->nprops;
	if (st->on_inclusion) {
		in.a = w->accum ? &w->accum[ev->insts[r].set] : NULL;
		if (!in.a || !in.a->n || !accum_ints(in.a, ev->insts[r].props))
			return -EAGAIN;
	}
	in.inst = r;
	in.plain = plain_classes(ev, in.a);
	in.seeds = w->queue + w->qhead;
	in.nseeds = nq;
	u.queue = malloc((nq + 1) * sizeof(*u.queue));
	u.owner = malloc((nq + 1) * sizeof(*u.owner));
	u.props = malloc((np + 1) * sizeof(*u.props));
	err = -EAGAIN;
	if (!in.plain || !u.queue || !u.owner || !u.props)
		goto out;
	for (size_t i = 0; i < nq; i++) {
		u.queue[i] = w->queue[w->qhead + i];
		u.owner[i] = ev->owner[u.queue[i]];
	}
	memcpy(u.props, ev->insts[r].props, np * sizeof(*u.props));
	err = dsl_reach_par(&in, &out);
	if (err == -EAGAIN || err == -ENOMEM) {
		err = -EAGAIN; /* nothing changed */
		goto out;
	}
	if (err || (in.a && !later_ints(ev, in.a, out.later, out.nlater))) {
		undo(w, r, &u);
		err = -EAGAIN;
		goto out;
	}
	for (int k = 0; in.a && k < in.a->n; k++) {
		struct dsl_value *v = &ev->insts[r].props[in.a->op[k].prop];

		v->u.i = (int64_t)((uint64_t)v->u.i + out.add[k]);
	}
	w->qhead = w->qtail = 0; /* the queue was the first thread's stack */
	err = in.a ? run_later(w, r, out.later, out.nlater) : 0;
out:
	free(out.later);
	free(u.queue);
	free(u.owner);
	free(u.props);
	return err;
}

/* Step 2: each instance's roots, first instance wins. */
static int include_roots(struct walk *w)
{
	struct dsl_eval *ev = w->ev;
	int err;

	ev->referrer = DSL_NOOBJ;
	ev->refkind = -1;
	for (int i = 0; i < ev->ninst; i++) {
		struct dsl_value *roots = &ev->insts[i].roots;
		size_t n = roots->kind == DSL_V_LIST ? roots->u.l->n : 1;

		for (size_t k = 0; k < n; k++) {
			struct dsl_value v = roots->kind == DSL_V_LIST ? dsl_list_get(ev, roots->u.l, k)
								       : *roots;
			uint32_t o = dsl_value_obj(ev, &v);

			if (o == DSL_NOOBJ || ev->owner[o])
				continue;
			struct dsl_arena_mark m = dsl_arena_mark(ev->tmp);

			ev->cur = ev->tmp;
			ev->referrer = DSL_NOOBJ;
			ev->refkind = -1;
			err = claim(w, i, o);
			dsl_arena_reset(ev->tmp, m);
			if (err)
				return err;
		}
	}
	return 0;
}

/* Does every instance with a membership decide it by reachability (w->reach)?
 * Then offering a reference claims its target only when its referrer is
 * claimed - and a claimed object's references were all offered when it was
 * drained - so steps 3b and 3c (offers with no referrer or an unclaimed
 * one, which change nothing) can claim nothing: the walk ends with 3a. At
 * 5 M objects that pass over every object and reference took 166 of a
 * reachability query's 310 ms. */
static bool reach_only(const struct walk *w)
{
	const struct dsl_eval *ev = w->ev;

	for (int i = 0; i < ev->ninst; i++)
		if (ev->t->sets[ev->insts[i].set].membership && !w->reach[i])
			return false;
	return true;
}

/* Step 3: every reference of the heap, heap roots first. */
static int walk_refs(struct walk *w)
{
	const struct dsl_heap *h = w->ev->h;
	int err;

	if (reach_only(w))
		return drain_reach_par(w) ? drain_reach(w) : 0;
	if ((err = drain(w)))
		return err;
	for (uint32_t i = 0; i < h->nroots; i++)
		if ((err = offer(w, DSL_NOOBJ, h->roots[i].kind, h->roots[i].obj)) || (err = drain(w)))
			return err;
	for (uint32_t o = 0; o < h->nobjects; o++) {
		const struct dsl_hobject *obj = &h->objects[o];
		uint32_t c = dsl_heap_cref(h, o);

		if (c != DSL_NOOBJ && ((err = offer(w, o, DSL_REF_CLASS, c)) || (err = drain(w))))
			return err;
		for (uint32_t r = 0; r < obj->nrefs; r++) {
			const struct dsl_href *ref = &h->refs[obj->ref_first + r];

			if ((err = offer(w, o, ref->kind, ref->to)) || (err = drain(w)))
				return err;
		}
	}
	return 0;
}

int dsl_walk(struct dsl_eval *ev, const struct dsl_ast *ast)
{
	const struct dsl_heap *h = ev->h;
	struct walk w = { .ev = ev };
	int err;

	ev->inst = -1;
	ev->this_obj = ev->referrer = DSL_NOOBJ;
	ev->refkind = -1;
	if ((err = build_field_index(ev)) || (err = build_is_table(ev)))
		goto out;
	/* the owners zeroed (by the arena: 0 unclaimed); the queue not in the
	 * arena, which zeroes what it gives, but its pages made as it grows */
	ev->owner = dsl_arena_alloc(ev->persist, ((size_t)h->nobjects + 1) * sizeof(*ev->owner));
	w.queue = malloc(((size_t)h->nobjects + 1) * sizeof(*w.queue));
	if (!ev->owner || !w.queue) {
		err = -ENOMEM;
		goto out;
	}
	if ((err = create_instances(ev, ast)))
		goto out;
	w.reach = dsl_arena_alloc(ev->persist, ((size_t)ev->ninst + 1) * sizeof(*w.reach));
	if (!w.reach) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < ev->ninst; i++)
		w.reach[i] = is_reach(ev->t->sets[ev->insts[i].set].membership);
	/* MEMTRACE_DSL_NO_ACCUM: every on_inclusion by the evaluator (tests
	 * compare the two) */
	if (!getenv("MEMTRACE_DSL_NO_ACCUM")) {
		w.accum = dsl_arena_alloc(ev->persist,
					  ((size_t)ev->t->nsets + 1) * sizeof(*w.accum));
		if (!w.accum) {
			err = -ENOMEM;
			goto out;
		}
		for (int i = 0; i < ev->t->nsets; i++)
			dsl_accum_compile(&ev->t->sets[i], ev->t->sets[i].on_inclusion,
					  &w.accum[i]);
	}
	if ((err = include_roots(&w)))
		goto out;
	if (ev->t->needs_refs)
		err = walk_refs(&w);
out:
	free(w.queue);
	if (err == -ENOMEM)
		dsl_diags_add(ev->d, 0, "out of memory (a query may use %llu MiB)",
			      (unsigned long long)(DSL_MAX_ARENA >> 20));
	ev->cur = ev->persist;
	return err;
}

