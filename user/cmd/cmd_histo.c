// SPDX-License-Identifier: GPL-2.0
/* cmd_histo.c - `memtrace histo -p PID [--json] [--top N]`: live instances and
 * bytes per class, from a heap walk without references or values (what
 * `jmap -histo:live` shows, without a full GC). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "heap/heapview.h"
#include "heap/snapshot.h"
#include "lib/util.h"

struct histo_row {
	uint32_t cls;
	uint64_t instances, bytes;
};

static int by_bytes(const void *a, const void *b)
{
	const struct histo_row *x = a, *y = b;

	if (x->bytes != y->bytes)
		return x->bytes < y->bytes ? 1 : -1;
	return x->cls < y->cls ? -1 : x->cls > y->cls;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace histo -p PID [--json] [--top N] [--max-pause MS]\n"
		   "  Live instances and shallow bytes per class (a heap walk, by default in a\n"
		   "  frozen copy of the JVM forked in a short pause: see `memtrace -h`, --walk).\n"
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
	struct mt_heapview hv = { 0 };
	struct histo_row *rows = NULL;
	uint64_t ti = 0, tb = 0;
	bool json = mt_opts.json;
	char why[160];
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
	if (cmdopt_snapshot(&o, 0, &snap))
		return 1;
	{
		struct dsl_needs none = { 0 };

		err = heapview_build(&snap, &none, &hv, why, sizeof(why));
	}
	if (err) {
		p_err("cannot build the heap: %s", why);
		goto out;
	}
	rows = calloc(hv.heap.nclasses + 1, sizeof(*rows));
	if (!rows) {
		p_err("out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < hv.heap.nclasses; i++)
		rows[i].cls = i;
	for (uint32_t i = 0; i < hv.heap.nobjects; i++) {
		rows[hv.heap.objects[i].cls].instances++;
		rows[hv.heap.objects[i].cls].bytes += hv.heap.objects[i].size;
	}
	qsort(rows, hv.heap.nclasses, sizeof(*rows), by_bytes);
	if (!json)
		printf("%6s %12s %14s  %s\n", "#", "instances", "bytes", "class");
	for (uint32_t i = 0, shown = 0; i < hv.heap.nclasses; i++) {
		const char *name = hv.heap.classes[rows[i].cls].name;

		ti += rows[i].instances;
		tb += rows[i].bytes;
		if (!rows[i].instances || shown >= o.top)
			continue;
		shown++;
		if (json) {
			printf("{\"class\":");
			json_str(stdout, name);
			printf(",\"instances\":%llu,\"bytes\":%llu}\n",
			       (unsigned long long)rows[i].instances, (unsigned long long)rows[i].bytes);
		} else {
			printf("%6u %12llu %14llu  %s\n", shown, (unsigned long long)rows[i].instances,
			       (unsigned long long)rows[i].bytes, name);
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
	free(rows);
	heapview_free(&hv);
	snapshot_free(&snap);
	return rc;
}
