// SPDX-License-Identifier: GPL-2.0
/* serve_watch.c - the JVM watcher of `memtrace serve` (see serve_watch.h). */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentctl/agentlive.h"
#include "agentctl/agentsock.h"
#include "serve/serve_metrics.h"
#include "serve/serve_query.h"
#include "serve/serve_watch.h"
#include "jvm/attach.h"
#include "jvm/elfsym.h"
#include "jvm/proc.h"
#include "lib/util.h"
#include "probe/parktrace.h"
#include "jvm/vmstructs.h"
#include "probe/alloctrace.h"
#include "probe/gctrace.h"

#define WORK_REFRESH_NS 1000000000ull /* allocation and age series: every second */

/* work_set - move @w to @st (with @error for SERVE_WORK_FAILED). Takes serve.lock. */
static void work_set(struct serve *sv, struct serve_work *w, enum serve_work_state st,
		     const char *error)
{
	pthread_mutex_lock(&sv->lock);
	w->state = st;
	if (st == SERVE_WORK_FAILED) {
		w->want = false;
		snprintf(w->error, sizeof(w->error), "%s", error);
	} else if (st == SERVE_WORK_ON) {
		w->error[0] = '\0';
		w->since_ns = real_ns();
	}
	pthread_mutex_unlock(&sv->lock);
}

/* alloc_stop - stop allocation sampling in @j and drop its series. */
static void alloc_stop(struct serve_jvm *j)
{
	alloctrace_free(j->at);
	j->at = NULL;
	serve_metrics_alloc_drop(j);
}

/* age_stop - stop agent sampling in @j (the agent goes dormant), drop its series. */
static void age_stop(struct serve_jvm *j)
{
	agentlive_stop(j->al);
	j->al = NULL;
	serve_metrics_age_drop(j);
}

/* apply_work - start or stop @j's switchable work as the API asked; poll it. */
static void apply_work(struct serve_jvm *j, bool refresh)
{
	struct serve *sv = j->sv;
	bool want_alloc, want_age, start_age;
	uint32_t interval;
	char msg[160];

	pthread_mutex_lock(&sv->lock);
	want_alloc = j->alloc.want;
	want_age = j->age.want;
	interval = j->age_interval;
	/* the agent serves one client: agent sampling starts after a running query;
	 * STARTING is set here, under the lock, so no query starts meanwhile */
	start_age = want_age && !j->al && !serve_query_running(&sv->queries, j->p.pid);
	if (start_age)
		j->age.state = SERVE_WORK_STARTING;
	pthread_mutex_unlock(&sv->lock);

	if (want_alloc && !j->at) {
		struct alloctrace_opts ao = { .budget = ALLOCTRACE_BUDGET };

		work_set(sv, &j->alloc, SERVE_WORK_STARTING, NULL);
		j->at = alloctrace_new(&j->p, &ao);
		if (j->at) {
			work_set(sv, &j->alloc, SERVE_WORK_ON, NULL);
			p_info("pid %d: allocation sampling on", j->p.pid);
		} else {
			snprintf(msg, sizeof(msg), "allocation sampling failed: %s (serve's log says "
				 "more; `memtrace doctor -p %d`)", strerror(errno ? errno : EINVAL),
				 j->p.pid);
			work_set(sv, &j->alloc, SERVE_WORK_FAILED, msg);
		}
	} else if (!want_alloc && j->at) {
		work_set(sv, &j->alloc, SERVE_WORK_STOPPING, NULL);
		alloc_stop(j);
		work_set(sv, &j->alloc, SERVE_WORK_OFF, NULL);
		p_info("pid %d: allocation sampling off", j->p.pid);
	}
	if (j->at) {
		alloctrace_poll(j->at, 0);
		if (refresh)
			serve_metrics_alloc_update(j);
	}

	if (start_age) {
		j->al = agentlive_start(&j->p, interval);
		if (j->al) {
			pthread_mutex_lock(&sv->lock);
			j->age_on_interval = agentlive_samples(j->al)->interval;
			pthread_mutex_unlock(&sv->lock);
			work_set(sv, &j->age, SERVE_WORK_ON, NULL);
		} else {
			snprintf(msg, sizeof(msg), "agent sampling failed: %s (serve's log says more)",
				 strerror(errno ? errno : EINVAL));
			work_set(sv, &j->age, SERVE_WORK_FAILED, msg);
		}
	} else if (!want_age && j->al) {
		work_set(sv, &j->age, SERVE_WORK_STOPPING, NULL);
		age_stop(j);
		work_set(sv, &j->age, SERVE_WORK_OFF, NULL);
		p_info("pid %d: agent sampling off; the agent is dormant", j->p.pid);
	}
	if (j->al) {
		if (agentlive_poll(j->al)) {
			work_set(sv, &j->age, SERVE_WORK_STOPPING, NULL);
			age_stop(j);
			work_set(sv, &j->age, SERVE_WORK_FAILED, "the agent session ended (serve's log "
				 "says why)");
		} else if (refresh) {
			serve_metrics_age_update(j);
		}
	}
}

static bool is_failed(const struct serve *sv, int pid)
{
	for (int i = 0; i < sv->nfailed; i++)
		if (sv->failed[i] == pid)
			return true;
	return false;
}

static void mark_failed(struct serve *sv, int pid)
{
	int *f = realloc(sv->failed, (size_t)(sv->nfailed + 1) * sizeof(*f));

	if (!f)
		return;
	sv->failed = f;
	sv->failed[sv->nfailed++] = pid;
}

/* locks_start - park counters for @j (--locks); a JVM where they cannot run
 * is still watched, with a warning saying what is missing. */
static void locks_start(struct serve_jvm *j)
{
	int err = vmstructs_open(&j->p, &j->vs);

	if (!err) {
		j->pk = parktrace_new(&j->p, j->vs, false);
		err = j->pk ? 0 : -errno;
	}
	if (err) {
		p_warn("pid %d: no java.util.concurrent park counters: %s", j->p.pid,
		       vmstructs_strerror(err));
		vmstructs_free(j->vs);
		j->vs = NULL;
	}
}

/* watch - start watching host pid @pid. Returns 0 or -errno (printed). */
static int watch(struct serve *sv, int pid)
{
	struct serve_jvm *j = calloc(1, sizeof(*j));
	int err;

	if (!j)
		return -ENOMEM;
	err = proc_open(pid, &j->p);
	if (err) {
		if (err != -ESRCH) /* gone already: nothing to say */
			proc_explain(pid, err);
		free(j);
		return err;
	}
	j->sv = sv;
	snprintf(j->pid_s, sizeof(j->pid_s), "%d", pid);
	j->t = gctrace_new(&j->p, serve_metrics_gc_record, j);
	if (!j->t) {
		err = -errno;
		free(j);
		return err ? err : -EINVAL;
	}
	j->since_ns = real_ns();
	j->tmpfd = attach_open_dir(&j->p, "/tmp");
	serve_metrics_memory_start(j);
	if (sv->locks_all)
		locks_start(j);
	j->alloc.want = sv->alloc_all;
	j->age.want = sv->age_all;
	j->age_interval = sv->age_interval;
	serve_metrics_info(j);
	serve_metrics_counters(j);
	pthread_mutex_lock(&sv->lock);
	if (sv->njvms == sv->cap) {
		int cap = sv->cap ? sv->cap * 2 : 8;
		struct serve_jvm **a = realloc(sv->jvms, (size_t)cap * sizeof(*a));

		if (!a) {
			pthread_mutex_unlock(&sv->lock);
			gctrace_free(j->t);
			serve_metrics_memory_stop(j);
			serve_metrics_drop(j);
			if (j->tmpfd >= 0)
				close(j->tmpfd);
			free(j);
			return -ENOMEM;
		}
		sv->jvms = a;
		sv->cap = cap;
	}
	sv->jvms[sv->njvms++] = j;
	pthread_mutex_unlock(&sv->lock);
	p_info("watching pid %d (%s, JDK %s)", pid, j->p.main_class[0] ? j->p.main_class : "?",
	       j->p.jdk_version[0] ? j->p.jdk_version : "?");
	return 0;
}

/*
 * Detaching a JVM's USDT probes costs an RCU grace period per probe site
 * (the close of each uprobe link): on a loaded machine bench/soak.sh saw the
 * main thread spend 10-17 s in usdt_detach_all for JVMs that had exited,
 * rescans and series waiting meanwhile. A JVM that exited fires no probe
 * any more, so its tracer is freed by a thread of its own; serve_watch_stop()
 * waits for those threads.
 */
/* remove_leftovers - the sockets a JVM killed with -9 leaves in its /tmp.
 * On the reaper's thread (it may wait for the process to be torn down). */
static void remove_leftovers(int tmpfd, int pid, int nspid)
{
	int err = agentsock_remove_leftovers(tmpfd, nspid);

	if (err < 0)
		p_warn("pid %d exited: cannot remove its stale sockets from its /tmp: %s", pid,
		       strerror(-err));
}

static pthread_mutex_t reap_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t reap_done = PTHREAD_COND_INITIALIZER;
static int reaping;

/* What a JVM that exited leaves to free. */
struct reap_job {
	struct gctrace *t;
	int tmpfd, pid, nspid;
};

static void *reap_run(void *arg)
{
	struct reap_job *r = arg;

	gctrace_free(r->t);
	if (r->tmpfd >= 0) {
		remove_leftovers(r->tmpfd, r->pid, r->nspid);
		close(r->tmpfd);
	}
	free(r);
	pthread_mutex_lock(&reap_lock);
	reaping--;
	pthread_cond_broadcast(&reap_done);
	pthread_mutex_unlock(&reap_lock);
	return NULL;
}

/* reap - free @j's tracer and remove its leftovers on a detached thread
 * (here, if no thread can start); takes j->t and j->tmpfd. */
static void reap(struct serve_jvm *j)
{
	struct reap_job *r = malloc(sizeof(*r));
	pthread_attr_t a;
	pthread_t th;
	int err;

	if (!r) {
		gctrace_free(j->t);
		if (j->tmpfd >= 0)
			close(j->tmpfd);
		return;
	}
	*r = (struct reap_job){ .t = j->t, .tmpfd = j->tmpfd, .pid = j->p.pid,
				.nspid = j->p.nspid };
	pthread_mutex_lock(&reap_lock);
	reaping++;
	pthread_mutex_unlock(&reap_lock);
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&th, &a, reap_run, r);
	pthread_attr_destroy(&a);
	if (err)
		reap_run(r);
}

/* unwatch - stop watching jvms[i] (@exited: because it exited) and drop its series. */
static void unwatch(struct serve *sv, int i, bool exited)
{
	struct serve_jvm *j = sv->jvms[i];

	pthread_mutex_lock(&sv->lock);
	sv->jvms[i] = sv->jvms[--sv->njvms];
	pthread_mutex_unlock(&sv->lock);
	if (j->at)
		alloc_stop(j);
	if (j->al)
		age_stop(j);
	gctrace_finish(j->t);
	if (exited) {
		reap(j); /* the tracer and j->tmpfd */
		j->tmpfd = -1;
	} else {
		gctrace_free(j->t);
	}
	parktrace_free(j->pk);
	vmstructs_free(j->vs);
	serve_metrics_memory_stop(j);
	serve_metrics_drop(j);
	if (exited)
		p_info("pid %d exited: no longer watched", j->p.pid);
	if (j->tmpfd >= 0)
		close(j->tmpfd);
	free(j);
}

void serve_watch_rescan(struct serve *sv)
{
	int *pids = NULL, n, k = 0, gone = 0;

	for (int i = sv->njvms - 1; i >= 0; i--)
		if (!proc_exists(sv->jvms[i]->p.pid)) {
			unwatch(sv, i, true);
			gone++;
		}
	/* A watched JVM holds ~2 MB of the heap (its libjvm's symbols, read
	 * for its memory pools); freed, they stayed in serve's RSS: 20 JVMs
	 * gone, 60 MB kept where 13 were in use (bench/serve_scale.sh). */
	if (gone)
		malloc_trim(0);
	for (int i = 0; i < sv->nfailed; i++) /* forget failures of exited pids */
		if (proc_exists(sv->failed[i]))
			sv->failed[k++] = sv->failed[i];
	sv->nfailed = k;

	if (sv->only_pid) {
		pids = malloc(sizeof(*pids));
		n = pids && proc_exists(sv->only_pid) ? 1 : 0;
		if (n)
			pids[0] = sv->only_pid;
	} else {
		n = proc_list_jvms(&pids);
		if (n < 0) {
			p_warn("cannot list the JVMs: %s", strerror(-n));
			return;
		}
	}
	for (int i = 0; i < n; i++) {
		bool known = is_failed(sv, pids[i]);

		for (int w = 0; w < sv->njvms && !known; w++)
			known = sv->jvms[w]->p.pid == pids[i];
		if (!known && watch(sv, pids[i]))
			mark_failed(sv, pids[i]);
	}
	free(pids);
	serve_metrics_watched(sv);
}

void serve_watch_poll(struct serve *sv, uint64_t now)
{
	elfsym_expire(); /* no file of a container's root kept open past its use */
	bool refresh = now >= sv->next_work_ns;

	if (refresh)
		sv->next_work_ns = now + WORK_REFRESH_NS;
	for (int i = 0; i < sv->njvms; i++) {
		int err = gctrace_poll(sv->jvms[i]->t, 0);

		if (err < 0 && err != -EINTR)
			p_warn("pid %d: reading the ring buffer failed: %s", sv->jvms[i]->p.pid,
			       strerror(-err));
		serve_metrics_counters(sv->jvms[i]);
		if (refresh)
			serve_metrics_memory_update(sv->jvms[i]);
		apply_work(sv->jvms[i], refresh);
		if (sv->jvms[i]->pk) {
			parktrace_refresh(sv->jvms[i]->pk); /* threads come and go */
			if (refresh)
				serve_metrics_parks_update(sv->jvms[i]);
		}
	}
}

void serve_watch_stop(struct serve *sv)
{
	while (sv->njvms)
		unwatch(sv, sv->njvms - 1, false);
	pthread_mutex_lock(&reap_lock); /* the tracers of exited JVMs, still being freed */
	while (reaping)
		pthread_cond_wait(&reap_done, &reap_lock);
	pthread_mutex_unlock(&reap_lock);
	free(sv->jvms);
	free(sv->failed);
	sv->jvms = NULL;
	sv->failed = NULL;
	sv->cap = sv->nfailed = 0;
}
