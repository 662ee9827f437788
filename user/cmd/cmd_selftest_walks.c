// SPDX-License-Identifier: GPL-2.0
/* cmd_selftest_walks.c - `memtrace selftest-walks -p PID` (testing): the
 * frozen copy's own mark against HotSpot's JVMTI walk of the same frozen
 * image (heap/walkcompare.h). Prints one JSON line per class where they
 * differ, then a summary line; exits 0 when they agree: every object both
 * found has the same class and size in both, and every object only JVMTI
 * found is reachable only through a weak referent (the mark leaves those, as
 * the collector does). Objects only the mark found are listed, not judged:
 * `jmap -histo:live` judges them (e2e histo_jmap). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "heap/snaptake.h"
#include "jvm/proc.h"
#include "lib/util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace selftest-walks -p PID [--max-pause MS]\n"
		   "  (testing) the frozen copy's own heap mark against HotSpot's JVMTI walk of\n"
		   "  the same frozen image, object by object; exit 1 when they disagree.\n"
		   "  --max-pause MS as for histo (a ZGC copy over what 100 ms allows needs it).\n");
}

int do_selftest_walks(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "max-pause", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cmdopt o = { .usage = usage, .terse = true };
	struct mt_snapsession ss;
	struct mt_snapshot s;
	struct mt_proc p;
	int ch, err, rc = 1;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "p:m:h", longopts, NULL)) != -1) {
		err = cmdopt_common(ch, optarg, &o);
		if (err != MT_CMDOPT_MORE)
			return err;
	}
	if (!o.pid || optind < argc) {
		usage(stderr);
		return 2;
	}
	setenv("MEMTRACE_TEST_FREEZE", "compare", 1); /* heapfreeze's test hook */
	if (cmdopt_open_jvm(o.pid, NULL, &p) || snaptake_open(&p, &ss))
		return 1;
	ss.cmp_out = stdout;
	if (snaptake_take(&ss, MT_AP_HEAP_REFS | (o.has_max_pause ? MT_AP_HEAP_MAXPAUSE : 0),
			  (uint32_t)o.max_pause, NULL, 0, &s))
		goto out;
	if (!ss.compared) {
		p_err("JVM %d: the walks were not compared (the copy did not mark: see above)",
		      o.pid);
		snapshot_free(&s);
		goto out;
	}
	printf("{\"event\":\"walks\",\"jvmti\":%llu,\"mark\":%llu,\"both\":%llu,\"class_differs\":%llu,"
	       "\"size_differs\":%llu,\"jvmti_only\":%llu,\"jvmti_only_weak\":%llu,"
	       "\"mark_only\":%llu}\n",
	       (unsigned long long)ss.cmp.jvmti, (unsigned long long)ss.cmp.mark,
	       (unsigned long long)ss.cmp.both, (unsigned long long)ss.cmp.cls_diff,
	       (unsigned long long)ss.cmp.size_diff, (unsigned long long)ss.cmp.jvmti_only,
	       (unsigned long long)ss.cmp.weak_only, (unsigned long long)ss.cmp.mark_only);
	rc = ss.cmp.cls_diff || ss.cmp.size_diff || ss.cmp.jvmti_only != ss.cmp.weak_only;
	snapshot_free(&s);
out:
	snaptake_close(&ss);
	return rc;
}
