// SPDX-License-Identifier: GPL-2.0
/* locks.c - contention per monitor and class, the wait graph, deadlocks. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/idmap.h"
#include "analysis/locks.h"
#include "analysis/waitgraph.h"

/* The row of parks whose blocker could not be read: its name id, its lock's key. */
#define UNREAD_NAME UINT64_MAX
#define UNREAD_KEY 1

struct lk {
	uint64_t key, type, owner;
	uint64_t contended, wait_ns, wait_max;   /* blocked entering */
	uint64_t waits, notify_ns;               /* Object.wait */
	/* parks and sleeps on it that ended, per enum locks_park_how */
	uint64_t parks[LOCKS_NHOW], park_ns[LOCKS_NHOW], park_max[LOCKS_NHOW];
	bool park_owned;                         /* one began with an owner: a contended lock */
};

struct th {
	uint64_t tid, name;
	bool waiting;
	uint32_t kind;
	uint64_t lock, since;
	uint64_t park_owner;                     /* a park's blocker's owner at its begin */
	enum locks_park_how how;
	bool unread;                             /* a park whose blocker could not be read */
};

struct locks {
	struct idmap names;    /* id -> char* */
	struct idmap types;    /* type key -> name id */
	struct idmap objs;     /* lock -> struct lk */
	struct idmap threads;  /* tid -> struct th */
	struct idmap parks;    /* park_key() -> struct park_row: parks on objects replaced since */
	struct idmap gone;     /* type key -> struct locks_class: monitors replaced since */
	struct lk unread;      /* parks whose blocker could not be read (key UNREAD) */
	uint64_t nsync;
};

/* Parks and sleeps of one (class, how), summed over objects. */
struct park_row {
	uint64_t name;         /* the class's name id; 0: no blocker or a sleep */
	struct locks_park p;   /* p.name unset */
};

struct locks *locks_new(void)
{
	struct locks *l = calloc(1, sizeof(struct locks));

	if (l)
		l->unread.key = UNREAD_KEY;
	return l;
}

void locks_free(struct locks *l)
{
	if (!l)
		return;
	idmap_free_vals(&l->names);
	idmap_free_vals(&l->objs);
	idmap_free_vals(&l->threads);
	idmap_free_vals(&l->parks);
	idmap_free_vals(&l->gone);
	idmap_free(&l->types);
	free(l);
}

uint64_t locks_sync_events(const struct locks *l)
{
	return l->nsync;
}

static const char *name_of(const struct locks *l, uint64_t id)
{
	const char *s = id ? idmap_get(&l->names, id) : NULL;

	return s ? s : "";
}

static struct th *th_get(struct locks *l, uint64_t tid)
{
	struct th *t = idmap_get(&l->threads, tid);

	if (t || !tid)
		return t;
	t = calloc(1, sizeof(*t));
	if (t) {
		t->tid = tid;
		idmap_put(&l->threads, tid, t);
	}
	return t;
}

static struct lk *lk_get(struct locks *l, uint64_t key)
{
	struct lk *k = idmap_get(&l->objs, key);

	if (k)
		return k;
	k = calloc(1, sizeof(*k));
	if (k) {
		k->key = key;
		idmap_put(&l->objs, key, k);
	}
	return k;
}

/* The object a thread waits on when it waits on none of its program's (events.h). */
static bool self_obj(uint64_t key)
{
	return key >> 63;
}

static uint64_t park_key(uint64_t name, enum locks_park_how how)
{
	return name * 4 + how;
}

/* A park or sleep of @d ns by @t on @k ended. */
static void park_end(const struct th *t, struct lk *k, uint64_t d)
{
	k->parks[t->how]++;
	k->park_ns[t->how] += d;
	if (d > k->park_max[t->how])
		k->park_max[t->how] = d;
	if (t->park_owner)
		k->park_owned = true;
}

bool locks_class_is_lock(const char *cls)
{
	static const char *const locks[] = {
		"java.util.concurrent.locks.ReentrantLock$",
		"java.util.concurrent.locks.ReentrantReadWriteLock$",
	};

	for (size_t i = 0; cls && i < sizeof(locks) / sizeof(locks[0]); i++)
		if (!strncmp(cls, locks[i], strlen(locks[i])) && strstr(cls, "Sync"))
			return true;
	return false;
}

/*
 * Add @k's parks to @rows (park_key() -> struct park_row), under its class
 * and how. A lock that had an owner when one of its parks began is a
 * contended lock: all its parks count as contended (a fair lock's
 * hand-over parks its next waiters while nobody owns it); so are all the
 * parks on a lock of locks_class_is_lock().
 */
static int rows_add(const struct locks *l, struct idmap *rows, const struct lk *k)
{
	uint64_t name = k == &l->unread ? UNREAD_NAME :
			self_obj(k->key) ? 0 : (uintptr_t)idmap_get(&l->types, k->type);

	for (int h = 0; h < LOCKS_NHOW; h++) {
		struct park_row *p;

		if (!k->parks[h])
			continue;
		p = idmap_get(rows, park_key(name, h));
		if (!p) {
			p = calloc(1, sizeof(*p));
			if (!p || idmap_put(rows, park_key(name, h), p)) {
				free(p);
				return -ENOMEM;
			}
			p->name = name;
			p->p.how = h;
		}
		p->p.blockers++;
		p->p.parks += k->parks[h];
		p->p.ns += k->park_ns[h];
		if (k->park_max[h] > p->p.max_ns)
			p->p.max_ns = k->park_max[h];
		if (k->park_owned || (name && name != UNREAD_NAME && locks_class_is_lock(name_of(l, name)))) {
			p->p.contended += k->parks[h];
			p->p.contended_ns += k->park_ns[h];
		}
	}
	return 0;
}

/* Add the monitor figures of @k (blocked entries, Object.waits) to @c. */
static void class_add(struct locks_class *c, const struct lk *k)
{
	c->monitors++;
	c->contended += k->contended;
	c->wait_ns += k->wait_ns;
	if (k->wait_max > c->wait_max)
		c->wait_max = k->wait_max;
	c->waits += k->waits;
	c->notify_ns += k->notify_ns;
}

/*
 * Keep the monitor figures of @k, whose identity now holds another object,
 * under its type: a monitor's address is reused once the JVM deflates it (JDK
 * 17 frees ObjectMonitors and malloc hands the address to the next one). On
 * Derby 8.8 % of StoredPage's waits were lost so. Returns 0 or -ENOMEM.
 */
static int gone_add(struct locks *l, const struct lk *k)
{
	struct locks_class *c;

	if (!k->contended && !k->waits)
		return 0;
	c = idmap_get(&l->gone, k->type);
	if (!c) {
		c = calloc(1, sizeof(*c));
		if (!c || idmap_put(&l->gone, k->type, c)) {
			free(c);
			return -ENOMEM;
		}
	}
	class_add(c, k);
	return 0;
}

void locks_feed(struct locks *l, const struct mt_ev *e, const char *text)
{
	struct th *t;
	struct lk *k;

	switch (e->kind) {
	case MT_EV_NAME:
		free(idmap_del(&l->names, e->id));
		idmap_put(&l->names, e->id, strdup(text ? text : ""));
		return;
	case MT_EV_TYPE_CREATE:
		idmap_put(&l->types, e->id, (void *)(uintptr_t)e->name);
		return;
	case MT_EV_THREAD_CREATE:
	case MT_EV_THREAD_RENAME:
		t = th_get(l, e->id);
		if (t)
			t->name = e->name;
		return;
	case MT_EV_THREAD_DESTROY:
		free(idmap_del(&l->threads, e->id));
		return;
	case MT_EV_OBJ_CREATE:
		k = lk_get(l, e->id);
		if (k && k->type != e->ref) { /* another object under this identity */
			rows_add(l, &l->parks, k); /* its parks stay, under its class */
			gone_add(l, k);            /* and its monitor's figures */
			memset(k, 0, sizeof(*k));
			k->key = e->id;
			k->type = e->ref;
		}
		return;
	case MT_EV_MON_ACQUIRE:
	case MT_EV_MON_RELEASE:
	case MT_EV_MON_WAIT_BEGIN:
	case MT_EV_MON_WAIT_END:
		break;
	default:
		return;
	}
	l->nsync++;
	t = th_get(l, e->thread);
	k = lk_get(l, e->id);
	if (!t || !k)
		return;
	switch (e->kind) {
	case MT_EV_MON_ACQUIRE:
		k->owner = t->tid;
		break;
	case MT_EV_MON_RELEASE:
		if (k->owner == t->tid)
			k->owner = 0;
		break;
	case MT_EV_MON_WAIT_BEGIN:
		t->waiting = true;
		t->kind = e->aux;
		t->lock = e->id;
		t->since = e->ts;
		t->park_owner = e->aux == MT_WAIT_PARK ? e->v[2] : 0;
		t->unread = e->aux == MT_WAIT_PARK && e->v[3];
		t->how = e->aux == MT_WAIT_SLEEP ? LOCKS_SLEEP :
			 e->v[0] || e->v[1] ? LOCKS_PARK_TIMED : LOCKS_PARK;
		if (e->aux == MT_WAIT_NOTIFY && k->owner == t->tid)
			k->owner = 0; /* Object.wait() lets go of the monitor */
		break;
	case MT_EV_MON_WAIT_END:
		if (t->waiting && t->lock == e->id) {
			uint64_t d = e->ts > t->since ? e->ts - t->since : 0;

			if (t->kind == MT_WAIT_PARK || t->kind == MT_WAIT_SLEEP) {
				park_end(t, t->unread ? &l->unread : k, d);
			} else if (t->kind == MT_WAIT_ENTER) {
				k->contended++;
				k->wait_ns += d;
				if (d > k->wait_max)
					k->wait_max = d;
			} else {
				k->waits++;
				k->notify_ns += d;
				k->owner = t->tid; /* it holds the monitor again */
			}
		}
		t->waiting = false;
		break;
	}
}

static const char *class_of(const struct locks *l, const struct lk *k)
{
	const char *c = name_of(l, (uintptr_t)idmap_get(&l->types, k->type));

	return c[0] ? c : "(unknown class)";
}

const char *locks_lock_class(const struct locks *l, uint64_t lock)
{
	const struct lk *k = idmap_get(&l->objs, lock);

	return k ? class_of(l, k) : NULL;
}

static const char *thread_name(const struct locks *l, uint64_t tid)
{
	const struct th *t = idmap_get(&l->threads, tid);

	return t ? name_of(l, t->name) : "";
}

static int class_cmp(const void *a, const void *b)
{
	const struct locks_class *x = a, *y = b;

	return x->wait_ns < y->wait_ns ? 1 : x->wait_ns > y->wait_ns ? -1 : strcmp(x->name, y->name);
}

/* The report's row of class @name (a new one at the end if none). */
static struct locks_class *class_row(struct locks_report *r, const char *name)
{
	size_t j;

	for (j = 0; j < r->nclasses; j++)
		if (!strcmp(r->classes[j].name, name))
			return &r->classes[j];
	r->classes[r->nclasses].name = name;
	return &r->classes[r->nclasses++];
}

/* Per class: the monitors with a contended entry or an Object.wait, summed:
 * those replaced since, then the live ones. */
static int report_classes(const struct locks *l, struct locks_report *r)
{
	size_t pos = 0;
	uint64_t type;
	void *val;

	r->classes = calloc(l->objs.n + l->gone.n + 1, sizeof(*r->classes));
	if (!r->classes)
		return -ENOMEM;
	while (idmap_next(&l->gone, &pos, &type, &val)) {
		const struct locks_class *g = val;
		struct lk k = { .type = type };
		struct locks_class *c = class_row(r, class_of(l, &k));

		c->monitors += g->monitors;
		c->contended += g->contended;
		c->wait_ns += g->wait_ns;
		if (g->wait_max > c->wait_max)
			c->wait_max = g->wait_max;
		c->waits += g->waits;
		c->notify_ns += g->notify_ns;
	}
	for (size_t i = 0; i < idmap_slots(&l->objs); i++) {
		struct lk *k;

		if (!idmap_used(&l->objs, i))
			continue;
		k = idmap_val_at(&l->objs, i);
		if (k->contended || k->waits)
			class_add(class_row(r, class_of(l, k)), k);
	}
	qsort(r->classes, r->nclasses, sizeof(*r->classes), class_cmp);
	return 0;
}

static int park_cmp(const void *a, const void *b)
{
	const struct locks_park *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? 1 : -1;
	if (x->how != y->how)
		return x->how < y->how ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* Parks and sleeps per (blocker class, how), most time first. */
static int report_parks(const struct locks *l, struct locks_report *r)
{
	struct idmap rows = { 0 };
	size_t pos = 0;
	uint64_t key;
	void *val;
	int err = 0;

	/* the objects replaced since, then the live ones */
	while (!err && idmap_next(&l->parks, &pos, &key, &val)) {
		struct park_row *p = malloc(sizeof(*p));

		if (p)
			memcpy(p, val, sizeof(*p));
		if (!p || idmap_put(&rows, key, p)) {
			free(p);
			err = -ENOMEM;
		}
	}
	for (size_t i = 0; !err && i < idmap_slots(&l->objs); i++)
		if (idmap_used(&l->objs, i))
			err = rows_add(l, &rows, idmap_val_at(&l->objs, i));
	if (!err)
		err = rows_add(l, &rows, &l->unread);
	r->parks = err ? NULL : calloc(rows.n + 1, sizeof(*r->parks));
	if (!r->parks) {
		idmap_free_vals(&rows);
		return -ENOMEM;
	}
	pos = 0;
	while (idmap_next(&rows, &pos, &key, &val)) {
		const struct park_row *p = val;
		struct locks_park *o = &r->parks[r->nparks++];

		*o = p->p;
		o->name = p->name == UNREAD_NAME ? "(blocker not read)" :
			  p->name ? name_of(l, p->name) : p->p.how == LOCKS_SLEEP ? "Thread.sleep" :
										     "(no blocker)";
		if (!o->name[0])
			o->name = "(unknown class)";
	}
	idmap_free_vals(&rows);
	qsort(r->parks, r->nparks, sizeof(*r->parks), park_cmp);
	return 0;
}

/* The wait graph: each thread blocked entering a monitor -> the monitor's owner. */
static int report_edges(const struct locks *l, struct locks_report *r, uint64_t now,
			locks_owner_fn fn, void *ctx)
{
	r->edges = calloc(l->threads.n + 1, sizeof(*r->edges));
	if (!r->edges)
		return -ENOMEM;
	for (size_t i = 0; i < idmap_slots(&l->threads); i++) {
		struct locks_edge *e;
		struct th *t;
		struct lk *k;

		if (!idmap_used(&l->threads, i))
			continue;
		t = idmap_val_at(&l->threads, i);
		/* blocked entering a monitor, waiting in Object.wait, or parked
		 * on a blocker */
		if (!t->waiting || (t->kind != MT_WAIT_ENTER && t->kind != MT_WAIT_NOTIFY &&
				    (t->kind != MT_WAIT_PARK || self_obj(t->lock))))
			continue;
		k = idmap_get(&l->objs, t->lock);
		e = &r->edges[r->nedges++];
		e->tid = t->tid;
		e->thread = thread_name(l, t->tid);
		e->monitor = t->lock;
		e->cls = k ? class_of(l, k) : NULL;
		if (t->kind == MT_WAIT_PARK) {
			/* the blocker's owner when it parked (the stream's only word on it) */
			e->kind = LOCKS_PARKED;
			e->owner = t->park_owner;
			e->owner_from = e->owner ? LOCKS_OWNER_STREAM : LOCKS_OWNER_UNKNOWN;
		} else if (t->kind == MT_WAIT_NOTIFY) {
			e->kind = LOCKS_OBJWAIT; /* nobody to name until a notify */
		} else if (k && k->owner) {
			e->owner = k->owner;
			e->owner_from = LOCKS_OWNER_STREAM;
		} else if (k && fn) {
			e->owner = fn(ctx, k->key);
			e->owner_from = e->owner ? LOCKS_OWNER_JVM : LOCKS_OWNER_UNKNOWN;
		}
		e->owner_name = e->owner ? thread_name(l, e->owner) : "";
		e->blocked_ns = now > t->since ? now - t->since : 0;
	}
	return 0;
}

int locks_find_cycles(const struct locks_edge *edges, size_t n, struct locks_cycle **out)
{
	struct locks_cycle *cycles = NULL;
	struct waitgraph_node *g = NULL;
	uint32_t *num = NULL;
	size_t ncycles = 0, *start = NULL;
	int k, err = 0;

	*out = NULL;
	if (!n)
		return 0;
	g = malloc(n * sizeof(*g));
	num = malloc(n * sizeof(*num));
	if (!g || !num) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++)
		g[i] = (struct waitgraph_node){ edges[i].tid,
						edges[i].transient ? 0 : edges[i].owner };
	k = waitgraph_cycles(g, n, num);
	if (k <= 0) {
		err = k;
		goto cleanup;
	}
	/* each cycle from its member with the smallest tid, cycles in the order
	 * of that member's edge */
	start = malloc((size_t)k * sizeof(*start));
	cycles = malloc((size_t)k * sizeof(*cycles));
	if (!start || !cycles) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (int c = 0; c < k; c++)
		start[c] = n;
	for (size_t i = 0; i < n; i++)
		if (num[i] && (start[num[i] - 1] == n || edges[i].tid < edges[start[num[i] - 1]].tid))
			start[num[i] - 1] = i;
	for (size_t i = 0; i < n; i++) {
		struct locks_cycle *c;
		size_t cur = i;

		if (!num[i] || start[num[i] - 1] != i)
			continue;
		c = &cycles[ncycles];
		c->n = 0;
		do {
			size_t nxt = n;

			if (c->n == LOCKS_MAX_CYCLE)
				break;
			c->edge[c->n++] = cur;
			for (size_t j = 0; j < n && nxt == n; j++)
				if (num[j] == num[i] && edges[j].tid == edges[cur].owner)
					nxt = j;
			cur = nxt;
		} while (cur != i && cur != n);
		if (cur == i) /* closed within LOCKS_MAX_CYCLE */
			ncycles++;
	}
cleanup:
	free(g);
	free(num);
	free(start);
	if (err || !ncycles) {
		free(cycles);
		cycles = NULL;
	}
	*out = cycles;
	return err ? err : (int)ncycles;
}

struct locks_report *locks_report_new(const struct locks *l, uint64_t now, locks_owner_fn fn,
				      void *ctx)
{
	struct locks_report *r = calloc(1, sizeof(*r));
	int n;

	if (!r)
		goto err;
	if (report_classes(l, r) || report_parks(l, r) || report_edges(l, r, now, fn, ctx))
		goto err;
	n = locks_find_cycles(r->edges, r->nedges, &r->cycles);
	if (n < 0)
		goto err;
	r->ncycles = (size_t)n;
	return r;
err:
	locks_report_free(r);
	errno = ENOMEM;
	return NULL;
}

int locks_report_add(struct locks_report *r, const struct locks_edge *e, size_t n)
{
	struct locks_edge *edges;
	struct locks_cycle *cycles;
	size_t m = r->nedges;
	int k;

	edges = malloc((r->nedges + n + 1) * sizeof(*edges));
	if (!edges)
		return -ENOMEM;
	memcpy(edges, r->edges, r->nedges * sizeof(*edges));
	for (size_t i = 0; i < n; i++) {
		bool seen = false;

		for (size_t j = 0; j < r->nedges && !seen; j++) {
			seen = edges[j].tid == e[i].tid;
			if (seen && edges[j].monitor == e[i].monitor && !edges[j].frames) {
				edges[j].frames = e[i].frames;
				edges[j].nframes = e[i].nframes;
				edges[j].frames_err = e[i].frames_err;
			}
		}
		if (!seen)
			edges[m++] = e[i];
	}
	k = locks_find_cycles(edges, m, &cycles);
	if (k < 0) {
		free(edges);
		return k;
	}
	free(r->edges);
	free(r->cycles);
	r->edges = edges;
	r->nedges = m;
	r->cycles = cycles;
	r->ncycles = (size_t)k;
	return 0;
}

void locks_report_free(struct locks_report *r)
{
	if (!r)
		return;
	free(r->cycles);
	free(r->edges);
	free(r->classes);
	free(r->parks);
	free(r);
}
