// SPDX-License-Identifier: GPL-2.0
/*
 * sequencer.c - full entity state, partial reporting, rules 1-5.
 *
 * For every entity the state holds what is true (alive, loaded, held, open)
 * and what the reported stream has been told (rep_* flags, reported hold
 * counts). Reporting decisions compare the two: opening events (creations,
 * enters, acquires, begin-waits) are reported when wanted; closing events
 * are reported exactly when their opening was; anything a reported event
 * needs is reported first, lazily.
 */
#include <errno.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "lib/idmap.h"
#include "monitor/sequencer.h"
#include "lib/util.h"

struct s_name {
	char *text;
	size_t len;
	bool reported;
};

/*
 * An entity's creation (and a type's load) is observed (0), implied by an
 * observed event (MT_EVF_INFERRED) or read from the JVM at the start or
 * after lost events (MT_EVF_RESYNC): its late report carries that flag.
 */
struct s_type {
	uint64_t key, uid, name, loader, ts;
	bool loaded;
	bool rep_create, rep_load;
	bool pass;              /* class filter */
	uint16_t made, load_made; /* 0, MT_EVF_INFERRED or MT_EVF_RESYNC */
};

struct s_obj {
	uint64_t key, uid, type, type_uid, size, ts;
	uint16_t made;
	bool reported;
	bool cpass;             /* class filter */
	bool sampled;
	bool lock;              /* has been the lock of a sync event */
};

struct s_inv {
	uint64_t name, kind, arg, ts;
	bool reported;
};

/* One (thread, lock) pair with the thread holding the lock. */
struct s_hold {
	uint64_t lock;
	uint32_t h;             /* times held (re-entries count) */
	uint32_t rh;            /* of which reported; rh <= h */
};

struct s_thread {
	uint64_t tid, uid, name, javatid, daemon, ts;
	uint16_t made;
	bool reported;
	bool pass;              /* thread filter */
	bool waiting, rwaiting; /* waiting (observed / reported) on wait_lock */
	bool reentry, reacquire;/* in an Object.wait: entering its monitor again after
				 * the notify (a contended enter seen), its entry seen */
	uint32_t wait_kind;
	uint64_t wait_lock, wait_timeout;
	struct s_inv *inv;      /* invocation stack; reported ones are a prefix */
	size_t ninv, capinv;
	struct idmap holds;     /* lock -> struct s_hold */
};

struct mt_seq {
	sequencer_emit_fn emit;
	void *ctx;
	unsigned cats;
	char *class_glob, *thread_glob;
	struct idmap tid_filter; /* tids to report (empty: all) */
	uint32_t sample;
	bool paused;
	struct idmap paused_tids;

	struct s_name *names;    /* by id; [0] unused */
	size_t nnames, capnames;
	struct idmap name_index; /* text hash (+probe) -> id */

	struct idmap types, objs, threads;
	uint64_t next_uid;
	uint64_t nobj;           /* object creations, for sampling */
	struct sequencer_stats st;
};

static const char *const kind_names[MT_EV_KIND_COUNT] = {
	[MT_EV_TYPE_CREATE] = "type_create",     [MT_EV_TYPE_LOAD] = "type_load",
	[MT_EV_TYPE_RECLAIM] = "type_reclaim",   [MT_EV_OBJ_CREATE] = "obj_create",
	[MT_EV_OBJ_RECLAIM] = "obj_reclaim",     [MT_EV_THREAD_CREATE] = "thread_create",
	[MT_EV_THREAD_RENAME] = "thread_rename", [MT_EV_THREAD_DESTROY] = "thread_destroy",
	[MT_EV_INV_ENTER] = "enter",             [MT_EV_INV_LEAVE] = "leave",
	[MT_EV_POOL_USAGE] = "pool",             [MT_EV_ALLOC_SAMPLE] = "alloc",
	[MT_EV_MON_ACQUIRE] = "acquire",         [MT_EV_MON_RELEASE] = "release",
	[MT_EV_MON_WAIT_BEGIN] = "wait_begin",   [MT_EV_MON_WAIT_END] = "wait_end",
	[MT_EV_REF] = "ref",                     [MT_EV_LOST] = "lost",
	[MT_EV_NAME] = "name",                   [MT_EV_GC_CAUSE] = "gc_cause",
};

const char *sequencer_ev_kind_name(unsigned kind)
{
	return kind < MT_EV_KIND_COUNT ? kind_names[kind] : NULL;
}

unsigned sequencer_ev_kind_parse(const char *name)
{
	for (unsigned k = 1; k < MT_EV_KIND_COUNT; k++)
		if (!strcmp(kind_names[k], name))
			return k;
	return MT_EV_NONE;
}

int sequencer_cats_parse(const char *s, unsigned *cats, const char **bad)
{
	static const struct { const char *w; unsigned bit; } words[] = {
		{ "type", MT_CAT_TYPE },   { "object", MT_CAT_OBJECT }, { "thread", MT_CAT_THREAD },
		{ "objects", MT_CAT_OBJECT },
		{ "inv", MT_CAT_INV },     { "pool", MT_CAT_POOL },     { "alloc", MT_CAT_ALLOC },
		{ "sync", MT_CAT_SYNC },   { "ref", MT_CAT_REF },       { "all", MT_CAT_ALL },
	};
	unsigned out = 0;

	while (*s) {
		size_t n = strcspn(s, ",");
		size_t i;

		for (i = 0; i < MT_ARRAY_SIZE(words); i++)
			if (strlen(words[i].w) == n && !strncmp(words[i].w, s, n))
				break;
		if (i == MT_ARRAY_SIZE(words)) {
			if (bad)
				*bad = s;
			return -EINVAL;
		}
		out |= words[i].bit;
		s += n;
		if (*s == ',')
			s++;
	}
	*cats = out;
	return 0;
}

/* ---- names (the id service) ---- */

static uint64_t hash_text(const char *t, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)t[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

uint64_t sequencer_name(struct mt_seq *s, const char *text, size_t len)
{
	uint64_t key = hash_text(text, len);
	uintptr_t id;

	for (;; key++) {
		id = (uintptr_t)idmap_get(&s->name_index, key);
		if (!id)
			break;
		if (s->names[id].len == len && !memcmp(s->names[id].text, text, len))
			return id;
	}
	if (s->nnames + 1 >= s->capnames) {
		size_t cap = s->capnames ? s->capnames * 2 : 256;
		struct s_name *n = realloc(s->names, cap * sizeof(*n));

		if (!n)
			return 0;
		s->names = n;
		s->capnames = cap;
	}
	id = ++s->nnames;
	s->names[id].text = malloc(len + 1);
	if (!s->names[id].text) {
		s->nnames--;
		return 0;
	}
	memcpy(s->names[id].text, text, len);
	s->names[id].text[len] = '\0';
	s->names[id].len = len;
	s->names[id].reported = false;
	if (idmap_put(&s->name_index, key, (void *)id)) {
		free(s->names[id].text);
		s->nnames--;
		return 0;
	}
	return id;
}

const char *sequencer_name_text(const struct mt_seq *s, uint64_t id)
{
	return id && id <= s->nnames ? s->names[id].text : "";
}

/* ---- emitting ---- */

static void define_name(struct mt_seq *s, uint64_t id, uint64_t ts)
{
	struct mt_ev d = { .ts = ts, .kind = MT_EV_NAME, .id = id };

	if (!id || id > s->nnames || s->names[id].reported)
		return;
	s->names[id].reported = true;
	s->st.out++;
	s->st.names++;
	s->emit(s->ctx, &d, s->names[id].text, s->names[id].len);
}

/* Emit @e, defining its names first; count it by where it comes from. */
static void out(struct mt_seq *s, const struct mt_ev *e)
{
	define_name(s, e->name, e->ts);
	define_name(s, e->name2, e->ts);
	if (e->kind == MT_EV_GC_CAUSE)
		define_name(s, e->ref, e->ts); /* its memory manager's name */
	if (e->kind == MT_EV_LOST)
		s->st.markers++;
	else if (e->flags & MT_EVF_RESYNC)
		s->st.resync++;
	else if (e->flags & MT_EVF_INFERRED)
		s->st.inferred++;
	else if (e->flags & MT_EVF_LAZY)
		s->st.lazy++;
	s->st.out++;
	s->emit(s->ctx, e, NULL, 0);
}

static void out_simple(struct mt_seq *s, unsigned kind, unsigned flags, uint64_t ts,
		       uint64_t thread, uint64_t id, uint32_t aux)
{
	struct mt_ev e = { .ts = ts, .kind = kind, .flags = flags, .aux = aux, .thread = thread,
			   .id = id };

	out(s, &e);
}

/* ---- filters ---- */

static bool glob_pass(const char *glob, const struct mt_seq *s, uint64_t name)
{
	if (!glob)
		return true;
	if (!name)
		return false;
	return fnmatch(glob, sequencer_name_text(s, name), 0) == 0;
}

static bool thread_pass(const struct mt_seq *s, const struct s_thread *t)
{
	if (s->tid_filter.n && !idmap_get(&s->tid_filter, t->tid))
		return false;
	return glob_pass(s->thread_glob, s, t->name);
}

/* Reporting is on for things happening on @t (NULL: no thread). */
static bool thread_on(const struct mt_seq *s, const struct s_thread *t)
{
	if (s->paused)
		return false;
	if (!t)
		return true;
	if (s->paused_tids.n && idmap_get(&s->paused_tids, t->tid))
		return false;
	return t->pass;
}

static bool cat_on(const struct mt_seq *s, unsigned cat)
{
	return (s->cats & cat) != 0;
}

/* ---- entities: lookup, inference, lazy reporting ---- */

static struct s_type *type_new(struct mt_seq *s, uint64_t key, uint64_t name, uint64_t loader,
			       uint64_t ts)
{
	struct s_type *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->key = key;
	t->uid = ++s->next_uid;
	t->name = name;
	t->loader = loader;
	t->ts = ts;
	t->pass = glob_pass(s->class_glob, s, name);
	t->load_made = MT_EVF_INFERRED; /* until its load is seen */
	if (idmap_put(&s->types, key, t)) {
		free(t);
		return NULL;
	}
	return t;
}

/* A type referred to: the live one, else an inferred (created and loaded) one. */
static struct s_type *type_get(struct mt_seq *s, uint64_t key, uint64_t ts)
{
	struct s_type *t = idmap_get(&s->types, key);

	if (t)
		return t;
	t = type_new(s, key, 0, 0, ts);
	if (t) {
		t->loaded = true;
		t->made = MT_EVF_INFERRED;
	}
	return t;
}

static void ensure_type(struct mt_seq *s, struct s_type *t)
{
	if (!t->rep_create) {
		struct mt_ev e = { .ts = t->ts, .kind = MT_EV_TYPE_CREATE,
				   .flags = MT_EVF_LAZY | t->made, .id = t->key, .name = t->name,
				   .uid = t->uid };

		e.v[0] = t->loader;
		out(s, &e);
		t->rep_create = true;
	}
	if (!t->rep_load) {
		/* Nothing may refer to a type before its load: infer it if unseen. */
		t->loaded = true;
		out_simple(s, MT_EV_TYPE_LOAD, MT_EVF_LAZY | t->load_made, t->ts, 0, t->key, 0);
		t->rep_load = true;
	}
}

static struct s_thread *thread_new(struct mt_seq *s, uint64_t tid, uint64_t name, uint64_t ts)
{
	struct s_thread *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->tid = tid;
	t->uid = ++s->next_uid;
	t->name = name;
	t->ts = ts;
	idmap_init(&t->holds);
	t->pass = thread_pass(s, t);
	if (idmap_put(&s->threads, tid, t)) {
		free(t);
		return NULL;
	}
	return t;
}

static struct s_thread *thread_get(struct mt_seq *s, uint64_t tid, uint64_t ts)
{
	struct s_thread *t = idmap_get(&s->threads, tid);

	if (t || !tid)
		return t;
	t = thread_new(s, tid, 0, ts);
	if (t)
		t->made = MT_EVF_INFERRED;
	return t;
}

static void ensure_thread(struct mt_seq *s, struct s_thread *t)
{
	struct mt_ev e;

	if (!t || t->reported)
		return;
	memset(&e, 0, sizeof(e));
	e.ts = t->ts;
	e.kind = MT_EV_THREAD_CREATE;
	e.flags = MT_EVF_LAZY | t->made;
	e.thread = e.id = t->tid;
	e.name = t->name;
	e.uid = t->uid;
	e.v[0] = t->javatid;
	e.v[1] = t->daemon;
	out(s, &e);
	t->reported = true;
}

static struct s_obj *obj_new(struct mt_seq *s, uint64_t key, uint64_t type, uint64_t size,
			     uint64_t ts)
{
	struct s_obj *o = calloc(1, sizeof(*o));
	struct s_type *t = NULL;

	if (!o)
		return NULL;
	o->key = key;
	o->uid = ++s->next_uid;
	o->size = size;
	o->ts = ts;
	if (type)
		t = type_get(s, type, ts);
	if (t) {
		o->type = type;
		o->type_uid = t->uid;
		o->cpass = t->pass;
	} else {
		o->cpass = !s->class_glob;
	}
	o->sampled = s->sample <= 1 || s->nobj++ % s->sample == 0;
	if (idmap_put(&s->objs, key, o)) {
		free(o);
		return NULL;
	}
	return o;
}

static struct s_obj *obj_get(struct mt_seq *s, uint64_t key, uint64_t ts)
{
	struct s_obj *o = idmap_get(&s->objs, key);

	if (o)
		return o;
	o = obj_new(s, key, 0, 0, ts);
	if (o)
		o->made = MT_EVF_INFERRED;
	return o;
}

/* The object's type if it is still the one it was created with, else NULL. */
static struct s_type *obj_type(struct mt_seq *s, struct s_obj *o)
{
	struct s_type *t = o->type ? idmap_get(&s->types, o->type) : NULL;

	return t && t->uid == o->type_uid ? t : NULL;
}

static void report_obj_create(struct mt_seq *s, struct s_obj *o, unsigned flags)
{
	struct s_type *t = obj_type(s, o);
	struct mt_ev e;

	if (t)
		ensure_type(s, t);
	memset(&e, 0, sizeof(e));
	e.ts = o->ts;
	e.kind = MT_EV_OBJ_CREATE;
	e.flags = flags ? flags | o->made : 0;
	e.id = o->key;
	e.ref = t ? t->key : 0;
	e.uid = o->uid;
	e.v[0] = o->size;
	out(s, &e);
	o->reported = true;
}

static void ensure_obj(struct mt_seq *s, struct s_obj *o)
{
	if (!o->reported)
		report_obj_create(s, o, MT_EVF_LAZY);
}

/* Report the enclosing invocations of stack slot @depth of @t. */
static void ensure_invs(struct mt_seq *s, struct s_thread *t, size_t depth)
{
	ensure_thread(s, t);
	for (size_t i = 0; i < depth; i++) {
		struct s_inv *v = &t->inv[i];
		struct mt_ev e;

		if (v->reported)
			continue;
		memset(&e, 0, sizeof(e));
		e.ts = v->ts;
		e.kind = MT_EV_INV_ENTER;
		e.flags = MT_EVF_LAZY;
		e.aux = (uint32_t)i;
		e.thread = t->tid;
		e.name = v->name;
		e.v[0] = v->kind;
		e.v[1] = v->arg;
		out(s, &e);
		v->reported = true;
	}
}

/* ---- closing: what the reported stream must hear before a reclamation ---- */

/* End @t's wait (observed), reporting it if its beginning was reported. */
static void end_wait(struct mt_seq *s, struct s_thread *t, uint64_t ts, unsigned flags)
{
	if (!t->waiting)
		return;
	if (t->rwaiting)
		out_simple(s, MT_EV_MON_WAIT_END, flags, ts, t->tid, t->wait_lock, 0);
	t->waiting = t->rwaiting = t->reentry = t->reacquire = false;
}

/* Let go of @t's hold on @lock entirely: report a release per reported hold. */
static void drop_hold(struct mt_seq *s, struct s_thread *t, struct s_hold *hd, uint64_t ts,
		      unsigned flags)
{
	for (; hd->rh; hd->rh--)
		out_simple(s, MT_EV_MON_RELEASE, flags, ts, t->tid, hd->lock, 0);
	idmap_del(&t->holds, hd->lock);
	free(hd);
}

static void drop_all_holds(struct mt_seq *s, struct s_thread *t, uint64_t ts, unsigned flags)
{
	if (!t->holds.n)
		return;
	for (size_t i = 0; i < idmap_slots(&t->holds); i++) {
		struct s_hold *hd;

		if (!idmap_used(&t->holds, i))
			continue;
		hd = idmap_val_at(&t->holds, i);
		for (; hd->rh; hd->rh--)
			out_simple(s, MT_EV_MON_RELEASE, flags, ts, t->tid, hd->lock, 0);
		free(hd);
	}
	idmap_free(&t->holds);
}

static void leave_all(struct mt_seq *s, struct s_thread *t, uint64_t ts, unsigned flags)
{
	while (t->ninv) {
		struct s_inv *v = &t->inv[--t->ninv];

		if (v->reported)
			out_simple(s, MT_EV_INV_LEAVE, flags, ts, t->tid, 0, (uint32_t)t->ninv);
	}
}

static void thread_destroy(struct mt_seq *s, struct s_thread *t, uint64_t ts, unsigned flags)
{
	end_wait(s, t, ts, flags | MT_EVF_INFERRED);
	drop_all_holds(s, t, ts, flags | MT_EVF_INFERRED);
	leave_all(s, t, ts, flags | MT_EVF_INFERRED);
	if (t->reported)
		out_simple(s, MT_EV_THREAD_DESTROY, flags, ts, t->tid, t->tid, 0);
	idmap_del(&s->threads, t->tid);
	idmap_free(&t->holds);
	free(t->inv);
	free(t);
}

static void obj_reclaim(struct mt_seq *s, struct s_obj *o, uint64_t ts, unsigned flags)
{
	if (o->lock) {
		/* Nobody holds or waits for a reclaimed object. */
		for (size_t i = 0; i < idmap_slots(&s->threads); i++) {
			struct s_thread *t;
			struct s_hold *hd;

			if (!idmap_used(&s->threads, i))
				continue;
			t = idmap_val_at(&s->threads, i);
			if (t->waiting && t->wait_lock == o->key)
				end_wait(s, t, ts, flags | MT_EVF_INFERRED);
			hd = idmap_get(&t->holds, o->key);
			if (hd) {
				end_wait(s, t, ts, flags | MT_EVF_INFERRED);
				drop_hold(s, t, hd, ts, flags | MT_EVF_INFERRED);
			}
		}
	}
	if (o->reported)
		out_simple(s, MT_EV_OBJ_RECLAIM, flags, ts, 0, o->key, 0);
	idmap_del(&s->objs, o->key);
	free(o);
}

static void type_reclaim(struct mt_seq *s, struct s_type *t, uint64_t ts, unsigned flags)
{
	if (t->rep_create)
		out_simple(s, MT_EV_TYPE_RECLAIM, flags, ts, 0, t->key, 0);
	idmap_del(&s->types, t->key);
	free(t);
}

/* ---- feeding, per kind ---- */

static void feed_type(struct mt_seq *s, const struct mt_ev *in)
{
	struct s_type *t = idmap_get(&s->types, in->id);
	bool want = !s->paused && cat_on(s, MT_CAT_TYPE);

	switch (in->kind) {
	case MT_EV_TYPE_CREATE:
		if (t) /* identity reused without an observed unload */
			type_reclaim(s, t, in->ts, MT_EVF_INFERRED);
		t = type_new(s, in->id, in->name, in->v[0], in->ts);
		if (t && want && t->pass) {
			struct mt_ev e = *in;

			e.flags = 0;
			e.uid = t->uid;
			out(s, &e);
			t->rep_create = true;
		}
		break;
	case MT_EV_TYPE_LOAD:
		if (!t) {
			t = type_new(s, in->id, 0, 0, in->ts);
			if (!t)
				return;
			t->made = MT_EVF_INFERRED;
		}
		if (t->loaded) { /* known loaded already: inferred, or read from the JVM */
			s->st.dropped++;
			return;
		}
		t->loaded = true;
		t->load_made = 0;
		if ((want && t->pass) || t->rep_create) {
			if (!t->rep_create)
				ensure_type(s, t); /* reports create (lazy) and this load */
			else {
				out_simple(s, MT_EV_TYPE_LOAD, 0, in->ts, 0, t->key, 0);
				t->rep_load = true;
			}
		}
		break;
	case MT_EV_TYPE_RECLAIM:
		if (!t) {
			s->st.dropped++;
			return;
		}
		type_reclaim(s, t, in->ts, 0);
		break;
	}
}

static void feed_obj(struct mt_seq *s, const struct mt_ev *in)
{
	struct s_obj *o = idmap_get(&s->objs, in->id);

	if (in->kind == MT_EV_OBJ_RECLAIM) {
		if (!o) {
			s->st.dropped++;
			return;
		}
		obj_reclaim(s, o, in->ts, 0);
		return;
	}
	if (o)
		obj_reclaim(s, o, in->ts, MT_EVF_INFERRED);
	o = obj_new(s, in->id, in->ref, in->v[0], in->ts);
	if (o && !s->paused && cat_on(s, MT_CAT_OBJECT) && o->cpass && o->sampled)
		report_obj_create(s, o, 0);
}

static void feed_thread(struct mt_seq *s, const struct mt_ev *in)
{
	uint64_t tid = in->thread ? in->thread : in->id;
	struct s_thread *t = idmap_get(&s->threads, tid);

	switch (in->kind) {
	case MT_EV_THREAD_CREATE:
		if (t)
			thread_destroy(s, t, in->ts, MT_EVF_INFERRED);
		t = thread_new(s, tid, in->name, in->ts);
		if (!t)
			return;
		t->javatid = in->v[0];
		t->daemon = in->v[1];
		if (cat_on(s, MT_CAT_THREAD) && thread_on(s, t)) {
			struct mt_ev e = *in;

			e.flags = 0;
			e.thread = e.id = tid;
			e.uid = t->uid;
			out(s, &e);
			t->reported = true;
		}
		break;
	case MT_EV_THREAD_RENAME:
		t = thread_get(s, tid, in->ts);
		if (!t)
			return;
		t->name = in->name;
		t->pass = thread_pass(s, t);
		if (t->reported) {
			struct mt_ev e = { .ts = in->ts, .kind = MT_EV_THREAD_RENAME, .thread = tid,
					   .id = tid, .name = t->name };

			out(s, &e);
		}
		break;
	case MT_EV_THREAD_DESTROY:
		if (!t) {
			s->st.dropped++;
			return;
		}
		thread_destroy(s, t, in->ts, 0);
		break;
	}
}

static void feed_inv(struct mt_seq *s, const struct mt_ev *in)
{
	struct s_thread *t = thread_get(s, in->thread, in->ts);
	struct s_inv *v;

	if (!t) {
		s->st.dropped++;
		return;
	}
	if (in->kind == MT_EV_INV_LEAVE) {
		if (!t->ninv) {
			s->st.dropped++;
			return;
		}
		v = &t->inv[--t->ninv];
		if (v->reported) {
			struct mt_ev e = { .ts = in->ts, .kind = MT_EV_INV_LEAVE, .aux = (uint32_t)t->ninv,
					   .thread = t->tid };

			e.v[0] = in->v[0];
			out(s, &e);
		}
		return;
	}
	if (t->ninv == t->capinv) {
		size_t cap = t->capinv ? t->capinv * 2 : 8;
		struct s_inv *n = realloc(t->inv, cap * sizeof(*n));

		if (!n)
			return;
		t->inv = n;
		t->capinv = cap;
	}
	v = &t->inv[t->ninv++];
	v->name = in->name;
	v->kind = in->v[0];
	v->arg = in->v[1];
	v->ts = in->ts;
	v->reported = false;
	if (cat_on(s, MT_CAT_INV) && thread_on(s, t)) {
		struct mt_ev e = *in;

		ensure_invs(s, t, t->ninv - 1);
		e.flags = 0;
		e.aux = (uint32_t)(t->ninv - 1);
		e.id = 0;
		out(s, &e);
		v->reported = true;
	}
}

static void feed_pool(struct mt_seq *s, const struct mt_ev *in)
{
	struct s_thread *t = in->thread ? thread_get(s, in->thread, in->ts) : NULL;

	if (!cat_on(s, MT_CAT_POOL) || !thread_on(s, t))
		return;
	ensure_thread(s, t);
	out(s, in);
}

static void feed_alloc(struct mt_seq *s, const struct mt_ev *in)
{
	struct s_thread *t = in->thread ? thread_get(s, in->thread, in->ts) : NULL;
	struct s_type *ty = in->ref ? type_get(s, in->ref, in->ts) : NULL;
	bool cpass = ty ? ty->pass : !s->class_glob;

	if (!cat_on(s, MT_CAT_ALLOC) || !thread_on(s, t) || !cpass)
		return;
	ensure_thread(s, t);
	if (ty)
		ensure_type(s, ty);
	out(s, in);
}

static void feed_ref(struct mt_seq *s, const struct mt_ev *in)
{
	struct s_obj *from = obj_get(s, in->id, in->ts);
	struct s_obj *to = obj_get(s, in->ref, in->ts);

	if (!from || !to || s->paused || !cat_on(s, MT_CAT_REF))
		return;
	if (!from->cpass || !to->cpass)
		return;
	ensure_obj(s, from);
	ensure_obj(s, to);
	out(s, in);
}

static struct s_hold *hold_get(struct s_thread *t, uint64_t lock)
{
	struct s_hold *hd = idmap_get(&t->holds, lock);

	if (hd)
		return hd;
	hd = calloc(1, sizeof(*hd));
	if (!hd)
		return NULL;
	hd->lock = lock;
	if (idmap_put(&t->holds, lock, hd)) {
		free(hd);
		return NULL;
	}
	return hd;
}

/*
 * Whether sync event @in of thread @t on @o is part of the Object.wait @t is
 * in: HotSpot fires monitor__wait, then the wait releases the monitor
 * (contended__exit when that wakes a thread), and after the notify enters
 * it again (contended__enter and __entered when another thread holds it)
 * before monitor__waited. The release and the entry are the wait's own: the
 * wait goes on, the thread's holds are as before it (rule 5).
 */
static bool in_wait(struct s_thread *t, const struct s_obj *o, const struct mt_ev *in)
{
	if (!t->waiting || t->wait_kind != MT_WAIT_NOTIFY || t->wait_lock != o->key)
		return false;
	switch (in->kind) {
	case MT_EV_MON_RELEASE:
		return !t->reentry && !t->reacquire;
	case MT_EV_MON_WAIT_BEGIN:
		if (in->aux != MT_WAIT_ENTER || t->reentry || t->reacquire)
			return false;
		t->reentry = true;
		return true;
	case MT_EV_MON_WAIT_END: /* the entry's end; monitor__waited's is not */
		if (!t->reentry)
			return false;
		t->reentry = false;
		t->reacquire = true;
		return true;
	case MT_EV_MON_ACQUIRE:
		if (!t->reacquire)
			return false;
		t->reacquire = false;
		return true;
	}
	return false;
}

/* Report sync event @kind on (@t, @o) if wanted, with what it needs first. */
static bool sync_want(struct mt_seq *s, struct s_thread *t, struct s_obj *o)
{
	return cat_on(s, MT_CAT_SYNC) && thread_on(s, t) && o->cpass;
}

static void sync_out(struct mt_seq *s, const struct mt_ev *in, struct s_thread *t,
		     struct s_obj *o, unsigned kind, unsigned flags)
{
	struct mt_ev e = *in;

	ensure_thread(s, t);
	ensure_obj(s, o);
	e.kind = kind;
	e.flags = flags;
	out(s, &e);
}

static void feed_sync(struct mt_seq *s, const struct mt_ev *in)
{
	struct s_thread *t = thread_get(s, in->thread, in->ts);
	struct s_obj *o = obj_get(s, in->id, in->ts);
	struct s_hold *hd;
	bool want;

	if (!t || !o) {
		s->st.dropped++;
		return;
	}
	o->lock = true;
	want = sync_want(s, t, o);
	if (in_wait(t, o, in)) {
		s->st.absorbed++;
		return;
	}
	/* A thread that acts is not waiting any more: the end of its wait was lost. */
	if (in->kind != MT_EV_MON_WAIT_END && t->waiting)
		end_wait(s, t, in->ts, MT_EVF_INFERRED);
	switch (in->kind) {
	case MT_EV_MON_ACQUIRE:
		hd = hold_get(t, o->key);
		if (!hd)
			return;
		hd->h++;
		if (want) {
			sync_out(s, in, t, o, MT_EV_MON_ACQUIRE, 0);
			hd->rh++;
		}
		break;
	case MT_EV_MON_RELEASE:
		hd = hold_get(t, o->key);
		if (!hd)
			return;
		if (!hd->h) { /* held since before we looked (uncontended entry) */
			hd->h++;
			if (want) {
				sync_out(s, in, t, o, MT_EV_MON_ACQUIRE, MT_EVF_INFERRED);
				hd->rh++;
			}
		}
		if (hd->rh == hd->h) {
			sync_out(s, in, t, o, MT_EV_MON_RELEASE, 0);
			hd->rh--;
		}
		if (!--hd->h)
			drop_hold(s, t, hd, in->ts, 0);
		break;
	case MT_EV_MON_WAIT_BEGIN:
		t->waiting = true;
		t->wait_lock = o->key;
		t->wait_kind = in->aux;
		t->wait_timeout = in->v[0];
		if (want) {
			sync_out(s, in, t, o, MT_EV_MON_WAIT_BEGIN, 0);
			t->rwaiting = true;
		}
		break;
	case MT_EV_MON_WAIT_END:
		if (!t->waiting || t->wait_lock != o->key) {
			s->st.dropped++;
			return;
		}
		if (t->rwaiting)
			sync_out(s, in, t, o, MT_EV_MON_WAIT_END, 0);
		t->waiting = t->rwaiting = false;
		break;
	}
}

void sequencer_feed(struct mt_seq *s, const struct mt_ev *e)
{
	if (e->kind != MT_EV_LOST) /* a count of events that never arrived */
		s->st.in++;
	switch (e->kind) {
	case MT_EV_TYPE_CREATE:
	case MT_EV_TYPE_LOAD:
	case MT_EV_TYPE_RECLAIM:
		feed_type(s, e);
		break;
	case MT_EV_OBJ_CREATE:
	case MT_EV_OBJ_RECLAIM:
		feed_obj(s, e);
		break;
	case MT_EV_THREAD_CREATE:
	case MT_EV_THREAD_RENAME:
	case MT_EV_THREAD_DESTROY:
		feed_thread(s, e);
		break;
	case MT_EV_INV_ENTER:
	case MT_EV_INV_LEAVE:
		feed_inv(s, e);
		break;
	case MT_EV_POOL_USAGE:
	case MT_EV_GC_CAUSE:
		feed_pool(s, e);
		break;
	case MT_EV_ALLOC_SAMPLE:
		feed_alloc(s, e);
		break;
	case MT_EV_MON_ACQUIRE:
	case MT_EV_MON_RELEASE:
	case MT_EV_MON_WAIT_BEGIN:
	case MT_EV_MON_WAIT_END:
		feed_sync(s, e);
		break;
	case MT_EV_REF:
		feed_ref(s, e);
		break;
	case MT_EV_LOST:
		sequencer_gap(s, e->ts, e->v[0], e->aux);
		break;
	default:
		s->st.dropped++;
		break;
	}
}

/* ---- control ---- */

void sequencer_pause(struct mt_seq *s, bool paused)
{
	s->paused = paused;
}

bool sequencer_paused(const struct mt_seq *s)
{
	return s->paused;
}

void sequencer_pause_thread(struct mt_seq *s, uint64_t tid, bool paused)
{
	if (paused)
		idmap_put(&s->paused_tids, tid, (void *)1);
	else
		idmap_del(&s->paused_tids, tid);
}

void sequencer_gap(struct mt_seq *s, uint64_t ts, uint64_t lost, unsigned source)
{
	struct mt_ev e = { .ts = ts, .kind = MT_EV_LOST, .aux = source };

	e.v[0] = lost;
	s->st.lost += lost;
	out(s, &e);
	for (size_t i = 0; i < idmap_slots(&s->threads); i++) {
		struct s_thread *t;

		if (!idmap_used(&s->threads, i))
			continue;
		t = idmap_val_at(&s->threads, i);
		end_wait(s, t, ts, MT_EVF_RESYNC);
		drop_all_holds(s, t, ts, MT_EVF_RESYNC);
		leave_all(s, t, ts, MT_EVF_RESYNC);
	}
}

void sequencer_resync_threads(struct mt_seq *s, uint64_t ts, const struct sequencer_thread_info *live,
			size_t n)
{
	struct idmap alive;
	uint64_t *gone = NULL;
	size_t ngone = 0;

	idmap_init(&alive);
	for (size_t i = 0; i < n; i++)
		idmap_put(&alive, live[i].tid, (void *)&live[i]);
	if (s->threads.n)
		gone = malloc(s->threads.n * sizeof(*gone));
	for (size_t i = 0; gone && i < idmap_slots(&s->threads); i++)
		if (idmap_used(&s->threads, i) && !idmap_get(&alive, idmap_key_at(&s->threads, i)))
			gone[ngone++] = idmap_key_at(&s->threads, i);
	for (size_t i = 0; i < ngone; i++)
		thread_destroy(s, idmap_get(&s->threads, gone[i]), ts, MT_EVF_RESYNC);
	free(gone);
	for (size_t i = 0; i < n; i++) {
		struct s_thread *t = idmap_get(&s->threads, live[i].tid);

		if (t) {
			if (live[i].name && !t->name) {
				t->name = live[i].name;
				t->pass = thread_pass(s, t);
			}
			continue;
		}
		t = thread_new(s, live[i].tid, live[i].name, ts);
		if (t)
			t->made = MT_EVF_RESYNC;
		if (t && cat_on(s, MT_CAT_THREAD) && thread_on(s, t)) {
			struct mt_ev e = { .ts = ts, .kind = MT_EV_THREAD_CREATE,
					   .flags = MT_EVF_RESYNC, .thread = t->tid,
					   .id = t->tid, .name = t->name, .uid = t->uid };

			out(s, &e);
			t->reported = true;
		}
	}
	idmap_free(&alive);
}

void sequencer_resync_types(struct mt_seq *s, uint64_t ts, const struct sequencer_type_info *live,
		      size_t n)
{
	bool want = !s->paused && cat_on(s, MT_CAT_TYPE);
	struct idmap alive;
	uint64_t *gone = NULL;
	size_t ngone = 0;

	idmap_init(&alive);
	for (size_t i = 0; i < n; i++)
		if (!idmap_get(&alive, live[i].key))
			idmap_put(&alive, live[i].key, (void *)&live[i]);
	/* gone, or the identity now names another class */
	if (s->types.n)
		gone = malloc(s->types.n * sizeof(*gone));
	for (size_t i = 0; gone && i < idmap_slots(&s->types); i++) {
		const struct sequencer_type_info *l;
		struct s_type *t;

		if (!idmap_used(&s->types, i))
			continue;
		t = idmap_val_at(&s->types, i);
		l = idmap_get(&alive, t->key);
		if (!l || (l->name && t->name && l->name != t->name))
			gone[ngone++] = t->key;
	}
	for (size_t i = 0; i < ngone; i++)
		type_reclaim(s, idmap_get(&s->types, gone[i]), ts, MT_EVF_RESYNC);
	free(gone);
	for (size_t i = 0; i < idmap_slots(&alive); i++) {
		const struct sequencer_type_info *l;
		struct s_type *t;

		if (!idmap_used(&alive, i))
			continue;
		l = idmap_val_at(&alive, i);
		t = idmap_get(&s->types, l->key);
		if (t) {
			if (l->name && !t->name) { /* inferred before: now we know its name */
				t->name = l->name;
				t->pass = glob_pass(s->class_glob, s, t->name);
			}
			if (!t->loaded)
				t->load_made = MT_EVF_RESYNC;
			t->loaded = true;
			continue;
		}
		t = type_new(s, l->key, l->name, 0, ts);
		if (!t)
			continue;
		t->loaded = true;
		t->made = t->load_made = MT_EVF_RESYNC;
		if (want && t->pass) {
			struct mt_ev e = { .ts = ts, .kind = MT_EV_TYPE_CREATE, .flags = MT_EVF_RESYNC,
					   .id = t->key, .name = t->name, .uid = t->uid };

			out(s, &e);
			t->rep_create = true;
			out_simple(s, MT_EV_TYPE_LOAD, MT_EVF_RESYNC, ts, 0, t->key, 0);
			t->rep_load = true;
		}
	}
	idmap_free(&alive);
}

const struct sequencer_stats *sequencer_stats(const struct mt_seq *s)
{
	return &s->st;
}

uint64_t sequencer_observed_out(const struct sequencer_stats *st)
{
	return st->out - st->inferred - st->resync - st->names - st->markers;
}

uint64_t sequencer_unreported(const struct sequencer_stats *st)
{
	return st->in - sequencer_observed_out(st) - st->absorbed - st->dropped;
}

/* ---- lifetime ---- */

struct mt_seq *sequencer_new(const struct mt_seq_filter *f, sequencer_emit_fn emit, void *ctx)
{
	struct mt_seq *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->emit = emit;
	s->ctx = ctx;
	s->cats = f && f->cats ? f->cats : MT_CAT_ALL;
	idmap_init(&s->tid_filter);
	idmap_init(&s->paused_tids);
	idmap_init(&s->name_index);
	idmap_init(&s->types);
	idmap_init(&s->objs);
	idmap_init(&s->threads);
	if (f) {
		s->sample = f->sample;
		if (f->class_glob && !(s->class_glob = strdup(f->class_glob)))
			goto err;
		if (f->thread_glob && !(s->thread_glob = strdup(f->thread_glob)))
			goto err;
		for (size_t i = 0; i < f->ntids; i++)
			if (idmap_put(&s->tid_filter, f->tids[i], (void *)1))
				goto err;
	}
	return s;
err:
	sequencer_free(s);
	errno = ENOMEM;
	return NULL;
}

void sequencer_free(struct mt_seq *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < idmap_slots(&s->threads); i++) {
		struct s_thread *t;

		if (!idmap_used(&s->threads, i))
			continue;
		t = idmap_val_at(&s->threads, i);
		idmap_free_vals(&t->holds);
		free(t->inv);
	}
	idmap_free_vals(&s->threads);
	idmap_free_vals(&s->types);
	idmap_free_vals(&s->objs);
	for (size_t i = 1; i <= s->nnames; i++)
		free(s->names[i].text);
	free(s->names);
	idmap_free(&s->name_index);
	idmap_free(&s->tid_filter);
	idmap_free(&s->paused_tids);
	free(s->class_glob);
	free(s->thread_glob);
	free(s);
}
