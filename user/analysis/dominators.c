// SPDX-License-Identifier: GPL-2.0
/*
 * dominators.c - the dominator tree and retained sizes (see dominators.h).
 *
 * Everything below works on DFS numbers: 0 is the virtual root, 1 .. N-1 the
 * objects in the preorder of a depth-first search from the roots (in heap
 * order).
 *
 *  1. DFS (iterative, an explicit stack): number the objects, record each
 *     one's DFS parent, and keep only the edges that are not tree edges
 *     (v, w) - on a heap most edges are: each vertex but the first has one.
 *     The graph's edges (dominators.h) depend on what the references reach:
 *     first the search assumes every class a loader defined is reached by
 *     references too and no CLASS reference holds (a JVM's heap), follows
 *     every loader edge and checks both assumptions on the way
 *     (loaders_follow_refs(), classes_reached()). Neither holds on a real
 *     server's heap (Tomcat on JDK 17: array classes of the common loader
 *     nothing refers to; reflection accessor classes, each defined by a
 *     loader only that class holds, the class only by its instances). Then
 *     what every reference reaches comes from what the search knows (what
 *     it reached without a loader edge, what has evidence) and a walk from
 *     the rest (reach_rest()); when no object the search reached below one
 *     references do not reach is reached by references, what it reached
 *     but those is what the graph without CLASS references reaches
 *     (reached_but_any()), and the graph's search is the first one mended
 *     (splice(): the subtrees no reference reaches dropped, what only CLASS
 *     references reach searched from where a new search would meet it,
 *     taking along what the first search met only later (move_vertex():
 *     JDK 17's reflection accessors hold such objects); on Tomcat's heap
 *     on JDK 25, 3.9 M objects: 21 dropped, the tree 358 -> 254 ms; on JDK
 *     17, 4.7 M objects: 590 added, 8 moved, 21 dropped, 447 -> 310 ms)
 *     or, where that would not be the graph's search (a CLASS reference
 *     not an object's first), one more search (on Tomcat's heap of 20 M
 *     objects: 1.1 s instead of 4.3 s for a walk and two searches).
 *     Otherwise two searches as dominators.h says (what the graph without
 *     CLASS references reaches, then the graph).
 *  2. The kept edges and one from the virtual root to each heap root, by
 *     target (a counting sort), so each vertex's predecessors are read in
 *     turn.
 *  3. Semidominators, from N-1 down to 1: semi(w) is the smallest of its
 *     DFS parent and, over w's predecessors v, v itself if v < w, else
 *     semi(label) of eval(v) - the smallest semi on v's path up the forest
 *     of the processed (higher-numbered) vertices, with path compression.
 *     The forest is implicit: a vertex numbered above w counts as linked to
 *     its parent.
 *  4. idom(w), from 2 up: start at the DFS parent and climb idom links
 *     while above semi(w) (the nearest common ancestor of the two, since
 *     the parent's idom chain is final by then).
 *  5. Retained sizes: each vertex's shallow size added to its idom's from
 *     N-1 down to 1 (a dominator has a smaller DFS number).
 *
 * Memory: 20 bytes per object - the 12 of the result (d->idom, d->retained)
 * and two arrays, each reused between steps - plus 12 bytes per kept edge
 * while they are sorted (8 for the edge, 4 for the predecessor list) and
 * 5 bits per object of bitmaps; the two stacks hold what the deepest
 * search path needs (pages never touched cost nothing). Fresh memory is
 * what a computation on a heap of millions pays most for (the kernel zeroes
 * each page at its first touch). By step (n objects, the others by DFS
 * number):
 *
 *   array          1.                2.-4.                 5.
 *   num  [n]       DFS number        DFS number            d->idom
 *   anc  [n+1]     DFS parent        forest link           the object
 *   idom [n+2]     kept edges into   predecessors' start,  idom
 *                  each              then parent, idom
 *   sl  [2n+2]     queue (the        semi, label           d->retained
 *                  checks, reach_rest())
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>

#include "analysis/dominators.h"
#include "lib/util.h"

static bool bit(const uint64_t *b, uint32_t o)
{
	return (b[o >> 6] >> (o & 63)) & 1;
}

static void set_bit(uint64_t *b, uint32_t o)
{
	b[o >> 6] |= 1ull << (o & 63);
}

/* A DFS frame: object @obj (DFS number @v), its implied CLASS reference's
 * target @cref first (DSL_NOOBJ: none, or met), its references refs[cur ..
 * end), then (kids set) its classes as a loader, lkid[cur .. end). */
struct dfs_frame {
	uint32_t obj, v, cur, end;
	uint32_t kids, cref;
};

/* A kept edge of the search: from DFS number @from to DFS number @to. */
struct dom_edge {
	uint32_t to, from;
};

/* A loader's edge to a class it defined (both objects). */
struct lkid {
	uint32_t loader, cls;
};

/* The computation's state (see the table above). */
struct dom_work {
	const struct dsl_heap *h;
	uint32_t n, N;           /* objects; vertices numbered so far + 1 */
	uint32_t *num;           /* d->idom's array */
	uint32_t *anc, *idom, *sl;
	struct dfs_frame *stack; /* [n + 1] */
	struct dom_edge *e;      /* kept edges */
	size_t ne, cap_e;
	size_t acct_e;           /* ... of them counted in bytes (as they are written) */
	struct lkid *lk;         /* loader edges, by loader object then class */
	uint32_t nlk;
	size_t words;            /* of a bitmap per object */
	uint64_t *is_loader;     /* a loader with an edge in lk */
	/* the first search's checks: a bit per object */
	bool optimistic;
	uint64_t *lt;            /* its tree path from a root takes a loader edge */
	uint64_t *evid;          /* a reference from an object not in lt leads to it */
	uint64_t *cref;          /* a CLASS reference led to it before it was reached */
	uint32_t nlt;            /* objects in lt */
	const uint64_t *by_class; /* the last search's: CLASS references to these hold */
	uint32_t depth;          /* the deepest DFS stack */
	uint32_t searches;       /* DFS over the whole graph run */
	uint32_t mend_added;     /* vertices splice() added to a search */
	uint32_t mend_moved;     /* ... moved in it */
	uint32_t mend_dropped;   /* ... and dropped from it */
	uint32_t mend_quick;     /* MT_DOM_QUICK_*: the short ways splice() took */
	/* splice(): a search's vertices numbered from first_new on; one it
	 * meets numbered above limit (and below first_new) is moved into it:
	 * its old number in moved, its new one at s->sl[old] until renumbered */
	uint32_t limit, first_new;
	uint64_t *moved;
	uint32_t nmoved;
	uint64_t bytes, peak;    /* held now, at most */
};

static void acct(struct dom_work *s, int64_t bytes)
{
	s->bytes += (uint64_t)bytes;
	if (s->bytes > s->peak)
		s->peak = s->bytes;
}

void dominators_free(struct mt_domtree *d)
{
	free(d->idom);
	free(d->retained);
	memset(d, 0, sizeof(*d));
}

/* eval(v): the vertex of smallest semi on v's path to the root of its tree in
 * the forest of vertices >= last, compressing the path (stack: scratch). */
static uint32_t eval(uint32_t v, uint32_t last, uint32_t *anc, uint32_t *label,
		     const uint32_t *semi, uint32_t *stack, uint32_t *depth)
{
	uint32_t sp = 0, p, plabel;

	if (anc[v] < last)
		return label[v];
	do { /* every vertex whose link leads to a linked vertex */
		stack[sp++] = v;
		v = anc[v];
	} while (anc[v] >= last);
	if (sp > *depth)
		*depth = sp;
	/* v: the topmost linked vertex; its link is the tree's root */
	p = v;
	plabel = label[p];
	while (sp) {
		uint32_t x = stack[--sp];

		anc[x] = anc[p];
		if (semi[plabel] < semi[label[x]])
			label[x] = plabel;
		else
			plabel = label[x];
		p = x;
	}
	return label[p];
}

static int by_loader(const void *a, const void *b)
{
	const struct lkid *x = a, *y = b;

	if (x->loader != y->loader)
		return x->loader < y->loader ? -1 : 1;
	return x->cls < y->cls ? -1 : x->cls > y->cls;
}

/* The loaders' edges into s->lk: to every class with a loader, or (@any not
 * NULL) only to those in @any. Returns 0 or -ENOMEM. */
static int loader_edges(struct dom_work *s, const uint64_t *any)
{
	const struct dsl_heap *h = s->h;

	s->nlk = 0;
	memset(s->is_loader, 0, s->words * sizeof(*s->is_loader));
	if (!s->lk) {
		s->lk = malloc(((size_t)h->nclasses + 1) * sizeof(*s->lk));
		if (!s->lk)
			return -ENOMEM;
		acct(s, ((int64_t)h->nclasses + 1) * (int64_t)sizeof(*s->lk));
	}
	for (uint32_t c = 0; c < h->nclasses; c++) {
		const struct dsl_hclass *k = &h->classes[c];
		uint32_t lo;

		if (k->obj == DSL_NOOBJ || k->loader == DSL_NOOBJ ||
		    (lo = h->loaders[k->loader].obj) == DSL_NOOBJ || (any && !bit(any, k->obj)))
			continue;
		s->lk[s->nlk++] = (struct lkid){ lo, k->obj };
		set_bit(s->is_loader, lo);
	}
	qsort(s->lk, s->nlk, sizeof(*s->lk), by_loader);
	return 0;
}

/* Numbers past the objects' a splice may give the vertices it moves (each
 * keeps its old one until the numbers are made again): anc, idom and sl are
 * that much longer, pages never touched unless used. More: -EAGAIN. */
#define MOVE_ROOM(n) (4096 + (size_t)(n) / 64)

/* The entries of the per-object arrays dominators_compute() takes first,
 * each of 4 bytes: d->idom, anc, idom, sl. */
enum { DOM_NUM, DOM_ANC, DOM_IDOM, DOM_SL, DOM_ARRAYS };

static void dom_lens(uint32_t n, size_t len[DOM_ARRAYS])
{
	size_t n1 = (size_t)n + 1;

	len[DOM_NUM] = n1;
	len[DOM_ANC] = n1 + MOVE_ROOM(n);
	len[DOM_IDOM] = n1 + 1 + MOVE_ROOM(n);
	len[DOM_SL] = 2 * n1 + MOVE_ROOM(n);
}

size_t dominators_prewarm_bytes(uint32_t n)
{
	size_t len[DOM_ARRAYS];

	dom_lens(n, len);
	/* and malloc's headers */
	return len[DOM_NUM] * 4 + 64 + len[DOM_IDOM] * 4 + 64;
}

/* From this many objects on, with two CPUs, a thread of the computation's
 * own faults anc and sl in while the search runs (fault_behind()). */
#define BEHIND_MIN 1000000u

/* What fault_behind()'s thread faults in, in order. */
struct behind {
	void *p[2];
	size_t bytes[2];
};

static void *behind_run(void *arg)
{
	struct behind *b = arg;

	for (int i = 0; i < 2; i++)
		util_populate(b->p[i], b->bytes[i]);
	return NULL;
}

/*
 * Fault in anc (the search writes it in DFS order, from its start) and then
 * sl (first used after the search) in a thread while the search runs: on a
 * heap of millions of objects the search keeps one CPU and the other is
 * idle, where faulting them in ahead (heap/snaptake.c's prewarm(), which
 * now covers d->idom and idom only, dominators_prewarm_bytes()) took the
 * CPU the frozen copy's two threads need while it writes its records (10 M
 * objects: 12 bytes an object, ~30 k page faults, ~36 ms of CPU on this
 * VM). Populating changes no byte, so the search may touch the same pages
 * meanwhile. True when the thread runs (the caller joins it).
 */
static bool fault_behind(struct dom_work *s, const size_t len[DOM_ARRAYS], struct behind *b,
			 pthread_t *t)
{
	if (s->n < BEHIND_MIN || util_cpus() < 2)
		return false;
	*b = (struct behind){ .p = { s->anc, s->sl },
			      .bytes = { len[DOM_ANC] * 4, len[DOM_SL] * 4 } };
	return !pthread_create(t, NULL, behind_run, b);
}

/* Kept edges counted in s->bytes as they are written, this many at a time
 * (the array is reserved for them all at the start, dominators_compute()). */
#define ACCT_EDGES (1u << 18)

/* Keep the edge @from -> @to (DFS numbers). Returns 0 or -ENOMEM. */
static int keep_edge(struct dom_work *s, uint32_t to, uint32_t from)
{
	if (s->ne == s->cap_e) {
		size_t cap = s->cap_e ? 2 * s->cap_e : 4096 + s->n / 16;
		struct dom_edge *e = realloc(s->e, cap * sizeof(*e));

		if (!e)
			return -ENOMEM;
		util_hugepages(e, cap * sizeof(*e));
		s->e = e;
		s->cap_e = cap;
	}
	if (s->ne == s->acct_e) {
		acct(s, (int64_t)(ACCT_EDGES * sizeof(*s->e)));
		s->acct_e += ACCT_EDGES;
	}
	s->e[s->ne++] = (struct dom_edge){ to, from };
	s->idom[to]++;
	return 0;
}

/* The optimistic search's bookkeeping of a reference from @o to @w (@edge:
 * one the search follows, else a CLASS reference), before it is followed. */
static inline __attribute__((always_inline)) void note_ref(struct dom_work *s, uint32_t o,
							   uint32_t w, bool edge)
{
	bool reached = s->num[w] != 0;

	if (!bit(s->lt, o) && (reached ? bit(s->lt, w) : !edge))
		set_bit(s->evid, w);
	if (!edge && !reached)
		set_bit(s->cref, w);
}

/* Start a frame for object @w, numbered now, its DFS parent @parent. */
static inline __attribute__((always_inline)) void push(struct dom_work *s, uint32_t *sp,
						       uint32_t w, uint32_t parent)
{
	const uint32_t *runs = s->h->ref_runs;
	const struct dsl_hobject *x = &s->h->objects[w];
	uint32_t v = s->N++;

	s->num[w] = v;
	s->anc[v] = parent;
	if (runs) /* 4 bytes an object, not 32: more of them in the cache */
		s->stack[(*sp)++] = (struct dfs_frame){ w, v, runs[w], runs[w + 1], 0,
							dsl_heap_cref(s->h, w) };
	else
		s->stack[(*sp)++] = (struct dfs_frame){ w, v, x->ref_first,
							x->ref_first + x->nrefs, 0,
							dsl_heap_cref(s->h, w) };
	if (*sp > s->depth)
		s->depth = *sp;
}

/* The loader edges of object @o, lk[*lo .. *hi). */
static void kids_of(const struct dom_work *s, uint32_t o, uint32_t *lo, uint32_t *hi)
{
	uint32_t a = 0, b = s->nlk;

	while (a < b) { /* the first edge of loader o */
		uint32_t m = a + (b - a) / 2;

		if (s->lk[m].loader < o)
			a = m + 1;
		else
			b = m;
	}
	*lo = a;
	while (a < s->nlk && s->lk[a].loader == o)
		a++;
	*hi = a;
}

/* A splice's search (splice()) meets @w, which the old search numbered
 * after the splice's point: a new search would have met it here first. Its
 * old number goes (s->moved, its new one in s->sl), and the old search's
 * tree edge to it, from a parent that stays, becomes a kept edge. Returns 0,
 * -ENOMEM or -EAGAIN (more moved than MOVE_ROOM()). */
static int move_vertex(struct dom_work *s, uint32_t w)
{
	uint32_t old = s->num[w], p = s->anc[old];

	if (++s->nmoved > MOVE_ROOM(s->n))
		return -EAGAIN; /* search again */
	set_bit(s->moved, old);
	s->sl[old] = s->N; /* push() numbers it next */
	if (p && !bit(s->moved, p))
		return keep_edge(s, s->N, p);
	return 0;
}

/* The DFS from object @start, numbered now below DFS number @parent (0: a
 * root's search), over what is not numbered yet: numbers, parents, kept
 * edges; the graph: references but CLASS ones (those to an object of
 * s->by_class hold), and the loader edges in s->lk. A splice's search
 * (s->limit, see splice()) takes as its own what an earlier search numbered
 * after @limit (move_vertex()). Returns 0 or -ENOMEM (a splice's search:
 * or -EAGAIN). */
static int dfs_from(struct dom_work *s, uint32_t start, uint32_t parent)
{
	const struct dsl_heap *h = s->h;
	uint32_t sp = 0;

	push(s, &sp, start, parent);
	while (sp) {
		struct dfs_frame *f = &s->stack[sp - 1];
		bool loader = f->kids;
		uint32_t w, o = f->obj, v = f->v;

		if (f->cref != DSL_NOOBJ) { /* implied: first, where a record's would be */
			w = f->cref;
			f->cref = DSL_NOOBJ;
			if (!(s->by_class && bit(s->by_class, w))) {
				if (s->optimistic)
					note_ref(s, o, w, false);
				continue;
			}
		} else if (f->cur == f->end) {
			if (!f->kids && bit(s->is_loader, o)) {
				kids_of(s, o, &f->cur, &f->end);
				f->kids = 1;
				continue;
			}
			sp--;
			continue;
		} else if (loader) {
			w = s->lk[f->cur++].cls;
		} else {
			const struct dsl_href *r = &h->refs[f->cur++];

			/* two references ahead: their target's number and object
			 * (each a cache miss on a heap not laid out in the
			 * search's order: Tomcat's dominator tree 10-15% faster,
			 * FreezeWorkload's unchanged) */
			if (f->cur + 2 < f->end) {
				uint32_t a = h->refs[f->cur + 2].to;

				__builtin_prefetch(&s->num[a]);
				__builtin_prefetch(h->ref_runs ? (const void *)&h->ref_runs[a] :
								 (const void *)&h->objects[a]);
				if (h->class_ref && h->ref_runs) /* its class, for its CLASS one */
					__builtin_prefetch(&h->objects[a]);
			}
			w = r->to;
			if (r->kind == DSL_REF_CLASS && !(s->by_class && bit(s->by_class, w))) {
				if (s->optimistic)
					note_ref(s, o, w, false);
				continue;
			}
		}
		if (s->optimistic && !loader)
			note_ref(s, o, w, true);
		bool moving = s->limit && s->num[w] > s->limit && s->num[w] < s->first_new;

		if (moving) {
			int err = move_vertex(s, w);

			if (err)
				return err;
		}
		if (!s->num[w] || moving) {
			if (s->optimistic && (loader || bit(s->lt, o))) {
				set_bit(s->lt, w);
				s->nlt++;
			}
			push(s, &sp, w, v);
		} else if (s->num[w] != v) {
			if (keep_edge(s, s->num[w], v))
				return -ENOMEM;
		}
	}
	return 0;
}

/* The DFS from every root (step 1). Returns 0 or -ENOMEM. */
static int dfs(struct dom_work *s)
{
	const struct dsl_heap *h = s->h;
	int err = 0;

	s->N = 1;
	s->anc[0] = 0;
	s->searches++;
	for (uint32_t i = 0; i < h->nroots && !err; i++)
		if (!s->num[h->roots[i].obj])
			err = dfs_from(s, h->roots[i].obj, 0);
	return err;
}

/* Did every CLASS reference the optimistic search met lead to an object it
 * reached (none holds)? */
static bool classes_reached(const struct dom_work *s)
{
	for (size_t i = 0; i < s->words; i++)
		for (uint64_t b = s->cref[i]; b; b &= b - 1)
			if (!s->num[i * 64 + (uint32_t)__builtin_ctzll(b)])
				return false;
	return true;
}

/* Did the optimistic search's loader edges lead only where references lead?
 * Yes if every object reached over a loader edge has a chain of references
 * (CLASS ones too) from a root: the roots and the objects with evidence (a
 * reference from an object whose tree path has no loader edge), then what
 * references lead to from those. @queue: n entries. */
static bool loaders_follow_refs(struct dom_work *s, uint32_t *queue)
{
	const struct dsl_heap *h = s->h;
	uint32_t head = 0, tail = 0;

	if (!s->nlt)
		return true;
	for (uint32_t i = 0; i < h->nroots; i++)
		set_bit(s->evid, h->roots[i].obj);
	/* evid: known to have a chain of references from a root */
	for (size_t i = 0; i < s->words; i++)
		for (uint64_t b = s->lt[i] & s->evid[i]; b; b &= b - 1)
			queue[tail++] = (uint32_t)(i * 64) + (uint32_t)__builtin_ctzll(b);
	while (head < tail) {
		uint32_t o = queue[head++], c = dsl_heap_cref(h, o);
		const struct dsl_hobject *x = &h->objects[o];
		const struct dsl_href *r = &h->refs[x->ref_first], *e = r + x->nrefs;

		if (c != DSL_NOOBJ && bit(s->lt, c) && !bit(s->evid, c)) { /* implied CLASS */
			set_bit(s->evid, c);
			queue[tail++] = c;
		}
		for (; r < e; r++)
			if (bit(s->lt, r->to) && !bit(s->evid, r->to)) {
				set_bit(s->evid, r->to);
				queue[tail++] = r->to;
			}
	}
	return tail == s->nlt;
}

/* Forget a search: its numbers, counts and kept edges. */
static void dfs_reset(struct dom_work *s)
{
	memset(s->num, 0, (size_t)s->n * sizeof(*s->num));
	memset(s->idom, 0, ((size_t)s->N + 1) * sizeof(*s->idom));
	s->ne = 0;
}

/* After a failed optimistic search: what every reference reaches, a bit per
 * object into @any (zeroed by the caller), from what the search knows - the
 * objects it reached without a loader edge, those with evidence (after
 * loaders_follow_refs()) - and then a walk from the objects with evidence
 * it did not reach or reached over a loader edge (what they reference may
 * be new). @queue: n entries. */
static void reach_rest(struct dom_work *s, uint64_t *any, uint32_t *queue)
{
	const struct dsl_heap *h = s->h;
	uint32_t head = 0, tail = 0;

	for (uint32_t o = 0; o < s->n; o++)
		if ((s->num[o] && !bit(s->lt, o)) || bit(s->evid, o)) {
			set_bit(any, o);
			if (!s->num[o] || bit(s->lt, o))
				queue[tail++] = o;
		}
	while (head < tail) {
		uint32_t o = queue[head++], c = dsl_heap_cref(h, o);
		const struct dsl_hobject *x = &h->objects[o];
		const struct dsl_href *r = &h->refs[x->ref_first], *e = r + x->nrefs;

		if (c != DSL_NOOBJ && !bit(any, c)) { /* implied CLASS */
			set_bit(any, c);
			queue[tail++] = c;
		}
		for (; r < e; r++)
			if (!bit(any, r->to)) {
				set_bit(any, r->to);
				queue[tail++] = r->to;
			}
	}
}

/* After a failed optimistic search, with @any (what every reference
 * reaches): did it reach what the graph without CLASS references reaches,
 * but the objects not in @any? Yes if no object it reached below one not in
 * @any in its tree is in @any (those are the only ones whose path from a
 * root needed a loader edge @any does not keep). @dead: a zeroed bitmap. */
static bool reached_but_any(struct dom_work *s, const uint64_t *any, uint64_t *dead)
{
	bool none = true;

	for (uint32_t o = 0; o < s->n; o++)
		if (s->num[o] && !bit(any, o)) {
			set_bit(dead, s->num[o]);
			none = false;
		}
	if (none)
		return true;
	for (uint32_t v = 2; v < s->N; v++) /* a DFS parent has a smaller number */
		if (bit(dead, s->anc[v]))
			set_bit(dead, v);
	for (uint32_t o = 0; o < s->n; o++)
		if (s->num[o] && bit(dead, s->num[o]) && bit(any, o))
			return false;
	return true;
}

/* A CLASS reference, from the object of DFS number @x, its @k-th, to object
 * @to that only CLASS references reach (splice()). */
struct held_ref {
	uint32_t x, k, to;
};

static int by_x(const void *a, const void *b)
{
	const struct held_ref *p = a, *q = b;

	if (p->x != q->x)
		return p->x < q->x ? -1 : 1;
	return p->k < q->k ? -1 : p->k > q->k;
}

/* Of a failed optimistic search, the CLASS references from what it reached
 * (not @dead) to objects in @any it did not reach, in search order, into
 * *@out (the caller frees it); *@skipped: no object could be one's target,
 * none looked for. Returns their number, or -ENOMEM. */
static ssize_t held_refs(const struct dom_work *s, const uint64_t *any, const uint64_t *dead,
			 struct held_ref **out, bool *skipped)
{
	const struct dsl_heap *h = s->h;
	struct held_ref *v = NULL;
	size_t n = 0, cap = 0;
	uint64_t both = 0;

	/* no object both held and in @any: no reference to find (Tomcat on JDK
	 * 25, 8.8 M objects: a 35-40 ms pass over every reference saved) */
	for (size_t i = 0; i < s->words; i++)
		both |= s->by_class[i] & any[i];
	*out = NULL;
	*skipped = !both;
	if (!both)
		return 0;
	for (uint32_t o = 0; o < s->n; o++) {
		const struct dsl_hobject *x = &h->objects[o];
		uint32_t num = s->num[o];

		if (!num || bit(dead, num))
			continue;
		/* k: the reference's place among the object's, an implied
		 * CLASS one first (k 0, the records' then from 1) */
		uint32_t c = dsl_heap_cref(h, o), k0 = h->class_ref ? 1 : 0;

		for (uint32_t k = c != DSL_NOOBJ ? 0 : k0; k < x->nrefs + k0; k++) {
			const struct dsl_href cr = { .to = c, .index = -1, .kind = DSL_REF_CLASS };
			const struct dsl_href *r = k < k0 ? &cr : &h->refs[x->ref_first + k - k0];

			/* unreached and in @any: s->by_class's (held) and any's */
			if (r->kind != DSL_REF_CLASS || !bit(s->by_class, r->to) || !bit(any, r->to))
				continue;
			if (n == cap) {
				struct held_ref *g = realloc(v, (cap = cap ? 2 * cap : 256) * sizeof(*g));

				if (!g) {
					free(v);
					return -ENOMEM;
				}
				v = g;
			}
			v[n++] = (struct held_ref){ num, k, r->to };
		}
	}
	if (n)
		qsort(v, n, sizeof(*v), by_x);
	*out = v;
	return (ssize_t)n;
}

/*
 * After a failed optimistic search that reached_but_any() accepted: make its
 * result the search of the graph (loader edges only to @any, CLASS
 * references to @held) without searching again, where that is what a new
 * search would find. It differs from the search in (a) the subtrees no
 * reference reaches (@dead, by DFS number), which go, and (b) the objects
 * only CLASS references reach (a class nothing else holds, what only it
 * holds: JDK 17's reflection accessors), which a new search would meet at
 * the first instance of such a class, its CLASS reference its first: their
 * search runs from there (dfs_from()), numbered after the rest for now. A
 * vertex the old search numbered later that it meets would have been its
 * own: it moves there (move_vertex()), with all the old search reached below
 * it (numbered later still, so met and moved too); the old search's edges
 * from its old place go (its new one keeps its own), a tree edge to it from
 * a vertex that stays is a kept edge, and the rest of the old search is
 * what a new one would find without them (each decision it made sees the
 * same numbered vertices, the moved ones among them). An object a search
 * moved had its CLASS reference followed there. Then every number moves:
 * the dead and moved old ones go, each spliced search follows its instance.
 * Tomcat on JDK 17 (4.7 M objects): 590 objects added, 8 moved, 21 gone,
 * the tree 447 -> 310 ms instead of a second search (the first CLASS
 * reference to an accessor class at the search's 58 250th vertex of 4.7 M,
 * its class's statics leading to 8 the search met later).
 * Returns 0, -ENOMEM, or -EAGAIN when a new search must run (the search's
 * state then is for dfs_reset()).
 */
#define FEW_MOVES 4096 /* numbers dropped or searches spliced a splice moves by search */

/* Where the numbers move (renumber_objects()): those above @at by @by. */
struct num_move {
	uint32_t at;
	int32_t by;
};

/*
 * Each object's number through @re (splice()). Where few numbers went (the
 * dead and the moved: @ngone) and few searches were spliced, an old number
 * v only moves by the numbers gone below it and the spliced searches' sizes
 * below it (each hangs after its object), found in a sorted list of those
 * moves instead of a look-up in @re per object (@re is as large as the heap
 * and each look-up a cache miss: Tomcat on JDK 25, 8.8 M objects, 23 dead,
 * 45 -> ~15 ms; on JDK 17, 4.7 M objects, 24 searches spliced, 8 moved, 21
 * dead, 14-15 -> ~4 ms); a new number is looked up. @dead, @moved: by old
 * number; @n1: the first new number. Returns whether it took that short way.
 */
static bool renumber_objects(struct dom_work *s, const uint32_t *re, const uint64_t *dead,
			     const uint64_t *moved, uint32_t ngone, uint32_t n1)
{
	struct num_move mv[FEW_MOVES];
	int32_t below[FEW_MOVES + 1];
	uint32_t nm = 0, ns = 0, nmv = 0, gone[FEW_MOVES];

	for (uint32_t t = n1; t < s->N && ns <= FEW_MOVES; t++) /* the spliced searches' roots */
		ns += s->anc[t] < n1;
	if (ngone + ns > FEW_MOVES) {
		for (uint32_t o = 0; o < s->n; o++)
			if (s->num[o])
				s->num[o] = re[s->num[o]];
		return false;
	}
	for (size_t i = 0; i < s->words; i++) /* ascending */
		for (uint64_t b = dead[i] | moved[i]; b; b &= b - 1)
			gone[nm++] = (uint32_t)(i * 64 + (uint32_t)__builtin_ctzll(b));
	/* merged with the searches (ascending by their objects: splice()'s order) */
	for (uint32_t t = n1, g = 0; t < s->N || g < nm; ) {
		if (t < s->N && (g == nm || s->anc[t] < gone[g])) {
			uint32_t end = t + 1; /* the search from t: to the next root */

			while (end < s->N && s->anc[end] >= n1)
				end++;
			mv[nmv++] = (struct num_move){ s->anc[t], (int32_t)(end - t) };
			t = end;
		} else {
			mv[nmv++] = (struct num_move){ gone[g++], -1 };
		}
	}
	below[0] = 0;
	for (uint32_t k = 0; k < nmv; k++)
		below[k + 1] = below[k] + mv[k].by;
	for (uint32_t o = 0; o < s->n; o++) {
		uint32_t v = s->num[o], lo = 0, hi = nmv;

		if (!v || !nmv)
			continue;
		if (v >= n1) { /* a spliced search's, or moved into one */
			s->num[o] = re[v];
			continue;
		}
		if (bit(dead, v)) {
			s->num[o] = 0;
			continue;
		}
		if (v <= mv[0].at)
			continue; /* nothing moved below it */
		while (lo < hi) { /* the moves below v */
			uint32_t m = (lo + hi) / 2;

			if (mv[m].at < v)
				lo = m + 1;
			else
				hi = m;
		}
		s->num[o] = (uint32_t)((int64_t)v + below[lo]);
	}
	return true;
}

static int splice(struct dom_work *s, const uint64_t *any, const uint64_t *dead,
		  uint64_t *moved, uint32_t nany)
{
	uint32_t N1 = s->N, ndead = 0, next = 1, *re = s->sl;
	uint32_t *anc2 = s->sl + s->n + 1 + MOVE_ROOM(s->n);
	struct held_ref *in = NULL;
	ssize_t ni;
	size_t j, ne = 0;
	int err = -EAGAIN;
	bool skipped, quick;

	for (size_t i = 0; i < s->words; i++)
		ndead += (uint32_t)__builtin_popcountll(dead[i]);
	ni = held_refs(s, any, dead, &in, &skipped);
	if (ni < 0)
		return (int)ni;
	/* in the order a new search meets them: a search from the first one
	 * to each object, a kept edge from the others; an object a search
	 * moved is that search's (its CLASS reference followed there) */
	s->first_new = N1;
	s->moved = moved;
	s->nmoved = 0;
	for (size_t k = 0; k < (size_t)ni; k++) {
		if (bit(moved, in[k].x))
			continue;
		if (s->num[in[k].to]) {
			err = keep_edge(s, s->num[in[k].to], in[k].x);
			if (err)
				goto out;
			err = -EAGAIN;
			continue;
		}
		if (in[k].k)
			goto out; /* a new search would meet it after other references */
		s->limit = in[k].x;
		err = dfs_from(s, in[k].to, in[k].x);
		s->limit = 0;
		if (err)
			goto out;
		err = -EAGAIN;
	}
	if (s->N - N1 != nany - (N1 - 1 - ndead) + s->nmoved)
		goto out; /* objects none of them reached: not this case */
	/* new numbers: the old order without the dead and the moved, each
	 * spliced search after its object (their roots' parents, in order) */
	re[0] = 0;
	for (uint32_t v = 1, t = N1; v < N1; v++) {
		if (bit(dead, v)) {
			re[v] = 0;
			continue;
		}
		if (!bit(moved, v)) /* (moved: re[v] is its new number, for now) */
			re[v] = next++;
		while (t < s->N && s->anc[t] == v) { /* a search from v's reference */
			uint32_t end = t + 1;

			while (end < s->N && s->anc[end] >= N1)
				end++;
			for (; t < end; t++)
				re[t] = next++;
		}
	}
	for (uint32_t v = 1; v < s->N; v++)
		if (re[v] && !(v < N1 && bit(moved, v)))
			anc2[re[v]] = re[s->anc[v]];
	anc2[0] = 0;
	for (size_t i = 0; i < s->words && s->nmoved; i++) /* a moved number: its new one's */
		for (uint64_t b = moved[i]; b; b &= b - 1) {
			uint32_t v = (uint32_t)(i * 64 + (uint32_t)__builtin_ctzll(b));

			re[v] = re[re[v]];
		}
	/* (with the old parents: where the spliced searches hang) */
	quick = renumber_objects(s, re, dead, moved, ndead + s->nmoved, N1);
	memcpy(s->anc, anc2, (size_t)next * sizeof(*s->anc));
	memset(s->idom, 0, ((size_t)s->N + 1) * sizeof(*s->idom));
	for (j = 0; j < s->ne; j++) {
		uint32_t to = re[s->e[j].to], from = re[s->e[j].from];

		/* from or into a dead subtree; from a moved vertex's old place
		 * (its search kept its edges again) */
		if (!to || !from || (s->e[j].from < N1 && bit(moved, s->e[j].from)))
			continue;
		s->e[ne++] = (struct dom_edge){ to, from };
		s->idom[to]++;
	}
	s->ne = ne;
	s->mend_added = s->N - N1 - s->nmoved;
	s->mend_moved = s->nmoved;
	s->mend_dropped = ndead;
	s->mend_quick = (skipped ? MT_DOM_QUICK_HELD : 0) | (quick ? MT_DOM_QUICK_RENUMBER : 0);
	s->N = next;
	err = 0;
out:
	s->limit = 0;
	free(in);
	return err;
}

/* Step 1: the DFS over the graph of dominators.h (see the top). @bits: 4
 * bitmaps of s->words. Returns 0 or -ENOMEM. */
static int search(struct dom_work *s, uint64_t *bits)
{
	uint64_t *held = bits, *dead = bits + 2 * s->words, *any = bits + 3 * s->words;
	uint32_t nany = 0, nheld = 0;
	int err;

	s->optimistic = true;
	s->lt = bits;
	s->evid = bits + s->words;
	s->cref = bits + 2 * s->words;
	err = loader_edges(s, NULL);
	if (!err)
		err = dfs(s);
	if (err)
		return err;
	if (loaders_follow_refs(s, s->sl) && classes_reached(s))
		return 0;
	/* what every reference reaches; a loader's edges only there */
	reach_rest(s, any, s->sl);
	s->optimistic = false;
	memset(bits, 0, 3 * s->words * sizeof(*bits));
	for (size_t i = 0; i < s->words; i++)
		nany += (uint32_t)__builtin_popcountll(any[i]);
	if (reached_but_any(s, any, dead)) {
		/* the graph without CLASS references reaches these; a class it
		 * does not is held by its instances */
		for (uint32_t o = 0; o < s->n; o++)
			if (!s->num[o] || !bit(any, o)) {
				set_bit(held, o);
				nheld++;
			}
		if (s->n - nheld == nany && s->N - 1 == nany)
			return 0; /* it followed that graph: no CLASS reference holds */
		err = loader_edges(s, any);
		s->by_class = held;
		if (!err)
			err = splice(s, any, dead, bits + s->words, nany);
		if (err != -EAGAIN)
			return err;
		dfs_reset(s);
		return dfs(s);
	}
	memset(dead, 0, s->words * sizeof(*dead));
	dfs_reset(s);
	err = loader_edges(s, any);
	if (!err)
		err = dfs(s);
	if (err)
		return err;
	if (s->N - 1 == nany)
		return 0; /* no CLASS reference holds: the graph's edges reach as far */
	/* a class nothing else holds is held by its instances */
	for (uint32_t o = 0; o < s->n; o++)
		if (!s->num[o])
			set_bit(held, o);
	dfs_reset(s);
	s->by_class = held;
	return dfs(s);
}

/* Step 2: the kept edges and the virtual root's into predecessor lists:
 * vertex i's at from[idom[i] .. idom[i + 1]). Returns 0 or -ENOMEM. */
static int predecessors(struct dom_work *s, uint32_t **from)
{
	const struct dsl_heap *h = s->h;

	for (uint32_t i = 0; i < h->nroots; i++) {
		uint32_t v = s->num[h->roots[i].obj];

		if (s->anc[v] && keep_edge(s, v, 0)) /* not where a DFS began */
			return -ENOMEM;
	}
	*from = util_big_alloc(s->ne + 1, sizeof(**from));
	if (!*from)
		return -ENOMEM;
	acct(s, (int64_t)((s->ne + 1) * sizeof(**from)));
	for (uint32_t i = 1; i <= s->N; i++)
		s->idom[i] += s->idom[i - 1];
	for (size_t k = 0; k < s->ne; k++)
		(*from)[--s->idom[s->e[k].to]] = s->e[k].from;
	free(s->e);
	acct(s, -(int64_t)(s->acct_e * sizeof(*s->e)));
	s->e = NULL;
	s->cap_e = s->ne = s->acct_e = 0;
	return 0;
}

/* Steps 3 and 4 over predecessor lists @from. Returns 0 or -ENOMEM. */
static int tree(struct dom_work *s, const uint32_t *from)
{
	uint32_t N = s->N, *anc = s->anc, *idom = s->idom, *semi = s->sl, *label = s->sl + s->n + 1;
	uint32_t *stack = util_big_alloc((size_t)N + 1, sizeof(*stack)), depth = 0;
	uint32_t end = idom[N]; /* of vertex i's predecessors: where i + 1's begin */

	if (!stack)
		return -ENOMEM;
	for (uint32_t i = N - 1; i >= 1; i--) {
		uint32_t sd = anc[i], k = idom[i], e = end;

		end = k;
		idom[i] = sd; /* anc[i] is still the DFS parent: i is not linked yet */
		label[i] = i;
		for (; k < e && sd; k++) {
			uint32_t v = from[k], u;

			if (v < i) { /* not processed: its own semi */
				if (v < sd)
					sd = v;
				continue;
			}
			u = eval(v, i + 1, anc, label, semi, stack, &depth);
			if (semi[u] < sd)
				sd = semi[u];
		}
		semi[i] = sd;
	}
	acct(s, (int64_t)depth * 4);
	acct(s, -(int64_t)depth * 4);
	free(stack);
	for (uint32_t i = 2; i < N; i++) {
		uint32_t c = idom[i];

		while (c > semi[i])
			c = idom[c];
		idom[i] = c;
	}
	return 0;
}

/* Step 5: the tree by object and the retained sizes into @d (its retained:
 * s->sl's array). */
static void results(struct dom_work *s, struct mt_domtree *d)
{
	const struct dsl_heap *h = s->h;
	uint32_t *vertex = s->anc, *idom = s->idom;
	uint64_t *out = (uint64_t *)(void *)s->sl;

	for (uint32_t o = 0; o < s->n; o++) {
		uint32_t i = s->num[o];

		out[o] = h->objects[o].size;
		if (i) {
			vertex[i] = o;
		} else {
			d->idom[o] = MT_DOM_UNREACHED;
			out[o] = DSL_NORETAINED;
			d->unreached_bytes += h->objects[o].size;
		}
	}
	/* each vertex's final sum into its idom's, which comes later */
	for (uint32_t i = s->N - 1; i >= 1; i--) {
		uint32_t o = vertex[i], p = idom[i];

		if (p) {
			d->idom[o] = vertex[p];
			out[vertex[p]] += out[o];
		} else {
			d->idom[o] = MT_DOM_ROOT;
			d->reached_bytes += out[o];
		}
	}
	d->retained = out;
	s->sl = NULL;
	d->reached = s->N - 1;
}

int dominators_compute(const struct dsl_heap *h, struct mt_domtree *d)
{
	struct dom_work s = { .h = h, .n = h->nobjects, .words = ((size_t)h->nobjects + 64) / 64 };
	size_t n1 = (size_t)s.n + 1, len[DOM_ARRAYS];
	uint64_t *bits = NULL;
	uint32_t *from = NULL;
	struct behind bh;
	bool behind;
	pthread_t bt;
	int err = -ENOMEM;

	memset(d, 0, sizeof(*d));
	d->n = s.n;
	dom_lens(s.n, len);
	/* the two filled at once first, in what a caller faulted in ahead
	 * (dominators_prewarm_bytes()); anc and sl after, faulted in behind */
	d->idom = util_big_calloc(len[DOM_NUM], sizeof(*d->idom));
	s.idom = util_big_calloc(len[DOM_IDOM], sizeof(*s.idom));
	s.anc = util_big_alloc(len[DOM_ANC], sizeof(*s.anc));
	s.sl = util_big_alloc(len[DOM_SL], sizeof(*s.sl));
	s.stack = util_big_alloc(n1, sizeof(*s.stack));
	/* set at random as the search goes: in 2 MiB pages from 1 MiB on */
	s.is_loader = util_huge_calloc(s.words, sizeof(*s.is_loader));
	bits = util_huge_calloc(4 * s.words, sizeof(*bits));
	/* the kept edges' room for every reference, root and loader edge at
	 * once, in 2 MiB pages, only touched as they come: grown in 4 KiB
	 * pages, Tomcat's 4 M took ~1500 page faults (~10 us each on a PVM
	 * guest); growing again past that stays possible (a search that
	 * follows CLASS references) */
	s.cap_e = (size_t)h->nrefs + h->nroots + (size_t)h->nclasses + 4096;
	s.e = util_big_alloc(s.cap_e, sizeof(*s.e));
	if (!s.e)
		s.cap_e = 0;
	if (!d->idom || !s.anc || !s.idom || !s.sl || !s.stack || !s.is_loader || !bits)
		goto out;
	acct(&s, (int64_t)(n1 * 20 + 4 + 5 * s.words * sizeof(*bits)));
	s.num = d->idom;
	behind = fault_behind(&s, len, &bh, &bt);
	err = search(&s, bits);
	if (behind)
		pthread_join(bt, NULL);
	acct(&s, (int64_t)s.depth * (int64_t)sizeof(*s.stack));
	acct(&s, -(int64_t)s.depth * (int64_t)sizeof(*s.stack));
	free(s.stack);
	s.stack = NULL;
	free(bits);
	bits = NULL;
	acct(&s, -(int64_t)(4 * s.words * sizeof(*bits)));
	if (!err)
		err = predecessors(&s, &from);
	if (!err)
		err = tree(&s, from);
	if (err)
		goto out;
	free(from);
	from = NULL;
	results(&s, d);
	d->peak_bytes = s.peak;
	d->searches = s.searches;
	d->mend_added = s.mend_added;
	d->mend_moved = s.mend_moved;
	d->mend_dropped = s.mend_dropped;
	d->mend_quick = s.mend_quick;
out:
	free(s.anc);
	free(s.idom);
	free(s.sl);
	free(s.stack);
	free(s.is_loader);
	free(s.lk);
	free(s.e);
	free(bits);
	free(from);
	if (err)
		dominators_free(d);
	return err;
}

int dominators_children(const struct mt_domtree *d, struct mt_domkids *k)
{
	uint32_t n = d->n;

	memset(k, 0, sizeof(*k));
	k->first = util_big_calloc((size_t)n + 3, sizeof(*k->first));
	k->kid = util_big_alloc((size_t)d->reached + 1, sizeof(*k->kid));
	if (!k->first || !k->kid) {
		dominators_children_free(k);
		return -ENOMEM;
	}
	k->n = n;
	/* the virtual root is parent n */
	for (uint32_t o = 0; o < n; o++) {
		uint32_t p = d->idom[o];

		if (p == MT_DOM_UNREACHED)
			continue;
		k->first[(p == MT_DOM_ROOT ? n : p) + 1]++;
	}
	for (uint32_t v = 0; v <= n; v++)
		k->first[v + 1] += k->first[v];
	for (uint32_t o = 0; o < n; o++) {
		uint32_t p = d->idom[o];

		if (p == MT_DOM_UNREACHED)
			continue;
		k->kid[k->first[p == MT_DOM_ROOT ? n : p]++] = o;
	}
	for (uint32_t v = n + 1; v > 0; v--)
		k->first[v] = k->first[v - 1];
	k->first[0] = 0;
	return 0;
}

void dominators_children_free(struct mt_domkids *k)
{
	free(k->first);
	free(k->kid);
	memset(k, 0, sizeof(*k));
}

/* A frame of the walk down the dominator tree: object @obj, its children
 * kid[next ..]. */
struct kid_frame {
	uint32_t obj;
	uint32_t next;
};

/* One walker of dominators_by_class(): its own counts per class and stack. */
struct by_walker {
	const struct dsl_heap *h;
	const struct mt_domtree *d;
	const struct mt_domkids *k;
	uint32_t *open;            /* [nclasses]: instances of each on the way down */
	uint64_t *bytes, *count;   /* [nclasses] */
	struct kid_frame *stack;   /* [reached + 2] */
	const struct by_task *task;
	uint32_t ntask, *next;     /* tasks[*next ..] not taken yet (atomic) */
	const uint32_t *path;      /* the tasks' classes above them */
};

/* Subtrees of the dominator tree to walk: those of children kid[lo .. hi)
 * of object @obj (or of the virtual root, d->n), whose classes above them
 * are path[at .. at + len) (@obj's among them). */
struct by_task {
	uint32_t obj, lo, hi;
	uint32_t at, len;
	uint64_t weight;           /* their retained bytes: the heavier first */
};

/* Count instance @o unless an instance of its class is open above it, and
 * open it. */
static inline void by_visit(struct by_walker *w, uint32_t o)
{
	uint32_t c = w->h->objects[o].cls;

	if (!w->open[c]++) {
		w->bytes[c] += w->d->retained[o];
		w->count[c]++;
	}
}

/* Walk the subtrees of @t: count each instance with no instance of its
 * class above it. open[] is zero before and after. */
static void by_walk(struct by_walker *w, const struct by_task *t)
{
	const struct dsl_heap *h = w->h;
	const struct mt_domkids *k = w->k;
	uint32_t sp = 0, *open = w->open;
	struct kid_frame *stack = w->stack;

	for (uint32_t i = 0; i < t->len; i++)
		open[w->path[t->at + i]]++;
	for (uint32_t j = t->lo; j < t->hi; j++) {
		by_visit(w, k->kid[j]);
		/* depth-first down the tree; open[c]: instances of c on the way down */
		stack[sp++] = (struct kid_frame){ k->kid[j], k->first[k->kid[j]] };
		while (sp) {
			struct kid_frame *f = &stack[sp - 1];
			uint32_t o;

			if (f->next >= k->first[f->obj + 1]) {
				open[h->objects[f->obj].cls]--;
				sp--;
				continue;
			}
			o = k->kid[f->next++];
			by_visit(w, o);
			stack[sp++] = (struct kid_frame){ o, k->first[o] };
		}
	}
	for (uint32_t i = 0; i < t->len; i++)
		open[w->path[t->at + i]]--;
}

/* A walker's loop: the next task not taken, until none is left. */
static void *by_walker_run(void *arg)
{
	struct by_walker *w = arg;

	for (;;) {
		uint32_t i = __atomic_fetch_add(w->next, 1, __ATOMIC_RELAXED);

		if (i >= w->ntask)
			return NULL;
		by_walk(w, &w->task[i]);
	}
}

static int by_weight(const void *a, const void *b)
{
	const struct by_task *x = a, *y = b;

	return x->weight < y->weight ? 1 : x->weight > y->weight ? -1 : 0;
}

#define BY_THREADS_MIN (1u << 20) /* objects in the tree worth a second thread */
#define BY_TASKS_MAX   4096       /* tasks handed out, at most */
#define BY_SPLITS_MAX  256        /* tasks split, at most */
#define BY_PIECES      32         /* a task of many children: split in this many */

/* The retained bytes of children kid[lo .. hi). */
static uint64_t by_weight_of(const struct by_walker *w, uint32_t lo, uint32_t hi)
{
	uint64_t b = 0;

	for (uint32_t j = lo; j < hi; j++)
		b += w->d->retained[w->k->kid[j]];
	return b;
}

/*
 * The tree as tasks for two walkers: the virtual root's children, the
 * heaviest task split while it holds more than a sixteenth of the reached
 * bytes - many children into BY_PIECES ranges of them, one child into its
 * own children (its instance counted here, its class on their path).
 * Returns the tasks, heaviest first (*@ntask; the caller frees them and
 * *@path), or NULL when out of memory.
 */
static struct by_task *by_tasks(struct by_walker *w, uint32_t *ntask, uint32_t **path)
{
	const struct dsl_heap *h = w->h;
	const struct mt_domtree *d = w->d;
	const struct mt_domkids *k = w->k;
	uint32_t n = d->n, nt = 0, np = 0, cap_p = 256;
	struct by_task *t = malloc(BY_TASKS_MAX * sizeof(*t));
	uint32_t *p = malloc(cap_p * sizeof(*p));

	*path = NULL;
	if (!t || !p)
		goto fail;
	t[nt++] = (struct by_task){ n, k->first[n], k->first[n + 1], 0, 0, d->reached_bytes };
	for (int split = 0; split < BY_SPLITS_MAX; split++) {
		uint32_t best = 0, lo, hi;
		struct by_task b;

		for (uint32_t i = 1; i < nt; i++)
			if (t[i].weight > t[best].weight)
				best = i;
		b = t[best];
		if (b.weight <= d->reached_bytes / 16 || nt + BY_PIECES > BY_TASKS_MAX)
			break;
		if (b.hi - b.lo > 1) { /* ranges of its children */
			uint32_t m = b.hi - b.lo < BY_PIECES ? b.hi - b.lo : BY_PIECES;

			for (uint32_t i = 0; i < m; i++) {
				lo = b.lo + (uint32_t)((uint64_t)(b.hi - b.lo) * i / m);
				hi = b.lo + (uint32_t)((uint64_t)(b.hi - b.lo) * (i + 1) / m);
				t[i ? nt++ : best] = (struct by_task){ b.obj, lo, hi, b.at, b.len,
								       by_weight_of(w, lo, hi) };
			}
			continue;
		}
		if (b.hi == b.lo)
			break;
		/* one child, o: counted here, its children a task below it */
		{
			uint32_t o = k->kid[b.lo], c = h->objects[o].cls;
			bool above = false;

			for (uint32_t i = 0; i < b.len; i++)
				above |= p[b.at + i] == c;
			if (!above) {
				w->bytes[c] += d->retained[o];
				w->count[c]++;
			}
			if (np + b.len + 1 > cap_p) {
				uint32_t cap = 2 * (np + b.len + 1), *q = realloc(p, cap * sizeof(*q));

				if (!q)
					goto fail;
				p = q;
				cap_p = cap;
			}
			memcpy(&p[np], &p[b.at], b.len * sizeof(*p));
			p[np + b.len] = c;
			t[best] = (struct by_task){ o, k->first[o], k->first[o + 1], np, b.len + 1,
						    d->retained[o] - h->objects[o].size };
			np += b.len + 1;
		}
	}
	qsort(t, nt, sizeof(*t), by_weight);
	*ntask = nt;
	*path = p;
	return t;
fail:
	free(t);
	free(p);
	return NULL;
}

int dominators_by_class_threads(const struct dsl_heap *h, const struct mt_domtree *d,
				const struct mt_domkids *k, uint64_t *bytes, uint64_t *count,
				int threads, uint32_t *ntasks)
{
	uint32_t nc = h->nclasses + 1, next = 0, ntask = 0, *path = NULL;
	struct by_walker w[2];
	struct by_task *tasks = NULL;
	struct by_task whole = { d->n, k->first[d->n], k->first[d->n + 1], 0, 0, 0 };
	pthread_t t;
	int err = -ENOMEM, nw = threads >= 2 ? 2 : 1;
	bool two;

	memset(w, 0, sizeof(w));
	memset(bytes, 0, (size_t)h->nclasses * sizeof(*bytes));
	memset(count, 0, (size_t)h->nclasses * sizeof(*count));
	for (int i = 0; i < nw; i++) {
		w[i] = (struct by_walker){ .h = h, .d = d, .k = k, .next = &next };
		w[i].open = calloc(nc, sizeof(*w[i].open));
		w[i].stack = util_big_alloc((size_t)d->reached + 2, sizeof(*w[i].stack));
		w[i].bytes = i ? calloc(nc, sizeof(*w[i].bytes)) : bytes;
		w[i].count = i ? calloc(nc, sizeof(*w[i].count)) : count;
		if (!w[i].open || !w[i].stack || !w[i].bytes || !w[i].count)
			goto out;
	}
	if (ntasks)
		*ntasks = 1;
	if (nw == 2)
		tasks = by_tasks(&w[0], &ntask, &path);
	if (!tasks) { /* the whole tree in this thread */
		if (nw == 2) { /* by_tasks() may have counted some: start again */
			memset(bytes, 0, (size_t)h->nclasses * sizeof(*bytes));
			memset(count, 0, (size_t)h->nclasses * sizeof(*count));
		}
		w[0].task = &whole;
		w[0].ntask = 1;
		by_walker_run(&w[0]);
		err = 0;
		goto out;
	}
	if (ntasks)
		*ntasks = ntask;
	for (int i = 0; i < 2; i++) {
		w[i].task = tasks;
		w[i].ntask = ntask;
		w[i].path = path;
	}
	two = !pthread_create(&t, NULL, by_walker_run, &w[1]); /* else all in this one */
	by_walker_run(&w[0]);
	if (two)
		pthread_join(t, NULL);
	for (uint32_t c = 0; c < h->nclasses; c++) {
		bytes[c] += w[1].bytes[c];
		count[c] += w[1].count[c];
	}
	err = 0;
out:
	for (int i = 0; i < nw; i++) {
		free(w[i].open);
		free(w[i].stack);
		if (i) {
			free(w[i].bytes);
			free(w[i].count);
		}
	}
	free(tasks);
	free(path);
	return err;
}

int dominators_by_class(const struct dsl_heap *h, const struct mt_domtree *d,
			const struct mt_domkids *k, uint64_t *bytes, uint64_t *count,
			uint32_t *ntasks)
{
	const char *env = getenv("MEMTRACE_BYCLASS_THREADS");
	int threads = d->reached >= BY_THREADS_MIN && util_cpus() >= 2 ? 2 : 1;

	if (env && (!strcmp(env, "1") || !strcmp(env, "2")))
		threads = env[0] - '0';
	return dominators_by_class_threads(h, d, k, bytes, count, threads, ntasks);
}
