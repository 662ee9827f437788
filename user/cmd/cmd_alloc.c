// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_alloc.c - `memtrace alloc`: what allocates, by class or Java stack,
 * without JVM flags (TLAB-refill sampling) or exactly (--exact, with
 * -XX:+DTraceAllocProbes). Writes collapsed stacks, an HTML flame graph and
 * pprof on request.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "probe/alloctrace.h"
#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "jvm/proc.h"
#include "analysis/profile.h"
#include "sink/allocprofile.h"
#include "sink/budgettext.h"
#include "sink/sinks.h"
#include "jstack/jwalk.h"
#include "jstack/symres.h"
#include "jvm/perfmap.h"
#include "lib/stopflag.h"
#include "lib/util.h"

struct alloc_opts {
	int pid;
	double duration;
	bool by_stack;
	int top;
	bool exact;
	bool perfmap;
	bool vm_frames;
	double budget;
	bool windows;
	uint32_t stack_depth;      /* --stack-depth: Java frames kept per stack */
	struct sink_files files;   /* --collapsed, --flamegraph, --pprof */
};

struct class_row {
	const char *name;
	uint64_t bytes, samples;
	double se;  /* standard error of its share; < 0: unknown (by refills, windows) */
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: memtrace alloc -p PID [--duration S] [--by class|stack] [--top N] [--json]\n"
		"                      [--collapsed FILE] [--flamegraph FILE.html] [--pprof FILE.pb.gz]\n"
		"                      [--exact] [--no-perfmap] [--vm-frames] [--budget PCT]\n"
		"                      [--no-budget-windows] [--stack-depth N]\n"
		"  Allocation profile of a running JVM, no JVM flags needed: every TLAB\n"
		"  refill is a sample, and so is every allocation outside a TLAB. A sample\n"
		"  weighs the bytes its thread allocated since its previous one (the\n"
		"  thread's own counter, as JFR weighs its samples), shared among the\n"
		"  classes found in the thread's last TLAB (parsed whole up to 8 KiB, else\n"
		"  a 4 KiB window at a random place; an object outside a TLAB keeps its\n"
		"  own size); estimates: shares converge as samples grow. --exact counts\n"
		"  every object through hotspot:object__alloc and needs\n"
		"  -XX:+DTraceAllocProbes (which costs throughput).\n"
		"  Java frames are named from the JVM's perf map, which memtrace asks for\n"
		"  (jcmd Compiler.perfmap) unless --no-perfmap; a /tmp/perf-PID.map the JVM\n"
		"  wrote because memtrace asked is removed once read.\n"
		"  Stacks are whole Java stacks walked in the kernel (no JVM flags), from\n"
		"  the thread's first Java frame to the allocating one, then the class;\n"
		"  --vm-frames adds the JVM's own frames (libjvm) between them.\n"
		"  --stack-depth N: Java frames kept per stack (inlined methods counted,\n"
		"  as JFR's stackdepth; default %d, at most %d). A deeper stack keeps its\n"
		"  innermost N under a first frame \"[stack cut: depth]\", as does a walk\n"
		"  that stopped early (its reason); the `java stacks:` line says how many\n"
		"  of the bytes are in whole stacks. A walk costs about 0.1 us a frame.\n"
		"  --budget PCT: what sampling may cost the busiest allocating thread, in %%\n"
		"  of its time (default 1): above it memtrace observes only part of the time\n"
		"  (a duty cycle, printed) and scales the weights; 0 observes all the time.\n"
		"  Samples are kept at random (weights 1/keep). When the uprobe trap alone\n"
		"  exceeds the budget, the probes are attached in short windows (one at a\n"
		"  random offset in each period: 333 ms under the default budget, longer\n"
		"  under a smaller one), held to the budget by what they are measured to\n"
		"  cost (periods up to 1 s when that takes the windows under 2 %% of the\n"
		"  time); totals then come from the JVM's own per-thread allocation counters,\n"
		"  classes and stacks from the windows' samples. --no-budget-windows:\n"
		"  thinning only (the trap stays).\n",
		MT_JSTACK_DEFAULT_DEPTH, MT_JSTACK_MAX_DEPTH);
}

static int by_bytes(const void *a, const void *b)
{
	const struct class_row *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : strcmp(x->name, y->name);
}

static int by_count(const void *a, const void *b)
{
	const struct class_row *x = a, *y = b;

	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : strcmp(x->name, y->name);
}

/* Sum rows per class name (over stacks and unload generations). */
static struct class_row *by_class(const struct alloc_row *rows, size_t n, size_t *nc)
{
	struct class_row *c = calloc(n ? n : 1, sizeof(*c));

	*nc = 0;
	if (!c)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t j;

		for (j = 0; j < *nc; j++)
			if (!strcmp(c[j].name, rows[i].class_name))
				break;
		if (j == *nc) {
			c[j].se = -1;
			c[(*nc)++].name = rows[i].class_name;
		}
		c[j].bytes += rows[i].bytes;
		c[j].samples += rows[i].samples;
	}
	qsort(c, *nc, sizeof(*c), by_bytes);
	return c;
}

struct site_row {
	const char *class_name, *site;
	uint64_t bytes, samples;
};

static int site_cmp(const void *a, const void *b)
{
	const struct site_row *x = a, *y = b;

	return x->bytes < y->bytes ? 1 : x->bytes > y->bytes ? -1 : 0;
}

/* Group rows by (class, allocating Java frame), largest first. Caller frees. */
static struct site_row *group_sites(const char *const *leaf, const struct alloc_row *rows,
				    size_t n, size_t *nsites)
{
	struct site_row *s = calloc(n ? n : 1, sizeof(*s));
	size_t ns = 0;

	*nsites = 0;
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		const char *site = leaf[i];
		size_t j;

		if (!site)
			site = "[allocating Java frame unknown]";
		for (j = 0; j < ns; j++)
			if (!strcmp(s[j].class_name, rows[i].class_name) && !strcmp(s[j].site, site))
				break;
		if (j == ns) {
			s[ns].class_name = rows[i].class_name;
			s[ns++].site = site;
		}
		s[j].bytes += rows[i].bytes;
		s[j].samples += rows[i].samples;
	}
	qsort(s, ns, sizeof(*s), site_cmp);
	*nsites = ns;
	return s;
}

/* --by stack: allocation sites (class + allocating Java frame), largest first. */
static void print_sites(const char *const *leaf, const struct alloc_row *rows, size_t n,
			uint64_t total, int top)
{
	size_t ns;
	struct site_row *s = group_sites(leaf, rows, n, &ns);

	if (!s)
		return;
	printf("\ntop allocation sites (class, allocating Java frame)\n");
	for (size_t i = 0; i < ns && (int)i < top; i++) {
		char b[32];

		printf("%5.1f%%  %10s  %-32s at %s\n", total ? 100.0 * s[i].bytes / total : 0,
		       fmt_bytes(s[i].bytes, b, sizeof(b)), s[i].class_name, s[i].site);
	}
	free(s);
}

/* The duty cycle: a JSON member (,"duty_cycle":{...}) or a text line. */
static void print_duty(struct alloctrace *t, bool json)
{
	struct alloctrace_duty d;

	alloctrace_duty(t, &d);
	if (!d.on)
		return;
	if (json) {
		printf(",\"duty_cycle\":{\"budget\":%.4f,\"observed\":%.4f,\"duty\":%.4f,"
		       "\"keep\":%.4f,\"threads_thinned\":%u,\"kept_share\":%.4f,\"max_cost_share\":%.5f,"
		       "\"busiest_thread_samples_per_s\":%.0f,\"cost_per_sample_ns\":%.0f,"
		       "\"trap_ns\":%.0f,\"windows\":%llu,\"period_ms\":%.0f,\"counted_total\":%s,"
		       "\"total_bytes_stderr\":",
		       d.budget, d.observed, d.duty, d.keep, d.threads_thinned, d.kept_share,
		       d.max_cost_share, d.rate,
		       d.cost_ns, d.trap_ns, (unsigned long long)d.windows, d.period_ms,
		       d.counted_total ? "true" : "false");
		if (d.stderr_bytes >= 0)
			printf("%.0f", d.stderr_bytes);
		else
			printf("null");
		/* the windows' cost to the busiest thread, as measured */
		if (d.loss_share > -1)
			printf(",\"measured_loss\":%.5f,\"loss_adj\":%.3f", d.loss_share, d.loss_adj);
		printf("}");
		return;
	}
	if (d.observed > 0.999 && d.kept_share > 0.999)
		printf("every sample taken: sampling costs the busiest allocating thread "
		       "%.2f%% at most (%.1f us a sample, trap included), under the %.2g%% budget\n",
		       100 * d.max_cost_share, d.cost_ns / 1000, 100 * d.budget);
	else {
		printf("budget %.2g%%: taking every sample would have cost the busiest allocating "
		       "thread up to %.1f%% (%.1f us a sample, a %.1f us trap included), so memtrace "
		       "kept %.1f%% of the samples at random", 100 * d.budget,
		       100 * d.max_cost_share, d.cost_ns / 1000, d.trap_ns / 1000,
		       100 * d.kept_share);
		if (d.threads_thinned)
			printf(" (%u thread%s thinned at most; a thread whose samples fit the "
			       "budget keeps them all)", d.threads_thinned,
			       d.threads_thinned == 1 ? "" : "s");
		if (d.observed < 0.999)
			printf(" and attached its probes %.1f%% of the time (%llu windows, one "
			       "in %.0f ms)", 100 * d.observed, (unsigned long long)d.windows,
			       d.period_ms);
		if (d.observed < 0.999 && d.loss_share > -1)
			budgettext_loss(stdout, d.loss_share);
		printf("; bytes are scaled to the whole");
		/* thinning cannot take the trap away: say when it alone is over */
		if (d.observed > 0.999 && d.trap_ns * d.rate / 1e9 > d.budget)
			printf("; the uprobe trap alone costs that thread %.2f%%, over the budget "
			       "(without --no-budget-windows, memtrace attaches the probes part of the time)",
			       100 * d.trap_ns * d.rate / 1e9);
		if (d.counted_total) {
			printf(" (the total is the JVM's own per-thread allocation counters', "
			       "each thread's samples scaled to its own: only the split by class "
			       "and stack is sampled)");
		} else if (d.stderr_bytes >= 0) {
			char b[32];

			/* two standard errors: a 95 % interval for the total */
			printf(" (the total within +-%s, 95 %%; a class's share within more)",
			       fmt_bytes((uint64_t)(2 * d.stderr_bytes), b, sizeof(b)));
		}
		printf("\n");
	}
}

/* What one `memtrace alloc` run holds: the JVM, the tracer, what it gathered. */
struct alloc_run {
	struct alloc_opts o;
	struct alloctrace_opts to;
	struct mt_proc p;
	struct alloctrace *t;
	struct symres *sr;
	struct profile *prof;
	struct alloc_row *rows;          /* the tracer's rows (class, stack) */
	size_t n;
	struct class_row *classes;       /* by class, largest first */
	size_t nc;
	const char **leaf;               /* each row's allocating Java frame */
	struct alloc_class *content;     /* classes from the TLABs' contents, if parsed */
	size_t ncontent;
	uint64_t cstats[MT_CONTENT_NSTATS];
	uint64_t total, samples, refill_total, resolved, unresolved, lost;
	struct allocprofile_stacks pst;  /* bytes in whole and cut stacks */
	bool jvm_exited, bytes_known;
	double secs;
};

/* How whole the Java stacks are, by the bytes they hold (a stack cut by the
 * walker or at the names' bound is not whole), with the kernel's walks by how
 * they ended and the frames left unnamed: a JSON member
 * (,"java_stacks":{...}) or a text line. */
static void print_walks(const struct alloc_run *a, bool json)
{
	uint64_t by[MT_JSTOP_NSTOPS], all = 0, cut = 0;
	const struct allocprofile_stacks *s = &a->pst;
	struct alloctrace *t = a->t;
	uint32_t depth = a->o.stack_depth ? a->o.stack_depth : MT_JSTACK_DEFAULT_DEPTH;

	if (alloctrace_walks(t, by))
		return;
	for (int i = 0; i < MT_JSTOP_NSTOPS; i++) {
		all += by[i];
		cut += s->cut_bytes[i];
	}
	if (json) {
		printf(",\"java_stacks\":{\"walks\":%llu,\"unknown_frames\":%llu,"
		       "\"lost_stacks\":%llu,\"stack_depth\":%u,\"bytes\":%llu,"
		       "\"complete_share\":%.6f,\"cut_bytes\":{", (unsigned long long)all,
		       (unsigned long long)alloctrace_unknown_frames(t),
		       (unsigned long long)alloctrace_lost_jstacks(t), depth,
		       (unsigned long long)s->bytes,
		       s->bytes ? (double)(s->bytes - cut) / s->bytes : 0);
		for (int i = 1, k = 0; i < MT_JSTOP_NSTOPS; i++)
			if (s->cut_bytes[i])
				printf("%s\"%s\":%llu", k++ ? "," : "", jwalk_stop_name(i),
				       (unsigned long long)s->cut_bytes[i]);
		printf("},\"stops\":{");
		for (int i = 0; i < MT_JSTOP_NSTOPS; i++)
			printf("%s\"%s\":%llu", i ? "," : "", jwalk_stop_name(i),
			       (unsigned long long)by[i]);
		printf("}}");
		return;
	}
	printf("java stacks: %.1f%% of the bytes in whole stacks",
	       s->bytes ? 100.0 * (double)(s->bytes - cut) / s->bytes : 0);
	if (cut) {
		printf(", %.1f%% in stacks cut (", 100.0 * cut / s->bytes);
		for (int i = 1, k = 0; i < MT_JSTOP_NSTOPS; i++)
			if (s->cut_bytes[i])
				printf("%s%s %.1f%%", k++ ? ", " : "", jwalk_stop_name(i),
				       100.0 * s->cut_bytes[i] / s->bytes);
		printf(")");
	}
	printf(" at --stack-depth %u; %llu walks", depth, (unsigned long long)all);
	for (int i = 1; i < MT_JSTOP_NSTOPS; i++)
		if (by[i])
			printf(", %s %llu", jwalk_stop_name(i), (unsigned long long)by[i]);
	printf("; unknown frames %llu", (unsigned long long)alloctrace_unknown_frames(t));
	if (alloctrace_lost_jstacks(t))
		printf(", stacks not kept %llu", (unsigned long long)alloctrace_lost_jstacks(t));
	printf("\n");
}

/* The options into *@o. Returns -1 to go on, else the exit code (0 after
 * --help, 2 for a bad option). */
static int parse_args(int argc, char **argv, struct alloc_opts *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "by", required_argument, NULL, 'b' },
		{ "top", required_argument, NULL, 't' },
		{ "json", no_argument, NULL, 'j' },
		{ "collapsed", required_argument, NULL, 'C' },
		{ "flamegraph", required_argument, NULL, 'F' },
		{ "pprof", required_argument, NULL, 'P' },
		{ "exact", no_argument, NULL, 'x' },
		{ "no-perfmap", no_argument, NULL, 'N' },
		{ "vm-frames", no_argument, NULL, 'V' },
		{ "budget", required_argument, NULL, 'B' },
		{ "budget-windows", no_argument, NULL, 'W' },   /* the default now */
		{ "no-budget-windows", no_argument, NULL, 'w' },
		{ "stack-depth", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cmdopt co = { .usage = usage };
	uint64_t top;
	int opt, err;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "p:d:b:t:jxh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			if (!strcmp(optarg, "class")) {
				o->by_stack = false;
			} else if (!strcmp(optarg, "stack")) {
				o->by_stack = true;
			} else {
				p_err("invalid --by '%s': expected class or stack", optarg);
				return 2;
			}
			break;
		case 't':
			if (parse_u64(optarg, &top) || top == 0 || top > 100000) {
				p_err("invalid --top '%s': expected a number from 1", optarg);
				return 2;
			}
			o->top = (int)top;
			break;
		case 'x':
			o->exact = true;
			break;
		case 'N':
			o->perfmap = false;
			break;
		case 'V':
			o->vm_frames = true;
			break;
		case 'W':
			o->windows = true;
			break;
		case 'w':
			o->windows = false;
			break;
		case 'D':
			if (cmdopt_stack_depth(optarg, &o->stack_depth))
				return 2;
			break;
		case 'B': {
			char *end;
			double pct = strtod(optarg, &end);

			if (end == optarg || *end || !(pct >= 0 && pct <= 100)) {
				p_err("invalid --budget '%s': expected a percentage from 0 to 100",
				      optarg);
				return 2;
			}
			o->budget = pct / 100;
			break;
		}
		default:
			if (cmdopt_files(opt, optarg, &o->files))
				break;
			err = cmdopt_common(opt, optarg, &co);
			if (err != MT_CMDOPT_MORE)
				return err;
		}
	}
	if (cmdopt_no_args(argc, argv, "alloc", usage))
		return 2;
	if (cmdopt_need_pid(&co, "alloc"))
		return 2;
	o->pid = co.pid;
	o->duration = co.duration;
	return -1;
}

/* Open the JVM and attach the tracer as the options ask. 0 or -1 (printed). */
static int alloc_start(struct alloc_run *a)
{
	const struct alloc_opts *o = &a->o;

	if (cmdopt_open_jvm(o->pid, "memtrace alloc", &a->p))
		return -1;
	a->to.exact = o->exact;
	a->bytes_known = !(o->exact && a->p.jdk_major && a->p.jdk_major < 21);
	a->to.stacks = o->by_stack || o->files.collapsed || o->files.flamegraph || o->files.pprof;
	a->to.native = o->vm_frames;
	a->to.budget = o->budget;
	a->to.windows = o->windows;
	a->to.stack_depth = o->stack_depth;
	a->t = alloctrace_new(&a->p, &a->to);
	if (!a->t)
		return -1;
	if (o->exact)
		p_warn("--exact: every allocation of pid %d goes through hotspot:object__alloc; "
		       "with -XX:+DTraceAllocProbes this costs the JVM throughput (measured: "
		       "up to 7.8x slower allocation with the probe attached)", o->pid);
	return 0;
}

/* Sample until Ctrl-C, --duration or the JVM's exit. 0 or -1 (printed). */
static int alloc_sample(struct alloc_run *a)
{
	uint64_t t0 = mono_ns();
	uint64_t deadline = a->o.duration > 0 ? t0 + (uint64_t)(a->o.duration * 1e9) : 0;
	int err;

	stopflag_catch(NULL);
	if (mt_opts.json)
		printf("{\"event\":\"start\",\"start_ns\":%llu,\"pid\":%d,\"mode\":\"%s\"}\n",
		       (unsigned long long)real_ns(), a->o.pid, a->o.exact ? "exact" : "tlab");
	p_info("sampling allocations of pid %d (%s)%s; Ctrl-C to stop", a->o.pid,
	       a->o.exact ? "exact, hotspot:object__alloc" : "TLAB refills, no JVM flags",
	       a->to.stacks ? " with stacks" : "");
	while (!stopflag_raised()) {
		err = alloctrace_poll(a->t, 100);
		if (err < 0) {
			p_err("reading the ring buffer failed: %s", strerror(-err));
			return -1;
		}
		if (deadline && mono_ns() >= deadline)
			break;
		if (!proc_exists(a->o.pid)) {
			a->jvm_exited = true;
			break;
		}
	}
	a->secs = (double)(mono_ns() - t0) / 1e9;
	return 0;
}

/* The rows, and the class table: from the TLABs' contents when the JVM's
 * layout is known, else from the rows; bytes dropped when unreliable. */
static void alloc_classes(struct alloc_run *a)
{
	a->rows = alloctrace_rows(a->t, &a->n);
	for (size_t i = 0; i < a->n; i++) {
		a->total += a->rows[i].bytes;
		a->samples += a->rows[i].samples;
	}
	a->classes = by_class(a->rows, a->n, &a->nc);
	a->content = alloctrace_classes(a->t, &a->ncontent, a->cstats);
	a->refill_total = a->total;
	if (a->content && a->ncontent) {
		free(a->classes);
		a->classes = calloc(a->ncontent, sizeof(*a->classes));
		a->nc = 0;
		a->total = 0;
		for (size_t i = 0; a->classes && i < a->ncontent; i++) {
			a->classes[a->nc++] = (struct class_row){ a->content[i].class_name,
								  a->content[i].bytes,
								  a->content[i].tlabs,
								  a->content[i].share_stderr };
			a->total += a->content[i].bytes;
		}
		if (a->classes)
			qsort(a->classes, a->nc, sizeof(*a->classes), by_bytes);
		/* stacks and sites say what the class table says of each class */
		if (allocrows_match_classes(&a->rows, &a->n, a->content, a->ncontent))
			p_warn("out of memory: stacks keep the classes that opened the TLABs");
	}
	if (!a->bytes_known) {
		/* JDK 17's object__alloc passes garbage as the size on some paths
		 * (the interpreter and C1 call SharedRuntime::dtrace_object_alloc
		 * without setting it; seen: 0 and huge values). Counts are exact;
		 * bytes are not reported rather than reported wrong. */
		for (size_t i = 0; i < a->nc; i++)
			a->classes[i].bytes = 0;
		/* the sum of garbage is garbage (seen: 2^64 - 3e11) */
		a->total = a->refill_total = 0;
		if (a->classes)
			qsort(a->classes, a->nc, sizeof(*a->classes), by_count);
	}
}

/* With stacks: frames named (the JVM's perf map, if it still runs), the
 * profile built, each row's allocating frame kept. */
static void alloc_stacks(struct alloc_run *a)
{
	if (!a->to.stacks)
		return;
	if (!a->jvm_exited) {
		struct perfmap pm = { .tmpfd = -1 };

		if (a->o.perfmap)
			perfmap_request(&a->p, &pm, "JIT frames");
		a->sr = symres_new(&a->p);
		perfmap_done(&pm); /* read: removed if the JVM wrote it for us */
	}
	a->leaf = calloc(a->n ? a->n : 1, sizeof(*a->leaf));
	a->prof = a->leaf ? allocprofile_build(a->t, a->sr, a->rows, a->n, a->o.vm_frames,
					       a->leaf, &a->pst) : NULL;
	if (a->sr)
		symres_stats(a->sr, &a->resolved, &a->unresolved);
}

/* --json: the classes' members of the "alloc" record. */
static void print_json_classes(const struct alloc_run *a)
{
	for (size_t i = 0; i < a->nc && (int)i < a->o.top; i++) {
		const struct class_row *c = &a->classes[i];
		/* share of bytes, or of objects when bytes are unknown */
		double share = a->bytes_known ? (a->total ? (double)c->bytes / a->total : 0) :
				(a->samples ? (double)c->samples / a->samples : 0);

		printf("%s{\"class\":", i ? "," : "");
		json_str(stdout, c->name);
		printf(",\"bytes\":%llu,\"samples\":%llu,\"share\":%.6f,\"bytes_per_s\":%.0f",
		       (unsigned long long)c->bytes, (unsigned long long)c->samples, share,
		       a->secs > 0 ? c->bytes / a->secs : 0);
		if (c->se >= 0)
			printf(",\"share_stderr\":%.6f", c->se);
		printf("}");
	}
}

/* --json with --by stack: the "sites" member. */
static void print_json_sites(const struct alloc_run *a)
{
	size_t ns;
	struct site_row *st = group_sites(a->leaf, a->rows, a->n, &ns);

	printf(",\"sites\":[");
	for (size_t i = 0; st && i < ns && (int)i < a->o.top; i++) {
		printf("%s{\"class\":", i ? "," : "");
		json_str(stdout, st[i].class_name);
		printf(",\"site\":");
		json_str(stdout, st[i].site);
		printf(",\"bytes\":%llu,\"samples\":%llu}", (unsigned long long)st[i].bytes,
		       (unsigned long long)st[i].samples);
	}
	printf("]");
	free(st);
}

/* --json: one "alloc" record. */
static void print_json(const struct alloc_run *a)
{
	const struct alloc_opts *o = &a->o;
	struct alloctrace *t = a->t;

	printf("{\"event\":\"alloc\",\"pid\":%d,\"mode\":\"%s\",\"duration_s\":%.3f,"
	       "\"total_bytes\":%llu,\"total_samples\":%llu,\"lost_events\":%llu,"
	       "\"lost_keys\":%llu,\"stacks_not_captured\":%llu,\"classes_unloaded\":%llu,"
	       "\"frames_resolved\":%llu,\"frames_unresolved\":%llu,\"jvm_exited\":%s,"
	       "\"bytes_known\":%s,\"classes\":[",
	       o->pid, o->exact ? "exact" : "tlab", a->secs, (unsigned long long)a->total,
	       (unsigned long long)a->samples, (unsigned long long)a->lost,
	       (unsigned long long)alloctrace_lost_keys(t),
	       (unsigned long long)alloctrace_lost_stacks(t),
	       (unsigned long long)alloctrace_unloads(t), (unsigned long long)a->resolved,
	       (unsigned long long)a->unresolved, a->jvm_exited ? "true" : "false",
	       a->bytes_known ? "true" : "false");
	print_json_classes(a);
	printf("],\"class_shares_from\":\"%s\",\"total_bytes_by_refills\":%llu",
	       a->content ? "tlab_contents" : "refills", (unsigned long long)a->refill_total);
	if (a->content)
		printf(",\"tlab_contents\":{\"parsed\":%llu,\"retired_by_gc\":%llu,"
		       "\"unparsable\":%llu}", (unsigned long long)a->cstats[MT_CONTENT_PARSED],
		       (unsigned long long)a->cstats[MT_CONTENT_GC],
		       (unsigned long long)a->cstats[MT_CONTENT_BAD]);
	if (a->to.stacks)
		print_walks(a, true);
	print_duty(t, true);
	if (o->by_stack && a->leaf)
		print_json_sites(a);
	if (o->by_stack && a->prof) {
		printf(",\"stacks\":");
		sink_stacks_json(a->prof, stdout, (size_t)o->top);
	}
	printf("}\n");
}

/* Text: the class table, with how its shares were made. */
static void print_text_classes(const struct alloc_run *a)
{
	char b[32], r[32];

	printf("%-50s %12s %7s %12s %9s\n", "CLASS", "BYTES", "SHARE", "RATE/s",
	       a->o.exact ? "OBJECTS" : a->content ? "TLABS" : "SAMPLES");
	for (size_t i = 0; i < a->nc && (int)i < a->o.top; i++) {
		const struct class_row *c = &a->classes[i];

		printf("%-50s %12s %6.1f%% %12s %9llu\n", c->name,
		       a->bytes_known ? fmt_bytes(c->bytes, b, sizeof(b)) : "n/a",
		       a->bytes_known ? (a->total ? 100.0 * c->bytes / a->total : 0) :
				       (a->samples ? 100.0 * c->samples / a->samples : 0),
		       fmt_bytes(a->secs > 0 ? (uint64_t)(c->bytes / a->secs) : 0, r, sizeof(r)),
		       (unsigned long long)c->samples);
	}
	if (!a->content)
		return;
	{
		double se = 0;

		for (size_t i = 0; i < a->nc && (int)i < a->o.top; i++)
			if (a->classes[i].se > se)
				se = a->classes[i].se;
		if (se > 0.0005)
			printf("each share above within +-%.1f points (95 %%: two standard errors "
			       "of the kept TLABs' spread)\n", 200 * se);
	}
	printf("class shares from the objects in the TLABs (%llu kept TLABs parsed: "
	       "whole up to %d KiB, else a %d KiB window at a random place after the "
	       "object that opened it; %llu retired by a collection before they could "
	       "be, %llu with an object that could not be sized), not from the class "
	       "that opened each\n", (unsigned long long)a->cstats[MT_CONTENT_PARSED],
	       MT_TLAB_SLICE / 1024, MT_TLAB_WINDOW / 1024,
	       (unsigned long long)a->cstats[MT_CONTENT_GC],
	       (unsigned long long)a->cstats[MT_CONTENT_BAD]);
}

/* Text: the totals line, the classes, the sites, what was lost, the walks,
 * the duty cycle, the frames. */
static void print_text(const struct alloc_run *a)
{
	const struct alloc_opts *o = &a->o;
	struct alloctrace *t = a->t;
	char b[32], r[32];

	printf("%s allocated by pid %d in %.1f s (%s/s), %llu %s%s\n",
	       fmt_bytes(a->total, b, sizeof(b)), o->pid, a->secs,
	       fmt_bytes(a->secs > 0 ? (uint64_t)(a->total / a->secs) : 0, r, sizeof(r)),
	       (unsigned long long)a->samples, o->exact ? "objects" : "samples",
	       o->exact ? " (exact)" : " (estimated from TLAB refills)");
	if (!a->bytes_known)
		printf("(bytes not reported: JDK %d's hotspot:object__alloc passes an "
		       "unreliable size; object counts are exact; shares are of objects)\n",
		       a->p.jdk_major);
	print_text_classes(a);
	if (o->by_stack && a->leaf)
		print_sites(a->leaf, a->rows, a->n, a->total, o->top);
	printf("lost events: %llu", (unsigned long long)a->lost);
	if (alloctrace_lost_stacks(t))
		printf(", samples without a stack: %llu",
		       (unsigned long long)alloctrace_lost_stacks(t));
	if (alloctrace_unloads(t))
		printf(", classes unloaded meanwhile: %llu",
		       (unsigned long long)alloctrace_unloads(t));
	printf("\n");
	if (a->to.stacks)
		print_walks(a, false);
	print_duty(t, false);
	if (a->to.stacks && a->resolved + a->unresolved)
		printf("frames: %llu resolved, %llu unresolved (%.1f%%)\n",
		       (unsigned long long)a->resolved, (unsigned long long)a->unresolved,
		       100.0 * a->unresolved / (a->resolved + a->unresolved));
}

/* Most frames unresolved while the kernel walked stacks: say why. */
static void warn_unresolved(const struct alloc_run *a)
{
	uint64_t all = a->resolved + a->unresolved;

	if (a->to.stacks && all && a->unresolved * 5 > all &&
	    alloctrace_walks(a->t, (uint64_t[MT_JSTOP_NSTOPS]){ 0 }))
		p_warn("%.0f%% of frames are unresolved: JIT-compiled Java code keeps no frame "
		       "pointer, so stacks stop there. Run the JVM with -XX:+PreserveFramePointer "
		       "for complete Java stacks", 100.0 * a->unresolved / all);
}

static void alloc_run_free(struct alloc_run *a)
{
	profile_free(a->prof);
	free(a->content);
	free(a->leaf);
	symres_free(a->sr);
	free(a->classes);
	free(a->rows);
	alloctrace_free(a->t);
}

int do_alloc(int argc, char **argv)
{
	struct alloc_run a = { .o = { .top = 20, .perfmap = true, .budget = ALLOCTRACE_BUDGET,
				      .windows = true } };
	int rc = parse_args(argc, argv, &a.o);

	if (rc >= 0)
		return rc;
	rc = 1;
	if (alloc_start(&a) || alloc_sample(&a))
		goto cleanup;
	alloc_classes(&a);
	alloc_stacks(&a);
	a.lost = alloctrace_lost_events(a.t) + alloctrace_lost_keys(a.t);
	if (mt_opts.json)
		print_json(&a);
	else
		print_text(&a);
	warn_unresolved(&a);
	if (a.prof && sink_write_files(a.prof, &a.o.files, "memtrace alloc"))
		goto cleanup;
	rc = 0;
cleanup:
	alloc_run_free(&a);
	return rc;
}
