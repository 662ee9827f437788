// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_query.c - `memtrace query -p PID (-e PROGRAM | -f FILE) [--json] [--max-pause MS]`
 * and `memtrace query SNAPSHOT_OR_HPROF (-e PROGRAM | -f FILE) [--json]`:
 * compile the program, take a projected snapshot (or read a file), run the
 * program on it here (never in the JVM) and print its JSON result.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cmds.h"
#include "querylive.h"
#include "snapshot.h"
#include "util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace query -p PID (-e PROGRAM | -f FILE) [--json] [--max-pause MS]\n"
		   "       memtrace query SNAPSHOT|DUMP.hprof (-e PROGRAM | -f FILE) [--json]\n"
		   "  Run a memory-analysis program (dsl/README.md) on the live heap of a JVM\n"
		   "  (a snapshot the agent takes; the JVM pauses only for the walk, at most MS\n"
		   "  milliseconds with --max-pause, then the result is partial), on a file\n"
		   "  saved by `memtrace snapshot`, or on a `jcmd PID GC.heap_dump` file.\n");
}

int do_query(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "expr", required_argument, NULL, 'e' },
		{ "file", required_argument, NULL, 'f' },
		{ "max-pause", required_argument, NULL, 'm' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *expr = NULL, *file = NULL, *input = NULL;
	struct dsl_diags *diags = NULL;
	struct dsl_program *prog = NULL;
	struct mt_snapshot snap;
	struct query_out qo = { 0 };
	uint64_t max_pause = 0;
	bool has_max = false, json = mt_opts.json;
	char *src = NULL, b[32];
	size_t srclen = 0;
	int ch, pid = 0, rc = 1, err;
	uint32_t flags;

	snapshot_init(&snap);
	optind = 1;
	while ((ch = getopt_long(argc, argv, "p:e:f:jh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'p':
			if (parse_pid(optarg, &pid)) {
				p_err("invalid pid '%s'", optarg);
				return 2;
			}
			break;
		case 'e': expr = optarg; break;
		case 'f': file = optarg; break;
		case 'm':
			if (parse_u64(optarg, &max_pause) || max_pause > 3600000) {
				p_err("invalid --max-pause '%s' (milliseconds)", optarg);
				return 2;
			}
			has_max = true;
			break;
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind < argc)
		input = argv[optind++];
	if (optind < argc || (!pid == !input) || (!expr == !file)) {
		usage(stderr);
		return 2;
	}
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
	err = dsl_compile(src, srclen, file ? file : "<-e>", NULL, &prog, diags);
	if (err) {
		p_err("the program does not compile:");
		dsl_diags_render(diags, stderr);
		goto out;
	}
	/* 2. the heap: a projected live snapshot, or a file */
	if (pid) {
		const struct dsl_needs *n = dsl_program_needs(prog);
		struct mt_proc p;

		flags = query_heap_flags(n);
		if (has_max)
			flags |= MT_AP_HEAP_MAXPAUSE;
		err = proc_open(pid, &p);
		if (err) {
			proc_explain(pid, err);
			goto out;
		}
		if (snapshot_take(&p, flags, (uint32_t)max_pause, n->fields, n->nfields, &snap))
			goto out;
	} else if (snapshot_load(input, &snap)) {
		goto out;
	}
	snapshot_print_walk(&snap);
	/* 3. build the heap, compile again against it, run */
	switch (query_eval(&prog, src, srclen, file ? file : "<-e>", &snap,
			   pid ? dsl_program_needs(prog) : NULL, diags, &qo)) {
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
		       "\"partial\":%s,\"objects\":%u,\"eval_ms\":%.3f,\"result\":",
		       snap.source, snap.pid, (double)snap.info.pause_ns / 1e6,
		       snap.info.partial ? "true" : "false", qo.objects, (double)qo.eval_ns / 1e6);
		while (qo.len && qo.json[qo.len - 1] == '\n')
			qo.json[--qo.len] = '\0';
		printf("%s}\n", qo.json);
	} else {
		fwrite(qo.json, 1, qo.len, stdout);
	}
	rc = 0;
out:
	free(qo.json);
	snapshot_free(&snap);
	dsl_program_free(prog);
	dsl_diags_free(diags);
	free(src);
	return rc;
}
