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
 */
#ifndef MEMTRACE_LEAKS_H
#define MEMTRACE_LEAKS_H

#include <stddef.h>
#include <stdint.h>

#include "samples.h"

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

/* Phi - the standard normal distribution function. */
double leaks_phi(double z);

#endif
