// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_record.c - `memtrace record`: a JVM's events through the sequencer
 * (filters, pauses, sampling) into a recording file (user/monitor/recording.h).
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "monitor/collector.h"
#include "jvm/monflag.h"
#include "monitor/objrec.h"
#include "agentctl/objstream.h"
#include "jvm/proc.h"
#include "memtrace/agent_proto.h"
#include "monitor/recording.h"
#include "agentctl/sampling.h"
#include "monitor/sequencer.h"
#include "probe/sitecount.h"
#include "lib/util.h"

#define MAX_PAUSES 32
#define MAX_TIDS 64

static volatile sig_atomic_t exiting, sig_pause = -1;

static void on_stop(int sig) { exiting = 1; }
static void on_pause(int sig) { sig_pause = sig == SIGUSR1; }

struct window {
	double from, to;   /* seconds since the start */
	uint64_t tid;      /* 0: global */
};

struct rec_ctx {
	struct recording_writer *w;
	struct mt_seq *seq;
	uint64_t t0;
	struct window pauses[MAX_PAUSES];
	int npauses;
	bool sched_paused;
	bool *thread_paused;
	int err;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: memtrace record -p PID -o FILE [--duration S] [filters]\n"
		"  Writes the JVM's events (threads, classes, VM operations, collections,\n"
		"  pools, allocation samples from TLAB refills, contended monitors) as a\n"
		"  consistent stream (rules 1-5) to FILE:\n"
		"  gzip'd JSON lines, see `memtrace report` and `memtrace check`.\n"
		"  --categories LIST   report only these: type,object,thread,inv,pool,alloc,sync,ref\n"
		"                      (objects: naming it loads memtrace's agent into the JVM,\n"
		"                      whose allocation samples become object create/reclaim)\n"
		"  --object-interval B mean bytes between the agent's samples (default 512k)\n"
		"                      (with objects, the samples' stacks, the agent's GCs and\n"
		"                      BPF per-site allocation volume are recorded too, for\n"
		"                      `memtrace report`'s age and leaks analyses)\n"
		"  --no-site-counters  with objects: no BPF per-site allocation volume\n"
		"  --alloc-stacks      each allocation sample with its whole Java stack (the\n"
		"                      kernel's walker, 3-5 us a sample) for report's\n"
		"                      --by stack, --collapsed, --flamegraph and --pprof\n"
		"  --class GLOB        only classes matching GLOB (e.g. 'java.util.*')\n"
		"  --thread GLOB       only threads whose name matches GLOB\n"
		"  --tid TID           only thread TID (repeatable)\n"
		"  --sample N          report one object creation in N\n"
		"  --pause A-B         no reporting from A to B after start (durations: 0.5-1, 500ms-2s; repeatable)\n"
		"  --pause-thread TID:A-B   the same for one thread\n"
		"  --enable-monitor-probes  switch -XX:+DTraceMonitorProbes on while recording\n"
		"                      (written into the JVM's memory, restored at exit)\n"
		"  SIGUSR1 pauses reporting, SIGUSR2 resumes it (memtrace serve's POST\n"
		"  /api/v1/jvms/PID/record/pause and /resume send them); Ctrl-C ends the recording.\n");
}

static void emit(void *ctx, const struct mt_ev *e, const char *text, size_t len)
{
	struct rec_ctx *r = ctx;

	if (recording_write(r->w, e, text) && !r->err) {
		r->err = -EIO;
		p_err("cannot write the recording: %s", strerror(EIO));
	}
}

/* Apply the --pause schedule at event time @ts. */
static void tick(void *ctx, uint64_t ts)
{
	struct rec_ctx *r = ctx;
	double s = ts > r->t0 ? (double)(ts - r->t0) / 1e9 : 0;
	bool global = false;

	for (int i = 0; i < r->npauses; i++) {
		bool in = s >= r->pauses[i].from && s < r->pauses[i].to;

		if (!r->pauses[i].tid) {
			global |= in;
		} else if (in != r->thread_paused[i]) {
			sequencer_pause_thread(r->seq, r->pauses[i].tid, in);
			r->thread_paused[i] = in;
		}
	}
	if (global != r->sched_paused) {
		sequencer_pause(r->seq, global);
		r->sched_paused = global;
	}
}

/* Were objects named in --categories (not just implied by "all")? */
static bool objects_asked(const struct mt_seq_filter *f, char **argv, int argc)
{
	if (!(f->cats & MT_CAT_OBJECT) || !argv)
		return false;
	for (int i = 1; i < argc; i++) {
		const char *v = NULL;

		if (!strncmp(argv[i], "--categories=", 13))
			v = argv[i] + 13;
		else if (!strcmp(argv[i], "--categories") && i + 1 < argc)
			v = argv[i + 1];
		if (v && (strstr(v, "object")))
			return true;
	}
	return false;
}

/* FROM-TO, two durations ("0.5-1.0", "500ms-2s"). */
static int parse_window(const char *s, struct window *w)
{
	const char *dash = strchr(s, '-');
	char from[64];

	if (!dash || (size_t)(dash - s) >= sizeof(from))
		return -EINVAL;
	memcpy(from, s, (size_t)(dash - s));
	from[dash - s] = '\0';
	if (parse_seconds(from, &w->from) || parse_seconds(dash + 1, &w->to) || w->to < w->from)
		return -EINVAL;
	return 0;
}

int do_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "duration", required_argument, NULL, 'd' },
		{ "categories", required_argument, NULL, 'c' },
		{ "class", required_argument, NULL, 'C' },
		{ "thread", required_argument, NULL, 'T' },
		{ "tid", required_argument, NULL, 't' },
		{ "sample", required_argument, NULL, 's' },
		{ "pause", required_argument, NULL, 'P' },
		{ "pause-thread", required_argument, NULL, 'Q' },
		{ "enable-monitor-probes", no_argument, NULL, 'M' },
		{ "object-interval", required_argument, NULL, 'I' },
		{ "no-site-counters", no_argument, NULL, 'S' },
		{ "alloc-stacks", no_argument, NULL, 'A' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct mt_seq_filter f = { 0 };
	struct rec_ctx r = { 0 };
	struct recording_header h = { 0 };
	struct recording_trailer tr = { 0 };
	struct monflag mf = { 0 };
	bool thread_paused[MAX_PAUSES] = { false };
	uint64_t tids[MAX_TIDS], v;
	struct collector *c = NULL;
	const char *out = NULL, *bad;
	bool monitors = false, jvm_exited = false, alloc_asked = false, counters = true;
	bool alloc_stacks = false;
	struct objrec_writer *ow = NULL;
	struct sitecount *sc = NULL;
	uint32_t obj_interval = MT_AP_DEFAULT_INTERVAL;
	size_t flen = 0;
	struct cmdopt o = { .usage = usage };
	struct mt_proc p;
	int pid, opt, rc, err = 0;
	uint64_t deadline;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "p:o:d:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out = optarg;
			break;
		case 'c':
			alloc_asked = true;
			if (sequencer_cats_parse(optarg, &f.cats, &bad) || !f.cats) {
				p_err("invalid --categories '%s' (at '%s'): expected a comma-separated "
				      "list of type,object,thread,inv,pool,alloc,sync,ref or all",
				      optarg, bad);
				return 2;
			}
			break;
		case 'C':
			f.class_glob = optarg;
			break;
		case 'T':
			f.thread_glob = optarg;
			break;
		case 't':
			if (parse_u64(optarg, &v) || !v || f.ntids == MAX_TIDS) {
				p_err("invalid --tid '%s': expected a thread id (at most %d)", optarg,
				      MAX_TIDS);
				return 2;
			}
			tids[f.ntids++] = v;
			f.tids = tids;
			break;
		case 's':
			if (parse_u64(optarg, &v) || !v || v > UINT32_MAX) {
				p_err("invalid --sample '%s': expected a positive number", optarg);
				return 2;
			}
			f.sample = (uint32_t)v;
			break;
		case 'P':
		case 'Q': {
			struct window *w = &r.pauses[r.npauses];
			const char *spec = optarg;

			if (r.npauses == MAX_PAUSES) {
				p_err("at most %d --pause/--pause-thread windows", MAX_PAUSES);
				return 2;
			}
			w->tid = 0;
			if (opt == 'Q') {
				char *colon = strchr(optarg, ':');

				if (!colon) {
					p_err("invalid --pause-thread '%s': expected TID:A-B", optarg);
					return 2;
				}
				*colon = '\0';
				if (parse_u64(optarg, &w->tid) || !w->tid) {
					p_err("invalid --pause-thread tid '%s'", optarg);
					return 2;
				}
				spec = colon + 1;
			}
			if (parse_window(spec, w)) {
				p_err("invalid pause window '%s': expected A-B in seconds, e.g. 2-4.5",
				      spec);
				return 2;
			}
			r.npauses++;
			break;
		}
		case 'M':
			monitors = true;
			break;
		case 'I':
			if (sampling_parse_interval(optarg, &obj_interval)) {
				p_err("invalid --object-interval '%s': expected bytes, e.g. 64k", optarg);
				return 2;
			}
			break;
		case 'S':
			counters = false;
			break;
		case 'A':
			alloc_stacks = true;
			break;
		default:
			rc = cmdopt_common(opt, optarg, &o);
			if (rc != MT_CMDOPT_MORE)
				return rc;
		}
	}
	if (cmdopt_no_args(argc, argv, "record", usage))
		return 2;
	/* the filter options, as typed, for the file's header */
	for (int i = 1; i < argc && flen + 1 < sizeof(h.filter); i++) {
		if (!strcmp(argv[i], "-p") || !strcmp(argv[i], "-o") || !strcmp(argv[i], "--pid") ||
		    !strcmp(argv[i], "--output") || !strcmp(argv[i], "-d") ||
		    !strcmp(argv[i], "--duration")) {
			i++;
			continue;
		}
		flen += (size_t)snprintf(h.filter + flen, sizeof(h.filter) - flen, "%s%s",
					 flen ? " " : "", argv[i]);
	}
	pid = o.pid;
	if (!pid || !out) {
		p_err("record needs -p PID and -o FILE");
		usage(stderr);
		return 2;
	}
	if (cmdopt_open_jvm(pid, "memtrace record", &p))
		return 1;
	r.thread_paused = thread_paused;
	r.seq = sequencer_new(&f, emit, &r);
	if (!r.seq) {
		p_err("cannot create the sequencer: %s", strerror(errno));
		return 1;
	}
	r.t0 = mono_ns();
	h.pid = p.pid;
	h.nspid = p.nspid;
	snprintf(h.jdk, sizeof(h.jdk), "%s", p.jdk_version);
	snprintf(h.libjvm, sizeof(h.libjvm), "%s", p.libjvm);
	h.start_mono_ns = r.t0;
	h.mono_to_real_ns = real_ns() - r.t0;
	r.w = recording_create(out, &h);
	if (!r.w) {
		p_err("cannot create %s: %s", out, strerror(errno));
		err = -errno;
		goto cleanup;
	}
	if (monitors && monflag_enable(&p, &mf)) {
		err = -EPERM;
		goto cleanup;
	}
	signal(SIGINT, on_stop);
	signal(SIGTERM, on_stop);
	signal(SIGUSR1, on_pause);
	signal(SIGUSR2, on_pause);
	c = collector_new(&p, r.seq, tick, &r);
	if (!c) {
		err = -errno;
		goto cleanup;
	}
	/* Allocation samples: wanted unless filtered out; required when named. */
	alloc_asked = alloc_asked && (f.cats & MT_CAT_ALLOC);
	if (!f.cats || (f.cats & MT_CAT_ALLOC)) {
		err = collector_enable_alloc(c, &p);
		if (err && (alloc_asked || alloc_stacks))
			goto cleanup;
		if (err)
			p_warn("the recording has no allocation samples (see above)");
		if (!err && alloc_stacks && (err = collector_enable_alloc_stacks(c, &p)))
			goto cleanup;
		err = 0;
	}
	/* Sampled objects: only when asked for by name (the agent is loaded). */
	if (objects_asked(&f, argv, argc)) {
		struct objstream_tap tap;

		if (collector_enable_objects(c, &p, obj_interval)) {
			err = -EIO;
			goto cleanup;
		}
		/* stacks, GC boundaries and counters for report's age and leaks */
		ow = objrec_writer_new(r.w);
		if (!ow) {
			p_err("out of memory");
			err = -ENOMEM;
			goto cleanup;
		}
		objrec_writer_tap(ow, &tap);
		objstream_set_tap(collector_objstream(c), &tap);
		if (counters) {
			sc = sitecount_new(&p); /* printed why not */
			if (!sc)
				p_warn("recording without per-site allocation counters (report's "
				       "leaks will show no survival fractions)");
		}
	}
	if (monitors && !collector_monitor_sites(c))
		p_warn("this JVM's libjvm has no hotspot:monitor__* probes: no lock events");
	deadline = o.duration > 0 ? r.t0 + (uint64_t)(o.duration * 1e9) : 0;
	p_info("recording pid %d (JDK %s) to %s%s%s; Ctrl-C to stop", p.pid,
	       p.jdk_version[0] ? p.jdk_version : "unknown", out, h.filter[0] ? " with " : "",
	       h.filter);
	if (mt_opts.json)
		printf("{\"event\":\"start\",\"pid\":%d,\"file\":\"%s\"}\n", p.pid, out);
	while (!exiting && !r.err) {
		if (sig_pause >= 0) {
			sequencer_pause(r.seq, sig_pause);
			p_info("reporting %s (signal)", sig_pause ? "paused" : "resumed");
			sig_pause = -1;
		}
		err = collector_poll(c, 100);
		if (err < 0) {
			p_err("reading the ring buffer failed: %s", strerror(-err));
			break;
		}
		err = 0;
		sitecount_warm(sc); /* new sites named while their code lives */
		if (deadline && mono_ns() >= deadline)
			break;
		if (!proc_exists(pid)) {
			jvm_exited = true;
			break;
		}
	}
	if (sc) {
		struct mt_site_volumes vol = { 0 };

		/* the JVM writes its perf map (compiled frames' names) if it still runs */
		if (sitecount_read(sc, &p, !jvm_exited, &vol))
			p_warn("out of memory reading the per-site allocation counters");
		else
			objrec_writer_volumes(ow, &vol);
		sitevol_free(&vol);
		sitecount_free(sc);
		sc = NULL;
	}
	{
		uint64_t made, gone, lost;

		collector_stop_objects(c, &made, &gone, &lost);
		if (made)
			p_info("objects: %llu sampled, %llu reclaimed, %llu lost in the agent",
			       (unsigned long long)made, (unsigned long long)gone,
			       (unsigned long long)lost);
	}
	tr.present = true;
	tr.ts = mono_ns();
	tr.lost = collector_lost(c);
	tr.duration_s = (double)(tr.ts - r.t0) / 1e9;
	tr.jvm_exited = jvm_exited;
	tr.events_in = sequencer_stats(r.seq)->in;
	tr.events_out = sequencer_stats(r.seq)->out;
	tr.dropped = sequencer_stats(r.seq)->dropped;
	{
		uint64_t resyncs, classes;

		collector_resync_stats(c, &resyncs, &classes);
		if (resyncs)
			p_info("%llu resynchronisation(s) after lost events (last: %llu classes "
			       "read from the JVM)", (unsigned long long)resyncs,
			       (unsigned long long)classes);
	}
	p_info("recorded %llu of %llu events (%llu lazy, %llu inferred, %llu impossible dropped, "
	       "%llu lost) in %.1f s",
	       (unsigned long long)tr.events_out, (unsigned long long)tr.events_in,
	       (unsigned long long)sequencer_stats(r.seq)->lazy,
	       (unsigned long long)sequencer_stats(r.seq)->inferred, (unsigned long long)tr.dropped,
	       (unsigned long long)tr.lost, tr.duration_s);
cleanup:
	sitecount_free(sc);
	collector_free(c);
	if (ow && objrec_writer_err(ow) && !err) {
		p_err("cannot write the recording's object-sampling lines: %s",
		      strerror(-objrec_writer_err(ow)));
		err = objrec_writer_err(ow);
	}
	objrec_writer_free(ow);
	monflag_restore(&mf);
	if (r.w && recording_close(r.w, tr.present ? &tr : NULL) && !err) {
		p_err("cannot finish writing %s: %s", out, strerror(EIO));
		err = -EIO;
	}
	sequencer_free(r.seq);
	return err || r.err ? 1 : 0;
}
