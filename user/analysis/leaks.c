// SPDX-License-Identifier: GPL-2.0
/* leaks.c - rank (site, class) groups by the growth of old live bytes. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/leaks.h"
#include "lib/hash.h"
#include "lib/util.h"

void leaks_init(struct mt_leaks *l, uint64_t min_age)
{
	memset(l, 0, sizeof(*l));
	l->min_age = min_age ? min_age : 1;
}

void leaks_free(struct mt_leaks *l)
{
	free(l->g);
	free(l->tab);
	memset(l, 0, sizeof(*l));
}

double leaks_phi(double z)
{
	return 0.5 * erfc(-z / sqrt(2.0));
}

static uint64_t key_hash(uint32_t site, uint32_t cls)
{
	return hash_mix64((uint64_t)site << 32 | cls);
}

/* The group of (@site, @cls), created empty if new. NULL on ENOMEM. */
static struct mt_leak *group(struct mt_leaks *l, uint32_t site, uint32_t cls)
{
	size_t i;

	if (l->n * 2 >= l->tab_cap) {
		size_t ncap = l->tab_cap ? l->tab_cap * 2 : 256;
		uint32_t *t = calloc(ncap, sizeof(*t));

		if (!t)
			return NULL;
		for (size_t k = 0; k < l->n; k++) {
			for (i = key_hash(l->g[k].site, l->g[k].cls) & (ncap - 1); t[i];
			     i = (i + 1) & (ncap - 1))
				;
			t[i] = (uint32_t)k + 1;
		}
		free(l->tab);
		l->tab = t;
		l->tab_cap = ncap;
	}
	for (i = key_hash(site, cls) & (l->tab_cap - 1); l->tab[i]; i = (i + 1) & (l->tab_cap - 1)) {
		struct mt_leak *g = &l->g[l->tab[i] - 1];

		if (g->site == site && g->cls == cls)
			return g;
	}
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 128;
		struct mt_leak *g = realloc(l->g, ncap * sizeof(*g));

		if (!g)
			return NULL;
		l->g = g;
		l->cap = ncap;
	}
	l->g[l->n] = (struct mt_leak){ .site = site, .cls = cls, .alloc_bytes = -1,
				       .survival = -1, .heap_bytes = -1 };
	l->tab[i] = (uint32_t)l->n + 1;
	return &l->g[l->n++];
}

void leaks_wilson95(double p, double n, double *lo, double *hi)
{
	const double z = 1.959964, z2 = z * z;
	double c, h;

	if (n <= 0) {
		*lo = 0;
		*hi = 1;
		return;
	}
	c = (p + z2 / (2 * n)) / (1 + z2 / n);
	h = z * sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n);
	*lo = c - h < 0 ? 0 : c - h;
	*hi = c + h > 1 ? 1 : c + h;
}

int leaks_mark_mid(struct mt_leaks *l, struct mt_samples *m, double t)
{
	for (size_t k = 0; k < m->n; k++) {
		struct mt_sample *s = &m->s[k];

		s->mark = samples_age(m, s) >= l->min_age;
		if (s->mark) {
			struct mt_leak *g = group(l, s->site, s->cls);

			if (!g)
				return -ENOMEM;
			g->n_mid++;
			g->old_bytes_mid += samples_est(m, s);
		}
	}
	l->epoch_mid = m->ages.epoch;
	l->t_mid = t;
	l->have_mid = 1;
	return 0;
}

void leaks_on_alloc(void *ctx, uint32_t site, uint32_t cls, double weight)
{
	struct mt_leaks *l = ctx;
	struct mt_leak *g;

	if (!l->tab_cap && l->n)
		return; /* ranked already: the index is gone */
	g = group(l, site, cls);
	if (g) {
		g->alloc_w += weight;
		g->alloc_n++;
	}
}

static int cmp_leak(const void *pa, const void *pb)
{
	const struct mt_leak *a = pa, *b = pb;

	if (a->suspect != b->suspect)
		return b->suspect - a->suspect;
	if (a->suspect && a->growth_lo != b->growth_lo)
		return a->growth_lo < b->growth_lo ? 1 : -1;
	if (a->growth != b->growth)
		return a->growth < b->growth ? 1 : -1;
	if (a->survival != b->survival)
		return a->survival < b->survival ? 1 : -1;
	if (a->live_bytes != b->live_bytes)
		return a->live_bytes < b->live_bytes ? 1 : -1;
	return a->site != b->site ? (a->site < b->site ? -1 : 1) : (a->cls < b->cls ? -1 : 1);
}

int leaks_rank(struct mt_leaks *l, struct mt_samples *m, double t)
{
	double dt;
	int suspects = 0;

	if (!l->have_mid)
		return -EINVAL;
	l->t_end = t;
	dt = t - l->t_mid;
	for (size_t k = 0; k < m->n; k++) {
		struct mt_sample *s = &m->s[k];
		struct mt_leak *g = group(l, s->site, s->cls);
		double w = samples_est(m, s);

		if (!g)
			return -ENOMEM;
		g->samples++;
		g->live_bytes += w;
		if (samples_age(m, s) >= l->min_age) {
			g->n_end++;
			g->old_bytes_end += w;
			if (!s->mark)
				g->added++;
		}
	}
	for (size_t k = 0; k < l->n; k++) {
		struct mt_leak *g = &l->g[k];
		uint64_t survived = g->n_end - g->added; /* old at mid and still alive */
		double var, mean_w, lo, hi;

		g->removed = g->n_mid > survived ? g->n_mid - survived : 0;
		var = (double)(g->added + g->removed);
		g->z = var > 0 ? ((double)g->added - (double)g->removed) / sqrt(var) : 0;
		g->confidence = var > 0 ? leaks_phi(g->z) : 0;
		g->growth = dt > 0 ? (g->old_bytes_end - g->old_bytes_mid) / dt : 0;
		mean_w = g->n_end ? g->old_bytes_end / (double)g->n_end :
			 g->samples ? g->live_bytes / (double)g->samples : 0;
		g->growth_lo = dt > 0 ? ((double)g->added - (double)g->removed -
					 MT_LEAK_Z * sqrt(var)) * mean_w / dt : 0;
		poisson_ci95((double)g->samples, &lo, &hi);
		mean_w = g->samples ? g->live_bytes / (double)g->samples : 0;
		g->live_lo = lo * mean_w;
		g->live_hi = hi * mean_w;
		/* survival from the samples alone: the old live ones are among all */
		if (g->alloc_w > 0 && g->alloc_n) {
			double p = g->old_bytes_end / g->alloc_w;

			g->survival = p > 1 ? 1 : p;
			leaks_wilson95(g->survival, (double)g->alloc_n, &g->survival_lo,
				       &g->survival_hi);
		}
		g->suspect = g->z >= MT_LEAK_Z && g->growth_lo > 0 && g->growth > 0;
		suspects += g->suspect;
	}
	if (l->n) /* qsort(NULL, 0) is undefined: no groups */
		qsort(l->g, l->n, sizeof(*l->g), cmp_leak);
	/* the order changed: the hash index is stale, drop it */
	free(l->tab);
	l->tab = NULL;
	l->tab_cap = 0;
	return suspects;
}

/* Call @fn for each distinct BPF volume in @site's chain (its frames, then
 * its callers), with the chain position of its first occurrence. */
static void for_each_volume(struct mt_samples *m, uint32_t site, const struct mt_site_volumes *v,
			    void (*fn)(void *arg, size_t vol, int depth), void *arg)
{
	const struct mt_site_volume *seen[MT_SITE_MAX_FRAMES + MT_SITE_OUTER];
	const struct mt_site *s;
	size_t nseen = 0;

	if (site >= m->nsites)
		return;
	s = &m->sites[site];
	for (uint32_t k = 0; k < s->n + s->nouter; k++) {
		uint32_t id = k < s->n ? s->f[k].method : s->outer[k - s->n];
		const struct mt_site_volume *e = sitevol_find(v, samples_method_name(m, id));
		size_t j;

		if (!e)
			continue;
		for (j = 0; j < nseen && seen[j] != e; j++)
			;
		if (j < nseen)
			continue; /* recursion: a method counts once per chain */
		seen[nseen++] = e;
		fn(arg, (size_t)(e - v->v), (int)k);
	}
}

#define CHAIN_MAX (MT_SITE_MAX_FRAMES + MT_SITE_OUTER)
#define FIT_ROUNDS 200

/* The distinct volumes of one group's chain, with what the fit gives each. */
struct chain {
	uint32_t n;
	uint32_t vol[CHAIN_MAX];
	int depth[CHAIN_MAX];
	double p[CHAIN_MAX];   /* share of the group's allocation counted under vol */
};

static void chain_add(void *arg, size_t vol, int depth)
{
	struct chain *c = arg;

	c->vol[c->n] = (uint32_t)vol;
	c->depth[c->n] = depth;
	c->n++;
}

/* B̂(M) = Σ_g a_g p_gM over the groups, into @est. */
static void expected(const struct mt_leaks *l, const struct chain *ch, const double *a,
		     size_t nvol, double *est)
{
	memset(est, 0, nvol * sizeof(*est));
	for (size_t k = 0; k < l->n; k++)
		for (uint32_t j = 0; j < ch[k].n; j++)
			est[ch[k].vol[j]] += a[k] * ch[k].p[j];
}

int leaks_match_volumes(struct mt_leaks *l, struct mt_samples *m,
			const struct mt_site_volumes *v, double window_s)
{
	double *a = NULL, *est = NULL, scale, sum_b = 0, sum_w = 0;
	struct chain *ch = NULL;
	bool *used = NULL;
	int matched = 0;

	if (!l->n || !v->n)
		return 0;
	ch = calloc(l->n, sizeof(*ch));
	a = calloc(l->n, sizeof(*a));
	est = util_big_calloc(v->n, sizeof(*est));
	used = util_big_calloc(v->n, sizeof(*used));
	if (!ch || !a || !est || !used) {
		matched = -ENOMEM;
		goto out;
	}
	/* chains; the volume to share is what some chain contains */
	for (size_t k = 0; k < l->n; k++) {
		for_each_volume(m, l->g[k].site, v, chain_add, &ch[k]);
		if (!ch[k].n || l->g[k].alloc_w <= 0) {
			ch[k].n = 0;
			continue;
		}
		for (uint32_t j = 0; j < ch[k].n; j++) {
			ch[k].p[j] = 1.0 / ch[k].n;
			used[ch[k].vol[j]] = true;
		}
		sum_w += l->g[k].alloc_w;
	}
	for (size_t i = 0; i < v->n; i++)
		sum_b += used[i] ? (double)v->v[i].bytes : 0;
	if (sum_w <= 0 || sum_b <= 0)
		goto out;
	/* a_g: the agent's estimate, calibrated to the BPF total */
	for (size_t k = 0; k < l->n; k++)
		a[k] = ch[k].n ? l->g[k].alloc_w * sum_b / sum_w : 0;
	/* fit p_gM to B(M) = Σ_g a_g p_gM (multiplicative EM updates) */
	for (int r = 0; r < FIT_ROUNDS; r++) {
		expected(l, ch, a, v->n, est);
		for (size_t k = 0; k < l->n; k++) {
			double norm = 0;

			for (uint32_t j = 0; j < ch[k].n; j++) {
				uint32_t i = ch[k].vol[j];

				ch[k].p[j] *= est[i] > 0 ? (double)v->v[i].bytes / est[i] : 0;
				norm += ch[k].p[j];
			}
			for (uint32_t j = 0; j < ch[k].n && norm > 0; j++)
				ch[k].p[j] /= norm;
		}
	}
	expected(l, ch, a, v->n, est);
	/* the counters may have run a little longer than the agent's window */
	scale = v->seconds > window_s && v->seconds > 0 ? window_s / v->seconds : 1.0;
	for (size_t k = 0; k < l->n; k++) {
		struct mt_leak *g = &l->g[k];
		double best = -1;

		if (!ch[k].n)
			continue;
		g->alloc_bytes = g->alloc_refills = 0;
		for (uint32_t j = 0; j < ch[k].n; j++) {
			uint32_t i = ch[k].vol[j];
			double f = est[i] > 0 ? a[k] * ch[k].p[j] / est[i] : 0; /* g's part of M */
			double b = (double)v->v[i].bytes * f;

			g->alloc_bytes += b;
			g->alloc_refills += (double)v->v[i].refills * f;
			if (b > best) {
				best = b;
				g->alloc_method = v->v[i].method;
				g->match_depth = ch[k].depth[j];
			}
		}
		g->alloc_bytes *= scale;
		g->alloc_refills *= scale;
		g->alloc_rate = window_s > 0 ? g->alloc_bytes / window_s : 0;
		matched++;
	}
	qsort(l->g, l->n, sizeof(*l->g), cmp_leak);
out:
	free(ch);
	free(a);
	free(est);
	free(used);
	return matched;
}

void leaks_cap_live(struct mt_leaks *l, struct mt_samples *m,
		    double (*class_bytes)(void *ctx, const char *cls), void *ctx)
{
	for (size_t i = 0; i < l->n; i++) {
		struct mt_leak *g = &l->g[i];
		double h = class_bytes(ctx, samples_class_name(m, g->cls));

		g->heap_bytes = h;
		g->capped = 0;
		if (h < 0)
			continue;
		g->capped = g->live_bytes > h || g->live_hi > h;
		g->live_bytes = g->live_bytes > h ? h : g->live_bytes;
		g->live_lo = g->live_lo > h ? h : g->live_lo;
		g->live_hi = g->live_hi > h ? h : g->live_hi;
	}
}
