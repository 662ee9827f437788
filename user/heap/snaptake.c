// SPDX-License-Identifier: GPL-2.0
/* snaptake.c - a heap snapshot from the agent: HEAP_REQUEST with the
 * projection, HEAP_DATA frames into a struct mt_snapshot, HEAP_DONE (see
 * snaptake.h). Kept apart from the file readers so they build (and fuzz)
 * without the agent and attach code. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>
#include <time.h>

#include "agentctl/agentsession.h"
#include "analysis/dominators.h"
#include "dsl/dsl.h"
#include "heap/edenwatch.h"
#include "heap/heapfreeze.h"
#include "heap/heaplayout.h"
#include "heap/recpool.h"
#include "heap/snapmark.h"
#include "heap/snaprec.h"
#include "heap/snaptake.h"
#include "heap/walkids.h"
#include "jvm/perfdata.h"
#include "jvm/proc.h"
#include "jvm/sptrace.h"
#include "jvm/vmstructs.h"
#include "lib/util.h"

#define WALK_TIMEOUT_MS 600000 /* the longest we wait for the agent's first frame */
#define WATCH_MS        100    /* how often memory is looked at during a frozen walk */
#define ZGC_TRIES       40     /* frozen walks ZGC refused as relocating, asked again */
#define ZGC_RETRY_MS    25     /* after 25 ms, 50, ... 200 at most: ~6 s in all */
#define MEM_CHECK_FIRST (1u << 20) /* records sent (JVMTI) before their memory is first checked */

/* The request; with @pass_fd >= 0 (MT_AP_FREEZE_POOL's memfd) passed along. */
static int send_request(struct mt_agentsock *so, uint32_t flags, uint32_t max_pause_ms,
			const struct mt_ap_heap_freeze *freeze,
			const struct mt_ap_heap_layout *layout, const struct mt_ap_heap_zgc *zgc,
			const char *const *fields, int nfields, const uint64_t *samples,
			uint32_t nsamples, int pass_fd)
{
	struct mt_ap_heap_request req = { .flags = flags, .max_pause_ms = max_pause_ms };
	bool mark = (flags & MT_AP_HEAP_FREEZE) && (freeze->flags & MT_AP_FREEZE_MARK);
	bool z = mark && (freeze->flags & MT_AP_FREEZE_ZGC);
	size_t head = sizeof(req) + ((flags & MT_AP_HEAP_FREEZE) ? sizeof(*freeze) : 0) +
		      (mark ? sizeof(*layout) : 0) + (z ? sizeof(*zgc) : 0);
	size_t len = head, ids = (size_t)nsamples * 8;
	char *buf;
	long n;
	int err;

	for (int i = 0; i < nfields; i++)
		len += strlen(fields[i]) + 1;
	if (len + ids > MT_AP_HEAP_REQ_MAX) { /* absurdly many names: ask for every field */
		req.flags |= MT_AP_HEAP_ALLFIELDS;
		nfields = 0;
		len = head;
	}
	req.nfields = (uint32_t)nfields;
	if (nsamples) {
		req.flags |= MT_AP_HEAP_SAMPLES;
		req.nsamples = nsamples;
	}
	buf = malloc(MT_AP_HDR_SIZE + len + ids);
	if (!buf)
		return -ENOMEM;
	memcpy(buf + MT_AP_HDR_SIZE, &req, sizeof(req));
	if (flags & MT_AP_HEAP_FREEZE)
		memcpy(buf + MT_AP_HDR_SIZE + sizeof(req), freeze, sizeof(*freeze));
	if (mark)
		memcpy(buf + MT_AP_HDR_SIZE + sizeof(req) + sizeof(*freeze), layout, sizeof(*layout));
	if (z)
		memcpy(buf + MT_AP_HDR_SIZE + sizeof(req) + sizeof(*freeze) + sizeof(*layout), zgc,
		       sizeof(*zgc));
	len = head;
	for (int i = 0; i < nfields; i++) {
		size_t l = strlen(fields[i]) + 1;

		memcpy(buf + MT_AP_HDR_SIZE + len, fields[i], l);
		len += l;
	}
	if (ids) {
		memcpy(buf + MT_AP_HDR_SIZE + len, samples, ids);
		len += ids;
	}
	n = mt_ap_encode(buf, MT_AP_HDR_SIZE + len, MT_AP_HEAP_REQUEST, so->seq++,
			 buf + MT_AP_HDR_SIZE, len);
	err = n < 0	    ? (int)n :
	      pass_fd >= 0 ? agentsock_write_fd(so, buf, (size_t)n, pass_fd) :
			     write_all(so->fd, buf, (size_t)n);
	free(buf);
	return err;
}

/* Where the pause of what memtrace asks the JVM to do is read: its hsperfdata
 * counters, else (-XX:-UsePerfData) its record of its last safepoint. */
static void sources_open(struct mt_snapsession *ss)
{
	char why[256];

	ss->pd = perfdata_open(ss->p, why, sizeof(why));
	if (!ss->pd)
		sptrace_open(ss->p, &ss->sp); /* a stripped libjvm: neither */
}

/* Both sources at the start of a request. */
struct pause_window {
	struct mt_sp_window pd;
	struct sptrace_window sp;
};

static void pause_begin(const struct mt_snapsession *ss, struct pause_window *w)
{
	perfdata_window_begin(ss->pd, &w->pd);
	sptrace_window_begin(ss->pd ? NULL : &ss->sp, &w->sp);
}

/*
 * A frozen walk's own safepoint, told apart from later ones (GCs while the
 * copy walks for a second or more, a busy JVM's other stops): the JVM's
 * record of its last safepoint (sptrace.h) is looked at every 2 ms from the
 * request until DONE; the walk's is the one whose [begin, end] holds the
 * agent's fork time (CLOCK_MONOTONIC, as the JVM's os::javaTimeNanos). Its
 * begin is seen while it lasts, its end then or, when another safepoint
 * followed it within the 2 ms (a stop queued behind the walk's; the
 * record overwritten), from the next one's record. Missed only when two
 * followed within the 2 ms: then the figure is the agent's timing.
 */
#define SP_POLL_MS 2
struct sp_seen {
	bool on;
	struct sptrace_seen sps;
};

static void sp_seen_poll(const struct mt_snapsession *ss, struct sp_seen *w)
{
	struct sptrace_look l;

	if (w->on && w->sps.n < SPTRACE_SEEN && !sptrace_look(&ss->sp, &l))
		sptrace_seen_add(&w->sps, &l);
}

/* The JVM's own figure for the request's pause: exactly one safepoint since
 * pause_begin() (its time in *@ns, its source in *@from; 1), none (0), more
 * than one (their number), or -1 (no source). */
static int pause_end(const struct mt_snapsession *ss, const struct pause_window *w,
		     uint64_t *ns, enum snapshot_pause *from)
{
	if (w->pd.ok) {
		*from = SNAP_PAUSE_COUNTERS;
		return perfdata_window_end(ss->pd, &w->pd, ns);
	}
	*from = SNAP_PAUSE_RECORD;
	return sptrace_window_end(&ss->sp, &w->sp, ns);
}

/* A frozen attempt that failed after its pause (the copy forked, under ZGC
 * the used heap copied, then its mark stopped): the pause it cost the JVM,
 * said as every walk's is - from the JVM's own account since the request. */
static void failed_pause(const struct mt_snapsession *ss, const struct pause_window *w)
{
	enum snapshot_pause from;
	uint64_t ns = 0;
	char f[32];
	int n = pause_end(ss, w, &ns, &from);

	if (n == 1)
		p_info("JVM %d: the frozen attempt paused it for %s (%s)", ss->p->pid,
		       fmt_ns(ns, f, sizeof(f)), snapshot_pause_phrase(from));
	else if (n > 1 && from == SNAP_PAUSE_COUNTERS)
		p_info("JVM %d: %d safepoints since the frozen attempt's request, %s in all "
		       "(the attempt's pause among them; %s)", ss->p->pid, n,
		       fmt_ns(ns, f, sizeof(f)), snapshot_pause_phrase(from));
	else if (n > 1)
		p_info("JVM %d: %d safepoints since the frozen attempt's request (the attempt's "
		       "pause among them; their times not to be had)", ss->p->pid, n);
}

int snaptake_open(const struct mt_proc *p, struct mt_snapsession *ss)
{
	struct mt_ap_hello_reply hello;
	bool loaded;
	int err;

	memset(ss, 0, sizeof(*ss));
	ss->so.fd = -1;
	ss->buf = malloc(MT_AP_MAX_PAYLOAD);
	if (!ss->buf) {
		p_err("out of memory");
		return -ENOMEM;
	}
	err = agentsession_open(p, &ss->so, &hello, &loaded);
	if (err) {
		free(ss->buf);
		ss->buf = NULL;
		return err < 0 ? err : -EIO; /* agentsession_open() printed why */
	}
	ss->p = p;
	/* the JVM's own account gives the walk's pause (none: the agent's timing) */
	sources_open(ss);
	return 0;
}

/* In a pause, not frozen: say why (once per session, as an info line). */
static void no_freeze(struct mt_snapsession *ss, const char *why)
{
	p_info("JVM %d: walking the heap in a pause, not in a frozen copy: %s", ss->p->pid, why);
	ss->freeze_off = true;
}

/* The frozen walk's eden watch (heap/edenwatch.h) and the counters it reads. */
struct eden_watch {
	const char *used_name, *young_name; /* the counters (JDK 17's ZGC: its one space) */
	struct edenwatch w;
	bool ok;              /* the counters could be read */
};

static const char eden_used[] = "sun.gc.generation.0.space.0.used";
static const char eden_young[] = "sun.gc.collector.0.invocations";
/* JDK 17's ZGC has one generation ("old", its whole heap) and one collector
 * counter, its cycles' pauses: where it allocates, and when it collects */
static const char zgc_used[] = "sun.gc.generation.1.space.0.used";
static const char zgc_cycles[] = "sun.gc.collector.2.invocations";

/* The JVM's threads' CPU and wait for a CPU into @s. */
static void eden_watch_sched(struct mt_snapsession *ss, struct edenwatch_sample *s)
{
	s->sched = !proc_sched_ns(ss->p->pid, &s->run_ns, &s->wait_ns);
}

/* First look at the eden's counters. */
static void eden_watch_begin(struct mt_snapsession *ss, struct eden_watch *ew)
{
	struct edenwatch_sample s = { 0 };
	int64_t v;

	ew->used_name = eden_used;
	ew->young_name = eden_young;
	if (ss->pd && perfdata_long(ss->pd, eden_used, &v) && perfdata_long(ss->pd, eden_young, &v)) {
		ew->used_name = zgc_used;
		ew->young_name = zgc_cycles;
	}
	ew->ok = ss->pd && !perfdata_long(ss->pd, ew->used_name, &s.used);
	if (ew->ok)
		perfdata_long(ss->pd, ew->young_name, &s.young);
	eden_watch_sched(ss, &s);
	s.now_ns = mono_ns();
	edenwatch_begin(&ew->w, &s);
}

/* Poll until the watch ends: HEAPFREEZE_GC_WAIT_MS when the JVM allocates,
 * 0 when it did not (an idle JVM writes no eden) or the counters are gone. */
static uint32_t eden_watch_end(struct mt_snapsession *ss, struct eden_watch *ew)
{
	struct timespec t = { 0, EDENWATCH_POLL_NS };

	if (!ew->ok)
		return 0;
	for (;;) {
		struct edenwatch_sample s = { .young = ew->w.young };

		if (perfdata_long(ss->pd, ew->used_name, &s.used))
			return 0;
		perfdata_long(ss->pd, ew->young_name, &s.young);
		s.now_ns = mono_ns();
		if (edenwatch_wants_sched(&ew->w, s.now_ns))
			eden_watch_sched(ss, &s);
		switch (edenwatch_poll(&ew->w, &s)) {
		case EDENWATCH_ALLOCATES:
			return HEAPFREEZE_GC_WAIT_MS;
		case EDENWATCH_IDLE:
		case EDENWATCH_QUIET:
			return 0;
		case EDENWATCH_GOING:
			break;
		}
		nanosleep(&t, NULL);
	}
}

/*
 * A frozen walk marks the heap in the copy itself (heap/heaplayout.h) when
 * the layout can be read: once per session; MEMTRACE_MARK=0 turns it off
 * (the JVMTI walk in the copy, for comparisons).
 */
static void plan_mark(struct mt_snapsession *ss)
{
	const char *env = getenv("MEMTRACE_MARK");
	char why[192];

	if (!ss->mark_checked) {
		ss->mark_checked = true;
		if ((env && !strcmp(env, "0")) || !ss->vs) {
			ss->mark_off = true;
		} else if (heaplayout_fill(ss->p, ss->vs, &ss->layout, why, sizeof(why))) {
			p_info("JVM %d: the frozen copy walks the heap with JVMTI, not its own mark: "
			       "%s", ss->p->pid, why);
			ss->mark_off = true;
		} else if ((env = getenv("MEMTRACE_TEST_FREEZE")) && !strcmp(env, "badlayout")) {
			ss->layout.k_layout_helper += 4; /* tests: a layout that does not hold */
		} else if (env && !strcmp(env, "nochunks")) {
			ss->layout.sc_iterate = 0; /* tests: as a libjvm without those symbols */
		}
	}
	if (ss->mark_off)
		ss->freeze.flags &= ~(MT_AP_FREEZE_MARK | MT_AP_FREEZE_LIVE);
	else
		ss->freeze.flags |= MT_AP_FREEZE_MARK | MT_AP_FREEZE_DIRECT;
	/* tests, comparisons: the copy's records in one thread, or two on any
	 * heap (else as the copy sees fit) */
	env = getenv("MEMTRACE_COPY_THREADS");
	if (!ss->mark_off && env && !strcmp(env, "1"))
		ss->freeze.flags |= MT_AP_FREEZE_ONETHREAD;
	else if (!ss->mark_off && env && !strcmp(env, "2"))
		ss->freeze.flags |= MT_AP_FREEZE_TWOTHREADS;
	else if (!ss->mark_off && env && !strcmp(env, "mark1")) /* the mark alone in one */
		ss->freeze.flags |= MT_AP_FREEZE_MARKONE;
	/* the mark's records read while the copy writes them (not when a
	 * comparison reads them beside JVMTI's; MEMTRACE_LIVE=0: after DONE) */
	env = getenv("MEMTRACE_LIVE");
	if (!ss->mark_off && !ss->live_off && !(ss->freeze.flags & MT_AP_FREEZE_COMPARE) &&
	    !(env && !strcmp(env, "0")))
		ss->freeze.flags |= MT_AP_FREEZE_LIVE;
	else
		ss->freeze.flags &= ~MT_AP_FREEZE_LIVE;
}

/* ZGC: the memory its copy takes besides what the JVM's own memory costs a
 * fork (its used heap copied, room for a quarter again: zgcfreeze.c);
 * 0 for other collectors or with no estimate. */
static uint64_t zgc_room(struct mt_snapsession *ss)
{
	struct walkestimate e;

	if (!(ss->freeze.flags & MT_AP_FREEZE_ZGC) || walkestimate_read(ss->pd, false, &e))
		return 0;
	return e.used + e.used / 4;
}

/*
 * ZGC: a frozen walk's pause is the fork and a copy of the used heap, which
 * rises and falls with each of ZGC's cycles: hsperfdata's figure is a poor
 * guide (786 MiB read where 312 MiB was copied, LeakGrowth). So the agent
 * measures it from ZGC's page table after settling (a cycle's end, when the
 * JVM allocates) and refuses a copy over the bound set here
 * (MT_AP_FREEZE_ZGC_BOUND): --max-pause MS, else WALKEST_DEFAULT_BOUND_MS,
 * less the fork's estimate, at HEAPFREEZE_ZGC_COPY_NS_PER_MB. The used heap
 * now and the bound are said once per JVM and command. Returns 0 (frozen, the
 * bound set), 1 (in a pause: the fork alone is over --max-pause) or
 * -ECANCELED (printed: the fork alone is over the default bound).
 */
static int zgc_said; /* the JVM whose copy's pause was said */
static int mem_said;           /* the JVM whose snapshot's memory was said */
static uint64_t mem_said_need; /* the last said for it (said again a tenth above) */

static int zgc_consent(struct mt_snapsession *ss, uint32_t flags, uint32_t max_pause_ms)
{
	bool consent = flags & MT_AP_HEAP_MAXPAUSE;
	uint32_t bound_ms = consent ? max_pause_ms : WALKEST_DEFAULT_BOUND_MS;
	uint64_t fork = heapfreeze_fork_estimate_ns(ss->p), bound = (uint64_t)bound_ms * 1000000;
	uint64_t mib = heapfreeze_zgc_copy_max_mib(fork, bound_ms, ss->zgc_ns_per_mib), aim;
	char a[32], b[32], c[32];
	int pid = ss->p->pid;

	ss->freeze.flags &= ~MT_AP_FREEZE_ZGC_BOUND;
	ss->zgc.max_copy_mib = ss->zgc.aim_copy_mib = ss->zgc.max_pause_ms = 0;
	if (!mib) { /* the fork alone: --max-pause's case was seen in plan_freeze() */
		if (consent)
			return 1;
		p_err("JVM %d: a frozen heap snapshot would stop it for about %s (its fork); over "
		      "%d ms, so memtrace did not pause it. --max-pause MS accepts a pause of up "
		      "to MS", pid, fmt_ns(fork, a, sizeof(a)), WALKEST_DEFAULT_BOUND_MS);
		return -ECANCELED;
	}
	ss->freeze.flags |= MT_AP_FREEZE_ZGC_BOUND;
	ss->zgc.max_copy_mib = mib > UINT32_MAX ? UINT32_MAX : (uint32_t)mib;
	/* the agent cuts a copy still going at HEAPFREEZE_ZGC_CUT x the bound:
	 * the estimate of its speed was wrong (a busy machine; JDK 17 maps each
	 * of its chunks three times, which no MiB counts), and a little over
	 * the bound is better than a pause for nothing */
	ss->zgc.max_pause_ms = bound_ms > UINT32_MAX / HEAPFREEZE_ZGC_CUT ? UINT32_MAX :
			       bound_ms * HEAPFREEZE_ZGC_CUT;
	if (getenv("MEMTRACE_ZGC_CUT_MS")) /* tests: a cut no copy escapes */
		ss->zgc.max_pause_ms = (uint32_t)strtoul(getenv("MEMTRACE_ZGC_CUT_MS"), NULL, 10);
	/* aimed at: what the default bound allows, --max-pause or not (a few
	 * more cycles' ends are waited for to get there: shorter pauses) */
	aim = heapfreeze_zgc_copy_max_mib(fork, WALKEST_DEFAULT_BOUND_MS, ss->zgc_ns_per_mib);
	ss->zgc.aim_copy_mib = aim && aim < mib ? (uint32_t)aim : ss->zgc.max_copy_mib;
	if (zgc_said == pid) /* once per JVM and command (`leaks` takes several) */
		return 0;
	zgc_said = pid;
	p_info("JVM %d: ZGC's heap is shared memory: the frozen copy copies its used heap in the "
	       "pause (at a cycle's end when the JVM allocates), at most %s: %s with the fork "
	       "(%s)", pid, fmt_bytes(mib << 20, b, sizeof(b)), fmt_ns(bound, c, sizeof(c)),
	       consent ? "--max-pause" : "the default bound; --max-pause MS for more");
	return 0;
}

/*
 * ZGC's used heap was over the bound (the agent said so, -EFBIG): ask again
 * after another cycle when the JVM allocates (its used heap falls at each
 * cycle's end), then walk in a pause cut at --max-pause (--walk auto), or
 * refuse. Returns 1 (ask again, frozen), 0 (walk in a pause) or -ECANCELED
 * (printed).
 */
#define ZGC_BIG_TRIES 3

static int zgc_too_big(struct mt_snapsession *ss, uint32_t flags, uint32_t max_pause_ms)
{
	const char *msg = ss->so.last_err.msg;
	const char *at = strstr(msg, "was ");
	unsigned long long used = 0;
	char a[48], t[32];
	int pid = ss->p->pid;

	if (ss->freeze.gc_wait_ms && ++ss->zgc_big < ZGC_BIG_TRIES) {
		if (ss->zgc_big == 1)
			p_info("JVM %d: %s; asking again after another cycle", pid, msg);
		return 1;
	}
	ss->zgc_big = 0;
	if ((flags & MT_AP_HEAP_MAXPAUSE) && mt_opts.walk == HEAPFREEZE_AUTO) {
		p_info("JVM %d: walking the heap in a pause, not in a frozen copy: %s, over "
		       "--max-pause", pid, msg);
		ss->zgc_unfrozen = true;
		return 0;
	}
	if (at && sscanf(at, "was %llu MiB", &used) == 1)
		snprintf(a, sizeof(a), "about %s", fmt_ns(heapfreeze_fork_estimate_ns(ss->p) +
					heapfreeze_zgc_copy_estimate_ns(used << 20, ss->zgc_ns_per_mib), t,
					sizeof(t)));
	else
		snprintf(a, sizeof(a), "longer");
	p_err("JVM %d: a frozen heap snapshot would stop it for %s (%s); over %u ms, so memtrace "
	      "did not pause it. --max-pause MS accepts a pause of up to MS", pid, a, msg,
	      (flags & MT_AP_HEAP_MAXPAUSE) ? max_pause_ms : WALKEST_DEFAULT_BOUND_MS);
	return -ECANCELED;
}

/*
 * ZGC's copy was slower than memtrace's estimate of its speed (a busy
 * machine): the agent stopped it at HEAPFREEZE_ZGC_CUT x the bound (-ETIME,
 * mt_ap_heap_zgc.max_pause_ms) and said what the
 * whole copy would take at the speed it saw. Learn that speed and ask again
 * once: the next bound holds less used heap, so the agent refuses a heap
 * over it before any pause (zgc_too_big()), or copies a smaller one within
 * it. Returns 1 (ask again) or -ECANCELED (printed).
 */
static int zgc_too_slow(struct mt_snapsession *ss, uint32_t flags, uint32_t max_pause_ms)
{
	const char *msg = ss->so.last_err.msg;
	const char *u = strstr(msg, "copy of "), *w = strstr(msg, "all: ~");
	unsigned long long mib = 0, ms = 0;
	int pid = ss->p->pid;

	if (u)
		sscanf(u, "copy of %llu MiB", &mib);
	if (w)
		sscanf(w, "all: ~%llu ms", &ms);
	if (ss->zgc_slow++ || !mib || !ms) {
		ss->zgc_slow = 0;
		p_err("JVM %d: the frozen copy was slower than memtrace's estimate, so the agent "
		      "stopped it at %d times the bound and the JVM went on (%s); a frozen "
		      "snapshot needs a longer pause on this machine now: --max-pause MS accepts "
		      "a pause of up to MS (%u ms now)", pid, HEAPFREEZE_ZGC_CUT, msg,
		      (flags & MT_AP_HEAP_MAXPAUSE) ? max_pause_ms : WALKEST_DEFAULT_BOUND_MS);
		return -ECANCELED;
	}
	ss->zgc_ns_per_mib = heapfreeze_zgc_learn(ss->zgc_ns_per_mib, mib << 20, ms * 1000000);
	p_info("JVM %d: the frozen copy was slower than memtrace's estimate, so the agent stopped "
	       "it at %d times the bound and the JVM went on (%s); asking again with the speed "
	       "seen", pid, HEAPFREEZE_ZGC_CUT, msg);
	return 1;
}

/*
 * Should this take be a frozen walk? Adds MT_AP_HEAP_FREEZE to *@flags when
 * it should. Returns 0, or -ENOTSUP (printed) when --walk frozen cannot be.
 */
static int plan_freeze(struct mt_snapsession *ss, uint32_t *flags, uint32_t max_pause_ms)
{
	uint64_t need, have, fork_ns, room;
	struct eden_watch ew;
	char why[192], a[32], b[32];

	if (ss->zgc_unfrozen) { /* ZGC's copy was over --max-pause: this take in a pause */
		ss->zgc_unfrozen = false;
		return 0;
	}
	if (mt_opts.walk == HEAPFREEZE_PAUSED ||
	    (*flags & (MT_AP_HEAP_KEEPIDS | MT_AP_HEAP_BARE | MT_AP_HEAP_NOUNTAGGED)))
		return 0;
	/* a walk in the caller's session (snaptake_attach(): `leaks`, in its
	 * sampling session) is frozen too: a copy that marks the heap itself
	 * holds a bit per 8 heap bytes and its records; were memory to run short,
	 * giving the copy up would close that session, its samples with it, so
	 * such a walk is not given up (memory_low() only warns) */
	/* --max-pause bounds the pause: the fork's must fit in it (it cannot be
	 * cut short), else the walk in a pause is cut short instead */
	if ((*flags & MT_AP_HEAP_MAXPAUSE) && mt_opts.walk == HEAPFREEZE_AUTO &&
	    (fork_ns = heapfreeze_fork_estimate_ns(ss->p)) > (uint64_t)max_pause_ms * 1000000) {
		p_info("JVM %d: walking the heap in a pause, not in a frozen copy: its fork could "
		       "take about %s, over --max-pause", ss->p->pid, fmt_ns(fork_ns, a, sizeof(a)));
		return 0;
	}
	eden_watch_begin(ss, &ew);
	if (!ss->freeze_checked) {
		ss->freeze_checked = true;
		if (!ss->vs && vmstructs_open(ss->p, &ss->vs))
			ss->vs = NULL;
		if (heapfreeze_prepare(ss->p, ss->vs, &ss->freeze, &ss->zgc, why, sizeof(why))) {
			if (mt_opts.walk == HEAPFREEZE_FROZEN) {
				p_err("JVM %d cannot be frozen for the heap walk: %s", ss->p->pid, why);
				return -ENOTSUP;
			}
			no_freeze(ss, why);
		}
	}
	if (ss->freeze_off)
		return 0;
	room = zgc_room(ss);
	if (mt_opts.walk == HEAPFREEZE_AUTO && !heapfreeze_headroom(ss->p, &need, &have) &&
	    have < need + room + HEAPFREEZE_MARGIN) {
		bool z = room;

		need += room;
		snprintf(why, sizeof(why), "a copy could take up to %s more memory (the JVM's "
			 "anonymous resident memory%s) and %s is left", fmt_bytes(need, a, sizeof(a)),
			 z ? " and ZGC's used heap, copied" : "", fmt_bytes(have, b, sizeof(b)));
		p_info("JVM %d: walking the heap in a pause, not in a frozen copy: %s",
		       ss->p->pid, why);
		return 0;
	}
	plan_mark(ss);
	if ((ss->freeze.flags & (MT_AP_FREEZE_FORWARDING | MT_AP_FREEZE_ZGC)) &&
	    !(ss->freeze.flags & MT_AP_FREEZE_MARK)) {
		snprintf(why, sizeof(why), "its collector moves objects concurrently and the "
			 "copy's own mark, which follows them, is off");
		if (mt_opts.walk == HEAPFREEZE_FROZEN) {
			p_err("JVM %d cannot be frozen for the heap walk: %s", ss->p->pid, why);
			return -ENOTSUP;
		}
		p_info("JVM %d: walking the heap in a pause, not in a frozen copy: %s",
		       ss->p->pid, why);
		return 0;
	}
	if (ss->freeze.flags & MT_AP_FREEZE_ZGC) {
		const char *e = getenv("MEMTRACE_ZGC_COPY_NS_PER_MIB");
		int r;

		/* tests: a copy's speed assumed (a fast one makes the agent's
		 * deadline stop the copy) until one is seen */
		if (e && !ss->zgc_ns_per_mib)
			ss->zgc_ns_per_mib = strtoull(e, NULL, 10);
		r = zgc_consent(ss, *flags, max_pause_ms);

		if (r)
			return r < 0 ? r : 0;
	}
	*flags |= MT_AP_HEAP_FREEZE;
	/* ZGC: the agent tells an allocating JVM itself (its page table's used
	 * heap grows): JDK 17's hsperfdata reads ZGC's used heap as the heap's
	 * capacity, and a 4.8 M-object heap's cycles are 2 s apart, longer than
	 * the watch */
	ss->freeze.gc_wait_ms = (ss->freeze.flags & MT_AP_FREEZE_ZGC) ? HEAPFREEZE_GC_WAIT_MS :
				eden_watch_end(ss, &ew);
	return 0;
}

/* During a frozen walk: is memory running out? Then give up on the copy
 * (closing the connection makes the agent kill it). */
static bool memory_low(struct mt_snapsession *ss)
{
	uint64_t need, have;
	char b[32];

	if (heapfreeze_headroom(ss->p, &need, &have) || have >= HEAPFREEZE_MARGIN / 2)
		return false;
	if (ss->borrowed) { /* giving the copy up would end the caller's session */
		if (!ss->low_warned)
			p_warn("JVM %d: only %s of memory left during the frozen heap walk (the "
			       "copy goes on: the kernel kills it first if memory runs out)",
			       ss->p->pid, fmt_bytes(have, b, sizeof(b)));
		ss->low_warned = true;
		return false;
	}
	p_warn("JVM %d: only %s of memory left during the frozen heap walk: the copy was "
	       "stopped; walking in a pause instead", ss->p->pid, fmt_bytes(have, b, sizeof(b)));
	return true;
}

/*
 * A walk in a pause: say what it will cost the JVM before pausing it, and
 * refuse one estimated over WALKEST_DEFAULT_BOUND_MS unless the user gave
 * --max-pause (MT_AP_HEAP_MAXPAUSE: the walk then stops at @max_pause_ms) or
 * asked for walks in a pause (--walk paused: "a pause as long as the walk").
 * Returns 0, or -ECANCELED (printed).
 */
static int pause_consent(struct mt_snapsession *ss, uint32_t flags, uint32_t max_pause_ms)
{
	bool consent = flags & MT_AP_HEAP_MAXPAUSE;
	struct walkestimate now;
	int pid = ss->p->pid;
	char t[192];

	if (walkestimate_read(ss->pd, flags & (MT_AP_HEAP_KEEPIDS | MT_AP_HEAP_NOUNTAGGED), &now)) {
		if (consent || mt_opts.walk == HEAPFREEZE_PAUSED) {
			p_info("JVM %d: walking the heap in a pause of at most %u ms (--max-pause); "
			       "its length cannot be estimated (no hsperfdata)", pid, max_pause_ms);
			return 0;
		}
		p_err("JVM %d: a heap walk in a pause would stop it for as long as it takes, which "
		      "cannot be estimated (no hsperfdata counters): memtrace did not pause it. "
		      "--max-pause MS accepts a pause of up to MS (the walk stops there)", pid);
		return -ECANCELED;
	}
	if (ss->est_learned) { /* today's heap, this session's measured mean and cost */
		now.mean_bytes = ss->est.mean_bytes;
		now.ns_per_object = ss->est.ns_per_object;
		now.measured = true;
		walkestimate_compute(&now);
	}
	ss->est = now;
	walkestimate_text(&ss->est, t, sizeof(t));
	if (consent) {
		p_info("JVM %d: walking the heap in a pause of %s; --max-pause %u ms%s", pid, t,
		       max_pause_ms, ss->est.pause_ns > (uint64_t)max_pause_ms * 1000000 ?
		       " may cut the walk short (a partial result)" : " bounds it");
		return 0;
	}
	if (mt_opts.walk == HEAPFREEZE_PAUSED) { /* asked for: "a pause as long as the walk" */
		p_info("JVM %d: walking the heap in a pause of %s (--walk paused)", pid, t);
		return 0;
	}
	if (ss->est.pause_ns > (uint64_t)WALKEST_DEFAULT_BOUND_MS * 1000000) {
		p_err("JVM %d: a heap walk in a pause would stop it for %s; over %d ms, so memtrace "
		      "did not pause it. --max-pause MS accepts a pause of up to MS (the walk stops "
		      "there, its result then partial)", pid, t, WALKEST_DEFAULT_BOUND_MS);
		return -ECANCELED;
	}
	p_info("JVM %d: walking the heap in a pause of %s", pid, t);
	return 0;
}

/*
 * While the copy writes its records (memtrace's core mostly idle): fault in
 * now the pages the view and its graph fill after DONE, on the critical path
 * otherwise. The view is built over the object records (heapview_build_take():
 * 48 bytes an object where a record takes 32), so the records' array is
 * sized for it and the part past the records populated; when malloc keeps
 * what is freed (heapmem_keep_freed(): `heap`), a block for the dominator
 * tree's first two arrays (8 bytes an object: dominators_prewarm_bytes(); the
 * other 12 its own thread faults in while its search keeps one CPU and the
 * other is idle) is faulted in and freed for it. 5 M objects: the
 * view's 19.8 k page faults down to 0.2 k, the graph's 25.2 k to 5.6 k.
 * Not for a leak search (its later snapshots reuse the pages of the one
 * before; its peak at 0.8 M objects rose by 36 MiB with it), nor when the
 * caller keeps the records (ss->keep_records), nor when the arrays cannot
 * be had (the pulls then size them as before). The dominators' block is in
 * 2 MiB pages (util_big_alloc()): populated in 4 KiB pages, each page still
 * cost a host fault at its first use on a PVM guest (its host shadows the
 * page tables): 40 MiB populated in 10 ms, then first written in 68 ms
 * against 2 ms; the tree's arrays there took 100 ms to get at 10 M objects,
 * 4-7 ms in 2 MiB pages.
 */
static void prewarm(const struct mt_snapsession *ss, struct mt_snapshot *s,
		    enum heapmem_use use)
{
	size_t n = s->live_sized_objs;
	size_t view = n * sizeof(struct dsl_hobject), rec = n * sizeof(*s->objs);

	if (ss->keep_records || !n || (use != HEAPMEM_VIEW && use != HEAPMEM_RETAINED))
		return; /* a leak search's later snapshots reuse the last one's pages */
	if (s->inplace) /* the view's room is the pool's, filled ahead of the copy */
		goto dom;
	if (snapshot_grow(&s->live_objs, &s->live_cap_objs, 0,
			  (view + sizeof(*s->objs) - 1) / sizeof(*s->objs), sizeof(*s->objs)) ||
	    snapshot_grow(&s->live_refs, &s->live_cap_refs, 0, s->live_sized_refs,
			  sizeof(*s->refs)))
		return;
	util_populate((char *)s->live_objs + rec, view - rec);
dom:
	if (use == HEAPMEM_RETAINED && heapmem_keeps_freed()) {
		/* the view's runs (4 bytes an object) take its start first */
		size_t w = (n + 1) * 4 + dominators_prewarm_bytes((uint32_t)n) + (1u << 20);
		char *b = util_big_alloc(w, 1);

		util_populate(b, b ? w : 0);
		free(b); /* kept by malloc for the graph */
	}
}

/* The memory kept for the copy's records that a take of @ss uses (0: none). */
static uint64_t pool_bytes(const struct mt_snapsession *ss)
{
	return ss->pool && !ss->pool_off ? ss->pool->bytes : 0;
}

/*
 * Would what the caller builds from this take fit in memory (heap/heapmem.h)
 * with @objs objects and @refs references, or (@visits non-zero, a walk by
 * JVMTI) that many visits? @copy_writes: the frozen copy has yet to write
 * its records. Returns 0, or -ENOMEM (printed).
 */
static int mem_check(const struct mt_snapsession *ss, enum heapmem_use use, uint64_t objs,
		     uint64_t refs, uint64_t visits, bool copy_writes)
{
	struct heapmem_room r;
	char why[1024];

	heapmem_room_now(&r); /* what cannot be read is not a bound */
	r.pool = pool_bytes(ss);
	if (visits ? !heapmem_fits_visits(use, visits, &r, why, sizeof(why)) :
		     !heapmem_fits(use, objs, refs, copy_writes, &r, why, sizeof(why)))
		return 0;
	p_err("JVM %d: %s", ss->p->pid, why);
	return -ENOMEM;
}

/*
 * A take refused for memory (mem_check(), printed): free what @s holds. In
 * an attached session (the caller's socket stays open: `leaks`) read the
 * walk to its end keeping nothing (other frames, a sampling session's
 * EVENTS, still go to on_frame) and let the agent kill the copy, so that
 * the session goes on; otherwise closing the connection does that. @done:
 * DONE came already; @h (if not NULL): a frame just received, not handled
 * (its payload in ss->buf). Returns -EDQUOT, or the socket's error.
 */
static int refuse(struct mt_snapsession *ss, struct mt_snapshot *s, bool done,
		  const struct mt_ap_hdr *got)
{
	struct mt_ap_hdr h;
	int err;

	snapshot_free(s);
	if (!ss->borrowed)
		return -EDQUOT;
	if (got && (got->type == MT_AP_HEAP_DONE || got->type == MT_AP_ERROR))
		done = true;
	else if (got && got->type != MT_AP_HEAP_DATA && ss->on_frame &&
		 (err = ss->on_frame(ss->frame_ctx, got, ss->buf)))
		return err;
	while (!done) {
		err = agentsock_recv(&ss->so, &h, ss->buf, MT_AP_MAX_PAYLOAD, WALK_TIMEOUT_MS);
		if (err == -EINTR)
			continue;
		if (err <= 0)
			return err ? err : -ETIMEDOUT;
		if (h.type == MT_AP_HEAP_DONE || h.type == MT_AP_ERROR)
			break;
		if (h.type != MT_AP_HEAP_DATA && ss->on_frame &&
		    (err = ss->on_frame(ss->frame_ctx, &h, ss->buf)))
			return err;
	}
	agentsock_send(&ss->so, MT_AP_HEAP_RELEASE, NULL, 0); /* none held: no-op */
	return -EDQUOT;
}

/*
 * A HEAP_DATA frame that is one LIVE record (MT_AP_FREEZE_LIVE): the copy is
 * forked and says where it publishes how far its records are; from now on
 * snapmark_pull() reads them while it writes. Returns whether it was one.
 */
static bool take_live(const struct mt_proc *p, struct mt_snapshot *s, const void *buf, size_t n)
{
	struct mt_ap_hlive_at at;
	struct mt_ap_rec r;
	const void *body;
	size_t off = 0, bl;

	if (mt_ap_rec_next(buf, n, &off, &r, &body, &bl) != 1 || r.kind != MT_AP_HREC_LIVE)
		return false;
	if (bl < sizeof(at) || s->has_live)
		return true; /* not one to follow: ignored */
	memcpy(&at, body, sizeof(at));
	s->live_pid = heapfreeze_copy_pid(p->pid, at.child_pid);
	s->live_at = at.live;
	s->has_live = s->live_pid > 0 && at.live;
	return true;
}

/*
 * A take's own pool for its records (MT_AP_FREEZE_INPLACE): as large as the
 * machine's memory, which the records cannot pass - address space only, in
 * memtrace and in the copy; its pages come as the copy's mark says how many
 * (snapmark_pull()). NULL when none can be had (the records then come as
 * before).
 */
static struct recpool *take_pool(void)
{
	struct sysinfo si;
	uint64_t bytes = 1ull << 30;

	if (!sysinfo(&si) && si.totalram)
		bytes = (uint64_t)si.totalram * si.mem_unit;
	return recpool_new_sparse(bytes);
}

/* Start the session over (after the agent closed it or we gave up a copy). */
static int reopen(struct mt_snapsession *ss)
{
	struct mt_ap_hello_reply hello;
	bool loaded;

	agentsock_close(&ss->so);
	return agentsession_open(ss->p, &ss->so, &hello, &loaded);
}

/*
 * A frozen walk's request that an agent loaded by an older memtrace refused
 * ("malformed heap request": a freeze flag it does not know): what to ask it
 * instead, the newest flag first. Sets the session's switch for the rest of
 * it and returns the walk flags to ask again with (without
 * MT_AP_HEAP_FREEZE: a walk in a pause, which is the user's to accept).
 */
static uint32_t older_agent(struct mt_snapsession *ss, uint32_t flags)
{
	uint32_t f = ss->freeze.flags;

	if (f & MT_AP_FREEZE_ZGC) { /* before stop 40: a ZGC heap only in a pause */
		no_freeze(ss, "the agent loaded in it predates this memtrace's frozen walks of ZGC");
		return flags & ~MT_AP_HEAP_FREEZE;
	}
	if (f & MT_AP_FREEZE_NOCLASS) { /* before stop 58: CLASS references as records */
		ss->noclass_off = true;
		return flags;
	}
	if (f & MT_AP_FREEZE_REFPOS) { /* before stop 50: references by id, in place still */
		ss->refpos_off = true;
		return flags;
	}
	if (f & MT_AP_FREEZE_INPLACE) { /* before stop 46: the records read as written */
		ss->inplace_off = true;
		return flags;
	}
	if (f & MT_AP_FREEZE_POOL) { /* before stop 44: the records in the copy's memory */
		ss->pool_off = true;
		return flags;
	}
	if (f & (MT_AP_FREEZE_SMALLPAGES | MT_AP_FREEZE_LIVE)) {
		/* before stop 38: its records in huge pages, read after DONE */
		ss->freeze.flags &= ~(MT_AP_FREEZE_SMALLPAGES | MT_AP_FREEZE_LIVE);
		ss->live_off = true;
		return flags;
	}
	if (f & MT_AP_FREEZE_MARK) { /* frozen walks without the copy's own mark */
		p_info("JVM %d: the agent loaded in it predates the frozen copy's own mark: "
		       "the copy walks with JVMTI", ss->p->pid);
		ss->mark_off = true;
		ss->freeze.flags &= ~MT_AP_FREEZE_MARK;
		return flags & ~MT_AP_HEAP_FREEZE;
	}
	no_freeze(ss, "the agent loaded in it predates frozen walks");
	return flags & ~MT_AP_HEAP_FREEZE;
}

int snaptake_take(struct mt_snapsession *ss, uint32_t flags, uint32_t max_pause_ms,
		  const char *const *fields, int nfields, struct mt_snapshot *s)
{
	const struct mt_proc *p = ss->p;
	struct pause_window spw;
	struct sp_seen seen_here = { 0 }, *seen = &seen_here;
	int polled = 0;
	struct mt_ap_hdr h;
	char why[128];
	uint64_t ns, waited = 0, mem_next = MEM_CHECK_FIRST;
	enum heapmem_use use = ss->use ? ss->use :
			       (flags & MT_AP_HEAP_REFS) ? HEAPMEM_VIEW : HEAPMEM_NONE;
	int n;
	bool first = true, mem_ok = false;
	uint64_t fill_tick = mono_ns(); /* the last poll's slice counted while filling */
	int err;

	snapshot_init(s);
	s->pid = p->pid;
	s->source = "live";
	heapmem_oom_first(); /* before it holds any heap */
	util_phase("attach");
	err = plan_freeze(ss, &flags, max_pause_ms);
	util_phase("plan (VMStructs, layout, eden check)");
	if (err)
		goto fail;
	/* totals per class only from the copy's own mark; else the objects */
	if (!(flags & MT_AP_HEAP_FREEZE) || !(ss->freeze.flags & MT_AP_FREEZE_MARK))
		flags &= ~MT_AP_HEAP_COUNTS;
	if (!(flags & MT_AP_HEAP_FREEZE)) {
		err = pause_consent(ss, flags, max_pause_ms);
		if (err)
			goto fail;
	}
	pause_begin(ss, &spw);
	if ((flags & MT_AP_HEAP_FREEZE) && !ss->sp.ok && !ss->sp_tried) {
		ss->sp_tried = true; /* the JVM's record of its last safepoint: once */
		sptrace_open(p, &ss->sp);
	}
	seen->on = (flags & MT_AP_HEAP_FREEZE) && ss->sp.ok;
	sp_seen_poll(ss, seen); /* the last one before the request */
	ss->walks++;
	/* the copy's records into memory memtrace keeps, when it keeps some;
	 * else, for a view (a leak search's too, each snapshot's), into this
	 * take's own where they stay - the pool the take before left, if any */
	ss->freeze.flags &= ~(MT_AP_FREEZE_POOL | MT_AP_FREEZE_INPLACE | MT_AP_FREEZE_REFPOS |
			      MT_AP_FREEZE_NOCLASS);
	if (ss->pool && !ss->pool_off && (flags & MT_AP_HEAP_FREEZE) &&
	    (ss->freeze.flags & MT_AP_FREEZE_LIVE)) {
		ss->freeze.flags |= MT_AP_FREEZE_POOL;
		s->pool = ss->pool;
	} else if (!ss->pool && !ss->pool_off && !ss->inplace_off && (flags & MT_AP_HEAP_FREEZE) &&
		   (use == HEAPMEM_VIEW || use == HEAPMEM_RETAINED || use == HEAPMEM_SERIES) &&
		   (flags & MT_AP_HEAP_REFS) && (ss->freeze.flags & MT_AP_FREEZE_LIVE) &&
		   !getenv("MEMTRACE_NO_INPLACE") &&
		   (s->own_pool = ss->spare ? ss->spare : take_pool()) != NULL) {
		struct heapmem_room r;

		ss->freeze.flags |= MT_AP_FREEZE_POOL | MT_AP_FREEZE_INPLACE;
		s->pool_reused = ss->spare != NULL;
		ss->spare = NULL; /* the take's now */
		s->pool = s->own_pool;
		s->inplace = true;
		/* the references as the view's, but for kind and index */
		if (!ss->refpos_off && !ss->keep_records && !getenv("MEMTRACE_NO_REFPOS")) {
			ss->freeze.flags |= MT_AP_FREEZE_REFPOS;
			s->refpos_asked = true;
			if (!ss->noclass_off && !getenv("MEMTRACE_CLASS_RECORDS")) {
				ss->freeze.flags |= MT_AP_FREEZE_NOCLASS;
				s->noclass_asked = true;
			}
		}
		heapmem_room_now(&r);
		s->fill_limit = heapmem_limit(&r);
		s->fill_use = use;
	}
	err = send_request(&ss->so, flags, max_pause_ms, &ss->freeze, &ss->layout, &ss->zgc,
			   fields, nfields,
			   ss->samples,
			   ss->nsamples > MT_AP_HEAP_MAX_SAMPLES ? MT_AP_HEAP_MAX_SAMPLES
								 : ss->nsamples,
			   s->pool ? s->pool->fd : -1);
	if (err) {
		agentsession_explain(p, &ss->so, err);
		goto fail;
	}
	for (;;) {
		/* a frozen walk: look at memory while the copy walks */
		int slice = (first && (flags & MT_AP_HEAP_FREEZE) && mt_opts.walk == HEAPFREEZE_AUTO) ?
			    WATCH_MS : WALK_TIMEOUT_MS;

		/* the walk's own safepoint: watched closely (SP_POLL_MS), the
		 * memory every WATCH_MS all the same */
		bool watch = slice == WATCH_MS;

		/* the safepoint watched, or the copy's records read as it writes them */
		if (((seen->on && seen->sps.n < SPTRACE_SEEN) || s->has_live) && slice > SP_POLL_MS)
			slice = SP_POLL_MS;
		if (s->has_live && s->fill_more) /* the pool filled ahead of the copy */
			slice = 0;
		err = agentsock_recv(&ss->so, &h, ss->buf, MT_AP_MAX_PAYLOAD, slice);
		sp_seen_poll(ss, seen);
		if (s->has_live && snapmark_pull(s))
			s->has_live = false; /* the rest after DONE, as without LIVE */
		/* the copy's mark is done: its counts (the arrays' sizes, set
		 * before any record is written) against the memory left */
		if (s->has_live && !mem_ok && s->live_sized_objs) {
			if (mem_check(ss, s->live_sized_pos ?
					      heapmem_by_position(use, s->noclass_asked) : use,
				      s->live_sized_objs, s->live_sized_refs, 0, true)) {
				err = refuse(ss, s, false, err > 0 ? &h : NULL);
				goto fail;
			}
			mem_ok = true;
			prewarm(ss, s, use);
		}
		if (err == 0 && slice == 0) { /* no frame: on with the filling, */
			uint64_t now = mono_ns();

			if (now - fill_tick < SP_POLL_MS * 1000000ull)
				continue;
			fill_tick = now; /* counted as a poll's slice: memory watched as ever */
			slice = SP_POLL_MS;
		}
		if (err == 0 && slice == SP_POLL_MS && (polled += SP_POLL_MS) < WATCH_MS)
			continue;
		if (err == 0 && slice == SP_POLL_MS) {
			polled = 0;
			if (!watch && (waited += WATCH_MS) < WALK_TIMEOUT_MS)
				continue;
			slice = watch ? WATCH_MS : WALK_TIMEOUT_MS;
		}
		if (err == -EINTR)
			continue;
		if (err == 0 && slice == WATCH_MS && (waited += WATCH_MS) < WALK_TIMEOUT_MS) {
			if (!memory_low(ss))
				continue;
			ss->freeze_off = true; /* for the rest of the session too */
			snapshot_free(s);
			err = reopen(ss);
			if (err)
				goto fail;
			return snaptake_take(ss, flags & ~MT_AP_HEAP_FREEZE, max_pause_ms, fields,
					     nfields, s);
		}
		if (err == 0) {
			p_err("the agent in JVM %d sent no heap data within %d s", p->pid,
			      WALK_TIMEOUT_MS / 1000);
			err = -ETIMEDOUT;
			goto fail;
		}
		if (err < 0) {
			agentsession_explain(p, &ss->so, err);
			goto fail;
		}
		if (h.type == MT_AP_HEAP_DATA && take_live(p, s, ss->buf, h.len))
			continue; /* not the walk's records: `first` stays (memory watched) */
		if (h.type != MT_AP_EVENTS) /* a sampling session's: not the walk's */
			first = false;
		if (h.type == MT_AP_ERROR && (flags & MT_AP_HEAP_FREEZE) &&
		    ss->so.last_err.code == EPROTO &&
		    !strcmp(ss->so.last_err.msg, "malformed heap request")) {
			uint32_t again = older_agent(ss, flags);

			snapshot_free(s);
			err = reopen(ss);
			if (err)
				goto fail;
			return snaptake_take(ss, again, max_pause_ms, fields, nfields, s);
		}
		if (h.type == MT_AP_ERROR && (flags & MT_AP_HEAP_FREEZE) &&
		    (ss->freeze.flags & MT_AP_FREEZE_ZGC) && ss->so.last_err.code == EAGAIN &&
		    ss->zgc_tries < ZGC_TRIES) {
			/* ZGC was relocating objects at the pause: its relocation
			 * phase lasts milliseconds to a second; ask again */
			struct timespec nap = { 0, (long)(ZGC_RETRY_MS * 1000000L) *
						   (ss->zgc_tries < 8 ? ss->zgc_tries + 1 : 8) };

			if (!ss->zgc_tries++)
				p_info("JVM %d: %s; asking again", p->pid, ss->so.last_err.msg);
			snapshot_free(s);
			nanosleep(&nap, NULL);
			/* the agent keeps the session (and a `leaks` run's sampling) */
			return snaptake_take(ss, flags, max_pause_ms, fields, nfields, s);
		}
		if (h.type == MT_AP_ERROR && (flags & MT_AP_HEAP_FREEZE) &&
		    (ss->freeze.flags & MT_AP_FREEZE_ZGC) && ss->so.last_err.code == ETIME) {
			/* the copy was slower than the estimate: the agent stopped
			 * it at its deadline and the JVM went on */
			snapshot_free(s);
			failed_pause(ss, &spw);
			err = zgc_too_slow(ss, flags, max_pause_ms);
			if (err < 0)
				goto fail;
			return snaptake_take(ss, flags, max_pause_ms, fields, nfields, s);
		}
		if (h.type == MT_AP_ERROR && (flags & MT_AP_HEAP_FREEZE) &&
		    (ss->freeze.flags & MT_AP_FREEZE_ZGC) && ss->so.last_err.code == EFBIG) {
			/* ZGC's used heap over the bound: nothing paused; the agent
			 * keeps the session */
			snapshot_free(s);
			err = zgc_too_big(ss, flags, max_pause_ms);
			if (err < 0)
				goto fail;
			return snaptake_take(ss, err ? flags : flags & ~MT_AP_HEAP_FREEZE,
					     max_pause_ms, fields, nfields, s);
		}
		if (h.type == MT_AP_ERROR && (flags & MT_AP_HEAP_FREEZE) &&
		    (ss->freeze.flags & (MT_AP_FREEZE_ZGC | MT_AP_FREEZE_FORWARDING)) &&
		    ss->so.last_err.code == ENOTSUP) {
			/* a virtual thread's stack chunk in a copy of ZGC's or
			 * Shenandoah's heap (JDK 21+): the copy paused the JVM and
			 * its mark stopped there; the walks of this session go in a
			 * pause (JVMTI reads those stacks), with --max-pause only:
			 * JVMTI walks each parked virtual thread's frames, which no
			 * counter tells before (3000 threads 20 frames deep made a
			 * 50 k-object walk 190 ms where its objects say 25 ms). The
			 * agent keeps the session. */
			snapshot_free(s);
			failed_pause(ss, &spw);
			if (!(flags & MT_AP_HEAP_MAXPAUSE) || mt_opts.walk == HEAPFREEZE_FROZEN) {
				p_err("JVM %d: %s, so no frozen snapshot; a walk in a pause reads "
				      "those stacks too, at a cost no counter tells before "
				      "(measured: 190 ms for 3000 threads 20 frames deep). "
				      "--max-pause MS walks in a pause of up to MS", p->pid,
				      ss->so.last_err.msg);
				err = -ECANCELED;
				goto fail;
			}
			no_freeze(ss, ss->so.last_err.msg);
			return snaptake_take(ss, flags & ~MT_AP_HEAP_FREEZE, max_pause_ms, fields,
					     nfields, s);
		}
		if (h.type == MT_AP_ERROR && (flags & MT_AP_HEAP_FREEZE) &&
		    (ss->freeze.flags & MT_AP_FREEZE_ZGC) && ss->so.last_err.code == EAGAIN) {
			p_err("JVM %d: ZGC was relocating objects at each of %d pauses memtrace asked "
			      "for (%s): no snapshot. Try again, or walk in a pause: --walk paused "
			      "--max-pause MS", p->pid, ss->zgc_tries + 1, ss->so.last_err.msg);
			ss->zgc_tries = 0;
			err = -EAGAIN;
			goto fail;
		}
		if (h.type == MT_AP_ERROR) {
			err = -EREMOTEIO;
			agentsession_explain(p, &ss->so, err);
			goto fail;
		}
		if (h.type == MT_AP_HEAP_DONE) {
			ss->zgc_tries = ss->zgc_big = ss->zgc_slow = 0;
			/* ZGC: the next copies of this session bounded at this one's rate
			 * when it was slower than assumed (a busy machine) */
			if (s->frozen && s->freeze.heap_copy_bytes)
				ss->zgc_ns_per_mib = heapfreeze_zgc_learn(ss->zgc_ns_per_mib,
									  s->freeze.heap_copy_bytes,
									  s->freeze.heap_copy_ns);
			snapmark_live_done(s);
			memcpy(&s->info, ss->buf, sizeof(s->info));
			if (getenv("MEMTRACE_PHASES"))
				fprintf(stderr, "  (the agent: %.1f ms naming classes and fields before "
					"the pause, %.1f ms pause; %zu visits, %zu objects, %zu "
					"references sent)\n", (double)s->info.prep_ns / 1e6,
					(double)s->info.pause_ns / 1e6, s->nvisits, s->nobjs,
					s->nrefs);
			util_phase("walk (request to DONE)");
			if (s->info.flags & MT_AP_HEAP_KEEPIDS)
				ss->tagged = true;
			s->agent_pause_ns = s->info.pause_ns;
			/* exactly one safepoint since the request: the walk's; else
			 * the walk's, when it was told apart (sp_seen_poll()); else
			 * the agent's timing, a lower bound */
			n = pause_end(ss, &spw, &ns, &s->pause_from);
			if (n == 1) {
				s->info.pause_ns = ns;
			} else if (n > 1 && s->frozen &&
				   !sptrace_seen_find(&seen->sps, (int64_t)s->freeze.fork_at_ns, &ns)) {
				s->info.pause_ns = ns;
				s->pause_from = SNAP_PAUSE_RECORD;
			} else {
				s->pause_from = n > 1 ? SNAP_PAUSE_AGENT_MANY : SNAP_PAUSE_AGENT;
			}
			/* a frozen walk's records still in the copy: read them, then let
			 * the agent kill it (if they cannot be read, freeze again and let
			 * the agent send them) */
			if (s->has_mark && s->mark.status)
				p_info("JVM %d: the frozen copy's own mark stopped (%s): the copy walked "
				       "with JVMTI instead", p->pid, s->mark.why);
			if (s->has_mark && !s->mark.status && s->has_copy) {
				/* comparing: the mark's records beside the JVMTI walk's */
				struct mt_snapshot m;
				char cwhy[192];

				snapshot_init(&m);
				m.mark = s->mark;
				m.freeze = s->freeze;
				m.has_mark = true;
				err = snapmark_read(p, ss->vs, &m, cwhy, sizeof(cwhy));
				if (!err)
					err = heapfreeze_read_copy(p, s, cwhy, sizeof(cwhy));
				agentsock_send(&ss->so, MT_AP_HEAP_RELEASE, NULL, 0);
				if (!err)
					err = walkcompare_run(s, &m, &ss->cmp, ss->cmp_out);
				snapshot_free(&m);
				if (err) {
					p_err("JVM %d: cannot compare the walks: %s", p->pid, cwhy);
					goto fail;
				}
				ss->compared = true;
				s->has_copy = s->has_mark = false;
			}
			if (s->has_mark && !s->mark.status) {
				char cwhy[192], mt[256];

				/* the references as the bounds count them: by
				 * position, the CLASS ones are records too */
				uint64_t nrefs = s->mark.ref_format == MT_AP_REFS_POS &&
						 s->mark.classrefs <= s->mark.nrefs ?
						 s->mark.nrefs - s->mark.classrefs : s->mark.nrefs;
				enum heapmem_use muse = s->mark.ref_format == MT_AP_REFS_POS ||
					s->mark.ref_format == MT_AP_REFS_POS_NOCLASS ?
					heapmem_by_position(use, s->mark.ref_format ==
								 MT_AP_REFS_POS_NOCLASS) : use;

				/* the exact counts, unless the arrays' sizes covered
				 * them (a copy short of memory sizes them smaller) */
				if ((!mem_ok || s->mark.nobjs > s->live_sized_objs ||
				     nrefs > s->live_sized_refs) &&
				    mem_check(ss, muse, s->mark.nobjs, nrefs, 0, false)) {
					err = refuse(ss, s, true, NULL);
					goto fail;
				}
				uint64_t need = heapmem_need(muse, s->mark.nobjs, nrefs) + pool_bytes(ss);

				if (s->mark.nobjs && (mem_said != p->pid ||
						      need > mem_said_need + mem_said_need / 10)) {
					/* said once, and again as it grows by a tenth */
					mem_said = p->pid;
					mem_said_need = need;
					p_info("JVM %d: %s", p->pid,
					       heapmem_text(muse, s->mark.nobjs, nrefs,
							    pool_bytes(ss), mt, sizeof(mt)));
				}
				err = snapmark_read(p, ss->vs, s, cwhy, sizeof(cwhy));
				agentsock_send(&ss->so, MT_AP_HEAP_RELEASE, NULL, 0);
				if (getenv("MEMTRACE_PHASES"))
					fprintf(stderr, "  (the copy: its mark %.1f ms, its records "
						"%.1f ms, %.1f MiB of them read from memtrace's "
						"pool, written by %u thread%s%s%s%s%s%s; marked by %u)\n",
						(double)s->mark.mark_ns / 1e6,
						(double)s->mark.emit_ns / 1e6,
						(double)s->pool_read / (1 << 20),
						s->mark.emit_threads,
						s->mark.emit_threads == 1 ? "" : "s",
						!s->recs_pooled ? "" : s->refpos && s->noclass ?
						"; kept where the copy wrote them, references by position, "
						"CLASS ones implied" : s->refpos ?
						"; kept where the copy wrote them, references by position" :
						"; kept where the copy wrote them",
						!s->own_pool ? "" : s->own_pool->huge ?
						"; the pool on memtrace's tmpfs of 2 MiB pages" :
						"; the pool a memfd of 4 KiB pages",
						s->pool_reused ? ", the one the snapshot before left" : "",
						s->not_inplace ? "; not kept in place: " : "",
						s->not_inplace ? s->not_inplace : "",
						s->mark.mark_threads ? s->mark.mark_threads : 1);
				util_phase("records read out of the copy");
				if (err) {
					p_warn("JVM %d: %s; the copy walks with JVMTI instead",
					       p->pid, cwhy);
					ss->mark_off = true;
					snapshot_free(s);
					return snaptake_take(ss, flags & ~MT_AP_HEAP_FREEZE,
							     max_pause_ms, fields, nfields, s);
				}
				return 0; /* the mark's ids are final */
			}
			if (s->has_copy) {
				char cwhy[192];

				err = heapfreeze_read_copy(p, s, cwhy, sizeof(cwhy));
				agentsock_send(&ss->so, MT_AP_HEAP_RELEASE, NULL, 0);
				if (err) {
					p_warn("JVM %d: %s; the agent sends the records instead",
					       p->pid, cwhy);
					ss->freeze.flags &= ~MT_AP_FREEZE_DIRECT;
					snapshot_free(s);
					return snaptake_take(ss, flags & ~MT_AP_HEAP_FREEZE,
							     max_pause_ms, fields, nfields, s);
				}
			}
			/* an untagged walk: its objects get their ids here, which
			 * takes as much memory again as its visits */
			if (s->nvisits && mem_check(ss, use, 0, 0, s->nvisits, false)) {
				err = refuse(ss, s, true, NULL);
				goto fail;
			}
			err = walkids_resolve(s, fields, nfields, why, sizeof(why));
			if (err == -EPROTO && !(flags & MT_AP_HEAP_NOUNTAGGED)) {
				char f[32];

				p_warn("JVM %d: the heap walk without object tags did not check out "
				       "(%s); walking again with tags (that walk paused the JVM for %s)",
				       p->pid, why, fmt_ns(s->info.pause_ns, f, sizeof(f)));
				snapshot_free(s);
				return snaptake_take(ss, flags | MT_AP_HEAP_NOUNTAGGED,
						     max_pause_ms, fields, nfields, s);
			}
			if (err) {
				p_err("JVM %d's agent sent a bad heap snapshot: %s", p->pid, why);
				goto fail;
			}
			/* a walk in a pause: the next estimate's mean and cost */
			if (!(flags & MT_AP_HEAP_FREEZE) && !s->info.partial) {
				walkestimate_learn(&ss->est, s->nobjs, s->info.pause_ns);
				ss->est_learned = ss->est.measured;
			}
			return 0;
		}
		if (h.type != MT_AP_HEAP_DATA) { /* e.g. a sampling session's EVENTS */
			if (ss->on_frame && (err = ss->on_frame(ss->frame_ctx, &h, ss->buf)))
				goto fail;
			continue;
		}
		err = snaprec_add(s, ss->buf, h.len, true, why, sizeof(why));
		if (err) {
			p_err("JVM %d's agent sent a bad heap snapshot: %s",
			      p->pid, err == -ENOMEM ? "out of memory" : why);
			goto fail;
		}
		/* records or visits sent as the walk goes (JVMTI): what they
		 * take so far, each time their number doubles */
		if (s->nobjs + s->nrefs + s->nvisits >= mem_next) {
			if (mem_check(ss, use, s->nobjs, s->nrefs, s->nvisits, false)) {
				err = refuse(ss, s, false, NULL);
				goto fail;
			}
			mem_next *= 2;
		}
	}
fail:
	ss->broken = true;
	snapshot_free(s);
	return err;
}

int snaptake_classes(struct mt_snapsession *ss, struct mt_snapshot *s)
{
	const struct mt_proc *p = ss->p;
	struct mt_ap_hdr h;
	char why[128];
	int err;

	snapshot_init(s);
	s->pid = p->pid;
	s->source = "live";
	err = send_request(&ss->so, MT_AP_HEAP_CLASSES, 0, NULL, NULL, NULL, NULL, 0, NULL, 0, -1);
	if (err) {
		agentsession_explain(p, &ss->so, err);
		goto fail;
	}
	for (;;) {
		err = agentsock_recv(&ss->so, &h, ss->buf, MT_AP_MAX_PAYLOAD, WALK_TIMEOUT_MS);
		if (err == -EINTR)
			continue;
		if (err == 0) {
			p_err("the agent in JVM %d sent no class table within %d s", p->pid,
			      WALK_TIMEOUT_MS / 1000);
			err = -ETIMEDOUT;
			goto fail;
		}
		if (err < 0) {
			agentsession_explain(p, &ss->so, err);
			goto fail;
		}
		if (h.type == MT_AP_ERROR && ss->so.last_err.code == EPROTO &&
		    !strcmp(ss->so.last_err.msg, "malformed heap request")) {
			/* an agent loaded by an older memtrace: it closed the session */
			snapshot_free(s);
			err = reopen(ss);
			return err ? err : -ENOTSUP;
		}
		if (h.type == MT_AP_ERROR) {
			err = -EREMOTEIO;
			agentsession_explain(p, &ss->so, err);
			goto fail;
		}
		if (h.type == MT_AP_HEAP_DONE) {
			memcpy(&s->info, ss->buf, sizeof(s->info));
			return 0;
		}
		if (h.type != MT_AP_HEAP_DATA) { /* e.g. a sampling session's EVENTS */
			if (ss->on_frame && (err = ss->on_frame(ss->frame_ctx, &h, ss->buf)))
				goto fail;
			continue;
		}
		err = snaprec_add(s, ss->buf, h.len, false, why, sizeof(why));
		if (err) {
			p_err("JVM %d's agent sent a bad class table: %s",
			      p->pid, err == -ENOMEM ? "out of memory" : why);
			goto fail;
		}
	}
fail:
	ss->broken = true;
	snapshot_free(s);
	return err;
}

int snaptake_attach(const struct mt_proc *p, struct mt_agentsock *so, struct mt_snapsession *ss)
{
	memset(ss, 0, sizeof(*ss));
	ss->so = *so;
	ss->borrowed = so;
	ss->buf = malloc(MT_AP_MAX_PAYLOAD);
	if (!ss->buf) {
		p_err("out of memory");
		return -ENOMEM;
	}
	ss->p = p;
	sources_open(ss);
	return 0;
}

void snaptake_close(struct mt_snapsession *ss)
{
	if (!ss->p)
		return;
	vmstructs_free(ss->vs);
	ss->vs = NULL;
	if (ss->borrowed) { /* the caller's socket: back to it, still open */
		*ss->borrowed = ss->so;
		perfdata_free(ss->pd);
		free(ss->buf);
		memset(ss, 0, sizeof(*ss));
		ss->so.fd = -1;
		return;
	}
	if (ss->so.fd >= 0 && !ss->broken) {
		/* after walks with object tags the agent clears them before it ACKs:
		 * a pause, printed (single walks tag no object: no pause) */
		struct pause_window spw;
		uint64_t t0 = mono_ns(), ns;

		pause_begin(ss, &spw);
		if (!agentsock_detach(&ss->so) && ss->tagged) {
			uint64_t dt = mono_ns() - t0;
			enum snapshot_pause from;
			int n = pause_end(ss, &spw, &ns, &from);
			char f[32];

			if (n == 1)
				p_info("releasing the walk's tags paused JVM %d for %s (%s)", ss->p->pid,
				       fmt_ns(ns, f, sizeof(f)), snapshot_pause_phrase(from));
			else if (n != 0) /* 0: no safepoint, nothing was tagged */
				p_info("releasing the walk's tags paused JVM %d for at most %s "
				       "(timed by memtrace)", ss->p->pid, fmt_ns(dt, f, sizeof(f)));
		}
	}
	agentsock_close(&ss->so);
	perfdata_free(ss->pd);
	free(ss->buf);
	memset(ss, 0, sizeof(*ss));
	ss->so.fd = -1;
}

int snaptake_once(const struct mt_proc *p, uint32_t flags, uint32_t max_pause_ms,
		  const char *const *fields, int nfields, enum heapmem_use use,
		  struct mt_snapshot *s)
{
	struct mt_snapsession ss;
	int err;

	snapshot_init(s);
	err = snaptake_open(p, &ss);
	if (err)
		return err;
	ss.use = use;
	err = snaptake_take(&ss, flags, max_pause_ms, fields, nfields, s);
	snaptake_close(&ss);
	return err;
}
