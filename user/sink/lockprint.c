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
	print_edges(f, r, json);
	for (size_t i = 0; i < r->ncycles; i++)
		print_cycle(f, r, &r->cycles[i], json);
}
