// SPDX-License-Identifier: GPL-2.0
/* objreport.c - print the age and leaks analyses (objreport.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "memtrace/sites.h"
#include "sink/objreport.h"
#include "agentctl/sampling.h"
#include "lib/util.h"

struct age_row {
	uint32_t key;
	uint64_t n[MT_AGE_BUCKETS], total;
	double b[MT_AGE_BUCKETS], bytes;
};

static int cmp_row(const void *pa, const void *pb)
{
	const struct age_row *a = pa, *b = pb;

	if (a->bytes != b->bytes)
		return a->bytes < b->bytes ? 1 : -1;
	return a->key < b->key ? -1 : a->key > b->key;
}

/* `"note":"…",` (JSON) when there is one. */
static void json_note(const struct objreport_src *src)
{
	if (!src->note)
		return;
	printf("\"note\":");
	json_str(stdout, src->note);
	printf(",");
}

int objreport_age(struct mt_samples *m, const struct objreport_src *src, bool by_site,
		  uint64_t top)
{
	uint64_t tot_n[MT_AGE_BUCKETS] = { 0 };
	double tot_b[MT_AGE_BUCKETS] = { 0 };
	size_t nrows = by_site ? m->nsites : m->ncls;
	struct age_row *rows = calloc(nrows ? nrows : 1, sizeof(*rows));

	if (!rows) {
		p_err("out of memory");
		return -ENOMEM;
	}
	for (size_t k = 0; k < nrows; k++)
		rows[k].key = (uint32_t)k;
	for (size_t k = 0; k < m->n; k++) {
		const struct mt_sample *s = &m->s[k];
		uint32_t key = by_site ? s->site : s->cls;
		int bk = ageranges_bucket(samples_age(m, s));
		double w = samples_est(m, s);

		if (key >= nrows)
			continue;
		rows[key].n[bk]++;
		rows[key].total++;
		rows[key].b[bk] += w;
		rows[key].bytes += w;
		tot_n[bk]++;
		tot_b[bk] += w;
	}
	qsort(rows, nrows, sizeof(*rows), cmp_row);
	if (src->json) {
		printf("{\"event\":\"age\",\"pid\":%d,", src->pid);
		json_note(src);
		printf("\"by\":\"%s\",\"duration_s\":%.3f,"
		       "\"interval\":%u,\"gcs\":%llu,\"live_samples\":%zu,\"ranges\":%zu,",
		       by_site ? "site" : "class", src->elapsed, m->interval,
		       (unsigned long long)m->gcs, m->n, m->ages.n);
		sampling_json_losses(m);
		printf(",\"buckets\":[");
		for (int b = 0; b < MT_AGE_BUCKETS; b++)
			printf("%s\"%s\"", b ? "," : "", ageranges_bucket_name(b));
		printf("],\"total\":{\"samples\":[");
		for (int b = 0; b < MT_AGE_BUCKETS; b++)
			printf("%s%llu", b ? "," : "", (unsigned long long)tot_n[b]);
		printf("],\"bytes\":[");
		for (int b = 0; b < MT_AGE_BUCKETS; b++)
			printf("%s%.0f", b ? "," : "", tot_b[b]);
		printf("]},\"groups\":[");
		for (size_t k = 0, shown = 0; k < nrows && shown < top; k++) {
			if (!rows[k].total)
				continue;
			printf("%s{\"%s\":", shown++ ? "," : "", by_site ? "site" : "class");
			json_str(stdout, by_site ? samples_site_name(m, rows[k].key) :
				 samples_class_name(m, rows[k].key));
			printf(",\"samples\":%llu,\"live_bytes\":%.0f,\"by_age\":{",
			       (unsigned long long)rows[k].total, rows[k].bytes);
			for (int b = 0; b < MT_AGE_BUCKETS; b++)
				printf("%s\"%s\":{\"samples\":%llu,\"bytes\":%.0f}", b ? "," : "",
				       ageranges_bucket_name(b), (unsigned long long)rows[k].n[b],
				       rows[k].b[b]);
			printf("}}");
		}
		printf("]}\n");
	} else {
		char buf[32];

		sampling_print_losses(m);
		printf("JVM %d: %zu live samples after %.1f s, %llu GCs, interval %u bytes "
		       "(bytes are estimates)\n", src->pid, m->n, src->elapsed,
		       (unsigned long long)m->gcs, m->interval);
		if (src->note)
			printf("note: %s\n", src->note);
		/* objects born since the last GC count as live (age 0): a window
		 * that ends just after a young GC can leave none, and rare
		 * survivors may not have been sampled - say so, not an empty table */
		if (!m->n)
			printf("note: none of the %llu sampled objects is alive at the end (the "
			       "window's %llu GCs collected them all); a longer --duration or a "
			       "smaller --interval samples more survivors\n",
			       (unsigned long long)m->allocs, (unsigned long long)m->gcs);
		printf("%12s", "live");
		for (int b = 0; b < MT_AGE_BUCKETS; b++)
			printf(" %10s", ageranges_bucket_name(b));
		printf("  %s (GCs survived: samples)\n", by_site ? "site" : "class");
		for (size_t k = 0, shown = 0; k < nrows && shown < top; k++) {
			if (!rows[k].total)
				continue;
			shown++;
			printf("%12s", fmt_bytes((uint64_t)rows[k].bytes, buf, sizeof(buf)));
			for (int b = 0; b < MT_AGE_BUCKETS; b++)
				printf(" %10llu", (unsigned long long)rows[k].n[b]);
			printf("  %s\n", by_site ? samples_site_name(m, rows[k].key) :
			       samples_class_name(m, rows[k].key));
		}
	}
	free(rows);
	return 0;
}

/* `,"survival":…` (from the samples: in [0, 1], with its interval), then
 * `,"alloc_bytes":…` of a matched group (nothing if unmatched). */
static void json_volume(const struct mt_leak *g)
{
	if (g->survival >= 0)
		printf(",\"survival\":%.4f,\"survival_lo\":%.4f,\"survival_hi\":%.4f,"
		       "\"survival_samples\":%llu", g->survival, g->survival_lo, g->survival_hi,
		       (unsigned long long)g->alloc_n);
	if (g->alloc_bytes < 0)
		return;
	printf(",\"alloc_bytes\":%.0f,\"alloc_bytes_per_s\":%.0f,\"alloc_refills\":%.1f,"
	       "\"alloc_method\":", g->alloc_bytes, g->alloc_rate, g->alloc_refills);
	json_str(stdout, g->alloc_method);
	printf(",\"alloc_match_depth\":%d", g->match_depth);
}

static void leaks_json(struct mt_samples *m, const struct mt_leaks *l,
		       const struct mt_site_volumes *v, const struct objreport_src *src,
		       int suspects, uint64_t top)
{
	printf("{\"event\":\"leaks\",\"pid\":%d,", src->pid);
	json_note(src);
	printf("\"duration_s\":%.3f,\"window_s\":%.3f,"
	       "\"min_age\":%llu,\"interval\":%u,\"gcs\":%llu,\"gcs_second_half\":%llu,"
	       "\"live_samples\":%zu,",
	       src->elapsed, l->t_end - l->t_mid, (unsigned long long)l->min_age,
	       m->interval, (unsigned long long)m->gcs,
	       (unsigned long long)(m->ages.epoch - l->epoch_mid), m->n);
	sampling_json_losses(m);
	if (v) {
		printf(",\"site_counters\":{\"seconds\":%.3f,\"keys\":%zu,\"max_keys\":%d,"
		       "\"methods\":%zu,\"all_bytes\":%llu,\"overflow_bytes\":%llu,"
		       "\"overflow_refills\":%llu,\"noframe_bytes\":%llu,\"unnamed_bytes\":%llu}",
		       v->seconds, v->keys, MT_SITES_MAX_KEYS, v->n,
		       (unsigned long long)v->all_bytes, (unsigned long long)v->overflow_bytes,
		       (unsigned long long)v->overflow_refills, (unsigned long long)v->noframe_bytes,
		       (unsigned long long)v->unnamed_bytes);
	} else if (src->no_volumes) {
		printf(",\"site_counters\":null,\"site_counters_missing\":");
		json_str(stdout, src->no_volumes);
	}
	printf(",\"suspects\":[");
	for (int k = 0; k < suspects; k++) {
		const struct mt_leak *g = &l->g[k];

		printf("%s{\"rank\":%d,\"class\":", k ? "," : "", k + 1);
		json_str(stdout, samples_class_name(m, g->cls));
		printf(",\"site\":");
		json_str(stdout, samples_site_name(m, g->site));
		printf(",\"live_bytes\":%.0f,\"live_bytes_ci95\":[%.0f,%.0f],\"old_live_bytes\":%.0f,"
		       "\"growth_bytes_per_s\":%.0f,\"growth_lo95_bytes_per_s\":%.0f,"
		       "\"samples\":%llu,\"old_samples\":%llu,\"old_added\":%llu,"
		       "\"old_removed\":%llu,\"z\":%.2f,\"confidence\":%.4f",
		       g->live_bytes, g->live_lo, g->live_hi, g->old_bytes_end, g->growth,
		       g->growth_lo, (unsigned long long)g->samples, (unsigned long long)g->n_end,
		       (unsigned long long)g->added, (unsigned long long)g->removed, g->z,
		       g->confidence);
		if (g->heap_bytes >= 0)
			printf(",\"heap_class_bytes\":%.0f,\"live_capped_by_heap\":%s", g->heap_bytes,
			       g->capped ? "true" : "false");
		json_volume(g);
		if (src->suspect_more)
			src->suspect_more(src->more_ctx, k + 1, g, true);
		printf("}");
	}
	printf("],\"others\":[");
	for (size_t k = (size_t)suspects, shown = 0; k < l->n && shown < top; k++, shown++) {
		const struct mt_leak *g = &l->g[k];

		printf("%s{\"class\":", shown ? "," : "");
		json_str(stdout, samples_class_name(m, g->cls));
		printf(",\"site\":");
		json_str(stdout, samples_site_name(m, g->site));
		printf(",\"live_bytes\":%.0f,\"growth_bytes_per_s\":%.0f,\"samples\":%llu,"
		       "\"old_samples\":%llu,\"confidence\":%.4f", g->live_bytes, g->growth,
		       (unsigned long long)g->samples, (unsigned long long)g->n_end,
		       g->confidence);
		json_volume(g);
		printf("}");
	}
	printf("]}\n");
}

static void leaks_text(struct mt_samples *m, const struct mt_leaks *l,
		       const struct mt_site_volumes *v, const struct objreport_src *src,
		       int suspects, uint64_t top)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32];

	sampling_print_losses(m);
	if (v && v->overflow_refills)
		p_warn("%llu TLAB refills (%s) found no room in the fixed per-site map (%d keys): "
		       "their sites' allocation rates are low", (unsigned long long)v->overflow_refills,
		       fmt_bytes(v->overflow_bytes, b1, sizeof(b1)), MT_SITES_MAX_KEYS);
	printf("JVM %d: %.1f s window, %llu GCs (%llu in the second half), %zu live samples, "
	       "interval %u bytes, old = survived >= %llu GCs\n", src->pid, src->elapsed,
	       (unsigned long long)m->gcs, (unsigned long long)(m->ages.epoch - l->epoch_mid),
	       m->n, m->interval, (unsigned long long)l->min_age);
	if (src->note)
		printf("note: %s\n", src->note);
	if (!v && src->no_volumes)
		printf("no allocation rates: %s\n", src->no_volumes);
	if (!suspects)
		printf("no leak suspects: no site's old live bytes grew with confidence >= 0.95\n");
	for (int k = 0; k < suspects && (uint64_t)k < top; k++) {
		const struct mt_leak *g = &l->g[k];

		printf("#%d %s/s growth (>= %s/s), live %s [%s..%s], %llu samples (%llu old, "
		       "+%llu -%llu), confidence %.3f\n    class %s\n    site  %s\n", k + 1,
		       fmt_bytes((uint64_t)(g->growth > 0 ? g->growth : 0), b1, sizeof(b1)),
		       fmt_bytes((uint64_t)(g->growth_lo > 0 ? g->growth_lo : 0), b2, sizeof(b2)),
		       fmt_bytes((uint64_t)g->live_bytes, b3, sizeof(b3)),
		       fmt_bytes((uint64_t)g->live_lo, b4, sizeof(b4)),
		       fmt_bytes((uint64_t)g->live_hi, b5, sizeof(b5)),
		       (unsigned long long)g->samples, (unsigned long long)g->n_end,
		       (unsigned long long)g->added, (unsigned long long)g->removed, g->confidence,
		       samples_class_name(m, g->cls), samples_site_name(m, g->site));
		if (g->capped)
			printf("    live (or its 95%% interval) capped at what the heap holds of the class (a walk at the "
			       "end: %s); the samples said more\n",
			       fmt_bytes((uint64_t)g->heap_bytes, b1, sizeof(b1)));
		if (g->alloc_bytes >= 0)
			printf("    allocated %s/s (BPF: %s%s, %.0f TLAB refills)\n",
			       fmt_bytes((uint64_t)g->alloc_rate, b1, sizeof(b1)), g->alloc_method,
			       g->match_depth ? ", a caller" : "", g->alloc_refills);
		if (g->survival >= 0)
			printf("    %.2f of what it allocated is still live and old (95%%: %.2f-%.2f, "
			       "%llu samples)\n", g->survival, g->survival_lo, g->survival_hi,
			       (unsigned long long)g->alloc_n);
		if (src->suspect_more)
			src->suspect_more(src->more_ctx, k + 1, g, false);
	}
}

void objreport_leaks(struct mt_samples *m, const struct mt_leaks *l,
		     const struct mt_site_volumes *vol, const struct objreport_src *src,
		     int suspects, uint64_t top)
{
	if (src->json)
		leaks_json(m, l, vol, src, suspects, top);
	else
		leaks_text(m, l, vol, src, suspects, top);
}
