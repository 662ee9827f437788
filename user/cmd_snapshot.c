// SPDX-License-Identifier: GPL-2.0
/* cmd_snapshot.c - `memtrace snapshot -p PID -o FILE [--max-pause MS]`: save a
 * full heap snapshot (objects, references, roots, every field value,
 * strings) in the format of snapshot.h, for `memtrace query FILE`. */
#include <getopt.h>
#include <string.h>

#include "cmds.h"
#include "snapshot.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace snapshot -p PID -o FILE [--max-pause MS]\n"
		   "  Walk the JVM's heap (it pauses only for the walk) and save every object,\n"
		   "  reference, root, field value and string to FILE (`memtrace query FILE`).\n");
}

int do_snapshot(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "max-pause", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	uint32_t flags = MT_AP_HEAP_REFS | MT_AP_HEAP_ALLFIELDS | MT_AP_HEAP_STRINGS;
	struct mt_snapshot snap;
	const char *path = NULL;
	uint64_t max_pause = 0;
	struct mt_proc p;
	int ch, pid = 0, err;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "p:o:h", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			if (parse_pid(optarg, &pid)) {
				p_err("invalid pid '%s'", optarg);
				return 2;
			}
			break;
		case 'o': path = optarg; break;
		case 'm':
			if (parse_u64(optarg, &max_pause) || max_pause > 3600000) {
				p_err("invalid --max-pause '%s' (milliseconds)", optarg);
				return 2;
			}
			flags |= MT_AP_HEAP_MAXPAUSE;
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (!pid || !path || optind < argc) {
		usage(stderr);
		return 2;
	}
	err = proc_open(pid, &p);
	if (err) {
		proc_explain(pid, err);
		return 1;
	}
	if (snapshot_take(&p, flags, (uint32_t)max_pause, NULL, 0, &snap))
		return 1;
	snapshot_print_walk(&snap);
	err = snapshot_write(&snap, path);
	if (!err)
		p_info("saved %llu objects, %llu references, %u classes to %s",
		       (unsigned long long)snap.info.objects, (unsigned long long)snap.info.refs,
		       snap.info.nclasses, path);
	snapshot_free(&snap);
	return err ? 1 : 0;
}
