// SPDX-License-Identifier: GPL-2.0
/* serve_query.c - the query jobs of serve's API (see serve_query.h). */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "serve/serve_query.h"
#include "heap/querylive.h"
#include "heap/snaptake.h"
#include "lib/util.h"

static const char *const state_name[] = { "running", "done", "failed" };

struct serve_query *serve_query_new(struct serve_queries *qs, int pid, const char *src,
				    size_t len)
{
	struct serve_query *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->src = malloc(len + 1);
	if (!q->src) {
		free(q);
		errno = ENOMEM;
		return NULL;
	}
	memcpy(q->src, src, len);
	q->src[len] = '\0';
	q->len = len;
	q->qs = qs;
	q->pid = pid;
	return q;
}

void serve_query_free(struct serve_query *q)
{
	if (!q)
		return;
	dsl_program_free(q->prog);
	free(q->src);
	free(q->out.result);
	free(q->diagnostics);
	free(q);
}

struct serve_query *serve_query_running(const struct serve_queries *qs, int pid)
{
	for (struct serve_query *q = qs->list; q; q = q->next)
		if (q->pid == pid && q->state == SERVE_QUERY_RUNNING)
			return q;
	return NULL;
}

struct serve_query *serve_query_find(const struct serve_queries *qs, unsigned id)
{
	for (struct serve_query *q = qs->list; q; q = q->next)
		if (q->id == id)
			return q;
	return NULL;
}

static void *query_thread(void *arg)
{
	struct serve_query *q = arg;

	q->run(q);
	return NULL;
}

int serve_query_start(struct serve_queries *qs, struct serve_query *q, serve_query_run_fn run)
{
	sigset_t all, old;
	int err;

	q->id = ++qs->next_id;
	q->started_ns = real_ns();
	q->run = run;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old); /* signals stay with the main thread */
	err = pthread_create(&q->th, NULL, query_thread, q);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	q->next = qs->list;
	qs->list = q;
	return 0;
}

void serve_query_reap(struct serve_queries *qs, bool all)
{
	struct serve_query **pp, *q, *gone = NULL, *join[SERVE_QUERY_KEEP + 1];
	int kept = 0, njoin = 0;

	pthread_mutex_lock(qs->lock);
	for (pp = &qs->list; (q = *pp);) {
		bool finished = q->state != SERVE_QUERY_RUNNING;

		if (all || (finished && ++kept > SERVE_QUERY_KEEP)) {
			*pp = q->next;
			q->next = gone;
			gone = q;
			continue;
		}
		if (finished && !q->joined && njoin < (int)MT_ARRAY_SIZE(join)) {
			q->joined = true; /* joined below: only this thread removes jobs */
			join[njoin++] = q;
		}
		pp = &q->next;
	}
	pthread_mutex_unlock(qs->lock);
	/* outside the lock: a finished worker may still be freeing its snapshot */
	for (int i = 0; i < njoin; i++)
		pthread_join(join[i]->th, NULL);
	while ((q = gone)) {
		gone = q->next;
		if (!q->joined)
			pthread_join(q->th, NULL);
		serve_query_free(q);
	}
}

void serve_query_done(struct serve_query *q, struct serve_query_outcome *o)
{
	pthread_mutex_lock(q->qs->lock);
	q->out = *o;
	o->result = NULL;
	q->state = SERVE_QUERY_DONE;
	q->ended_ns = real_ns();
	pthread_mutex_unlock(q->qs->lock);
}

void serve_query_fail(struct serve_query *q, const char *error, const struct dsl_diags *diags)
{
	char *d = diags && diags->n ? dsl_diags_render_str(diags) : NULL;

	pthread_mutex_lock(q->qs->lock);
	snprintf(q->error, sizeof(q->error), "%s", error);
	q->diagnostics = d;
	q->state = SERVE_QUERY_FAILED;
	q->ended_ns = real_ns();
	pthread_mutex_unlock(q->qs->lock);
}

void serve_query_json(FILE *f, const struct serve_query *q)
{
	fprintf(f, "{\"id\":%u,\"pid\":%d,\"state\":\"%s\",\"started_ns\":%llu", q->id, q->pid,
		state_name[q->state], (unsigned long long)q->started_ns);
	if (q->has_max)
		fprintf(f, ",\"max_pause_ms\":%u", q->max_pause_ms);
	if (q->state != SERVE_QUERY_RUNNING)
		fprintf(f, ",\"ended_ns\":%llu", (unsigned long long)q->ended_ns);
	if (q->state == SERVE_QUERY_DONE) {
		fprintf(f, ",\"pause_ms\":%.3f,\"pause_from\":\"%s\",\"partial\":%s,\"objects\":%u,"
			"\"eval_ms\":%.3f", q->out.pause_ms,
			q->out.pause_from,
			q->out.partial ? "true" : "false", q->out.objects, q->out.eval_ms);
		if (q->out.frozen)
			fprintf(f, ",\"walk_mode\":\"frozen\",\"copy_walk_ms\":%.3f",
				q->out.copy_walk_ms);
		else
			fputs(",\"walk_mode\":\"paused\"", f);
		fprintf(f, ",\"result\":%s", q->out.result);
	}
	if (q->state == SERVE_QUERY_FAILED) {
		fputs(",\"error\":", f);
		json_str(f, q->error);
		if (q->diagnostics) {
			fputs(",\"diagnostics\":", f);
			json_str(f, q->diagnostics);
		}
	}
	fputs("}\n", f);
}

/*
 * The program compiled against the JVM's class table in session @ss, before
 * any walk (cmd_query.c's query_fit): 0, or 1 after failing @q (what does not
 * fit, or why the table could not be read, @why holding the captured error).
 */
static int fit_classes(struct serve_query *q, struct mt_snapsession *ss,
		       struct dsl_diags *diags, const char *why)
{
	struct querylive_out qo;
	struct mt_snapshot cls;
	char msg[600];
	int err, rc = 0;

	err = snaptake_classes(ss, &cls);
	if (err == -ENOTSUP) /* an older agent: the heap checks it after the walk */
		return 0;
	if (err) {
		snprintf(msg, sizeof(msg), "reading the class table failed: %s",
			 why[0] ? why : "see serve's log");
		serve_query_fail(q, msg, NULL);
		return 1;
	}
	if (querylive_fit(&q->prog, q->src, q->len, "<query>", &cls, diags, &qo) == QUERY_FIT) {
		serve_query_fail(q, "the program does not fit this JVM's classes (nothing was walked)",
				 diags);
		rc = 1;
	}
	snapshot_free(&cls);
	return rc;
}

void serve_query_live(struct serve_query *q)
{
	const struct dsl_needs *n;
	struct dsl_diags *diags = dsl_diags_new();
	struct querylive_out qo = { 0 };
	struct mt_snapsession ss = { .so.fd = -1 };
	struct serve_query_outcome o;
	struct mt_snapshot snap;
	char why[512], msg[600];
	uint32_t flags;
	int err;

	snapshot_init(&snap);
	if (!diags) {
		serve_query_fail(q, "out of memory", NULL);
		return;
	}
	p_err_capture(why, sizeof(why));
	p_info("pid %d: query %u: taking a heap snapshot", q->pid, q->id);
	err = snaptake_open(&q->p, &ss);
	if (!err && fit_classes(q, &ss, diags, why))
		goto out;
	n = dsl_program_needs(q->prog); /* compiled against the classes, if they came */
	flags = querylive_heap_flags(n) | (q->has_max ? MT_AP_HEAP_MAXPAUSE : 0);
	ss.use = HEAPMEM_VIEW;
	if (!err)
		err = snaptake_take(&ss, flags, q->max_pause_ms, n->fields, n->nfields, &snap);
	if (err) {
		snprintf(msg, sizeof(msg), "the heap snapshot failed: %s",
			 why[0] ? why : "see serve's log");
		serve_query_fail(q, msg, NULL);
		goto out;
	}
	snapshot_print_walk(&snap);
	switch (querylive_eval(&q->prog, q->src, q->len, "<query>", &snap, true, n, diags, &qo)) {
	case QUERY_OK:
		break;
	case QUERY_HEAP:
		snprintf(msg, sizeof(msg), "cannot build the heap: %s", qo.why);
		serve_query_fail(q, msg, NULL);
		goto out;
	case QUERY_FIT:
		serve_query_fail(q, "the program does not fit this heap", diags);
		goto out;
	case QUERY_RUN:
		serve_query_fail(q, "the program failed on this heap", diags);
		goto out;
	case QUERY_NOMEM:
		serve_query_fail(q, "out of memory", NULL);
		goto out;
	}
	while (qo.len && qo.json[qo.len - 1] == '\n')
		qo.json[--qo.len] = '\0';
	o = (struct serve_query_outcome){
		.pause_ms = (double)snap.info.pause_ns / 1e6,
		.eval_ms = (double)qo.eval_ns / 1e6,
		.pause_from = snapshot_pause_name(snap.pause_from),
		.frozen = snap.frozen,
		.copy_walk_ms = (double)snap.freeze.walk_ns / 1e6,
		.partial = snap.info.partial,
		.objects = qo.objects,
		.result = qo.json,
	};
	qo.json = NULL;
	serve_query_done(q, &o);
	p_info("pid %d: query %u done: pause %.3f ms%s, %u objects", q->pid, q->id, o.pause_ms,
	       o.partial ? " (partial)" : "", o.objects);
out:
	snaptake_close(&ss);
	p_err_capture(NULL, 0);
	free(qo.json);
	snapshot_free(&snap);
	dsl_diags_free(diags);
}
