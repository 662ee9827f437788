// SPDX-License-Identifier: GPL-2.0
/* parktrace.c - the park BPF object's lifecycle: open → rodata → load → attach. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memtrace/jstack.h"
#include "analysis/locks.h"
#include "park.skel.h"
#include "probe/parktrace.h"
#include "probe/bpfutil.h"
#include "probe/kfeatures.h"
#include "jstack/jstackstore.h"
#include "probe/usdtspec.h"
#include "jvm/elfsym.h"
#include "jvm/hotspot.h"
#include "jvm/jobject.h"
#include "jstack/jstackname.h"
#include "jvm/jthreads.h"
#include "jstack/jwalk.h"
#include "jvm/klassname.h"
#include "jvm/pidns.h"
#include "jvm/proc.h"
#include "jvm/vmstructs.h"
#include "lib/idmap.h"
#include "lib/util.h"

#define AOS "java/util/concurrent/locks/AbstractOwnableSynchronizer"
#define SYM_JTHREAD_RUN "_ZN10JavaThread3runEv" /* JavaThread::run() */

struct parktrace {
	struct park_bpf *skel;
	struct usdt_links links;
	struct bpf_link *run_link;   /* JavaThread::run: new threads' JavaThread*, NULL: none */
	const struct mt_vmstructs *vs;
	struct mt_proc p;
	struct jobject_layout ol;
	struct mt_klass_layout kl;
	struct jthreads *jt;
	uint64_t aos_ik;
	struct idmap ns2host;    /* in-namespace tid -> host tid (JVMs in a pid namespace) */
	uint64_t last_walk;      /* mono_ns of the last thread list walk */
	struct idmap names;      /* host tid -> thread name (malloc'd), every thread seen */
	struct jstackname *jn;   /* --stacks: names for the waiters' stacks */
	struct idmap ownable;    /* Klass* -> 1 + (extends AbstractOwnableSynchronizer) */
	struct jstackstore *store; /* --stacks: the walker's stacks, drained from `jstacks` */
	uint64_t last_warm;      /* mono_ns of the last pass over new stacks */
};

static void set_owner_field(struct parktrace *t);

void parktrace_free(struct parktrace *t)
{
	if (!t)
		return;
	usdt_detach_all(&t->links);
	bpf_link__destroy(t->run_link);
	park_bpf__destroy(t->skel);
	jthreads_free(t->jt);
	idmap_free(&t->ns2host);
	idmap_free_vals(&t->names);
	idmap_free(&t->ownable);
	jstackstore_free(t->store);
	jstackname_free(t->jn);
	free(t);
}

/* A uprobe at JavaThread::run, where each new Java thread tells its
 * JavaThread* before it can park or contend. Without .symtab the thread list
 * walks alone find them (parks of a thread younger than a walk then lack
 * their blocker until the Parker offset is learnt; monitor entries their
 * stack): nothing printed, it only narrows a window. */
static void attach_run(struct parktrace *t)
{
	struct mt_elf *e = elfsym_open(t->p.libjvm_host);
	uint64_t addr, off;

	if (e && !elfsym_lookup(e, SYM_JTHREAD_RUN, &addr, NULL) &&
	    !elfsym_vaddr_to_offset(e, addr, &off))
		t->run_link = bpf_program__attach_uprobe(t->skel->progs.handle_jthread_run, false,
							 t->p.pid, t->p.libjvm_host, off);
	elfsym_free(e);
}

/* Fill the skeleton's read-only settings from VMStructs and the field tables. */
static int set_rodata(struct parktrace *t)
{
	const struct mt_vmstructs *vs = t->vs;
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t thread_ik;
	uint32_t f_blocker, f_eetop;
	int err;

	if (!hs->has_javathread_threadobj || !hs->has_javathread_osthread ||
	    !hs->has_osthread_thread_id)
		return -ENOENT;
	if ((err = jobject_vm_class(vs, hs->vmclasses_thread, &thread_ik)) ||
	    (err = javafield_offset(vs, &t->ol.jf, thread_ik, "parkBlocker", &f_blocker)) ||
	    (err = javafield_offset(vs, &t->ol.jf, thread_ik, "eetop", &f_eetop)))
		return err;
	t->skel->rodata->targ_tgid = pidns_targ_tgid(&t->p);
	t->skel->rodata->targ_same_pidns = !t->p.other_pidns;
	t->skel->rodata->targ_threadobj = (uint32_t)hs->javathread_threadobj;
	t->skel->rodata->targ_f_blocker = f_blocker;
	t->skel->rodata->targ_f_eetop = f_eetop;
	t->skel->rodata->targ_osthread = (uint32_t)hs->javathread_osthread;
	t->skel->rodata->targ_os_tid = (uint32_t)hs->osthread_thread_id;
	t->skel->rodata->targ_klass_off = (uint32_t)t->ol.klass_off;
	t->skel->rodata->targ_coops = t->ol.coops;
	t->skel->rodata->targ_ccp = t->ol.ccp;
	t->skel->rodata->targ_mark_klass_shift = t->ol.compact ? t->ol.mark_klass_shift : 0;
	t->skel->rodata->targ_oop_base = t->ol.oop_base;
	t->skel->rodata->targ_oop_shift = (uint32_t)t->ol.oop_shift;
	t->skel->rodata->targ_klass_base = t->ol.klass_base;
	t->skel->rodata->targ_klass_shift = (uint32_t)t->ol.klass_shift;
	return 0;
}

/*
 * The tracer: aggregating per blocker (@events_fd < 0), or streaming each
 * park and sleep into the ring buffer @events_fd with drops counted in
 * @drops_fd (the collector's; nothing aggregated, no stacks).
 */
static struct parktrace *tracer_new(const struct mt_proc *p, const struct mt_vmstructs *vs,
				    bool stacks, int events_fd, int drops_fd)
{
	struct usdt_probe probes[8];
	size_t np = 0;
	struct jwalk_layout jw;
	struct parktrace *t;
	unsigned need;
	int err;

	bpfutil_setup_logging();
	t = calloc(1, sizeof(*t));
	if (!t) {
		p_err("out of memory");
		errno = ENOMEM;
		return NULL;
	}
	t->vs = vs;
	t->p = *p;
	err = jobject_layout(p, vs, &t->ol);
	if (!err)
		err = klassname_layout(vs, &t->kl);
	if (err) {
		p_err("can't read pid %d's object layout from VMStructs: %s", p->pid, strerror(-err));
		goto fail;
	}
	t->jt = jthreads_new(p, vs);
	if (!t->jt) {
		err = -errno;
		p_err("can't read pid %d's threads: %s", p->pid, strerror(errno));
		goto fail;
	}
	/* Open the skeleton. */
	t->skel = park_bpf__open();
	if (!t->skel) {
		err = -errno;
		p_err("cannot open the park BPF object: %s", strerror(errno));
		goto fail;
	}
	/* Set the read-only offsets and filter before load. */
	err = set_rodata(t);
	if (err) {
		p_err("can't find java.lang.Thread's parkBlocker/eetop in pid %d: %s", p->pid,
		      strerror(-err));
		goto fail;
	}
	/* The waiters' stacks: the walker's layout, and names for what it finds. */
	if (stacks) {
		err = jwalk_layout(vs, &jw);
		if (!err && !(t->jn = jstackname_new(vs, &jw)))
			err = -errno;
		if (err) {
			p_err("the Java stack walker cannot run on pid %d: %s", p->pid, strerror(-err));
			goto fail;
		}
		t->skel->rodata->targ_jw = jw.bpf;
		/* a small preallocated map user space drains (jstack/jstackstore.h),
		 * stacks as deep as the names kept (PARKTRACE_FRAMES) */
		t->skel->rodata->targ_jdepth = MT_JSTACK_WALK_FRAMES(PARKTRACE_FRAMES - 1);
		jstackname_set_depth(t->jn, PARKTRACE_FRAMES - 1);
		jstackstore_size_map(t->skel->maps.jstacks, MT_JSTACK_WALK_FRAMES(PARKTRACE_FRAMES - 1));
	}
	/* Streaming: into the collector's ring buffer, in order with the
	 * thread's other events; the per-blocker tables shrink to nothing. */
	if (events_fd >= 0) {
		t->skel->rodata->targ_stream = 1;
		t->skel->rodata->targ_aggregate = 0;
		t->skel->rodata->targ_klass_name = (uint32_t)t->kl.klass_name;
		t->skel->rodata->targ_sym_body = (uint32_t)t->kl.sym_body;
		err = bpf_map__reuse_fd(t->skel->maps.jvm_events, events_fd);
		if (!err)
			err = bpf_map__reuse_fd(t->skel->maps.jvm_drops, drops_fd);
		if (!err)
			err = bpf_map__set_max_entries(t->skel->maps.park_locks, 1);
		if (!err)
			err = bpf_map__set_max_entries(t->skel->maps.park_names, 256);
		if (err) {
			p_err("cannot share the collector's ring buffer with the park probes: %s",
			      strerror(-err));
			goto fail;
		}
	}
	/* Without stacks, no monitor entries are traced: no room for them. */
	if (!stacks &&
	    ((err = bpf_map__set_max_entries(t->skel->maps.mon_stacks, 1)) ||
	     (err = bpf_map__set_max_entries(t->skel->maps.mon_inflight, 1)))) {
		p_err("cannot size the park BPF maps: %s", strerror(-err));
		goto fail;
	}
	/* Load and verify. */
	need = KF_RINGBUF | KF_COOKIE | (stacks ? KF_LOOP : 0);
	err = bpfutil_check("park", need);
	if (err)
		goto fail;
	err = park_bpf__load(t->skel);
	if (err) {
		bpfutil_load_failed("park", err, need);
		goto fail;
	}
	bpfutil_loaded("park", t->skel->obj);
	if (stacks && !(t->store = jstackstore_new(bpf_map__fd(t->skel->maps.jstacks),
									  JSTACKSTORE_MAX_KEPT))) {
		err = -errno;
		p_err("cannot keep the walker's stacks: %s", strerror(errno));
		goto fail;
	}
	/* AbstractOwnableSynchronizer is loaded early in most JVMs: one walk of
	 * every class now, so that owners are read from the first park */
	if (!jobject_find_class(vs, AOS, &t->aos_ik))
		set_owner_field(t);
	/* The threads from now on, then those before the first park. */
	attach_run(t);
	parktrace_refresh(t);
	/* Attach each program at every site of its USDT probe in this JVM's libjvm. */
	t->links.spec_map_fd = bpf_map__fd(t->skel->maps.usdt_specs);
	/* each end before its begin: a begin seen always has its end seen */
	probes[np++] = (struct usdt_probe){ "thread__park__end", t->skel->progs.handle_park_end,
					    .optional = false };
	probes[np++] = (struct usdt_probe){ "thread__park__begin", t->skel->progs.handle_park_begin,
					    .optional = false };
	probes[np++] = (struct usdt_probe){ "thread__sleep__end", t->skel->progs.handle_sleep_end,
					    .optional = true };
	probes[np++] = (struct usdt_probe){ "thread__sleep__begin", t->skel->progs.handle_sleep_begin,
					    .optional = true };
	/* thread names come with the stream's own thread events */
	if (events_fd < 0)
		probes[np++] = (struct usdt_probe){ "thread__start", t->skel->progs.handle_thread_start,
						    .optional = true };
	/* the contending threads' stacks (the probes fire with DTraceMonitorProbes) */
	if (stacks) {
		probes[np++] = (struct usdt_probe){ "monitor__contended__entered",
						    t->skel->progs.handle_mon_entered, .optional = true };
		probes[np++] = (struct usdt_probe){ "monitor__contended__enter",
						    t->skel->progs.handle_mon_enter, .optional = true };
		probes[np++] = (struct usdt_probe){ "compiled__method__unload",
						    t->skel->progs.handle_code_unload, .optional = true };
	}
	err = usdt_attach_hotspot(&t->links, probes, np, p);
	if (err)
		goto fail;
	/* the walker's pc cache needs to hear of code being freed */
	if (stacks && probes[np - 1].sites > 0)
		t->skel->bss->cache_on = 1;
	return t;
fail:
	parktrace_free(t);
	errno = -err;
	return NULL;
}

struct parktrace *parktrace_new(const struct mt_proc *p, const struct mt_vmstructs *vs,
				bool stacks)
{
	return tracer_new(p, vs, stacks, -1, -1);
}

struct parktrace *parktrace_new_stream(const struct mt_proc *p, const struct mt_vmstructs *vs,
				       int events_fd, int drops_fd)
{
	return tracer_new(p, vs, false, events_fd, drops_fd);
}

/* In-namespace tid -> host tid for a JVM in another pid namespace, from
 * /proc/PID/task/TID/status's NSpid line. */
static void map_ns_tids(struct parktrace *t)
{
	char path[96], line[256];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", t->p.pid);
	dir = opendir(path);
	if (!dir)
		return;
	while ((d = readdir(dir))) {
		unsigned long host = strtoul(d->d_name, NULL, 10), ns = 0;
		FILE *f;

		if (!host)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%lu/status", t->p.pid, host);
		f = fopen(path, "r");
		if (!f)
			continue;
		while (fgets(line, sizeof(line), f))
			if (!strncmp(line, "NSpid:", 6)) {
				char *last = strrchr(line, '\t');

				ns = strtoul(last ? last + 1 : line + 6, NULL, 10);
			}
		fclose(f);
		if (ns)
			idmap_put(&t->ns2host, ns, (void *)(uintptr_t)host);
	}
	closedir(dir);
}

/* Learn Parker* - JavaThread* from a thread that parked before it was listed:
 * from then on the BPF program finds every thread's JavaThread at once. */
static void learn_parker_off(struct parktrace *t, const struct jthread *th, size_t n)
{
	int ufd = bpf_map__fd(t->skel->maps.park_unknown), cfd = bpf_map__fd(t->skel->maps.park_cfg);
	uint32_t key, next, zero = 0, *prev = NULL;
	struct mt_park_cfg cfg;
	uint64_t parker;

	if (bpf_map_lookup_elem(cfd, &zero, &cfg))
		return;
	while (!bpf_map_get_next_key(ufd, prev, &next)) {
		key = next;
		prev = &key;
		if (cfg.parker_off || bpf_map_lookup_elem(ufd, &key, &parker))
			continue;
		for (size_t i = 0; i < n; i++) {
			uint32_t tid = th[i].tid;

			if (t->p.other_pidns)
				tid = (uint32_t)(uintptr_t)idmap_get(&t->ns2host, tid);
			if (tid == key && parker > th[i].jt && parker - th[i].jt < 65536) {
				cfg.parker_off = parker - th[i].jt;
				bpf_map_update_elem(cfd, &zero, &cfg, BPF_ANY);
				break;
			}
		}
	}
	/* start over: the map holds only threads not resolved yet */
	while (!bpf_map_get_next_key(ufd, NULL, &next))
		bpf_map_delete_elem(ufd, &next);
}

/* Hand AbstractOwnableSynchronizer.exclusiveOwnerThread's offset to the program. */
static void set_owner_field(struct parktrace *t)
{
	int cfd = bpf_map__fd(t->skel->maps.park_cfg);
	struct mt_park_cfg cfg;
	uint32_t zero = 0;

	if (!bpf_map_lookup_elem(cfd, &zero, &cfg) &&
	    !javafield_offset(t->vs, &t->ol.jf, t->aos_ik, "exclusiveOwnerThread", &cfg.f_owner))
		bpf_map_update_elem(cfd, &zero, &cfg, BPF_ANY);
}

/* ... among the blockers of threads parked now (a lock held for long). */
static void find_aos_inflight(struct parktrace *t)
{
	int fd = bpf_map__fd(t->skel->maps.park_inflight);
	uint32_t key, *prev = NULL;
	struct mt_park_inflight in;
	uint64_t found;
	int checked = 0;

	while (!t->aos_ik && checked < 64 && !bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &in) || !in.ts || !in.key.klass)
			continue;
		checked++;
		if (jobject_super_named(t->vs, &t->ol, in.key.klass, AOS, &found) == 1)
			t->aos_ik = found;
	}
}

/* Look for AbstractOwnableSynchronizer among the blockers' classes (ended
 * parks, and threads parked now) and hand its owner field to the program. */
static void find_aos(struct parktrace *t)
{
	int lfd = bpf_map__fd(t->skel->maps.park_locks);
	struct mt_park_key key, *prev = NULL;
	uint64_t found, last = 0;
	int checked = 0;

	while (!t->aos_ik && checked < 64 && !bpf_map_get_next_key(lfd, prev, &key)) {
		prev = &key;
		if (!key.klass || key.klass == last)
			continue;
		last = key.klass;
		checked++;
		if (jobject_super_named(t->vs, &t->ol, key.klass, AOS, &found) == 1)
			t->aos_ik = found;
	}
	if (!t->aos_ik)
		find_aos_inflight(t);
	if (t->aos_ik)
		set_owner_field(t);
}

/* Keep @name for @tid: owners and waiters may be gone when counters are read. */
static void remember_name(struct parktrace *t, uint32_t tid, const char *name)
{
	char *old = idmap_get(&t->names, tid), *copy;

	if (!name[0] || (old && !strcmp(old, name)))
		return;
	copy = strdup(name);
	if (copy && !idmap_put(&t->names, tid, copy))
		free(old);
	else
		free(copy);
}

/* @tid's name: from the thread list walks, else from thread__start (threads
 * started and gone between walks), else "tid N". */
static void name_of(struct parktrace *t, uint32_t tid, char *out, size_t len)
{
	const char *name = idmap_get(&t->names, tid);
	struct mt_park_name n;
	uint32_t key = tid;

	if (!tid)
		out[0] = '\0';
	else if (name)
		snprintf(out, len, "%s", name);
	else if (!t->p.other_pidns &&
		 !bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.park_names), &key, &n) && n.name[0])
		snprintf(out, len, "%.*s", (int)sizeof(n.name), n.name);
	else
		snprintf(out, len, "tid %u", tid);
}

static void warm_one(void *arg, uint64_t key, const struct mt_jstack *st)
{
	(void)key;
	jstackname_warm(arg, st, 0);
}

/* Move the stacks the walker stored since the last pass into user space,
 * naming each new one while its compiled code still lives (five times a
 * second at most), as alloctrace does. */
static void warm_stacks(struct parktrace *t)
{
	uint64_t now = mono_ns();

	if (!t->store || now - t->last_warm < 200000000ull)
		return;
	t->last_warm = now;
	jstackstore_drain(t->store, warm_one, t->jn);
}

int parktrace_refresh(struct parktrace *t)
{
	struct jthread *th = NULL;
	size_t n = 0;
	uint32_t any;
	uint64_t now = mono_ns();
	int fd = bpf_map__fd(t->skel->maps.park_jthreads), err;

	/* the owner field, from the first blocker class that extends
	 * AbstractOwnableSynchronizer (until then, owners are not read) */
	if (!t->aos_ik)
		find_aos(t);
	warm_stacks(t);
	/* walk the thread list when a thread parked unknown, else once a second */
	if (bpf_map_get_next_key(bpf_map__fd(t->skel->maps.park_unknown), NULL, &any) &&
	    now - t->last_walk < 1000000000ull)
		return 0;
	t->last_walk = now;
	err = jthreads_read(t->jt, &th, &n);
	if (err && err != -EAGAIN)
		return err;
	if (t->p.other_pidns)
		map_ns_tids(t);
	for (size_t i = 0; i < n; i++) {
		uint32_t tid = th[i].tid;

		if (t->p.other_pidns)
			tid = (uint32_t)(uintptr_t)idmap_get(&t->ns2host, tid);
		if (!tid)
			continue;
		bpf_map_update_elem(fd, &tid, &th[i].jt, BPF_ANY);
		remember_name(t, tid, th[i].name);
	}
	learn_parker_off(t, th, n);
	free(th);
	return 0;
}

static int by_time(const void *pa, const void *pb)
{
	const struct parktrace_lock *a = pa, *b = pb;

	if (a->v.total_ns != b->v.total_ns)
		return a->v.total_ns < b->v.total_ns ? 1 : -1;
	return a->v.count < b->v.count ? 1 : a->v.count > b->v.count ? -1 : 0;
}

/* Raw entries: by blocker, then most time parked first. */
static int by_blocker(const void *pa, const void *pb)
{
	const struct parktrace_lock *a = pa, *b = pb;

	if (a->key.klass != b->key.klass)
		return a->key.klass < b->key.klass ? -1 : 1;
	if (a->key.blocker != b->key.blocker)
		return a->key.blocker < b->key.blocker ? -1 : 1;
	if (a->key.timed != b->key.timed)
		return a->key.timed < b->key.timed ? -1 : 1;
	return a->v.total_ns < b->v.total_ns ? 1 : a->v.total_ns > b->v.total_ns ? -1 : 0;
}

static bool same_lock(const struct mt_park_key *a, const struct mt_park_key *b)
{
	return a->klass == b->klass && a->blocker == b->blocker && a->timed == b->timed;
}

/* Add raw entry @r (one waiter stack of a blocker) into merged row @l. */
static void merge_into(struct parktrace *t, struct parktrace_lock *l, const struct parktrace_lock *r)
{
	struct mt_jstack st;

	l->v.count += r->v.count;
	l->v.total_ns += r->v.total_ns;
	l->v.with_owner += r->v.with_owner;
	if (r->v.max_ns > l->v.max_ns)
		l->v.max_ns = r->v.max_ns;
	for (int i = 0; i < MT_PARK_HIST; i++)
		l->v.hist[i] += r->v.hist[i];
	if (!l->v.owner_tid)
		l->v.owner_tid = r->v.owner_tid;
	if (!t->store || !r->key.jstack || l->nstacks == PARKTRACE_STACKS ||
	    jstackstore_get(t->store, r->key.jstack, &st))
		return;
	l->stacks[l->nstacks].parks = r->v.count;
	l->stacks[l->nstacks].ns = r->v.total_ns;
	l->stacks[l->nstacks].n = jstackname_frames(t->jn, &st, 0, l->stacks[l->nstacks].frames,
						    PARKTRACE_FRAMES, false);
	l->nstacks++;
}

int parktrace_read(struct parktrace *t, struct parktrace_lock **out, size_t *n)
{
	int fd = bpf_map__fd(t->skel->maps.park_locks);
	struct mt_park_key key, *prev = NULL;
	struct parktrace_lock *raw = NULL, *rows = NULL;
	size_t nraw = 0, cap = 0, m = 0;

	*out = NULL;
	*n = 0;
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (nraw == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct parktrace_lock *b = realloc(raw, ncap * sizeof(*raw));

			if (!b) {
				free(raw);
				return -ENOMEM;
			}
			raw = b;
			cap = ncap;
		}
		memset(&raw[nraw], 0, sizeof(raw[nraw]));
		raw[nraw].key = key;
		if (!bpf_map_lookup_elem(fd, &key, &raw[nraw].v))
			nraw++;
	}
	if (nraw)
		qsort(raw, nraw, sizeof(*raw), by_blocker);
	rows = calloc(nraw ? nraw : 1, sizeof(*rows));
	if (!rows) {
		free(raw);
		return -ENOMEM;
	}
	/* one row per blocker; its raw entries (one per waiter stack) merged, the
	 * stacks with the most time parked kept */
	for (size_t i = 0; i < nraw; i++) {
		struct parktrace_lock *l;

		if (!m || !same_lock(&rows[m - 1].key, &raw[i].key)) {
			l = &rows[m++];
			l->key = raw[i].key;
			l->key.jstack = 0;
			l->v.waiter_tid = raw[i].v.waiter_tid;
		}
		merge_into(t, &rows[m - 1], &raw[i]);
	}
	free(raw);
	for (size_t i = 0; i < m; i++) {
		struct parktrace_lock *l = &rows[i];

		if (l->key.klass &&
		    klassname_read(t->vs, &t->kl, l->key.klass, true, l->cls, sizeof(l->cls)) < 0)
			snprintf(l->cls, sizeof(l->cls), "?");
		l->ownable = l->key.klass && t->aos_ik &&
			     jobject_is_subclass(t->vs, &t->ol, l->key.klass, t->aos_ik) == 1;
		l->lock = l->ownable && locks_class_is_lock(l->cls);
		if (!l->ownable) {
			l->v.with_owner = 0;
			l->v.owner_tid = 0;
		}
		name_of(t, l->v.owner_tid, l->owner, sizeof(l->owner));
		name_of(t, l->v.waiter_tid, l->waiter, sizeof(l->waiter));
	}
	if (m)
		qsort(rows, m, sizeof(*rows), by_time);
	*out = rows;
	*n = m;
	return 0;
}

struct mon_raw {
	struct mt_mon_key key;
	struct mt_mon_val v;
};

/* Raw monitor entries: by monitor, then most time blocked first. */
static int mon_by_monitor(const void *pa, const void *pb)
{
	const struct mon_raw *a = pa, *b = pb;

	if (a->key.monitor != b->key.monitor)
		return a->key.monitor < b->key.monitor ? -1 : 1;
	return a->v.total_ns < b->v.total_ns ? 1 : a->v.total_ns > b->v.total_ns ? -1 : 0;
}

static bool same_frames(const struct parktrace_stack *a, const struct parktrace_stack *b)
{
	if (a->n != b->n)
		return false;
	for (int i = 0; i < a->n; i++)
		if (a->frames[i] != b->frames[i] && strcmp(a->frames[i], b->frames[i]))
			return false;
	return true;
}

/* The stacks of one monitor's entries, merged by the frames they name (the
 * JIT gives one Java stack several raw ones: interpreted, compiled). */
struct mon_stacks {
	struct parktrace_stack *st;
	size_t n, cap;
};

/* Add raw entry @r to monitor row @m, its stack to @ms. 0 or -ENOMEM. */
static int mon_add(struct parktrace *t, struct parktrace_monitor *m, struct mon_stacks *ms,
		   const struct mon_raw *r)
{
	struct parktrace_stack *st;
	struct mt_jstack js;

	m->entries += r->v.count;
	m->ns += r->v.total_ns;
	if (r->v.max_ns > m->max_ns)
		m->max_ns = r->v.max_ns;
	if (!r->key.jstack || !t->store || jstackstore_get(t->store, r->key.jstack, &js)) {
		m->unwalked += r->v.count;
		return 0;
	}
	if (ms->n == ms->cap) {
		size_t cap = ms->cap ? 2 * ms->cap : 8;
		struct parktrace_stack *b = realloc(ms->st, cap * sizeof(*b));

		if (!b)
			return -ENOMEM;
		ms->st = b;
		ms->cap = cap;
	}
	st = &ms->st[ms->n];
	st->parks = r->v.count;
	st->ns = r->v.total_ns;
	st->n = jstackname_frames(t->jn, &js, 0, st->frames, PARKTRACE_FRAMES, false);
	for (size_t i = 0; i < ms->n; i++) {
		if (same_frames(&ms->st[i], st)) {
			ms->st[i].parks += st->parks;
			ms->st[i].ns += st->ns;
			return 0;
		}
	}
	ms->n++;
	return 0;
}

static int stack_by_time(const void *pa, const void *pb)
{
	const struct parktrace_stack *a = pa, *b = pb;

	return a->ns < b->ns ? 1 : a->ns > b->ns ? -1 : 0;
}

static int mon_by_time(const void *pa, const void *pb)
{
	const struct parktrace_monitor *a = pa, *b = pb;

	return a->ns < b->ns ? 1 : a->ns > b->ns ? -1 : 0;
}

int parktrace_read_monitors(struct parktrace *t, struct parktrace_monitor **out, size_t *n)
{
	int fd = bpf_map__fd(t->skel->maps.mon_stacks);
	struct mt_mon_key key, *prev = NULL;
	struct mon_raw *raw = NULL;
	struct parktrace_monitor *rows = NULL;
	struct mon_stacks ms = { 0 };
	size_t nraw = 0, cap = 0, m = 0;
	int err = 0;

	*out = NULL;
	*n = 0;
	warm_stacks(t);
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		prev = &key;
		if (nraw == cap) {
			size_t ncap = cap ? 2 * cap : 64;
			struct mon_raw *b = realloc(raw, ncap * sizeof(*raw));

			if (!b) {
				free(raw);
				return -ENOMEM;
			}
			raw = b;
			cap = ncap;
		}
		raw[nraw].key = key;
		if (!bpf_map_lookup_elem(fd, &key, &raw[nraw].v))
			nraw++;
	}
	if (nraw)
		qsort(raw, nraw, sizeof(*raw), mon_by_monitor);
	rows = calloc(nraw ? nraw : 1, sizeof(*rows));
	if (!rows) {
		free(raw);
		return -ENOMEM;
	}
	for (size_t i = 0; i < nraw && !err; i++) {
		struct parktrace_monitor *r;

		if (!m || rows[m - 1].monitor != raw[i].key.monitor) {
			rows[m++].monitor = raw[i].key.monitor;
			ms.n = 0;
		}
		r = &rows[m - 1];
		err = mon_add(t, r, &ms, &raw[i]);
		/* the monitor's last entry: keep its stacks with the most time */
		if (!err && (i + 1 == nraw || raw[i + 1].key.monitor != r->monitor)) {
			if (ms.n)
				qsort(ms.st, ms.n, sizeof(*ms.st), stack_by_time);
			r->nstacks = ms.n < PARKTRACE_STACKS ? (int)ms.n : PARKTRACE_STACKS;
			memcpy(r->stacks, ms.st, (size_t)r->nstacks * sizeof(*ms.st));
		}
	}
	free(raw);
	free(ms.st);
	if (err) {
		free(rows);
		return err;
	}
	if (m)
		qsort(rows, m, sizeof(*rows), mon_by_time);
	*out = rows;
	*n = m;
	return 0;
}

const char *parktrace_lock_name(const struct parktrace_lock *l)
{
	if (l->key.klass)
		return l->cls;
	return l->key.timed == MT_PARK_SLEEP ? "Thread.sleep" : "(no blocker)";
}

int parktrace_ownable(struct parktrace *t, uint64_t klass)
{
	uintptr_t have = (uintptr_t)idmap_get(&t->ownable, klass);
	uint64_t found;
	int r;

	if (have)
		return (int)have - 1;
	if (!klass)
		return 0;
	if (t->aos_ik) {
		r = jobject_is_subclass(t->vs, &t->ol, klass, t->aos_ik);
	} else {
		/* loaded after we looked: found among this class's supers */
		r = jobject_super_named(t->vs, &t->ol, klass, AOS, &found);
		if (r == 1) {
			t->aos_ik = found;
			set_owner_field(t);
		}
	}
	if (r < 0)
		return 0;
	idmap_put(&t->ownable, klass, (void *)(uintptr_t)(r + 1));
	return r;
}

uint32_t parktrace_host_tid(struct parktrace *t, uint32_t tid)
{
	if (!t->p.other_pidns)
		return tid;
	return (uint32_t)(uintptr_t)idmap_get(&t->ns2host, tid);
}

void parktrace_forget_classes(struct parktrace *t)
{
	idmap_free(&t->ownable);
}

bool parktrace_lock_contended(const struct parktrace_lock *l)
{
	return l->ownable && (l->v.with_owner > 0 || l->lock);
}

int parktrace_park_since(struct parktrace *t, uint32_t host_tid, uint64_t blocker,
			 uint64_t *since)
{
	struct mt_park_inflight in;

	*since = 0;
	if (bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.park_inflight), &host_tid, &in))
		return -ENOENT;
	if (!in.ts || in.key.blocker != blocker)
		return -ESRCH;
	*since = in.ts;
	return 0;
}

void parktrace_stats(struct parktrace *t, uint64_t out[MT_PARK_NSTATS])
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(t->skel->maps.park_stats);
	uint64_t vals[ncpu > 0 ? ncpu : 1];

	for (uint32_t k = 0; k < MT_PARK_NSTATS; k++) {
		out[k] = 0;
		if (ncpu > 0 && !bpf_map_lookup_elem(fd, &k, vals))
			for (int i = 0; i < ncpu; i++)
				out[k] += vals[i];
	}
	out[MT_PARK_MISSED] = parktrace_misses(t);
}

uint64_t parktrace_misses(struct parktrace *t)
{
	return bpfutil_obj_misses(t->skel->obj);
}
