// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_query.c - `memtrace query -p PID (-e PROGRAM | -f FILE) [--json] [--max-pause MS]
 *               [--every SECONDS --count N] [--save FILE]`
 * and `memtrace query SNAPSHOT_OR_HPROF (-e PROGRAM | -f FILE) [--json]`:
 * compile the program, take a projected snapshot (or read a file), run the
 * program on it here (never in the JVM) and print its JSON result. With
 * --count N, N snapshots in one agent session, --every SECONDS apart: object
 * ids persist between them, so `age` counts the GCs since the session first
 * saw each object.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "heap/querylive.h"
#include "heap/snapfile.h"
#include "heap/snapload.h"
#include "heap/snapshot.h"
#include "heap/snaptake.h"
#include "lib/util.h"

#define QUERY_MAX_COUNT 4000 /* the agent keeps this many walks' age ranges */

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace query -p PID (-e PROGRAM | -f FILE) [--json] [--max-pause MS]\n"
		   "                      [--every SECONDS --count N] [--save FILE]\n"
		   "       memtrace query SNAPSHOT|DUMP.hprof (-e PROGRAM | -f FILE) [--json]\n"
		   "  Run a memory-analysis program (dsl/README.md) on the live heap of a JVM\n"
		   "  (a snapshot the agent takes, by default from a frozen copy of the JVM\n"
		   "  forked in a short pause, see --walk in `memtrace -h`; with --max-pause MS\n"
		   "  the pause lasts at most MS milliseconds, else the result is partial), on a file\n"
		   "  saved by `memtrace snapshot` or --save, or on a `jcmd PID GC.heap_dump` file.\n"
		   "  --count N runs it N times in one agent session, --every SECONDS apart\n"
		   "  (default 1): `age` is then the GCs an object survived since the session's\n"
		   "  first walk saw it. --save FILE keeps the last walk's snapshot (with ages).\n");
}

/* Sleep @sec seconds (fractions allowed); an interrupting signal ends it early. */
static void sleep_s(double sec)
{
	struct timespec ts = { .tv_sec = (time_t)sec,
			       .tv_nsec = (long)((sec - floor(sec)) * 1e9) };

	nanosleep(&ts, NULL);
}

/* Run the program on @snap and print its result. Returns 0 or 1 after p_err. */
static int eval_print(struct dsl_program **prog, const char *src, size_t srclen,
		      const char *fname, const struct mt_snapshot *snap, bool live,
		      struct dsl_diags *diags, bool json, int walk)
{
	struct querylive_out qo = { 0 };
	int rc = 1;
	char b[32];

	switch (querylive_eval(prog, src, srclen, fname, snap, live ? dsl_program_needs(*prog) : NULL,
			   diags, &qo)) {
	case QUERY_OK:
		break;
	case QUERY_HEAP:
		p_err("cannot build the heap: %s", qo.why);
		goto out;
	case QUERY_FIT:
		p_err("the program does not fit this heap:");
		dsl_diags_render(diags, stderr);
		goto out;
	case QUERY_RUN:
		p_err("the program failed on this heap:");
		dsl_diags_render(diags, stderr);
		goto out;
	case QUERY_NOMEM:
		p_err("out of memory");
		goto out;
	}
	p_info("evaluated on %u objects in %s", qo.objects, fmt_ns(qo.eval_ns, b, sizeof(b)));
	if (json) {
		printf("{\"event\":\"query\",\"source\":\"%s\",\"pid\":%d,\"pause_ms\":%.3f,"
		       "\"pause_from\":\"%s\",\"partial\":%s,\"objects\":%u,\"eval_ms\":%.3f",
		       snap->source, snap->pid, (double)snap->info.pause_ns / 1e6,
		       snapshot_pause_name(snap->pause_from),
		       snap->info.partial ? "true" : "false", qo.objects, (double)qo.eval_ns / 1e6);
		snapshot_json_walk(snap, stdout);
		putchar(',');
		if (walk)
			printf("\"walk\":%d,", walk);
		if (snap->has_ages)
			printf("\"gcs\":%llu,", (unsigned long long)snap->ages.epoch);
		printf("\"result\":");
		while (qo.len && qo.json[qo.len - 1] == '\n')
			qo.json[--qo.len] = '\0';
		printf("%s}\n", qo.json);
	} else {
		fwrite(qo.json, 1, qo.len, stdout);
	}
	fflush(stdout);
	rc = 0;
out:
	free(qo.json);
	return rc;
}

int do_query(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "expr", required_argument, NULL, 'e' },
		{ "file", required_argument, NULL, 'f' },
		{ "max-pause", required_argument, NULL, 'm' },
		{ "every", required_argument, NULL, 'E' },
		{ "count", required_argument, NULL, 'c' },
		{ "save", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *expr = NULL, *file = NULL, *input = NULL, *save = NULL, *fname;
	struct dsl_diags *diags = NULL;
	struct dsl_program *prog = NULL;
	struct mt_snapsession ss = { .so.fd = -1 };
	struct mt_snapshot snap;
	struct cmdopt o = { .usage = usage, .terse = true };
	struct mt_proc p;
	uint64_t count = 1;
	double every = 1.0;
	bool has_every = false, has_count = false, json = mt_opts.json;
	bool age_noted = false;
	char *src = NULL, why[PATH_MAX + 256];
	size_t srclen = 0;
	int ch, rc = 1, err;
	uint32_t flags;

	snapshot_init(&snap);
	optind = 0;
	while ((ch = getopt_long(argc, argv, "p:e:f:jh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'e': expr = optarg; break;
		case 'f': file = optarg; break;
		case 'E':
			if (parse_seconds(optarg, &every) || every > 86400) {
				p_err("invalid --every '%s': expected %s, at most 24h", optarg,
				      MT_DURATION_HELP);
				return 2;
			}
			has_every = true;
			break;
		case 'c':
			if (parse_u64(optarg, &count) || !count || count > QUERY_MAX_COUNT) {
				p_err("invalid --count '%s' (1 to %d)", optarg, QUERY_MAX_COUNT);
				return 2;
			}
			has_count = true;
			break;
		case 's': save = optarg; break;
		case 'j': json = true; break;
		default:
			err = cmdopt_common(ch, optarg, &o);
			if (err != MT_CMDOPT_MORE)
				return err;
		}
	}
	if (optind < argc)
		input = argv[optind++];
	if (optind < argc || (!o.pid == !input) || (!expr == !file)) {
		usage(stderr);
		return 2;
	}
	if (input && (has_every || has_count || save || o.has_max_pause)) {
		p_err("--every, --count, --save and --max-pause need a live JVM (-p PID)");
		return 2;
	}
	if (has_every && !has_count) {
		p_err("--every needs --count N (how many queries)");
		return 2;
	}
	fname = file ? file : "<-e>";
	if (file) {
		src = read_file(file, &srclen);
		if (!src) {
			p_err("cannot read program %s: %s", file, strerror(errno));
			return 1;
		}
	} else {
		srclen = strlen(expr);
		src = strdup(expr);
		if (!src) {
			p_err("out of memory");
			return 1;
		}
	}
	diags = dsl_diags_new();
	if (!diags) {
		p_err("out of memory");
		goto out;
	}
	/* 1. compile without a heap: what does the program need from it? */
	err = dsl_compile(src, srclen, fname, NULL, &prog, diags);
	if (err) {
		p_err("the program does not compile:");
		dsl_diags_render(diags, stderr);
		goto out;
	}
	if (!o.pid) { /* 2. a file: read, 3. build the heap, compile again against it, run */
		if (snapload_file(input, &snap, why, sizeof(why))) {
			p_err("%s", why);
			goto out;
		}
		snapshot_print_walk(&snap);
		if (dsl_program_needs(prog)->age && snap.has_ages)
			p_info("age counts the GCs since memtrace first saw the object (the first "
			       "walk of the session that took this snapshot)");
		rc = eval_print(&prog, src, srclen, fname, &snap, false, diags, json, 0);
		goto out;
	}
	/* 2. live: N projected snapshots in one agent session */
	if (cmdopt_open_jvm(o.pid, NULL, &p))
		goto out;
	if (snaptake_open(&p, &ss))
		goto out;
	for (uint64_t i = 0; i < count; i++) {
		const struct dsl_needs *n = dsl_program_needs(prog);

		if (i)
			sleep_s(every);
		flags = querylive_heap_flags(n);
		if (o.has_max_pause)
			flags |= MT_AP_HEAP_MAXPAUSE;
		if (save)
			flags |= MT_AP_HEAP_REFS | MT_AP_HEAP_ALLFIELDS | MT_AP_HEAP_STRINGS;
		/* ages across walks need ids that last: objects tagged for the session
		 * (slower walks, and clearing the tags at the end is one more pause) */
		if (count > 1 && (n->age || save))
			flags |= MT_AP_HEAP_KEEPIDS;
		snapshot_free(&snap);
		if (snaptake_take(&ss, flags, (uint32_t)o.max_pause, n->fields, n->nfields, &snap))
			goto out;
		snapshot_print_walk(&snap);
		if (n->age && !age_noted && snap.has_ages) {
			p_info("age counts the GCs since memtrace first saw the object (this "
			       "session's first walk): for older objects it is a lower bound");
			age_noted = true;
		}
		if (snap.ages_walks_dropped)
			p_warn("the agent keeps the ages of %d walks per session: objects first "
			       "seen by later walks look older than they are", QUERY_MAX_COUNT);
		/* 3. build the heap, compile again against it, run */
		if (eval_print(&prog, src, srclen, fname, &snap, true, diags, json,
			       has_count ? (int)i + 1 : 0))
			goto out;
	}
	if (save && snapfile_write(&snap, save, why, sizeof(why))) {
		p_err("%s", why);
		goto out;
	}
	if (save)
		p_info("saved the last walk's snapshot to %s", save);
	rc = 0;
out:
	snaptake_close(&ss);
	snapshot_free(&snap);
	dsl_program_free(prog);
	dsl_diags_free(diags);
	free(src);
	return rc;
}
