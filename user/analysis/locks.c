// SPDX-License-Identifier: GPL-2.0
/* locks.c - contention per monitor and class, the wait graph, deadlocks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/idmap.h"
#include "analysis/locks.h"
#include "lib/util.h"

struct lk {
	uint64_t key, type, owner;
	uint64_t contended, wait_ns, wait_max;   /* blocked entering */
	uint64_t waits, notify_ns;               /* Object.wait */
};

struct th {
	uint64_t tid, name;
	bool waiting;
	uint32_t kind;
	uint64_t lock, since;
};

struct locks {
	struct idmap names;    /* id -> char* */
	struct idmap types;    /* type key -> name id */
	struct idmap objs;     /* lock -> struct lk */
	struct idmap threads;  /* tid -> struct th */
	uint64_t nsync;
};

struct locks *locks_new(void)
{
	return calloc(1, sizeof(struct locks));
}

void locks_free(struct locks *l)
{
	if (!l)
		return;
	idmap_free_vals(&l->names);
	idmap_free_vals(&l->objs);
	idmap_free_vals(&l->threads);
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
		if (e->aux == MT_WAIT_NOTIFY && k->owner == t->tid)
			k->owner = 0; /* Object.wait() lets go of the monitor */
		break;
	case MT_EV_MON_WAIT_END:
		if (t->waiting && t->lock == e->id) {
			uint64_t d = e->ts > t->since ? e->ts - t->since : 0;

			if (t->kind == MT_WAIT_ENTER) {
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

static const char *thread_name(const struct locks *l, uint64_t tid)
{
	const struct th *t = idmap_get(&l->threads, tid);

	return t ? name_of(l, t->name) : "";
}

struct cls {
	const char *name;
	uint64_t monitors, contended, wait_ns, wait_max, waits, notify_ns;
};

static int cls_cmp(const void *a, const void *b)
{
	const struct cls *x = a, *y = b;

	return x->wait_ns < y->wait_ns ? 1 : x->wait_ns > y->wait_ns ? -1 : strcmp(x->name, y->name);
}

/* The owner of @k: from the stream, else from the JVM (*jvm set). */
static uint64_t owner_of(const struct lk *k, locks_owner_fn fn, void *ctx, bool *jvm)
{
	*jvm = false;
	if (k->owner)
		return k->owner;
	if (!fn)
		return 0;
	*jvm = true;
	return fn(ctx, k->key);
}

int locks_print(struct locks *l, uint64_t now, bool json, locks_owner_fn fn, void *ctx)
{
	struct cls *cls = calloc(l->objs.n + 1, sizeof(*cls));
	size_t ncls = 0, nthreads = l->threads.n;
	struct th **blocked = calloc(nthreads + 1, sizeof(*blocked));
	uint64_t *edge_to = calloc(nthreads + 1, sizeof(*edge_to));
	size_t nb = 0;
	int deadlocks = 0;
	char a[32], b[32], c[32];

	if (!cls || !blocked || !edge_to)
		goto out;
	/* per class */
	for (size_t i = 0; i < idmap_slots(&l->objs); i++) {
		struct lk *k;
		const char *name;
		size_t j;

		if (!idmap_used(&l->objs, i))
			continue;
		k = idmap_val_at(&l->objs, i);
		if (!k->contended && !k->waits)
			continue;
		name = class_of(l, k);
		for (j = 0; j < ncls; j++)
			if (!strcmp(cls[j].name, name))
				break;
		if (j == ncls)
			cls[ncls++].name = name;
		cls[j].monitors++;
		cls[j].contended += k->contended;
		cls[j].wait_ns += k->wait_ns;
		if (k->wait_max > cls[j].wait_max)
			cls[j].wait_max = k->wait_max;
		cls[j].waits += k->waits;
		cls[j].notify_ns += k->notify_ns;
	}
	qsort(cls, ncls, sizeof(*cls), cls_cmp);
	if (!json)
		printf("contended monitors by class (blocked entering; Object.wait):\n");
	for (size_t j = 0; j < ncls; j++) {
		if (json) {
			printf("{\"event\":\"lock_class\",\"class\":");
			json_str(stdout, cls[j].name);
			printf(",\"monitors\":%llu,\"contended\":%llu,\"wait_ns\":%llu,\"wait_max_ns\":%llu,"
			       "\"object_waits\":%llu,\"object_wait_ns\":%llu}\n",
			       (unsigned long long)cls[j].monitors, (unsigned long long)cls[j].contended,
			       (unsigned long long)cls[j].wait_ns, (unsigned long long)cls[j].wait_max,
			       (unsigned long long)cls[j].waits, (unsigned long long)cls[j].notify_ns);
		} else {
			printf("  %-40s %4llu monitors  %6llu contended  blocked %10s (max %s)  "
			       "Object.wait %llu (%s)\n",
			       cls[j].name, (unsigned long long)cls[j].monitors,
			       (unsigned long long)cls[j].contended, fmt_ns(cls[j].wait_ns, a, sizeof(a)),
			       fmt_ns(cls[j].wait_max, b, sizeof(b)), (unsigned long long)cls[j].waits,
			       fmt_ns(cls[j].notify_ns, c, sizeof(c)));
		}
	}
	if (!json && !ncls)
		printf("  (none)\n");

	/* the wait graph: threads blocked entering a monitor -> its owner */
	for (size_t i = 0; i < idmap_slots(&l->threads); i++) {
		struct th *t;

		if (!idmap_used(&l->threads, i))
			continue;
		t = idmap_val_at(&l->threads, i);
		if (t->waiting && t->kind == MT_WAIT_ENTER)
			blocked[nb++] = t;
	}
	if (!json)
		printf("wait graph (threads blocked now -> owner):\n");
	for (size_t i = 0; i < nb; i++) {
		struct th *t = blocked[i];
		struct lk *k = idmap_get(&l->objs, t->lock);
		bool jvm = false;
		uint64_t owner = k ? owner_of(k, fn, ctx, &jvm) : 0;

		edge_to[i] = owner;
		if (json) {
			printf("{\"event\":\"wait_edge\",\"tid\":%llu,\"thread\":",
			       (unsigned long long)t->tid);
			json_str(stdout, thread_name(l, t->tid));
			printf(",\"monitor\":\"0x%llx\",\"class\":", (unsigned long long)t->lock);
			json_str(stdout, k ? class_of(l, k) : "");
			printf(",\"owner_tid\":%llu,\"owner\":", (unsigned long long)owner);
			json_str(stdout, owner ? thread_name(l, owner) : "");
			/* where the owner is known from: its (contended) entry, or the JVM */
			printf(",\"owner_from\":\"%s\"", !owner ? "" : jvm ? "jvm" : "stream");
			printf(",\"blocked_ns\":%llu}\n",
			       (unsigned long long)(now > t->since ? now - t->since : 0));
		} else {
			printf("  \"%s\" (tid %llu) -> monitor 0x%llx (%s) owned by ",
			       thread_name(l, t->tid), (unsigned long long)t->tid,
			       (unsigned long long)t->lock, k ? class_of(l, k) : "?");
			if (owner)
				printf("\"%s\" (tid %llu%s)", thread_name(l, owner),
				       (unsigned long long)owner,
				       jvm ? ", entered uncontended: read from the JVM" : "");
			else
				printf("(owner unknown)");
			printf(", blocked %s\n",
			       fmt_ns(now > t->since ? now - t->since : 0, a, sizeof(a)));
		}
	}
	if (!json && !nb)
		printf("  (no thread is blocked on a monitor)\n");

	/* cycles: each blocked thread has one edge; walk from each */
	for (size_t i = 0; i < nb; i++) {
		size_t cur = i, steps = 0, path[64];
		bool cycle = false, smallest = true;

		while (steps < 64) {
			size_t nxt = nb;

			path[steps++] = cur;
			for (size_t j = 0; j < nb; j++)
				if (blocked[j]->tid == edge_to[cur])
					nxt = j;
			if (nxt == nb)
				break;
			if (nxt == i) {
				cycle = true;
				break;
			}
			cur = nxt;
		}
		if (!cycle)
			continue;
		/* report each cycle once: from its member with the smallest tid */
		for (size_t s = 0; s < steps; s++)
			if (blocked[path[s]]->tid < blocked[i]->tid)
				smallest = false;
		if (!smallest)
			continue;
		deadlocks++;
		if (json) {
			printf("{\"event\":\"deadlock\",\"threads\":[");
			for (size_t s = 0; s < steps; s++) {
				struct th *t = blocked[path[s]];
				struct lk *k = idmap_get(&l->objs, t->lock);

				printf("%s{\"tid\":%llu,\"thread\":", s ? "," : "",
				       (unsigned long long)t->tid);
				json_str(stdout, thread_name(l, t->tid));
				printf(",\"waits_for\":\"0x%llx\",\"class\":", (unsigned long long)t->lock);
				json_str(stdout, k ? class_of(l, k) : "");
				printf("}");
			}
			printf("]}\n");
		} else {
			printf("DEADLOCK: %zu threads wait for each other:\n", steps);
			for (size_t s = 0; s < steps; s++) {
				struct th *t = blocked[path[s]];
				struct lk *k = idmap_get(&l->objs, t->lock);

				printf("  \"%s\" (tid %llu) waits for monitor 0x%llx (%s) held by \"%s\"\n",
				       thread_name(l, t->tid), (unsigned long long)t->tid,
				       (unsigned long long)t->lock, k ? class_of(l, k) : "?",
				       thread_name(l, edge_to[path[s]]));
			}
		}
	}
out:
	free(cls);
	free(blocked);
	free(edge_to);
	return deadlocks;
}
