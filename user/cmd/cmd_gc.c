// SPDX-License-Identifier: GPL-2.0
/* cmd_gc.c - `memtrace gc`: one record per collection, then a summary. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "jvm/elfsym.h"
#include "sink/gcreplay.h"
#include "probe/gctrace.h"
#include "jvm/proc.h"
#include "lib/stopflag.h"
#include "lib/util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace gc -p PID [--duration S] [--json]\n"
		   "  One record per collection from hotspot:gc__begin/end and\n"
		   "  mem__pool__gc__begin/end: sequence, start, duration, kind, and each\n"
		   "  memory pool's used before/after, committed and max; the cause (GCCause,\n"
		   "  as JFR and GarbageCollectorMXBean name it) and action from a uprobe on\n"
		   "  GCMemoryManager::gc_end (no JVM flags). Kinds: young and full (a\n"
		   "  stop-the-world collection: a pause), pause (a stop-the-world pause of a\n"
		   "  concurrent cycle: G1's remark and cleanup, every ZGC and Shenandoah\n"
		   "  pause, named and timed by the JVM's GCTimer as JFR's are), cycle (ZGC's\n"
		   "  and Shenandoah's concurrent cycles: beside the application, no pause).\n"
		   "  Durations are JFR's (uprobes on GCTracer's collection reports).\n"
		   "  Ends on Ctrl-C, after --duration seconds, or when the JVM exits,\n"
		   "  with a summary (counts by kind, pause total/max/mean, lost events).\n");
}

/* gctrace calls back from gctrace_poll() only, when *@ctx is set. */
static void on_record(const struct gc_record *rec, void *ctx)
{
	gcreplay_record(rec, *(struct gcreplay **)ctx);
}

/* gc_preflight - the checks whose failure deserves a better message than libbpf's. */
static int gc_preflight(const struct mt_proc *p)
{
	struct mt_usdt_note *notes = NULL;
	struct mt_elf *e;
	int n, found = 0;

	e = elfsym_open(p->libjvm_host);
	if (!e) {
		p_err("cannot open %s: %s", p->libjvm_host, strerror(errno));
		return -errno;
	}
	n = elfsym_usdt_notes(e, "hotspot", &notes);
	for (int i = 0; i < n; i++)
		if (!strcmp(notes[i].name, "gc__begin") || !strcmp(notes[i].name, "mem__pool__gc__begin"))
			found++;
	free(notes);
	elfsym_free(e);
	if (found < 2) {
		p_err("this JVM's libjvm.so (%s) has no hotspot USDT probes for GC: it was built "
		      "without --enable-dtrace, so `memtrace gc` cannot trace collections. Use a "
		      "JDK build with DTrace probes (Debian's, Temurin's and most vendors' have "
		      "them); until then `jstat -gc %d` shows GC counts and times",
		      p->libjvm, p->pid);
		return -ENOTSUP;
	}
	return 0;
}

int do_gc(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cmdopt o = { .usage = usage };
	struct gcreplay *out = NULL;
	struct gctrace *t = NULL;
	struct mt_proc p;
	double secs;
	bool jvm_exited = false;
	int opt, rc, err = 0;
	uint64_t t0, mono_to_real, deadline;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "p:d:jh", longopts, NULL)) != -1) {
		rc = cmdopt_common(opt, optarg, &o);
		if (rc != MT_CMDOPT_MORE)
			return rc;
	}
	if (cmdopt_no_args(argc, argv, "gc", usage))
		return 2;
	if (cmdopt_need_pid(&o, "gc")) {
		usage(stderr);
		return 2;
	}
	if (cmdopt_open_jvm(o.pid, "memtrace gc", &p))
		return 1;
	if (gc_preflight(&p))
		return 1;

	t = gctrace_new(&p, on_record, &out);
	if (!t)
		return 1;
	t0 = mono_ns();
	mono_to_real = real_ns() - t0;
	out = gcreplay_new(stdout, mt_opts.json, t0, mono_to_real);
	if (!out) {
		p_err("out of memory");
		gctrace_free(t);
		return 1;
	}
	deadline = o.duration > 0 ? t0 + (uint64_t)(o.duration * 1e9) : 0;
	stopflag_catch(NULL);
	if (mt_opts.json)
		printf("{\"event\":\"start\",\"start_ns\":%llu,\"pid\":%d,\"nspid\":%d,"
		       "\"jdk\":\"%s\",\"libjvm\":",
		       (unsigned long long)(t0 + mono_to_real), p.pid, p.nspid, p.jdk_version);
	else
		p_info("tracing collections of pid %d (JDK %s); Ctrl-C to stop", p.pid,
		       p.jdk_version[0] ? p.jdk_version : "unknown");
	if (mt_opts.json) {
		json_str(stdout, p.libjvm);
		if (gctrace_no_cause(t)) {
			printf(",\"no_cause\":");
			json_str(stdout, gctrace_no_cause(t));
		}
		if (gctrace_no_pauses(t)) {
			printf(",\"no_pauses\":");
			json_str(stdout, gctrace_no_pauses(t));
		}
		printf("}\n");
	} else {
		if (gctrace_no_cause(t))
			p_info("collections will have no cause: %s", gctrace_no_cause(t));
		if (gctrace_no_pauses(t))
			p_info("the pauses of concurrent cycles are not named nor timed by the JVM "
			       "(%s): gc__begin/gc__end bracket them", gctrace_no_pauses(t));
	}

	while (!stopflag_raised()) {
		err = gctrace_poll(t, 100);
		if (err < 0) {
			p_err("reading the ring buffer failed: %s", strerror(-err));
			break;
		}
		if (deadline && mono_ns() >= deadline)
			break;
		if (!proc_exists(o.pid)) {
			jvm_exited = true;
			break;
		}
	}
	gctrace_finish(t);
	secs = (double)(mono_ns() - t0) / 1e9;
	gcreplay_summary(out, gctrace_pairing(t), gctrace_lost(t), secs, jvm_exited);
	gctrace_free(t);
	gcreplay_free(out);
	return err < 0 ? 1 : 0;
}
