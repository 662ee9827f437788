// SPDX-License-Identifier: GPL-2.0
/* lockprint.c - monitor contention, the wait graph and deadlocks, printed. */
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
			"on a lock that had an owner when one of its parks began):\n"
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

static void print_edges(FILE *f, const struct locks_report *r, bool json)
{
	static const char *const from[] = {
		[LOCKS_OWNER_UNKNOWN] = "", [LOCKS_OWNER_STREAM] = "stream", [LOCKS_OWNER_JVM] = "jvm",
	};
	char a[32];

	if (!json)
		fprintf(f, "wait graph (threads blocked now -> owner):\n");
	for (size_t i = 0; i < r->nedges; i++) {
		const struct locks_edge *e = &r->edges[i];

		if (json) {
			fprintf(f, "{\"event\":\"wait_edge\",\"tid\":%llu,\"thread\":",
				(unsigned long long)e->tid);
			json_str(f, e->thread);
			fprintf(f, ",\"lock_kind\":\"%s\",\"monitor\":\"0x%llx\",\"class\":",
				e->kind == LOCKS_PARKED ? "parked" : "monitor",
				(unsigned long long)e->monitor);
			json_str(f, e->cls ? e->cls : "");
			fprintf(f, ",\"owner_tid\":%llu,\"owner\":", (unsigned long long)e->owner);
			json_str(f, e->owner_name);
			/* where the owner is known from: its (contended) entry, or the JVM */
			fprintf(f, ",\"owner_from\":\"%s\"", from[e->owner_from]);
			if (e->since_before)
				fprintf(f, ",\"blocked_ns\":null}\n");
			else
				fprintf(f, ",\"blocked_ns\":%llu}\n", (unsigned long long)e->blocked_ns);
		} else {
			fprintf(f, "  \"%s\" (tid %llu) -> %s 0x%llx (%s) owned by ", e->thread,
				(unsigned long long)e->tid,
				e->kind == LOCKS_PARKED ? "parked on" : "monitor",
				(unsigned long long)e->monitor, e->cls ? e->cls : "?");
			if (e->owner)
				fprintf(f, "\"%s\" (tid %llu%s)", e->owner_name,
					(unsigned long long)e->owner,
					e->owner_from == LOCKS_OWNER_JVM ?
						", entered uncontended: read from the JVM" : "");
			else if (e->kind == LOCKS_PARKED)
				fprintf(f, "nobody (waiting, not contending)");
			else
				fprintf(f, "(owner unknown)");
			if (e->since_before)
				fprintf(f, ", blocked since before tracing began\n");
			else
				fprintf(f, ", blocked %s\n", fmt_ns(e->blocked_ns, a, sizeof(a)));
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
				e->kind == LOCKS_PARKED ? "parked" : "monitor",
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
