// SPDX-License-Identifier: GPL-2.0
/* dutycycle.c - look at part of the events under a cost budget; see dutycycle.h. */
#include <math.h>
#include <string.h>

#include "probe/dutycycle.h"

/* xorshift64*: the windows' offsets. */
static double rnd(struct dutycycle *d)
{
	d->rng ^= d->rng >> 12;
	d->rng ^= d->rng << 25;
	d->rng ^= d->rng >> 27;
	return (double)((d->rng * 0x2545f4914f6cdd1dull) >> 11) / (double)(1ull << 53);
}

/* The period: short under windows (bursts are seen several times), a
 * second when thinning only (each thread's keep from a second's rate: with
 * 100 ms ones a slow or bursty thread's keep swung with each window's rate,
 * and top's per-thread bytes read 0.97-1.22 of ThreadMXBean). */
static uint64_t period(const struct dutycycle *d)
{
	return d->no_windows ? DUTYCYCLE_THIN_PERIOD_NS :
	       d->period_ns ? d->period_ns : DUTYCYCLE_PERIOD_NS;
}

/* keep as the program compares it with 16 random bits (at least 1). */
static uint32_t keep_threshold(double keep)
{
	if (keep >= 1)
		return DUTYCYCLE_KEEP_ONE;
	return keep * DUTYCYCLE_KEEP_ONE < 1 ? 1 : (uint32_t)(keep * DUTYCYCLE_KEEP_ONE + 0.5);
}

/* The share of samples a thread taking @r samples a second can keep under
 * the budget in the windows (the trap and the gate it pays for all of them),
 * from DUTYCYCLE_MIN_KEEP to 1. */
static double thread_keep(const struct dutycycle *d, double r)
{
	double room, keep;

	if (d->force_keep > 0 || d->force_duty > 0)
		return d->force_keep > 0 ? d->force_keep : 1;
	if (r * d->cost_ns * 1e-9 <= d->budget)
		return 1; /* everything, always */
	room = (d->duty < 1 ? d->wbudget : d->budget) / d->duty -
	       r * (d->trap_ns + d->gate_ns) * 1e-9;
	keep = d->work_ns > 0 && room > 0 ? room / (r * d->work_ns * 1e-9) :
	       d->work_ns > 0 ? 0 : 1;
	if (keep > 1)
		keep = 1;
	if (keep < DUTYCYCLE_MIN_KEEP)
		keep = DUTYCYCLE_MIN_KEEP;
	return keep;
}

uint32_t dutycycle_thread_keep(const struct dutycycle *d, double rate)
{
	return keep_threshold(thread_keep(d, rate));
}

uint32_t dutycycle_new_free(const struct dutycycle *d)
{
	double n;

	if (d->force_keep > 0 || d->cost_ns <= 0)
		return 0;
	n = d->budget * (double)period(d) / d->cost_ns;
	return n >= 4294967295.0 ? UINT32_MAX : (uint32_t)n;
}

void dutycycle_init(struct dutycycle *d, double budget, double trap_ns, uint64_t now,
		    uint64_t seed)
{
	memset(d, 0, sizeof(*d));
	d->budget = d->wbudget = budget;
	d->loss_adj = 1;
	d->loss = -1;
	d->period_ns = DUTYCYCLE_PERIOD_NS;
	d->trap_ns = trap_ns;
	d->gate_ns = DUTYCYCLE_GATE_NS;
	d->t0 = now;
	d->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
	d->on = true;
	d->duty = d->keep = d->wkeep = 1;
	d->keepk = DUTYCYCLE_KEEP_ONE;
	d->scale = d->wscale = DUTYCYCLE_SCALE_ONE;
	d->pstart = d->wstart = now;
	d->wlive = true;
	d->plen = 0; /* the measuring window is its own period */
	d->wend = now + DUTYCYCLE_MEASURE_NS;
}

uint64_t dutycycle_next(const struct dutycycle *d)
{
	return d->on ? d->wend : d->wstart;
}

/* Under windows: the period long enough for the windows' fixed costs to fit
 * DUTYCYCLE_WINDOW_SHARE of the budget (from DUTYCYCLE_PERIOD_NS to
 * DUTYCYCLE_MAX_PERIOD_NS), and what is left for the traps in them. */
static void choose_period(struct dutycycle *d)
{
	double p = DUTYCYCLE_WINDOW_COST_NS / (DUTYCYCLE_WINDOW_SHARE * d->budget);

	if (p < (double)DUTYCYCLE_PERIOD_NS)
		p = (double)DUTYCYCLE_PERIOD_NS;
	if (p > (double)DUTYCYCLE_MAX_PERIOD_NS)
		p = (double)DUTYCYCLE_MAX_PERIOD_NS;
	d->period_ns = (uint64_t)p;
	d->wbudget = d->budget - DUTYCYCLE_WINDOW_COST_NS / p;
	/* a budget too small for even one window a second: the traps keep
	 * (1 - DUTYCYCLE_WINDOW_SHARE) / 3 of it (the fixed costs then take
	 * more than the budget's share; the measured loss says so) */
	if (d->wbudget < (1 - DUTYCYCLE_WINDOW_SHARE) * d->budget / 3)
		d->wbudget = (1 - DUTYCYCLE_WINDOW_SHARE) * d->budget / 3;
}

/* Choose duty and keep for what comes next from the window of @len ns just
 * closed (@m: its estimate and the busiest thread's samples, kept or not). */
static void choose(struct dutycycle *d, const struct dutycycle_measure *m, uint64_t len)
{
	double r, base, work, decay;

	if (m->skipped)
		d->gate_ns = (double)m->skipped_ns / (double)m->skipped;
	if (m->samples) {
		work = (double)m->bpf_ns / (double)m->samples - d->gate_ns;
		d->work_ns = work > 0 ? work : 0;
	}
	r = len ? (double)m->max_thread_samples * 1e9 / (double)len : 0;
	/* a window is short (ms): one that fell in a GC pause, or caught the
	 * thread idle for a moment, reads a low rate, and the next period would
	 * be attached nearly whole at the real rate's cost. The rate that
	 * decides is the highest of the recent windows', decaying by
	 * DUTYCYCLE_RATE_DECAY every 100 ms: a real drop is followed within
	 * about a second. */
	decay = pow(DUTYCYCLE_RATE_DECAY, (double)period(d) / (double)DUTYCYCLE_PERIOD_NS);
	if (r < d->rate_hold * decay)
		r = d->rate_hold * decay;
	d->rate_hold = r;
	d->rate = r;
	d->cost_ns = d->trap_ns + d->gate_ns + d->work_ns;
	d->kept += (double)m->samples;
	d->seen += (double)(m->samples + m->skipped);
	if (r * d->cost_ns * 1e-9 > d->max_share)
		d->max_share = r * d->cost_ns * 1e-9;
	d->duty = 1;
	d->wbudget = d->budget;
	d->period_ns = DUTYCYCLE_PERIOD_NS;
	if (d->force_duty > 0) {
		d->duty = d->force_duty;
	} else if (d->force_keep <= 0 && r * d->cost_ns * 1e-9 > d->budget && !d->no_windows) {
		base = r * (d->trap_ns + d->gate_ns) * 1e-9; /* the busiest thread, all attached */
		if (base > DUTYCYCLE_TRAP_SHARE * d->budget) {
			choose_period(d);
			d->duty = DUTYCYCLE_TRAP_SHARE * d->wbudget / base;
			if (d->duty < DUTYCYCLE_MIN_DUTY)
				d->duty = DUTYCYCLE_MIN_DUTY;
		}
	}
	/* what is left of the budget in the windows pays for the kept samples */
	d->keep = thread_keep(d, r);
	/* the measured slowdown over the model's: fewer windows */
	if (d->duty < 1 && d->force_duty <= 0 && m->slow_share > 0) {
		double model = r * (d->trap_ns + d->gate_ns + d->keep * d->work_ns) * 1e-9;

		if (m->slow_share > model && model > 0) {
			d->duty *= model / m->slow_share;
			if (d->duty < DUTYCYCLE_MIN_DUTY)
				d->duty = DUTYCYCLE_MIN_DUTY;
		}
	}
	/* what the windows cost the thread, all told, as measured */
	if (m->loss_ok)
		d->loss = m->loss_share;
	if (d->duty < 1 && d->force_duty <= 0 && m->loss_ok) {
		double target = DUTYCYCLE_LOSS_TARGET * d->budget,
		       f = 1 + DUTYCYCLE_LOSS_GAIN * (target - m->loss_share) / target;

		f = f < 1 - DUTYCYCLE_LOSS_STEP ? 1 - DUTYCYCLE_LOSS_STEP :
		    f > 1 + DUTYCYCLE_LOSS_STEP ? 1 + DUTYCYCLE_LOSS_STEP : f;
		d->loss_adj *= f;
		d->loss_adj = d->loss_adj < DUTYCYCLE_LOSS_MIN ? DUTYCYCLE_LOSS_MIN :
			      d->loss_adj > 1 ? 1 : d->loss_adj;
	}
	if (d->duty < 1 && d->force_duty <= 0) {
		double want = d->duty * d->loss_adj, p;

		d->duty = want;
		/* below the floor a window would be too short to sample (and
		 * its fixed cost would stay): windows as long as the floor
		 * makes them, further apart (a measured loss over the target
		 * at the floor had nothing left to move: the windows' fixed
		 * cost dominates on a fast allocator, bench/window_profile.sh) */
		if (want < DUTYCYCLE_MIN_DUTY) {
			p = (double)d->period_ns * DUTYCYCLE_MIN_DUTY / want;
			if (p > (double)DUTYCYCLE_MAX_PERIOD_NS)
				p = (double)DUTYCYCLE_MAX_PERIOD_NS;
			if (p > (double)d->period_ns) {
				d->duty = DUTYCYCLE_MIN_DUTY * (double)d->period_ns / p;
				d->period_ns = (uint64_t)p;
			} else {
				d->duty = DUTYCYCLE_MIN_DUTY;
			}
		}
	}
}

/* Close the open window at @now: it stands for its period. */
static enum dutycycle_action close_window(struct dutycycle *d, uint64_t now,
					  const struct dutycycle_measure *m)
{
	uint64_t len = now > d->wstart ? now - d->wstart : 1, next;
	double wlen;

	choose(d, m, len);
	d->wclosed = true;
	d->wraw = m->raw_bytes;
	d->wlen = len;
	d->windows++;
	d->on_ns += len;
	/* the period ends at its planned end, or now if its window ran late
	 * (attaching waited): periods stay contiguous and never lag */
	next = d->pstart + d->plen;
	if (!d->plen || next < now)
		next = now;
	d->plen = next - d->pstart;
	if (d->duty >= 1) { /* the next period is one window, open from its start */
		wlen = 0;
		d->wstart = next;
		d->wend = next + period(d);
	} else {
		wlen = d->duty * (double)period(d);
		d->wstart = next + (uint64_t)(rnd(d) * ((double)period(d) - wlen));
		d->wend = d->wstart + (uint64_t)wlen;
	}
	d->keepk = keep_threshold(d->keep);
	d->keep = (double)d->keepk / DUTYCYCLE_KEEP_ONE;
	d->scale = (uint64_t)((double)DUTYCYCLE_SCALE_ONE *
			      (wlen > 0 ? (double)period(d) / wlen : 1) + 0.5);
	d->on = false;
	if (d->wstart <= now) { /* the next window begins at once: no detach */
		if (dutycycle_tick(d, now, m) != DUTYCYCLE_ATTACH) {
			d->windowed = true;
			return DUTYCYCLE_DETACH;
		}
		d->wlive = true; /* the probes are in place already */
		return DUTYCYCLE_RESCALE;
	}
	d->windowed = true;
	return DUTYCYCLE_DETACH;
}

/* Open the planned window at @now: the current period is over, fold it in. */
static enum dutycycle_action open_window(struct dutycycle *d, uint64_t now)
{
	uint64_t len = d->wend - d->wstart;

	if (d->wclosed && d->wlen) {
		d->last_rate = (double)d->wraw / (double)d->wlen;
		d->est += d->last_rate * (double)d->plen;
		d->scaled += (double)d->wraw * (double)d->wscale / DUTYCYCLE_SCALE_ONE;
		d->covered += d->plen;
	}
	d->pstart += d->plen;
	d->plen = d->duty >= 1 ? 0 : period(d);
	d->wstart = now;           /* opened late: the same length from now */
	d->wend = now + len;
	d->wclosed = false;
	d->wraw = d->wlen = 0;
	d->wscale = d->scale;
	d->wkeep = d->keep;
	d->wlive = false; /* until dutycycle_started() */
	d->on = true;
	return DUTYCYCLE_ATTACH;
}

enum dutycycle_action dutycycle_tick(struct dutycycle *d, uint64_t now,
				     const struct dutycycle_measure *m)
{
	if (now < dutycycle_next(d))
		return DUTYCYCLE_NONE;
	if (d->on)
		return close_window(d, now, m);
	return open_window(d, now);
}

void dutycycle_started(struct dutycycle *d, uint64_t now)
{
	if (!d->on || d->wclosed)
		return;
	d->wlive = true;
	if (now <= d->wstart)
		return;
	d->wend += now - d->wstart;
	d->wstart = now;
}

double dutycycle_factor(const struct dutycycle *d, uint64_t now, uint64_t raw_open)
{
	double est = d->est, scaled = d->scaled, span = now > d->pstart ? (double)(now - d->pstart) : 0;

	if (!d->windowed)
		return 1;

	if (d->on && !d->wclosed && !d->wlive) { /* its probes are being attached */
		est += d->last_rate * span;
	} else if (d->on && !d->wclosed) { /* the current period's window is open */
		double len = (double)(now - d->wstart);

		if (len > 0) {
			est += (double)raw_open * span / len;
			scaled += (double)raw_open * (double)d->wscale / DUTYCYCLE_SCALE_ONE;
		}
	} else if (d->wclosed && d->wlen) { /* closed: it stands for its period so far */
		if (d->plen && span > (double)d->plen)
			span = (double)d->plen;
		est += (double)d->wraw * span / (double)d->wlen;
		scaled += (double)d->wraw * (double)d->wscale / DUTYCYCLE_SCALE_ONE;
		/* the next period's window has not opened yet: the last rate */
		if (now > d->pstart + d->plen)
			est += (double)d->wraw / (double)d->wlen *
			       (double)(now - d->pstart - d->plen);
	}
	if (scaled <= 0)
		return 1;
	return est / scaled;
}

double dutycycle_observed(const struct dutycycle *d, uint64_t now)
{
	double on = (double)d->on_ns;

	if (d->on && !d->wclosed && now > d->wstart)
		on += (double)(now - d->wstart);
	return now > d->t0 ? on / (double)(now - d->t0) : 1;
}
