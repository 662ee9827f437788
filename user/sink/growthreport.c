// SPDX-License-Identifier: GPL-2.0
/* growthreport.c - the leak answer, printed (see growthreport.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sink/growthreport.h"
#include "lib/util.h"

#define SITES_SHOWN 3

/* A sampled object of the session found under a holder. */
struct found {
	int32_t holder;
	uint32_t site;
	uint32_t cls;
};

struct site_count {
	uint32_t site;
	uint32_t n;
};

static int by_id(const void *a, const void *b)
{
	const struct mt_ap_hsampled *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int by_sample(const void *a, const void *b)
{
	const struct mt_sample *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static int by_site(const void *a, const void *b)
{
	const struct site_count *x = a, *y = b;

	return (x->site > y->site) - (x->site < y->site);
}

static int by_n(const void *a, const void *b)
{
	const struct site_count *x = a, *y = b;

	return x->n < y->n ? 1 : x->n > y->n ? -1 : (x->site > y->site) - (x->site < y->site);
}

/* The session's sampled objects the last snapshot found, each with the holder
 * its place belongs to (-1 none) and its site: *@out, *@n. */
static int found_samples(const struct heapseries *s, struct mt_samples *m, struct found **out,
			 size_t *n)
{
	const struct dsl_heap *h = &s->hv.heap;
	struct mt_ap_hsampled *sam = NULL;
	struct mt_sample *byid = NULL;
	size_t k = 0, ns = s->snap.nsampled;

	*out = NULL;
	*n = 0;
	if (!m || !ns || !s->have_last)
		return 0;
	sam = malloc(ns * sizeof(*sam));
	byid = malloc((m->n + 1) * sizeof(*byid));
	*out = calloc(ns, sizeof(**out));
	if (!sam || !byid || !*out) {
		free(sam);
		free(byid);
		free(*out);
		*out = NULL;
		return -ENOMEM;
	}
	memcpy(sam, s->snap.sampled, ns * sizeof(*sam));
	qsort(sam, ns, sizeof(*sam), by_id);
	memcpy(byid, m->s, m->n * sizeof(*byid));
	qsort(byid, m->n, sizeof(*byid), by_sample);
	for (uint32_t o = 0; o < h->nobjects; o++) { /* each object once: its id sampled? */
		struct mt_ap_hsampled key = { .id = h->objects[o].id }, *f;
		struct mt_sample skey, *sm;

		f = bsearch(&key, sam, ns, sizeof(key), by_id);
		if (!f)
			continue;
		skey.id = f->sample;
		sm = bsearch(&skey, byid, m->n, sizeof(skey), by_sample);
		if (!sm)
			continue;
		(*out)[k++] = (struct found){ .holder = heapgrowth_holder_of(s->growth, o),
					      .site = sm->site, .cls = sm->cls };
	}
	*n = k;
	free(sam);
	free(byid);
	return 0;
}

/* The sites of the sampled objects under holder @hi, most first; when none
 * is under it, of the session's live samples of its classes: *@sc, *@n,
 * *@under (true: found under it). */
static int holder_sites(const struct heapgrowth_holder *hd, int32_t hi, const struct found *f,
			size_t nf, struct mt_samples *m, struct site_count **sc, size_t *n,
			bool *under)
{
	struct site_count *v = calloc(nf + (m ? m->n : 0) + 1, sizeof(*v));
	size_t k = 0;

	*sc = v;
	*n = 0;
	*under = true;
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < nf; i++)
		if (f[i].holder == hi)
			v[k++].site = f[i].site;
	if (!k && m) { /* by class: its growing classes' live samples, anywhere */
		*under = false;
		for (size_t i = 0; i < m->n; i++) {
			const char *cn = samples_class_name(m, m->s[i].cls);

			for (uint32_t c = 0; cn && c < hd->nclasses; c++)
				if (!strcmp(cn, hd->classes[c].name)) {
					v[k++].site = m->s[i].site;
					break;
				}
		}
	}
	/* count by site: sorted by site, runs collapsed, then most first */
	qsort(v, k, sizeof(*v), by_site);
	{
		size_t u = 0;

		for (size_t i = 0; i < k; i++) {
			if (u && v[u - 1].site == v[i].site) {
				v[u - 1].n++;
				continue;
			}
			v[u].site = v[i].site;
			v[u++].n = 1;
		}
		k = u;
	}
	qsort(v, k, sizeof(*v), by_n);
	*n = k;
	return 0;
}

static void print_ages(const struct heapgrowth_result *r, const struct heapgrowth_holder *h,
		       bool json)
{
	uint32_t K = r->nsnaps;

	if (json)
		printf(",\"ages\":[");
	else
		printf("    ages  ");
	for (uint32_t k = 1; k < K; k++) {
		int64_t gain = (int64_t)h->count[k] - (int64_t)h->count[k - 1];
		uint64_t gcs = r->gcs[K - 1] - r->gcs[k];

		if (json)
			printf("%s{\"born_from_s\":%.1f,\"born_to_s\":%.1f,\"objects\":%lld,"
			       "\"gcs_survived\":%llu}", k > 1 ? "," : "", r->t[k - 1], r->t[k],
			       (long long)gain, (unsigned long long)gcs);
		else
			printf("%s%+lld born %.0f-%.0f s, alive after %llu GC%s", k > 1 ? "; " : "",
			       (long long)gain, r->t[k - 1], r->t[k], (unsigned long long)gcs,
			       gcs == 1 ? "" : "s");
	}
	printf(json ? "]" : "\n");
}

static void print_sites(const struct site_count *sc, size_t n, bool under, struct mt_samples *m,
			bool json)
{
	uint32_t total = 0;

	for (size_t i = 0; i < n; i++)
		total += sc[i].n;
	if (json) {
		printf(",\"sites_from\":\"%s\",\"sites\":[", !m ? "none" : under ? "objects_under_holder"
							     : "samples_of_its_classes");
		for (size_t i = 0; i < n && i < SITES_SHOWN; i++) {
			printf("%s{\"samples\":%u,\"site\":", i ? "," : "", sc[i].n);
			json_str(stdout, samples_site_name(m, sc[i].site));
			printf("}");
		}
		printf("]");
		return;
	}
	if (!m)
		return;
	if (!n) {
		printf("    sites none sampled (no sampled object of its classes lived to the end)\n");
		return;
	}
	printf("    sites %s (samples: %u):\n", under ? "where its objects were allocated, from "
		"the sampled ones found under it" : "where its classes' objects were allocated "
		"(no sampled object was found under it)", total);
	for (size_t i = 0; i < n && i < SITES_SHOWN; i++)
		printf("          %4u  %s\n", sc[i].n, samples_site_name(m, sc[i].site));
}

static void print_holder(const struct heapgrowth_result *r, const struct heapgrowth_holder *h,
			 int rank, const struct growthreport_src *src, const struct site_count *sc,
			 size_t nsc, bool under)
{
	uint32_t K = r->nsnaps;
	double span = r->t[K - 1] - r->t[0];
	char b1[32], b2[32], b3[32];

	if (src->json) {
		printf("{\"event\":\"leak\",\"pid\":%d,\"rank\":%d,\"holder\":", src->pid, rank);
		json_str(stdout, h->path);
		printf(",\"holder_class\":");
		json_str(stdout, h->cls);
		printf(",\"objects_gained\":%lld,\"bytes_gained\":%lld,\"seconds\":%.1f,"
		       "\"intervals_grown\":%u,\"intervals\":%u,\"chance_if_fluctuating\":%.3g",
		       (long long)h->growth, (long long)h->bytes, span, h->intervals, K - 1,
		       h->chance);
		printf(",\"counts\":[");
		for (uint32_t k = 0; k < K; k++)
			printf("%s%llu", k ? "," : "", (unsigned long long)h->count[k]);
		printf("]");
		if (h->one_object && h->retained[K - 1])
			printf(",\"retained_first\":%llu,\"retained_last\":%llu",
			       (unsigned long long)h->retained[0],
			       (unsigned long long)h->retained[K - 1]);
		printf(",\"classes\":[");
		for (uint32_t c = 0; c < h->nclasses; c++) {
			printf("%s{\"class\":", c ? "," : "");
			json_str(stdout, h->classes[c].name);
			printf(",\"gained\":%lld,\"bytes\":%lld,\"at\":",
			       (long long)h->classes[c].growth, (long long)h->classes[c].bytes);
			json_str(stdout, h->classes[c].place);
			printf(",\"counts\":[");
			for (uint32_t k = 0; k < K; k++)
				printf("%s%llu", k ? "," : "",
				       (unsigned long long)h->classes[c].count[k]);
			printf("]}");
		}
		printf("]");
		print_ages(r, h, true);
		print_sites(sc, nsc, under, src->m, true);
		printf("}\n");
		return;
	}
	printf("#%d  %s\n", rank, h->path);
	printf("    %+lld objects, %s in %.1f s (%.1f objects/s), growing in %u of %u intervals\n",
	       (long long)h->growth, fmt_bytes(h->bytes > 0 ? (uint64_t)h->bytes : 0, b1,
					       sizeof(b1)),
	       span, span > 0 ? (double)h->growth / span : 0, h->intervals, K - 1);
	printf("    (a count that only fluctuates does that with chance 1 in %.0f)\n",
	       1 / h->chance);
	if (h->one_object && h->retained[K - 1])
		printf("    retained %s -> %s\n", fmt_bytes(h->retained[0], b2, sizeof(b2)),
		       fmt_bytes(h->retained[K - 1], b3, sizeof(b3)));
	for (uint32_t c = 0; c < h->nclasses && c < 6; c++)
		printf("    %s %+8lld %-40s (%s)\n", c ? "     " : "grew ",
		       (long long)h->classes[c].growth, h->classes[c].name, h->classes[c].place);
	if (h->nclasses > 6)
		printf("          ... %u classes in all\n", h->nclasses);
	print_ages(r, h, false);
	print_sites(sc, nsc, under, src->m, false);
}

int growthreport_print(const struct heapgrowth_result *r, const struct heapseries *s,
		       const struct growthreport_src *src)
{
	struct found *f = NULL;
	size_t nf = 0;
	uint32_t K = r->nsnaps;
	char b1[32], b2[32];
	int shown = 0;

	if (found_samples(s, src->m, &f, &nf)) {
		p_err("out of memory");
		return -ENOMEM;
	}
	if (src->json) {
		printf("{\"event\":\"leaks\",\"pid\":%d,\"seconds\":%.1f,\"snapshots\":%u,"
		       "\"pause_ms_total\":%.3f,\"pause_ms_max\":%.3f,\"objects\":%llu,"
		       "\"gcs\":%llu,\"places\":%llu,\"growing_places\":%llu,\"suspects\":%u}\n",
		       src->pid, r->t[K - 1] - r->t[0], K, (double)s->pause_ns / 1e6,
		       (double)s->max_pause_ns / 1e6, (unsigned long long)s->objects_last,
		       (unsigned long long)(r->gcs[K - 1] - r->gcs[0]),
		       (unsigned long long)r->groups, (unsigned long long)r->growing_groups,
		       r->nholders);
		printf("{\"event\":\"snapshots\",\"t\":[");
		for (uint32_t k = 0; k < K; k++)
			printf("%s%.3f", k ? "," : "", r->t[k]);
		printf("],\"gcs\":[");
		for (uint32_t k = 0; k < K; k++)
			printf("%s%llu", k ? "," : "", (unsigned long long)r->gcs[k]);
		printf("],\"at_mono_ns\":[");
		for (uint32_t k = 0; k < K; k++)
			printf("%s%llu", k ? "," : "", (unsigned long long)s->at_ns[k]);
		printf("],\"objects\":[");
		for (uint32_t k = 0; k < K; k++)
			printf("%s%llu", k ? "," : "", (unsigned long long)s->objects[k]);
		printf("]}\n");
	} else {
		printf("JVM %d: %u heap snapshots over %.1f s (%llu GCs meanwhile; the JVM paused %s "
		       "in all, %s at most), %llu live objects at the end\n", src->pid, K,
		       r->t[K - 1] - r->t[0], (unsigned long long)(r->gcs[K - 1] - r->gcs[0]),
		       fmt_ns(s->pause_ns, b1, sizeof(b1)), fmt_ns(s->max_pause_ns, b2, sizeof(b2)),
		       (unsigned long long)s->objects_last);
		if (!r->nholders)
			printf("no leak: nothing grew in every interval (%llu places of objects "
			       "compared)\n", (unsigned long long)r->groups);
		else
			printf("%u holder%s of growth (objects that grew in every interval, by "
			       "who holds them; most objects gained first):\n\n", r->nholders,
			       r->nholders == 1 ? "" : "s");
	}
	for (uint32_t i = 0; i < r->nholders && (uint64_t)shown < src->top; i++) {
		struct site_count *sc = NULL;
		size_t nsc = 0;
		bool under;

		if (holder_sites(&r->holders[i], (int32_t)i, f, nf, src->m, &sc, &nsc, &under)) {
			free(f);
			p_err("out of memory");
			return -ENOMEM;
		}
		print_holder(r, &r->holders[i], (int)i + 1, src, sc, nsc, under);
		if (!src->json)
			printf("\n");
		free(sc);
		shown++;
	}
	free(f);
	return shown;
}
