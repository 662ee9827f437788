// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_report.c - `memtrace report FILE`: the analyses of a recording, with
 * the live commands' output: collections as `memtrace gc`, allocation by
 * class as `memtrace alloc`, monitors as `memtrace locks`, then the agent's
 * sampled objects by age as `memtrace age` and leak suspects as `memtrace
 * leaks` (objrec.h replays the recording into their sample store; a second
 * pass, since the leak window's middle depends on the recording's end).
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/profile.h"
#include "jstack/stacktext.h"
#include "sink/alloctable.h"
#include "sink/sinks.h"
#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "sink/gcreplay.h"
#include "lib/idmap.h"
#include "analysis/locks.h"
#include "monitor/objrec.h"
#include "sink/lockprint.h"
#include "sink/objreport.h"
#include "monitor/recording_read.h"
#include "lib/util.h"

#define MAX_DEPTH 64

/* Per thread: the kinds of the open invocations (to know what a leave ends). */
struct stack {
	int n;
	uint8_t kind[MAX_DEPTH];
};

struct report {
	struct idmap names;   /* id -> char* */
	struct idmap stacks;  /* tid -> struct stack */
	struct idmap types;   /* type key -> name id of the class it names now */
	struct gcreplay *gc;
	struct locks *locks;
	struct alloctable *alloc;
	/* allocation samples with stacks (record --alloc-stacks) */
	struct profile *prof;
	struct idmap decoded; /* stack name id -> struct decoded_stack */
	uint64_t unloads;
	/* sampled objects (the agent's), by class */
	struct idmap objs;    /* object id -> class row + 1 */
	struct ocls { const char *name; uint64_t made, gone, bytes; } *ocls;
	size_t nocls;
	bool osession;        /* the recording has the agent's session line */
};

struct report_opts {
	bool by_site;
	uint64_t min_age, top;
	bool top_set;
	struct sink_files files;   /* --collapsed, --flamegraph, --pprof */
};

/* A stack text decoded once: its frames, the class's slot at the end. */
struct decoded_stack {
	int n;                       /* frames, the class not counted */
	struct profile_frame *f;     /* n + 1 */
	char text[];                 /* what f's strings point into */
};

static const char *name_of(struct report *rp, uint64_t id)
{
	const char *s = id ? idmap_get(&rp->names, id) : NULL;

	return s ? s : "";
}

static struct stack *stack_of(struct report *rp, uint64_t tid)
{
	struct stack *s = idmap_get(&rp->stacks, tid);

	if (!s && (s = calloc(1, sizeof(*s))))
		idmap_put(&rp->stacks, tid, s);
	return s;
}

/* Turn invocation and pool events back into the probe events gcpair takes. */
static void gc_event(struct report *rp, const struct mt_ev *e)
{
	struct mt_gc_event g;
	struct stack *s;

	memset(&g, 0, sizeof(g));
	g.ts_ns = e->ts;
	g.tid = (uint32_t)e->thread;
	switch (e->kind) {
	case MT_EV_INV_ENTER:
		s = stack_of(rp, e->thread);
		if (!s)
			return;
		if (s->n < MAX_DEPTH)
			s->kind[s->n] = (uint8_t)e->v[0];
		s->n++;
		if (e->v[0] == MT_INV_GC_PAUSE) {
			g.kind = MT_PAUSE_BEGIN;
			g.ticks = e->v[1];
			snprintf(g.pause, sizeof(g.pause), "%s", name_of(rp, e->name));
			break;
		}
		if (e->v[0] == MT_INV_GC_TRACE) {
			g.kind = MT_TRACE_BEGIN;
			g.ticks = e->v[1];
			break;
		}
		if (e->v[0] != MT_INV_GC)
			return;
		g.kind = MT_GC_BEGIN;
		g.is_full = (uint32_t)e->v[1];
		break;
	case MT_EV_INV_LEAVE:
		s = stack_of(rp, e->thread);
		if (!s || !s->n)
			return;
		s->n--;
		if (s->n >= MAX_DEPTH)
			return;
		if (s->kind[s->n] == MT_INV_GC_PAUSE || s->kind[s->n] == MT_INV_GC_TRACE) {
			g.kind = s->kind[s->n] == MT_INV_GC_PAUSE ? MT_PAUSE_END : MT_TRACE_END;
			g.ticks = e->v[0]; /* 0 (an inferred leave): the events' times */
			break;
		}
		if (s->kind[s->n] != MT_INV_GC)
			return;
		g.kind = MT_GC_END;
		break;
	case MT_EV_THREAD_DESTROY:
		free(idmap_del(&rp->stacks, e->id));
		return;
	case MT_EV_GC_CAUSE:
		g.kind = MT_GC_CAUSE;
		snprintf(g.cause, sizeof(g.cause), "%s", name_of(rp, e->name));
		snprintf(g.action, sizeof(g.action), "%s", name_of(rp, e->name2));
		if (e->ref)
			snprintf(g.manager, sizeof(g.manager), "%s", name_of(rp, e->ref));
		break;
	case MT_EV_POOL_USAGE:
		g.kind = e->aux == MT_POOL_PHASE_BEFORE ? MT_POOL_BEGIN : MT_POOL_END;
		g.init = e->v[0];
		g.used = e->v[1];
		g.committed = e->v[2];
		g.max = e->v[3];
		snprintf(g.manager, sizeof(g.manager), "%s", name_of(rp, e->name2));
		snprintf(g.pool, sizeof(g.pool), "%s", name_of(rp, e->name));
		break;
	default:
		return;
	}
	gcreplay_feed(rp->gc, &g);
}

/* The sample's stack (its name2) with @cls as the leaf, into the profile. */
static void alloc_stack(struct report *rp, const struct mt_ev *e, const char *cls)
{
	struct decoded_stack *d = idmap_get(&rp->decoded, e->name2);
	const char *text = name_of(rp, e->name2);

	if (!d) {
		size_t len = strlen(text);
		int n;

		d = malloc(sizeof(*d) + len + 1);
		if (!d)
			return;
		memcpy(d->text, text, len + 1);
		d->f = calloc(MT_PROFILE_MAX_DEPTH, sizeof(*d->f));
		n = d->f ? stacktext_decode(d->text, d->f, MT_PROFILE_MAX_DEPTH - 1) : -ENOMEM;
		d->n = n > 0 ? n : 0; /* a malformed stack: the class alone */
		if (idmap_put(&rp->decoded, e->name2, d)) {
			free(d->f);
			free(d);
			return;
		}
	}
	if (!d->f)
		return;
	d->f[d->n] = (struct profile_frame){ .name = cls };
	profile_add_frames(rp->prof, d->f, d->n + 1, e->v[0], 1);
}

/* Allocation samples, by the class their type names at the time. */
static void alloc_event(struct report *rp, const struct mt_ev *e)
{
	const char *name;
	char buf[40];

	switch (e->kind) {
	case MT_EV_TYPE_CREATE:
		idmap_put(&rp->types, e->id, (void *)(uintptr_t)e->name);
		return;
	case MT_EV_TYPE_RECLAIM:
		if (!(e->flags & (MT_EVF_RESYNC | MT_EVF_INFERRED)))
			rp->unloads++;
		return;
	case MT_EV_ALLOC_SAMPLE:
		break;
	default:
		return;
	}
	name = e->ref ? name_of(rp, (uintptr_t)idmap_get(&rp->types, e->ref)) : "";
	if (!name[0]) {
		snprintf(buf, sizeof(buf), "(unknown class)");
		name = buf;
	}
	alloctable_add(rp->alloc, name, e->v[0]);
	if (e->name2 && rp->prof)
		alloc_stack(rp, e, name);
}

/* The recording's allocation stacks: the heaviest as text or JSON, and the
 * profile files asked for. Returns 0 or -EIO (printed). */
static int stacks_print(struct report *rp, const struct report_opts *o, size_t top)
{
	size_t n = profile_nstacks(rp->prof);
	int err = 0;

	if (!n)
		return 0;
	if (mt_opts.json) {
		printf("{\"event\":\"alloc_stacks\",\"stacks\":");
		sink_stacks_json(rp->prof, stdout, top);
		printf("}\n");
	} else {
		/* the heaviest stacks by their innermost Java frame and class */
		uint64_t total = profile_total_bytes(rp->prof);
		size_t *order = profile_order_by_bytes(rp->prof);

		if (!order)
			return -ENOMEM;
		printf("\ntop allocation stacks (%zu distinct), by their allocating Java frame\n", n);
		for (size_t i = 0; i < n && i < top; i++) {
			const struct profile_stack *s = profile_stack_at(rp->prof, order[i]);
			const struct profile_frame *leaf = s->n > 1 ?
				profile_frame(rp->prof, s->frames[s->n - 2]) : NULL;
			char b[32];

			printf("%5.1f%%  %10s  %-32s at %s", total ? 100.0 * s->bytes / total : 0,
			       fmt_bytes(s->bytes, b, sizeof(b)), profile_name(rp->prof, s->frames[s->n - 1]),
			       leaf ? leaf->name : "[no stack]");
			if (leaf && leaf->file && leaf->line > 0)
				printf(" (%s:%d)", leaf->file, leaf->line);
			printf(", %d frames\n", s->n - 1);
		}
		free(order);
	}
	if (sink_write_files(rp->prof, &o->files, "memtrace report"))
		err = -EIO;
	return err;
}

/* Sampled objects: creations (with a size: monitors have none) and reclamations. */
static void object_event(struct report *rp, const struct mt_ev *e)
{
	uintptr_t row;
	const char *name;
	size_t i;

	if (e->kind == MT_EV_OBJ_RECLAIM) {
		row = (uintptr_t)idmap_del(&rp->objs, e->id);
		if (row)
			rp->ocls[row - 1].gone++;
		return;
	}
	if (e->kind != MT_EV_OBJ_CREATE || !e->v[0])
		return;
	name = e->ref ? name_of(rp, (uintptr_t)idmap_get(&rp->types, e->ref)) : "";
	if (!name[0])
		name = "(unknown class)";
	for (i = 0; i < rp->nocls; i++)
		if (!strcmp(rp->ocls[i].name, name))
			break;
	if (i == rp->nocls) {
		struct ocls *n = realloc(rp->ocls, (i + 1) * sizeof(*n));

		if (!n)
			return;
		rp->ocls = n;
		rp->ocls[i] = (struct ocls){ .name = name };
		rp->nocls++;
	}
	rp->ocls[i].made++;
	rp->ocls[i].bytes += e->v[0];
	idmap_put(&rp->objs, e->id, (void *)(uintptr_t)(i + 1));
}

static int ocls_cmp(const void *a, const void *b)
{
	const struct ocls *x = a, *y = b;

	return x->made < y->made ? 1 : x->made > y->made ? -1 : strcmp(x->name, y->name);
}

/* The agent's sampled objects by class: sampled, reclaimed, still live. */
static void objects_print(struct report *rp, bool json)
{
	qsort(rp->ocls, rp->nocls, sizeof(*rp->ocls), ocls_cmp);
	if (!json)
		printf("\nsampled objects by class (the agent's samples; bytes: their sizes)\n"
		       "  %-52s %9s %9s %9s %12s\n", "CLASS", "SAMPLED", "RECLAIMED", "LIVE",
		       "BYTES");
	for (size_t i = 0; i < rp->nocls && i < 20; i++) {
		const struct ocls *o = &rp->ocls[i];
		char b[32];

		if (json) {
			printf("{\"event\":\"objects_class\",\"class\":");
			json_str(stdout, o->name);
			printf(",\"sampled\":%llu,\"reclaimed\":%llu,\"live\":%llu,\"bytes\":%llu}\n",
			       (unsigned long long)o->made, (unsigned long long)o->gone,
			       (unsigned long long)(o->made - o->gone), (unsigned long long)o->bytes);
		} else {
			printf("  %-52s %9llu %9llu %9llu %12s\n", o->name,
			       (unsigned long long)o->made, (unsigned long long)o->gone,
			       (unsigned long long)(o->made - o->gone),
			       fmt_bytes(o->bytes, b, sizeof(b)));
		}
	}
}

static void note_side(void *ctx, const struct recording_side *s)
{
	struct report *rp = ctx;

	if (s->kind == REC_SIDE_OSESSION)
		rp->osession = true;
}

/* age and leaks unavailable: say so, with @why. */
static void objects_unavailable(const char *why)
{
	if (mt_opts.json) {
		for (int i = 0; i < 2; i++) {
			printf("{\"event\":\"%s\",\"available\":false,\"reason\":",
			       i ? "leaks" : "age");
			json_str(stdout, why);
			printf("}\n");
		}
	} else {
		printf("\nage and leaks: unavailable: %s\n", why);
	}
}

/*
 * Second pass over @path: replay the sampled objects into the live analyses
 * and print them. @end_ns: the recording's end. Returns 0 or -errno (printed).
 */
static int objects_report(const char *path, const struct recording_header *h, uint64_t end_ns,
			  const struct report_opts *o)
{
	struct objreport_src src = { .pid = h->pid, .json = mt_opts.json };
	struct objrec_replay rr;
	struct recording_header h2;
	struct recording_reader *r;
	char note[1024] = "", missing[160];
	uint64_t line, hidden;
	const char *text;
	struct mt_ev e;
	int rc, suspects;

	r = recording_open(path, &h2);
	if (!r) {
		rc = -errno;
		p_err("cannot read %s again: %s", path, strerror(-rc));
		return rc;
	}
	objrec_replay_init(&rr, o->min_age, end_ns);
	recording_on_side(r, objrec_replay_side, &rr);
	while ((rc = recording_next(r, &e, &text, &line)) > 0)
		objrec_replay_event(&rr, &e, text);
	recording_close_read(r); /* the first pass reported a bad line already */
	suspects = objrec_replay_finish(&rr);
	if (suspects < 0) {
		if (suspects == -ENOMEM)
			p_err("out of memory replaying the sampled objects");
		else
			objects_unavailable("the agent's sampling session was not found");
		objrec_replay_free(&rr);
		return suspects == -ENOMEM ? -ENOMEM : 0;
	}
	/* what the figures do not cover, said with them */
	hidden = rr.m.agent.sampled > rr.samples ? rr.m.agent.sampled - rr.samples : 0;
	if (hidden)
		snprintf(note, sizeof(note), "%llu of the agent's %llu samples were not reported "
			 "in the recording (filters, pauses%s%s) and do not count",
			 (unsigned long long)hidden, (unsigned long long)rr.m.agent.sampled,
			 h->filter[0] ? ": " : "", h->filter);
	if (rr.no_stack)
		snprintf(note + strlen(note), sizeof(note) - strlen(note),
			 "%s%llu samples have no stack line: their site is unknown",
			 note[0] ? "; " : "", (unsigned long long)rr.no_stack);
	if (rr.mid_at_end)
		snprintf(note + strlen(note), sizeof(note) - strlen(note),
			 "%snothing was recorded after the window's middle: growth is measured "
			 "over nothing", note[0] ? "; " : "");
	src.note = note[0] ? note : NULL;
	src.elapsed = objrec_replay_window(&rr);
	snprintf(missing, sizeof(missing), "the recording has no BPF per-site allocation "
		 "counters (recorded with --no-site-counters, or they could not be loaded)");
	src.no_volumes = rr.have_vol ? NULL : missing;
	if (!mt_opts.json)
		printf("\n");
	rc = objreport_age(&rr.m, &src, o->by_site, o->top_set ? o->top : 20);
	if (!mt_opts.json)
		printf("\n");
	if (!mt_opts.json && rr.m.ages.epoch - rr.l.epoch_mid < 2)
		p_warn("only %llu GCs in the second half of the recording: too few to age objects",
		       (unsigned long long)(rr.m.ages.epoch - rr.l.epoch_mid));
	objreport_leaks(&rr.m, &rr.l, rr.have_vol ? &rr.vol : NULL, &src, suspects,
			o->top_set ? o->top : 10);
	objrec_replay_free(&rr);
	return rc;
}

/* The recording ends before its trailer: a warning now (stderr), and what
 * was read is reported as usual. JSON: one "recording" record. */
static void cut_say(const struct recording_reader *r, const char *file)
{
	const struct recording_cut *c = recording_cut(r);
	char why[256];

	recording_cut_explain(r, why, sizeof(why));
	p_warn("%s was cut short: %s; what is there is reported", file, why);
	if (mt_opts.json)
		printf("{\"event\":\"recording\",\"complete\":false,\"cut\":{\"reason\":\"%s\","
		       "\"at_byte\":%llu,\"file_bytes\":%llu,\"last_line\":%llu,\"blocks\":%llu}}\n",
		       recording_cut_name(c->kind), (unsigned long long)c->at,
		       (unsigned long long)c->size, (unsigned long long)c->line,
		       (unsigned long long)c->members);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace report [--json] [--by class|site] [--min-age K] [--top N]\n"
		   "                      [--collapsed F] [--flamegraph F.html] [--pprof F.pb.gz] FILE\n"
		   "  The analyses of a recording (`memtrace record`), printed as the live\n"
		   "  commands print them: collections (memtrace gc), allocation by class\n"
		   "  (memtrace alloc), the agent's sampled objects by class (sampled,\n"
		   "  reclaimed, live), monitor contention and deadlocks (memtrace\n"
		   "  locks) if the recording has any, then, for a recording with\n"
		   "  --categories object, the sampled objects by age (memtrace age; --by)\n"
		   "  and leak suspects over the recording (memtrace leaks; --min-age,\n"
		   "  default 2). --top N: groups shown (default 20 age, 10 leaks).\n"
		   "  A recording made with --alloc-stacks also gives the heaviest allocation\n"
		   "  stacks and, on request, the profile files `memtrace alloc` writes.\n"
		   "  A recording cut short (writer killed, disk full, file truncated) is\n"
		   "  reported up to the cut, with a warning saying where (JSON: an\n"
		   "  {\"event\":\"recording\",\"complete\":false,\"cut\":...} record); exit 0.\n");
}

/* The options into *@o. Returns -1 to go on (optind is the FILE's index),
 * else the exit code (0 after --help, 2 for a bad option). */
static int parse_args(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		{ "by", required_argument, NULL, 'b' },
		{ "min-age", required_argument, NULL, 'a' },
		{ "top", required_argument, NULL, 't' },
		{ "collapsed", required_argument, NULL, 'C' },
		{ "flamegraph", required_argument, NULL, 'F' },
		{ "pprof", required_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cmdopt co = { .usage = usage };
	int rc, opt;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "b:a:t:jh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'b':
			if (strcmp(optarg, "class") && strcmp(optarg, "site")) {
				p_err("invalid --by '%s' (class or site)", optarg);
				return 2;
			}
			o->by_site = !strcmp(optarg, "site");
			break;
		case 'a':
			if (parse_u64(optarg, &o->min_age) || !o->min_age || o->min_age > 1000) {
				p_err("invalid --min-age '%s' (GCs, 1..1000)", optarg);
				return 2;
			}
			break;
		case 't':
			if (parse_u64(optarg, &o->top) || !o->top) {
				p_err("invalid --top '%s'", optarg);
				return 2;
			}
			o->top_set = true;
			break;
		default:
			if (cmdopt_files(opt, optarg, &o->files))
				break;
			rc = cmdopt_common(opt, optarg, &co);
			if (rc != MT_CMDOPT_MORE)
				return rc;
		}
	}
	return -1;
}

/* The analyses' state. 0 or -ENOMEM (printed). */
static int report_init(struct report *rp, const struct recording_header *h)
{
	rp->gc = gcreplay_new(stdout, mt_opts.json, h->start_mono_ns, h->mono_to_real_ns);
	rp->locks = locks_new();
	rp->alloc = alloctable_new();
	rp->prof = profile_new();
	if (!rp->gc || !rp->locks || !rp->alloc || !rp->prof) {
		p_err("out of memory");
		return -ENOMEM;
	}
	return 0;
}

/* The recording's header: a "start" record, or one line. */
static void print_start(const struct recording_header *h, const char *file)
{
	if (mt_opts.json) {
		printf("{\"event\":\"start\",\"start_ns\":%llu,\"pid\":%d,\"nspid\":%d,\"jdk\":",
		       (unsigned long long)(h->start_mono_ns + h->mono_to_real_ns), h->pid, h->nspid);
		json_str(stdout, h->jdk);
		printf(",\"libjvm\":");
		json_str(stdout, h->libjvm);
		printf(",\"recording\":");
		json_str(stdout, file);
		printf("}\n");
	} else {
		printf("recording %s: pid %d (JDK %s)%s%s\n", file, h->pid,
		       h->jdk[0] ? h->jdk : "unknown", h->filter[0] ? ", filters: " : "", h->filter);
	}
}

/* Every event of @r into the analyses; the last event's time into *@last_ts.
 * Returns recording_next()'s last answer: 0 at the end (a cut said), < 0
 * (printed). */
static int report_read(struct report *rp, struct recording_reader *r, const char *file,
		       uint64_t *last_ts)
{
	const char *text;
	uint64_t line;
	struct mt_ev e;
	int rc;

	recording_on_side(r, note_side, rp);
	while ((rc = recording_next(r, &e, &text, &line)) > 0) {
		if (e.kind == MT_EV_NAME) {
			free(idmap_del(&rp->names, e.id));
			idmap_put(&rp->names, e.id, strdup(text));
		} else {
			*last_ts = e.ts;
		}
		gc_event(rp, &e);
		alloc_event(rp, &e);
		object_event(rp, &e);
		locks_feed(rp->locks, &e, text);
	}
	if (rc < 0)
		p_err("%s: %s", file, recording_error(r));
	else if (recording_cut(r)->kind != REC_CUT_NONE)
		cut_say(r, file);
	return rc;
}

/* Allocation by class and its stacks (profile files on request). 0 or
 * -EIO (printed). */
static int report_alloc(struct report *rp, const struct report_opts *o,
			const struct recording_header *h, const struct recording_trailer *t,
			double secs)
{
	int rc = 0;

	if (alloctable_samples(rp->alloc)) {
		struct alloctable_info ai = {
			.pid = h->pid, .lost = t->lost, .unloads = rp->unloads,
			.jvm_exited = t->jvm_exited, .top = 20, .secs = secs,
		};

		if (!mt_opts.json)
			printf("\n");
		alloctable_print(stdout, rp->alloc, &ai, mt_opts.json);
		if (stacks_print(rp, o, o->top_set ? o->top : 20))
			rc = -EIO;
	}
	if ((o->files.collapsed || o->files.flamegraph || o->files.pprof) &&
	    !profile_nstacks(rp->prof))
		p_warn("the recording has no allocation stacks (record with --alloc-stacks): "
		       "no profile written");
	return rc;
}

/* Monitor contention and deadlocks, if the recording has any. 0 or -ENOMEM
 * (printed). */
static int report_locks(struct report *rp, uint64_t end_ts)
{
	struct locks_report *lr;

	if (!locks_sync_events(rp->locks))
		return 0;
	lr = locks_report_new(rp->locks, end_ts, NULL, NULL);
	if (!lr) {
		p_err("out of memory analysing monitors");
		return -ENOMEM;
	}
	if (!mt_opts.json)
		printf("\n");
	lockprint_report(stdout, lr, mt_opts.json);
	locks_report_free(lr);
	return 0;
}

static void report_free(struct report *rp)
{
	size_t pos = 0;
	uint64_t k;
	void *v;

	gcreplay_free(rp->gc);
	locks_free(rp->locks);
	alloctable_free(rp->alloc);
	profile_free(rp->prof);
	while (idmap_next(&rp->decoded, &pos, &k, &v))
		free(((struct decoded_stack *)v)->f);
	idmap_free_vals(&rp->decoded);
	idmap_free(&rp->types);
	idmap_free(&rp->objs);
	free(rp->ocls);
	idmap_free_vals(&rp->names);
	idmap_free_vals(&rp->stacks);
}

int do_report(int argc, char **argv)
{
	struct report_opts ro = { .min_age = 2 };
	struct report rp = { 0 };
	const struct recording_trailer *t;
	struct recording_header h;
	struct recording_reader *r;
	uint64_t last_ts = 0, end_ts;
	const char *file;
	double secs;
	int rc;

	rc = parse_args(argc, argv, &ro);
	if (rc >= 0)
		return rc;
	file = argv[optind];
	rc = cmdopt_recording(argc, argv, optind, "report", &r, &h);
	if (rc)
		return rc;
	rc = report_init(&rp, &h);
	if (rc)
		goto out;
	print_start(&h, file);
	rc = report_read(&rp, r, file, &last_ts);
	t = recording_trailer(r);
	secs = t->present ? t->duration_s : (double)(last_ts - h.start_mono_ns) / 1e9;
	end_ts = t->present ? t->ts : last_ts;
	if (t->present && t->attached_ns)
		gcreplay_observed_from(rp.gc, t->attached_ns);
	gcreplay_finish(rp.gc, t->lost, secs, t->jvm_exited);
	if (report_alloc(&rp, &ro, &h, t, secs))
		rc = -EIO;
	if (rp.nocls)
		objects_print(&rp, mt_opts.json);
	if (report_locks(&rp, end_ts)) {
		rc = -ENOMEM;
		goto out;
	}
	if (rc >= 0 && rp.osession) {
		rc = objects_report(file, &h, end_ts, &ro);
	} else if (rc >= 0) {
		objects_unavailable(rp.nocls ?
			"the recording has sampled objects but not their stacks and the agent's GC "
			"boundaries (written by an older memtrace): record again" :
			"the recording has no sampled objects (record with --categories "
			"object,... to load memtrace's agent)");
	}
out:
	report_free(&rp);
	recording_close_read(r);
	return rc < 0 ? 1 : 0;
}
