// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_top.c - `memtrace -p PID` / `memtrace top -p PID`: the live view.
 * Collections and pools (USDT) and the top allocating classes (TLAB
 * sampling), and with --age live sampled bytes by age (memtrace's agent),
 * and with --stacks the top allocating paths (whole Java stacks from the
 * kernel's walker, bpf/jstack.bpf.h, with their class),
 * refreshed every --interval seconds: a full-screen view on a terminal
 * (ncurses; panels: 0 overview, 1 collections, 2 allocation, 3 age, tab
 * cycles; q quits, p pauses, space refreshes), plain periodic lines
 * otherwise (or with --plain), JSON lines with --json.
 */
#include <curses.h>
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agentctl/agentlive.h"
#include "analysis/pathrate.h"
#include "probe/alloctrace.h"
#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "probe/gctrace.h"
#include "probe/parktrace.h"
#include "jvm/vmstructs.h"
#include "jvm/privs.h"
#include "jvm/proc.h"
#include "lib/stopflag.h"
#include "lib/util.h"

#define MAX_RECENT 32
#define MAX_CLASSES 4096

/* The panels, switched with 0-3 and tab. */
enum panel { PANEL_OVERVIEW, PANEL_GC, PANEL_ALLOC, PANEL_AGE, NPANELS };

static const char *const panel_name[] = { "overview", "collections", "allocation", "age" };

#define MAX_LOCKS 32
#define MAX_CAUSES 8 /* causes counted per interval (a busy JVM has 1-3) */
#define TOP_PATHS 10  /* paths in a JSON record */
#define MAX_FRAMES (MT_JSTACK_MAX_DEPTH + 1) /* names of a stack, a cut marker too */

struct cls {
	const char *name;
	uint64_t total;    /* bytes since start */
	uint64_t interval; /* bytes in the last interval */
};

struct top {
	struct mt_proc p;
	double interval;
	bool curses, plain;
	bool alloc_ok;
	/* collections in the current interval and since start */
	uint64_t n_young, n_full, n_pauses, n_cycles, pause_total, pause_max;
	struct { char name[MT_GC_NAME_LEN]; uint64_t n; } causes[MAX_CAUSES]; /* in the interval */
	int ncauses;
	uint64_t all_count, all_pause;
	struct gc_record recent[MAX_RECENT];
	int nrecent;
	uint64_t heap_used, heap_committed, heap_max;
	/* allocation */
	struct cls classes[MAX_CLASSES];
	int nclasses;
	uint64_t alloc_interval, alloc_total;
	uint64_t t0;
	/* --stacks: bytes per (Java stack, class) */
	bool stacks;
	bool stacks_nomem;   /* a round ran out of memory: its paths are partial */
	struct pathrate paths;
	/* locks (--locks): java.util.concurrent parks per blocker class */
	struct mt_vmstructs *vs;
	struct parktrace *pk;
	struct lockrate {
		char name[160];
		bool contended;
		uint64_t parks, ns;      /* totals at the last update */
		double parks_s, parked_s; /* per second over the last interval */
	} locks[MAX_LOCKS];
	int nlocks;
	/* age (--age): agent sampling */
	struct agentlive *al;
	struct agentlive_ages ages;
	enum panel panel;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace [top] -p PID [--interval S] [--duration S] [--stacks] [--age] [--locks]\n"
		   "                    [--plain] [--json]\n"
		   "  The live view: recent collections and pools, pause times, allocation rate\n"
		   "  and the top allocating classes; with --stacks also the top allocating paths\n"
		   "  (whole Java stacks walked in the kernel, with their class); with --age also\n"
		   "  live sampled bytes by age in GCs survived (loads memtrace's JVMTI agent into\n"
		   "  the JVM); with --locks java.util.concurrent parks per second by blocker\n"
		   "  class. Full screen on a terminal: panels 0 overview, 1 collections,\n"
		   "  2 allocation (and paths), 3 age (tab cycles), q quits, p pauses the\n"
		   "  display, space refreshes; plain lines otherwise.\n");
}

static void on_gc(const struct gc_record *r, void *ctx)
{
	struct top *t = ctx;
	uint64_t d = r->end_ns - r->start_ns;

	switch (r->kind) {
	case GC_KIND_YOUNG:
		t->n_young++;
		break;
	case GC_KIND_FULL:
		t->n_full++;
		break;
	case GC_KIND_PAUSE: /* a concurrent cycle's pause: not a young collection */
		t->n_pauses++;
		break;
	case GC_KIND_CYCLE:
		t->n_cycles++;
		break;
	}
	if (gcpair_is_pause(r)) {
		t->pause_total += d;
		t->all_pause += d;
		if (d > t->pause_max)
			t->pause_max = d;
	}
	t->all_count++;
	if (r->cause[0]) {
		int i;

		for (i = 0; i < t->ncauses && strcmp(t->causes[i].name, r->cause); i++)
			;
		if (i == t->ncauses && i < MAX_CAUSES) {
			memcpy(t->causes[i].name, r->cause, MT_GC_NAME_LEN);
			t->causes[t->ncauses++].n = 0; /* the slot may hold an old interval's count */
		}
		if (i < t->ncauses)
			t->causes[i].n++;
	}
	if (r->npools && r->kind != GC_KIND_PAUSE) {
		t->heap_used = t->heap_committed = t->heap_max = 0;
		for (int i = 0; i < r->npools; i++)
			if (r->pools[i].heap) {
				t->heap_used += r->pools[i].used_after;
				t->heap_committed += r->pools[i].committed;
				if (r->pools[i].max != UINT64_MAX)
					t->heap_max += r->pools[i].max;
			}
	}
	memmove(&t->recent[1], &t->recent[0], (MAX_RECENT - 1) * sizeof(t->recent[0]));
	t->recent[0] = *r;
	if (t->nrecent < MAX_RECENT)
		t->nrecent++;
}

/* The causes of the interval's collections, "31 G1 Evacuation Pause, 1 System.gc()". */
static const char *causes_text(const struct top *t, char *buf, size_t n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < t->ncauses && len < n; i++)
		len += (size_t)snprintf(buf + len, n - len, "%s%llu %s", i ? ", " : "",
					(unsigned long long)t->causes[i].n, t->causes[i].name);
	return buf;
}

static struct cls *cls_get(struct top *t, const char *name)
{
	for (int i = 0; i < t->nclasses; i++)
		if (!strcmp(t->classes[i].name, name))
			return &t->classes[i];
	if (t->nclasses == MAX_CLASSES)
		return NULL;
	t->classes[t->nclasses].name = name;
	return &t->classes[t->nclasses++];
}

static int cls_cmp(const void *a, const void *b)
{
	const struct cls *x = a, *y = b;

	return x->interval < y->interval ? 1 : x->interval > y->interval ? -1 : 0;
}

/* row_frames - row @r's Java stack as "root;...;leaf" in @buf ("" without
 * one; a name that does not fit ends the text). Method and class names
 * cannot hold ';' (JVMS 4.2), so the text splits back into frames. */
static const char *row_frames(struct alloctrace *at, const struct alloc_row *r, char *buf,
			      size_t len)
{
	const char *names[MAX_FRAMES];
	int n = r->jstack ? alloctrace_java_frames(at, r, names, MAX_FRAMES, false) : 0;
	size_t off = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		size_t l = strlen(names[i]);

		if (off + l + 2 > len)
			break;
		if (off)
			buf[off++] = ';';
		memcpy(buf + off, names[i], l + 1);
		off += l;
	}
	return buf;
}

/* Refresh per-class bytes of the last interval from the kernel aggregate. */
static void update_alloc(struct top *t, struct alloctrace *at)
{
	char fb[8192];
	struct alloc_row *rows;
	size_t n;
	uint64_t total = 0;

	for (int i = 0; i < t->nclasses; i++)
		t->classes[i].interval = t->classes[i].total; /* previous total */
	for (int i = 0; i < t->nclasses; i++)
		t->classes[i].total = 0;
	rows = alloctrace_rows(at, &n);
	if (t->stacks)
		pathrate_begin(&t->paths);
	for (size_t i = 0; i < n; i++) {
		struct cls *c = cls_get(t, rows[i].class_name);

		if (c)
			c->total += rows[i].bytes;
		total += rows[i].bytes;
		if (t->stacks && pathrate_add(&t->paths, row_frames(at, &rows[i], fb, sizeof(fb)),
					      rows[i].class_name, rows[i].bytes, rows[i].samples))
			t->stacks_nomem = true;
	}
	free(rows);
	if (t->stacks && pathrate_end(&t->paths))
		t->stacks_nomem = true;
	for (int i = 0; i < t->nclasses; i++)
		t->classes[i].interval = t->classes[i].total - t->classes[i].interval;
	t->alloc_interval = total - t->alloc_total;
	t->alloc_total = total;
	qsort(t->classes, t->nclasses, sizeof(t->classes[0]), cls_cmp);
}

static int lock_cmp(const void *a, const void *b)
{
	const struct lockrate *x = a, *y = b;

	if (x->contended != y->contended)
		return x->contended ? -1 : 1;
	return x->parked_s < y->parked_s ? 1 : x->parked_s > y->parked_s ? -1 : 0;
}

/* update_locks - parks and time parked per second, per blocker class and kind,
 * over the last interval (the counters are totals since attach). */
static void update_locks(struct top *t)
{
	struct parktrace_lock *l = NULL;
	size_t n = 0;

	parktrace_refresh(t->pk);
	if (parktrace_read(t->pk, &l, &n))
		return;
	for (int k = 0; k < t->nlocks; k++)
		t->locks[k].parks_s = t->locks[k].parked_s = 0;
	/* this round's totals per (class, kind), in parks_s/parked_s for now */
	for (size_t i = 0; i < n; i++) {
		const char *name = parktrace_lock_name(&l[i]);
		bool contended = parktrace_lock_contended(&l[i]);
		struct lockrate *r = NULL;

		for (int k = 0; k < t->nlocks && !r; k++)
			if (t->locks[k].contended == contended && !strcmp(t->locks[k].name, name))
				r = &t->locks[k];
		if (!r) {
			if (t->nlocks == MAX_LOCKS)
				continue;
			r = &t->locks[t->nlocks++];
			memset(r, 0, sizeof(*r));
			snprintf(r->name, sizeof(r->name), "%s", name);
			r->contended = contended;
		}
		r->parks_s += (double)l[i].v.count;
		r->parked_s += (double)l[i].v.total_ns;
	}
	/* totals -> rates since the last round */
	for (int k = 0; k < t->nlocks; k++) {
		struct lockrate *r = &t->locks[k];
		uint64_t parks = (uint64_t)r->parks_s, ns = (uint64_t)r->parked_s;

		r->parks_s = parks >= r->parks ? (double)(parks - r->parks) / t->interval : 0;
		r->parked_s = ns >= r->ns ? (double)(ns - r->ns) / 1e9 / t->interval : 0;
		r->parks = parks;
		r->ns = ns;
	}
	qsort(t->locks, (size_t)t->nlocks, sizeof(t->locks[0]), lock_cmp);
	free(l);
}

/* path_text - "Class <- leaf frame <- caller <- ..." (the allocating end
 * first, as a reader of a one-line view wants it) into @buf. */
static const char *path_text(const struct pathrate_path *pp, char *buf, size_t len)
{
	const char *f = pp->frames, *e = f + strlen(f);
	size_t off = (size_t)snprintf(buf, len, "%s", pp->class_name);

	if (!*f && off < len)
		snprintf(buf + off, len - off, " <- (no Java stack)");
	while (e > f && off < len) {
		const char *b = e;

		while (b > f && b[-1] != ';')
			b--;
		off += (size_t)snprintf(buf + off, len - off, " <- %.*s", (int)(e - b), b);
		e = b > f ? b - 1 : f;
	}
	return buf;
}

/* print_paths_json - the record's "top_paths" and "java_stacks" members. */
static void print_paths_json(struct top *t, struct alloctrace *at)
{
	printf(",\"top_paths\":[");
	for (size_t i = 0, k = 0; i < t->paths.ncur && k < TOP_PATHS; i++) {
		const struct pathrate_path *pp = &t->paths.cur[i];
		const char *f = pp->frames;

		if (!pp->total)
			continue;
		printf("%s{\"class\":", k++ ? "," : "");
		json_str(stdout, pp->class_name);
		printf(",\"bytes_per_s\":%.0f,\"total_bytes\":%llu,\"samples\":%llu,\"frames\":[",
		       pp->interval / t->interval, (unsigned long long)pp->total,
		       (unsigned long long)pp->samples);
		for (int nf = 0; *f; nf++) {
			const char *e = strchrnul(f, ';');
			char name[1024];

			snprintf(name, sizeof(name), "%.*s", (int)(e - f), f);
			printf("%s", nf ? "," : "");
			json_str(stdout, name);
			f = *e ? e + 1 : e;
		}
		printf("]}");
	}
	printf("],\"java_stacks\":{\"paths\":%zu,\"total_bytes\":%llu,\"unknown_frames\":%llu,"
	       "\"lost_stacks\":%llu,\"partial\":%s}",
	       t->paths.ncur, (unsigned long long)t->paths.total_bytes,
	       (unsigned long long)alloctrace_unknown_frames(at),
	       (unsigned long long)alloctrace_lost_jstacks(at), t->stacks_nomem ? "true" : "false");
}

/* conc_text - ", N concurrent-cycle pauses, N cycles" of the interval ("" with none). */
static const char *conc_text(const struct top *t, char *buf, size_t len)
{
	int n = 0;

	buf[0] = '\0';
	if (t->n_pauses)
		n = snprintf(buf, len, ", %llu concurrent-cycle pauses",
			     (unsigned long long)t->n_pauses);
	if (t->n_cycles && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, ", %llu cycles", (unsigned long long)t->n_cycles);
	return buf;
}

static void print_plain(struct top *t, struct gctrace *gt, struct alloctrace *at)
{
	char a[32], b[32], c[32], d[32], e[32], cc[96];
	time_t now = time(NULL);
	struct tm tm;

	localtime_r(&now, &tm);
	if (mt_opts.json) {
		printf("{\"event\":\"top\",\"pid\":%d,\"young\":%llu,\"full\":%llu,\"pauses\":%llu,"
		       "\"cycles\":%llu,\"pause_ns\":%llu,"
		       "\"pause_max_ns\":%llu,\"heap_used\":%llu,\"heap_committed\":%llu,"
		       "\"alloc_bytes_per_s\":%.0f,\"lost_events\":%llu,\"top_classes\":[",
		       t->p.pid, (unsigned long long)t->n_young, (unsigned long long)t->n_full,
		       (unsigned long long)t->n_pauses, (unsigned long long)t->n_cycles,
		       (unsigned long long)t->pause_total, (unsigned long long)t->pause_max,
		       (unsigned long long)t->heap_used, (unsigned long long)t->heap_committed,
		       t->alloc_interval / t->interval,
		       (unsigned long long)(gctrace_lost(gt) + (at ? alloctrace_lost_events(at) : 0)));
		for (int i = 0; i < t->nclasses && i < 5 && t->classes[i].interval; i++) {
			printf("%s{\"class\":", i ? "," : "");
			json_str(stdout, t->classes[i].name);
			printf(",\"bytes_per_s\":%.0f}", t->classes[i].interval / t->interval);
		}
		printf("]");
		if (t->stacks && at)
			print_paths_json(t, at);
		printf(",\"causes\":{");
		for (int i = 0; i < t->ncauses; i++) {
			printf("%s", i ? "," : "");
			json_str(stdout, t->causes[i].name);
			printf(":%llu", (unsigned long long)t->causes[i].n);
		}
		printf("}");
		if (t->pk) {
			printf(",\"locks\":[");
			for (int i = 0, k = 0; i < t->nlocks && k < 5; i++) {
				if (!t->locks[i].parks_s)
					continue;
				printf("%s{\"class\":", k++ ? "," : "");
				json_str(stdout, t->locks[i].name);
				printf(",\"kind\":\"%s\",\"parks_per_s\":%.1f,\"parked_s_per_s\":%.4f}",
				       t->locks[i].contended ? "contended" : "waiting",
				       t->locks[i].parks_s, t->locks[i].parked_s);
			}
			printf("]");
		}
		if (t->al) {
			printf(",\"age_live_bytes\":{");
			for (int k = 0; k < MT_AGE_BUCKETS; k++)
				printf("%s\"%s\":%.0f", k ? "," : "", ageranges_bucket_name(k),
				       t->ages.bytes[k]);
			printf("}");
		}
		printf("}\n");
		return;
	}
	printf("%02d:%02d:%02d pid %d  gc %llu young %llu full%s, pause %s (max %s)  heap %s / %s  "
	       "alloc %s/s  lost %llu\n",
	       tm.tm_hour, tm.tm_min, tm.tm_sec, t->p.pid, (unsigned long long)t->n_young,
	       (unsigned long long)t->n_full, conc_text(t, cc, sizeof(cc)),
	       fmt_ns(t->pause_total, a, sizeof(a)),
	       fmt_ns(t->pause_max, b, sizeof(b)), fmt_bytes(t->heap_used, c, sizeof(c)),
	       fmt_bytes(t->heap_committed, d, sizeof(d)),
	       fmt_bytes((uint64_t)(t->alloc_interval / t->interval), e, sizeof(e)),
	       (unsigned long long)(gctrace_lost(gt) + (at ? alloctrace_lost_events(at) : 0)));
	if (t->ncauses) {
		char cb[256];

		printf("         causes: %s\n", causes_text(t, cb, sizeof(cb)));
	}
	if (t->alloc_interval) {
		printf("         top:");
		/* the comma before each but the first: fewer than four classes
		 * may have allocated in the interval */
		for (int i = 0; i < t->nclasses && i < 4 && t->classes[i].interval; i++)
			printf("%s %s %.0f%%", i ? "," : "", t->classes[i].name,
			       100.0 * t->classes[i].interval / t->alloc_interval);
		printf("\n");
	}
	if (t->stacks && at && t->paths.interval_bytes) {
		char pb[512];

		for (size_t i = 0; i < t->paths.ncur && i < 3 && t->paths.cur[i].interval; i++)
			printf("         %s %4.1f%%  %s\n", i ? "    " : "path:",
			       100.0 * t->paths.cur[i].interval / t->paths.interval_bytes,
			       path_text(&t->paths.cur[i], pb, sizeof(pb)));
	}
	if (t->pk && t->nlocks && t->locks[0].contended && t->locks[0].parks_s) {
		printf("         contended:");
		for (int i = 0; i < t->nlocks && i < 3 && t->locks[i].contended && t->locks[i].parks_s; i++)
			printf("%s %s %.0f parks/s (%.0f ms/s parked)", i ? "," : "",
			       t->locks[i].name, t->locks[i].parks_s, t->locks[i].parked_s * 1e3);
		printf("\n");
	}
	if (t->al) {
		printf("         live by age (GCs survived):");
		for (int k = 0; k < MT_AGE_BUCKETS; k++)
			printf(" %s: %s", ageranges_bucket_name(k),
			       fmt_bytes((uint64_t)t->ages.bytes[k], a, sizeof(a)));
		printf("\n");
	}
}

/* draw_header - the lines every panel starts with; returns the next row. */
static int draw_header(struct top *t, struct gctrace *gt, struct alloctrace *at, bool paused)
{
	int row = 0;

	attron(A_BOLD);
	mvprintw(row++, 0, "memtrace  pid %d  %s %s  %s", t->p.pid, t->p.jdk_vendor,
		 t->p.jdk_version, t->p.main_class);
	attroff(A_BOLD);
	mvprintw(row++, 0, "up %.0f s   lost events %llu   %s", (mono_ns() - t->t0) / 1e9,
		 (unsigned long long)(gctrace_lost(gt) + (at ? alloctrace_lost_events(at) : 0)),
		 paused ? "[paused: p resumes]" : "q quit  p pause  space refresh");
	move(row, 0);
	for (int p = 0; p < NPANELS; p++) {
		if (p == (int)t->panel)
			attron(A_REVERSE);
		printw(" %d %s ", p, panel_name[p]);
		if (p == (int)t->panel)
			attroff(A_REVERSE);
		printw(" ");
	}
	printw("  (tab: next panel)");
	return row + 2;
}

/* draw_gc - the collections section from @row up to row @last; returns the next row. */
static int draw_gc(struct top *t, int row, int last, bool pools)
{
	char a[32], b[32], c[32], d[32], cc[96];

	attron(A_BOLD);
	mvprintw(row++, 0, "COLLECTIONS  last %.0f s: %llu young, %llu full%s, pause %s (max %s); "
		 "total %llu, %s", t->interval, (unsigned long long)t->n_young,
		 (unsigned long long)t->n_full, conc_text(t, cc, sizeof(cc)),
		 fmt_ns(t->pause_total, a, sizeof(a)),
		 fmt_ns(t->pause_max, b, sizeof(b)), (unsigned long long)t->all_count,
		 fmt_ns(t->all_pause, c, sizeof(c)));
	attroff(A_BOLD);
	if (t->ncauses) {
		char cb[256];

		mvprintw(row++, 2, "causes: %s", causes_text(t, cb, sizeof(cb)));
	}
	mvprintw(row++, 0, "heap after last collection: %s used, %s committed, %s max",
		 fmt_bytes(t->heap_used, a, sizeof(a)), fmt_bytes(t->heap_committed, b, sizeof(b)),
		 t->heap_max ? fmt_bytes(t->heap_max, c, sizeof(c)) : "-");
	int last_coll = 0; /* the latest record with a collection's pools, not a pause's */

	while (last_coll < t->nrecent &&
	       (t->recent[last_coll].kind == GC_KIND_PAUSE || !t->recent[last_coll].npools))
		last_coll++;
	if (pools && last_coll < t->nrecent) {
		const struct gc_record *r = &t->recent[last_coll];

		mvprintw(row++, 2, "%-28s %12s %12s %12s %12s", "pool (last collection)", "before",
			 "after", "committed", "max");
		for (int k = 0; k < r->npools && row < last; k++) {
			const struct gc_pool *p = &r->pools[k];

			mvprintw(row++, 2, "%-28.28s %12s %12s %12s %12s", p->name,
				 fmt_bytes(p->used_before, a, sizeof(a)),
				 fmt_bytes(p->used_after, b, sizeof(b)),
				 fmt_bytes(p->committed, c, sizeof(c)),
				 p->max != UINT64_MAX ? fmt_bytes(p->max, d, sizeof(d)) : "-");
		}
		row++;
	}
	for (int i = 0; i < t->nrecent && row < last; i++) {
		const struct gc_record *r = &t->recent[i];
		uint64_t before = 0, after = 0;

		for (int k = 0; k < r->npools; k++)
			if (r->pools[k].heap) {
				before += r->pools[k].used_before;
				after += r->pools[k].used_after;
			}
		if (r->kind == GC_KIND_PAUSE) /* a pause frees nothing: its name instead */
			mvprintw(row++, 2, "#%-5llu %-22s %-5s %10s  %-24s %s",
				 (unsigned long long)r->seq,
				 r->manager[0] ? r->manager : "(no memory manager)",
				 gcpair_kind_name(r->kind),
				 fmt_ns(r->end_ns - r->start_ns, a, sizeof(a)), r->pause, r->cause);
		else
			mvprintw(row++, 2, "#%-5llu %-22s %-5s %10s  %10s -> %-10s %s",
				 (unsigned long long)r->seq, r->manager,
				 gcpair_kind_name(r->kind),
				 fmt_ns(r->end_ns - r->start_ns, a, sizeof(a)),
				 fmt_bytes(before, b, sizeof(b)), fmt_bytes(after, c, sizeof(c)),
				 r->cause);
	}
	return row;
}

/* draw_paths - the top allocating paths (--stacks), the class first, at most
 * @max of them. */
static int draw_paths(struct top *t, int row, int max)
{
	char pb[1024], d[32];

	attron(A_BOLD);
	mvprintw(row++, 0, "PATHS  Java stacks (walked in the kernel), the class first%s",
		 t->stacks_nomem ? "  [out of memory: partial]" : "");
	attroff(A_BOLD);
	for (size_t i = 0; i < t->paths.ncur && (int)i < max && row < LINES - 1 &&
			   t->paths.cur[i].interval; i++)
		mvprintw(row++, 2, "%5.1f%%  %12s/s  %.*s",
			 t->paths.interval_bytes ?
				 100.0 * t->paths.cur[i].interval / t->paths.interval_bytes : 0,
			 fmt_bytes((uint64_t)(t->paths.cur[i].interval / t->interval), d, sizeof(d)),
			 COLS > 30 ? COLS - 26 : 4, path_text(&t->paths.cur[i], pb, sizeof(pb)));
	return row;
}

/* draw_alloc - the allocation section; @total adds the bytes since start. */
static int draw_alloc(struct top *t, struct alloctrace *at, int row, bool total)
{
	char a[32], d[32];
	int cols = COLS;

	attron(A_BOLD);
	if (at)
		mvprintw(row++, 0, "ALLOCATION  %s/s (TLAB sampling)%s%s",
			 fmt_bytes((uint64_t)(t->alloc_interval / t->interval), a, sizeof(a)),
			 total ? ", since start " : "",
			 total ? fmt_bytes(t->alloc_total, d, sizeof(d)) : "");
	else
		mvprintw(row++, 0, "ALLOCATION  unavailable (see `memtrace doctor`)");
	attroff(A_BOLD);
	/* with paths below them, the classes take at most half the rows left
	 * (five in the overview, which shows three paths) */
	int last = !t->stacks ? LINES - 1 : total ? row + (LINES - row) / 2 : row + 5;

	for (int i = 0; at && i < t->nclasses && row < last &&
			(t->classes[i].interval || (total && t->classes[i].total)); i++) {
		if (total)
			mvprintw(row++, 2, "%5.1f%%  %12s/s  %12s  %.*s",
				 t->alloc_interval ? 100.0 * t->classes[i].interval / t->alloc_interval : 0,
				 fmt_bytes((uint64_t)(t->classes[i].interval / t->interval), d, sizeof(d)),
				 fmt_bytes(t->classes[i].total, a, sizeof(a)),
				 cols > 44 ? cols - 40 : 4, t->classes[i].name);
		else
			mvprintw(row++, 2, "%5.1f%%  %12s/s  %.*s",
				 t->alloc_interval ? 100.0 * t->classes[i].interval / t->alloc_interval : 0,
				 fmt_bytes((uint64_t)(t->classes[i].interval / t->interval), d, sizeof(d)),
				 cols > 30 ? cols - 26 : 4, t->classes[i].name);
	}
	if (t->stacks && at)
		row = draw_paths(t, row + 1, total ? LINES : 3);
	return row;
}

/* draw_age - live sampled bytes by age (agent sampling, --age). */
static int draw_age(struct top *t, int row)
{
	char a[32];

	attron(A_BOLD);
	mvprintw(row++, 0, "AGE  live sampled objects by GCs survived%s",
		 t->al ? " (memtrace's agent; bytes are estimates)" : "");
	attroff(A_BOLD);
	if (!t->al) {
		mvprintw(row++, 2, "age sampling is off: start the view with --age (it loads "
			 "memtrace's JVMTI agent into the JVM)");
		return row;
	}
	mvprintw(row++, 2, "%-8s %12s %10s", "age", "live bytes", "samples");
	for (int b = 0; b < MT_AGE_BUCKETS; b++)
		mvprintw(row++, 2, "%-8s %12s %10llu", ageranges_bucket_name(b),
			 fmt_bytes((uint64_t)t->ages.bytes[b], a, sizeof(a)),
			 (unsigned long long)t->ages.samples[b]);
	mvprintw(row++, 2, "%llu collections seen by the agent, %llu samples lost or evicted",
		 (unsigned long long)t->ages.gcs, (unsigned long long)t->ages.lost);
	return row;
}

/* draw_locks - java.util.concurrent parks per second (--locks). */
static int draw_locks(struct top *t, int row)
{
	mvprintw(row++, 0, "LOCKS  java.util.concurrent parks per second (thread__park probes)");
	for (int i = 0; i < t->nlocks && i < 5 && row < LINES - 1; i++) {
		if (!t->locks[i].parks_s)
			continue;
		mvprintw(row++, 2, "%-9s %9.0f parks/s %8.1f ms/s parked  %s",
			 t->locks[i].contended ? "contended" : "waiting", t->locks[i].parks_s,
			 t->locks[i].parked_s * 1e3, t->locks[i].name);
	}
	return row;
}

static void draw_curses(struct top *t, struct gctrace *gt, struct alloctrace *at, bool paused)
{
	int row;

	erase();
	row = draw_header(t, gt, at, paused);
	switch (t->panel) {
	case PANEL_OVERVIEW:
		row = draw_gc(t, row, LINES / 2, false);
		row = draw_alloc(t, at, row + 1, false);
		if (t->pk && row + 4 < LINES)
			row = draw_locks(t, row + 1);
		if (t->al && row + 9 < LINES)
			draw_age(t, row + 1);
		break;
	case PANEL_GC:
		draw_gc(t, row, LINES - 1, true);
		break;
	case PANEL_ALLOC:
		draw_alloc(t, at, row, true);
		break;
	case PANEL_AGE:
		draw_age(t, row);
		break;
	default:
		break;
	}
	refresh();
}

static void reset_interval(struct top *t)
{
	t->n_young = t->n_full = t->n_pauses = t->n_cycles = t->pause_total = t->pause_max = 0;
	t->ncauses = 0;
}

/* The options of `memtrace top` (libbpf-tools' env). */
struct top_opts {
	int pid;
	double interval, duration;
	bool plain, age, locks, stacks;
};

/* The options into *@o. Returns -1 to go on, else the exit code (0 after
 * --help, 2 for a bad option). */
static int parse_args(int argc, char **argv, struct top_opts *o)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "duration", required_argument, NULL, 'd' },
		{ "plain", no_argument, NULL, 'P' },
		{ "json", no_argument, NULL, 'j' },
		{ "age", no_argument, NULL, 'A' },
		{ "locks", no_argument, NULL, 'L' },
		{ "stacks", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int opt;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "p:i:d:jh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'p':
			if (parse_pid(optarg, &o->pid)) {
				p_err("invalid pid '%s': expected a positive number", optarg);
				goto usage_err;
			}
			break;
		case 'i':
			if (parse_seconds(optarg, &o->interval) || o->interval < 0.1) {
				p_err("invalid --interval '%s': expected %s, at least 100ms", optarg,
				      MT_DURATION_HELP);
				goto usage_err;
			}
			break;
		case 'd':
			if (parse_seconds(optarg, &o->duration)) {
				p_err("invalid --duration '%s'", optarg);
				goto usage_err;
			}
			break;
		case 'P':
			o->plain = true;
			break;
		case 'j':
			mt_opts.json = true;
			break;
		case 'A':
			o->age = true;
			break;
		case 'L':
			o->locks = true;
			break;
		case 'S':
			o->stacks = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			goto usage_err;
		}
	}
	if (cmdopt_no_args(argc, argv, "top", usage))
		return 2;
	if (!o->pid) {
		p_err("the live view needs -p PID (`memtrace ps` lists the JVMs)");
		goto usage_err;
	}
	return -1;
usage_err:
	usage(stderr);
	return 2;
}

/* Attach what the options ask for: collections always, allocation sampling
 * if it can (a warning if not), parks (--locks), the agent (--age).
 * 0 or -1 (printed). */
static int top_open(struct top *t, const struct top_opts *o, struct gctrace **gt,
		    struct alloctrace **at)
{
	struct alloctrace_opts ao = { .budget = ALLOCTRACE_BUDGET, .stacks = o->stacks };
	int err;

	if (privs_require_bpf("memtrace"))
		return -1;
	err = proc_open(o->pid, &t->p);
	if (err) {
		proc_explain(o->pid, err);
		return -1;
	}
	*gt = gctrace_new(&t->p, on_gc, t);
	if (!*gt)
		return -1;
	*at = alloctrace_new(&t->p, &ao);
	if (!*at)
		p_warn("allocation sampling is unavailable for pid %d; showing collections only",
		       o->pid);
	if (o->locks) {
		err = vmstructs_open(&t->p, &t->vs);
		if (err) {
			p_err("can't read VMStructs of pid %d: %s", o->pid, strerror(-err));
			return -1;
		}
		t->pk = parktrace_new(&t->p, t->vs, false);
		if (!t->pk)
			return -1;
	}
	if (o->age) {
		t->al = agentlive_start(&t->p, 0);
		if (!t->al)
			return -1;
	}
	return 0;
}

/* The full-screen view on a terminal (not with --plain or --json). */
static void screen_start(struct top *t)
{
	t->curses = !t->plain && !mt_opts.json && isatty(STDOUT_FILENO);
	if (!t->curses)
		return;
	initscr();
	cbreak();
	noecho();
	curs_set(0);
	timeout(100);
}

/* One key of the full-screen view (waits up to 100 ms for it): panels 0-3
 * and tab, p pauses, space refreshes (*@redraw). false: q, quit. */
static bool screen_key(struct top *t, bool *paused, bool *redraw)
{
	int ch = getch();

	if (ch == 'q' || ch == 'Q')
		return false;
	if (ch >= '0' && ch < '0' + NPANELS) {
		t->panel = (enum panel)(ch - '0');
		*redraw = true;
	}
	if (ch == '\t') {
		t->panel = (enum panel)((t->panel + 1) % NPANELS);
		*redraw = true;
	}
	if (ch == 'p' || ch == 'P') {
		*paused = !*paused;
		*redraw = true;
	}
	if (ch == ' ')
		*redraw = true;
	return true;
}

/* Every --interval: the figures of the interval, and the plain line. */
static void top_interval(struct top *t, struct gctrace *gt, struct alloctrace *at)
{
	if (at)
		update_alloc(t, at);
	if (t->al)
		agentlive_ages(t->al, &t->ages);
	if (t->pk)
		update_locks(t);
	if (!t->curses)
		print_plain(t, gt, at);
}

/* Until q, Ctrl-C, --duration or the JVM's exit: poll the probes, show each
 * interval. */
static void top_loop(struct top *t, const struct top_opts *o, struct gctrace *gt,
		     struct alloctrace *at)
{
	bool paused = false;
	uint64_t next, deadline;

	stopflag_catch(NULL);
	t->t0 = mono_ns();
	next = t->t0 + (uint64_t)(t->interval * 1e9);
	deadline = o->duration > 0 ? t->t0 + (uint64_t)(o->duration * 1e9) : 0;
	if (t->curses)
		draw_curses(t, gt, at, paused);
	while (!stopflag_raised()) {
		bool redraw = false;

		gctrace_poll(gt, t->curses ? 0 : 100);
		if (at)
			alloctrace_poll(at, 0);
		if (t->al && agentlive_poll(t->al)) {
			agentlive_stop(t->al); /* printed; the rest of the view goes on */
			t->al = NULL;
		}
		if (t->curses && !screen_key(t, &paused, &redraw))
			break;
		if (mono_ns() >= next) {
			top_interval(t, gt, at);
			redraw = true;
			next += (uint64_t)(t->interval * 1e9);
		}
		if (t->curses && redraw && !paused)
			draw_curses(t, gt, at, paused);
		if (redraw && !paused)
			reset_interval(t);
		if (deadline && mono_ns() >= deadline)
			break;
		if (!proc_exists(o->pid)) {
			if (t->curses)
				endwin();
			t->curses = false;
			p_info("pid %d exited", o->pid);
			break;
		}
	}
}

int do_top(int argc, char **argv)
{
	struct top_opts o = { .interval = 2 };
	struct alloctrace *at = NULL;
	struct gctrace *gt = NULL;
	struct top *t;
	int rc = parse_args(argc, argv, &o);

	if (rc >= 0)
		return rc;
	t = calloc(1, sizeof(*t));
	if (!t)
		return 1;
	t->interval = o.interval;
	t->plain = o.plain;
	t->stacks = o.stacks;
	rc = 1;
	if (top_open(t, &o, &gt, &at))
		goto out;
	screen_start(t);
	top_loop(t, &o, gt, at);
	rc = 0;
out:
	if (t->curses)
		endwin();
	agentlive_stop(t->al);
	parktrace_free(t->pk);
	vmstructs_free(t->vs);
	alloctrace_free(at);
	gctrace_free(gt);
	pathrate_fini(&t->paths);
	free(t);
	return rc;
}
