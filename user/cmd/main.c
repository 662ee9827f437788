// SPDX-License-Identifier: GPL-2.0
/* main.c - memtrace's subcommand table. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmds.h"
#include "heap/heapfreeze.h"
#include "lib/fastexit.h"
#include "lib/util.h"

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *help;
};

static const struct cmd cmds[] = {
	{ "gc", do_gc, "collections and memory pools, one record per collection" },
	{ "alloc", do_alloc, "what allocates, by class or Java stack; flame graph, pprof" },
	{ "top", do_top, "the live view (also `memtrace -p PID`): collections and top allocators" },
	{ "ps", do_ps, "the JVMs on this machine" },
	{ "doctor", do_doctor, "what this JVM offers and what memtrace will use" },
	{ "attach", do_attach, "load memtrace's JVMTI agent into a JVM (it stays dormant)" },
	{ "detach", do_detach, "tell memtrace's agent in a JVM to go dormant" },
	{ "age", do_age, "live sampled objects by GCs survived, per class or site (agent)" },
	{ "leaks", do_leaks, "allocation sites ranked by growth of old live bytes (agent)" },
	{ "vmstructs", do_vmstructs, "(debugging) what memtrace reads from the JVM's VMStructs" },
	{ "selftest-sinks", do_selftest_sinks, "(testing) write a synthetic profile through every profile sink" },
	{ "selftest-walks", do_selftest_walks, "(testing) the copy's own heap mark against JVMTI's walk of one frozen image" },
	{ "serve", do_serve, "serve GC metrics of one or all JVMs (OpenMetrics, JSON API)" },
	{ "record", do_record, "record a JVM's events (filters, pauses) to a file" },
	{ "report", do_report, "gc, alloc, locks, age and leaks of a recording, as live" },
	{ "check", do_check, "verify rules 1-5 of consistent monitoring on a recording" },
	{ "locks", do_locks, "contended monitors, wait graph, deadlocks" },
	{ "query", do_query, "run a memory-analysis program on a live heap, snapshot or .hprof" },
	{ "snapshot", do_snapshot, "save a JVM's heap snapshot to a file (agent)" },
	{ "histo", do_histo, "live instances and bytes per class (agent heap walk)" },
	{ "heap", do_heap, "who holds the memory: retained sizes, dominators, paths to GC roots" },
	{ 0 },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace [--json] [--quiet] [--walk MODE] [--max-memory SIZE] <command> "
		   "[options] [arguments]\n"
		   "       memtrace -p PID            (the live view: memtrace top)\n"
		   "       memtrace --version\n\n"
		   "--walk auto|frozen|paused: how heap snapshots (histo, query, snapshot,\n"
		   "  serve, heap, leaks) are taken: in a frozen copy of the JVM forked in a\n"
		   "  short pause (frozen), in a pause as long as the walk (paused), or frozen\n"
		   "  where possible (auto, the default; ZGC's pause copies its used heap). A walk in a\n"
		   "  pause is estimated and said first; over 100 ms it needs --max-pause MS\n"
		   "  (a pause of up to MS: the walk stops there)\n\n"
		   "--max-memory SIZE: the most memtrace holds for a heap answer (query, heap,\n"
		   "  leaks, snapshot): a snapshot whose objects and references would take more,\n"
		   "  counted before memtrace holds them, is refused with the figures. Without\n"
		   "  it, what the machine (MemAvailable) and memtrace's memory cgroups have\n"
		   "  left, less 64 MiB. histo needs a few MiB whatever the heap\n\n"
		   "commands:\n");
	for (const struct cmd *c = cmds; c->name; c++)
		fprintf(f, "  %-8s %s\n", c->name, c->help);
	fprintf(f, "\n`memtrace COMMAND -h` shows a command's options. Options may come\n"
		   "before or after arguments; `--` ends them. Durations take units: 20\n"
		   "(seconds), 500ms, 5s, 2m, 1h.\n");
}

/* The command table as "NAME<TAB>HELP" lines: what scripts/gen-docs.py
 * builds the man page and the bash completion from. */
static void list_commands(void)
{
	for (const struct cmd *c = cmds; c->name; c++)
		printf("%s\t%s\n", c->name, c->help);
}

int main(int argc, char **argv)
{
	int i = 1;

	/* A vanished peer (socket, pipe) is an error code, not a dead memtrace. */
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	util_phase("start");

	while (i < argc && argv[i][0] == '-') {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j")) {
			mt_opts.json = true;
		} else if (!strcmp(argv[i], "-q") || !strcmp(argv[i], "--quiet")) {
			mt_opts.quiet = true;
		} else if (!strcmp(argv[i], "--walk") || !strncmp(argv[i], "--walk=", 7)) {
			const char *m = argv[i][6] == '=' ? argv[i] + 7 : i + 1 < argc ? argv[++i] : "";

			if (heapfreeze_mode_parse(m, &mt_opts.walk)) {
				p_err("--walk takes auto, frozen or paused, not '%s'", m);
				return 2;
			}
		} else if (!strcmp(argv[i], "--max-memory") ||
			   !strncmp(argv[i], "--max-memory=", 13)) {
			const char *m = argv[i][12] == '=' ? argv[i] + 13 :
					i + 1 < argc ? argv[++i] : "";

			if (parse_bytes(m, &mt_opts.max_memory) || !mt_opts.max_memory) {
				p_err("--max-memory takes a size (300M, 2G), not '%s'", m);
				return 2;
			}
		} else if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V")) {
			printf("memtrace %s\n", MT_VERSION);
			return 0;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "--commands")) {
			list_commands();
			return 0;
		} else if (!strcmp(argv[i], "-p")) {
			/* `memtrace -p PID ...` is the default (live) view. */
			argv[i - 1] = "top";
			return do_top(argc - i + 1, argv + i - 1);
		} else {
			p_err("unknown option '%s'", argv[i]);
			usage(stderr);
			return 2;
		}
		i++;
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	for (const struct cmd *c = cmds; c->name; c++)
		if (!strcmp(argv[i], c->name))
			fastexit(c->fn(argc - i, argv + i)); /* its memory freed after it */
	p_err("unknown command '%s' (`memtrace -h` lists them)", argv[i]);
	return 2;
}
