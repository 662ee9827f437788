// SPDX-License-Identifier: GPL-2.0
/* cmd_gc.c - `memtrace gc`: one record per collection, then a summary. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "jvm/elfsym.h"
#include "sink/gcreplay.h"
#include "probe/gctrace.h"
#include "jvm/proc.h"
#include "lib/util.h"

static volatile sig_atomic_t exiting;

static void sig_handler(int sig)
{
	exiting = 1;
}

struct gc_summary {
	uint64_t count, young, full, pauses, concurrent;
	uint64_t pause_total, pause_max;
	uint64_t mono_to_real; /* add to a monotonic ns to get epoch ns */
	uint64_t t0;           /* monotonic ns when tracing started */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace gc -p PID [--duration S] [--json]\n"
		   "  One record per collection from hotspot:gc__begin/end and\n"
		   "  mem__pool__gc__begin/end: sequence, start, duration, full or not,\n"
		   "  and each memory pool's used before/after, committed and max.\n"
		   "  Ends on Ctrl-C, after --duration seconds, or when the JVM exits,\n"
		   "  with a summary (count, pause total/max/mean, lost events).\n");
}

static const char *kind_of(const struct gc_record *r)
{
	/* pauses of a concurrent cycle (G1 remark/cleanup) */
	if (!r->manager[0] || (r->in_vmop && strstr(r->manager, "Concurrent")))
		return "pause";
	if (!r->in_vmop)
		return "concurrent";
	return r->full ? "full" : "young";
}

static void print_json(const struct gc_record *r, const struct gc_summary *s)
{
	printf("{\"event\":\"gc\",\"seq\":%llu,\"start_ns\":%llu,\"start_mono_ns\":%llu,"
	       "\"duration_ns\":%llu,\"full\":%s,\"kind\":\"%s\",\"collector\":",
	       (unsigned long long)r->seq, (unsigned long long)(r->start_ns + s->mono_to_real),
	       (unsigned long long)r->start_ns, (unsigned long long)(r->end_ns - r->start_ns),
	       r->full ? "true" : "false", kind_of(r));
	json_str(stdout, r->manager);
	printf(",\"pools\":[");
	for (int i = 0; i < r->npools; i++) {
		const struct gc_pool *p = &r->pools[i];

		printf("%s{\"name\":", i ? "," : "");
		json_str(stdout, p->name);
		printf(",\"heap\":%s,\"used_before\":%llu,\"used_after\":%llu,\"committed\":%llu,"
		       "\"max\":%lld}",
		       p->heap ? "true" : "false", (unsigned long long)p->used_before,
		       (unsigned long long)p->used_after, (unsigned long long)p->committed,
		       p->max == UINT64_MAX ? -1LL : (long long)p->max);
	}
	printf("]}\n");
}

static void print_text(const struct gc_record *r, const struct gc_summary *s)
{
	uint64_t before = 0, after = 0, committed = 0;
	char b1[32], b2[32], b3[32], d[32];

	for (int i = 0; i < r->npools; i++)
		if (r->pools[i].heap) {
			before += r->pools[i].used_before;
			after += r->pools[i].used_after;
			committed += r->pools[i].committed;
		}
	printf("#%-4llu %8.3fs  %-22s %-10s %10s",
	       (unsigned long long)r->seq, (double)(r->start_ns - s->t0) / 1e9,
	       r->manager[0] ? r->manager : "(no memory manager)", kind_of(r),
	       fmt_ns(r->end_ns - r->start_ns, d, sizeof(d)));
	if (r->npools)
		printf("  heap %s -> %s (committed %s)", fmt_bytes(before, b1, sizeof(b1)),
		       fmt_bytes(after, b2, sizeof(b2)), fmt_bytes(committed, b3, sizeof(b3)));
	printf("\n");
	for (int i = 0; i < r->npools; i++) {
		const struct gc_pool *p = &r->pools[i];
		char m[32];

		if (!p->heap)
			continue;
		printf("        %-26s %10s -> %-10s committed %-10s max %s\n", p->name,
		       fmt_bytes(p->used_before, b1, sizeof(b1)),
		       fmt_bytes(p->used_after, b2, sizeof(b2)),
		       fmt_bytes(p->committed, b3, sizeof(b3)),
		       p->max == UINT64_MAX ? "-" : fmt_bytes(p->max, m, sizeof(m)));
	}
}

static void on_record(const struct gc_record *r, void *ctx)
{
	struct gc_summary *s = ctx;
	uint64_t d = r->end_ns - r->start_ns;

	s->count++;
	if (!strcmp(kind_of(r), "pause"))
		s->pauses++;
	else if (!r->in_vmop)
		s->concurrent++;
	else if (r->full)
		s->full++;
	else
		s->young++;
	if (r->in_vmop) { /* stop-the-world: the whole record is a pause */
		s->pause_total += d;
		if (d > s->pause_max)
			s->pause_max = d;
	}
	if (mt_opts.json)
		print_json(r, s);
	else
		print_text(r, s);
}

static void print_summary(const struct gc_summary *s, const struct gcpair *gp, uint64_t lost,
			  double secs, bool jvm_exited)
{
	uint64_t stw = s->young + s->full + s->pauses;
	uint64_t mean = stw ? s->pause_total / stw : 0;
	char a[32], b[32], c[32];

	if (mt_opts.json) {
		printf("{\"event\":\"summary\",\"gc_count\":%llu,\"young\":%llu,\"full\":%llu,"
		       "\"pauses\":%llu,\"concurrent\":%llu,\"pause_total_ns\":%llu,"
		       "\"pause_max_ns\":%llu,\"pause_mean_ns\":%llu,\"lost_events\":%llu,"
		       "\"unpaired_events\":%llu,\"duration_s\":%.3f,\"jvm_exited\":%s}\n",
		       (unsigned long long)s->count, (unsigned long long)s->young,
		       (unsigned long long)s->full, (unsigned long long)s->pauses,
		       (unsigned long long)s->concurrent, (unsigned long long)s->pause_total,
		       (unsigned long long)s->pause_max, (unsigned long long)mean,
		       (unsigned long long)lost,
		       (unsigned long long)(gp->unpaired_begin + gp->unpaired_end + gp->overflow),
		       secs, jvm_exited ? "true" : "false");
		return;
	}
	printf("\nsummary: %llu collections (%llu young, %llu full", (unsigned long long)s->count,
	       (unsigned long long)s->young, (unsigned long long)s->full);
	if (s->pauses)
		printf(", %llu pauses of concurrent cycles", (unsigned long long)s->pauses);
	if (s->concurrent)
		printf(", %llu concurrent", (unsigned long long)s->concurrent);
	printf(") in %.1f s%s\n", secs, jvm_exited ? " (the JVM exited)" : "");
	printf("         pause total %s, max %s, mean %s\n", fmt_ns(s->pause_total, a, sizeof(a)),
	       fmt_ns(s->pause_max, b, sizeof(b)), fmt_ns(mean, c, sizeof(c)));
	printf("         lost events: %llu", (unsigned long long)lost);
	if (gp->unpaired_begin + gp->unpaired_end + gp->overflow)
		printf(", unpaired: %llu", (unsigned long long)(gp->unpaired_begin +
							       gp->unpaired_end + gp->overflow));
	printf("\n");
}

/* gc_preflight - the checks whose failure deserves a better message than libbpf's. */
static int gc_preflight(const struct mt_proc *p)
{
	struct mt_usdt_note *notes = NULL;
	struct mt_elf *e;
	int n, found = 0;

	e = elfsym_open(p->libjvm_host);
	if (!e) {
		p_err("cannot open %s: %s", p->libjvm_host, strerror(errno));
		return -errno;
	}
	n = elfsym_usdt_notes(e, "hotspot", &notes);
	for (int i = 0; i < n; i++)
		if (!strcmp(notes[i].name, "gc__begin") || !strcmp(notes[i].name, "mem__pool__gc__begin"))
			found++;
	free(notes);
	elfsym_free(e);
	if (found < 2) {
		p_err("this JVM's libjvm.so (%s) has no hotspot USDT probes for GC: it was built "
		      "without --enable-dtrace, so `memtrace gc` cannot trace collections. Use a "
		      "JDK build with DTrace probes (Debian's, Temurin's and most vendors' have "
		      "them); until then `jstat -gc %d` shows GC counts and times",
		      p->libjvm, p->pid);
		return -ENOTSUP;
	}
	return 0;
}

int do_gc(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cmdopt o = { .usage = usage };
	struct gc_summary s = { 0 };
	struct gctrace *t = NULL;
	struct mt_proc p;
	double secs;
	bool jvm_exited = false;
	int opt, rc, err = 0;
	uint64_t deadline;

	optind = 1;
	while ((opt = getopt_long(argc, argv, "p:d:jh", longopts, NULL)) != -1) {
		rc = cmdopt_common(opt, optarg, &o);
		if (rc != MT_CMDOPT_MORE)
			return rc;
	}
	if (cmdopt_need_pid(&o, "gc")) {
		usage(stderr);
		return 2;
	}
	if (cmdopt_open_jvm(o.pid, "memtrace gc", &p))
		return 1;
	if (gc_preflight(&p))
		return 1;

	t = gctrace_new(&p, on_record, &s);
	if (!t)
		return 1;
	s.t0 = mono_ns();
	s.mono_to_real = real_ns() - s.t0;
	deadline = o.duration > 0 ? s.t0 + (uint64_t)(o.duration * 1e9) : 0;
	signal(SIGINT, sig_handler);
	signal(SIGTERM, sig_handler);
	if (mt_opts.json)
		printf("{\"event\":\"start\",\"start_ns\":%llu,\"pid\":%d,\"nspid\":%d,"
		       "\"jdk\":\"%s\",\"libjvm\":",
		       (unsigned long long)(s.t0 + s.mono_to_real), p.pid, p.nspid, p.jdk_version);
	else
		p_info("tracing collections of pid %d (JDK %s); Ctrl-C to stop", p.pid,
		       p.jdk_version[0] ? p.jdk_version : "unknown");
	if (mt_opts.json) {
		json_str(stdout, p.libjvm);
		printf("}\n");
	}

	while (!exiting) {
		err = gctrace_poll(t, 100);
		if (err < 0) {
			p_err("reading the ring buffer failed: %s", strerror(-err));
			break;
		}
		if (deadline && mono_ns() >= deadline)
			break;
		if (!proc_exists(o.pid)) {
			jvm_exited = true;
			break;
		}
	}
	gctrace_finish(t);
	secs = (double)(mono_ns() - s.t0) / 1e9;
	print_summary(&s, gctrace_pairing(t), gctrace_lost(t), secs, jvm_exited);
	gctrace_free(t);
	return err < 0 ? 1 : 0;
}

/* `memtrace report`: a recording's collections printed exactly as live. */
struct gc_replay {
	struct gc_summary s;
	struct gcpair gp;
};

struct gc_replay *gcreplay_new(uint64_t t0, uint64_t mono_to_real)
{
	struct gc_replay *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->s.t0 = t0;
	r->s.mono_to_real = mono_to_real;
	gcpair_init(&r->gp, on_record, &r->s);
	return r;
}

void gcreplay_feed(struct gc_replay *r, const struct mt_gc_event *e)
{
	gcpair_feed(&r->gp, e);
}

void gcreplay_finish(struct gc_replay *r, uint64_t lost, double secs, bool jvm_exited)
{
	gcpair_finish(&r->gp);
	print_summary(&r->s, &r->gp, lost, secs, jvm_exited);
	free(r);
}
