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
#include "monitor/collector.h"
#include "analysis/locks.h"
#include "jvm/monflag.h"
#include "jvm/proc.h"
#include "monitor/sequencer.h"
#include "analysis/waitgraph.h"
#include "jvm/jthreads.h"
#include "jvm/vmstructs.h"
#include "sink/blocked.h"
#include "sink/parks.h"
#include "probe/parktrace.h"
#include "sink/lockprint.h"
#include "lib/stopflag.h"
#include "lib/util.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: memtrace locks -p PID [--duration S] [--json] [--enable-monitor-probes] [--stacks]\n"
		"       memtrace locks -p PID --now [--json]\n"
		"  Contended monitors by class (blocked-entry and Object.wait times), the\n"
		"  wait graph (blocked thread -> owning thread) and deadlocks (its cycles),\n"
		"  printed at the end (Ctrl-C, --duration, or the JVM's exit).\n"
		"  The hotspot:monitor__* probes fire only with -XX:+DTraceMonitorProbes.\n"
		"  --enable-monitor-probes switches that flag on in the running JVM (one\n"
		"  byte written through /proc/PID/mem, printed) and back off at exit.\n"
		"  --stacks: the Java stacks of the threads parking on java.util.concurrent\n"
		"  locks and of those blocked entering a monitor (walked in the kernel at\n"
		"  each park and contended entry: a few microseconds each).\n"
		"  --now: the threads blocked on a lock at this moment - monitors and\n"
		"  java.util.concurrent locks (the object a thread parks on, its owner) -\n"
		"  and their deadlocks, read from the JVM's memory twice, 100 ms apart (no\n"
		"  probes, no flags, no agent; what jstack's deadlock detection reports).\n");
}

/* --now: read the blocked threads twice (100 ms apart) and report the
 * deadlocks both readings agree on. */
static int locks_now(const struct mt_proc *p, bool json)
{
	struct mt_vmstructs *vs = NULL;
	struct jthreads *jt = NULL;
	struct jthread *th = NULL;
	struct waitgraph_node *g = NULL;
	uint32_t *cycle = NULL;
	size_t n = 0;
	int err, ncycles, rc = 1;

	err = vmstructs_open(p, &vs);
	if (err) {
		p_err("can't read VMStructs of pid %d (%s): %s", p->pid, p->libjvm,
		      vmstructs_strerror(err));
		return 1;
	}
	jt = jthreads_new(p, vs);
	if (!jt) {
		p_err("can't read pid %d's threads from its memory: %s", p->pid, strerror(errno));
		goto cleanup;
	}
	err = jthreads_read_stable(jt, 100 * 1000, &th, &n);
	if (err) {
		p_err("can't read pid %d's threads: %s", p->pid, strerror(-err));
		goto cleanup;
	}
	g = calloc(n ? n : 1, sizeof(*g));
	cycle = calloc(n ? n : 1, sizeof(*cycle));
	if (!g || !cycle) {
		p_err("out of memory");
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++)
		g[i] = (struct waitgraph_node){ th[i].tid, th[i].owner_tid };
	ncycles = waitgraph_cycles(g, n, cycle);
	if (ncycles < 0) {
		p_err("out of memory");
		goto cleanup;
	}
	if (blocked_print(stdout, p->pid, th, n, cycle, ncycles, json))
		goto cleanup;
	rc = 0;
cleanup:
	free(cycle);
	free(g);
	free(th);
	jthreads_free(jt);
	vmstructs_free(vs);
	return rc;
}

/*
 * Threads blocked now as the JVM's memory shows them (stable over two
 * readings), as wait-graph edges for the report: threads parked on
 * java.util.concurrent locks, and monitors entered before tracing began.
 * *@th holds the names the edges borrow. Returns the number of edges, or
 * -errno.
 */
static int jvm_edges(const struct mt_proc *p, const struct mt_vmstructs *vs, struct parktrace *pt,
		     uint64_t now, struct jthread **th, struct locks_edge **edges)
{
	struct jthreads *jt = jthreads_new(p, vs);
	size_t n = 0, m = 0;
	int err;

	*th = NULL;
	*edges = NULL;
	if (!jt)
		return -errno;
	err = jthreads_read_stable(jt, 50 * 1000, th, &n);
	jthreads_free(jt);
	if (err)
		return err;
	*edges = calloc(n ? n : 1, sizeof(**edges));
	if (!*edges)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct jthread *t = &(*th)[i];
		const char *owner = "";
		uint64_t parked;

		if (t->wait == JTHREAD_RUNNING)
			continue;
		for (size_t j = 0; j < n && t->owner_tid; j++)
			if ((*th)[j].tid == t->owner_tid)
				owner = (*th)[j].name;
		/* parked since: the park probe's start, when it saw it; a monitor
		 * entered while tracing is in the stream's edges already */
		parked = pt && t->wait == JTHREAD_PARKED ? parktrace_parked_ns(pt, t->tid, now) : 0;
		(*edges)[m++] = (struct locks_edge){
			.tid = t->tid, .thread = t->name, .monitor = t->lock, .cls = t->lock_class,
			.owner = t->owner_tid, .owner_name = owner,
			.owner_from = t->owner_tid ? LOCKS_OWNER_JVM : LOCKS_OWNER_UNKNOWN,
			.kind = t->wait == JTHREAD_PARKED ? LOCKS_PARKED : LOCKS_MONITOR,
			.blocked_ns = parked, .since_before = !parked,
		};
	}
	return (int)m;
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct mt_seq_filter f = { .cats = MT_CAT_THREAD | MT_CAT_TYPE | MT_CAT_SYNC };
	struct cmdopt o = { .usage = usage };
	struct collector *c = NULL;
	struct mt_vmstructs *vs = NULL;
	struct parktrace *pt = NULL;
	struct jthread *jth = NULL;
	struct locks_edge *jedges = NULL;
	struct monflag mf = { 0 };
	struct locks *l = NULL;
	struct locks_report *rep = NULL;
	struct mt_seq *seq = NULL;
	bool enable = false, on = false, now = false, stacks = false;
	int opt, err = 0, rc = 1;
	uint64_t t0, deadline, at, read_at;
	struct mt_proc p;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "p:d:jh", longopts, NULL)) != -1) {
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
		return locks_now(&p, mt_opts.json);
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
	/* java.util.concurrent parks: no flag needed; without them, say what is lost */
	err = vmstructs_open(&p, &vs);
	if (!err)
		pt = parktrace_new(&p, vs, stacks);
	if (err || !pt)
		p_warn("java.util.concurrent parks are not traced: %s",
		       err ? "VMStructs unreadable" : strerror(errno));
	if (!collector_monitor_sites(c)) {
		p_err("this JVM's libjvm (%s) has no hotspot:monitor__* probes", p.libjvm);
		goto cleanup;
	}
	t0 = mono_ns();
	deadline = o.duration > 0 ? t0 + (uint64_t)(o.duration * 1e9) : 0;
	if (mt_opts.json)
		printf("{\"event\":\"start\",\"pid\":%d,\"jdk\":\"%s\",\"real_ns\":%llu}\n", p.pid,
		       p.jdk_version, (unsigned long long)real_ns()); /* every probe attached */
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
	/* owners of monitors entered without contention: from the JVM's memory */
	at = mono_ns(); /* the wait graph's time: "blocked for" is up to it */
	rep = locks_report_new(l, at, collector_monitor_owner, c);
	if (!rep) {
		p_err("out of memory analysing monitors");
		goto cleanup;
	}
	/* one wait graph: threads parked on j.u.c. locks, and blocked before we
	 * began, from the JVM's memory (kernel tids: the host's pid namespace) */
	if (vs && !p.other_pidns) {
		int ne = jvm_edges(&p, vs, pt, at, &jth, &jedges);

		if (ne < 0)
			p_warn("threads blocked now could not be read from the JVM: %s", strerror(-ne));
		else if (locks_report_add(rep, jedges, (size_t)ne))
			p_err("out of memory adding the JVM's blocked threads");
	}
	lockprint_report(stdout, rep, mt_opts.json);
	read_at = real_ns(); /* the park counters are read from here on */
	if (pt)
		print_parks(pt, l, stacks, o.top);
	if (mt_opts.json)
		printf("{\"event\":\"summary\",\"sync_events\":%llu,\"lost_events\":%llu,"
		       "\"graph_mono_ns\":%llu,\"parks_read_real_ns\":%llu}\n",
		       (unsigned long long)locks_sync_events(l),
		       (unsigned long long)collector_lost(c), (unsigned long long)at,
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
	parktrace_free(pt);
	vmstructs_free(vs);
	collector_free(c);
	monflag_restore(&mf);
	sequencer_free(seq);
	locks_free(l);
	return rc;
}
