// SPDX-License-Identifier: GPL-2.0
/* lockprint.c - monitor contention, the wait graph and deadlocks, printed. */
#include <errno.h>
#include <string.h>

#include "sink/lockprint.h"
#include "lib/util.h"

static void print_classes(FILE *f, const struct locks_report *r, bool json)
{
	char a[32], b[32], c[32];

	if (!json)
		fprintf(f, "contended monitors by class (blocked entering; Object.wait):\n");
	for (size_t j = 0; j < r->nclasses; j++) {
		const struct locks_class *k = &r->classes[j];

		if (json) {
			fprintf(f, "{\"event\":\"lock_class\",\"class\":");
			json_str(f, k->name);
			fprintf(f, ",\"monitors\":%llu,\"contended\":%llu,\"wait_ns\":%llu,"
				"\"wait_max_ns\":%llu,\"object_waits\":%llu,\"object_wait_ns\":%llu}\n",
				(unsigned long long)k->monitors, (unsigned long long)k->contended,
				(unsigned long long)k->wait_ns, (unsigned long long)k->wait_max,
				(unsigned long long)k->waits, (unsigned long long)k->notify_ns);
		} else {
			fprintf(f, "  %-40s %4llu monitors  %6llu contended  blocked %10s (max %s)  "
				"Object.wait %llu (%s)\n",
				k->name, (unsigned long long)k->monitors,
				(unsigned long long)k->contended, fmt_ns(k->wait_ns, a, sizeof(a)),
				fmt_ns(k->wait_max, b, sizeof(b)), (unsigned long long)k->waits,
				fmt_ns(k->notify_ns, c, sizeof(c)));
		}
	}
	if (!json && !r->nclasses)
		fprintf(f, "  (none)\n");
}

static const char *const park_how[] = {
	[LOCKS_PARK] = "park", [LOCKS_PARK_TIMED] = "timed", [LOCKS_SLEEP] = "sleep",
};

/* Parks and sleeps per (blocker class, how): only a recording's stream has them. */
static void print_parks(FILE *f, const struct locks_report *r, bool json)
{
	char a[32], b[32], c[32];

	if (!json && r->nparks)
		fprintf(f, "java.util.concurrent parks and Thread.sleep by blocker class (contended: "
			"on a lock that had an owner when one of its parks began, or a (read-write) "
			"ReentrantLock):\n"
			"  %9s %10s %10s %9s %10s %8s  %s\n", "PARKS", "TIME", "MAX", "CONTENDED",
			"CONT.TIME", "BLOCKERS", "BLOCKER CLASS");
	for (size_t i = 0; i < r->nparks; i++) {
		const struct locks_park *p = &r->parks[i];

		if (json) {
			fprintf(f, "{\"event\":\"park_class\",\"class\":");
			json_str(f, p->name);
			fprintf(f, ",\"how\":\"%s\",\"blockers\":%llu,\"parks\":%llu,\"parked_ns\":%llu,"
				"\"max_ns\":%llu,\"contended_parks\":%llu,\"contended_ns\":%llu,"
				"\"waiting_parks\":%llu,\"waiting_ns\":%llu}\n",
				park_how[p->how], (unsigned long long)p->blockers,
				(unsigned long long)p->parks, (unsigned long long)p->ns,
				(unsigned long long)p->max_ns, (unsigned long long)p->contended,
				(unsigned long long)p->contended_ns,
				(unsigned long long)(p->parks - p->contended),
				(unsigned long long)(p->ns - p->contended_ns));
		} else {
			fprintf(f, "  %9llu %10s %10s %9llu %10s %8llu  %s%s\n",
				(unsigned long long)p->parks, fmt_ns(p->ns, a, sizeof(a)),
				fmt_ns(p->max_ns, b, sizeof(b)), (unsigned long long)p->contended,
				fmt_ns(p->contended_ns, c, sizeof(c)), (unsigned long long)p->blockers,
				p->name, p->how == LOCKS_PARK_TIMED ? " (timed)" : "");
		}
	}
}

static const char *const lock_kinds[] = {
	[LOCKS_MONITOR] = "monitor", [LOCKS_PARKED] = "parked", [LOCKS_OBJWAIT] = "object_wait",
	[LOCKS_RELOCK] = "relock", [LOCKS_CONDITION] = "condition",
};

/* Why a waiter's stack was not read (locks_edge.frames_err). */
static const char *frames_why(int err)
{
	switch (err) {
	case -EAGAIN:
		return "the thread moved on while its stack was read";
	case -ENOENT:
		return "no Java frame";
	default:
		return "its stack could not be read";
	}
}

/* The edge's JSON fields after owner_from. */
static void json_edge_tail(FILE *f, const struct locks_edge *e)
{
	if (e->readers)
		fprintf(f, ",\"readers\":%u", e->readers);
	if (e->lock_free)
		fputs(",\"lock_free\":true", f);
	if (e->transient)
		fputs(",\"transient\":true", f);
	if (e->kind == LOCKS_CONDITION && e->cond_lock) {
		fprintf(f, ",\"condition_lock\":\"0x%llx\",\"condition_lock_class\":",
			(unsigned long long)e->cond_lock);
		json_str(f, e->cond_cls ? e->cond_cls : "");
	}
	if (e->frames) {
		fputs(",\"frames\":[", f);
		for (int k = 0; k < e->nframes; k++) {
			fputs(k ? "," : "", f);
			json_str(f, e->frames[k].name ? e->frames[k].name : "[unknown]");
		}
		fputs("]", f);
	} else if (e->frames_err) {
		/* a stack asked for and not read: say why, never an edge that
		 * silently lacks one */
		fputs(",\"frames\":[],\"frames_unread\":", f);
		json_str(f, frames_why(e->frames_err));
	}
	if (e->since_before || e->untimed)
		fprintf(f, ",\"blocked_ns\":null}\n");
	else
		fprintf(f, ",\"blocked_ns\":%llu}\n", (unsigned long long)e->blocked_ns);
}

/* What the edge's thread waits for, up to its owner. */
static void text_edge_what(FILE *f, const struct locks_edge *e)
{
	const char *cls = e->cls ? e->cls : "?";

	switch (e->kind) {
	case LOCKS_OBJWAIT:
		fprintf(f, "Object.wait on monitor 0x%llx (%s): owner unknown until a notify",
			(unsigned long long)e->monitor, cls);
		return;
	case LOCKS_CONDITION:
		fprintf(f, "Condition.await on 0x%llx (%s", (unsigned long long)e->monitor, cls);
		if (e->cond_lock)
			fprintf(f, " of %s 0x%llx", e->cond_cls ? e->cond_cls : "?",
				(unsigned long long)e->cond_lock);
		fputs("): owner unknown until a signal", f);
		return;
	case LOCKS_RELOCK:
		fprintf(f, "monitor 0x%llx (%s) again after Object.wait, owned by ",
			(unsigned long long)e->monitor, cls);
		break;
	default:
		fprintf(f, "%s 0x%llx (%s) owned by ", e->kind == LOCKS_PARKED ? "parked on" : "monitor",
			(unsigned long long)e->monitor, cls);
		break;
	}
	if (e->owner)
		fprintf(f, "\"%s\" (tid %llu%s)", e->owner_name, (unsigned long long)e->owner,
			e->owner_from != LOCKS_OWNER_JVM ? "" :
			e->kind == LOCKS_PARKED ? ", read from the JVM" :
						  ", entered uncontended: read from the JVM");
	else if (e->readers)
		fprintf(f, "%u read hold%s", e->readers, e->readers == 1 ? "" : "s");
	else if (e->lock_free)
		fprintf(f, "nobody at the reading (being handed over)");
	else if (e->kind == LOCKS_PARKED)
		fprintf(f, "nobody (waiting, not contending)");
	else
		fprintf(f, "(owner unknown)");
}

/* Where the waiter waits in its stack (ROOT FIRST): the innermost frame
 * outside the JDK's locks and waits themselves - the caller of
 * Object.wait, of a lock's or a condition's method (a queue's take, a
 * latch's await, the application's own code). */
static int own_frame(const struct locks_edge *e)
{
	static const char *const machinery[] = {
		"java.util.concurrent.locks.", "java.util.concurrent.ForkJoinPool.managedBlock",
		"java.util.concurrent.ForkJoinPool.unmanagedBlock", "jdk.internal.misc.Unsafe.",
		"java.lang.Object.wait",
	};

	for (int i = e->nframes - 1; i >= 0; i--) {
		const char *name = e->frames[i].name ? e->frames[i].name : "";
		bool ours = false;

		for (size_t k = 0; k < sizeof(machinery) / sizeof(machinery[0]); k++)
			ours |= !strncmp(name, machinery[k], strlen(machinery[k]));
		if (!ours)
			return i;
	}
	return e->nframes - 1;
}

/* The waiter's own frame and its two callers, on one line. */
static void text_edge_stack(FILE *f, const struct locks_edge *e)
{
	int c;

	if (!e->frames || !e->nframes) {
		if (e->frames_err)
			fprintf(f, "      (stack not read: %s)\n", frames_why(e->frames_err));
		return;
	}
	c = own_frame(e);
	fputs("      at", f);
	for (int k = c; k >= 0 && k > c - 3; k--)
		fprintf(f, "%s%s", k < c ? " <- " : " ",
			e->frames[k].name ? e->frames[k].name : "[unknown]");
	fputc('\n', f);
}

static void print_edges(FILE *f, const struct locks_report *r, bool json)
{
	static const char *const from[] = {
		[LOCKS_OWNER_UNKNOWN] = "", [LOCKS_OWNER_STREAM] = "stream", [LOCKS_OWNER_JVM] = "jvm",
	};
	char a[32];

	if (!json)
		fprintf(f, "wait graph (threads waiting now -> owner):\n");
	for (size_t i = 0; i < r->nedges; i++) {
		const struct locks_edge *e = &r->edges[i];
		bool wait = e->kind == LOCKS_OBJWAIT || e->kind == LOCKS_CONDITION;

		if (json) {
			fprintf(f, "{\"event\":\"wait_edge\",\"tid\":%llu,\"thread\":",
				(unsigned long long)e->tid);
			json_str(f, e->thread);
			fprintf(f, ",\"lock_kind\":\"%s\",\"monitor\":\"0x%llx\",\"class\":",
				lock_kinds[e->kind], (unsigned long long)e->monitor);
			json_str(f, e->cls ? e->cls : "");
			fprintf(f, ",\"owner_tid\":%llu,\"owner\":", (unsigned long long)e->owner);
			json_str(f, e->owner_name);
			/* where the owner is known from: its (contended) entry, or the JVM */
			fprintf(f, ",\"owner_from\":\"%s\"", from[e->owner_from]);
			json_edge_tail(f, e);
		} else {
			fprintf(f, "  \"%s\" (tid %llu) -> ", e->thread, (unsigned long long)e->tid);
			text_edge_what(f, e);
			if (e->since_before)
				fprintf(f, ", %s since before tracing began\n", wait ? "waiting" : "blocked");
			else if (e->untimed)
				fprintf(f, ", %s for a time not traced (monitor probes off)\n",
					wait ? "waiting" : "blocked");
			else
				fprintf(f, ", %s %s\n", wait ? "waiting" : "blocked",
					fmt_ns(e->blocked_ns, a, sizeof(a)));
			text_edge_stack(f, e);
		}
	}
	if (!json && !r->nedges)
		fprintf(f, "  (no thread is blocked on a lock)\n");
}

static void print_cycle(FILE *f, const struct locks_report *r, const struct locks_cycle *c,
			bool json)
{
	if (json)
		fprintf(f, "{\"event\":\"deadlock\",\"threads\":[");
	else
		fprintf(f, "DEADLOCK: %zu threads wait for each other:\n", c->n);
	for (size_t s = 0; s < c->n; s++) {
		const struct locks_edge *e = &r->edges[c->edge[s]];

		if (json) {
			fprintf(f, "%s{\"tid\":%llu,\"thread\":", s ? "," : "",
				(unsigned long long)e->tid);
			json_str(f, e->thread);
			fprintf(f, ",\"lock_kind\":\"%s\",\"waits_for\":\"0x%llx\",\"class\":",
				lock_kinds[e->kind],
				(unsigned long long)e->monitor);
			json_str(f, e->cls ? e->cls : "");
			fprintf(f, "}");
		} else {
			fprintf(f, "  \"%s\" (tid %llu) waits for %s 0x%llx (%s) held by \"%s\"\n",
				e->thread, (unsigned long long)e->tid,
				e->kind == LOCKS_PARKED ? "the j.u.c. lock" : "monitor",
				(unsigned long long)e->monitor, e->cls ? e->cls : "?", e->owner_name);
		}
	}
	if (json)
		fprintf(f, "]}\n");
}

void lockprint_report(FILE *f, const struct locks_report *r, bool json)
{
	print_classes(f, r, json);
	print_parks(f, r, json);
	print_edges(f, r, json);
	for (size_t i = 0; i < r->ncycles; i++)
		print_cycle(f, r, &r->cycles[i], json);
}
