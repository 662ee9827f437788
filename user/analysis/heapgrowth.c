// SPDX-License-Identifier: GPL-2.0
/* heapgrowth.c - growth by holder across heap snapshots (see heapgrowth.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/heapgrowth.h"
#include "dsl/dsl.h"
#include "lib/util.h"

#define MIN_GROWTH 32

/* A place: a class at a root path. */
struct group {
	uint64_t sig;
	uint64_t parent;           /* the parent place's sig, 0 for a root */
	uint32_t cls;              /* the objects' class name (a string id) */
	uint32_t label;            /* the link into the place: a field, "[]", a root */
	uint64_t count[HEAPGROWTH_MAX_SNAPS];
	uint64_t bytes[HEAPGROWTH_MAX_SNAPS];
	uint64_t retained[HEAPGROWTH_MAX_SNAPS];
	bool classobj;             /* the objects are class objects */
	uint32_t mirror_of;        /* then: the name of the class they stand for */
	bool root;
	/* rank(): */
	bool growing;
	int32_t holder;            /* group index of its holder */
	int32_t result;            /* the holder's index in the result, -1 none */
	uint32_t last_obj;         /* an object of the place in the last snapshot */
};

struct heapgrowth {
	struct group *g;
	size_t n, cap;
	size_t *slot;              /* open addressing: sig -> group index + 1 */
	size_t mask;
	char **strs;               /* interned strings */
	size_t nstrs, cstrs;
	size_t *strslot;
	size_t strmask;
	uint32_t nsnaps;
	double t[HEAPGROWTH_MAX_SNAPS];
	uint64_t gcs[HEAPGROWTH_MAX_SNAPS];
	/* the last snapshot's place of each object */
	int32_t *last_group;       /* per object of the last snapshot: its group, -1 none */
	uint32_t last_n;
	/* the result */
	struct heapgrowth_holder *h;
	uint32_t nh;
};

/* ---- hashing and interning ---- */

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h *= 0xff51afd7ed558ccdull;
	return h ^ (h >> 33);
}

static uint64_t hstr(const char *s)
{
	uint64_t h = 1469598103934665603ull;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 1099511628211ull;
	return h ? h : 1;
}

/* The id of string @s (a copy kept), UINT32_MAX on ENOMEM. */
static uint32_t intern(struct heapgrowth *g, const char *s)
{
	uint64_t h = hstr(s);
	size_t i;

	if ((g->nstrs + 1) * 2 > g->strmask + 1) {
		size_t cap = g->strmask ? (g->strmask + 1) * 2 : 256;
		size_t *ns = calloc(cap, sizeof(*ns));

		if (!ns)
			return UINT32_MAX;
		for (size_t k = 0; k < g->nstrs; k++) {
			for (i = hstr(g->strs[k]) & (cap - 1); ns[i]; i = (i + 1) & (cap - 1))
				;
			ns[i] = k + 1;
		}
		free(g->strslot);
		g->strslot = ns;
		g->strmask = cap - 1;
	}
	for (i = h & g->strmask; g->strslot[i]; i = (i + 1) & g->strmask)
		if (!strcmp(g->strs[g->strslot[i] - 1], s))
			return (uint32_t)(g->strslot[i] - 1);
	if (g->nstrs == g->cstrs) {
		size_t c = g->cstrs ? g->cstrs * 2 : 256;
		char **p = realloc(g->strs, c * sizeof(*p));

		if (!p)
			return UINT32_MAX;
		g->strs = p;
		g->cstrs = c;
	}
	g->strs[g->nstrs] = strdup(s);
	if (!g->strs[g->nstrs])
		return UINT32_MAX;
	g->strslot[i] = ++g->nstrs;
	return (uint32_t)(g->nstrs - 1);
}

/* The group of @sig, created (zeroed, sig set) when @create; -1 if none or ENOMEM. */
static int64_t group_of(struct heapgrowth *g, uint64_t sig, bool create)
{
	size_t i;

	if (create && (g->n + 1) * 2 > g->mask + 1) {
		size_t cap = g->mask ? (g->mask + 1) * 2 : 1024;
		size_t *ns = calloc(cap, sizeof(*ns));

		if (!ns)
			return -1;
		for (size_t k = 0; k < g->n; k++) {
			for (i = g->g[k].sig & (cap - 1); ns[i]; i = (i + 1) & (cap - 1))
				;
			ns[i] = k + 1;
		}
		free(g->slot);
		g->slot = ns;
		g->mask = cap - 1;
	}
	if (!g->slot)
		return -1;
	for (i = sig & g->mask; g->slot[i]; i = (i + 1) & g->mask)
		if (g->g[g->slot[i] - 1].sig == sig)
			return (int64_t)(g->slot[i] - 1);
	if (!create)
		return -1;
	if (g->n == g->cap) {
		size_t c = g->cap ? g->cap * 2 : 1024;
		struct group *p = realloc(g->g, c * sizeof(*p));

		if (!p)
			return -1;
		g->g = p;
		g->cap = c;
	}
	memset(&g->g[g->n], 0, sizeof(g->g[0]));
	g->g[g->n].sig = sig;
	g->slot[i] = ++g->n;
	return (int64_t)(g->n - 1);
}

struct heapgrowth *heapgrowth_new(void)
{
	return calloc(1, sizeof(struct heapgrowth));
}

static void free_result(struct heapgrowth *g)
{
	for (uint32_t i = 0; i < g->nh; i++) {
		free(g->h[i].classes);
		free((char *)g->h[i].path);
	}
	free(g->h);
	g->h = NULL;
	g->nh = 0;
}

void heapgrowth_free(struct heapgrowth *g)
{
	if (!g)
		return;
	free_result(g);
	for (size_t i = 0; i < g->nstrs; i++)
		free(g->strs[i]);
	free(g->strs);
	free(g->strslot);
	free(g->g);
	free(g->slot);
	free(g->last_group);
	free(g);
}

bool heapgrowth_internal(const char *cls)
{
	static const char *const pfx[] = { "java.", "javax.", "jdk.", "sun.", "com.sun." };
	size_t n = strlen(cls);

	while (n > 2 && !strcmp(cls + n - 2, "[]"))
		n -= 2;
	if (n != strlen(cls)) { /* an array: of a primitive, or of an internal class */
		static const char *const prim[] = { "boolean", "byte", "char", "short", "int",
						    "long", "float", "double" };

		for (size_t i = 0; i < sizeof(prim) / sizeof(prim[0]); i++)
			if (strlen(prim[i]) == n && !strncmp(cls, prim[i], n))
				return true;
	}
	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strncmp(cls, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

/* ---- one snapshot ---- */

/* What the places of one heap are made of. */
struct snapctx {
	const struct dsl_heap *h;
	uint64_t *clsh;            /* per class: hash of its name */
	uint64_t **fieldh;         /* per class: its fields' names' hashes (into fieldh_all) */
	uint64_t *fieldh_all;
	uint64_t *statich;         /* per static field: hash of its name */
	uint32_t *clsid;           /* per class: interned name */
	const uint32_t *parent;    /* per object: the owner of its root path's last link */
	uint32_t *own_parent;      /* parent when made here (the heap had no root_parent) */
	uint64_t *sig;             /* per object: its place, 0 not yet */
	int32_t *group;            /* per object: its place's group, -1 none */
	uint32_t *rootlabel;       /* per object that is a root: its label id, else UINT32_MAX */
	uint64_t *rooth;           /* per object that is a root: hash of that label */
	uint32_t *classof_obj;     /* per object: the class it is the object of, or DSL_NOOBJ */
	bool *anchor;              /* per class: not the JDK's (heapgrowth_internal()) */
	struct alias *alias;       /* roots placed below a referrer instead (aliases()), */
	uint32_t nalias;           /* by object */
};

/* A root only local variables hold that an object reached from another root
 * refers to: a map's table in a thread inside HashMap.putVal() (its local
 * `tab`), a list's array during add(). It is placed below that referrer, as
 * in the snapshots that did not catch the thread there. */
struct alias {
	uint32_t obj, via, parent;
	uint32_t end;              /* the root the parent's own path starts at */
};

/* The hash of the link @r from @from. */
static uint64_t link_hash(const struct snapctx *c, uint32_t from, const struct dsl_href *r)
{
	const struct dsl_heap *h = c->h;
	uint64_t x = mix(0x51, r->kind);

	if (r->kind == DSL_REF_FIELD && r->index >= 0 &&
	    (uint32_t)r->index < h->classes[h->objects[from].cls].nfields)
		return mix(mix(x, c->clsh[h->objects[from].cls]),
			   c->fieldh[h->objects[from].cls][r->index]);
	if (r->kind == DSL_REF_STATIC_FIELD && r->index >= 0 && (uint32_t)r->index < h->nstatics)
		return mix(mix(x, c->clsh[h->statics[r->index].cls]), c->statich[r->index]);
	return mix(x, c->clsh[h->objects[from].cls]); /* array elements: any index */
}

/* @o's alias entry (struct alias), or NULL: o a root, c->alias sorted. */
static const struct alias *alias_of(const struct snapctx *c, uint32_t o)
{
	uint32_t lo = 0, hi = c->nalias;

	if (!c->nalias || c->h->root_via[o] != DSL_VIA_ROOT)
		return NULL;
	while (lo < hi) {
		uint32_t m = lo + (hi - lo) / 2;

		if (c->alias[m].obj < o)
			lo = m + 1;
		else
			hi = m;
	}
	return lo < c->nalias && c->alias[lo].obj == o ? &c->alias[lo] : NULL;
}

/* The last link of @o's root path for its place (DSL_VIA_ROOT: a root). */
static uint32_t via_of(const struct snapctx *c, uint32_t o)
{
	const struct alias *a = alias_of(c, o);

	return a ? a->via : c->h->root_via[o];
}

/* The owner of that link. */
static uint32_t parent_of(const struct snapctx *c, uint32_t o)
{
	const struct alias *a = alias_of(c, o);

	return a ? a->parent : c->parent[o];
}

/* The text of the link into object @o (its root path's last link). */
static void link_text(const struct snapctx *c, uint32_t o, char *buf, size_t n)
{
	const struct dsl_heap *h = c->h;
	struct dsl_href r = dsl_heap_ref(h, via_of(c, o));

	if (r.kind == DSL_REF_ARRAY_ELEMENT)
		snprintf(buf, n, "[]");
	else
		dsl_ref_text(h, parent_of(c, o), &r, buf, n);
}

static int by_alias(const void *a, const void *b)
{
	const struct alias *x = a, *y = b;

	return x->obj < y->obj ? -1 : x->obj > y->obj;
}

/*
 * The aliases (struct alias): roots that only local variables hold, each
 * with the first field, static or element of a reached object that refers
 * to it - unless following the roots those referrers' own paths start at,
 * through the other aliases, comes back round (no cycle). The root search
 * takes locals last (heapgraph.c), but among them any order: a leak that
 * only a local holds - a map of thread "keeper" in e2e leaks_growth - had
 * its nodes below "a local variable (Node[])" in a snapshot that caught the
 * thread inside HashMap.putVal() (its local `tab`), and its growth was lost
 * (once in ~12 runs). Returns 0 or -ENOMEM.
 */
static int aliases(struct snapctx *c, uint8_t *cand)
{
	const struct dsl_heap *h = c->h;
	uint32_t n = h->nobjects, any = 0, keep = 0;
	uint64_t budget = 1u << 24; /* links climbed in all (a pathological heap: fewer aliases) */

	for (uint32_t i = 0; i < h->nroots; i++) { /* bit 0: local, bit 1: other */
		int k = h->roots[i].kind;

		cand[h->roots[i].obj] |= k == DSL_ROOT_STACK_LOCAL || k == DSL_ROOT_JNI_LOCAL ? 1 : 2;
	}
	for (uint32_t o = 0; o < n; o++) {
		cand[o] = cand[o] == 1 && h->root_via[o] == DSL_VIA_ROOT;
		any += cand[o];
	}
	for (uint32_t o = 0; o < n && any; o++) {
		const struct dsl_hobject *x = &h->objects[o];

		if (h->root_via[o] == DSL_VIA_NONE)
			continue;
		for (uint32_t j = 0; j < x->nrefs; j++) {
			uint32_t ri = x->ref_first + j, t = h->refs[ri].to, r = o, steps = 0;
			int kind = h->refs[ri].kind;

			if (!cand[t] || t == o || (kind != DSL_REF_FIELD && kind != DSL_REF_STATIC_FIELD &&
						   kind != DSL_REF_ARRAY_ELEMENT))
				continue;
			while (h->root_via[r] != DSL_VIA_ROOT && steps < budget) {
				r = c->parent[r];
				steps++;
			}
			budget -= steps;
			if (h->root_via[r] != DSL_VIA_ROOT || r == t)
				continue; /* too far, or o's path starts at t itself */
			if (!(c->nalias & (c->nalias + 1))) { /* 0, 1, 3, 7, ...: grow */
				struct alias *g = realloc(c->alias, (2 * (size_t)c->nalias + 1) *
								    sizeof(*g));

				if (!g)
					return -ENOMEM;
				c->alias = g;
			}
			c->alias[c->nalias++] = (struct alias){ t, ri, o, r };
			cand[t] = 0; /* the first one */
		}
	}
	if (!c->nalias)
		return 0;
	qsort(c->alias, c->nalias, sizeof(*c->alias), by_alias);
	/* keep those whose roots, followed through the aliases, end at a root
	 * that stays one (mark: cand[obj] 2 kept, 3 dropped; end roots that are
	 * no alias have cand 0) */
	for (uint32_t i = 0; i < c->nalias; i++) {
		uint32_t r = c->alias[i].end, steps = 0;
		const struct alias *e;

		while ((e = alias_of(c, r)) && r != c->alias[i].obj && steps++ <= c->nalias)
			r = e->end;
		cand[c->alias[i].obj] = alias_of(c, r) ? 3 : 2;
	}
	for (uint32_t i = 0; i < c->nalias; i++)
		if (cand[c->alias[i].obj] == 2)
			c->alias[keep++] = c->alias[i];
	c->nalias = keep; /* (still sorted) */
	return 0;
}

/* Each root object's label: its first root entry that is no local, else its
 * first; a local's thread is the last THREAD root before it (JVMTI reports a
 * thread, then its stack), but for a virtual thread's (dsl_hroot.vthread:
 * parked or mounted alike, so that a leak a virtual thread holds keeps one
 * holder across snapshots whichever it was at each): named by its tid, as
 * `jcmd Thread.dump_to_file` names one ("#21"), where the walk's marker
 * root gave it (dsl_hroot.vtid), else unnamed. */
static int root_labels(struct heapgrowth *g, struct snapctx *c)
{
	const struct dsl_heap *h = c->h;
	const char *thread = "?";
	char buf[1024];

	for (uint32_t i = 0; i < h->nroots; i++) {
		uint32_t o = h->roots[i].obj;
		int k = h->roots[i].kind;
		bool local = k == DSL_ROOT_STACK_LOCAL || k == DSL_ROOT_JNI_LOCAL;
		const char *cname = h->classes[h->objects[o].cls].name;
		uint32_t id;

		if (k == DSL_ROOT_THREAD) {
			thread = "?";
			for (uint32_t t = 0; t < h->nthreads; t++)
				if (h->threads[t].obj == o)
					thread = h->threads[t].name;
		}
		if (c->rootlabel[o] != UINT32_MAX && (local || c->rooth[o] & 1))
			continue; /* kept: an earlier entry, or a non-local one */
		if (c->classof_obj[o] != DSL_NOOBJ)
			snprintf(buf, sizeof(buf), "class %s", h->classes[c->classof_obj[o]].name);
		else if (k == DSL_ROOT_THREAD)
			snprintf(buf, sizeof(buf), "thread \"%s\" (%s)", thread, cname);
		else if (local && h->roots[i].vtid)
			snprintf(buf, sizeof(buf), "a local variable in virtual thread #%llu (%s)",
				 (unsigned long long)h->roots[i].vtid, cname);
		else if (local && h->roots[i].vthread)
			snprintf(buf, sizeof(buf), "a local variable in a virtual thread (%s)",
				 cname);
		else if (local)
			snprintf(buf, sizeof(buf), "%s in thread \"%s\" (%s)",
				 k == DSL_ROOT_STACK_LOCAL ? "a local variable" : "a JNI local",
				 thread, cname);
		else
			snprintf(buf, sizeof(buf), "%s (%s)", dsl_ref_kind_name(k), cname);
		id = intern(g, buf);
		if (id == UINT32_MAX)
			return -ENOMEM;
		c->rootlabel[o] = id;
		/* bit 0: a non-local entry set it (a local one may not replace it) */
		c->rooth[o] = (hstr(buf) & ~1ull) | !local;
	}
	return 0;
}

/* The place of @o (and of every object on its root path without one). */
static int place(struct heapgrowth *g, struct snapctx *c, uint32_t o, uint32_t *stack)
{
	const struct dsl_heap *h = c->h;
	uint32_t sp = 0;

	while (!c->sig[o]) {
		uint32_t v = via_of(c, o);

		stack[sp++] = o;
		if (v == DSL_VIA_ROOT || v == DSL_VIA_NONE)
			break;
		o = parent_of(c, o);
	}
	while (sp) {
		uint32_t x = stack[--sp], via = via_of(c, x);
		uint32_t cls = h->objects[x].cls;
		uint64_t ps, sig;
		int64_t gi;
		size_t before = g->n;

		if (via == DSL_VIA_NONE)
			continue;
		if (via == DSL_VIA_ROOT) {
			ps = 0;
			sig = mix(mix(0x7007, c->rooth[x] | 1), c->clsh[cls]);
		} else {
			uint32_t p = parent_of(c, x);
			struct dsl_href vr = dsl_heap_ref(h, via);
			uint64_t lh = link_hash(c, p, &vr), base;

			ps = c->sig[p];
			/* below an application's object (not a root) a place starts
			 * again from its class: "StandardManager.sessions -> ...
			 * (StandardSession)" whichever way the manager is reached -
			 * a root path can change between snapshots (a static's
			 * chain shorter than another's once a map filled) */
			base = c->anchor[h->objects[p].cls] && via_of(c, p) != DSL_VIA_ROOT ?
				       mix(0xa7c4, c->clsh[h->objects[p].cls]) : ps;
			/* an object of its referrer's class through a field (a list's
			 * next, a bin's chain, a tree's children): the referrer's
			 * place - a map's entries chained in a bin or at its head are
			 * one place, however a resize spreads them */
			if (h->objects[p].cls == cls && vr.kind == DSL_REF_FIELD &&
			    c->classof_obj[x] == DSL_NOOBJ) { /* not a class object's static */
				c->sig[x] = ps;
				c->group[x] = c->group[p];
				continue;
			}
			sig = mix(mix(base, lh), c->clsh[cls]);
		}
		sig = sig ? sig : 1;
		c->sig[x] = sig;
		gi = group_of(g, sig, true);
		if (gi < 0)
			return -ENOMEM;
		c->group[x] = (int32_t)gi;
		if (g->n > before) { /* made now */
			struct group *gr = &g->g[gi];
			char buf[1024];

			gr->parent = ps;
			gr->cls = c->clsid[cls];
			gr->root = via == DSL_VIA_ROOT;
			gr->classobj = c->classof_obj[x] != DSL_NOOBJ;
			if (gr->classobj)
				gr->mirror_of = c->clsid[c->classof_obj[x]];
			if (gr->root)
				gr->label = c->rootlabel[x];
			else {
				link_text(c, x, buf, sizeof(buf));
				gr->label = intern(g, buf);
			}
			if (gr->cls == UINT32_MAX || gr->label == UINT32_MAX)
				return -ENOMEM;
		}
	}
	return 0;
}

static void snap_free(struct snapctx *c)
{
	free(c->clsh);
	free(c->fieldh);
	free(c->fieldh_all);
	free(c->statich);
	free(c->clsid);
	free(c->own_parent);
	free(c->sig);
	free(c->group);
	free(c->rootlabel);
	free(c->rooth);
	free(c->classof_obj);
	free(c->anchor);
	free(c->alias);
}

int heapgrowth_add(struct heapgrowth *g, const struct dsl_heap *h, double t, uint64_t gcs)
{
	struct snapctx c = { .h = h };
	uint32_t n = h->nobjects, k = g->nsnaps, *stack = NULL;
	size_t nfields = 0;
	int err = -ENOMEM;

	if (k >= HEAPGROWTH_MAX_SNAPS)
		return -E2BIG;
	if (!h->root_via)
		return -EINVAL;
	for (uint32_t i = 0; i < h->nclasses; i++)
		nfields += h->classes[i].nfields;
	c.clsh = calloc(h->nclasses + 1, sizeof(*c.clsh));
	c.fieldh = calloc(h->nclasses + 1, sizeof(*c.fieldh));
	c.fieldh_all = calloc(nfields + 1, sizeof(*c.fieldh_all));
	c.statich = calloc((size_t)h->nstatics + 1, sizeof(*c.statich));
	c.clsid = calloc(h->nclasses + 1, sizeof(*c.clsid));
	/* each object's parent on its root path: the search's own when it kept
	 * them (a pass fewer over every reference) */
	c.own_parent = h->root_parent ? NULL : util_big_alloc((size_t)n + 1, sizeof(*c.own_parent));
	c.sig = util_big_calloc((size_t)n + 1, sizeof(*c.sig));
	c.group = util_big_alloc((size_t)n + 1, sizeof(*c.group));
	c.rootlabel = util_big_alloc((size_t)n + 1, sizeof(*c.rootlabel));
	c.rooth = util_big_calloc((size_t)n + 1, sizeof(*c.rooth));
	c.classof_obj = util_big_alloc((size_t)n + 1, sizeof(*c.classof_obj));
	c.anchor = calloc(h->nclasses + 1, sizeof(*c.anchor));
	stack = util_big_alloc((size_t)n + 1, sizeof(*stack));
	if (!c.clsh || !c.fieldh || !c.fieldh_all || !c.statich || !c.clsid ||
	    (!c.own_parent && !h->root_parent) ||
	    !c.sig || !c.group || !c.rootlabel || !c.rooth || !c.classof_obj || !c.anchor || !stack)
		goto out;
	/* the names' hashes once, not once per reference */
	nfields = 0;
	for (uint32_t i = 0; i < h->nclasses; i++) {
		c.fieldh[i] = c.fieldh_all + nfields;
		for (uint32_t f = 0; f < h->classes[i].nfields; f++)
			c.fieldh_all[nfields++] = hstr(h->classes[i].fields[f].name);
	}
	for (uint32_t i = 0; i < h->nstatics; i++)
		c.statich[i] = hstr(h->statics[i].name);
	memset(c.group, 0xff, ((size_t)n + 1) * sizeof(*c.group));
	for (uint32_t i = 0; i < h->nclasses; i++) {
		c.clsh[i] = hstr(h->classes[i].name);
		c.clsid[i] = intern(g, h->classes[i].name);
		c.anchor[i] = !heapgrowth_internal(h->classes[i].name);
		if (c.clsid[i] == UINT32_MAX)
			goto out;
	}
	memset(c.rootlabel, 0xff, ((size_t)n + 1) * sizeof(*c.rootlabel));
	memset(c.classof_obj, 0xff, ((size_t)n + 1) * sizeof(*c.classof_obj));
	for (uint32_t i = 0; i < h->nclasses; i++)
		if (h->classes[i].obj != DSL_NOOBJ)
			c.classof_obj[h->classes[i].obj] = i;
	/* else: the owner of the reference root_via names (one pass over every
	 * object's references) */
	for (uint32_t o = 0; o < n && c.own_parent; o++) {
		const struct dsl_hobject *x = &h->objects[o];
		uint32_t cr = dsl_heap_cref(h, o);

		if (cr != DSL_NOOBJ && h->root_via[cr] == h->nrefs + o) /* implied CLASS */
			c.own_parent[cr] = o;
		for (uint32_t j = 0; j < x->nrefs; j++) {
			uint32_t ri = x->ref_first + j;

			if (h->root_via[h->refs[ri].to] == ri)
				c.own_parent[h->refs[ri].to] = o;
		}
	}
	c.parent = c.own_parent ? c.own_parent : h->root_parent;
	/* (the stack's words as the candidates' flags: a byte an object) */
	memset(stack, 0, ((size_t)n + 1) * sizeof(*stack));
	util_phase("growth: names and parents");
	err = aliases(&c, (uint8_t *)stack);
	util_phase("growth: roots only locals hold (aliases)");
	if (!err)
		err = root_labels(g, &c);
	for (uint32_t o = 0; o < n && !err; o++)
		if (!c.sig[o] && h->root_via[o] != DSL_VIA_NONE)
			err = place(g, &c, o, stack);
	if (err)
		goto out;
	/* the places' counts in this snapshot */
	for (uint32_t o = 0; o < n; o++) {
		int32_t gi = c.group[o];

		if (gi < 0)
			continue;
		g->g[gi].count[k]++;
		g->g[gi].bytes[k] += h->objects[o].size;
		if (h->retained && h->retained[o] != DSL_NORETAINED)
			g->g[gi].retained[k] += h->retained[o];
		g->g[gi].last_obj = o;
	}
	g->t[k] = t;
	g->gcs[k] = gcs;
	g->nsnaps++;
	free(g->last_group);
	g->last_group = c.group;
	g->last_n = n;
	c.group = NULL;
	err = 0;
out:
	free(stack);
	snap_free(&c);
	return err;
}

/* ---- the ranking ---- */

static int64_t parent_group(const struct heapgrowth *g, const struct group *gr)
{
	return gr->parent ? group_of((struct heapgrowth *)g, gr->parent, false) : -1;
}

static bool singleton(const struct heapgrowth *g, const struct group *gr)
{
	for (uint32_t k = 0; k < g->nsnaps; k++)
		if (gr->count[k] != 1)
			return false;
	return true;
}

/* The holder of growing group @i: its growing parent's holder, else the
 * parent climbed up through the JDK's singleton objects. */
static int32_t holder_of(struct heapgrowth *g, int64_t i, int depth)
{
	struct group *gr = &g->g[i];
	int64_t p = parent_group(g, gr), pp;

	if (gr->holder >= 0)
		return gr->holder;
	if (p < 0) {
		gr->holder = (int32_t)i; /* a root's own place */
		return gr->holder;
	}
	if (g->g[p].growing && depth < 4096) {
		gr->holder = holder_of(g, p, depth + 1);
		return gr->holder;
	}
	while ((pp = parent_group(g, &g->g[p])) >= 0 && singleton(g, &g->g[pp]) &&
	       singleton(g, &g->g[p]) && !g->g[pp].classobj &&
	       heapgrowth_internal(g->strs[g->g[pp].cls]))
		p = pp; /* a root itself may hold it (a local variable's list) */
	gr->holder = (int32_t)p;
	return gr->holder;
}

/* The text of the places from the root to group @i; a class object on the
 * way starts it ("class Foo -> static Foo.BAR -> ..."): how the class itself
 * is reached (through another class's static, its loader) is not the
 * holder's story. */
static char *path_text(const struct heapgrowth *g, int64_t i, int64_t stop)
{
	int64_t chain[256];
	size_t n = 0, len = 32;
	char *s;

	for (int64_t x = i; x >= 0 && x != stop && n < 256; x = parent_group(g, &g->g[x])) {
		chain[n++] = x;
		if (g->g[x].classobj && x != i)
			break;
	}
	for (size_t k = 0; k < n; k++)
		len += strlen(g->strs[g->g[chain[k]].label]) + strlen(g->strs[g->g[chain[k]].cls]) +
		       (g->g[chain[k]].classobj ? strlen(g->strs[g->g[chain[k]].mirror_of]) : 0) + 16;
	s = malloc(len);
	if (!s)
		return NULL;
	s[0] = '\0';
	for (size_t k = n; k-- > 0;) {
		const struct group *gr = &g->g[chain[k]];

		if (k != n - 1)
			strcat(s, " -> ");
		if (k == n - 1 && gr->classobj && k) { /* the class the path starts at */
			strcat(s, "class ");
			strcat(s, g->strs[gr->mirror_of]);
			continue;
		}
		strcat(s, g->strs[gr->label]);
		if (!k && !gr->root) { /* the last: its class (a root's label has it) */
			strcat(s, " (");
			strcat(s, g->strs[gr->cls]);
			strcat(s, ")");
		}
	}
	return s;
}

static int by_growth(const void *a, const void *b)
{
	const struct heapgrowth_holder *x = a, *y = b;

	return x->growth < y->growth ? 1 : x->growth > y->growth ? -1 : strcmp(x->path, y->path);
}

static int class_by_growth(const void *a, const void *b)
{
	const struct heapgrowth_class *x = a, *y = b;

	return x->growth < y->growth ? 1 : x->growth > y->growth ? -1 : strcmp(x->name, y->name);
}

int heapgrowth_rank(struct heapgrowth *g, const struct heapgrowth_opts *o,
		    struct heapgrowth_result *r)
{
	uint64_t min = o && o->min_growth ? o->min_growth : MIN_GROWTH;
	uint32_t K = g->nsnaps;
	int32_t *hidx = NULL;
	double chance = 1;

	memset(r, 0, sizeof(*r));
	free_result(g);
	if (K < 2)
		return -EINVAL;
	for (uint32_t k = 2; k <= K; k++)
		chance /= k;
	for (size_t i = 0; i < g->n; i++) {
		struct group *gr = &g->g[i];
		bool up = gr->count[K - 1] >= gr->count[0] + min;

		for (uint32_t k = 1; k < K && up; k++)
			up = gr->count[k] > gr->count[k - 1];
		gr->growing = up;
		gr->holder = -1;
		gr->result = -1;
		r->growing_groups += up;
	}
	hidx = util_big_alloc((size_t)g->n + 1, sizeof(*hidx));
	if (!hidx)
		return -ENOMEM;
	memset(hidx, 0xff, (g->n + 1) * sizeof(*hidx));
	for (size_t i = 0; i < g->n; i++) {
		struct group *gr = &g->g[i];
		struct heapgrowth_holder *h;
		struct heapgrowth_class *c;
		int32_t hi;

		if (!gr->growing)
			continue;
		hi = holder_of(g, (int64_t)i, 0);
		if (hidx[hi] < 0) {
			struct heapgrowth_holder *nh = realloc(g->h, (g->nh + 1) * sizeof(*nh));

			if (!nh)
				goto nomem;
			g->h = nh;
			h = &g->h[g->nh];
			memset(h, 0, sizeof(*h));
			h->path = NULL;
			h->cls = g->strs[g->g[hi].cls];
			h->one_object = singleton(g, &g->g[hi]);
			for (uint32_t k = 0; k < K; k++)
				h->retained[k] = h->one_object ? g->g[hi].retained[k] : 0;
			h->intervals = K - 1;
			h->chance = chance;
			h->holder_obj = h->one_object ? g->g[hi].last_obj : DSL_NOOBJ;
			h->sample_obj = gr->last_obj;
			h->group = hi;
			hidx[hi] = (int32_t)g->nh++;
		}
		h = &g->h[hidx[hi]];
		c = realloc(h->classes, (h->nclasses + 1) * sizeof(*c));
		if (!c)
			goto nomem;
		h->classes = c;
		c = &c[h->nclasses++];
		memset(c, 0, sizeof(*c));
		c->name = g->strs[gr->cls];
		c->growth = (int64_t)gr->count[K - 1] - (int64_t)gr->count[0];
		c->bytes = (int64_t)gr->bytes[K - 1] - (int64_t)gr->bytes[0];
		memcpy(c->count, gr->count, sizeof(c->count));
		c->place = g->strs[gr->label];
		h->growth += c->growth;
		h->bytes += c->bytes;
		for (uint32_t k = 0; k < K; k++)
			h->count[k] += gr->count[k];
	}
	/* paths; classes of one name at several places summed */
	for (size_t i = 0; i < g->n; i++) {
		struct heapgrowth_holder *h;

		if (hidx[i] < 0)
			continue;
		h = &g->h[hidx[i]];
		h->path = path_text(g, (int64_t)i, -1);
		if (!h->path)
			goto nomem;
		qsort(h->classes, h->nclasses, sizeof(*h->classes), class_by_growth);
	}
	qsort(g->h, g->nh, sizeof(*g->h), by_growth);
	/* each growing place's holder's index in the sorted result */
	for (uint32_t j = 0; j < g->nh; j++)
		hidx[g->h[j].group] = (int32_t)j;
	for (size_t i = 0; i < g->n; i++)
		if (g->g[i].growing)
			g->g[i].result = hidx[g->g[i].holder];
	free(hidx);
	r->holders = g->h;
	r->nholders = g->nh;
	r->nsnaps = K;
	memcpy(r->t, g->t, sizeof(r->t));
	memcpy(r->gcs, g->gcs, sizeof(r->gcs));
	r->groups = g->n;
	return 0;
nomem:
	free(hidx);
	free_result(g);
	return -ENOMEM;
}

int heapgrowth_holder_of(const struct heapgrowth *g, uint32_t obj)
{
	int64_t gi;

	if (!g->last_group || obj >= g->last_n || (gi = g->last_group[obj]) < 0)
		return -1;
	return !g->g[gi].growing ? -1 : g->g[gi].result;
}
