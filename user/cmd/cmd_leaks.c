// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_leaks.c - `memtrace leaks -p PID [--duration S] [--min-age K] [--json]`:
 * (allocation site, class) pairs ranked by the growth of their old live bytes
 * (samples that survived >= K GCs) over the second half of the window, each
 * with the samples behind it, estimated live bytes and a 95% interval, growth
 * rate and a confidence; the statistics are described in leaks.h. Unless
 * --no-site-counters, BPF counts allocation volume per site meanwhile
 * (sitecount.h) and each group shows its allocation rate and the fraction
 * of its allocated bytes that survived.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "analysis/leaks.h"
#include "sink/objreport.h"
#include "agentctl/sampling.h"
#include "probe/sitecount.h"
#include "lib/util.h"

struct leaks_ctx {
	struct mt_leaks l;
	double t_mid;
	int err;
	bool counters;             /* --no-site-counters not given */
	struct sitecount *sc;      /* BPF per-site counters, NULL if unavailable */
	struct mt_site_volumes vol;
	bool have_vol;
};

/* Every arriving sample: its group's allocation estimate. */
static void on_alloc(void *ctx, uint32_t site, uint32_t cls, double weight)
{
	leaks_on_alloc(&((struct leaks_ctx *)ctx)->l, site, cls, weight);
}

/* Sampling started: count allocation volume per site from now on. */
static int on_start(void *ctx, const struct mt_proc *p)
{
	struct leaks_ctx *c = ctx;

	if (!c->counters)
		return 0;
	c->sc = sitecount_new(p); /* printed why not */
	if (!c->sc)
		p_warn("continuing without per-site allocation counters (survival fractions "
		       "are not shown)");
	return 0;
}

/* The window ended: read the counters before the session winds down. */
static void on_end(void *ctx, const struct mt_proc *p, double elapsed)
{
	struct leaks_ctx *c = ctx;

	if (!c->sc)
		return;
	if (sitecount_read(c->sc, p, 1, &c->vol))
		p_warn("out of memory reading the per-site allocation counters");
	else
		c->have_vol = true;
	sitecount_free(c->sc);
	c->sc = NULL;
}

/* At the middle of the window: remember which samples are old. */
static int on_tick(void *ctx, struct mt_samples *m, double t)
{
	struct leaks_ctx *c = ctx;

	sitecount_warm(c->sc); /* new sites named while their code lives */
	if (c->l.have_mid || t < c->t_mid)
		return 0;
	c->err = leaks_mark_mid(&c->l, m, t);
	if (c->err)
		p_err("out of memory");
	return c->err;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace leaks -p PID [--duration S] [--min-age K] [--interval BYTES] "
		   "[--depth N] [--max-samples N] [--top N] [--no-site-counters] [--json]\n"
		   "  Sample allocations for S seconds (default 30) and rank allocation sites by\n"
		   "  the growth of their old live bytes (survived >= K GCs, default 2) over the\n"
		   "  second half of the window. A suspect needs confidence >= 0.95.\n"
		   "  BPF counts allocation volume per site meanwhile, so each site shows its\n"
		   "  allocation rate and the fraction of its allocated bytes still live and\n"
		   "  old at the end (survival); --no-site-counters skips that.\n");
}

int do_leaks(int argc, char **argv)
{
	static const struct option longopts[] = {
		MT_CMDOPT_SAMPLING_LONGOPTS,
		{ "min-age", required_argument, NULL, 'k' },
		{ "top", required_argument, NULL, 't' },
		{ "no-site-counters", no_argument, NULL, 'S' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct mt_sampling_opts o = { .duration = 30, .interval = MT_AP_DEFAULT_INTERVAL,
				      .depth = 16, .max_samples = MT_SAMPLES_DEFAULT_MAX };
	struct leaks_ctx c = { .counters = true };
	struct cmdopt co = { .usage = usage, .top = 10 };
	struct mt_samples m;
	struct mt_proc p;
	uint64_t k = 2;
	double elapsed;
	int ch, rc, suspects;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "p:d:jh", longopts, NULL)) != -1) {
		rc = sampling_common_opt(ch, optarg, &o);
		if (rc == 2)
			return 2;
		if (!rc)
			continue;
		switch (ch) {
		case 'k':
			if (parse_u64(optarg, &k) || !k || k > 1000) {
				p_err("invalid --min-age '%s' (GCs, 1..1000)", optarg);
				return 2;
			}
			break;
		case 'S':
			c.counters = false;
			break;
		default:
			rc = cmdopt_common(ch, optarg, &co);
			if (rc != MT_CMDOPT_MORE)
				return rc;
		}
	}
	if (optind < argc || !o.pid) {
		usage(stderr);
		return 2;
	}
	leaks_init(&c.l, k);
	c.t_mid = o.duration / 2;
	o.on_alloc = on_alloc;
	o.on_start = on_start;
	o.on_end = on_end;
	rc = sampling_run(&o, &p, &m, on_tick, &c, &elapsed);
	sitecount_free(c.sc); /* if the session ended before on_end */
	if (rc || !m.s) {
		sitevol_free(&c.vol);
		leaks_free(&c.l);
		samples_free(&m);
		return 1;
	}
	if (!c.l.have_mid) {
		/* interrupted before the middle: the first half is all we have */
		p_warn("the window ended before its middle: growth is measured over nothing");
		leaks_mark_mid(&c.l, &m, elapsed);
	}
	suspects = leaks_rank(&c.l, &m, elapsed);
	if (suspects >= 0 && c.have_vol && leaks_match_volumes(&c.l, &m, &c.vol, elapsed) < 0)
		suspects = -ENOMEM;
	if (suspects < 0) {
		p_err("out of memory");
		sitevol_free(&c.vol);
		leaks_free(&c.l);
		samples_free(&m);
		return 1;
	}
	if (m.ages.epoch - c.l.epoch_mid < 2)
		p_warn("only %llu GCs in the second half of the window: too few to age objects; use "
		       "a longer --duration", (unsigned long long)(m.ages.epoch - c.l.epoch_mid));
	{
		struct objreport_src src = { .pid = p.pid, .elapsed = elapsed,
					     .json = mt_opts.json };

		objreport_leaks(&m, &c.l, c.have_vol ? &c.vol : NULL, &src, suspects, co.top);
	}
	sitevol_free(&c.vol);
	leaks_free(&c.l);
	samples_free(&m);
	return 0;
}
