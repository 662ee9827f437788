// SPDX-License-Identifier: GPL-2.0
/*
 * leaks_sampled.c - `memtrace leaks --sampled`: the sample-based ranking
 * (before heap snapshots were cheap, the leak answer): (allocation site,
 * class) pairs ranked by the growth of their old live bytes (samples that
 * survived >= K GCs) over the second half of the window, each with the
 * samples behind it, estimated live bytes and a 95% interval, growth rate
 * and a confidence; the statistics are described in analysis/leaks.h.
 * Unless --no-site-counters, BPF counts allocation volume per site
 * meanwhile (sitecount.h) and each group shows its allocation rate and the
 * fraction of its allocated bytes that survived. With --paths, when the
 * window ends (sampling still on, so the samples' tags alive) one heap walk
 * finds up to PATHS_PER_GROUP live samples of every group (the agent finds
 * them by their sampling tags, the walk stays untagged), and each suspect
 * gets the shortest reference chain from a GC root to one of them.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/leaks_sampled.h"
#include "analysis/leaks.h"
#include "heap/heaphisto.h"
#include "heap/heapview.h"
#include "heap/snaptake.h"
#include "sink/heapreport.h"
#include "sink/objreport.h"
#include "agentctl/sampling.h"
#include "probe/sitecount.h"
#include "lib/util.h"

#define PATHS_PER_GROUP 8 /* live samples of a group looked for in the walk */

/* --paths: the walk and what it found. */
struct leak_paths {
	struct mt_snapshot snap;
	bool have;                 /* the walk was taken */
	struct mt_heapview hv;
	uint64_t *ids;             /* the sample ids asked for */
	uint32_t nids;
	/* sample id -> object index in hv, sorted by sample */
	struct { uint64_t sample; uint32_t obj; } *found;
	size_t nfound;
	struct mt_samples *m;
};

struct leaks_ctx {
	struct mt_leaks l;
	double t_mid;
	int err;
	bool counters;             /* --no-site-counters not given */
	struct sitecount *sc;      /* BPF per-site counters, NULL if unavailable */
	struct mt_site_volumes vol;
	bool have_vol;
	bool want_paths;           /* --paths */
	struct leak_paths paths;
	struct mt_snapshot hsnap;  /* without --paths: a histogram walk at the end */
	struct heaphisto hh;       /* live bytes per class at the end (either walk) */
	bool have_hh;
	const struct cmdopt *co;   /* --top, --max-pause (consent to a walk in a pause) */
};

/* The live bytes of class @cls in the walk at the end, -1 if unknown. */
static double class_bytes(void *ctx, const char *cls)
{
	const struct heaphisto *hh = ctx;

	for (size_t i = 0; i < hh->n; i++)
		if (!strcmp(hh->rows[i].name, cls))
			return (double)hh->rows[i].bytes;
	return 0; /* none live */
}


/* Every arriving sample: its group's allocation estimate. */
static void on_alloc(void *ctx, uint32_t site, uint32_t cls, double weight)
{
	leaks_on_alloc(&((struct leaks_ctx *)ctx)->l, site, cls, weight);
}

/* Sampling started: count allocation volume per site from now on. */
static int on_start(void *ctx, const struct mt_proc *p)
{
	struct leaks_ctx *c = ctx;

	if (!c->counters)
		return 0;
	c->sc = sitecount_new(p); /* printed why not */
	if (!c->sc)
		p_warn("continuing without per-site allocation counters (allocation rates "
		       "are not shown)");
	return 0;
}

/* The window ended: read the counters before the session winds down. */
static void on_end(void *ctx, const struct mt_proc *p, double elapsed)
{
	struct leaks_ctx *c = ctx;

	if (!c->sc)
		return;
	if (sitecount_read(c->sc, p, 1, &c->vol))
		p_warn("out of memory reading the per-site allocation counters");
	else
		c->have_vol = true;
	sitecount_free(c->sc);
	c->sc = NULL;
}

static int cmp_pick(const void *a, const void *b)
{
	const struct mt_sample *x = *(struct mt_sample *const *)a, *y = *(struct mt_sample *const *)b;

	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	if (x->cls != y->cls)
		return x->cls < y->cls ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* Frames that arrive during the walk: the sampling session's EVENTS. */
static int feed(void *ctx, const struct mt_ap_hdr *h, const void *payload)
{
	if (h->type == MT_AP_EVENTS && samples_feed(ctx, payload, h->len) == -ENOMEM)
		return -ENOMEM;
	return 0;
}

/* Without --paths, the window over and sampling stopped (a walk inside the
 * sampling session let the agent's ring overflow meanwhile): one frozen
 * histogram walk in a session of its own, so that no estimate says more
 * than the heap holds (leaks_cap_live()). */
static void histo_walk(struct leaks_ctx *c, const struct mt_proc *p)
{
	struct mt_snapsession ss;
	int err;

	if (snaptake_open(p, &ss)) {
		p_warn("no heap walk at the end: live estimates are the samples' alone");
		return;
	}
	err = snaptake_take(&ss, MT_AP_HEAP_COUNTS | (c->co->has_max_pause ? MT_AP_HEAP_MAXPAUSE : 0),
			    (uint32_t)c->co->max_pause, NULL, 0, &c->hsnap);
	snaptake_close(&ss);
	if (err) {
		/* -ECANCELED: a walk in a pause over the limit, refused (said) */
		p_warn("no heap walk at the end: live estimates are the samples' alone");
		return;
	}
	snapshot_print_walk(&c->hsnap);
	c->have_hh = !heaphisto_build(&c->hsnap, &c->hh);
}

/* --paths, the window over: one heap walk that finds the oldest live samples
 * of every group (PATHS_PER_GROUP each, MT_AP_HEAP_MAX_SAMPLES in all). */
static int on_last(void *ctx, const struct mt_proc *p, struct mt_agentsock *so,
		   struct mt_samples *m)
{
	struct leaks_ctx *c = ctx;
	struct leak_paths *lp = &c->paths;
	struct mt_snapsession ss;
	const struct mt_sample **v;
	uint32_t run = 0;
	int err;

	if (!c->want_paths || !m->n)
		return 0;
	v = malloc(m->n * sizeof(*v));
	lp->ids = malloc(MT_AP_HEAP_MAX_SAMPLES * sizeof(*lp->ids));
	if (!v || !lp->ids) {
		free(v);
		p_warn("out of memory: no paths");
		return 0;
	}
	for (size_t i = 0; i < m->n; i++)
		v[i] = &m->s[i];
	qsort(v, m->n, sizeof(*v), cmp_pick);
	for (size_t i = 0; i < m->n && lp->nids < MT_AP_HEAP_MAX_SAMPLES; i++) {
		run = i && v[i]->site == v[i - 1]->site && v[i]->cls == v[i - 1]->cls ? run + 1 : 0;
		if (run < PATHS_PER_GROUP)
			lp->ids[lp->nids++] = v[i]->id;
	}
	free(v);
	if (snaptake_attach(p, so, &ss))
		return 0;
	ss.samples = lp->ids;
	ss.nsamples = lp->nids;
	ss.on_frame = feed;
	ss.frame_ctx = m;
	err = snaptake_take(&ss, MT_AP_HEAP_REFS | (c->co->has_max_pause ? MT_AP_HEAP_MAXPAUSE : 0),
			    (uint32_t)c->co->max_pause, NULL, 0, &lp->snap);
	snaptake_close(&ss);
	if (err) { /* printed; the agent closes the session after an error */
		p_warn("no paths: the heap walk failed (an agent that predates --paths refuses "
		       "the request)");
		return -1;
	}
	snapshot_print_walk(&lp->snap);
	lp->have = true;
	c->have_hh = !heaphisto_build(&lp->snap, &c->hh);
	return 0;
}

static int cmp_found(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* After the window: the heap of the walk, and which object each sample is. */
static int paths_index(struct leak_paths *lp)
{
	struct dsl_needs none = { 0 };
	const struct dsl_heap *h;
	char why[160];
	int err;

	err = heapview_build_take(&lp->snap, &none, &lp->hv, why, sizeof(why)); /* records dropped */
	if (!err)
		err = heapview_graph(&lp->hv, HEAPVIEW_PATHS, why, sizeof(why));
	if (err) {
		p_err("cannot build the heap for the paths: %s", why);
		return err;
	}
	h = &lp->hv.heap;
	lp->found = calloc(lp->snap.nsampled + 1, sizeof(*lp->found));
	if (!lp->found)
		return -ENOMEM;
	/* sampled (object id, sample) sorted by object id, met by one pass over the objects */
	qsort(lp->snap.sampled, lp->snap.nsampled, sizeof(*lp->snap.sampled), cmp_found);
	for (uint32_t o = 0; o < h->nobjects; o++) {
		struct mt_ap_hsampled key = { .id = h->objects[o].id }, *s;

		s = bsearch(&key, lp->snap.sampled, lp->snap.nsampled, sizeof(key), cmp_found);
		if (!s)
			continue;
		lp->found[lp->nfound].sample = s->sample;
		lp->found[lp->nfound++].obj = o;
	}
	qsort(lp->found, lp->nfound, sizeof(*lp->found), cmp_found);
	return 0;
}

/* A suspect's path: the shortest among its live samples found in the walk. */
static void suspect_path(void *ctx, int rank, const struct mt_leak *g, bool json)
{
	struct leaks_ctx *c = ctx;
	struct leak_paths *lp = &c->paths;
	uint32_t best = DSL_NOOBJ;
	size_t best_len = SIZE_MAX, asked = 0;
	const char *why = NULL;

	if (!lp->have)
		why = "no heap walk";
	for (size_t i = 0; !why && i < lp->m->n; i++) {
		const struct mt_sample *s = &lp->m->s[i];
		typeof(*lp->found) key = { .sample = s->id }, *f;
		size_t len;

		if (s->site != g->site || s->cls != g->cls)
			continue;
		asked++;
		f = bsearch(&key, lp->found, lp->nfound, sizeof(key), cmp_found);
		if (!f)
			continue;
		len = dsl_root_path(&lp->hv.heap, f->obj, NULL, 0);
		if (len && len < best_len) {
			best_len = len;
			best = f->obj;
		}
	}
	if (!why && best == DSL_NOOBJ)
		why = asked ? "none of its live samples was in the heap walk (they died, or "
			      "were not among those looked for)" : "no live sample";
	if (json) {
		if (why) {
			printf(",\"path\":null,\"path_missing\":");
			json_str(stdout, why);
			return;
		}
		printf(",\"path_object\":%llu,",
		       (unsigned long long)lp->hv.heap.objects[best].id);
		heapreport_path(stdout, &lp->hv, best, true, "");
		return;
	}
	if (why) {
		printf("    path  none: %s\n", why);
		return;
	}
	printf("    path  from a GC root to a live sample (id %llu in the walk), %zu steps:\n",
	       (unsigned long long)lp->hv.heap.objects[best].id, best_len);
	heapreport_path(stdout, &lp->hv, best, false, "          ");
}

/* At the middle of the window: remember which samples are old. */
static int on_tick(void *ctx, struct mt_samples *m, double t)
{
	struct leaks_ctx *c = ctx;

	sitecount_warm(c->sc); /* new sites named while their code lives */
	if (c->l.have_mid || t < c->t_mid)
		return 0;
	c->err = leaks_mark_mid(&c->l, m, t);
	if (c->err)
		p_err("out of memory");
	return c->err;
}

int leaks_sampled_run(struct mt_sampling_opts *o, uint64_t k, bool counters, bool paths,
		      const struct cmdopt *co)
{
	struct leaks_ctx c = { .counters = counters, .want_paths = paths, .co = co };
	struct mt_samples m;
	struct mt_proc p;
	double elapsed;
	int rc, suspects;

	leaks_init(&c.l, k);
	c.t_mid = o->duration / 2;
	o->on_alloc = on_alloc;
	o->on_start = on_start;
	o->on_end = on_end;
	o->on_last = on_last;
	rc = sampling_run(o, &p, &m, on_tick, &c, &elapsed);
	sitecount_free(c.sc); /* if the session ended before on_end */
	if (rc || !m.s) {
		heaphisto_free(&c.hh);
		snapshot_free(&c.hsnap);
		snapshot_free(&c.paths.snap);
		free(c.paths.ids);
		sitevol_free(&c.vol);
		leaks_free(&c.l);
		samples_free(&m);
		return 1;
	}
	if (!c.l.have_mid) {
		/* interrupted before the middle: the first half is all we have */
		p_warn("the window ended before its middle: growth is measured over nothing");
		leaks_mark_mid(&c.l, &m, elapsed);
	}
	suspects = leaks_rank(&c.l, &m, elapsed);
	if (suspects >= 0 && c.have_vol && leaks_match_volumes(&c.l, &m, &c.vol, elapsed) < 0)
		suspects = -ENOMEM;
	if (suspects < 0) {
		p_err("out of memory");
		sitevol_free(&c.vol);
		leaks_free(&c.l);
		samples_free(&m);
		return 1;
	}
	if (!c.want_paths)
		histo_walk(&c, &p);
	if (c.have_hh)
		leaks_cap_live(&c.l, &m, class_bytes, &c.hh);
	if (m.ages.epoch - c.l.epoch_mid < 2)
		p_warn("only %llu GCs in the second half of the window: too few to age objects; use "
		       "a longer --duration", (unsigned long long)(m.ages.epoch - c.l.epoch_mid));
	{
		struct objreport_src src = { .pid = p.pid, .elapsed = elapsed,
					     .json = mt_opts.json };

		if (c.want_paths) {
			c.paths.m = &m;
			if (c.paths.have && paths_index(&c.paths))
				c.paths.have = false;
			src.suspect_more = suspect_path;
			src.more_ctx = &c;
		}
		objreport_leaks(&m, &c.l, c.have_vol ? &c.vol : NULL, &src, suspects, co->top);
	}
	heaphisto_free(&c.hh);
	snapshot_free(&c.hsnap);
	heapview_free(&c.paths.hv);
	snapshot_free(&c.paths.snap);
	free(c.paths.ids);
	free(c.paths.found);
	sitevol_free(&c.vol);
	leaks_free(&c.l);
	samples_free(&m);
	return 0;
}
