/*
 * serve_query.h - the queries of serve's API (POST /api/v1/jvms/PID/query):
 * jobs that each run in a worker thread of their own - the agent's heap walk
 * and the evaluation can take seconds, and neither the HTTP thread (which
 * answers /metrics scrapes) nor the main thread (which drains the ring
 * buffers) may wait for one - and that the client polls (GET
 * /api/v1/queries/ID). Finished jobs are kept (the last SERVE_QUERY_KEEP)
 * and their threads joined by the main thread (serve_query_reap).
 */
#ifndef MEMTRACE_SERVE_QUERY_H
#define MEMTRACE_SERVE_QUERY_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "dsl/dsl.h"
#include "jvm/proc.h"

#define SERVE_QUERY_KEEP 16 /* finished queries kept for GET /api/v1/queries/ID */

enum serve_query_state { SERVE_QUERY_RUNNING, SERVE_QUERY_DONE, SERVE_QUERY_FAILED };

/* What a finished query found (SERVE_QUERY_DONE). */
struct serve_query_outcome {
	double pause_ms, eval_ms;
	const char *pause_from;  /* who timed pause_ms: snapshot_pause_name() (static) */
	bool frozen;             /* walked by a frozen copy of the JVM (pause_ms: its fork) */
	double copy_walk_ms;     /* frozen: the copy's walk, off the pause */
	bool partial;
	uint32_t objects;
	char *result;            /* the program's JSON (no newline), malloc'd */
};

struct serve_query;

/* The body of a query's thread: runs @q and ends with serve_query_done() or
 * serve_query_fail(). */
typedef void (*serve_query_run_fn)(struct serve_query *q);

/* The jobs of one serve, newest first. */
struct serve_queries {
	pthread_mutex_t *lock;      /* guards the list, the ids and the jobs' outcomes */
	struct serve_query *list;
	unsigned next_id;
};

/* A query. Everything but th, p, src, prog and run is guarded by the list's
 * lock once the job is listed. */
struct serve_query {
	unsigned id;
	int pid;
	struct serve_queries *qs;
	enum serve_query_state state;
	pthread_t th;
	bool joined;
	serve_query_run_fn run;
	struct mt_proc p;           /* the worker's copy */
	char *src;                  /* the program */
	size_t len;
	struct dsl_program *prog;   /* compiled without a heap (the worker's) */
	bool has_max;
	uint32_t max_pause_ms;
	uint64_t started_ns, ended_ns;
	struct serve_query_outcome out;
	char error[640];            /* SERVE_QUERY_FAILED: why */
	char *diagnostics;          /* SERVE_QUERY_FAILED: rendered line:col diagnostics, or NULL */
	struct serve_query *next;
};

/*
 * serve_query_new - a job of JVM @pid for the program @src (@len bytes,
 * copied; not compiled yet) of @qs, not listed yet. Returns it (the caller
 * frees it with serve_query_free() unless serve_query_start() lists it) or
 * NULL with errno set.
 */
struct serve_query *serve_query_new(struct serve_queries *qs, int pid, const char *src,
				    size_t len);

/* serve_query_free - a job whose thread is joined (or never started); NULL is a no-op. */
void serve_query_free(struct serve_query *q);

/* serve_query_running - the running query of JVM @pid, or NULL (lock held). */
struct serve_query *serve_query_running(const struct serve_queries *qs, int pid);

/* serve_query_find - the listed query @id, or NULL (lock held). */
struct serve_query *serve_query_find(const struct serve_queries *qs, unsigned id);

/*
 * serve_query_start - give @q (with p and prog set) its id and start
 * @run(@q) in a thread of its own, with every signal blocked (signals stay
 * with the main thread); then @q is listed and the list owns it. Lock held.
 * Returns 0 or -errno (@q not listed, its id used up).
 */
int serve_query_start(struct serve_queries *qs, struct serve_query *q, serve_query_run_fn run);

/*
 * serve_query_reap - join the threads of finished queries and forget all but
 * the newest SERVE_QUERY_KEEP finished ones (main thread; @all: at exit,
 * waiting for running ones too). Takes the lock.
 */
void serve_query_reap(struct serve_queries *qs, bool all);

/* serve_query_done - @q is done with @o (its result taken over). Takes the lock. */
void serve_query_done(struct serve_query *q, struct serve_query_outcome *o);

/* serve_query_fail - @q failed with @error and @diags (rendered if any).
 * Takes the lock. */
void serve_query_fail(struct serve_query *q, const char *error, const struct dsl_diags *diags);

/* serve_query_json - @q as GET /api/v1/queries/ID shows it, newline ended (lock held). */
void serve_query_json(FILE *f, const struct serve_query *q);

/*
 * serve_query_live - a serve_query_run_fn: the live snapshot through the
 * agent and the evaluation, exactly as `memtrace query -p` does them
 * (snapshot.h, querylive.h). Its p_err()s go to serve's log and, the last
 * one, to the job.
 */
void serve_query_live(struct serve_query *q);

#endif
