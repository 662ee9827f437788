// SPDX-License-Identifier: GPL-2.0
/* blocked.c - threads blocked now and their deadlocks; see blocked.h. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "sink/blocked.h"
#include "lib/util.h"

static const struct jthread *by_tid(const struct jthread *th, size_t n, uint32_t tid)
{
	for (size_t i = 0; tid && i < n; i++)
		if (th[i].tid == tid)
			return &th[i];
	return NULL;
}

/* "contended" when someone holds the lock, "waiting" when nobody can (a
 * condition, a queue), "unknown owner" for a monitor whose owner we could not tell */
static const char *kind(const struct jthread *t)
{
	if (t->owner_tid)
		return "contended";
	return t->wait == JTHREAD_MONITOR ? "unknown owner" : "waiting";
}

static void json_thread(FILE *f, const struct jthread *th, size_t n, const struct jthread *t)
{
	const struct jthread *o = by_tid(th, n, t->owner_tid);

	fputs("\"thread\":", f);
	json_str(f, t->name);
	fprintf(f, ",\"tid\":%" PRIu32 ",\"wait\":\"%s\",\"kind\":\"%s\",\"lock\":\"0x%" PRIx64
		   "\",\"lock_class\":", t->tid, jthreads_wait_name(t->wait), kind(t), t->lock);
	json_str(f, t->lock_class);
	fprintf(f, ",\"object\":\"0x%" PRIx64 "\",\"owner\":", t->lock_obj);
	if (o)
		json_str(f, o->name);
	else
		fputs("null", f);
	fprintf(f, ",\"owner_tid\":%" PRIu32, t->owner_tid);
}

static void text_thread(FILE *f, const struct jthread *th, size_t n, const struct jthread *t)
{
	const struct jthread *o = by_tid(th, n, t->owner_tid);

	fprintf(f, "  \"%s\" (tid %" PRIu32 ") %s %s @0x%" PRIx64, t->name, t->tid,
		t->wait == JTHREAD_MONITOR ? "blocked entering" : "parked on", t->lock_class,
		t->lock);
	if (o)
		fprintf(f, ", held by \"%s\" (tid %" PRIu32 ")\n", o->name, o->tid);
	else
		fprintf(f, " (%s)\n", t->wait == JTHREAD_MONITOR ? "owner unknown"
								 : "no owner: waiting, not contending");
}

int blocked_print(FILE *f, int pid, const struct jthread *th, size_t n, const uint32_t *cycle,
		  int ncycles, bool json)
{
	size_t nblocked = 0;

	for (size_t i = 0; i < n; i++)
		if (th[i].wait != JTHREAD_RUNNING)
			nblocked++;
	if (!json)
		fprintf(f, "pid %d: %zu Java threads, %zu waiting on a lock (read from the JVM's "
			   "memory)\n", pid, n, nblocked);
	for (size_t i = 0; i < n; i++) {
		if (th[i].wait == JTHREAD_RUNNING)
			continue;
		if (json) {
			fputs("{\"event\":\"blocked\",", f);
			json_thread(f, th, n, &th[i]);
			fputs("}\n", f);
		} else {
			text_thread(f, th, n, &th[i]);
		}
	}
	for (int c = 1; c <= ncycles; c++) {
		size_t k = 0;

		if (json)
			fprintf(f, "{\"event\":\"deadlock\",\"id\":%d,\"threads\":[", c);
		else
			fprintf(f, "deadlock %d:\n", c);
		for (size_t i = 0; i < n; i++) {
			if (cycle[i] != (uint32_t)c)
				continue;
			if (json) {
				fputs(k++ ? ",{" : "{", f);
				json_thread(f, th, n, &th[i]);
				fputc('}', f);
			} else {
				text_thread(f, th, n, &th[i]);
			}
		}
		fputs(json ? "]}\n" : "", f);
	}
	if (json)
		fprintf(f, "{\"event\":\"summary\",\"threads\":%zu,\"waiting\":%zu,\"deadlocks\":%d}\n",
			n, nblocked, ncycles);
	else if (!ncycles)
		fputs("no deadlock\n", f);
	return ferror(f) ? -EIO : 0;
}
