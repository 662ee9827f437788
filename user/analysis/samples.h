/* samples.h - memtrace's model of the agent's sampled objects: names (class
 * and method tables from CLASS/METHOD records), allocation sites, the live
 * samples (bounded), the GC epoch and age ranges. Fed with EVENTS payloads.
 *
 * Weight: JVMTI samples an allocation when a per-thread byte countdown with
 * exponentially distributed steps (mean = interval I) runs out, so an object
 * of s bytes is sampled with probability p(s) = 1 - exp(-s/I). Each sample
 * stands for s / p(s) bytes of allocation (≈ I for objects much smaller than
 * I, s for huge ones): the Horvitz-Thompson estimator that unbiases the sum.
 *
 * Bound and eviction: at most max_samples (N) live samples are tracked, as a
 * uniform random sample of the live sampled population (every sampled object
 * is tagged, so its ObjectFree arrives even when we do not track it). Below
 * the bound everything is kept. At the bound, a uniform reservoir under
 * insertions and deletions ("random pairing", Gemulla et al. 2006): c1 counts
 * deaths of tracked samples, c2 deaths of untracked ones, not yet compensated;
 * an arrival fills a tracked slot with probability c1/(c1+c2) (else it is not
 * kept); with no deaths pending it replaces a uniformly random tracked sample
 * with probability N/P (Algorithm R; P = live population). So every live
 * sample is tracked with the same probability n/P, and bytes are scaled by
 * P/n. Arrivals not kept and samples replaced are counted in `evicted`.
 */
#ifndef MEMTRACE_SAMPLES_H
#define MEMTRACE_SAMPLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analysis/ageranges.h"
#include "memtrace/agent_proto.h"

#define MT_SAMPLES_DEFAULT_MAX 65536
#define MT_SITE_MAX_FRAMES     8  /* frames that make a site (up to the first app frame) */
#define MT_SITE_OUTER          8  /* caller method ids kept beyond a site's frames */

struct mt_sample {
	uint64_t id;
	uint64_t size;      /* bytes */
	double weight;      /* estimated bytes it stands for at arrival: s / p(s) */
	uint64_t ts_ns;     /* JVM CLOCK_MONOTONIC at allocation */
	uint32_t cls;       /* class id (agent's) */
	uint32_t site;      /* index into sites */
	uint32_t mark;      /* analyses' scratch flag */
};

struct mt_site {
	uint32_t n;                                  /* frames */
	struct mt_ap_frame f[MT_SITE_MAX_FRAMES];    /* innermost first */
	uint64_t hash;
	char *name;                                  /* built on first use */
	/* callers beyond the site's frames (method ids, innermost first), as
	 * the first sample of the site saw them: where JIT code may have
	 * inlined the site (sitecount matches BPF frames through them) */
	uint32_t outer[MT_SITE_OUTER];
	uint32_t nouter;
};

/* Called for every sample that arrives (kept or not): @weight = s / p(s). */
typedef void (*mt_samples_on_alloc)(void *ctx, uint32_t site, uint32_t cls, double weight);

struct mt_samples {
	/* names: index = the agent's id; NULL if never defined */
	char **classes;  size_t ncls;
	char **methods;  size_t nmeth;
	/* sites */
	struct mt_site *sites; size_t nsites, sites_cap;
	uint32_t *site_tab; size_t site_tab_cap;     /* hash → site index + 1 */
	/* live samples: dense array + id index (linear probing) */
	struct mt_sample *s; size_t n, max;
	uint32_t *idx; size_t idx_cap;               /* slot + 1, 0 empty */
	uint64_t rng;
	uint64_t pop;        /* live sampled population P (tracked or not) */
	uint64_t c1, c2;     /* random pairing: uncompensated deaths, tracked/untracked */
	/* ages */
	struct mt_ageranges ages;
	uint64_t first_id;
	uint32_t interval;
	uint64_t last_gc_ns;
	/* counters */
	uint64_t allocs, frees, frees_unknown, evicted, gcs, bad_records, undefined_names;
	struct mt_ap_sample_stats agent;             /* the agent's last STATS */
	bool have_agent_stats;
	mt_samples_on_alloc on_alloc;                /* optional, set by the caller */
	void *on_alloc_ctx;
};

/* samples_init - an empty store for a session whose ids start at @first_id.
 * @max live samples (0: default). Returns 0 or -ENOMEM. */
int samples_init(struct mt_samples *m, uint64_t first_id, uint32_t interval, size_t max);
/* samples_free - release everything (no-op on a zeroed struct). */
void samples_free(struct mt_samples *m);

/*
 * samples_feed - apply one EVENTS payload. Malformed records end the payload
 * (counted in bad_records) and return -EBADMSG; what came before is applied.
 */
int samples_feed(struct mt_samples *m, const void *payload, size_t len);

/* Feeding single records (what samples_feed does per record; tests use them). */
int samples_define(struct mt_samples *m, unsigned kind, uint32_t id, const char *a,
		   const char *b);
/* samples_name - name class or method @id (kind MT_AP_REC_CLASS or _METHOD)
 * with its display name as is ("byte[]", "pkg.C.m"): a recording's names.
 * Returns 0, -EINVAL (id too large) or -ENOMEM. */
int samples_name(struct mt_samples *m, unsigned kind, uint32_t id, const char *name);
/* samples_method_display - "pkg.C.m" of a METHOD record's class signature
 * and method name into @out (what samples_define names it). */
void samples_method_display(const char *cls_sig, const char *name, char *out, size_t n);
int samples_alloc(struct mt_samples *m, uint32_t cls, const struct mt_ap_alloc *a,
		  const struct mt_ap_frame *f);
void samples_free_id(struct mt_samples *m, uint64_t id);
void samples_gc(struct mt_samples *m, const struct mt_ap_gc *g);

/* samples_est - estimated bytes that sample @s stands for now. */
double samples_est(const struct mt_samples *m, const struct mt_sample *s);
/* samples_weight - s / (1 - exp(-s/I)): bytes one sample of @size stands for. */
double samples_weight(uint64_t size, uint32_t interval);
/* samples_age - GCs survived by sample @s. */
uint64_t samples_age(const struct mt_samples *m, const struct mt_sample *s);

/* samples_class_name - Java name of class @id ("byte[]", "java.lang.String"). */
const char *samples_class_name(const struct mt_samples *m, uint32_t id);
/* samples_method_name - "pkg.C.m" of method @id, "<unknown method>" if undefined. */
const char *samples_method_name(const struct mt_samples *m, uint32_t id);
/* samples_site_name - "pkg.C.m:12 < pkg.D.n:40" (innermost first). */
const char *samples_site_name(struct mt_samples *m, uint32_t site);

/* java_name_of_sig - JVM signature → Java name into @out ("[[J" → "long[][]"). */
void java_name_of_sig(const char *sig, char *out, size_t n);

/* poisson_ci95 - approximate 95% interval of a Poisson mean given @k events
 * (Wilson-Hilferty), as [*lo, *hi]. */
void poisson_ci95(double k, double *lo, double *hi);

#endif
