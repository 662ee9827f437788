// SPDX-License-Identifier: GPL-2.0
/* parks.c - java.util.concurrent parks per blocker; see parks.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sink/parks.h"
#include "lib/util.h"

static const char *how(const struct parktrace_lock *l)
{
	return l->key.timed == MT_PARK_SLEEP ? "sleep" : l->key.timed == MT_PARK_TIMED ? "timed" : "park";
}

/* ,"stacks":[{"@count":N,"@ns":N,"frames":[root ... leaf]}, ...] (none: nothing) */
static void json_stacks(FILE *f, const struct parktrace_stack *st, int n, const char *count,
			const char *ns)
{
	if (!n)
		return;
	fputs(",\"stacks\":[", f);
	for (int i = 0; i < n; i++) {
		fprintf(f, "%s{\"%s\":%" PRIu64 ",\"%s\":%" PRIu64 ",\"frames\":[", i ? "," : "",
			count, st[i].parks, ns, st[i].ns);
		for (int k = 0; k < st[i].n; k++) {
			fputs(k ? "," : "", f);
			json_str(f, st[i].frames[k]);
		}
		fputs("]}", f);
	}
	fputs("]", f);
}

static void json_lock(FILE *f, const struct parktrace_lock *l)
{
	fprintf(f, "{\"event\":\"park_lock\",\"kind\":\"%s\",\"class\":",
		parktrace_lock_contended(l) ? "contended" : "waiting");
	json_str(f, l->key.klass ? l->cls : "");
	fprintf(f, ",\"blocker\":\"0x%" PRIx64 "\",\"how\":\"%s\",\"timed\":%s,\"parks\":%" PRIu64
		   ",\"parked_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64 ",\"parks_with_owner\":%" PRIu64
		   ",\"owner\":",
		(uint64_t)l->key.blocker, how(l), l->key.timed ? "true" : "false", (uint64_t)l->v.count, (uint64_t)l->v.total_ns,
		(uint64_t)l->v.max_ns, (uint64_t)l->v.with_owner);
	if (l->owner[0])
		json_str(f, l->owner);
	else
		fputs("null", f);
	fputs(",\"last_waiter\":", f);
	json_str(f, l->waiter);
	fputs(",\"hist_log2_ns\":[", f);
	for (int i = 0; i < MT_PARK_HIST; i++)
		fprintf(f, "%s%" PRIu64, i ? "," : "", (uint64_t)l->v.hist[i]);
	fputs("]", f);
	json_stacks(f, l->stacks, l->nstacks, "parks", "parked_ns");
	fputs("}\n", f);
}

/* The waiter's own code: the innermost frame outside the lock's and the
 * JDK's parking machinery. Index into @st's frames (root first). */
static int first_caller(const struct parktrace_stack *st)
{
	static const char *const machinery[] = { "java.util.concurrent.", "jdk.internal.misc.Unsafe.",
						 "java.lang.Thread.sleep" };

	for (int i = st->n - 1; i >= 0; i--) {
		bool ours = false;

		for (size_t k = 0; k < sizeof(machinery) / sizeof(machinery[0]); k++)
			ours |= !strncmp(st->frames[i], machinery[k], strlen(machinery[k]));
		if (!ours)
			return i;
	}
	return st->n - 1;
}

/* The frame a stack is shown from: the waiter's caller (parks), or the
 * leaf (a monitor's contender: the method that enters it). */
static int shown_frame(const struct parktrace_stack *st, bool leaf)
{
	return leaf ? st->n - 1 : first_caller(st);
}

/* Do stacks @a and @b show the same frame and its two callers? */
static bool same_shown(const struct parktrace_stack *a, const struct parktrace_stack *b, bool leaf)
{
	int ca = shown_frame(a, leaf), cb = shown_frame(b, leaf);

	for (int k = 0; k < 3; k++) {
		if ((ca - k >= 0) != (cb - k >= 0))
			return false;
		if (ca - k >= 0 && strcmp(a->frames[ca - k], b->frames[cb - k]))
			return false;
	}
	return true;
}

/* @n stacks by the frame they are shown from and its two callers, the
 * stacks that show the same three frames summed (JSON keeps each whole
 * stack); @unit names what stacks[i].parks counts. */
static void text_stacks(FILE *f, const struct parktrace_stack *stacks, int n, const char *unit,
			bool leaf)
{
	char t[32];

	for (int i = 0; i < n; i++) {
		const struct parktrace_stack *st = &stacks[i];
		uint64_t parks = st->parks, ns = st->ns;
		int c = shown_frame(st, leaf);
		bool shown = false;

		for (int j = 0; j < i && !shown; j++)
			shown = same_shown(&stacks[j], st, leaf);
		if (shown)
			continue;
		for (int j = i + 1; j < n; j++)
			if (same_shown(&stacks[j], st, leaf))
				parks += stacks[j].parks, ns += stacks[j].ns;
		fprintf(f, "             %" PRIu64 " %s, %s:", parks, unit, fmt_ns(ns, t, sizeof(t)));
		for (int k = c; k >= 0 && k > c - 3; k--)
			fprintf(f, " %s%s", k < c ? "<- " : "at ", st->frames[k]);
		fputc('\n', f);
	}
}

static void text_lock(FILE *f, const struct parktrace_lock *l)
{
	char t[32], m[32];

	fprintf(f, "  %9" PRIu64 " %10s %10s  %s%s @0x%" PRIx64, (uint64_t)l->v.count,
		fmt_ns(l->v.total_ns, t, sizeof(t)), fmt_ns(l->v.max_ns, m, sizeof(m)),
		parktrace_lock_name(l),
		l->key.timed == MT_PARK_TIMED ? " (timed)" : "",
		(uint64_t)l->key.blocker);
	if (parktrace_lock_contended(l))
		fprintf(f, "  owner \"%s\"", l->owner);
	fputc('\n', f);
	text_stacks(f, l->stacks, l->nstacks, "parks", false);
}

int parks_print(FILE *f, const struct parktrace_lock *locks, size_t n,
		const uint64_t stats[MT_PARK_NSTATS], size_t top, bool json)
{
	uint64_t parks[2] = { 0 }, ns[2] = { 0 };

	for (size_t i = 0; i < n; i++) {
		parks[parktrace_lock_contended(&locks[i])] += locks[i].v.count;
		ns[parktrace_lock_contended(&locks[i])] += locks[i].v.total_ns;
	}
	if (json) {
		for (size_t i = 0; i < n; i++)
			json_lock(f, &locks[i]);
		fprintf(f, "{\"event\":\"park_summary\",\"parks\":%" PRIu64
			   ",\"contended_parks\":%" PRIu64 ",\"contended_ns\":%" PRIu64
			   ",\"waiting_parks\":%" PRIu64 ",\"waiting_ns\":%" PRIu64
			   ",\"no_thread\":%" PRIu64 ",\"no_begin\":%" PRIu64 ",\"map_full\":%" PRIu64
			   ",\"sleeps\":%" PRIu64 ",\"missed\":%" PRIu64 "}\n",
			stats[MT_PARK_BEGIN], parks[1], ns[1], parks[0], ns[0],
			stats[MT_PARK_NO_THREAD], stats[MT_PARK_NO_BEGIN], stats[MT_PARK_FULL],
			stats[MT_PARK_SLEEPS], stats[MT_PARK_MISSED]);
		return ferror(f) ? -EIO : 0;
	}
	fprintf(f, "\njava.util.concurrent parks (hotspot:thread__park__* probes): %" PRIu64
		   " parks, %" PRIu64 " Thread.sleep calls\n",
		stats[MT_PARK_BEGIN], stats[MT_PARK_SLEEPS]);
	for (int k = 1; k >= 0; k--) {
		char t[32];
		size_t shown = 0;

		fprintf(f, "%s: %" PRIu64 " parks, %s parked\n",
			k ? "CONTENDED (a lock: it had an owner when the thread parked, or it is a "
			    "(read-write) ReentrantLock)"
			  : "WAITING (conditions, queues, latches, futures, parkNanos, Thread.sleep: no owner)",
			parks[k], fmt_ns(ns[k], t, sizeof(t)));
		if (parks[k])
			fprintf(f, "  %9s %10s %10s  %s\n", "PARKS", "TIME", "MAX", "BLOCKER");
		for (size_t i = 0; i < n; i++) {
			if (parktrace_lock_contended(&locks[i]) != k)
				continue;
			if (!top || shown < top)
				text_lock(f, &locks[i]);
			shown++;
		}
		if (top && shown > top)
			fprintf(f, "  ... %zu more blockers (--top)\n", shown - (size_t)top);
	}
	if (stats[MT_PARK_NO_THREAD] || stats[MT_PARK_NO_BEGIN] || stats[MT_PARK_FULL])
		fprintf(f, "  not attributed: %" PRIu64 " parks of threads not yet known (no blocker "
			   "read), %" PRIu64 " ends of parks begun before memtrace, %" PRIu64
			   " parks with the lock table full\n",
			stats[MT_PARK_NO_THREAD], stats[MT_PARK_NO_BEGIN], stats[MT_PARK_FULL]);
	if (stats[MT_PARK_MISSED])
		fprintf(f, "  lost: %" PRIu64 " probe hits the kernel ran no program for (another "
			   "BPF program was running on that CPU)\n", stats[MT_PARK_MISSED]);
	return ferror(f) ? -EIO : 0;
}

int parks_print_monitors(FILE *f, const struct parktrace_monitor *m, size_t n,
			 const uint64_t stats[MT_PARK_NSTATS], size_t top, bool json)
{
	char t[32], x[32];

	if (json) {
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "{\"event\":\"monitor_stacks\",\"monitor\":\"0x%" PRIx64 "\",\"class\":",
				m[i].monitor);
			json_str(f, m[i].cls ? m[i].cls : "");
			fprintf(f, ",\"entries\":%" PRIu64 ",\"blocked_ns\":%" PRIu64 ",\"max_ns\":%" PRIu64
				   ",\"unwalked\":%" PRIu64, m[i].entries, m[i].ns, m[i].max_ns,
				m[i].unwalked);
			json_stacks(f, m[i].stacks, m[i].nstacks, "entries", "blocked_ns");
			fputs("}\n", f);
		}
		fprintf(f, "{\"event\":\"monitor_stacks_summary\",\"contended_enters\":%" PRIu64
			   ",\"no_thread\":%" PRIu64 ",\"map_full\":%" PRIu64 "}\n",
			stats[MT_PARK_MON_ENTER], stats[MT_PARK_MON_NO_THREAD], stats[MT_PARK_MON_FULL]);
		return ferror(f) ? -EIO : 0;
	}
	fprintf(f, "\ncontending threads' stacks per monitor (hotspot:monitor__contended__enter): "
		   "%" PRIu64 " contended entries\n", stats[MT_PARK_MON_ENTER]);
	if (n)
		fprintf(f, "  %9s %10s %10s  %s\n", "ENTRIES", "TIME", "MAX", "MONITOR");
	for (size_t i = 0; i < n && (!top || i < top); i++) {
		fprintf(f, "  %9" PRIu64 " %10s %10s  %s @0x%" PRIx64 "\n", m[i].entries,
			fmt_ns(m[i].ns, t, sizeof(t)), fmt_ns(m[i].max_ns, x, sizeof(x)),
			m[i].cls ? m[i].cls : "(unknown class)", m[i].monitor);
		text_stacks(f, m[i].stacks, m[i].nstacks, "entries", true);
	}
	if (stats[MT_PARK_MON_NO_THREAD] || stats[MT_PARK_MON_FULL])
		fprintf(f, "  without a stack: %" PRIu64 " entries of threads not yet known; %" PRIu64
			   " not counted (the monitor table was full)\n",
			stats[MT_PARK_MON_NO_THREAD], stats[MT_PARK_MON_FULL]);
	return ferror(f) ? -EIO : 0;
}
