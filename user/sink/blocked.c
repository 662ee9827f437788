// SPDX-License-Identifier: GPL-2.0
/* blocked.c - threads waiting on a lock now and their deadlocks; see blocked.h. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "sink/blocked.h"
#include "jvm/jucblocker.h"
#include "lib/util.h"

static const struct jthread *by_tid(const struct jthread *th, size_t n, uint32_t tid)
{
	for (size_t i = 0; tid && i < n; i++)
		if (th[i].tid == tid)
			return &th[i];
	return NULL;
}

const char *blocked_kind(const struct jthread *t)
{
	switch (t->wait) {
	case JTHREAD_MONITOR:
	case JTHREAD_RELOCK:
		return t->owner_tid ? "contended" : "unknown owner";
	case JTHREAD_OBJWAIT:
	case JTHREAD_CONDITION:
		return "notify";
	case JTHREAD_PARKED:
		/* a lock is contended without an owner too: readers hold it, or
		 * its holder has let go and hands it over */
		return t->owner_tid || t->readers || t->blocker == JUCB_LOCK ? "contended" : "waiting";
	default:
		return "";
	}
}

/* ,"frames":[root ... leaf],"lines":[...] or ,"stack_error":"..." */
static void json_stack(FILE *f, const struct waitstack *st)
{
	if (!st)
		return;
	if (st->err || !st->n) {
		fprintf(f, ",\"stack_error\":\"%s\"", st->err == -EAGAIN ? "moved on while read" :
						    st->err == -ENOENT || !st->err ? "no Java frame" :
						    strerror(-st->err));
		return;
	}
	fputs(",\"frames\":[", f);
	for (int i = 0; i < st->n; i++) {
		fputs(i ? "," : "", f);
		json_str(f, st->f[i].name ? st->f[i].name : "[unknown]");
	}
	fputs("],\"lines\":[", f);
	for (int i = 0; i < st->n; i++)
		fprintf(f, "%s%" PRId32, i ? "," : "", st->f[i].line);
	fputs("]", f);
}

static void json_thread(FILE *f, const struct jthread *th, size_t n, const struct jthread *t,
			const struct waitstack *st)
{
	const struct jthread *o = by_tid(th, n, t->owner_tid);

	fputs("\"thread\":", f);
	json_str(f, t->name);
	fprintf(f, ",\"tid\":%" PRIu32 ",\"wait\":\"%s\",\"kind\":\"%s\",\"lock\":\"0x%" PRIx64
		   "\",\"lock_class\":", t->tid, jthreads_wait_name(t->wait), blocked_kind(t), t->lock);
	json_str(f, t->lock_class);
	fprintf(f, ",\"object\":\"0x%" PRIx64 "\",\"owner\":", t->lock_obj);
	if (o)
		json_str(f, o->name);
	else
		fputs("null", f);
	fprintf(f, ",\"owner_tid\":%" PRIu32 ",\"state\":\"%s\",\"stable\":%s", t->owner_tid,
		jthreads_status_name(t->status), t->stable ? "true" : "false");
	if (t->wait == JTHREAD_PARKED && t->readers)
		fprintf(f, ",\"readers\":%" PRIu32, t->readers);
	if (t->wait == JTHREAD_CONDITION) {
		fprintf(f, ",\"condition_lock\":\"0x%" PRIx64 "\",\"condition_lock_class\":",
			t->cond_lock);
		json_str(f, t->cond_lock_class);
	}
	json_stack(f, st);
}

/* What @t does, in words, up to the owner part. */
static void text_what(FILE *f, const struct jthread *t)
{
	switch (t->wait) {
	case JTHREAD_MONITOR:
		fprintf(f, "blocked entering %s @0x%" PRIx64, t->lock_class, t->lock);
		break;
	case JTHREAD_RELOCK:
		fprintf(f, "blocked entering %s @0x%" PRIx64 " again after Object.wait", t->lock_class,
			t->lock);
		break;
	case JTHREAD_OBJWAIT:
		fprintf(f, "waiting in Object.wait on %s @0x%" PRIx64, t->lock_class, t->lock);
		break;
	case JTHREAD_CONDITION:
		fprintf(f, "waiting in Condition.await on %s @0x%" PRIx64, t->lock_class, t->lock);
		if (t->cond_lock)
			fprintf(f, " of %s @0x%" PRIx64, t->cond_lock_class, t->cond_lock);
		break;
	default:
		fprintf(f, "parked on %s @0x%" PRIx64, t->lock_class, t->lock);
		break;
	}
}

static void text_thread(FILE *f, const struct jthread *th, size_t n, const struct jthread *t)
{
	const struct jthread *o = by_tid(th, n, t->owner_tid);

	fprintf(f, "  \"%s\" (tid %" PRIu32 ") ", t->name, t->tid);
	text_what(f, t);
	if (o)
		fprintf(f, ", held by \"%s\" (tid %" PRIu32 ")\n", o->name, o->tid);
	else if (t->wait == JTHREAD_MONITOR || t->wait == JTHREAD_RELOCK)
		fputs(" (owner unknown)\n", f);
	else if (t->wait == JTHREAD_OBJWAIT)
		fprintf(f, " (%sowner unknown until a notify)\n", jthreads_timed(t->status) ? "timed; " : "");
	else if (t->wait == JTHREAD_CONDITION)
		fprintf(f, " (%sowner unknown until a signal)\n", jthreads_timed(t->status) ? "timed; " : "");
	else if (t->readers)
		fprintf(f, ", held by %" PRIu32 " read hold%s\n", t->readers, t->readers == 1 ? "" : "s");
	else if (t->blocker == JUCB_LOCK)
		fputs(" (no owner at this reading: being handed over)\n", f);
	else
		fputs(" (no owner: waiting, not contending)\n", f);
}

/* The innermost @frames frames of @st (all for 0), innermost first, as jstack's. */
static void text_stack(FILE *f, const struct waitstack *st, int frames)
{
	int shown = 0;

	if (!st)
		return;
	if (st->err || !st->n) {
		fprintf(f, "      (no stack: %s)\n", st->err == -EAGAIN ? "the thread moved on while it was read" :
					     st->err == -ENOENT || !st->err ? "no Java frame" :
					     strerror(-st->err));
		return;
	}
	for (int i = st->n - 1; i >= 0 && (!frames || shown < frames); i--, shown++) {
		const struct profile_frame *fr = &st->f[i];

		fprintf(f, "      at %s", fr->name ? fr->name : "[unknown]");
		if (fr->file && fr->line > 0)
			fprintf(f, " (%s:%" PRId32 ")", fr->file, fr->line);
		fputc('\n', f);
	}
	if (shown < st->n)
		fprintf(f, "      ... %d more frame%s\n", st->n - shown, st->n - shown == 1 ? "" : "s");
}

int blocked_print(FILE *f, int pid, const struct jthread *th, const struct waitstacks *ws,
		  size_t n, const uint32_t *cycle, int ncycles, bool json, int frames)
{
	size_t waiting = 0, contending = 0, notify = 0;

	for (size_t i = 0; i < n; i++) {
		const char *k = blocked_kind(&th[i]);

		waiting += th[i].wait != JTHREAD_RUNNING;
		contending += !strcmp(k, "contended") || !strcmp(k, "unknown owner");
		notify += !strcmp(k, "notify");
	}
	if (!json)
		fprintf(f, "pid %d: %zu Java threads, %zu waiting on a lock (read from the JVM's "
			   "memory): %zu contending, %zu for a notify or signal, %zu not contending\n",
			pid, n, waiting, contending, notify, waiting - contending - notify);
	for (size_t i = 0; i < n; i++) {
		struct waitstack st = waitstacks_get(ws, i);

		if (th[i].wait == JTHREAD_RUNNING)
			continue;
		if (json) {
			fputs("{\"event\":\"blocked\",", f);
			json_thread(f, th, n, &th[i], ws ? &st : NULL);
			fputs("}\n", f);
		} else {
			text_thread(f, th, n, &th[i]);
			text_stack(f, ws ? &st : NULL, frames);
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
				json_thread(f, th, n, &th[i], NULL);
				fputc('}', f);
			} else {
				text_thread(f, th, n, &th[i]);
			}
		}
		fputs(json ? "]}\n" : "", f);
	}
	if (json)
		fprintf(f, "{\"event\":\"summary\",\"threads\":%zu,\"waiting\":%zu,\"contending\":%zu,"
			   "\"notify\":%zu,\"deadlocks\":%d}\n",
			n, waiting, contending, notify, ncycles);
	else if (!ncycles)
		fputs("no deadlock\n", f);
	return ferror(f) ? -EIO : 0;
}
