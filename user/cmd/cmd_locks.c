// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_locks.c - `memtrace locks`: monitor contention of a live JVM from the
 * hotspot:monitor__* probes, through the sequencer, into user/analysis/locks.c.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "cmd/locks_now.h"
#include "monitor/collector.h"
#include "analysis/locks.h"
#include "jvm/monflag.h"
#include "jvm/proc.h"
#include "monitor/sequencer.h"
#include "jstack/waitstacks.h"
#include "jvm/jthreads.h"
#include "jvm/jucblocker.h"
#include "jvm/vmstructs.h"
#include "sink/parks.h"
#include "probe/parktrace.h"
#include "sink/lockprint.h"
#include "lib/stopflag.h"
#include "lib/util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: memtrace locks -p PID [--duration S] [--json] [--enable-monitor-probes] [--stacks]\n"
		"                            [--top N]\n"
		"       memtrace locks -p PID --now [--json] [--stacks]\n"
		"  Contended monitors by class (blocked-entry and Object.wait times),\n"
		"  java.util.concurrent parks by blocker, the wait graph (each thread\n"
		"  waiting at the end -> the thread holding what it waits for, or no one\n"
		"  until a notify or a signal; with its stack and since when) and\n"
		"  deadlocks (its cycles), printed at the end (Ctrl-C, --duration, or the\n"
		"  JVM's exit).\n"
		"  The hotspot:monitor__* probes fire only with -XX:+DTraceMonitorProbes.\n"
		"  --enable-monitor-probes switches that flag on in the running JVM (one\n"
		"  byte written through /proc/PID/mem, printed) and back off at exit.\n"
		"  --stacks: the Java stacks of the threads parking on java.util.concurrent\n"
		"  locks and of those blocked entering a monitor (walked in the kernel at\n"
		"  each park and contended entry: a few microseconds each).\n"
		"  --top N: the N blockers with the most time parked in each of the\n"
		"  CONTENDED and WAITING tables (text; default: all).\n"
		"  --now: the threads waiting on a lock at this moment, read from the JVM's\n"
		"  memory twice, 100 ms apart (no probes, no flags, no agent), each with its\n"
		"  Java stack (the innermost 8 frames; --stacks: all): blocked entering a\n"
		"  monitor or parked on a java.util.concurrent lock (and who holds it), in\n"
		"  Object.wait or Condition.await (nobody to name until a notify or a\n"
		"  signal), parked on what nobody holds (a latch, a queue); and their\n"
		"  deadlocks, as jstack's deadlock detection reports them.\n");
}

/* What each kind of wait of the JVM's threads is in the wait graph. */
static const enum locks_lock_kind edge_kind[] = {
	[JTHREAD_MONITOR] = LOCKS_MONITOR, [JTHREAD_PARKED] = LOCKS_PARKED,
	[JTHREAD_OBJWAIT] = LOCKS_OBJWAIT, [JTHREAD_RELOCK] = LOCKS_RELOCK,
	[JTHREAD_CONDITION] = LOCKS_CONDITION,
};

/*
 * The threads waiting now as the JVM's memory shows them, as wait-graph
 * edges for the report (the stream's own edges win over them): threads
 * parked on java.util.concurrent locks and conditions, in Object.wait, and
 * blocked on monitors since before tracing began (@mon_traced: the monitor
 * probes fired all along) or for a time not traced. Each has its stack and
 * the owner the reading saw (transient unless both readings saw it); a
 * parked thread's time comes from its park in progress (@pt), and a thread
 * that has parked again on another blocker since it was read is left out.
 * The stream of @c is drained right after the reading, so that its own
 * edges are as recent; *@at gets the graph's time (then). *@th (*@nth
 * threads), *@jt and *@ws hold what the edges borrow (the caller frees them).
 * Returns the number of edges, or -errno.
 */
static int jvm_edges(const struct mt_proc *p, const struct mt_vmstructs *vs, struct collector *c,
		     struct parktrace *pt, bool mon_traced, uint64_t *at, struct jthreads **jt,
		     struct waitstacks **ws, struct jthread **th, size_t *nth,
		     struct locks_edge **edges)
{
	size_t n = 0, m = 0;
	int err;

	*th = NULL;
	*edges = NULL;
	*ws = NULL;
	*jt = jthreads_new(p, vs);
	if (!*jt)
		return -errno;
	*ws = waitstacks_new(vs, *jt); /* none: edges without stacks */
	err = jthreads_read_stable(*jt, 50 * 1000, *ws ? waitstacks_visit : NULL, *ws, th, &n);
	collector_poll(c, 0); /* what the stream says has happened meanwhile */
	*at = mono_ns();
	if (err)
		return err;
	*nth = n;
	*edges = calloc(n ? n : 1, sizeof(**edges));
	if (!*edges)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct jthread *t = &(*th)[i];
		struct waitstack st = waitstacks_get(*ws, i);
		struct locks_edge *e = &(*edges)[m];
		bool parked = t->wait == JTHREAD_PARKED || t->wait == JTHREAD_CONDITION;
		uint64_t since = 0;

		if (t->wait == JTHREAD_RUNNING)
			continue;
		*e = (struct locks_edge){
			.tid = t->tid, .thread = t->name, .monitor = t->lock, .cls = t->lock_class,
			.owner = t->owner_tid, .owner_name = "",
			.owner_from = t->owner_tid ? LOCKS_OWNER_JVM : LOCKS_OWNER_UNKNOWN,
			.kind = edge_kind[t->wait], .transient = t->owner_tid && !t->stable,
			.readers = t->readers,
			.lock_free = t->wait == JTHREAD_PARKED && t->blocker == JUCB_LOCK &&
				     !t->owner_tid && !t->readers,
			.cond_lock = t->cond_lock, .cond_cls = t->cond_lock_class[0] ? t->cond_lock_class : NULL,
			.frames = st.f, .nframes = st.n, .frames_err = st.f || !*ws ? 0 : st.err,
		};
		for (size_t j = 0; j < n && t->owner_tid; j++)
			if ((*th)[j].tid == t->owner_tid)
				e->owner_name = (*th)[j].name;
		/* since when: a park's begin, seen by its probe; a monitor's
		 * wait since tracing began is the stream's edge already */
		if (parked && pt) {
			err = parktrace_park_since(pt, t->tid, t->lock, &since);
			if (err == -ESRCH)
				continue; /* parked again elsewhere, or woken: not this wait */
			e->since_before = err == -ENOENT;
			e->blocked_ns = since && since < *at ? *at - since : 0;
		} else {
			e->since_before = !parked && mon_traced;
			e->untimed = !e->since_before;
		}
		m++;
	}
	return (int)m;
}

/* The graph's thread names from the JVM's reading @th (@n threads): whole,
 * where the stream's may be cut (a kernel task name, 15 bytes). */
static void jvm_names(struct locks_report *r, const struct jthread *th, size_t n)
{
	for (size_t i = 0; i < r->nedges; i++)
		for (size_t j = 0; j < n; j++) {
			if (th[j].name[0] && th[j].tid == r->edges[i].tid)
				r->edges[i].thread = th[j].name;
			if (th[j].name[0] && th[j].tid == r->edges[i].owner)
				r->edges[i].owner_name = th[j].name;
		}
}

/* The java.util.concurrent section; with --stacks, the monitors' contenders
 * (their classes from the stream @l). */
static void print_parks(struct parktrace *pt, const struct locks *l, bool stacks, size_t top)
{
	struct parktrace_lock *locks = NULL;
	struct parktrace_monitor *mons = NULL;
	uint64_t stats[MT_PARK_NSTATS];
	size_t n = 0;

	parktrace_refresh(pt); /* names of threads started since the last walk */
	parktrace_stats(pt, stats);
	if (parktrace_read(pt, &locks, &n))
		p_err("can't read the park counters");
	else
		parks_print(stdout, locks, n, stats, top, mt_opts.json);
	free(locks);
	if (!stacks)
		return;
	if (parktrace_read_monitors(pt, &mons, &n)) {
		p_err("can't read the contended monitors' stacks");
		return;
	}
	for (size_t i = 0; i < n; i++)
		mons[i].cls = locks_lock_class(l, mons[i].monitor);
	parks_print_monitors(stdout, mons, n, stats, top, mt_opts.json);
	free(mons);
}

static void emit(void *ctx, const struct mt_ev *e, const char *text, size_t len)
{
	locks_feed(ctx, e, text);
}

int do_locks(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "enable-monitor-probes", no_argument, NULL, 'M' },
		{ "now", no_argument, NULL, 'N' },
		{ "stacks", no_argument, NULL, 'S' },
		{ "top", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct mt_seq_filter f = { .cats = MT_CAT_THREAD | MT_CAT_TYPE | MT_CAT_SYNC };
	struct cmdopt o = { .usage = usage };
	struct collector *c = NULL;
	struct mt_vmstructs *vs = NULL;
	struct parktrace *pt = NULL;
	struct jthread *jth = NULL;
	struct jthreads *jt = NULL;
	struct waitstacks *ws = NULL;
	struct locks_edge *jedges = NULL;
	struct monflag mf = { 0 };
	struct locks *l = NULL;
	struct locks_report *rep = NULL;
	struct mt_seq *seq = NULL;
	bool enable = false, on = false, now = false, stacks = false;
	int opt, err = 0, ne = 0, rc = 1;
	size_t nth = 0;
	uint64_t t0, deadline, at, read_at, mon_real, parks_real;
	struct mt_proc p;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "p:d:t:jh", longopts, NULL)) != -1) {
		if (opt == 'M' || opt == 'N' || opt == 'S') {
			*(opt == 'M' ? &enable : opt == 'N' ? &now : &stacks) = true;
			continue;
		}
		err = cmdopt_common(opt, optarg, &o);
		if (err != MT_CMDOPT_MORE)
			return err;
	}
	if (cmdopt_no_args(argc, argv, "locks", usage))
		return 2;
	if (cmdopt_need_pid(&o, "locks")) {
		usage(stderr);
		return 2;
	}
	if (cmdopt_open_jvm(o.pid, "memtrace locks", &p))
		return 1;
	if (now)
		return locks_now_run(&p, mt_opts.json, stacks);
	if (enable) {
		if (monflag_enable(&p, &mf))
			return 1;
	} else if (!monflag_get(&p, &mf, &on) && !on) {
		p_warn("-XX:DTraceMonitorProbes is off in pid %d: no monitor events will come. "
		       "Restart the JVM with -XX:+DTraceMonitorProbes, or let memtrace switch it "
		       "on now with --enable-monitor-probes", o.pid);
	}
	l = locks_new();
	seq = sequencer_new(&f, emit, l);
	if (!l || !seq)
		goto cleanup;
	stopflag_catch(NULL);
	c = collector_new(&p, seq, NULL, NULL, 0);
	if (!c)
		goto cleanup;
	/* the monitor stream counts from its probes' attach, on the wall clock
	 * (the collector's setup went on ~40 ms after it: JFR's waits begun
	 * meanwhile were left out of a comparison and memtrace's counted) */
	mon_real = real_ns() - (mono_ns() - collector_attached_ns(c));
	/* java.util.concurrent parks: no flag needed; without them, say what is lost */
	err = vmstructs_open(&p, &vs);
	if (!err)
		pt = parktrace_new(&p, vs, stacks);
	parks_real = real_ns(); /* and the parks from here */
	if (err || !pt)
		p_warn("java.util.concurrent parks are not traced: %s",
		       err ? "VMStructs unreadable" : strerror(errno));
	if (!collector_monitor_sites(c)) {
		p_err("this JVM's libjvm (%s) has no hotspot:monitor__* probes", p.libjvm);
		goto cleanup;
	}
	t0 = mono_ns();
	deadline = o.duration > 0 ? t0 + (uint64_t)(o.duration * 1e9) : 0;
	/* every probe attached; each stream counts from its own attach (a
	 * comparison with another tool takes those as its window's start) */
	if (mt_opts.json)
		printf("{\"event\":\"start\",\"pid\":%d,\"jdk\":\"%s\",\"real_ns\":%llu,"
		       "\"monitors_real_ns\":%llu,\"parks_real_ns\":%llu}\n", p.pid,
		       p.jdk_version, (unsigned long long)real_ns(), (unsigned long long)mon_real,
		       (unsigned long long)parks_real);
	else
		p_info("tracing contended monitors of pid %d (JDK %s); Ctrl-C to stop", p.pid,
		       p.jdk_version[0] ? p.jdk_version : "unknown");
	while (!stopflag_raised()) {
		err = collector_poll(c, 100);
		if (err < 0) {
			p_err("reading the ring buffer failed: %s", strerror(-err));
			goto cleanup;
		}
		if (deadline && mono_ns() >= deadline)
			break;
		if (!proc_exists(o.pid))
			break;
		if (pt)
			parktrace_refresh(pt); /* threads come and go */
	}
	/* the threads waiting now, from the JVM's memory (kernel tids: the
	 * host's pid namespace); the graph's time is right after that reading */
	at = mono_ns();
	if (vs && !p.other_pidns) {
		ne = jvm_edges(&p, vs, c, pt, enable || on, &at, &jt, &ws, &jth, &nth, &jedges);
		if (ne < 0)
			p_warn("threads blocked now could not be read from the JVM: %s", strerror(-ne));
	}
	/* owners of monitors entered without contention: from the JVM's memory */
	rep = locks_report_new(l, at, collector_monitor_owner, c);
	if (!rep) {
		p_err("out of memory analysing monitors");
		goto cleanup;
	}
	/* one wait graph: the stream's, and the JVM's waiting threads */
	if (ne > 0 && locks_report_add(rep, jedges, (size_t)ne))
		p_err("out of memory adding the JVM's blocked threads");
	jvm_names(rep, jth, nth);
	lockprint_report(stdout, rep, mt_opts.json);
	read_at = real_ns(); /* the park counters are read from here on */
	if (pt)
		print_parks(pt, l, stacks, o.top);
	/* the monitor events fed end at the graph's time: on the wall clock, for
	 * comparisons with JFR's events */
	if (mt_opts.json)
		printf("{\"event\":\"summary\",\"sync_events\":%llu,\"lost_events\":%llu,"
		       "\"graph_mono_ns\":%llu,\"stream_end_real_ns\":%llu,"
		       "\"parks_read_real_ns\":%llu}\n",
		       (unsigned long long)locks_sync_events(l),
		       (unsigned long long)collector_lost(c), (unsigned long long)at,
		       (unsigned long long)(real_ns() - (mono_ns() - at)),
		       (unsigned long long)read_at);
	else
		printf("%llu monitor events, %llu lost\n",
		       (unsigned long long)locks_sync_events(l),
		       (unsigned long long)collector_lost(c));
	rc = 0;
cleanup:
	locks_report_free(rep);
	free(jedges);
	free(jth);
	waitstacks_free(ws);
	jthreads_free(jt);
	parktrace_free(pt);
	vmstructs_free(vs);
	collector_free(c);
	monflag_restore(&mf);
	sequencer_free(seq);
	locks_free(l);
	return rc;
}
