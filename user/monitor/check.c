// SPDX-License-Identifier: GPL-2.0
/* check.c - the consumer's view of a reported stream, and rules 1-5 on it. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "monitor/check.h"
#include "lib/idmap.h"
#include "monitor/sequencer.h"

#define TYPE_CREATED ((void *)1)
#define TYPE_LOADED ((void *)2)

struct c_thread {
	uint64_t depth;          /* open invocations */
	int waiting;
	uint64_t wait_lock;
	struct idmap holds;      /* lock -> (uintptr_t) count */
};

struct mt_check {
	check_fn fn;
	void *ctx;
	struct idmap names, types, objs, threads;
	struct idmap lockuse;    /* lock -> (uintptr_t) holds + waits by any thread */
	uint64_t count[6];
};

static void viol(struct mt_check *c, uint64_t pos, int rule, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void viol(struct mt_check *c, uint64_t pos, int rule, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	c->count[rule]++;
	c->count[0]++;
	if (c->fn)
		c->fn(c->ctx, pos, rule, msg);
}

struct mt_check *check_new(check_fn fn, void *ctx)
{
	struct mt_check *c = calloc(1, sizeof(*c));

	if (!c) {
		errno = ENOMEM;
		return NULL;
	}
	c->fn = fn;
	c->ctx = ctx;
	return c;
}

static void thread_free(struct c_thread *t)
{
	idmap_free(&t->holds);
	free(t);
}

void check_free(struct mt_check *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < idmap_slots(&c->threads); i++)
		if (idmap_used(&c->threads, i))
			thread_free(idmap_val_at(&c->threads, i));
	idmap_free(&c->threads);
	idmap_free(&c->names);
	idmap_free(&c->types);
	idmap_free(&c->objs);
	idmap_free(&c->lockuse);
	free(c);
}

uint64_t check_count(const struct mt_check *c, int rule)
{
	return rule >= 0 && rule <= 5 ? c->count[rule] : 0;
}

static void lockuse_add(struct mt_check *c, uint64_t lock, int d)
{
	uintptr_t n = (uintptr_t)idmap_get(&c->lockuse, lock) + d;

	if (n)
		idmap_put(&c->lockuse, lock, (void *)n);
	else
		idmap_del(&c->lockuse, lock);
}

static const char *kname(const struct mt_ev *e)
{
	const char *k = sequencer_ev_kind_name(e->kind);

	return k ? k : "?";
}

/* Rule 2 for the thread an event happens on; NULL when not alive. */
static struct c_thread *need_thread(struct mt_check *c, uint64_t pos, const struct mt_ev *e)
{
	struct c_thread *t = idmap_get(&c->threads, e->thread);

	if (!t)
		viol(c, pos, 2, "%s on thread %llu, which is not alive in the stream", kname(e),
		     (unsigned long long)e->thread);
	return t;
}

static void need_type(struct mt_check *c, uint64_t pos, const struct mt_ev *e, uint64_t key)
{
	void *st = idmap_get(&c->types, key);

	if (st != TYPE_LOADED)
		viol(c, pos, 2, "%s refers to type 0x%llx, which is %s", kname(e),
		     (unsigned long long)key, st ? "created but not loaded" : "not alive");
}

static bool need_obj(struct mt_check *c, uint64_t pos, const struct mt_ev *e, uint64_t key)
{
	if (idmap_get(&c->objs, key))
		return true;
	viol(c, pos, 2, "%s refers to object 0x%llx, which is not alive in the stream", kname(e),
	     (unsigned long long)key);
	return false;
}

static void need_name(struct mt_check *c, uint64_t pos, const struct mt_ev *e, uint64_t id)
{
	if (id && !idmap_get(&c->names, id))
		viol(c, pos, 2, "%s uses name id %llu before its definition", kname(e),
		     (unsigned long long)id);
}

static void check_sync(struct mt_check *c, uint64_t pos, const struct mt_ev *e)
{
	struct c_thread *t = need_thread(c, pos, e);
	bool obj = need_obj(c, pos, e, e->id);
	uintptr_t h;

	if (!t || !obj)
		return;
	h = (uintptr_t)idmap_get(&t->holds, e->id);
	if (e->kind != MT_EV_MON_WAIT_END && t->waiting) {
		viol(c, pos, 5, "%s by thread %llu while it waits for 0x%llx", kname(e),
		     (unsigned long long)e->thread, (unsigned long long)t->wait_lock);
		return;
	}
	switch (e->kind) {
	case MT_EV_MON_ACQUIRE:
		idmap_put(&t->holds, e->id, (void *)(h + 1));
		lockuse_add(c, e->id, 1);
		break;
	case MT_EV_MON_RELEASE:
		if (!h) {
			viol(c, pos, 5, "thread %llu releases 0x%llx, which it does not hold",
			     (unsigned long long)e->thread, (unsigned long long)e->id);
			return;
		}
		if (h == 1)
			idmap_del(&t->holds, e->id);
		else
			idmap_put(&t->holds, e->id, (void *)(h - 1));
		lockuse_add(c, e->id, -1);
		break;
	case MT_EV_MON_WAIT_BEGIN:
		t->waiting = 1;
		t->wait_lock = e->id;
		lockuse_add(c, e->id, 1);
		break;
	case MT_EV_MON_WAIT_END:
		if (!t->waiting || t->wait_lock != e->id) {
			viol(c, pos, 5, "thread %llu ends a wait for 0x%llx it did not begin",
			     (unsigned long long)e->thread, (unsigned long long)e->id);
			return;
		}
		t->waiting = 0;
		lockuse_add(c, e->id, -1);
		break;
	}
}

static void check_thread(struct mt_check *c, uint64_t pos, const struct mt_ev *e)
{
	struct c_thread *t = idmap_get(&c->threads, e->id);

	switch (e->kind) {
	case MT_EV_THREAD_CREATE:
		if (t) {
			viol(c, pos, 3, "thread %llu created again: its destruction was not reported",
			     (unsigned long long)e->id);
			return;
		}
		t = calloc(1, sizeof(*t));
		if (t)
			idmap_put(&c->threads, e->id, t);
		break;
	case MT_EV_THREAD_RENAME:
		if (!t)
			viol(c, pos, 2, "rename of thread %llu, which is not alive",
			     (unsigned long long)e->id);
		break;
	case MT_EV_THREAD_DESTROY:
		if (!t) {
			viol(c, pos, 1, "thread %llu destroyed but its creation was not reported",
			     (unsigned long long)e->id);
			return;
		}
		if (t->depth)
			viol(c, pos, 3, "thread %llu destroyed with %llu invocations open whose "
			     "leave was not reported", (unsigned long long)e->id,
			     (unsigned long long)t->depth);
		if (t->waiting || t->holds.n)
			viol(c, pos, 5, "thread %llu destroyed while it %s", (unsigned long long)e->id,
			     t->waiting ? "waits for a monitor" : "holds monitors");
		for (size_t i = 0; i < idmap_slots(&t->holds); i++)
			if (idmap_used(&t->holds, i))
				lockuse_add(c, idmap_key_at(&t->holds, i), -(int)(uintptr_t)idmap_val_at(&t->holds, i));
		if (t->waiting)
			lockuse_add(c, t->wait_lock, -1);
		idmap_del(&c->threads, e->id);
		thread_free(t);
		break;
	}
}

void check_feed(struct mt_check *c, uint64_t pos, const struct mt_ev *e)
{
	struct c_thread *t;
	void *st;

	if (e->kind == MT_EV_NAME) {
		idmap_put(&c->names, e->id, (void *)1);
		return;
	}
	need_name(c, pos, e, e->name);
	need_name(c, pos, e, e->name2);
	switch (e->kind) {
	case MT_EV_TYPE_CREATE:
		if (idmap_get(&c->types, e->id))
			viol(c, pos, 3, "type 0x%llx created again: its reclamation was not reported",
			     (unsigned long long)e->id);
		idmap_put(&c->types, e->id, TYPE_CREATED);
		break;
	case MT_EV_TYPE_LOAD:
		st = idmap_get(&c->types, e->id);
		if (st != TYPE_CREATED)
			viol(c, pos, 1, "type 0x%llx %s", (unsigned long long)e->id,
			     st ? "loaded twice" : "loaded before its creation was reported");
		else
			idmap_put(&c->types, e->id, TYPE_LOADED);
		break;
	case MT_EV_TYPE_RECLAIM:
		if (!idmap_del(&c->types, e->id))
			viol(c, pos, 1, "type 0x%llx reclaimed but its creation was not reported",
			     (unsigned long long)e->id);
		break;
	case MT_EV_OBJ_CREATE:
		if (idmap_get(&c->objs, e->id))
			viol(c, pos, 3, "object 0x%llx created again: its reclamation was not reported",
			     (unsigned long long)e->id);
		if (e->ref)
			need_type(c, pos, e, e->ref);
		idmap_put(&c->objs, e->id, (void *)1);
		break;
	case MT_EV_OBJ_RECLAIM:
		if (!idmap_del(&c->objs, e->id)) {
			viol(c, pos, 1, "object 0x%llx reclaimed but its creation was not reported",
			     (unsigned long long)e->id);
			break;
		}
		if (idmap_get(&c->lockuse, e->id))
			viol(c, pos, 5, "object 0x%llx reclaimed while a thread holds or waits for it",
			     (unsigned long long)e->id);
		break;
	case MT_EV_THREAD_CREATE:
	case MT_EV_THREAD_RENAME:
	case MT_EV_THREAD_DESTROY:
		check_thread(c, pos, e);
		break;
	case MT_EV_INV_ENTER:
		t = need_thread(c, pos, e);
		if (!t)
			break;
		if (e->aux > t->depth)
			viol(c, pos, 4, "invocation at depth %u on thread %llu: its parent (depth %llu) "
			     "was not reported", e->aux, (unsigned long long)e->thread,
			     (unsigned long long)t->depth);
		else if (e->aux < t->depth)
			viol(c, pos, 3, "invocation at depth %u on thread %llu: %llu open invocations "
			     "were left without their leave reported", e->aux,
			     (unsigned long long)e->thread, (unsigned long long)(t->depth - e->aux));
		t->depth = (uint64_t)e->aux + 1;
		break;
	case MT_EV_INV_LEAVE:
		t = need_thread(c, pos, e);
		if (!t)
			break;
		if (!t->depth) {
			viol(c, pos, 1, "leave on thread %llu with no invocation entered",
			     (unsigned long long)e->thread);
			break;
		}
		if (e->aux != t->depth - 1)
			viol(c, pos, 4, "leave of depth %u on thread %llu whose innermost invocation "
			     "is at depth %llu", e->aux, (unsigned long long)e->thread,
			     (unsigned long long)(t->depth - 1));
		t->depth--;
		break;
	case MT_EV_POOL_USAGE:
	case MT_EV_GC_CAUSE:
		if (e->thread)
			need_thread(c, pos, e);
		break;
	case MT_EV_ALLOC_SAMPLE:
		if (e->thread)
			need_thread(c, pos, e);
		if (e->ref)
			need_type(c, pos, e, e->ref);
		break;
	case MT_EV_REF:
		need_obj(c, pos, e, e->id);
		need_obj(c, pos, e, e->ref);
		break;
	case MT_EV_MON_ACQUIRE:
	case MT_EV_MON_RELEASE:
	case MT_EV_MON_WAIT_BEGIN:
	case MT_EV_MON_WAIT_END:
		check_sync(c, pos, e);
		break;
	default:
		break;
	}
}
