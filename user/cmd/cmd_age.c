// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_age.c - `memtrace age -p PID [--duration S] [--by class|site]
 * [--interval BYTES] [--json]`: live sampled objects by age in GCs survived
 * (0, 1, 2-3, 4-7, 8-15, 16+), per class or allocation site, at the end of
 * the window. Bytes are estimates (samples.h: s / (1 - exp(-s/I)) per sample).
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "sink/objreport.h"
#include "agentctl/sampling.h"
#include "lib/util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace age -p PID [--duration S] [--by class|site] "
		   "[--interval BYTES] [--depth N] [--max-samples N] [--top N] [--json]\n"
		   "  Sample allocations through memtrace's JVMTI agent for S seconds (default 10)\n"
		   "  and show the live sampled objects by GCs survived, per class or site.\n"
		   "  --interval  mean bytes between samples (default 512k; k/m suffixes)\n");
}

int do_age(int argc, char **argv)
{
	static const struct option longopts[] = {
		MT_CMDOPT_SAMPLING_LONGOPTS,
		{ "by", required_argument, NULL, 'b' },
		{ "top", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct mt_sampling_opts o = { .duration = 10, .interval = MT_AP_DEFAULT_INTERVAL,
				      .depth = 16, .max_samples = MT_SAMPLES_DEFAULT_MAX };
	struct cmdopt co = { .usage = usage, .top = 20 };
	struct mt_samples m;
	struct mt_proc p;
	double elapsed;
	bool by_site = false;
	int c, rc;

	optind = 0;
	while ((c = getopt_long(argc, argv, "p:d:jh", longopts, NULL)) != -1) {
		rc = sampling_common_opt(c, optarg, &o);
		if (rc == 2)
			return 2;
		if (!rc)
			continue;
		if (c == 'b') {
			if (strcmp(optarg, "class") && strcmp(optarg, "site")) {
				p_err("invalid --by '%s' (class or site)", optarg);
				return 2;
			}
			by_site = !strcmp(optarg, "site");
			continue;
		}
		rc = cmdopt_common(c, optarg, &co);
		if (rc != MT_CMDOPT_MORE)
			return rc;
	}
	if (optind < argc || !o.pid) {
		usage(stderr);
		return 2;
	}
	rc = sampling_run(&o, &p, &m, NULL, NULL, &elapsed);
	if (rc || !m.s) {
		samples_free(&m);
		return 1;
	}
	{
		struct objreport_src src = { .pid = p.pid, .elapsed = elapsed,
					     .json = mt_opts.json };

		rc = objreport_age(&m, &src, by_site, co.top);
	}
	samples_free(&m);
	return rc ? 1 : 0;
}
