// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_leaks.c - `memtrace leaks -p PID`: what keeps growing in the heap, and
 * who holds it. Over the window (--duration, 30 s) memtrace takes up to
 * --snapshots (6) frozen heap snapshots at even intervals, those that would
 * not end within the window left out (heapseries_keep_turn(); each pauses
 * the JVM only to fork) and reports every holder
 * whose objects grew in every interval (analysis/heapgrowth.h: exact counts,
 * matched by their place on the shortest root path). Meanwhile the agent
 * samples allocations (as `memtrace age`): the last snapshot finds the live
 * sampled objects, and a holder's sites are those of the sampled objects
 * under it - samples add sites, they do not decide what is a leak.
 * --sampled runs the earlier, sample-only ranking instead (leaks_sampled.c).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "cmd/leaks_sampled.h"
#include "agentctl/sampling.h"
#include "heap/heapseries.h"
#include "heap/recpool.h"
#include "sink/growthreport.h"
#include "lib/util.h"

#define DEFAULT_SNAPSHOTS 6
#define LEAKS_INTERVAL   (4u << 20) /* mean bytes between samples: sites, not figures */

struct leaks_opts {
	struct mt_sampling_opts s;
	uint32_t snapshots;
	uint64_t min_growth;
	uint64_t min_age;          /* --sampled */
	bool counters, paths, sampled;
	bool snapshots_given;      /* --snapshots: exactly that many, late or not */
	uint64_t top;
	const struct cmdopt *co;   /* --max-pause */
};

struct growth_run {
	const struct leaks_opts *o;
	struct heapseries series;
	uint64_t *ids;             /* the sample ids the last snapshot looks for */
	double t_end;              /* when the window ended (s): the last snapshot's time */
	uint32_t turn;             /* on_walk turns so far */
	uint32_t skipped;          /* turns left out to keep to the window */
	bool mem_stopped;          /* a snapshot would not fit in memory (heap/heapmem.h):
				    * the growth of those taken before it is the answer */
	int err;
};

/* Frames that arrive during a walk: the sampling session's EVENTS. */
static int feed(void *ctx, const struct mt_ap_hdr *h, const void *payload)
{
	if (h->type == MT_AP_EVENTS && samples_feed(ctx, payload, h->len) == -ENOMEM)
		return -ENOMEM;
	return 0;
}

static int newest_first(const void *a, const void *b)
{
	const struct mt_sample *x = a, *y = b;

	return x->id < y->id ? 1 : x->id > y->id ? -1 : 0;
}

/* One snapshot of the series in the sampling session's socket @so; the
 * last looks for the newest live samples (MT_AP_HEAP_MAX_SAMPLES). */
static int walk(struct growth_run *g, const struct mt_proc *p, struct mt_agentsock *so,
		struct mt_samples *m, double t, bool last)
{
	struct mt_snapsession ss;
	int err;

	if (snaptake_attach(p, so, &ss))
		return -ENOMEM;
	ss.on_frame = feed;
	ss.frame_ctx = m;
	if (last && m->n) {
		struct mt_sample *v = malloc(m->n * sizeof(*v));
		uint32_t k = 0;

		g->ids = malloc(MT_AP_HEAP_MAX_SAMPLES * sizeof(*g->ids));
		if (v && g->ids) {
			memcpy(v, m->s, m->n * sizeof(*v));
			qsort(v, m->n, sizeof(*v), newest_first);
			for (; k < m->n && k < MT_AP_HEAP_MAX_SAMPLES; k++)
				g->ids[k] = v[k].id;
			ss.samples = g->ids;
			ss.nsamples = k;
		}
		free(v);
	}
	err = heapseries_take(&g->series, &ss, t, m->gcs, !g->series.taken || last);
	snaptake_close(&ss);
	if (!err && !last) /* meanwhile, not in the next one's time */
		heapseries_ready_next(&g->series);
	if (err == -EDQUOT && g->series.taken >= 2) {
		/* refused (said why) with the session intact: a growing heap
		 * outgrew the memory bound; the snapshots taken still answer */
		g->mem_stopped = true;
		return 0;
	}
	if (err)
		g->err = err;
	return err;
}

static int on_walk(void *ctx, const struct mt_proc *p, struct mt_agentsock *so,
		   struct mt_samples *m, double t)
{
	struct growth_run *g = ctx;
	struct heapseries_plan pl = { .n = g->o->snapshots, .duration = g->o->s.duration,
				      .exact = g->o->snapshots_given };

	if (g->mem_stopped)
		return 0;
	if (!heapseries_keep_turn(&pl, g->turn++, t, g->series.taken,
				  (double)g->series.last_ns / 1e9)) {
		g->skipped++;
		return 0;
	}
	if (g->o->snapshots_given)
		p_info("heap snapshot %u of %u at %.1f s", g->series.taken + 1, g->o->snapshots, t);
	else
		p_info("heap snapshot %u (of up to %u) at %.1f s", g->series.taken + 1,
		       g->o->snapshots, t);
	return walk(g, p, so, m, t, false) ? -1 : 0;
}

static void on_end(void *ctx, const struct mt_proc *p, double elapsed)
{
	struct growth_run *g = ctx;

	(void)p;
	g->t_end = elapsed;
}

static int on_last(void *ctx, const struct mt_proc *p, struct mt_agentsock *so,
		   struct mt_samples *m)
{
	struct growth_run *g = ctx;

	if (g->err || g->mem_stopped)
		return 0; /* an earlier snapshot failed or did not fit: said so */
	p_info("heap snapshot %u (the last) at %.1f s", g->series.taken + 1, g->t_end);
	/* its time: when it starts, later than --duration if snapshots ran late */
	return walk(g, p, so, m, g->t_end, true) ? -1 : 0;
}

static int growth_run(struct leaks_opts *o)
{
	struct growth_run g = { .o = o };
	struct heapgrowth_opts go = { .min_growth = o->min_growth };
	struct heapgrowth_result r;
	struct mt_samples m;
	struct mt_proc p;
	double elapsed;
	int rc = 1, err;

	if (heapseries_init(&g.series))
		return 1;
	g.series.max_pause = o->co->has_max_pause;
	g.series.max_pause_ms = (uint32_t)o->co->max_pause;
	o->s.walk_every = o->s.duration / (o->snapshots - 1);
	o->s.walks = o->snapshots - 1; /* all of them, late or not */
	o->s.on_walk = on_walk;
	o->s.on_end = on_end;
	o->s.on_last = on_last;
	err = sampling_run(&o->s, &p, &m, NULL, &g, &elapsed);
	if (err || g.err)
		goto out;
	if (g.series.taken < 2) {
		p_err("only %u heap snapshot%s taken: growth needs two at least (a longer "
		      "--duration)", g.series.taken, g.series.taken == 1 ? "" : "s");
		goto out;
	}
	if (g.mem_stopped)
		p_warn("%u of %u heap snapshots taken: the next would not fit in memory (above); "
		       "growth over those, confidence from %u interval%s, without the allocation "
		       "sites the last snapshot finds", g.series.taken, o->snapshots,
		       g.series.taken - 1, g.series.taken == 2 ? "" : "s");
	else if (g.series.taken + g.skipped < o->snapshots)
		p_warn("%u of %u heap snapshots taken (interrupted): growth over those",
		       g.series.taken, o->snapshots);
	else if (g.skipped)
		p_info("%u of up to %u heap snapshots fitted in the window: one took %.1f s on "
		       "average for %llu objects (the copy runs niced behind the JVM's threads); "
		       "--snapshots %u takes all, the window then runs late", g.series.taken,
		       o->snapshots, (double)g.series.walk_ns / 1e9 / g.series.taken,
		       (unsigned long long)g.series.objects_last, o->snapshots);
	/* the window's end: the last snapshot's instant (its fork's, as the
	 * report's times), not its request's: the two differ by the agent's
	 * naming and a GC waited for, 0.1-0.2 s on a busy machine */
	if (g.series.taken)
		g.t_end = g.series.t_last;
	if (g.t_end > o->s.duration * 1.2 + 2)
		p_warn("the snapshots took longer than %s (%.1f s each on average for %llu "
		       "objects): the window lasted %.0f s, not %.0f%s",
		       g.skipped ? "even three allow" : "their interval",
		       (double)g.series.walk_ns / 1e9 / g.series.taken,
		       (unsigned long long)g.series.objects_last, g.t_end, o->s.duration,
		       g.skipped ? "; a longer --duration keeps to it" :
				   "; fewer --snapshots or a longer --duration keeps to it");
	if (heapgrowth_rank(g.series.growth, &go, &r)) {
		p_err("out of memory");
		goto out;
	}
	{
		struct growthreport_src src = { .pid = p.pid, .elapsed = elapsed,
						.json = mt_opts.json, .top = o->top, .m = &m };

		if (growthreport_print(&r, &g.series, &src) < 0)
			goto out;
	}
	sampling_print_losses(&m);
	rc = 0;
out:
	recpool_defer_frees(); /* the answer is out: the pool goes with the exit */
	free(g.ids);
	heapseries_free(&g.series);
	samples_free(&m);
	return rc;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace leaks -p PID [--duration S] [--snapshots N] [--min-growth N]\n"
		   "                     [--top N] [--json] [--interval BYTES] [--depth N]\n"
		   "                     [--max-pause MS]\n"
		   "       memtrace leaks -p PID --sampled [--duration S] [--min-age K] [--paths]\n"
		   "                     [--no-site-counters] [--interval BYTES] [--depth N]\n"
		   "                     [--max-pause MS]\n"
		   "  What keeps growing in the heap, and who holds it. Over S seconds (default\n"
		   "  30) memtrace takes up to N heap snapshots at even intervals (default 6;\n"
		   "  each pauses the JVM only to fork a frozen copy) and names every holder\n"
		   "  whose objects grew in every interval: a static field's map, a thread's\n"
		   "  local list, an object's field. When a snapshot takes longer than its\n"
		   "  interval (a big heap on a busy machine), those that would not end within\n"
		   "  the window are left out, and said - three are always taken: the first,\n"
		   "  one between and the last, at S. --snapshots N takes exactly N, late or\n"
		   "  not: the window then lasts longer than S.\n"
		   "  Objects are counted exactly and matched by their place on the shortest\n"
		   "  path from a GC root (array indices and a list's links left out). A holder\n"
		   "  is a suspect when its count rose in all N-1 intervals and by at least\n"
		   "  --min-growth objects (default 32): a count that only fluctuates does that\n"
		   "  with chance 1/N! at most, which is printed as the confidence. A cache\n"
		   "  filled once or of a bounded size that replaces entries never is one.\n"
		   "  For each: what grew (per class, where), its retained bytes, its ages (the\n"
		   "  objects gained in each interval and the GCs they survived since), and\n"
		   "  where they were allocated: the agent samples allocations meanwhile\n"
		   "  (--interval, default 4m: sites, not figures) and the last snapshot finds\n"
		   "  the live sampled objects under each holder; samples add sites, they do\n"
		   "  not decide what is a leak.\n"
		   "  --sampled: the sample-only ranking of allocation sites by the growth of\n"
		   "  their old live bytes (survived >= K GCs, --min-age, default 2) over the\n"
		   "  second half of the window, with BPF per-site allocation counters and, with\n"
		   "  --paths, a heap walk at the end for each suspect's path.\n"
		   "  Where a snapshot cannot be a frozen copy (no libjvm .symtab) it is walked in\n"
		   "  a pause, estimated and said first, and a ZGC copy's pause copies the used\n"
		   "  heap: over 100 ms memtrace does not pause the JVM unless --max-pause MS\n"
		   "  accepts a pause of up to MS.\n");
}

int do_leaks(int argc, char **argv)
{
	static const struct option longopts[] = {
		MT_CMDOPT_SAMPLING_LONGOPTS,
		{ "snapshots", required_argument, NULL, 'n' },
		{ "min-growth", required_argument, NULL, 'g' },
		{ "sampled", no_argument, NULL, 's' },
		{ "min-age", required_argument, NULL, 'k' },
		{ "top", required_argument, NULL, 't' },
		{ "no-site-counters", no_argument, NULL, 'S' },
		{ "paths", no_argument, NULL, 'P' },
		{ "max-pause", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct leaks_opts o = {
		.s = { .duration = 30, .interval = 0, .depth = 16,
		       .max_samples = MT_SAMPLES_DEFAULT_MAX },
		.snapshots = DEFAULT_SNAPSHOTS, .min_age = 2, .counters = true,
	};
	struct cmdopt co = { .usage = usage, .top = 10 };
	uint64_t v;
	int ch, rc;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "p:d:jh", longopts, NULL)) != -1) {
		rc = sampling_common_opt(ch, optarg, &o.s);
		if (rc == 2)
			return 2;
		if (!rc)
			continue;
		switch (ch) {
		case 'n':
			if (parse_u64(optarg, &v) || v < 2 || v > HEAPGROWTH_MAX_SNAPS) {
				p_err("invalid --snapshots '%s' (2..%d)", optarg, HEAPGROWTH_MAX_SNAPS);
				return 2;
			}
			o.snapshots = (uint32_t)v;
			o.snapshots_given = true;
			break;
		case 'g':
			if (parse_u64(optarg, &o.min_growth) || !o.min_growth) {
				p_err("invalid --min-growth '%s' (objects, 1 or more)", optarg);
				return 2;
			}
			break;
		case 'k':
			if (parse_u64(optarg, &o.min_age) || !o.min_age || o.min_age > 1000) {
				p_err("invalid --min-age '%s' (GCs, 1..1000)", optarg);
				return 2;
			}
			break;
		case 's':
			o.sampled = true;
			break;
		case 'S':
			o.counters = false;
			break;
		case 'P':
			o.paths = true;
			break;
		default:
			rc = cmdopt_common(ch, optarg, &co);
			if (rc != MT_CMDOPT_MORE)
				return rc;
		}
	}
	if (optind < argc || !o.s.pid) {
		usage(stderr);
		return 2;
	}
	o.top = co.top;
	o.co = &co;
	if (o.sampled) {
		if (!o.s.interval)
			o.s.interval = MT_AP_DEFAULT_INTERVAL;
		return leaks_sampled_run(&o.s, o.min_age, o.counters, o.paths, &co);
	}
	if (o.paths)
		p_info("--paths: every suspect has its path from a GC root without it");
	if (!o.s.interval)
		o.s.interval = LEAKS_INTERVAL;
	return growth_run(&o);
}
