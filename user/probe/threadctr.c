// SPDX-License-Identifier: GPL-2.0
/* threadctr.c - every thread's allocation counter, read around windows; see threadctr.h. */
#include <errno.h>
#include <stdlib.h>

#include "probe/threadctr.h"

void threadctr_init(struct threadctr *c)
{
	idmap_init(&c->threads);
	c->readings = 0;
	c->gone = 0;
	c->ngone = 0;
	c->paused_ns = 0;
}

void threadctr_free(struct threadctr *c)
{
	if (c)
		idmap_free_vals(&c->threads);
}

bool threadctr_valid(uint64_t ctr, uint64_t last)
{
	return ctr >= last && ctr - last < THREADCTR_MAX_STEP;
}

/* A thread's record ends: its bytes stay in the total. */
static void retire(struct threadctr *c, struct threadctr_thread *r)
{
	c->gone += (double)(r->last - r->base);
	if (r->gone)
		c->ngone--;
	free(r);
}

int threadctr_list(struct threadctr *c, const uint64_t *jts, const uint64_t *ctr,
		   const bool *ok, size_t n)
{
	uint64_t reading = ++c->readings, *old = NULL;
	size_t nold = 0, pos = 0;
	uint64_t key;
	void *val;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		struct threadctr_thread *r;

		if (!jts[i])
			continue;
		r = idmap_get(&c->threads, jts[i]);
		if (!ok[i]) { /* listed, so alive: keeps what it had */
			if (r)
				r->reading = reading;
			continue;
		}
		if (r && r->gone) { /* back in the list: another thread at its address */
			idmap_del(&c->threads, jts[i]);
			retire(c, r);
			r = NULL;
		}
		if (r && !threadctr_valid(ctr[i], r->last)) {
			if (ctr[i] >= r->last) {
				r->reading = reading; /* not a count: keep what it had */
				continue;
			}
			/* lower: a new thread at the old one's address */
			idmap_del(&c->threads, jts[i]);
			retire(c, r);
			r = NULL;
		}
		if (!r) {
			r = calloc(1, sizeof(*r));
			if (!r || idmap_put(&c->threads, jts[i], r)) {
				free(r);
				err = -ENOMEM;
				continue;
			}
			/* listed first now: at the session's start, or started since
			 * (a new thread's counter starts at 0) */
			r->base = reading == 1 ? ctr[i] : 0;
			if (reading > 1 && ctr[i] >= THREADCTR_MAX_STEP)
				r->base = ctr[i]; /* not a count: nothing from it */
		}
		r->last = ctr[i];
		r->reading = reading;
	}
	/* threads not listed now have ended: kept by name (their keys are
	 * scaled to them) up to THREADCTR_MAX_GONE, then only their bytes */
	while (idmap_next(&c->threads, &pos, &key, &val)) {
		struct threadctr_thread *r = val;

		if (r->reading != reading && !r->gone) {
			r->gone = true;
			c->ngone++;
		}
	}
	if (c->ngone > THREADCTR_MAX_GONE) {
		old = malloc((c->threads.n + 1) * sizeof(*old));
		if (!old)
			return -ENOMEM;
		pos = 0;
		while (idmap_next(&c->threads, &pos, &key, &val))
			if (((struct threadctr_thread *)val)->gone)
				old[nold++] = key;
		for (size_t i = 0; i < nold; i++)
			retire(c, idmap_del(&c->threads, old[i]));
		free(old);
	}
	return err;
}

void threadctr_sampled(struct threadctr *c, uint64_t jt, uint64_t ctr)
{
	struct threadctr_thread *r = idmap_get(&c->threads, jt);

	if (r && !r->gone && threadctr_valid(ctr, r->last))
		r->last = ctr;
}

double threadctr_total(const struct threadctr *c)
{
	double sum = c->gone;
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (idmap_next(&c->threads, &pos, &key, &val)) {
		const struct threadctr_thread *r = val;

		sum += (double)(r->last - r->base);
	}
	return sum;
}

/* The median of @n (<= THREADCTR_CORR_N) values. */
static double median(const double *v, unsigned n)
{
	double s[THREADCTR_CORR_N];

	for (unsigned i = 0; i < n; i++) { /* insertion sort */
		unsigned j = i;

		while (j && s[j - 1] > v[i]) {
			s[j] = s[j - 1];
			j--;
		}
		s[j] = v[i];
	}
	return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

/* The mean of the middle values of @n (<= THREADCTR_CORR_N): without the
 * lowest and the highest when there are five (a GC pause in one span). */
static double trimmed_mean(const double *v, unsigned n)
{
	double sum = 0, lo = v[0], hi = v[0];

	for (unsigned i = 0; i < n; i++) {
		sum += v[i];
		lo = v[i] < lo ? v[i] : lo;
		hi = v[i] > hi ? v[i] : hi;
	}
	return n >= THREADCTR_CORR_N ? (sum - lo - hi) / (n - 2) : sum / n;
}

/* The window before this open (at @now, the JVM's stops @paused so far)
 * cost thread @r: the bytes it fell short, from the open to the tail's
 * reading, of its clean rate after that, as time, over the period; every
 * span without the stops in it. */
static void measure_loss(struct threadctr_thread *r, uint64_t now, uint64_t paused)
{
	double clean, short_ns, x, cspan, wspan;

	if (!r->tail_ok || r->last < r->tail_ctr || now < r->tail_ns + THREADCTR_CLEAN_MIN_NS ||
	    r->tail_ns <= r->open_ns || r->tail_ctr - r->open_ctr < THREADCTR_MIN_BYTES ||
	    paused < r->tail_paused || r->tail_paused < r->open_paused)
		return;
	cspan = (double)(now - r->tail_ns) - (double)(paused - r->tail_paused);
	wspan = (double)(r->tail_ns - r->open_ns) - (double)(r->tail_paused - r->open_paused);
	/* stopped for most of a span (or counters out of step): nothing to say */
	if (cspan < THREADCTR_CLEAN_MIN_NS / 2 || wspan <= 0)
		return;
	clean = (double)(r->last - r->tail_ctr) / cspan;
	if (clean <= 0)
		return;
	short_ns = wspan - (double)(r->tail_ctr - r->open_ctr) / clean;
	/* a window costs part of its span, never most of it, and cannot make
	 * the thread much faster: beyond those the thread changed its pace
	 * between the spans (javac between phases, a thread going idle: single
	 * readings of -50 % and the mean at -13 % once) - nothing to say */
	if (short_ns > THREADCTR_LOSS_MAX_SPAN * wspan || short_ns < -THREADCTR_LOSS_MIN_SPAN * wspan)
		return;
	x = short_ns / (cspan + wspan); /* within (-0.25, 0.5) by the guard above */
	r->lm[r->nl++ % THREADCTR_CORR_N] = x;
	if (r->nl >= THREADCTR_CORR_USE)
		r->loss = trimmed_mean(r->lm, r->nl < THREADCTR_CORR_N ? r->nl : THREADCTR_CORR_N);
}

void threadctr_open(struct threadctr *c, uint64_t now)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (idmap_next(&c->threads, &pos, &key, &val)) {
		struct threadctr_thread *r = val;
		bool listed = r->reading == c->readings;

		if (listed && r->open_ok && r->close_ok && r->last >= r->close_ctr &&
		    now > r->close_ns && r->close_ns > r->open_ns &&
		    r->close_ctr - r->open_ctr >= THREADCTR_MIN_BYTES) {
			/* bytes per ns out of the window over those in it */
			double in = (double)(r->close_ctr - r->open_ctr) /
				    (double)(r->close_ns - r->open_ns);
			double out = (double)(r->last - r->close_ctr) / (double)(now - r->close_ns);
			double x = out / in;

			x = x < THREADCTR_CORR_MIN ? THREADCTR_CORR_MIN :
			    x > THREADCTR_CORR_MAX ? THREADCTR_CORR_MAX : x;
			r->m[r->nm++ % THREADCTR_CORR_N] = x;
			r->corr = r->nm >= THREADCTR_CORR_USE ? median(r->m, r->nm < THREADCTR_CORR_N ?
								       r->nm : THREADCTR_CORR_N) : 0;
		}
		if (listed && r->open_ok && r->close_ok)
			measure_loss(r, now, c->paused_ns);
		r->tail_ok = false;
		r->open_ok = listed;
		r->open_ctr = r->last;
		r->open_ns = now;
		r->open_paused = c->paused_ns;
		r->close_ok = false;
	}
}

void threadctr_close(struct threadctr *c, uint64_t now)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (idmap_next(&c->threads, &pos, &key, &val)) {
		struct threadctr_thread *r = val;

		r->close_ok = r->open_ok && r->reading == c->readings && r->last >= r->open_ctr;
		r->close_ctr = r->last;
		r->close_ns = now;
	}
}

void threadctr_tail(struct threadctr *c, uint64_t now)
{
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (idmap_next(&c->threads, &pos, &key, &val)) {
		struct threadctr_thread *r = val;

		r->tail_ok = r->close_ok && r->reading == c->readings && r->last >= r->close_ctr &&
			     now > r->close_ns;
		r->tail_ctr = r->last;
		r->tail_ns = now;
		r->tail_paused = c->paused_ns;
	}
}

void threadctr_paused(struct threadctr *c, uint64_t ns)
{
	c->paused_ns = ns;
}

bool threadctr_loss(const struct threadctr *c, uint64_t jt, double *loss)
{
	const struct threadctr_thread *r = idmap_get(&c->threads, jt);

	if (!r || r->nl < THREADCTR_CORR_USE)
		return false;
	*loss = r->loss;
	return true;
}

bool threadctr_reading(const struct threadctr *c, uint64_t jt, unsigned *n, double *x)
{
	const struct threadctr_thread *r = idmap_get(&c->threads, jt);

	if (!r || !r->nl)
		return false;
	*n = r->nl;
	*x = r->lm[(r->nl - 1) % THREADCTR_CORR_N];
	return true;
}

bool threadctr_thread(const struct threadctr *c, uint64_t jt, double *bytes)
{
	const struct threadctr_thread *r = idmap_get(&c->threads, jt);

	if (!r)
		return false;
	*bytes = (double)(r->last - r->base);
	return true;
}

bool threadctr_last(const struct threadctr *c, uint64_t jt, uint64_t *ctr)
{
	const struct threadctr_thread *r = idmap_get(&c->threads, jt);

	if (!r || r->reading != c->readings)
		return false;
	*ctr = r->last;
	return true;
}

double threadctr_corr(const struct threadctr *c, uint64_t jt)
{
	const struct threadctr_thread *r = idmap_get(&c->threads, jt);

	return r ? r->corr : 0;
}

uint32_t threadctr_scale(const struct threadctr *c, uint64_t jt, uint32_t scale, uint32_t one)
{
	double corr = threadctr_corr(c, jt), s;

	if (corr <= 0 || scale <= one)
		return scale;
	s = (double)one + (double)(scale - one) * corr;
	return s >= 4294967295.0 ? UINT32_MAX : (uint32_t)(s + 0.5);
}
