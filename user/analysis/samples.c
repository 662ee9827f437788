// SPDX-License-Identifier: GPL-2.0
/* samples.c - decode the agent's sample records into names, sites, live
 * samples and age ranges (see samples.h for the estimator and eviction). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/samples.h"
#include "lib/util.h"

static size_t pow2_at_least(size_t n)
{
	size_t c = 16;

	while (c < n)
		c <<= 1;
	return c;
}

int samples_init(struct mt_samples *m, uint64_t first_id, uint32_t interval, size_t max)
{
	memset(m, 0, sizeof(*m));
	m->max = max ? max : MT_SAMPLES_DEFAULT_MAX;
	m->first_id = first_id;
	m->interval = interval ? interval : MT_AP_DEFAULT_INTERVAL;
	m->rng = 0x9e3779b97f4a7c15ull ^ first_id;
	m->s = calloc(m->max, sizeof(*m->s));
	m->idx_cap = pow2_at_least(m->max * 2);
	m->idx = calloc(m->idx_cap, sizeof(*m->idx));
	if (!m->s || !m->idx || ageranges_init(&m->ages, first_id)) {
		samples_free(m);
		return -ENOMEM;
	}
	return 0;
}

void samples_free(struct mt_samples *m)
{
	for (size_t i = 0; i < m->ncls; i++)
		free(m->classes[i]);
	for (size_t i = 0; i < m->nmeth; i++)
		free(m->methods[i]);
	for (size_t i = 0; i < m->nsites; i++)
		free(m->sites[i].name);
	free(m->classes);
	free(m->methods);
	free(m->sites);
	free(m->site_tab);
	free(m->s);
	free(m->idx);
	ageranges_free(&m->ages);
	memset(m, 0, sizeof(*m));
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

void java_name_of_sig(const char *sig, char *out, size_t n)
{
	static const struct { char c; const char *name; } prim[] = {
		{ 'Z', "boolean" }, { 'B', "byte" }, { 'C', "char" }, { 'S', "short" },
		{ 'I', "int" }, { 'J', "long" }, { 'F', "float" }, { 'D', "double" },
	};
	int dims = 0;
	size_t o = 0;

	while (sig[dims] == '[')
		dims++;
	sig += dims;
	if (*sig == 'L') {
		for (sig++; *sig && *sig != ';' && o + 1 < n; sig++)
			out[o++] = *sig == '/' ? '.' : *sig;
	} else {
		const char *p = NULL;

		for (size_t i = 0; i < MT_ARRAY_SIZE(prim); i++)
			if (prim[i].c == *sig)
				p = prim[i].name;
		for (p = p ? p : sig; *p && o + 1 < n; p++)
			out[o++] = *p;
	}
	for (int i = 0; i < dims && o + 2 < n; i++) {
		out[o++] = '[';
		out[o++] = ']';
	}
	if (n)
		out[o < n ? o : n - 1] = '\0';
}

/* Store name @id in the table *@tab of *@n entries. */
static int put_name(char ***tab, size_t *n, uint32_t id, const char *name)
{
	if (id >= 1u << 20)
		return -EINVAL;
	if (id >= *n) {
		size_t nn = pow2_at_least((size_t)id + 1);
		char **t = realloc(*tab, nn * sizeof(*t));

		if (!t)
			return -ENOMEM;
		memset(t + *n, 0, (nn - *n) * sizeof(*t));
		*tab = t;
		*n = nn;
	}
	free((*tab)[id]);
	(*tab)[id] = strdup(name);
	return (*tab)[id] ? 0 : -ENOMEM;
}

void samples_method_display(const char *cls_sig, const char *name, char *out, size_t n)
{
	char cls[320];

	java_name_of_sig(cls_sig, cls, sizeof(cls));
	snprintf(out, n, "%s.%s", cls, name ? name : "?");
}

int samples_define(struct mt_samples *m, unsigned kind, uint32_t id, const char *a,
		   const char *b)
{
	char buf[512];

	if (kind == MT_AP_REC_CLASS) {
		java_name_of_sig(a, buf, sizeof(buf));
		return put_name(&m->classes, &m->ncls, id, buf);
	}
	samples_method_display(a, b, buf, sizeof(buf));
	return put_name(&m->methods, &m->nmeth, id, buf);
}

int samples_name(struct mt_samples *m, unsigned kind, uint32_t id, const char *name)
{
	if (kind == MT_AP_REC_CLASS)
		return put_name(&m->classes, &m->ncls, id, name);
	return put_name(&m->methods, &m->nmeth, id, name);
}

const char *samples_class_name(const struct mt_samples *m, uint32_t id)
{
	return id < m->ncls && m->classes[id] ? m->classes[id] : "<unknown class>";
}

static const char *method_name(const struct mt_samples *m, uint32_t id)
{
	return id < m->nmeth && m->methods[id] ? m->methods[id] : "<unknown method>";
}

const char *samples_method_name(const struct mt_samples *m, uint32_t id)
{
	return method_name(m, id);
}

/* JDK frames are skipped over when looking for the application's frame. */
static bool jdk_method(const char *name)
{
	static const char *const pfx[] = { "java.", "javax.", "jdk.", "sun.", "com.sun." };

	for (size_t i = 0; i < MT_ARRAY_SIZE(pfx); i++)
		if (!strncmp(name, pfx[i], strlen(pfx[i])))
			return true;
	return false;
}

/* The site of a stack: frames up to and including the first one that is
 * neither JDK code nor a constructor (the application's allocating method). */
static int site_of(struct mt_samples *m, const struct mt_ap_frame *f, uint32_t depth,
		   uint32_t *out)
{
	struct mt_site key = { 0 };
	uint64_t h = 1469598103934665603ull;
	size_t i;

	for (uint32_t k = 0; k < depth && key.n < MT_SITE_MAX_FRAMES; k++) {
		key.f[key.n++] = f[k];
		h = mix(h ^ ((uint64_t)f[k].method << 32 | (uint32_t)f[k].line));
		const char *name = method_name(m, f[k].method);

		if (!jdk_method(name) && !strstr(name, ".<init>") && !strstr(name, ".<clinit>"))
			break;
	}
	key.hash = h;
	if (m->nsites * 2 >= m->site_tab_cap) {
		size_t ncap = m->site_tab_cap ? m->site_tab_cap * 2 : 1024;
		uint32_t *t = calloc(ncap, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (size_t s = 0; s < m->nsites; s++) {
			for (i = m->sites[s].hash & (ncap - 1); t[i]; i = (i + 1) & (ncap - 1))
				;
			t[i] = (uint32_t)s + 1;
		}
		free(m->site_tab);
		m->site_tab = t;
		m->site_tab_cap = ncap;
	}
	for (i = h & (m->site_tab_cap - 1); m->site_tab[i]; i = (i + 1) & (m->site_tab_cap - 1)) {
		struct mt_site *s = &m->sites[m->site_tab[i] - 1];

		if (s->hash == h && s->n == key.n && !memcmp(s->f, key.f, key.n * sizeof(key.f[0]))) {
			*out = m->site_tab[i] - 1;
			return 0;
		}
	}
	if (m->nsites == m->sites_cap) {
		size_t ncap = m->sites_cap ? m->sites_cap * 2 : 256;
		struct mt_site *s = realloc(m->sites, ncap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		m->sites = s;
		m->sites_cap = ncap;
	}
	for (uint32_t k = key.n; k < depth && key.nouter < MT_SITE_OUTER; k++)
		key.outer[key.nouter++] = f[k].method;
	m->sites[m->nsites] = key;
	m->site_tab[i] = (uint32_t)m->nsites + 1;
	*out = (uint32_t)m->nsites++;
	return 0;
}

const char *samples_site_name(struct mt_samples *m, uint32_t site)
{
	struct mt_site *s;
	size_t cap = 1024, o = 0;
	char *b;

	if (site >= m->nsites)
		return "<unknown site>";
	s = &m->sites[site];
	if (s->name)
		return s->name;
	b = malloc(cap);
	if (!b)
		return "<out of memory>";
	b[0] = '\0';
	if (!s->n)
		snprintf(b, cap, "<no Java frames>");
	for (uint32_t k = 0; k < s->n && o < cap; k++) {
		int w;

		if (s->f[k].line >= 0)
			w = snprintf(b + o, cap - o, "%s%s:%d", k ? " < " : "",
				     method_name(m, s->f[k].method), s->f[k].line);
		else
			w = snprintf(b + o, cap - o, "%s%s", k ? " < " : "",
				     method_name(m, s->f[k].method));
		if (w < 0)
			break;
		o += (size_t)w;
	}
	s->name = b;
	return b;
}

double samples_weight(uint64_t size, uint32_t interval)
{
	double x = (double)size / (double)interval;

	if (x <= 0)
		return interval;
	return (double)size / -expm1(-x);
}

double samples_est(const struct mt_samples *m, const struct mt_sample *s)
{
	/* divided by the inclusion probability n/P (1 while everything is tracked) */
	if (m->n && m->pop > m->n)
		return s->weight * (double)m->pop / (double)m->n;
	return s->weight;
}

uint64_t samples_age(const struct mt_samples *m, const struct mt_sample *s)
{
	return ageranges_age(&m->ages, s->id);
}

/* Index helpers: linear probing keyed by id, backward-shift deletion. */
static size_t idx_find(const struct mt_samples *m, uint64_t id)
{
	size_t i = mix(id) & (m->idx_cap - 1);

	while (m->idx[i] && m->s[m->idx[i] - 1].id != id)
		i = (i + 1) & (m->idx_cap - 1);
	return i;
}

static void idx_delete(struct mt_samples *m, size_t i)
{
	size_t j = i;

	m->idx[i] = 0;
	for (;;) {
		size_t k;

		j = (j + 1) & (m->idx_cap - 1);
		if (!m->idx[j])
			return;
		k = mix(m->s[m->idx[j] - 1].id) & (m->idx_cap - 1);
		/* move j back to i unless its home k lies cyclically in (i, j] */
		if ((j > i && (k <= i || k > j)) || (j < i && k <= i && k > j)) {
			m->idx[i] = m->idx[j];
			m->idx[j] = 0;
			i = j;
		}
	}
}

/* Remove the sample in dense slot @slot (its index entry at @ii). */
static void remove_slot(struct mt_samples *m, size_t slot, size_t ii)
{
	idx_delete(m, ii);
	if (slot != m->n - 1) {
		m->s[slot] = m->s[m->n - 1];
		m->idx[idx_find(m, m->s[slot].id)] = (uint32_t)slot + 1;
	}
	m->n--;
}

int samples_alloc(struct mt_samples *m, uint32_t cls, const struct mt_ap_alloc *a,
		  const struct mt_ap_frame *f)
{
	struct mt_sample *s;
	uint32_t site;
	size_t i;
	int err;

	if (!a->id)
		return -EINVAL;
	err = site_of(m, f, a->depth, &site);
	if (err)
		return err;
	if (cls >= m->ncls || !m->classes[cls])
		m->undefined_names++;
	i = idx_find(m, a->id);
	if (m->idx[i])
		return 0; /* a duplicate: keep the first */
	if (m->on_alloc)
		m->on_alloc(m->on_alloc_ctx, site, cls, samples_weight(a->size, m->interval));
	m->allocs++;
	m->pop++;
	m->rng = mix(m->rng + 0x9e3779b97f4a7c15ull);
	if (m->c1 + m->c2) {
		/* random pairing: compensate a death, tracked (keep) or not (skip) */
		if (m->rng % (m->c1 + m->c2) >= m->c1 || m->n == m->max) {
			m->c2 -= m->c2 ? 1 : 0;
			m->evicted++;
			return 0;
		}
		m->c1--;
	} else if (m->n == m->max) {
		/* Algorithm R over the live population */
		uint64_t slot = m->rng % m->pop;

		if (slot >= m->n) {
			m->evicted++;
			return 0;
		}
		remove_slot(m, (size_t)slot, idx_find(m, m->s[slot].id));
		m->evicted++;
		i = idx_find(m, a->id);
	}
	s = &m->s[m->n];
	*s = (struct mt_sample){
		.id = a->id, .size = a->size, .weight = samples_weight(a->size, m->interval),
 .ts_ns = a->ts_ns, .cls = cls, .site = site,
	};
	m->idx[i] = (uint32_t)++m->n;
	return 0;
}

void samples_free_id(struct mt_samples *m, uint64_t id)
{
	size_t i = idx_find(m, id);

	if (m->pop)
		m->pop--;
	if (!m->idx[i]) {
		m->frees_unknown++; /* an untracked (evicted or not kept) sample died */
		if (m->pop >= m->n && m->evicted)
			m->c2++;
		return;
	}
	remove_slot(m, m->idx[i] - 1, i);
	m->frees++;
	if (m->evicted)
		m->c1++;
}

void samples_gc(struct mt_samples *m, const struct mt_ap_gc *g)
{
	uint64_t min_id = UINT64_MAX;

	ageranges_gc(&m->ages, g->next_id);
	m->gcs++;
	m->last_gc_ns = g->end_ns;
	if (m->ages.n > 64) { /* now and then: forget ranges with no live sample */
		for (size_t k = 0; k < m->n; k++)
			if (m->s[k].id < min_id)
				min_id = m->s[k].id;
		if (min_id != UINT64_MAX)
			ageranges_trim(&m->ages, min_id);
	}
}

int samples_feed(struct mt_samples *m, const void *payload, size_t len)
{
	struct mt_ap_rec r;
	const void *body;
	size_t off = 0, blen;
	int rc;

	while ((rc = mt_ap_rec_next(payload, len, &off, &r, &body, &blen)) > 0) {
		switch (r.kind) {
		case MT_AP_REC_CLASS:
			samples_define(m, r.kind, r.arg, body, NULL);
			break;
		case MT_AP_REC_METHOD:
			samples_define(m, r.kind, r.arg, body,
				       (const char *)body + strlen(body) + 1);
			break;
		case MT_AP_REC_ALLOC: {
			struct mt_ap_alloc a;
			struct mt_ap_frame f[MT_AP_MAX_DEPTH];

			memcpy(&a, body, sizeof(a));
			memcpy(f, (const char *)body + sizeof(a), a.depth * sizeof(f[0]));
			if (samples_alloc(m, r.arg, &a, f) == -ENOMEM)
				return -ENOMEM;
			break;
		}
		case MT_AP_REC_FREE:
			for (uint32_t k = 0; k < r.arg; k++) {
				uint64_t id;

				memcpy(&id, (const char *)body + 8 * k, 8);
				samples_free_id(m, id);
			}
			break;
		case MT_AP_REC_GC: {
			struct mt_ap_gc g;

			memcpy(&g, body, sizeof(g));
			samples_gc(m, &g);
			break;
		}
		case MT_AP_REC_STATS:
			memcpy(&m->agent, body, sizeof(m->agent));
			m->have_agent_stats = true;
			break;
		default: /* a newer kind: skip */
			break;
		}
	}
	if (rc < 0) {
		m->bad_records++;
		return -EBADMSG;
	}
	return 0;
}

void poisson_ci95(double k, double *lo, double *hi)
{
	const double z = 1.959964;

	if (k <= 0) {
		*lo = 0;
	} else {
		double t = 1 - 1 / (9 * k) - z / (3 * sqrt(k));

		*lo = k * t * t * t;
	}
	{
		double k1 = k + 1, t = 1 - 1 / (9 * k1) + z / (3 * sqrt(k1));

		*hi = k1 * t * t * t;
	}
}
