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
#include "heap/recpool.h"
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
		   "  forked in a short pause, see --walk in `memtrace -h`; a walk in a pause -\n"
		   "  --walk paused, --count N with `age`, no libjvm .symtab - is estimated first\n"
		   "  and, over 100 ms, done only with --max-pause MS: a pause of at most MS\n"
		   "  milliseconds, else the result is partial; a ZGC copy's pause copies the used\n"
		   "  heap, and over what 100 ms or --max-pause allows it is refused), on a file\n"
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

/* Run the program on @snap and print its result; @drop: @snap's records are
 * not needed after (querylive_eval()). Returns 0 or 1 after p_err. */
static int eval_print(struct dsl_program **prog, const char *src, size_t srclen,
		      const char *fname, struct mt_snapshot *snap, bool live, bool drop,
		      struct dsl_diags *diags, bool json, int walk)
{
	struct querylive_out qo = { 0 };
	int rc = 1;
	char b[32];

	switch (querylive_eval(prog, src, srclen, fname, snap, drop,
			       live ? dsl_program_needs(*prog) : NULL, diags, &qo)) {
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

/* The options of `memtrace query` (libbpf-tools' env). */
struct query_opts {
	int pid;                       /* a live JVM, or */
	const char *input;             /* a snapshot or .hprof file */
	const char *expr, *file;       /* the program: -e, or -f FILE */
	const char *save;
	double every;
	uint64_t count;
	bool has_every, has_count, json;
	bool has_max_pause;
	uint64_t max_pause;
};

/* The options into *@o. Returns -1 to go on, else the exit code (0 after
 * --help, 2 for a bad option). */
static int parse_args(int argc, char **argv, struct query_opts *o)
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
	struct cmdopt co = { .usage = usage, .terse = true };
	int ch, err;

	optind = 0;
	while ((ch = getopt_long(argc, argv, "p:e:f:jh", longopts, NULL)) != -1) {
		switch (ch) {
		case 'e': o->expr = optarg; break;
		case 'f': o->file = optarg; break;
		case 'E':
			if (parse_seconds(optarg, &o->every) || o->every > 86400) {
				p_err("invalid --every '%s': expected %s, at most 24h", optarg,
				      MT_DURATION_HELP);
				return 2;
			}
			o->has_every = true;
			break;
		case 'c':
			if (parse_u64(optarg, &o->count) || !o->count || o->count > QUERY_MAX_COUNT) {
				p_err("invalid --count '%s' (1 to %d)", optarg, QUERY_MAX_COUNT);
				return 2;
			}
			o->has_count = true;
			break;
		case 's': o->save = optarg; break;
		case 'j': o->json = true; break;
		default:
			err = cmdopt_common(ch, optarg, &co);
			if (err != MT_CMDOPT_MORE)
				return err;
		}
	}
	o->pid = co.pid;
	o->has_max_pause = co.has_max_pause;
	o->max_pause = co.max_pause;
	if (optind < argc)
		o->input = argv[optind++];
	if (optind < argc || (!o->pid == !o->input) || (!o->expr == !o->file)) {
		usage(stderr);
		return 2;
	}
	if (o->input && (o->has_every || o->has_count || o->save || o->has_max_pause)) {
		p_err("--every, --count, --save and --max-pause need a live JVM (-p PID)");
		return 2;
	}
	if (o->has_every && !o->has_count) {
		p_err("--every needs --count N (how many queries)");
		return 2;
	}
	return -1;
}

/* The program's text: -f FILE's, or -e's (a copy). NULL (printed). */
static char *read_program(const struct query_opts *o, size_t *len)
{
	char *src;

	if (o->file) {
		src = read_file(o->file, len);
		if (!src)
			p_err("cannot read program %s: %s", o->file, strerror(errno));
		return src;
	}
	*len = strlen(o->expr);
	src = strdup(o->expr);
	if (!src)
		p_err("out of memory");
	return src;
}

/* The program, its text and diagnostics, and the snapshot it runs on. */
struct query_run {
	struct query_opts o;
	char *src;
	size_t srclen;
	const char *fname;
	struct dsl_diags *diags;
	struct dsl_program *prog;
	struct mt_snapshot snap;
};

/* On a file: read it, build the heap, compile again against it, run. 0 or 1
 * (printed). */
static int query_file(struct query_run *q)
{
	char why[PATH_MAX + 256];

	if (snapload_file(q->o.input, &q->snap, why, sizeof(why))) {
		p_err("%s", why);
		return 1;
	}
	snapshot_print_walk(&q->snap);
	if (dsl_program_needs(q->prog)->age && q->snap.has_ages)
		p_info("age counts the GCs since memtrace first saw the object (the first "
		       "walk of the session that took this snapshot)");
	return eval_print(&q->prog, q->src, q->srclen, q->fname, &q->snap, false, true, q->diags,
			  q->o.json, 0);
}

/* What a live walk asks the agent for: the program's needs, and what
 * --max-pause, --save and ages across --count walks add. */
static uint32_t walk_flags(const struct query_opts *o, const struct dsl_needs *n)
{
	uint32_t flags = querylive_heap_flags(n);

	if (o->has_max_pause)
		flags |= MT_AP_HEAP_MAXPAUSE;
	if (o->save)
		flags |= MT_AP_HEAP_REFS | MT_AP_HEAP_ALLFIELDS | MT_AP_HEAP_STRINGS;
	/* ages across walks need ids that last: objects tagged for the session
	 * (slower walks, and clearing the tags at the end is one more pause) */
	if (o->count > 1 && (n->age || o->save))
		flags |= MT_AP_HEAP_KEEPIDS;
	return flags;
}

/*
 * Compile the program against the JVM's class table, read with the JVM
 * running, before any walk: what does not fit it (an unknown class or field,
 * a type its fields' types make wrong) is reported without a pause. An agent
 * that cannot send the table: compiled after the walk, as before. 0 or 1
 * (printed).
 */
static int query_fit(struct query_run *q, struct mt_snapsession *ss)
{
	struct querylive_out qo;
	struct mt_snapshot cls;
	int err, rc = 1;

	err = snaptake_classes(ss, &cls);
	if (err == -ENOTSUP)
		return 0;
	if (err)
		return 1;
	switch (querylive_fit(&q->prog, q->src, q->srclen, q->fname, &cls, q->diags, &qo)) {
	case QUERY_OK:
		rc = 0;
		break;
	case QUERY_FIT:
		p_err("the program does not fit this JVM's classes (nothing was walked):");
		dsl_diags_render(q->diags, stderr);
		break;
	default: /* the walk's heap checks it then */
		p_warn("JVM %d: the program is checked against the heap after the walk: %s",
		       q->o.pid, qo.why[0] ? qo.why : "out of memory");
		rc = 0;
		break;
	}
	snapshot_free(&cls);
	return rc;
}

/* Live: N projected snapshots in one agent session, each built into a heap
 * the program is compiled again against and run on; --save keeps the last.
 * 0 or 1 (printed). */
static int query_live(struct query_run *q)
{
	const struct query_opts *o = &q->o;
	struct mt_snapsession ss = { .so.fd = -1 };
	char why[PATH_MAX + 256];
	bool age_noted = false;
	struct mt_proc p;
	int rc = 1;

	if (cmdopt_open_jvm(o->pid, NULL, &p))
		goto out;
	if (snaptake_open(&p, &ss) || query_fit(q, &ss))
		goto out;
	ss.use = HEAPMEM_VIEW;
	ss.keep_records = o->save; /* the view then built beside them */
	for (uint64_t i = 0; i < o->count; i++) {
		const struct dsl_needs *n = dsl_program_needs(q->prog);

		if (i)
			sleep_s(o->every);
		snapshot_free(&q->snap);
		if (i + 1 == o->count) /* the last: its pool goes with the exit */
			recpool_defer_frees();
		if (snaptake_take(&ss, walk_flags(o, n), (uint32_t)o->max_pause, n->fields,
				  n->nfields, &q->snap))
			goto out;
		snapshot_print_walk(&q->snap);
		if (n->age && !age_noted && q->snap.has_ages) {
			p_info("age counts the GCs since memtrace first saw the object (this "
			       "session's first walk): for older objects it is a lower bound");
			age_noted = true;
		}
		if (q->snap.ages_walks_dropped)
			p_warn("the agent keeps the ages of %d walks per session: objects first "
			       "seen by later walks look older than they are", QUERY_MAX_COUNT);
		if (eval_print(&q->prog, q->src, q->srclen, q->fname, &q->snap, true, !o->save,
			       q->diags, o->json, o->has_count ? (int)i + 1 : 0))
			goto out;
	}
	if (o->save && snapfile_write(&q->snap, o->save, why, sizeof(why))) {
		p_err("%s", why);
		goto out;
	}
	if (o->save)
		p_info("saved the last walk's snapshot to %s", o->save);
	rc = 0;
out:
	snaptake_close(&ss);
	return rc;
}

int do_query(int argc, char **argv)
{
	struct query_run q = { .o = { .count = 1, .every = 1.0, .json = mt_opts.json } };
	int rc = parse_args(argc, argv, &q.o);

	if (rc >= 0)
		return rc;
	snapshot_init(&q.snap);
	q.fname = q.o.file ? q.o.file : "<-e>";
	q.src = read_program(&q.o, &q.srclen);
	if (!q.src)
		return 1;
	rc = 1;
	q.diags = dsl_diags_new();
	if (!q.diags) {
		p_err("out of memory");
		goto out;
	}
	/* compile without a heap first: what does the program need from it? */
	if (dsl_compile(q.src, q.srclen, q.fname, NULL, &q.prog, q.diags)) {
		p_err("the program does not compile:");
		dsl_diags_render(q.diags, stderr);
		goto out;
	}
	rc = q.o.pid ? query_live(&q) : query_file(&q);
out:
	snapshot_free(&q.snap);
	dsl_program_free(q.prog);
	dsl_diags_free(q.diags);
	free(q.src);
	return rc;
}
