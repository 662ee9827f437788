// SPDX-License-Identifier: GPL-2.0
/* allocwindows.c - the allocation tracer's TLAB uprobes and duty cycle; see allocwindows.h. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memtrace/jstack.h"
#include "memtrace/alloc.h"
#include "alloc.skel.h"
#include "jvm/elfsym.h"
#include "jvm/perfdata.h"
#include "lib/util.h"
#include "probe/allocwindows.h"
#include "probe/detach.h"
#include "probe/tlabprobe.h"
#include "jvm/proc.h"
#include "probe/uprobecost.h"
#include "probe/uprobemulti.h"

void allocwindows_init(struct allocwindows *w, struct alloc_bpf *skel,
		       const struct mt_vmstructs *vs, const struct mt_proc *p, bool duty,
		       bool windows)
{
	memset(w, 0, sizeof(*w));
	w->skel = skel;
	w->fd[0] = w->fd[1] = -1;
	w->on = duty;
	threadctr_init(&w->tc);
	/* under windows totals come from every thread's own counter, and the
	 * keys carry their thread to be scaled to it (probe/threadctr.h); the
	 * maps hold more keys for that */
	w->tl_on = vs && !jthreadlist_layout(vs, &w->tl);
	/* the JVM's stops, taken out of the spans the windows' loss is
	 * measured on (threadctr_paused); without hsperfdata, spans as they are */
	if (w->tl_on) {
		char why[128];

		w->pd = perfdata_open(p, why, sizeof(why));
	}
	if (duty && windows && w->tl_on) {
		skel->rodata->targ_key_tid = 1;
		bpf_map__set_max_entries(skel->maps.allocs, 4 * MT_ALLOC_MAX_KEYS);
		bpf_map__set_max_entries(skel->maps.content, 4 * MT_ALLOC_MAX_KEYS);
	}
	/* windows attach and detach the TLAB uprobes many times a second:
	 * through uprobe_multi links where the kernel has them (see
	 * probe/uprobemulti.h for why the perf-event ones cannot) */
	if (duty && uprobemulti_supported()) {
		w->multi = true;
		bpf_program__set_expected_attach_type(skel->progs.handle_new_tlab,
			(enum bpf_attach_type)UPROBEMULTI_ATTACH_TYPE);
		bpf_program__set_expected_attach_type(skel->progs.handle_outside_tlab,
			(enum bpf_attach_type)UPROBEMULTI_ATTACH_TYPE);
	}
}

static void destroy_link(void *l);
static void close_link_fd(void *p);

int allocwindows_prepare(struct allocwindows *w, double budget, bool windows, int pid)
{
	pthread_condattr_t ca;
	double trap = UPROBECOST_DEFAULT_NS;

	pthread_mutex_init(&w->mu, NULL);
	w->sync = true;
	/* duty_main() waits for a CLOCK_MONOTONIC deadline: the default clock
	 * (CLOCK_REALTIME) made every wait return at once, and the thread spun
	 * in futex() - a whole core of system time, taken from the JVM on a
	 * 2-core machine */
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->cv, &ca);
	pthread_condattr_destroy(&ca);
	/* the trap's cost first, then the measuring window */
	if (uprobecost_measure(w->skel->progs.handle_calibrate, 20000, &trap))
		trap = UPROBECOST_DEFAULT_NS;
	/* NULL: detach in place */
	w->det = detach_new(w->multi ? close_link_fd : destroy_link);
	/* every thread's counter now: the session's start (windows) */
	if (w->tl_on && allocwindows_read_threads(w, NULL)) {
		w->tl_on = false;
		p_warn("cannot read the JVM's thread list: estimates under time "
		       "windows stand on the windows' rates alone");
	}
	dutycycle_init(&w->dc, budget, trap, mono_ns(), mono_ns() ^ (uint64_t)pid);
	w->dc.no_windows = !windows;
	if (getenv("MEMTRACE_WINDOW_LOG") &&
	    !(w->winlog = fopen(getenv("MEMTRACE_WINDOW_LOG"), "w")))
		p_warn("cannot write the window log %s: %s", getenv("MEMTRACE_WINDOW_LOG"),
		       strerror(errno));
	/* tests: fixed keep and duty ("KEEP:DUTY"), to check the scaled
	 * estimates against a workload's own count */
	if (getenv("MEMTRACE_TEST_DUTY") &&
	    sscanf(getenv("MEMTRACE_TEST_DUTY"), "%lf:%lf", &w->dc.force_keep,
		   &w->dc.force_duty) != 2)
		w->dc.force_keep = w->dc.force_duty = 0;
	return 0;
}

int allocwindows_attach(struct allocwindows *w, const struct mt_proc *p, struct mt_elf *e)
{
	struct bpf_program *progs[2] = { w->skel->progs.handle_new_tlab,
					 w->skel->progs.handle_outside_tlab };
	const char *missing = "";
	int err = 0;

	if (w->multi) { /* windows: offsets once, then a link per window */
		if (!w->off[0])
			err = tlabprobe_offsets(e, p, w->off, &missing);
		if (!err)
			err = tlabprobe_attach_multi(progs, p, w->off, w->fd);
	} else {
		err = tlabprobe_attach(progs, e, p, w->link, &missing);
	}

	if (err && !proc_exists(p->pid))
		p_err("JVM %d exited while memtrace attached its probes", p->pid);
	else if (err == -ENOENT && missing[0])
		p_err("libjvm.so of pid %d (%s) has no symbol AllocTracer::%s: it is "
		      "stripped (no .symtab), so allocations cannot be sampled by uprobes. "
		      "Install the JDK's debug symbols, or run `memtrace age` (JVMTI "
		      "sampling through the agent) instead", p->pid, p->libjvm, missing);
	if (!err)
		w->attached = true;
	return err;
}


/* The program's cost counters, summed over CPUs. */
struct mt_alloc_cost allocwindows_cost(struct allocwindows *w)
{
	int ncpu = libbpf_num_possible_cpus();
	struct mt_alloc_cost sum = { 0 }, *per;
	uint32_t zero = 0;

	if (ncpu <= 0 || !(per = calloc((size_t)ncpu, sizeof(*per))))
		return sum;
	if (!bpf_map_lookup_elem(bpf_map__fd(w->skel->maps.alloc_cost), &zero, per))
		for (int i = 0; i < ncpu; i++) {
			sum.ns += per[i].ns;
			sum.samples += per[i].samples;
			sum.raw_bytes += per[i].raw_bytes;
			sum.skipped += per[i].skipped;
			sum.skipped_ns += per[i].skipped_ns;
			sum.var_kib2 += per[i].var_kib2;
			sum.scaled_bytes += per[i].scaled_bytes;
		}
	free(per);
	return sum;
}

/* What the open window counted: cost since it opened, its busiest thread.
 * Each thread's counters are kept in w->seen for window_thread_keeps (one
 * pass over the map; a thread that finds no room there is left out: it
 * keeps its old keep, or is new). */
void allocwindows_measure(struct allocwindows *w, struct dutycycle_measure *m)
{
	struct mt_alloc_cost c = allocwindows_cost(w);
	int fd = bpf_map__fd(w->skel->maps.alloc_tids);
	uint32_t key, next, *prev = NULL;
	struct mt_alloc_tid v;
	uint64_t busiest = 0;
	double corr;

	m->raw_bytes = c.raw_bytes - w->base.raw_bytes;
	m->samples = c.samples - w->base.samples;
	m->bpf_ns = c.ns - w->base.ns;
	m->skipped = c.skipped - w->base.skipped;
	m->skipped_ns = c.skipped_ns - w->base.skipped_ns;
	m->max_thread_samples = 0;
	m->slow_share = 0;
	w->nseen = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		bool in_window;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		in_window = v.window == w->skel->bss->window;
		if (in_window && v.samples > m->max_thread_samples) {
			m->max_thread_samples = v.samples;
			busiest = v.thread;
		}
		if (w->nseen == w->capseen) {
			size_t cap = w->capseen ? 2 * w->capseen : 64;
			struct allocwindows_seen *n = realloc(w->seen, cap * sizeof(*n));

			if (!n)
				continue;
			w->seen = n;
			w->capseen = cap;
		}
		w->seen[w->nseen++] = (struct allocwindows_seen){ key, in_window, v.samples, v };
	}
	/* the busiest thread's slowdown in the windows before, as measured */
	corr = busiest ? threadctr_corr(&w->tc, busiest) : 0;
	if (corr > 1)
		m->slow_share = 1 - 1 / corr;
	/* and what the windows cost it, all told */
	m->loss_ok = busiest && threadctr_loss(&w->tc, busiest, &m->loss_share);
}

/* The window just closed (its number still current): each thread seen in
 * it gets its keep for the next one from its own rate there; a thread not
 * seen loses its entry and is a new thread when it comes back (its first
 * new_free samples of a window in full, then the global keep). A tid the LRU
 * counters forgot (over MT_ALLOC_MAX_TIDS threads) keeps a stale entry until
 * reused; a full alloc_tkeep leaves new threads as new: both keep within the
 * budget. Under w->mu. */
static void window_thread_keeps(struct allocwindows *w, uint64_t len)
{
	int kfd = bpf_map__fd(w->skel->maps.alloc_tkeep);
	unsigned int thinned = 0;
	struct mt_alloc_tkeep k;

	for (size_t i = 0; i < w->nseen; i++) {
		const struct allocwindows_seen *s = &w->seen[i];

		if (!s->in_window || !len) {
			bpf_map_delete_elem(kfd, &s->tid);
			continue;
		}
		k.keep = dutycycle_thread_keep(&w->dc, (double)s->samples * 1e9 / (double)len);
		/* the next window's scale, for how much slower it allocates in windows */
		k.scale = threadctr_scale(&w->tc, s->v.thread, (uint32_t)w->dc.scale,
					  MT_ALLOC_SCALE_ONE);
		thinned += k.keep < DUTYCYCLE_KEEP_ONE;
		bpf_map_update_elem(kfd, &s->tid, &k, BPF_ANY);
	}
	if (thinned > w->thinned)
		w->thinned = thinned;
}

/* A new window: its number and weight scale, its counters from now. */
static void window_open(struct allocwindows *w)
{
	w->skel->bss->window++;
	w->skel->data->keep = w->dc.keepk;
	w->skel->bss->new_free = dutycycle_new_free(&w->dc);
	w->skel->data->weight_scale = (uint32_t)w->dc.scale;
	w->base = allocwindows_cost(w);
}

static void destroy_link(void *l)
{
	bpf_link__destroy(l);
}

/* A uprobe_multi link's fd, handed over as (void *)(fd + 1). */
static void close_link_fd(void *p)
{
	close((int)((intptr_t)p - 1));
}

/* Detach the TLAB uprobes: each destroy removes its breakpoints at once,
 * then waits for a grace period (60-500 ms) on a thread of its own
 * (probe/detach.h), so that windows can be short and many. */
static void detach_tlab(struct allocwindows *w)
{
	for (int i = 0; i < 2; i++) {
		if (w->det)
			detach_later(w->det, w->link[i]);
		else
			bpf_link__destroy(w->link[i]);
		w->link[i] = NULL;
		if (w->fd[i] >= 0 && w->det)
			detach_later(w->det, (void *)(intptr_t)(w->fd[i] + 1));
		else if (w->fd[i] >= 0)
			close(w->fd[i]);
		w->fd[i] = -1;
	}
	w->attached = false;
}

/* Read every Java thread's allocation counter into w->tc (probe/threadctr.h),
 * after the program's last sample of each (allocwindows_measure() into @m, NULL:
 * not wanted; it refreshes w->seen, with or without a thread list): a
 * thread that ended since the last reading leaves the list now, and its
 * count at hotspot:thread__stop is in that sample - a stale w->seen lost it
 * (31 % of a thread once). Under w->mu. 0 or -errno. */
int allocwindows_read_threads(struct allocwindows *w, struct dutycycle_measure *m)
{
	struct dutycycle_measure own;
	uint64_t *jts, *ctr;
	size_t n;
	bool *ok;
	int err, tries = 0;

	allocwindows_measure(w, m ? m : &own);
	if (!w->tl_on)
		return -ENOENT;
	do
		err = jthreadlist_read(&w->tl, &jts, &ctr, &ok, &n);
	while (err == -EAGAIN && ++tries < 4);
	if (err)
		return err;
	for (size_t i = 0; i < w->nseen; i++)
		if (w->seen[i].v.thread)
			threadctr_sampled(&w->tc, w->seen[i].v.thread, w->seen[i].v.allocated);
	err = threadctr_list(&w->tc, jts, ctr, ok, n);
	free(jts);
	free(ctr);
	free(ok);
	return err;
}

/* The JVM's stops so far (threadctr_paused), read after the threads'
 * counters (a stop ending now counts at the next reading): only the open
 * and the tail, whose spans the loss measures, need them. Under w->mu. */
static void read_stops(struct allocwindows *w)
{
	struct mt_safepoints sp;

	if (w->pd && !perfdata_safepoints(w->pd, &sp))
		threadctr_paused(&w->tc, sp.time_ns);
}

/* MEMTRACE_WINDOW_LOG (window_log()): "loss <readings> <share>", the newest
 * single loss reading (probe/threadctr.h) of the thread with the most
 * samples in the window before, at each open. Under w->mu. */
static void window_log_loss(struct allocwindows *w)
{
	uint64_t jt = 0, most = 0;
	unsigned n;
	double x;

	for (size_t i = 0; i < w->nseen; i++)
		if (w->seen[i].in_window && w->seen[i].samples > most) {
			most = w->seen[i].samples;
			jt = w->seen[i].v.thread;
		}
	if (jt && threadctr_reading(&w->tc, jt, &n, &x))
		fprintf(w->winlog, "loss %u %.5f\n", n, x);
}

/*
 * Before a window opens after a detach (no program runs): a new attach
 * generation, and each thread the program has seen starts it from its
 * counter read now, so that its first sample in the window weighs what it
 * used since (without this, nothing: a thread slower than a sample per
 * window would never count). The same reading measures each thread's
 * slowdown in the window before (threadctr_open). A thread not read starts
 * afresh at its first sample. Under w->mu.
 */
static void window_baselines(struct allocwindows *w, uint64_t now)
{
	int fd = bpf_map__fd(w->skel->maps.alloc_tids);
	uint32_t gen = ++w->skel->bss->attach_gen;

	if (allocwindows_read_threads(w, NULL)) /* after every thread the program has now */
		return;
	read_stops(w);
	threadctr_open(&w->tc, now);
	if (w->winlog) /* the bench's hook: the busiest thread's newest loss reading */
		window_log_loss(w);
	for (size_t i = 0; i < w->nseen; i++) {
		struct mt_alloc_tid v;
		uint64_t ctr;

		/* fresh: samples after the close moved it (weighing nothing) */
		if (bpf_map_lookup_elem(fd, &w->seen[i].tid, &v) || !v.thread ||
		    !threadctr_last(&w->tc, v.thread, &ctr) || !threadctr_valid(ctr, v.allocated))
			continue;
		v.allocated = ctr;
		v.attach = gen;
		bpf_map_update_elem(fd, &w->seen[i].tid, &v, BPF_EXIST);
	}
}

/* bench/window_profile.sh: each attach and detach of the windows, as
 * "attach|detach <CLOCK_MONOTONIC ns before the call> <ns after> <ns planned>",
 * to the file MEMTRACE_WINDOW_LOG names (a bench's hook, off by default). */
static void window_log(struct allocwindows *w, const char *what, uint64_t before,
		       uint64_t planned)
{
	if (!w->winlog)
		return;
	fprintf(w->winlog, "%s %llu %llu %llu\n", what, (unsigned long long)before,
		(unsigned long long)mono_ns(), (unsigned long long)planned);
	fflush(w->winlog);
}

/* The duty cycle's thread: at each window edge, close or open a window (and
 * THREADCTR_TAIL_NS after each detach, read the threads' counters); the slow
 * attach and detach calls happen outside the lock. */
static void *duty_main(void *arg)
{
	struct allocwindows *w = arg;

	pthread_mutex_lock(&w->mu);
	while (!w->stop) {
		struct dutycycle_measure m = { 0 };
		uint64_t now = mono_ns(), next = dutycycle_next(&w->dc);
		enum dutycycle_action a;
		struct timespec ts;
		uint64_t len, start;
		bool closing;

		/* THREADCTR_TAIL_NS after a detach: the threads' counters, for
		 * the windows' whole cost (threadctr_tail) */
		if (w->tail_due && !w->dc.on && now >= w->tail_due) {
			w->tail_due = 0;
			if (!allocwindows_read_threads(w, NULL)) {
				read_stops(w);
				threadctr_tail(&w->tc, now);
			}
			continue;
		}
		if (w->tail_due && !w->dc.on && w->tail_due < next)
			next = w->tail_due;
		if (now < next) { /* sleep until the edge (or until told to stop) */
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += (time_t)((next - now) / 1000000000ull);
			ts.tv_nsec += (long)((next - now) % 1000000000ull);
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&w->cv, &w->mu, &ts);
			continue;
		}
		closing = w->dc.on;
		len = now > w->dc.wstart ? now - w->dc.wstart : 0; /* as dutycycle_tick() takes it */
		if (closing) { /* the window ends: later samples add nothing */
			w->skel->data->weight_scale = 0;
			if (!allocwindows_read_threads(w, &m))
				threadctr_close(&w->tc, now);
		}
		a = dutycycle_tick(&w->dc, now, &m);
		if (closing)
			window_thread_keeps(w, len);
		if (a == DUTYCYCLE_RESCALE)
			window_open(w);
		pthread_mutex_unlock(&w->mu);
		if (a == DUTYCYCLE_DETACH) {
			uint64_t t0 = mono_ns();

			detach_tlab(w);
			w->detached = true;
			window_log(w, "detach", t0, next);
			if (w->tl_on)
				w->tail_due = t0 + THREADCTR_TAIL_NS;
		}
		start = 0;
		if (a == DUTYCYCLE_ATTACH)
			w->tail_due = 0; /* the next window came first: no tail reading */
		if (a == DUTYCYCLE_ATTACH && !w->attached) {
			/* no program runs now: the window opens (its weights) and
			 * each thread's next sample weighs from its counter read
			 * here, so the window counts from here */
			pthread_mutex_lock(&w->mu);
			start = mono_ns();
			if (w->detached)
				window_baselines(w, start);
			w->detached = false;
			window_open(w);
			pthread_mutex_unlock(&w->mu);
			/* the breakpoints are in place when the call returns */
			allocwindows_attach(w, &w->proc, w->elf);
			window_log(w, "attach", start, next);
		}
		pthread_mutex_lock(&w->mu);
		if (a == DUTYCYCLE_ATTACH) {
			if (!start)
				window_open(w);
			dutycycle_started(&w->dc, start ? start : mono_ns());
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

void allocwindows_duty(struct allocwindows *w, struct alloctrace_duty *d)
{
	struct dutycycle_measure m = { 0 };
	uint64_t now = mono_ns();
	double kept, seen;

	memset(d, 0, sizeof(*d));
	if (!w->on)
		return;
	pthread_mutex_lock(&w->mu);
	d->on = true;
	d->budget = w->dc.budget;
	d->observed = dutycycle_observed(&w->dc, now);
	d->duty = w->dc.duty;
	d->keep = w->dc.wkeep;
	d->threads_thinned = w->thinned;
	/* the closed windows and the open one: a run shorter than a window
	 * (a burst) would otherwise say 1 while most of it was thinned */
	if (w->dc.on && !w->dc.wclosed)
		allocwindows_measure(w, &m);
	kept = w->dc.kept + (double)m.samples;
	seen = w->dc.seen + (double)(m.samples + m.skipped);
	d->kept_share = seen ? kept / seen : 1;
	d->max_cost_share = w->dc.max_share;
	d->rate = w->dc.rate;
	d->cost_ns = w->dc.cost_ns;
	d->trap_ns = w->dc.trap_ns;
	d->windows = w->dc.windows;
	d->period_ms = (double)w->dc.period_ns / 1e6;
	d->loss_share = w->dc.loss;
	d->loss_adj = w->dc.loss_adj;
	/* the thinning's spread: known only when no window scaled the weights;
	 * none when the total is counted */
	d->counted_total = w->tl_on && w->skel->rodata->targ_key_tid;
	d->stderr_bytes = d->counted_total ? 0 :
			  d->observed > 0.999 && !w->dc.windowed ?
			  sqrt((double)allocwindows_cost(w).var_kib2) * 1024 : -1;
	pthread_mutex_unlock(&w->mu);
}


int allocwindows_start(struct allocwindows *w, const struct mt_proc *p, struct mt_elf *e)
{
	int err;

	w->elf = e; /* the windows attach the uprobes again */
	w->proc = *p;
	err = -pthread_create(&w->thread, NULL, duty_main, w);
	if (err) {
		p_err("cannot start the duty cycle's thread: %s", strerror(-err));
		return err;
	}
	w->thread_on = true;
	return 0;
}

void allocwindows_free(struct allocwindows *w)
{
	if (w->thread_on) {
		pthread_mutex_lock(&w->mu);
		w->stop = true;
		pthread_cond_signal(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->thread, NULL);
		w->thread_on = false;
	}
	if (w->sync) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
		w->sync = false;
	}
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(w->link[i]);
		w->link[i] = NULL;
		if (w->fd[i] >= 0)
			close(w->fd[i]);
		w->fd[i] = -1;
	}
	detach_free(w->det); /* the windows' detaches still waiting */
	w->det = NULL;
	if (w->winlog)
		fclose(w->winlog);
	w->winlog = NULL;
	elfsym_free(w->elf);
	w->elf = NULL;
	free(w->seen);
	w->seen = NULL;
	perfdata_free(w->pd);
	w->pd = NULL;
	threadctr_free(&w->tc);
}
