// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_locks.c - `memtrace locks`: monitor contention of a live JVM from the
 * hotspot:monitor__* probes, through the sequencer, into user/analysis/locks.c.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "monitor/collector.h"
#include "analysis/locks.h"
#include "jvm/monflag.h"
#include "jvm/proc.h"
#include "monitor/sequencer.h"
#include "sink/lockprint.h"
#include "lib/util.h"

static volatile sig_atomic_t exiting;

static void on_stop(int sig)
{
	exiting = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: memtrace locks -p PID [--duration S] [--json] [--enable-monitor-probes]\n"
		"  Contended monitors by class (blocked-entry and Object.wait times), the\n"
		"  wait graph (blocked thread -> owning thread) and deadlocks (its cycles),\n"
		"  printed at the end (Ctrl-C, --duration, or the JVM's exit).\n"
		"  The hotspot:monitor__* probes fire only with -XX:+DTraceMonitorProbes.\n"
		"  --enable-monitor-probes switches that flag on in the running JVM (one\n"
		"  byte written through /proc/PID/mem, printed) and back off at exit.\n");
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
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct mt_seq_filter f = { .cats = MT_CAT_THREAD | MT_CAT_TYPE | MT_CAT_SYNC };
	struct cmdopt o = { .usage = usage };
	struct collector *c = NULL;
	struct monflag mf = { 0 };
	struct locks *l = NULL;
	struct locks_report *rep = NULL;
	struct mt_seq *seq = NULL;
	bool enable = false, on = false;
	int opt, err = 0, rc = 1;
	uint64_t t0, deadline;
	struct mt_proc p;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "p:d:jh", longopts, NULL)) != -1) {
		if (opt == 'M') {
			enable = true;
			continue;
		}
		err = cmdopt_common(opt, optarg, &o);
		if (err != MT_CMDOPT_MORE)
			return err;
	}
	if (cmdopt_need_pid(&o, "locks")) {
		usage(stderr);
		return 2;
	}
	if (cmdopt_open_jvm(o.pid, "memtrace locks", &p))
		return 1;
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
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	c = collector_new(&p, seq, NULL, NULL);
	if (!c)
		goto cleanup;
	if (!collector_monitor_sites(c)) {
		p_err("this JVM's libjvm (%s) has no hotspot:monitor__* probes", p.libjvm);
		goto cleanup;
	}
	t0 = mono_ns();
	deadline = o.duration > 0 ? t0 + (uint64_t)(o.duration * 1e9) : 0;
	if (mt_opts.json)
		printf("{\"event\":\"start\",\"pid\":%d,\"jdk\":\"%s\"}\n", p.pid, p.jdk_version);
	else
		p_info("tracing contended monitors of pid %d (JDK %s); Ctrl-C to stop", p.pid,
		       p.jdk_version[0] ? p.jdk_version : "unknown");
	while (!exiting) {
		err = collector_poll(c, 100);
		if (err < 0) {
			p_err("reading the ring buffer failed: %s", strerror(-err));
			goto cleanup;
		}
		if (deadline && mono_ns() >= deadline)
			break;
		if (!proc_exists(o.pid))
			break;
	}
	/* owners of monitors entered without contention: from the JVM's memory */
	rep = locks_report_new(l, mono_ns(), collector_monitor_owner, c);
	if (!rep) {
		p_err("out of memory analysing monitors");
		goto cleanup;
	}
	lockprint_report(stdout, rep, mt_opts.json);
	if (mt_opts.json)
		printf("{\"event\":\"summary\",\"sync_events\":%llu,\"lost_events\":%llu}\n",
		       (unsigned long long)locks_sync_events(l),
		       (unsigned long long)collector_lost(c));
	else
		printf("%llu monitor events, %llu lost\n",
		       (unsigned long long)locks_sync_events(l),
		       (unsigned long long)collector_lost(c));
	rc = 0;
cleanup:
	locks_report_free(rep);
	collector_free(c);
	monflag_restore(&mf);
	sequencer_free(seq);
	locks_free(l);
	return rc;
}
