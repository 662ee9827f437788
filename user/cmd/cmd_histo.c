// SPDX-License-Identifier: GPL-2.0
/* cmd_histo.c - `memtrace histo -p PID [--json] [--top N]`: live instances and
 * bytes per class, from a heap walk without references or values (what
 * `jmap -histo:live` shows, without a full GC). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "heap/heaphisto.h"
#include "heap/snapshot.h"
#include "lib/util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace histo -p PID [--json] [--top N] [--max-pause MS]\n"
		   "  Live instances and shallow bytes per class (a heap walk, by default in a\n"
		   "  frozen copy of the JVM forked in a short pause: see `memtrace -h`, --walk).\n"
		   "  A walk in a pause (--walk paused, no libjvm .symtab) is estimated first and,\n"
		   "  over 100 ms, not done without --max-pause MS: a pause of up to MS, the\n"
		   "  walk cut short there (a partial result). A ZGC copy's pause copies the used\n"
		   "  heap: over what 100 ms (or --max-pause) allows it is refused before any pause.\n"
		   "  JSON: one line per class with class, instances, bytes.\n");
}

int do_histo(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "top", required_argument, NULL, 't' },
		{ "max-pause", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cmdopt o = { .usage = usage, .terse = true, .top = UINT64_MAX };
	struct mt_snapshot snap;
	struct heaphisto hh = { 0 };
	uint64_t ti = 0, tb = 0;
	bool json = mt_opts.json;
	int ch, err, rc = 1;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "p:t:jh", longopts, NULL)) != -1) {
		if (ch == 'j') {
			json = true;
			continue;
		}
		err = cmdopt_common(ch, optarg, &o);
		if (err != MT_CMDOPT_MORE)
			return err;
	}
	if (!o.pid || optind < argc) {
		usage(stderr);
		return 2;
	}
	/* totals per class are all a histogram needs (the copy's own mark counts them) */
	if (cmdopt_snapshot(&o, MT_AP_HEAP_COUNTS, HEAPMEM_NONE, &snap))
		return 1;
	util_phase("snapshot");
	if (heaphisto_build(&snap, &hh)) {
		p_err("out of memory");
		goto out;
	}
	if (!json)
		printf("%6s %12s %14s  %s\n", "#", "instances", "bytes", "class");
	for (size_t i = 0; i < hh.n; i++) {
		const struct heaphisto_row *r = &hh.rows[i];

		ti += r->instances;
		tb += r->bytes;
		if (i >= o.top)
			continue;
		if (json) {
			printf("{\"class\":");
			json_str(stdout, r->name);
			printf(",\"instances\":%llu,\"bytes\":%llu}\n",
			       (unsigned long long)r->instances, (unsigned long long)r->bytes);
		} else {
			printf("%6zu %12llu %14llu  %s\n", i + 1, (unsigned long long)r->instances,
			       (unsigned long long)r->bytes, r->name);
		}
	}
	if (json) {
		printf("{\"event\":\"histo_total\",\"pid\":%d,\"instances\":%llu,\"bytes\":%llu,"
		       "\"pause_ms\":%.3f,\"pause_from\":\"%s\",\"partial\":%s", o.pid,
		       (unsigned long long)ti, (unsigned long long)tb,
		       (double)snap.info.pause_ns / 1e6,
		       snapshot_pause_name(snap.pause_from),
		       snap.info.partial ? "true" : "false");
		snapshot_json_walk(&snap, stdout);
		printf("}\n");
	} else
		printf("%6s %12llu %14llu  (total)\n", "", (unsigned long long)ti,
		       (unsigned long long)tb);
	rc = 0;
out:
	heaphisto_free(&hh);
	snapshot_free(&snap);
	return rc;
}
