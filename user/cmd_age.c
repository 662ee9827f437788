// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_age.c - `memtrace age -p PID [--duration S] [--by class|site]
 * [--interval BYTES] [--json]`: live sampled objects by age in GCs survived
 * (0, 1, 2-3, 4-7, 8-15, 16+), per class or allocation site, at the end of
 * the window. Bytes are estimates (samples.h: s / (1 - exp(-s/I)) per sample).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "sampling.h"
#include "util.h"

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

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace age -p PID [--duration S] [--by class|site] "
		   "[--interval BYTES] [--depth N] [--max-samples N] [--top N] [--json]\n"
		   "  Sample allocations through memtrace's JVMTI agent for S seconds (default 10)\n"
		   "  and show the live sampled objects by GCs survived, per class or site.\n"
		   "  --interval  mean bytes between samples (default 512k; k/m suffixes)\n");
}

int do_age(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "interval", required_argument, NULL, 'i' },
		{ "depth", required_argument, NULL, 'D' },
		{ "max-samples", required_argument, NULL, 'M' },
		{ "by", required_argument, NULL, 'b' },
		{ "top", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct mt_sampling_opts o = { .duration = 10, .interval = MT_AP_DEFAULT_INTERVAL,
				      .depth = 16, .max_samples = MT_SAMPLES_DEFAULT_MAX };
	struct mt_samples m;
	struct mt_proc p;
	struct age_row *rows = NULL;
	uint64_t top = 20, tot_n[MT_AGE_BUCKETS] = { 0 };
	double tot_b[MT_AGE_BUCKETS] = { 0 }, elapsed;
	bool by_site = false;
	size_t nrows = 0;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "p:d:jh", longopts, NULL)) != -1) {
		rc = sampling_common_opt(c, optarg, &o);
		if (rc == 2)
			return 2;
		if (!rc)
			continue;
		switch (c) {
		case 'b':
			if (strcmp(optarg, "class") && strcmp(optarg, "site")) {
				p_err("invalid --by '%s' (class or site)", optarg);
				return 2;
			}
			by_site = !strcmp(optarg, "site");
			break;
		case 't':
			if (parse_u64(optarg, &top) || !top) {
				p_err("invalid --top '%s'", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !o.pid) {
		usage(stderr);
		return 2;
	}
	rc = sampling_run(&o, &p, &m, NULL, NULL, &elapsed);
	if (rc || !m.s) {
		samples_free(&m);
		return 1;
	}
	nrows = by_site ? m.nsites : m.ncls;
	rows = calloc(nrows ? nrows : 1, sizeof(*rows));
	if (!rows) {
		p_err("out of memory");
		samples_free(&m);
		return 1;
	}
	for (size_t k = 0; k < nrows; k++)
		rows[k].key = (uint32_t)k;
	for (size_t k = 0; k < m.n; k++) {
		const struct mt_sample *s = &m.s[k];
		uint32_t key = by_site ? s->site : s->cls;
		int bk = ageranges_bucket(samples_age(&m, s));
		double w = samples_est(&m, s);

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
	if (mt_opts.json) {
		printf("{\"event\":\"age\",\"pid\":%d,\"by\":\"%s\",\"duration_s\":%.3f,"
		       "\"interval\":%u,\"gcs\":%llu,\"live_samples\":%zu,\"ranges\":%zu,",
		       p.pid, by_site ? "site" : "class", elapsed, m.interval,
		       (unsigned long long)m.gcs, m.n, m.ages.n);
		sampling_json_losses(&m);
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
			json_str(stdout, by_site ? samples_site_name(&m, rows[k].key) :
				 samples_class_name(&m, rows[k].key));
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

		sampling_print_losses(&m);
		printf("JVM %d: %zu live samples after %.1f s, %llu GCs, interval %u bytes "
		       "(bytes are estimates)\n", p.pid, m.n, elapsed, (unsigned long long)m.gcs,
		       m.interval);
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
			printf("  %s\n", by_site ? samples_site_name(&m, rows[k].key) :
			       samples_class_name(&m, rows[k].key));
		}
	}
	free(rows);
	samples_free(&m);
	return 0;
}
