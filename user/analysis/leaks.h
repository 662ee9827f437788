/* leaks.h - leak suspects from sampled survivors (seed 001's goal, with
 * sampling instead of a header bit).
 *
 * Groups are (allocation site, class) pairs. "Old" means survived >= K GCs.
 * The window is split at its middle (t_mid): leaks_mark_mid() records which
 * samples are old then, leaks_rank() at the end (t_end) counts, per group:
 *   N_mid  old samples at t_mid        N_end  old samples at t_end
 *   a      old at t_end, not at t_mid  (samples that became old and stayed)
 *   r      old at t_mid, gone by t_end (old samples that died)
 * so N_end - N_mid = a - r. Growth of old live bytes per second is
 * (W_end - W_mid) / (t_end - t_mid), W the estimated bytes (samples.h).
 * Under "no growth", a and r are two Poisson counts of equal mean, so
 * z = (a - r) / sqrt(a + r) is approximately standard normal (the normal
 * approximation of the Skellam distribution); confidence = Phi(z), the
 * one-sided probability that the old live bytes really grew. A suspect needs
 * z >= 1.645 (confidence >= 0.95); suspects are ranked by the lower 95% bound
 * of their growth rate, (a - r - 1.645 sqrt(a + r)) × mean weight / Δt, so a
 * large but uncertain growth does not outrank a certain one.
 * A cache filled before the window is never sampled; one filled once inside
 * it stops adding old samples, so a ≈ r ≈ 0 over the second half: no suspect.
 * live_bytes comes with a 95% interval from the Poisson interval of the
 * sample count times the mean weight.
 *
 * Allocation volume (seed 001's per-site counters, bpf/sites.bpf.c): the
 * kernel counts TLAB-refill bytes per allocating Java method in fixed space;
 * leaks_match_volumes() relates them to the groups. Matching is by method
 * name only ("pkg.Class.method": class + method, no signature, no line), the
 * finest name both sides share: BPF knows a Method* or a compiled pc, the
 * agent knows method + line. A group's chain is its site's frames, innermost
 * first, then the callers the site was first seen with (samples.h,
 * MT_SITE_OUTER). BPF names the allocating frame itself while it runs
 * interpreted or compiled on its own, and the compiled caller once JIT code
 * inlined the allocation into it, so over a window one site's volume is
 * spread over several methods of its chain, and one method (a compiled
 * loop that inlined many sites) holds the volume of many groups. So each
 * method's bytes B(M) are handed out once, among the groups whose chain
 * contains M: group g is expected to allocate a_g = alloc_w × (Σ B / Σ
 * alloc_w) (the agent's own estimate, every sample's s/p(s) dead or alive,
 * calibrated to the kernel's total), split over its chain's methods in
 * fractions p_gM fitted so that Σ_g a_g p_gM ≈ B(M) (multiplicative EM
 * updates, as for Poisson counts); g's part of M is B(M) a_g p_gM / Σ_g' a_g'
 * p_g'M. A method only one group's chain holds goes to it whole; a method
 * many chains share goes where the other methods leave room.
 *   alloc_bytes  the sum of g's parts, scaled to the agent's window
 * The volumes do not enter the suspect test or its confidence: those rest
 * on the samples' counts alone, and how a method's bytes are shared depends
 * on JIT inlining. Among suspects whose growth bounds tie, and among the
 * others at equal growth, the higher survival ranks first.
 *
 * Survival: the part of what the group allocated in the window that is still
 * live and old at its end (≈ 1 for a site whose objects are all kept, ≈ 0
 * for churn), from the agent's samples alone - old_bytes_end / alloc_w, the
 * old live samples' estimated bytes over every sample's of the group (dead
 * or alive): the old live samples are among those, so it is at most 1
 * (clamped to 1 when the store tracks a subset of the samples and scales
 * them). With it, a 95% interval (Wilson's, the group's alloc_n samples as
 * the trials). Dividing the old bytes by the BPF volume instead (two
 * estimators, the second shared out by method names) gave fractions above 1.
 */
#ifndef MEMTRACE_LEAKS_H
#define MEMTRACE_LEAKS_H

#include <stddef.h>
#include <stdint.h>

#include "analysis/samples.h"
#include "analysis/sitevol.h"

#define MT_LEAK_Z 1.6448536 /* one-sided 95% */

struct mt_leak {
	uint32_t site, cls;
	uint64_t samples;        /* live samples of the group at t_end (all ages) */
	uint64_t n_mid, n_end;   /* old samples at t_mid, t_end */
	uint64_t added, removed; /* a and r above */
	double live_bytes;       /* estimated live bytes at t_end (all ages) */
	double live_lo, live_hi; /* its 95% interval */
	double old_bytes_mid, old_bytes_end;
	double growth;           /* bytes/s of old live bytes over [t_mid, t_end] */
	double growth_lo;        /* lower 95% bound of growth */
	double z, confidence;
	int suspect;             /* z >= MT_LEAK_Z and growth_lo > 0 */
	/* allocation volume (leaks_match_volumes); alloc_bytes < 0: not matched */
	double alloc_w;          /* the agent's estimate of bytes allocated (all samples) */
	uint64_t alloc_n;        /* samples that arrived (dead or alive) */
	double alloc_bytes;      /* the BPF counters' share for the group in the window */
	double alloc_rate;       /* alloc_bytes per second */
	double alloc_refills;    /* the refills behind that share (its share of the
				  * method's refills): few means a rough volume */
	double survival;         /* old_bytes_end / alloc_w in [0, 1], -1 if no sample */
	double survival_lo, survival_hi; /* its 95% interval */
	const char *alloc_method; /* the BPF method giving most of alloc_bytes (owned
				  * by the volumes), or NULL */
	int match_depth;         /* its place in the chain: 0 = the allocating frame */
	/* leaks_cap_live(): the heap's own figure for the class, when known */
	double heap_bytes;       /* live bytes of the class in a heap walk, -1 unknown */
	int capped;              /* live_bytes (or its interval) was above heap_bytes */
};

struct mt_leaks {
	struct mt_leak *g;       /* groups; after leaks_rank(): suspects first, ranked */
	size_t n, cap;
	uint32_t *tab;           /* hash (site, cls) → group + 1 */
	size_t tab_cap;
	uint64_t min_age;        /* K */
	uint64_t epoch_mid;      /* GC epoch at t_mid */
	double t_mid, t_end;     /* seconds since the window began */
	int have_mid;
};

/* leaks_init - empty analysis with threshold @min_age (K >= 1). */
void leaks_init(struct mt_leaks *l, uint64_t min_age);
void leaks_free(struct mt_leaks *l);

/* leaks_mark_mid - remember which samples are old now (@t seconds in). Uses
 * the samples' `mark` field. Returns 0 or -ENOMEM. */
int leaks_mark_mid(struct mt_leaks *l, struct mt_samples *m, double t);

/*
 * leaks_rank - compute every group at @t (seconds in), then order the groups:
 * suspects by growth_lo (then growth), descending, then the rest by growth.
 * Returns the number of suspects, or -ENOMEM, or -EINVAL without a mid mark.
 */
int leaks_rank(struct mt_leaks *l, struct mt_samples *m, double t);
/*
 * leaks_cap_live - no estimate above what the heap holds: each group's
 * live_bytes, live_lo and live_hi at most @class_bytes(@ctx, class name),
 * the live bytes of its class in a heap walk at the window's end (< 0:
 * unknown, left as is); capped groups say so (capped, heap_bytes). Samples
 * stand for s / p(s) bytes each, an estimate whose error on a class with
 * few live samples, or a dead sample whose ObjectFree has not arrived yet,
 * printed 183 MiB of byte[] where the heap held 138 MiB of byte[] in all.
 */
void leaks_cap_live(struct mt_leaks *l, struct mt_samples *m,
		    double (*class_bytes)(void *ctx, const char *cls), void *ctx);

/* leaks_on_alloc - samples.h's on_alloc hook (@ctx: struct mt_leaks *): the
 * group's alloc_w and alloc_n. Before leaks_rank() only. */
void leaks_on_alloc(void *ctx, uint32_t site, uint32_t cls, double weight);

/*
 * leaks_match_volumes - after leaks_rank(): alloc_bytes, alloc_rate and
 * alloc_method of every group from the BPF volumes @v (rule above), for a
 * window of @window_s seconds. Reorders by the tie rule (suspects stay
 * first). Returns the number of groups matched, or -ENOMEM.
 */
int leaks_match_volumes(struct mt_leaks *l, struct mt_samples *m,
			const struct mt_site_volumes *v, double window_s);

/* leaks_wilson95 - Wilson's 95% interval of a proportion @p observed over @n
 * trials, into [*lo, *hi] (within [0, 1]; [0, 1] when @n is 0). */
void leaks_wilson95(double p, double n, double *lo, double *hi);

/* Phi - the standard normal distribution function. */
double leaks_phi(double z);

#endif
