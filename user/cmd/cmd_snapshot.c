// SPDX-License-Identifier: GPL-2.0
/* cmd_snapshot.c - `memtrace snapshot -p PID -o FILE [--max-pause MS]`: save a
 * full heap snapshot (objects, references, roots, every field value,
 * strings) in the format of snapfile.h, for `memtrace query FILE`. */
#include <getopt.h>
#include <limits.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "heap/snapfile.h"
#include "heap/snapshot.h"
#include "lib/util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace snapshot -p PID -o FILE [--max-pause MS]\n"
		   "  Walk the JVM's heap (by default in a frozen copy of it: see --walk in\n"
		   "  `memtrace -h`) and save every object,\n"
		   "  reference, root, field value and string to FILE (`memtrace query FILE`).\n"
		   "  A walk in a pause (--walk paused, no libjvm .symtab) is estimated first and,\n"
		   "  over 100 ms, done only with --max-pause MS: a pause of up to MS, the walk\n"
		   "  cut short there (a partial snapshot). A ZGC copy's pause copies the used\n"
		   "  heap: over what 100 ms (or --max-pause) allows it is refused before any pause.\n");
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
	struct cmdopt o = { .usage = usage, .terse = true };
	struct mt_snapshot snap;
	const char *path = NULL;
	char why[PATH_MAX + 64];
	int ch, err;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "p:o:h", longopts, NULL)) != -1) {
		if (ch == 'o') {
			path = optarg;
			continue;
		}
		err = cmdopt_common(ch, optarg, &o);
		if (err != MT_CMDOPT_MORE)
			return err;
	}
	if (!o.pid || !path || optind < argc) {
		usage(stderr);
		return 2;
	}
	if (cmdopt_snapshot(&o, flags, HEAPMEM_RECORDS, &snap))
		return 1;
	err = snapfile_write(&snap, path, why, sizeof(why));
	if (err)
		p_err("%s", why);
	else
		p_info("saved %llu objects, %llu references, %u classes to %s",
		       (unsigned long long)snap.info.objects, (unsigned long long)snap.info.refs,
		       snap.info.nclasses, path);
	snapshot_free(&snap);
	return err ? 1 : 0;
}
