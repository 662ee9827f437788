// SPDX-License-Identifier: GPL-2.0
/* edenwatch.c - is the JVM filling its eden? (see edenwatch.h) */
#include "heap/edenwatch.h"
#include "heap/heapfreeze.h"

void edenwatch_begin(struct edenwatch *w, const struct edenwatch_sample *s)
{
	w->used = s->used;
	w->young = s->young;
	w->q0_ns = w->t0_ns = s->now_ns;
	w->sched = s->sched;
	w->run0_ns = s->run_ns;
	w->wait0_ns = s->wait_ns;
}

bool edenwatch_wants_sched(const struct edenwatch *w, uint64_t now_ns)
{
	return w->sched && now_ns - w->q0_ns >= EDENWATCH_IDLE_NS;
}

/* Was the stretch since w->q0_ns (long enough) quiet: under 3 % of a core
 * run and waited? A busier one starts again at @s. */
static bool quiet_stretch(struct edenwatch *w, const struct edenwatch_sample *s)
{
	uint64_t dt = s->now_ns - w->q0_ns;

	if (!edenwatch_wants_sched(w, s->now_ns) || !s->sched)
		return false;
	if (s->run_ns >= w->run0_ns && (s->run_ns - w->run0_ns) * 100 < dt * 3 &&
	    s->wait_ns >= w->wait0_ns && (s->wait_ns - w->wait0_ns) * 100 < dt * 3)
		return true;
	w->q0_ns = s->now_ns;
	w->run0_ns = s->run_ns;
	w->wait0_ns = s->wait_ns;
	return false;
}

enum edenwatch_verdict edenwatch_poll(struct edenwatch *w, const struct edenwatch_sample *s)
{
	/* allocating: the eden grew, or filled up and was collected - its
	 * bytes used fell (156 -> 87 MiB seen here with the young GCs' count
	 * not yet moved: presumably updated at another point of the pause) or
	 * that count rose */
	if (s->used >= w->used + HEAPFREEZE_EDEN_MIN / 16 || s->used < w->used ||
	    s->young > w->young)
		return EDENWATCH_ALLOCATES;
	if (quiet_stretch(w, s))
		return EDENWATCH_IDLE;
	if (s->now_ns - w->t0_ns >= EDENWATCH_NS)
		return EDENWATCH_QUIET;
	return EDENWATCH_GOING;
}
