// SPDX-License-Identifier: GPL-2.0
/* serve_pprof.c - GET /debug/pprof/allocs: allocation profiles on demand (see serve_pprof.h). */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/profile.h"
#include "serve/serve_api.h"
#include "serve/serve_pprof.h"
#include "jstack/symres.h"
#include "lib/util.h"
#include "probe/alloctrace.h"
#include "sink/allocprofile.h"
#include "sink/sinks.h"

struct serve_pprof_job {
	struct serve_pprof_job *next;
	struct serve *sv;
	struct serve_pending *pend;
	struct mt_proc p;         /* the worker's copy */
	double secs;
	pthread_t th;
	int abort;                /* set by the main thread (__atomic) */
	bool done;                /* guarded by serve.lock */
};

/* A JSON error answer from the worker. */
static void fail(struct serve_pprof_job *j, unsigned status, const char *msg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (f) {
		fputs("{\"error\":", f);
		json_str(f, msg);
		fputs("}\n", f);
		fclose(f);
	}
	serve_pending_finish(j->pend, status, "application/json", buf, buf ? len : 0);
}

/* The profile of @t's rows as gzip'd profile.proto bytes (sink_pprof_write
 * writes files: it goes through a private temporary directory). */
static char *profile_bytes(struct serve_pprof_job *j, struct alloctrace *t, uint64_t start_ns,
			   uint64_t dur_ns, size_t *len)
{
	char dir[] = "/tmp/memtrace-pprof.XXXXXX", path[sizeof(dir) + 16];
	struct alloc_row *rows;
	struct alloc_class *classes;
	struct symres *sr;
	struct profile *prof;
	char *body = NULL;
	size_t n, nc;

	rows = alloctrace_rows(t, &n);
	/* each class's bytes as the TLABs' contents say (as `alloc` does) */
	classes = alloctrace_classes(t, &nc, NULL);
	if (rows && classes && nc)
		allocrows_match_classes(&rows, &n, classes, nc);
	free(classes);
	sr = symres_new(&j->p);
	prof = allocprofile_build(t, sr, rows, n, false, NULL, NULL);
	if (prof && mkdtemp(dir)) {
		profile_set_window(prof, start_ns, dur_ns);
		snprintf(path, sizeof(path), "%s/allocs.pb.gz", dir);
		if (!sink_pprof_write(prof, path))
			body = read_file(path, len);
		unlink(path);
		rmdir(dir);
	}
	profile_free(prof);
	symres_free(sr);
	free(rows);
	return body;
}

static void *pprof_thread(void *arg)
{
	struct serve_pprof_job *j = arg;
	struct alloctrace_opts o = { .stacks = true, .budget = ALLOCTRACE_BUDGET };
	struct alloctrace *t;
	uint64_t m0, start, deadline;
	char msg[200], lost[32];
	bool gone = false;
	char *body;
	size_t len = 0;

	t = alloctrace_new(&j->p, &o); /* says why not on serve's stderr */
	if (!t) {
		snprintf(msg, sizeof(msg), "allocation sampling failed in pid %d: %s (serve's log "
			 "says more; `memtrace doctor -p %d`)", j->p.pid,
			 strerror(errno ? errno : EINVAL), j->p.pid);
		fail(j, 500, msg);
		goto out;
	}
	start = real_ns();
	m0 = mono_ns();
	deadline = m0 + (uint64_t)(j->secs * 1e9);
	while (!__atomic_load_n(&j->abort, __ATOMIC_RELAXED) && mono_ns() < deadline) {
		if (alloctrace_poll(t, 100) < 0)
			break;
		if (!proc_exists(j->p.pid)) {
			gone = true;
			break;
		}
	}
	if (__atomic_load_n(&j->abort, __ATOMIC_RELAXED)) {
		fail(j, 503, "memtrace serve is stopping");
		goto out;
	}
	body = profile_bytes(j, t, start, mono_ns() - m0, &len);
	if (!body) {
		snprintf(msg, sizeof(msg), "cannot build the profile of pid %d: %s", j->p.pid,
			 strerror(errno ? errno : EIO));
		fail(j, 500, msg);
		goto out;
	}
	snprintf(lost, sizeof(lost), "%llu",
		 (unsigned long long)(alloctrace_lost_events(t) + alloctrace_lost_keys(t)));
	serve_pending_header(j->pend, "X-Memtrace-Lost-Events", lost);
	if (gone)
		serve_pending_header(j->pend, "X-Memtrace-JVM-Exited", "true");
	serve_pending_header(j->pend, "Content-Disposition", "attachment; filename=\"allocs.pb.gz\"");
	serve_pending_finish(j->pend, 200, "application/octet-stream", body, len);
out:
	alloctrace_free(t);
	j->pend = NULL; /* answered: the HTTP thread owns it now */
	pthread_mutex_lock(&j->sv->lock);
	j->done = true;
	pthread_mutex_unlock(&j->sv->lock);
	return NULL;
}

/* jvm_copy - the mt_proc of watched JVM @pid into @p (serve.lock held); 0 or -ENOENT. */
static int jvm_copy(const struct serve *sv, int pid, struct mt_proc *p)
{
	for (int i = 0; i < sv->njvms; i++)
		if (sv->jvms[i]->p.pid == pid) {
			*p = sv->jvms[i]->p;
			return 0;
		}
	return -ENOENT;
}

static int error(FILE *f, int status, const char *msg)
{
	fputs("{\"error\":", f);
	json_str(f, msg);
	fputs("}\n", f);
	return status;
}

int serve_pprof_start(const struct serve_request *r, struct serve_pending *pend, FILE *f,
		      void *ctx)
{
	struct serve *sv = ((struct serve_api *)ctx)->sv;
	const char *ps = serve_request_arg(r, "pid"), *ss = serve_request_arg(r, "seconds");
	struct serve_pprof_job *j;
	double secs = SERVE_PPROF_DEFAULT_S;
	int pid = 0, err;
	char msg[160];

	if (strcmp(r->path, "/debug/pprof/allocs"))
		return error(f, 404, "unknown profile: /debug/pprof/allocs?pid=PID&seconds=N exists");
	if (ps && parse_pid(ps, &pid))
		return error(f, 400, "invalid pid: expected a positive number");
	if (!ps && !sv->only_pid)
		return error(f, 400, "pid=PID is needed (serve --all watches several JVMs; "
			     "GET /api/v1/jvms lists them)");
	if (!ps)
		pid = sv->only_pid;
	if (ss && (parse_seconds(ss, &secs) || secs < 1 || secs > SERVE_PPROF_MAX_S)) {
		snprintf(msg, sizeof(msg), "invalid seconds '%s': 1 to %d (units allowed: 30s, 2m)",
			 ss, SERVE_PPROF_MAX_S);
		return error(f, 400, msg);
	}
	j = calloc(1, sizeof(*j));
	if (!j)
		return error(f, 500, "out of memory");
	j->sv = sv;
	j->pend = pend;
	j->secs = secs;
	pthread_mutex_lock(&sv->lock);
	err = jvm_copy(sv, pid, &j->p);
	if (!err && sv->pprofs.running >= SERVE_PPROF_MAX)
		err = -EBUSY;
	if (!err && pthread_create(&j->th, NULL, pprof_thread, j))
		err = -EAGAIN;
	if (!err) {
		j->next = sv->pprofs.list;
		sv->pprofs.list = j;
		sv->pprofs.running++;
	}
	pthread_mutex_unlock(&sv->lock);
	if (!err)
		return 0;
	free(j);
	if (err == -ENOENT) {
		snprintf(msg, sizeof(msg), "pid %d is not a JVM this serve watches", pid);
		return error(f, 404, msg);
	}
	if (err == -EBUSY) {
		snprintf(msg, sizeof(msg), "%d profiles are being taken already: try again later",
			 SERVE_PPROF_MAX);
		return error(f, 429, msg);
	}
	return error(f, 500, "cannot start a thread for the profile");
}

void serve_pprof_reap(struct serve *sv, bool all)
{
	struct serve_pprof_job **pp, *j;

	if (all) {
		pthread_mutex_lock(&sv->lock);
		for (j = sv->pprofs.list; j; j = j->next)
			__atomic_store_n(&j->abort, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&sv->lock);
	}
	for (;;) {
		pthread_mutex_lock(&sv->lock);
		for (pp = &sv->pprofs.list; *pp && !(*pp)->done && !all; pp = &(*pp)->next)
			;
		j = *pp;
		if (j) {
			*pp = j->next;
			sv->pprofs.running--;
		}
		pthread_mutex_unlock(&sv->lock);
		if (!j)
			return;
		pthread_join(j->th, NULL);
		free(j);
	}
}
