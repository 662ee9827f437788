// SPDX-License-Identifier: GPL-2.0
/* objrec.c - object-sampling lines of a recording: written from the agent's
 * records, replayed into the live analyses' sample store (objrec.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "monitor/objrec.h"
#include "lib/util.h"

struct objrec_stack {
	uint32_t n;
	struct mt_ap_frame f[];
};

struct objrec_writer {
	struct recording_writer *w;
	struct idmap by_hash;            /* frames hash (probed) -> stack index + 1 */
	struct objrec_stack **stacks;
	size_t nstacks, cap;
	int err;
};

/* ---- writing ---- */

struct objrec_writer *objrec_writer_new(struct recording_writer *w)
{
	struct objrec_writer *ow = calloc(1, sizeof(*ow));

	if (!ow) {
		errno = ENOMEM;
		return NULL;
	}
	ow->w = w;
	idmap_init(&ow->by_hash);
	return ow;
}

void objrec_writer_free(struct objrec_writer *ow)
{
	if (!ow)
		return;
	for (size_t i = 0; i < ow->nstacks; i++)
		free(ow->stacks[i]);
	free(ow->stacks);
	idmap_free(&ow->by_hash);
	free(ow);
}

int objrec_writer_err(const struct objrec_writer *ow)
{
	return ow->err;
}

static void put(struct objrec_writer *ow, const struct recording_side *s)
{
	int err = recording_write_side(ow->w, s);

	if (err && !ow->err)
		ow->err = err;
}

static uint64_t frames_hash(const struct mt_ap_frame *f, uint32_t n)
{
	uint64_t h = 1469598103934665603ull ^ n;

	for (uint32_t i = 0; i < n; i++) {
		h = (h ^ f[i].method) * 1099511628211ull;
		h = (h ^ (uint32_t)f[i].line) * 1099511628211ull;
	}
	return h;
}

/* The id of stack @f (written now if new), 0 on failure. */
static uint64_t stack_id(struct objrec_writer *ow, const struct mt_ap_frame *f, uint32_t n)
{
	uint64_t key = frames_hash(f, n);
	struct objrec_stack *s;
	struct recording_side *sd;
	uintptr_t v;

	for (; (v = (uintptr_t)idmap_get(&ow->by_hash, key)); key++) {
		s = ow->stacks[v - 1];
		if (s->n == n && !memcmp(s->f, f, n * sizeof(*f)))
			return v;
	}
	if (ow->nstacks == ow->cap) {
		size_t ncap = ow->cap ? 2 * ow->cap : 256;
		struct objrec_stack **t = realloc(ow->stacks, ncap * sizeof(*t));

		if (!t)
			goto nomem;
		ow->stacks = t;
		ow->cap = ncap;
	}
	s = malloc(sizeof(*s) + n * sizeof(*f));
	sd = calloc(1, sizeof(*sd));
	if (!s || !sd || idmap_put(&ow->by_hash, key, (void *)(uintptr_t)(ow->nstacks + 1))) {
		free(s);
		free(sd);
		goto nomem;
	}
	s->n = n;
	memcpy(s->f, f, n * sizeof(*f));
	ow->stacks[ow->nstacks++] = s;
	sd->kind = REC_SIDE_STACK;
	sd->id = ow->nstacks;
	sd->nfr = n;
	memcpy(sd->fr, f, n * sizeof(*f));
	put(ow, sd);
	free(sd);
	return ow->nstacks;
nomem:
	if (!ow->err)
		ow->err = -ENOMEM;
	return 0;
}

static void tap_started(void *ctx, const struct mt_ap_sample_started *st)
{
	struct recording_side s = { .kind = REC_SIDE_OSESSION, .ts = st->start_ns, .nv = 3,
			      .v = { st->first_id, st->interval, st->max_depth } };

	put(ctx, &s);
}

static void tap_method(void *ctx, uint32_t id, const char *name)
{
	struct recording_side s = { .kind = REC_SIDE_METHOD, .id = id, .s = name };

	put(ctx, &s);
}

static void tap_alloc(void *ctx, const struct mt_ap_alloc *a, const struct mt_ap_frame *f)
{
	struct objrec_writer *ow = ctx;
	uint32_t n = a->depth < MT_AP_MAX_DEPTH ? a->depth : MT_AP_MAX_DEPTH;
	struct recording_side s = { .kind = REC_SIDE_OSTACK, .id = a->id };

	s.st = stack_id(ow, f, n);
	if (s.st)
		put(ow, &s);
}

static void tap_gc(void *ctx, const struct mt_ap_gc *g)
{
	struct recording_side s = { .kind = REC_SIDE_OGC, .ts = g->end_ns, .nv = 2,
			      .v = { g->gc_no, g->next_id } };

	put(ctx, &s);
}

static void tap_stats(void *ctx, const struct mt_ap_sample_stats *a)
{
	struct recording_side s = { .kind = REC_SIDE_OSTATS, .nv = 8,
			      .v = { a->sampled, a->dropped_allocs, a->dropped_frees,
				     a->dropped_gcs, a->frees, a->gcs, a->tag_errors,
				     a->names_dropped } };

	put(ctx, &s);
}

void objrec_writer_tap(struct objrec_writer *ow, struct objstream_tap *t)
{
	*t = (struct objstream_tap){ .started = tap_started, .method = tap_method,
				     .alloc = tap_alloc, .gc = tap_gc, .stats = tap_stats,
				     .ctx = ow };
}

int objrec_writer_volumes(struct objrec_writer *ow, const struct mt_site_volumes *v)
{
	struct recording_side s = { .kind = REC_SIDE_SITEVOL, .nv = 2 };

	for (size_t i = 0; i < v->n; i++) {
		s.s = v->v[i].method;
		s.v[0] = v->v[i].bytes;
		s.v[1] = v->v[i].refills;
		put(ow, &s);
	}
	s = (struct recording_side){ .kind = REC_SIDE_SITEVOLS, .sec = v->seconds, .nv = 6,
			       .v = { v->keys, v->all_bytes, v->overflow_bytes,
				      v->overflow_refills, v->noframe_bytes, v->unnamed_bytes } };
	put(ow, &s);
	return ow->err;
}

/* ---- replay ---- */

void objrec_replay_init(struct objrec_replay *r, uint64_t min_age, uint64_t end_ns)
{
	memset(r, 0, sizeof(*r));
	leaks_init(&r->l, min_age);
	r->end_ns = end_ns;
}

void objrec_replay_free(struct objrec_replay *r)
{
	leaks_free(&r->l);
	samples_free(&r->m);
	sitevol_free(&r->vol);
	idmap_free_vals(&r->names);
	idmap_free_vals(&r->stacks);
	idmap_free(&r->types);
	idmap_free(&r->cls);
	idmap_free(&r->pending);
	idmap_free(&r->live);
	memset(r, 0, sizeof(*r));
}

static void fail(struct objrec_replay *r, int err)
{
	if (!r->err)
		r->err = err;
}

static double secs(const struct objrec_replay *r, uint64_t ts)
{
	return ts > r->t0_ns ? (double)(ts - r->t0_ns) / 1e9 : 0;
}

/* Before anything timed @ts is applied: mark the window's middle once passed. */
static void at(struct objrec_replay *r, uint64_t ts)
{
	int err;

	if (!r->have_session || r->l.have_mid || ts < r->mid_ns)
		return;
	err = leaks_mark_mid(&r->l, &r->m, secs(r, r->mid_ns));
	if (err)
		fail(r, err);
}

static void session(struct objrec_replay *r, const struct recording_side *s)
{
	int err;

	if (r->have_session)
		return; /* one agent session per recording */
	err = samples_init(&r->m, s->v[0], (uint32_t)s->v[1], 0);
	if (err) {
		fail(r, err);
		return;
	}
	r->m.on_alloc = leaks_on_alloc;
	r->m.on_alloc_ctx = &r->l;
	r->have_session = true;
	r->t0_ns = s->ts;
	if (r->end_ns < r->t0_ns)
		r->end_ns = r->t0_ns;
	r->mid_ns = r->t0_ns + (r->end_ns - r->t0_ns) / 2;
}

void objrec_replay_side(void *ctx, const struct recording_side *s)
{
	struct objrec_replay *r = ctx;
	struct objrec_stack *st;

	switch (s->kind) {
	case REC_SIDE_OSESSION:
		session(r, s);
		break;
	case REC_SIDE_METHOD:
		if (r->have_session && s->id <= UINT32_MAX &&
		    samples_name(&r->m, MT_AP_REC_METHOD, (uint32_t)s->id, s->s) == -ENOMEM)
			fail(r, -ENOMEM);
		break;
	case REC_SIDE_STACK:
		st = malloc(sizeof(*st) + s->nfr * sizeof(st->f[0]));
		if (!st) {
			fail(r, -ENOMEM);
			break;
		}
		st->n = s->nfr;
		memcpy(st->f, s->fr, s->nfr * sizeof(st->f[0]));
		free(idmap_del(&r->stacks, s->id));
		if (idmap_put(&r->stacks, s->id, st)) {
			free(st);
			fail(r, -ENOMEM);
		}
		break;
	case REC_SIDE_OSTACK:
		if (idmap_put(&r->pending, s->id, (void *)(uintptr_t)(s->st + 1)))
			fail(r, -ENOMEM);
		break;
	case REC_SIDE_OGC:
		if (r->have_session) {
			struct mt_ap_gc g = { .gc_no = s->v[0], .next_id = s->v[1],
					      .end_ns = s->ts };

			at(r, s->ts);
			samples_gc(&r->m, &g);
		}
		break;
	case REC_SIDE_OSTATS:
		if (r->have_session) {
			struct mt_ap_sample_stats *a = &r->m.agent;

			*a = (struct mt_ap_sample_stats){
				.sampled = s->v[0], .dropped_allocs = s->v[1],
				.dropped_frees = s->v[2], .dropped_gcs = s->v[3], .frees = s->v[4],
				.gcs = s->v[5], .tag_errors = s->v[6], .names_dropped = s->v[7] };
			r->m.have_agent_stats = true;
		}
		break;
	case REC_SIDE_SITEVOL:
		if (sitevol_add(&r->vol, s->s, s->v[0], s->v[1]))
			fail(r, -ENOMEM);
		break;
	case REC_SIDE_SITEVOLS:
		r->vol.seconds = s->sec;
		r->vol.keys = (size_t)s->v[0];
		r->vol.all_bytes = s->v[1];
		r->vol.overflow_bytes = s->v[2];
		r->vol.overflow_refills = s->v[3];
		r->vol.noframe_bytes = s->v[4];
		r->vol.unnamed_bytes = s->v[5];
		r->have_vol = true;
		break;
	default:
		break;
	}
}

/* The sample store's class index of the class type @key names (0: unknown). */
static uint32_t class_of(struct objrec_replay *r, uint64_t key)
{
	uint64_t name = (uintptr_t)idmap_get(&r->types, key);
	uintptr_t idx;
	const char *s;

	if (!name || !(s = idmap_get(&r->names, name)))
		return 0;
	idx = (uintptr_t)idmap_get(&r->cls, name);
	if (idx)
		return (uint32_t)(idx - 1);
	idx = ++r->ncls; /* index 0 stays "<unknown class>" */
	if (samples_name(&r->m, MT_AP_REC_CLASS, (uint32_t)idx, s) ||
	    idmap_put(&r->cls, name, (void *)(uintptr_t)(idx + 1))) {
		fail(r, -ENOMEM);
		return 0;
	}
	return (uint32_t)idx;
}

static void obj_create(struct objrec_replay *r, const struct mt_ev *e)
{
	uintptr_t st = (uintptr_t)idmap_del(&r->pending, e->id);
	const struct objrec_stack *s = st ? idmap_get(&r->stacks, st - 1) : NULL;
	struct mt_ap_alloc a = { .id = e->id, .size = e->v[0], .ts_ns = e->ts };
	int err;

	/* a sample of the agent: sized (monitors are not), after the session */
	if (!r->have_session || !e->v[0] || !e->id)
		return;
	if (!st && e->id < r->m.first_id)
		return; /* not one of this session's ids */
	at(r, e->ts);
	if (!s)
		r->no_stack++;
	a.depth = s ? s->n : 0;
	err = samples_alloc(&r->m, class_of(r, e->ref), &a, s ? s->f : NULL);
	if (!err)
		err = idmap_put(&r->live, e->id, (void *)1);
	if (err)
		fail(r, err);
	r->samples++;
}

void objrec_replay_event(struct objrec_replay *r, const struct mt_ev *e, const char *text)
{
	char *dup;

	switch (e->kind) {
	case MT_EV_NAME:
		dup = strdup(text ? text : "");
		free(idmap_del(&r->names, e->id));
		if (!dup || idmap_put(&r->names, e->id, dup)) {
			free(dup);
			fail(r, -ENOMEM);
		}
		break;
	case MT_EV_TYPE_CREATE:
		if (idmap_put(&r->types, e->id, (void *)(uintptr_t)e->name))
			fail(r, -ENOMEM);
		break;
	case MT_EV_OBJ_CREATE:
		obj_create(r, e);
		break;
	case MT_EV_OBJ_RECLAIM:
		if (r->have_session && idmap_del(&r->live, e->id)) {
			at(r, e->ts);
			samples_free_id(&r->m, e->id);
		}
		break;
	default:
		break;
	}
}

double objrec_replay_window(const struct objrec_replay *r)
{
	return secs(r, r->end_ns);
}

int objrec_replay_finish(struct objrec_replay *r)
{
	double end = objrec_replay_window(r);
	int n;

	if (r->err)
		return r->err;
	if (!r->have_session)
		return -ENOENT;
	if (!r->l.have_mid) {
		r->mid_at_end = true;
		if (leaks_mark_mid(&r->l, &r->m, end))
			return -ENOMEM;
	}
	n = leaks_rank(&r->l, &r->m, end);
	if (n >= 0 && r->have_vol && leaks_match_volumes(&r->l, &r->m, &r->vol, end) < 0)
		n = -ENOMEM;
	return n;
}
