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
#include <sys/stat.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "monitor/collector.h"
#include "jvm/monflag.h"
#include "monitor/objrec.h"
#include "agentctl/objstream.h"
#include "jvm/proc.h"
#include "memtrace/agent_proto.h"
#include "memtrace/jstack.h"
#include "monitor/recording.h"
#include "agentctl/sampling.h"
#include "monitor/sequencer.h"
#include "probe/sitecount.h"
#include "lib/stopflag.h"
#include "lib/util.h"

#define MAX_PAUSES 32
#define MAX_TIDS 64

static volatile sig_atomic_t sig_pause = -1;

static void on_pause(int sig) { sig_pause = sig == SIGUSR1; }

struct window {
	double from, to;   /* seconds since the start */
	uint64_t tid;      /* 0: global */
};

struct rec_ctx {
	struct recording_writer *w;
	const char *path;
	struct mt_seq *seq;
	uint64_t t0;                   /* the file opened (its header's start) */
	uint64_t t_start;              /* the probes attached: the recording starts;
				        * --duration and --pause count from here */
	const struct window *pauses;   /* the --pause schedule */
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
		"  pools, allocation samples from TLAB refills, contended monitors,\n"
		"  java.util.concurrent parks and Thread.sleep as waits) as a\n"
		"  consistent stream (rules 1-5) to FILE:\n"
		"  gzip'd JSON lines, see `memtrace report` and `memtrace check`. The file\n"
		"  is written a block (gzip member) a second: killed, or on a full disk,\n"
		"  it stays readable up to its last complete block. --duration and --pause\n"
		"  count from the start of the recording (the probes attached).\n"
		"  --categories LIST   report only these: type,object,thread,inv,pool,alloc,sync,ref\n"
		"                      (objects: naming it loads memtrace's agent into the JVM,\n"
		"                      whose allocation samples become object create/reclaim)\n"
		"  --object-interval B mean bytes between the agent's samples (default 512k)\n"
		"                      (with objects, the samples' stacks, the agent's GCs and\n"
		"                      BPF per-site allocation volume are recorded too, for\n"
		"                      `memtrace report`'s age and leaks analyses)\n"
		"  --no-site-counters  with objects: no BPF per-site allocation volume\n"
		"  --alloc-stacks      each allocation sample with its whole Java stack (the\n"
		"                      kernel's walker, 3-5 us a sample at 40 frames) for\n"
		"                      report's --by stack, --collapsed, --flamegraph, --pprof\n"
		"  --stack-depth N     Java frames kept per stack (default 512, at most 1024);\n"
		"                      a deeper stack keeps its innermost N under a first\n"
		"                      frame \"[stack cut: depth]\"\n"
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

/*
 * Say that writing the file failed (@err: ENOSPC, EIO, ...) wherever it did
 * (@what: "write", "finish writing"), and what is left: the writer cut the
 * file back to its last complete block (@bytes), which report and check read.
 */
static void say_cut(const char *path, const char *what, int err, uint64_t bytes)
{
	p_err("cannot %s %s: %s; the recording stops there, readable up to its last "
	      "complete block (%llu bytes; `memtrace report` and `check` read it)", what, path,
	      strerror(-err), (unsigned long long)bytes);
}

/* The first write error: said once; the loop ends on it. */
static void emit_error(struct rec_ctx *r, int err)
{
	if (r->err)
		return;
	r->err = err;
	say_cut(r->path, "write", err, recording_written(r->w));
}

static void emit(void *ctx, const struct mt_ev *e, const char *text, size_t len)
{
	struct rec_ctx *r = ctx;
	int err = recording_write(r->w, e, text);

	if (err)
		emit_error(r, err);
}

/* Apply the --pause schedule at event time @ts. */
static void tick(void *ctx, uint64_t ts)
{
	struct rec_ctx *r = ctx;
	uint64_t base = r->t_start ? r->t_start : r->t0;
	double s = ts > base ? (double)(ts - base) / 1e9 : 0;
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

/* The options of `memtrace record` (libbpf-tools' env). */
struct record_opts {
	int pid;
	double duration;
	const char *out;
	struct mt_seq_filter f;        /* f.tids points into tids */
	uint64_t tids[MAX_TIDS];
	struct window pauses[MAX_PAUSES];
	int npauses;
	bool monitors;                 /* --enable-monitor-probes */
	bool alloc_asked;              /* --categories named alloc */
	bool objects;                  /* --categories named object */
	bool counters;                 /* per-site counters with objects */
	bool alloc_stacks;
	uint32_t stack_depth;          /* --stack-depth, 0: the default */
	uint32_t obj_interval;
	char filter[sizeof(((struct recording_header *)0)->filter)]; /* as typed */
};

/* One --pause A-B or --pause-thread TID:A-B (@thread) into the next window.
 * 0, or -EINVAL (printed). */
static int parse_pause(struct record_opts *o, char *arg, bool thread)
{
	struct window *w = &o->pauses[o->npauses];
	const char *spec = arg;

	if (o->npauses == MAX_PAUSES) {
		p_err("at most %d --pause/--pause-thread windows", MAX_PAUSES);
		return -EINVAL;
	}
	w->tid = 0;
	if (thread) {
		char *colon = strchr(arg, ':');

		if (!colon) {
			p_err("invalid --pause-thread '%s': expected TID:A-B", arg);
			return -EINVAL;
		}
		*colon = '\0';
		if (parse_u64(arg, &w->tid) || !w->tid) {
			p_err("invalid --pause-thread tid '%s'", arg);
			return -EINVAL;
		}
		spec = colon + 1;
	}
	if (parse_window(spec, w)) {
		p_err("invalid pause window '%s': expected A-B in seconds, e.g. 2-4.5", spec);
		return -EINVAL;
	}
	o->npauses++;
	return 0;
}

/* The filter options, as typed, for the file's header (all but -p, -o, -d). */
static void filter_text(int argc, char **argv, char *buf, size_t n)
{
	size_t len = 0;

	for (int i = 1; i < argc && len + 1 < n; i++) {
		if (!strcmp(argv[i], "-p") || !strcmp(argv[i], "-o") || !strcmp(argv[i], "--pid") ||
		    !strcmp(argv[i], "--output") || !strcmp(argv[i], "-d") ||
		    !strcmp(argv[i], "--duration")) {
			i++;
			continue;
		}
		len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? " " : "", argv[i]);
	}
}

/* The options into *@o. Returns -1 to go on, else the exit code (0 after
 * --help, 2 for a bad option). */
static int parse_args(int argc, char **argv, struct record_opts *o)
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
		{ "stack-depth", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct mt_seq_filter *f = &o->f;
	struct cmdopt co = { .usage = usage };
	const char *bad;
	uint64_t v;
	int opt, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "p:o:d:h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			o->out = optarg;
			break;
		case 'c':
			o->alloc_asked = true;
			if (sequencer_cats_parse(optarg, &f->cats, &bad) || !f->cats) {
				p_err("invalid --categories '%s' (at '%s'): expected a comma-separated "
				      "list of type,object,thread,inv,pool,alloc,sync,ref or all",
				      optarg, bad);
				return 2;
			}
			break;
		case 'C':
			f->class_glob = optarg;
			break;
		case 'T':
			f->thread_glob = optarg;
			break;
		case 't':
			if (parse_u64(optarg, &v) || !v || f->ntids == MAX_TIDS) {
				p_err("invalid --tid '%s': expected a thread id (at most %d)", optarg,
				      MAX_TIDS);
				return 2;
			}
			o->tids[f->ntids++] = v;
			f->tids = o->tids;
			break;
		case 's':
			if (parse_u64(optarg, &v) || !v || v > UINT32_MAX) {
				p_err("invalid --sample '%s': expected a positive number", optarg);
				return 2;
			}
			f->sample = (uint32_t)v;
			break;
		case 'P':
		case 'Q':
			if (parse_pause(o, optarg, opt == 'Q'))
				return 2;
			break;
		case 'M':
			o->monitors = true;
			break;
		case 'I':
			if (sampling_parse_interval(optarg, &o->obj_interval)) {
				p_err("invalid --object-interval '%s': expected bytes, e.g. 64k", optarg);
				return 2;
			}
			break;
		case 'S':
			o->counters = false;
			break;
		case 'A':
			o->alloc_stacks = true;
			break;
		case 'D':
			if (cmdopt_stack_depth(optarg, &o->stack_depth))
				return 2;
			break;
		default:
			rc = cmdopt_common(opt, optarg, &co);
			if (rc != MT_CMDOPT_MORE)
				return rc;
		}
	}
	if (cmdopt_no_args(argc, argv, "record", usage))
		return 2;
	filter_text(argc, argv, o->filter, sizeof(o->filter));
	o->pid = co.pid;
	o->duration = co.duration;
	if (!o->pid || !o->out) {
		p_err("record needs -p PID and -o FILE");
		usage(stderr);
		return 2;
	}
	/* allocation samples are required when named, objects only when named */
	o->alloc_asked = o->alloc_asked && (f->cats & MT_CAT_ALLOC);
	o->objects = objects_asked(f, argv, argc);
	return -1;
}

/* What one `memtrace record` run holds. */
struct record_run {
	struct record_opts o;
	struct mt_proc p;
	struct rec_ctx r;
	struct recording_header h;
	struct recording_trailer tr;
	struct monflag mf;
	bool thread_paused[MAX_PAUSES];
	struct collector *c;
	struct objrec_writer *ow;
	struct sitecount *sc;
	bool jvm_exited;
};

/* The sequencer and the file with its header. 0 or -errno (printed). */
static int record_open(struct record_run *x)
{
	struct recording_header *h = &x->h;
	struct rec_ctx *r = &x->r;

	r->pauses = x->o.pauses;
	r->npauses = x->o.npauses;
	r->thread_paused = x->thread_paused;
	r->seq = sequencer_new(&x->o.f, emit, r);
	if (!r->seq) {
		p_err("cannot create the sequencer: %s", strerror(errno));
		return -ENOMEM;
	}
	r->t0 = mono_ns();
	h->pid = x->p.pid;
	h->nspid = x->p.nspid;
	snprintf(h->jdk, sizeof(h->jdk), "%s", x->p.jdk_version);
	snprintf(h->libjvm, sizeof(h->libjvm), "%s", x->p.libjvm);
	snprintf(h->filter, sizeof(h->filter), "%s", x->o.filter);
	h->start_mono_ns = r->t0;
	h->mono_to_real_ns = real_ns() - r->t0;
	r->path = x->o.out;
	r->w = recording_create(x->o.out, h);
	if (!r->w) {
		p_err("cannot create %s: %s; nothing was recorded", x->o.out, strerror(errno));
		return -errno;
	}
	return 0;
}

/* Sampled objects (the agent is loaded), with the stacks, GC boundaries and
 * counters report's age and leaks need, and per-site allocation volume.
 * 0 or -errno (printed). */
static int record_objects(struct record_run *x)
{
	struct objstream_tap tap;

	if (collector_enable_objects(x->c, &x->p, x->o.obj_interval))
		return -EIO;
	x->ow = objrec_writer_new(x->r.w);
	if (!x->ow) {
		p_err("out of memory");
		return -ENOMEM;
	}
	objrec_writer_tap(x->ow, &tap);
	objstream_set_tap(collector_objstream(x->c), &tap);
	if (x->o.counters) {
		x->sc = sitecount_new(&x->p); /* printed why not */
		if (!x->sc)
			p_warn("recording without per-site allocation counters (report's "
			       "leaks will show no allocation rates)");
	}
	return 0;
}

/* The collector and what the categories ask of it: allocation samples,
 * parks and sleeps, sampled objects, monitor probes. 0 or -errno (printed). */
static int record_sources(struct record_run *x)
{
	const struct record_opts *o = &x->o;
	int err;

	x->c = collector_new(&x->p, x->r.seq, tick, &x->r,
			     !o->alloc_stacks ? 0 : o->stack_depth ? o->stack_depth :
			     MT_JSTACK_DEFAULT_DEPTH);
	if (!x->c)
		return -errno;
	/* Allocation samples: wanted unless filtered out; required when named. */
	if (!o->f.cats || (o->f.cats & MT_CAT_ALLOC)) {
		err = collector_enable_alloc(x->c, &x->p);
		if (err && (o->alloc_asked || o->alloc_stacks))
			return err;
		if (err)
			p_warn("the recording has no allocation samples (see above)");
		if (!err && o->alloc_stacks && (err = collector_enable_alloc_stacks(x->c, &x->p)))
			return err;
	}
	/* Parks and sleeps: no JVM flag needed; wanted unless filtered out. */
	if ((!o->f.cats || (o->f.cats & MT_CAT_SYNC)) && collector_enable_parks(x->c, &x->p))
		p_warn("the recording has no java.util.concurrent parks or Thread.sleep "
		       "(see above)");
	/* Sampled objects: only when asked for by name (the agent is loaded). */
	if (o->objects && (err = record_objects(x)))
		return err;
	if (o->monitors && !collector_monitor_sites(x->c))
		p_warn("this JVM's libjvm has no hotspot:monitor__* probes: no lock events");
	return 0;
}

/* Record until Ctrl-C, --duration, a write error or the JVM's exit; SIGUSR1
 * and SIGUSR2 pause and resume reporting. 0, or the ring buffer's -errno
 * (printed). */
static int record_loop(struct record_run *x)
{
	struct rec_ctx *r = &x->r;
	uint64_t deadline;
	int err;

	/* the duration counts from here, not from the setup (attaching the
	 * probes took 1.5 s alone, 10 s beside two other sessions: a 4 s
	 * recording then held one poll's events) */
	r->t_start = mono_ns();
	deadline = x->o.duration > 0 ? r->t_start + (uint64_t)(x->o.duration * 1e9) : 0;

	p_info("recording pid %d (JDK %s) to %s%s%s; Ctrl-C to stop", x->p.pid,
	       x->p.jdk_version[0] ? x->p.jdk_version : "unknown", x->o.out,
	       x->h.filter[0] ? " with " : "", x->h.filter);
	if (mt_opts.json)
		printf("{\"event\":\"start\",\"pid\":%d,\"file\":\"%s\"}\n", x->p.pid, x->o.out);
	while (!stopflag_raised() && !r->err) {
		if (sig_pause >= 0) {
			sequencer_pause(r->seq, sig_pause);
			p_info("reporting %s (signal)", sig_pause ? "paused" : "resumed");
			sig_pause = -1;
		}
		err = collector_poll(x->c, 100);
		if (err == -ESRCH) { /* the agent's stream ended with the JVM */
			x->jvm_exited = true;
			break;
		}
		if (err < 0) {
			p_err("reading the ring buffer failed: %s", strerror(-err));
			return err;
		}
		/* a block a second reaches the disk: a kill -9 loses at most that */
		if (!r->err && (err = recording_tick(r->w, mono_ns())))
			emit_error(r, err);
		sitecount_warm(x->sc); /* new sites named while their code lives */
		if (deadline && mono_ns() >= deadline)
			break;
		if (!proc_exists(x->o.pid)) {
			x->jvm_exited = true;
			break;
		}
	}
	return 0;
}

/* After the loop: the per-site volumes and the agent's counters written,
 * the trailer filled, what was recorded said. */
static void record_finish(struct record_run *x)
{
	struct recording_trailer *tr = &x->tr;
	const struct sequencer_stats *st = sequencer_stats(x->r.seq);
	uint64_t made, gone, lost, resyncs, classes;
	double secs;

	if (x->sc) {
		struct mt_site_volumes vol = { 0 };

		/* the JVM writes its perf map (compiled frames' names) if it still runs */
		if (sitecount_read(x->sc, &x->p, !x->jvm_exited, &vol))
			p_warn("out of memory reading the per-site allocation counters");
		else
			objrec_writer_volumes(x->ow, &vol);
		sitevol_free(&vol);
		sitecount_free(x->sc);
		x->sc = NULL;
	}
	if (x->jvm_exited)
		p_info("JVM %d exited: the recording holds what it did up to its exit", x->p.pid);
	collector_stop_objects(x->c, &made, &gone, &lost);
	if (made)
		p_info("objects: %llu sampled, %llu reclaimed, %llu lost in the agent",
		       (unsigned long long)made, (unsigned long long)gone, (unsigned long long)lost);
	tr->present = true;
	tr->ts = mono_ns();
	tr->lost = collector_lost(x->c);
	/* the file's span, from its header's start (report's window); the
	 * recording proper (below) from the probes attached */
	tr->duration_s = (double)(tr->ts - x->r.t0) / 1e9;
	secs = (double)(tr->ts - (x->r.t_start ? x->r.t_start : x->r.t0)) / 1e9;
	tr->jvm_exited = x->jvm_exited;
	tr->attached_ns = x->r.t_start;
	tr->events_in = st->in;
	tr->events_out = st->out;
	tr->dropped = st->dropped;
	collector_resync_stats(x->c, &resyncs, &classes);
	if (resyncs)
		p_info("%llu resynchronisation(s) after lost events (last: %llu classes "
		       "read from the JVM)", (unsigned long long)resyncs,
		       (unsigned long long)classes);
	/* every line is one of these; every observed event ends in one of those
	 * (after a write error not every line emitted is in the file) */
	p_info("%s %llu lines in %.1f s%s: %llu observed events, %llu inferred, %llu read "
	       "from the JVM, %llu names, %llu lost-event markers",
	       x->r.err ? "emitted" : "recorded", (unsigned long long)st->out, secs,
	       x->r.err ? " (the file keeps those of its complete blocks)" : "",
	       (unsigned long long)sequencer_observed_out(st), (unsigned long long)st->inferred,
	       (unsigned long long)st->resync, (unsigned long long)st->names,
	       (unsigned long long)st->markers);
	p_info("of %llu events observed: %llu recorded, %llu not reported (filters, pauses), "
	       "%llu part of Object.wait calls, %llu dropped (they end what began before the "
	       "recording or in a gap); %llu events lost",
	       (unsigned long long)st->in, (unsigned long long)sequencer_observed_out(st),
	       (unsigned long long)sequencer_unreported(st), (unsigned long long)st->absorbed,
	       (unsigned long long)st->dropped, (unsigned long long)tr->lost);
}

/* Free everything and close the file (with the trailer when the loop ran).
 * Returns the first error: @err, the object lines', the file's. */
static int record_close(struct record_run *x, int err)
{
	sitecount_free(x->sc);
	collector_free(x->c);
	if (x->ow && objrec_writer_err(x->ow) && !err)
		emit_error(&x->r, objrec_writer_err(x->ow)); /* its lines go through the writer */
	objrec_writer_free(x->ow);
	monflag_restore(&x->mf);
	if (x->r.w) {
		int cerr = recording_close(x->r.w, x->tr.present ? &x->tr : NULL);
		struct stat st;

		/* the last block, written at the end: the disk may fill there too */
		if (cerr && !x->r.err && !err) {
			say_cut(x->o.out, "finish writing", cerr,
				stat(x->o.out, &st) ? 0 : (uint64_t)st.st_size);
			err = cerr;
		}
	}
	sequencer_free(x->r.seq);
	return err;
}

int do_record(int argc, char **argv)
{
	struct record_run *x = calloc(1, sizeof(*x));
	int rc, err;

	if (!x) {
		p_err("out of memory");
		return 1;
	}
	x->o.counters = true;
	x->o.obj_interval = MT_AP_DEFAULT_INTERVAL;
	rc = parse_args(argc, argv, &x->o);
	if (rc >= 0)
		goto out;
	rc = 1;
	if (cmdopt_open_jvm(x->o.pid, "memtrace record", &x->p))
		goto out;
	err = record_open(x);
	if (!x->r.seq)
		goto out; /* nothing to close */
	if (!err && x->o.monitors && monflag_enable(&x->p, &x->mf))
		err = -EPERM;
	if (!err) {
		stopflag_catch(NULL);
		signal(SIGUSR1, on_pause);
		signal(SIGUSR2, on_pause);
		err = record_sources(x);
	}
	if (!err) {
		err = record_loop(x);
		record_finish(x);
	}
	err = record_close(x, err);
	rc = err || x->r.err ? 1 : 0;
out:
	free(x);
	return rc;
}
