// SPDX-License-Identifier: GPL-2.0
/* leaks.c - rank (site, class) groups by the growth of old live bytes. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "leaks.h"

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
	uint64_t x = (uint64_t)site << 32 | cls;

	x ^= x >> 31;
	x *= 0x9e3779b97f4a7c15ull;
	x ^= x >> 29;
	return x;
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
	l->g[l->n] = (struct mt_leak){ .site = site, .cls = cls };
	l->tab[i] = (uint32_t)l->n + 1;
	return &l->g[l->n++];
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

static int cmp_leak(const void *pa, const void *pb)
{
	const struct mt_leak *a = pa, *b = pb;

	if (a->suspect != b->suspect)
		return b->suspect - a->suspect;
	if (a->suspect && a->growth_lo != b->growth_lo)
		return a->growth_lo < b->growth_lo ? 1 : -1;
	if (a->growth != b->growth)
		return a->growth < b->growth ? 1 : -1;
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
		g->suspect = g->z >= MT_LEAK_Z && g->growth_lo > 0 && g->growth > 0;
		suspects += g->suspect;
	}
	qsort(l->g, l->n, sizeof(*l->g), cmp_leak);
	/* the order changed: the hash index is stale, drop it */
	free(l->tab);
	l->tab = NULL;
	l->tab_cap = 0;
	return suspects;
}
