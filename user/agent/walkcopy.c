// SPDX-License-Identifier: GPL-2.0
/*
 * walkcopy.c - a frozen walk's copy, after the pause (walkcopy.h).
 *
 * Frozen walks (MT_AP_HEAP_FREEZE, untagged walks only; freeze.c). At the
 * walk's first callback, a root, before any object is visited, the callback
 * forks (walkvisit.c): the JVM returns JVMTI_VISIT_ABORT and leaves the
 * pause; in the copy the same callbacks go on recording visits, values and
 * strings (counting them for the JVM's thread, which watches). When HotSpot
 * leaves the safepoint in the copy the walk is over: walkcopy_finish() reads
 * what the copy's callbacks counted (its `hw`, at the same address as ours)
 * and either hands memtrace the addresses of its records (COPY record,
 * MT_AP_FREEZE_DIRECT: the copy is `held` until HEAP_RELEASE) or reads them
 * into this agent's vectors (pull_from_copy()) and kills the copy. Anything
 * failing after the fork: the walk is done again in a pause (heapwalk.c),
 * and the FREEZE record says why.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "freeze.h"
#include "walkcopy.h"
#include "walkstate.h"

#define COPY_KEEP_MS 120000 /* a frozen copy memtrace reads itself lives at most this after DONE */

/* A frozen copy whose records memtrace reads itself (MT_AP_FREEZE_DIRECT),
 * kept after DONE until HEAP_RELEASE, the session's end or held_until. */
static struct freeze held = { .mem_fd = -1, .pidfd = -1 };
static uint64_t held_until;

void walkcopy_wait_for_gc(uint32_t ms)
{
	uint64_t g0 = atomic_load(&hs_gcs), t0 = agent_mono_ns();
	struct timespec nap = { 0, 500000 };

	while (atomic_load(&hs_gcs) == g0 && agent_mono_ns() - t0 < (uint64_t)ms * 1000000)
		nanosleep(&nap, NULL);
	hw.fz.rec.gc_waited = atomic_load(&hs_gcs) != g0;
	hw.fz.rec.gc_wait_ns = agent_mono_ns() - t0;
}

/* The copy's entries of vector @theirs (read out of the copy) into @ours. */
static int pull_vec(struct walkvec *ours, const struct walkvec *theirs)
{
	int err;

	ours->n = 0;
	if (!theirs->n)
		return 0;
	if (theirs->esz != ours->esz)
		return -EPROTO;
	err = walkvec_room(ours, theirs->n);
	if (!err)
		err = freeze_read(&hw.fz, (uint64_t)(uintptr_t)theirs->p, ours->p,
				  theirs->n * theirs->esz);
	if (!err)
		ours->n = theirs->n;
	return err;
}

/* The copy's strings: the entries, then each one's bytes. */
static int pull_strings(const struct walkvec *theirs)
{
	struct walk_str *ss;
	uint64_t *addrs;
	void **bufs;
	size_t *lens;
	int err = pull_vec(&hw.strs, theirs);

	if (err || !hw.strs.n)
		return err;
	ss = (struct walk_str *)hw.strs.p;
	addrs = calloc(hw.strs.n, sizeof(*addrs));
	bufs = calloc(hw.strs.n, sizeof(*bufs));
	lens = calloc(hw.strs.n, sizeof(*lens));
	if (!addrs || !bufs || !lens)
		err = -ENOMEM;
	for (size_t i = 0; i < hw.strs.n && !err; i++) {
		addrs[i] = (uint64_t)(uintptr_t)ss[i].utf8;
		lens[i] = ss[i].len + 1;
		bufs[i] = ss[i].len <= MT_AP_HSTR_MAX ? malloc(lens[i]) : NULL;
		ss[i].utf8 = bufs[i];
		if (!bufs[i]) { /* free_state() frees the ones before */
			hw.strs.n = i;
			err = -ENOMEM;
		}
	}
	if (!err)
		err = freeze_readv(&hw.fz, addrs, bufs, lens, hw.strs.n);
	for (size_t i = 0; i < hw.strs.n && !err; i++)
		ss[i].utf8[ss[i].len] = '\0';
	free(addrs);
	free(bufs);
	free(lens);
	return err;
}

/*
 * After the copy's walk: what its callbacks counted and, unless memtrace reads
 * them itself (MT_AP_FREEZE_DIRECT: their addresses go into hw.copy), its
 * records into the agent (the same vectors a walk in the pause fills).
 * Returns 0 or -errno.
 */
static int pull_from_copy(void)
{
	struct walk_state *ch = malloc(sizeof(*ch));
	uint64_t t0 = agent_mono_ns();
	int err;

	if (!ch)
		return -ENOMEM;
	err = freeze_read(&hw.fz, (uint64_t)(uintptr_t)&hw, ch, sizeof(*ch));
	if (!err && hw.marking) {
		/* the copy's own mark: memtrace reads its records out of the copy */
		hw.mark = ch->mark;
		if (!ch->mark_ran) {
			hw.mark.status = -EPROTO;
			snprintf(hw.mark.why, sizeof(hw.mark.why),
				 "the copy's walk ended before its roots were all in");
		}
		hw.mark.why[sizeof(hw.mark.why) - 1] = '\0';
		err = hw.mark.status;
		hw.want_mark = !err;
		hw.layout_bad = ch->layout_bad;
	}
	if (!err && (!hw.marking || hw.comparing) && (hw.fz.req.flags & MT_AP_FREEZE_DIRECT)) {
		hw.want_copy = true;
		hw.copy = (struct mt_ap_hcopy){
			.child_pid = (uint32_t)hw.fz.child, .keep_ms = COPY_KEEP_MS,
			.visits = (uint64_t)(uintptr_t)ch->visits.p, .nvisits = ch->visits.n,
			.prims = (uint64_t)(uintptr_t)ch->prims.p, .nprims = ch->prims.n,
			.strs = (uint64_t)(uintptr_t)ch->strs.p, .nstrs = ch->strs.n,
		};
		if (ch->visits.esz != hw.visits.esz || ch->prims.esz != hw.prims.esz ||
		    ch->strs.esz != hw.strs.esz)
			err = -EPROTO;
	} else if (!err) {
		err = pull_vec(&hw.visits, &ch->visits);
		if (!err)
			err = pull_vec(&hw.prims, &ch->prims);
		if (!err)
			err = pull_strings(&ch->strs);
	}
	if (!err) {
		hw.done.truncated += ch->done.truncated;
		hw.done.mismatches += ch->done.mismatches;
		hw.layout_bad = ch->layout_bad;
		hw.aborted = ch->aborted;
		hw.visits.oom = ch->visits.oom;
		hw.prims.oom = ch->prims.oom;
		hw.strs.oom = ch->strs.oom;
	}
	free(ch);
	hw.fz.rec.pull_ns = agent_mono_ns() - t0;
	return err;
}

int walkcopy_finish(int watch_fd, void (*idle)(void))
{
	int err = freeze_wait(&hw.fz, watch_fd, &hw.progress, idle);

	hw.fz.rec.walk_ns = agent_mono_ns() - hw.fz.t_fork;
	if (!err) {
		err = pull_from_copy();
		if (err && hw.marking)
			freeze_fail(&hw.fz, MT_AP_FREEZE_WALK, err, "the copy's own mark: %s",
				    hw.mark.why[0] ? hw.mark.why : strerror(-err));
		else if (err)
			freeze_fail(&hw.fz, MT_AP_FREEZE_PULL, err,
				    "cannot read the walk out of the frozen copy: %s", strerror(-err));
	}
	if (!err && (hw.want_copy || hw.want_mark) && !hw.layout_bad) {
		/* memtrace reads it: keep the copy (held owns it from now on) */
		walkcopy_release();
		held = hw.fz;
		held_until = 0; /* set when DONE goes out */
		hw.fz.child = 0;
		hw.fz.mem_fd = hw.fz.pidfd = -1;
		hw.fz.runs = NULL;
		return 0;
	}
	hw.want_copy = false;
	freeze_end(&hw.fz);
	return err;
}

bool walkcopy_held(void)
{
	return held.child > 0;
}

void walkcopy_release(void)
{
	if (held.child > 0)
		freeze_end_nowait(&held); /* its rusage went out with DONE */
	memset(&held, 0, sizeof(held));
	held.mem_fd = held.pidfd = -1; /* never 0: that is the JVM's stdin */
	held_until = 0;
}

void walkcopy_expire(uint64_t now_ns)
{
	if (held.child > 0 && held_until && now_ns > held_until)
		walkcopy_release();
}


void walkcopy_done_sent(void)
{
	if (held.child > 0 && !held_until) /* DONE is out: memtrace reads the copy now */
		held_until = agent_mono_ns() + (uint64_t)COPY_KEEP_MS * 1000000;
}
