// SPDX-License-Identifier: GPL-2.0
/* alloctrace.c - the alloc BPF object's lifecycle and name resolution. */
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
#include "probe/alloctrace.h"
#include "jvm/elfsym.h"
#include "jvm/hotspot.h"
#include "probe/tlabprobe.h"
#include "probe/bpfutil.h"
#include "probe/detach.h"
#include "probe/dutycycle.h"
#include "probe/jstackstore.h"
#include "probe/threadctr.h"
#include "probe/uprobecost.h"
#include "jvm/jframes.h"
#include "jvm/jobject.h"
#include "jvm/jstackname.h"
#include "jvm/jthreadlist.h"
#include "jvm/jwalk.h"
#include "jvm/jvmflags.h"
#include "jvm/perfdata.h"
#include "jvm/klassname.h"
#include "memtrace/alloc.h"
#include "jvm/pidns.h"
#include "probe/usdtspec.h"
#include "probe/uprobemulti.h"
#include "lib/hash.h"
#include "lib/idmap.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

/* (klass, gen) -> Java class name, filled when the kernel announces a key. */
struct name_ent {
	uint64_t klass;
	uint32_t gen;
	char *name;
};

struct alloctrace {
	struct alloc_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *tlab[2];
	struct usdt_links usdt;
	struct mt_vmstructs *vs;
	struct mt_klassname_cache *names;
	bool exact;
	int pid;
	uint32_t seen_gen;      /* highest unload generation heard of */
	struct jframes_layout jl;
	struct jwalk_layout jw;
	FILE *winlog;           /* MEMTRACE_WINDOW_LOG (window_log()), or NULL */
	uint64_t tail_due;      /* mono_ns of the threads' tail reading (0: none) */
	bool walker;            /* the Java stack walker is on */
	bool content;           /* class shares from the TLABs' contents */
	struct jstackname *jn;  /* names for the walker's stacks */
	struct jstackstore *store; /* the walker's stacks, drained from `jstacks` */
	uint64_t last_warm;     /* mono_ns of the last pass over new stacks */
	struct name_ent *ents;
	size_t nents, cap;
	uint64_t unloads, unnamed;
	/* duty cycle: a thread of its own attaches and detaches the TLAB uprobes
	 * (each waits for an RCU grace period, up to half a second here); @mu
	 * guards dc, base and the thread's state */
	bool duty;
	struct dutycycle dc;
	struct mt_elf *elf;     /* libjvm, kept to attach the TLAB uprobes again */
	struct mt_proc proc;
	struct mt_alloc_cost base; /* the cost counters when the window opened */
	unsigned int thinned;      /* the most threads with keep < 1 at once (window_thread_keeps) */
	/* the per-thread counters as window_measure read them, for window_thread_keeps */
	struct tid_seen { uint32_t tid; bool in_window; uint64_t samples;
			  struct mt_alloc_tid v; } *seen;
	size_t nseen, capseen;
	bool attached;
	bool multi;                /* the TLAB uprobes through uprobe_multi links (tlab_fd) */
	int tlab_fd[2];
	uint64_t tlab_off[2];
	bool detached;             /* the last window ended with a detach */
	struct threadctr tc;       /* every thread's own counter (windows) */
	struct jthreadlist tl;
	bool tl_on;                /* tl works: totals under windows are the counters' */
	struct mt_perfdata *pd;    /* the JVM's stop counters for the loss's spans, or NULL */
	struct detacher *det;      /* destroys the links off the duty cycle's thread */
	pthread_t thread;
	bool thread_on, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* Open addressing on (klass, gen); cap is a power of two, at most half full. */
static size_t slot(const struct alloctrace *t, uint64_t klass, uint32_t gen)
{
	return (size_t)(hash_fib64(klass ^ ((uint64_t)gen << 48)) >> 20) & (t->cap - 1);
}

static struct name_ent *find_ent(struct alloctrace *t, uint64_t klass, uint32_t gen)
{
	if (!t->cap)
		return NULL;
	for (size_t i = slot(t, klass, gen);; i = (i + 1) & (t->cap - 1)) {
		struct name_ent *e = &t->ents[i];

		if (!e->name)
			return NULL;
		if (e->klass == klass && e->gen == gen)
			return e;
	}
}

static int grow(struct alloctrace *t)
{
	size_t cap = t->cap ? 2 * t->cap : 1024, old = t->cap;
	struct name_ent *ents = calloc(cap, sizeof(*ents)), *prev = t->ents;

	if (!ents)
		return -ENOMEM;
	t->ents = ents;
	t->cap = cap;
	for (size_t i = 0; i < old; i++) {
		size_t j;

		if (!prev[i].name)
			continue;
		for (j = slot(t, prev[i].klass, prev[i].gen); ents[j].name; j = (j + 1) & (cap - 1))
			;
		ents[j] = prev[i];
	}
	free(prev);
	return 0;
}

/* Read the class name of a freshly announced key. */
static void resolve(struct alloctrace *t, uint64_t klass, uint32_t gen, uint32_t name_len)
{
	char raw[512], name[512];

	if (find_ent(t, klass, gen))
		return;
	if (t->nents * 2 >= t->cap && grow(t))
		return;
	name[0] = '\0';
	if (gen < t->seen_gen) {
		/* a class was unloaded since this key was made: its memory may
		 * hold another class now, so its name is not read */
		snprintf(name, sizeof(name), "(class unloaded before its name was read)");
		t->unnamed++;
	} else if (t->exact) {
		size_t n = name_len < sizeof(raw) ? name_len : sizeof(raw) - 1;

		if (!proc_read_mem(t->pid, klass, raw, n) &&
		    klassname_to_java(raw, n, name, sizeof(name)) >= 0)
			;
		else
			name[0] = '\0';
	} else if (klassname_cache_get(t->names, klass, name, sizeof(name)) < 0) {
		name[0] = '\0';
	}
	if (!name[0] || !jwalk_name_ok(name)) { /* nothing unprintable reaches an output */
		snprintf(name, sizeof(name), "(unknown class 0x%llx)", (unsigned long long)klass);
		t->unnamed++;
	}
	{
		size_t i;

		for (i = slot(t, klass, gen); t->ents[i].name; i = (i + 1) & (t->cap - 1))
			;
		t->ents[i].klass = klass;
		t->ents[i].gen = gen;
		t->ents[i].name = strdup(name);
		if (t->ents[i].name)
			t->nents++;
	}
}

static int handle_event(void *ctx, void *data, size_t len)
{
	const struct mt_alloc_event *e = data;
	struct alloctrace *t = ctx;

	if (len < sizeof(*e))
		return 0;
	if (e->kind == MT_ALLOC_UNLOAD) {
		t->unloads++;
		if (e->gen > t->seen_gen)
			t->seen_gen = e->gen;
		/* a Klass* may now be reused: forget cached names */
		if (t->names)
			klassname_cache_clear(t->names);
	} else if (e->kind == MT_ALLOC_NEW_KEY) {
		resolve(t, e->klass, e->gen, e->name_len);
	}
	return 0;
}

/* Check what exact mode needs and say what to do if it is missing. */
static int exact_preflight(const struct mt_proc *p, struct mt_vmstructs *vs)
{
	bool on = false, ext = false;

	if (!jvmflags_get_bool(p, vs, "DTraceAllocProbes", &on) && on)
		return 0;
	if (!jvmflags_get_bool(p, vs, "ExtendedDTraceProbes", &ext) && ext)
		return 0;
	p_err("--exact needs the JVM to run with -XX:+DTraceAllocProbes (it is off in pid %d); "
	      "that flag costs throughput (measured here: 2.3x slower allocation, 7.8x with the "
	      "probe attached), so it is not switched on from outside. Without --exact, "
	      "memtrace samples TLAB refills at no measurable cost",
	      p->pid);
	return -ENOTSUP;
}

static int attach_tlab(struct alloctrace *t, const struct mt_proc *p, struct mt_elf *e)
{
	struct bpf_program *progs[2] = { t->skel->progs.handle_new_tlab,
					 t->skel->progs.handle_outside_tlab };
	const char *missing = "";
	int err = 0;

	if (t->multi) { /* windows: offsets once, then a link per window */
		if (!t->tlab_off[0])
			err = tlabprobe_offsets(e, p, t->tlab_off, &missing);
		if (!err)
			err = tlabprobe_attach_multi(progs, p, t->tlab_off, t->tlab_fd);
	} else {
		err = tlabprobe_attach(progs, e, p, t->tlab, &missing);
	}

	if (err == -ENOENT)
		p_err("libjvm.so of pid %d (%s) has no symbol AllocTracer::%s: it is "
		      "stripped (no .symtab), so allocations cannot be sampled by uprobes. "
		      "Install the JDK's debug symbols, or run `memtrace age` (JVMTI "
		      "sampling through the agent) instead", p->pid, p->libjvm, missing);
	return err;
}

static void *duty_main(void *arg);
static void destroy_link(void *l);
static void close_link_fd(void *p);
static int read_threads(struct alloctrace *t, struct dutycycle_measure *m);

struct alloctrace *alloctrace_new(const struct mt_proc *p, const struct alloctrace_opts *o)
{
	struct mt_elf *e = NULL;
	struct alloctrace *t;
	int err;

	bpfutil_setup_logging();
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->tlab_fd[0] = t->tlab_fd[1] = -1;
	threadctr_init(&t->tc);
	t->exact = o->exact;
	t->pid = p->pid;
	err = vmstructs_open(p, &t->vs);
	if (err && !o->exact) {
		p_err("cannot read the VMStructs tables of pid %d (%s): class names "
		      "cannot be resolved", p->pid, vmstructs_strerror(err));
		goto err_free;
	}
	if (o->exact) {
		err = exact_preflight(p, t->vs);
		if (err)
			goto err_free;
	} else {
		t->names = klassname_cache_new(t->vs);
		if (!t->names) {
			err = -errno;
			p_err("this JVM's VMStructs lack Klass::_name or Symbol: class names "
			      "cannot be resolved");
			goto err_free;
		}
	}
	e = elfsym_open(p->libjvm_host);
	if (!e) {
		err = -errno;
		p_err("cannot read %s: %s", p->libjvm_host, strerror(errno));
		goto err_free;
	}

	/* Open the skeleton, set the read-only filters, load. */
	t->skel = alloc_bpf__open();
	if (!t->skel) {
		err = -errno;
		p_err("cannot open the alloc BPF object: %s", strerror(errno));
		goto err_elf;
	}
	t->skel->rodata->targ_tgid = pidns_targ_tgid(p); /* 0 below the host pid ns */
	t->skel->rodata->targ_stacks = o->stacks;
	t->skel->rodata->targ_native = o->stacks && o->native;
	t->duty = !o->exact && o->budget > 0;
	t->skel->rodata->targ_duty = t->duty;
	/* weigh a sample by the bytes its thread used since its last one (its
	 * Thread::_allocated_bytes), not by the new TLAB's size */
	if (t->vs) {
		const struct mt_hotspot *hs = vmstructs_hotspot(t->vs);
		uint64_t off = hs->thread_allocated_bytes;

		if (hs->has_thread_allocated_bytes && off && off < UINT32_MAX)
			t->skel->rodata->targ_allocated_off = (uint32_t)off;
		else
			p_warn("this JVM's VMStructs lack Thread::_allocated_bytes: a sample stands "
			       "for its new TLAB's size, and TLABs a GC retires unused count as "
			       "allocated");
	}
	if (o->stacks && t->vs && !o->exact) {
		err = jwalk_layout(t->vs, &t->jw);
		if (err)
			p_warn("the Java stack walker is off (%s): this JVM's tables lack what it "
			       "needs; stacks stop at the allocating frame", strerror(-err));
		else
			t->skel->rodata->targ_jw = t->jw.bpf;
		t->walker = !err;
		/* names, with inlined frames from the nmethods' debug info (PcDesc, scopes) */
		if (t->walker) {
			t->jn = jstackname_new(t->vs, &t->jw);
			if (!t->jn) {
				p_warn("the Java stack walker is off: Method* names cannot be read (%s)",
				       strerror(errno));
				t->walker = false;
			} else if (!jstackname_inlining(t->jn)) {
				p_warn("inlined frames are not expanded: this JVM's nmethod layout is "
				       "not known; a compiled frame is named by its outermost method");
			}
		}
	}
	/* Method* names for the allocating frame (kept), also without the walker */
	if (t->vs && !t->jn)
		t->jn = jstackname_new(t->vs, &t->jw);
	if (t->vs && !jframes_layout(t->vs, &t->jl)) {
		t->skel->rodata->targ_anchor_sp = t->jl.anchor_sp;
		t->skel->rodata->targ_anchor_pc = t->jl.anchor_pc;
		t->skel->rodata->targ_anchor_fp = t->jl.anchor_fp;
		t->skel->rodata->targ_interp_lo = t->jl.interp_lo;
		t->skel->rodata->targ_interp_hi = t->jl.interp_hi;
		t->skel->rodata->targ_cc_lo = t->jl.cc_lo;
		t->skel->rodata->targ_cc_hi = t->jl.cc_hi;
	}
	/* class shares from the TLABs' contents (the object layout from VMStructs) */
	if (!o->exact && t->vs) {
		struct jobject_layout ol;
		struct mt_tlab_layout tl;

		if (!jobject_layout(p, t->vs, &ol) && !jobject_tlab_layout(t->vs, &ol, &tl)) {
			t->skel->rodata->targ_tl = tl;
			t->content = true;
		}
	}
	/* under windows totals come from every thread's own counter, and the
	 * keys carry their thread to be scaled to it (probe/threadctr.h); the
	 * maps hold more keys for that */
	t->tl_on = t->vs && !jthreadlist_layout(t->vs, &t->tl);
	/* the JVM's stops, taken out of the spans the windows' loss is
	 * measured on (threadctr_paused); without hsperfdata, spans as they are */
	if (t->tl_on) {
		char why[128];

		t->pd = perfdata_open(p, why, sizeof(why));
	}
	if (t->duty && o->windows && t->tl_on) {
		t->skel->rodata->targ_key_tid = 1;
		bpf_map__set_max_entries(t->skel->maps.allocs, 4 * MT_ALLOC_MAX_KEYS);
		bpf_map__set_max_entries(t->skel->maps.content, 4 * MT_ALLOC_MAX_KEYS);
	}
	/* windows attach and detach the TLAB uprobes many times a second:
	 * through uprobe_multi links where the kernel has them (see
	 * probe/uprobemulti.h for why the perf-event ones cannot) */
	if (t->duty && uprobemulti_supported()) {
		t->multi = true;
		bpf_program__set_expected_attach_type(t->skel->progs.handle_new_tlab,
			(enum bpf_attach_type)UPROBEMULTI_ATTACH_TYPE);
		bpf_program__set_expected_attach_type(t->skel->progs.handle_outside_tlab,
			(enum bpf_attach_type)UPROBEMULTI_ATTACH_TYPE);
	}
	/* the walker's stacks: a small preallocated map user space drains
	 * (probe/jstackstore.h), not one that allocates as it fills */
	if (t->walker) {
		jstackstore_size_map(t->skel->maps.jstacks);
	}
	err = alloc_bpf__load(t->skel);
	if (err) {
		bpfutil_load_failed("alloc", err);
		goto err_destroy;
	}
	if (t->walker && !(t->store = jstackstore_new(bpf_map__fd(t->skel->maps.jstacks),
									  JSTACKSTORE_MAX_KEPT))) {
		err = -errno;
		p_err("cannot keep the walker's stacks: %s", strerror(errno));
		goto err_destroy;
	}

	/* Attach: class unloading always; TLAB uprobes or object__alloc. */
	t->usdt.spec_map_fd = bpf_map__fd(t->skel->maps.usdt_specs);
	err = usdt_attach(&t->usdt, t->skel->progs.handle_class_unloaded, e, p->libjvm_host,
			  p->pid, "hotspot", "class__unloaded");
	if (err < 0) {
		p_err("cannot attach to hotspot:class__unloaded (%s): without it a reused "
		      "Klass* could be misnamed, so memtrace does not sample",
		      strerror(-err));
		goto err_links;
	}
	if (o->exact) {
		err = usdt_attach(&t->usdt, t->skel->progs.handle_object_alloc, e,
				  p->libjvm_host, p->pid, "hotspot", "object__alloc");
		if (err < 0) {
			p_err("cannot attach to hotspot:object__alloc: %s", strerror(-err));
			goto err_links;
		}
	} else {
		if (t->duty) { /* the trap's cost first, then the measuring window */
			pthread_condattr_t ca;
			double trap = UPROBECOST_DEFAULT_NS;

			pthread_mutex_init(&t->mu, NULL);
			/* duty_main() waits for a CLOCK_MONOTONIC deadline: the
			 * default clock (CLOCK_REALTIME) made every wait return at
			 * once, and the thread spun in futex() - a whole core of
			 * system time, taken from the JVM on a 2-core machine */
			pthread_condattr_init(&ca);
			pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
			pthread_cond_init(&t->cv, &ca);
			pthread_condattr_destroy(&ca);

			if (uprobecost_measure(t->skel->progs.handle_calibrate, 20000, &trap))
				trap = UPROBECOST_DEFAULT_NS;
			/* NULL: detach in place */
			t->det = detach_new(t->multi ? close_link_fd : destroy_link);
			/* every thread's counter now: the session's start (windows) */
			if (t->tl_on && read_threads(t, NULL)) {
				t->tl_on = false;
				p_warn("cannot read the JVM's thread list: estimates under time "
				       "windows stand on the windows' rates alone");
			}
			dutycycle_init(&t->dc, o->budget, trap, mono_ns(),
				       mono_ns() ^ (uint64_t)p->pid);
			t->dc.no_windows = !o->windows;
			if (getenv("MEMTRACE_WINDOW_LOG") &&
			    !(t->winlog = fopen(getenv("MEMTRACE_WINDOW_LOG"), "w")))
				p_warn("cannot write the window log %s: %s",
				       getenv("MEMTRACE_WINDOW_LOG"), strerror(errno));
			/* tests: fixed keep and duty ("KEEP:DUTY"), to check the
			 * scaled estimates against a workload's own count */
			if (getenv("MEMTRACE_TEST_DUTY") &&
			    sscanf(getenv("MEMTRACE_TEST_DUTY"), "%lf:%lf", &t->dc.force_keep,
				   &t->dc.force_duty) != 2)
				t->dc.force_keep = t->dc.force_duty = 0;
		}
		err = attach_tlab(t, p, e);
		if (err)
			goto err_links;
		t->attached = true;
	}
	/* per-thread totals: a thread's counter as it ends (windows) */
	if (t->skel->rodata->targ_key_tid &&
	    usdt_attach(&t->usdt, t->skel->progs.handle_thread_end, e, p->libjvm_host, p->pid,
			"hotspot", "thread__stop") < 0)
		p_warn("cannot attach to hotspot:thread__stop: a thread that ends between two "
		       "readings of its counter loses what it allocated since");
	/* the walker's pc cache needs to hear of code being freed */
	if (t->walker) {
		if (usdt_attach(&t->usdt, t->skel->progs.handle_code_unload, e, p->libjvm_host,
				p->pid, "hotspot", "compiled__method__unload") >= 0)
			t->skel->bss->cache_on = 1;
		else
			p_warn("cannot attach to hotspot:compiled__method__unload: the stack "
			       "walker runs without its pc cache (slower)");
	}
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.alloc_events), handle_event, t, NULL);
	if (!t->rb) {
		err = -errno;
		p_err("cannot open the alloc ring buffer: %s", strerror(errno));
		goto err_links;
	}
	if (t->duty) {
		t->elf = e; /* the windows attach the uprobes again */
		t->proc = *p;
		err = -pthread_create(&t->thread, NULL, duty_main, t);
		if (err) {
			p_err("cannot start the duty cycle's thread: %s", strerror(-err));
			alloctrace_free(t);
			errno = -err;
			return NULL;
		}
		t->thread_on = true;
		return t;
	}
	elfsym_free(e);
	return t;

err_links:
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(t->tlab[i]);
		if (t->tlab_fd[i] >= 0)
			close(t->tlab_fd[i]);
	}
	detach_free(t->det);
	usdt_detach_all(&t->usdt);
err_destroy:
	jstackstore_free(t->store);
	alloc_bpf__destroy(t->skel);
err_elf:
	elfsym_free(e);
err_free:
	jstackname_free(t->jn);
	perfdata_free(t->pd);
	klassname_cache_free(t->names);
	vmstructs_free(t->vs);
	free(t);
	errno = -err;
	return NULL;
}

void alloctrace_free(struct alloctrace *t)
{
	if (!t)
		return;
	if (t->thread_on) {
		pthread_mutex_lock(&t->mu);
		t->stop = true;
		pthread_cond_signal(&t->cv);
		pthread_mutex_unlock(&t->mu);
		pthread_join(t->thread, NULL);
	}
	if (t->duty) {
		pthread_mutex_destroy(&t->mu);
		pthread_cond_destroy(&t->cv);
	}
	ring_buffer__free(t->rb);
	for (int i = 0; i < 2; i++) {
		bpf_link__destroy(t->tlab[i]);
		if (t->tlab_fd[i] >= 0)
			close(t->tlab_fd[i]);
	}
	detach_free(t->det); /* the windows' detaches still waiting */
	if (t->winlog)
		fclose(t->winlog);
	elfsym_free(t->elf);
	usdt_detach_all(&t->usdt);
	alloc_bpf__destroy(t->skel);
	for (size_t i = 0; i < t->cap; i++)
		free(t->ents[i].name);
	free(t->ents);
	free(t->seen);
	perfdata_free(t->pd);
	threadctr_free(&t->tc);
	jstackname_free(t->jn);
	jstackstore_free(t->store);
	klassname_cache_free(t->names);
	vmstructs_free(t->vs);
	free(t);
}

static void warm_one(void *arg, uint64_t key, const struct mt_jstack *st)
{
	struct alloctrace *t = arg;

	(void)key;
	jstackname_warm(t->jn, st, t->seen_gen);
}

/* Move the stacks the walker stored since the last pass into user space
 * (probe/jstackstore.h), naming each new one while its compiled code still
 * lives (five times a second at most). */
static void warm_stacks(struct alloctrace *t)
{
	uint64_t now = mono_ns();

	if (!t->store || now - t->last_warm < 200000000ull)
		return;
	t->last_warm = now;
	jstackname_seen_gen(t->jn, t->seen_gen);
	jstackstore_drain(t->store, warm_one, t);
}

/* The program's cost counters, summed over CPUs. */
static struct mt_alloc_cost cost_now(struct alloctrace *t)
{
	int ncpu = libbpf_num_possible_cpus();
	struct mt_alloc_cost sum = { 0 }, *per;
	uint32_t zero = 0;

	if (ncpu <= 0 || !(per = calloc((size_t)ncpu, sizeof(*per))))
		return sum;
	if (!bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.alloc_cost), &zero, per))
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
 * Each thread's counters are kept in t->seen for window_thread_keeps (one
 * pass over the map; a thread that finds no room there is left out: it
 * keeps its old keep, or is new). */
static void window_measure(struct alloctrace *t, struct dutycycle_measure *m)
{
	struct mt_alloc_cost c = cost_now(t);
	int fd = bpf_map__fd(t->skel->maps.alloc_tids);
	uint32_t key, next, *prev = NULL;
	struct mt_alloc_tid v;
	uint64_t busiest = 0;
	double corr;

	m->raw_bytes = c.raw_bytes - t->base.raw_bytes;
	m->samples = c.samples - t->base.samples;
	m->bpf_ns = c.ns - t->base.ns;
	m->skipped = c.skipped - t->base.skipped;
	m->skipped_ns = c.skipped_ns - t->base.skipped_ns;
	m->max_thread_samples = 0;
	m->slow_share = 0;
	t->nseen = 0;
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		bool in_window;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		in_window = v.window == t->skel->bss->window;
		if (in_window && v.samples > m->max_thread_samples) {
			m->max_thread_samples = v.samples;
			busiest = v.thread;
		}
		if (t->nseen == t->capseen) {
			size_t cap = t->capseen ? 2 * t->capseen : 64;
			struct tid_seen *n = realloc(t->seen, cap * sizeof(*n));

			if (!n)
				continue;
			t->seen = n;
			t->capseen = cap;
		}
		t->seen[t->nseen++] = (struct tid_seen){ key, in_window, v.samples, v };
	}
	/* the busiest thread's slowdown in the windows before, as measured */
	corr = busiest ? threadctr_corr(&t->tc, busiest) : 0;
	if (corr > 1)
		m->slow_share = 1 - 1 / corr;
	/* and what the windows cost it, all told */
	m->loss_ok = busiest && threadctr_loss(&t->tc, busiest, &m->loss_share);
}

/* The window just closed (its number still current): each thread seen in
 * it gets its keep for the next one from its own rate there; a thread not
 * seen loses its entry and is a new thread when it comes back (its first
 * new_free samples of a window in full, then the global keep). A tid the LRU
 * counters forgot (over MT_ALLOC_MAX_TIDS threads) keeps a stale entry until
 * reused; a full alloc_tkeep leaves new threads as new: both keep within the
 * budget. Under t->mu. */
static void window_thread_keeps(struct alloctrace *t, uint64_t len)
{
	int kfd = bpf_map__fd(t->skel->maps.alloc_tkeep);
	unsigned int thinned = 0;
	struct mt_alloc_tkeep k;

	for (size_t i = 0; i < t->nseen; i++) {
		const struct tid_seen *s = &t->seen[i];

		if (!s->in_window || !len) {
			bpf_map_delete_elem(kfd, &s->tid);
			continue;
		}
		k.keep = dutycycle_thread_keep(&t->dc, (double)s->samples * 1e9 / (double)len);
		/* the next window's scale, for how much slower it allocates in windows */
		k.scale = threadctr_scale(&t->tc, s->v.thread, (uint32_t)t->dc.scale,
					  MT_ALLOC_SCALE_ONE);
		thinned += k.keep < DUTYCYCLE_KEEP_ONE;
		bpf_map_update_elem(kfd, &s->tid, &k, BPF_ANY);
	}
	if (thinned > t->thinned)
		t->thinned = thinned;
}

/* A new window: its number and weight scale, its counters from now. */
static void window_open(struct alloctrace *t)
{
	t->skel->bss->window++;
	t->skel->data->keep = t->dc.keepk;
	t->skel->bss->new_free = dutycycle_new_free(&t->dc);
	t->skel->data->weight_scale = (uint32_t)t->dc.scale;
	t->base = cost_now(t);
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
static void detach_tlab(struct alloctrace *t)
{
	for (int i = 0; i < 2; i++) {
		if (t->det)
			detach_later(t->det, t->tlab[i]);
		else
			bpf_link__destroy(t->tlab[i]);
		t->tlab[i] = NULL;
		if (t->tlab_fd[i] >= 0 && t->det)
			detach_later(t->det, (void *)(intptr_t)(t->tlab_fd[i] + 1));
		else if (t->tlab_fd[i] >= 0)
			close(t->tlab_fd[i]);
		t->tlab_fd[i] = -1;
	}
	t->attached = false;
}

/* Read every Java thread's allocation counter into t->tc (probe/threadctr.h),
 * after the program's last sample of each (window_measure() into @m, NULL:
 * not wanted; it refreshes t->seen, with or without a thread list): a
 * thread that ended since the last reading leaves the list now, and its
 * count at hotspot:thread__stop is in that sample - a stale t->seen lost it
 * (31 % of a thread once). Under t->mu. 0 or -errno. */
static int read_threads(struct alloctrace *t, struct dutycycle_measure *m)
{
	struct dutycycle_measure own;
	uint64_t *jts, *ctr;
	size_t n;
	bool *ok;
	int err, tries = 0;

	window_measure(t, m ? m : &own);
	if (!t->tl_on)
		return -ENOENT;
	do
		err = jthreadlist_read(&t->tl, &jts, &ctr, &ok, &n);
	while (err == -EAGAIN && ++tries < 4);
	if (err)
		return err;
	for (size_t i = 0; i < t->nseen; i++)
		if (t->seen[i].v.thread)
			threadctr_sampled(&t->tc, t->seen[i].v.thread, t->seen[i].v.allocated);
	err = threadctr_list(&t->tc, jts, ctr, ok, n);
	free(jts);
	free(ctr);
	free(ok);
	return err;
}

/* The JVM's stops so far (threadctr_paused), read after the threads'
 * counters (a stop ending now counts at the next reading): only the open
 * and the tail, whose spans the loss measures, need them. Under t->mu. */
static void read_stops(struct alloctrace *t)
{
	struct mt_safepoints sp;

	if (t->pd && !perfdata_safepoints(t->pd, &sp))
		threadctr_paused(&t->tc, sp.time_ns);
}

/* MEMTRACE_WINDOW_LOG (window_log()): "loss <readings> <share>", the newest
 * single loss reading (probe/threadctr.h) of the thread with the most
 * samples in the window before, at each open. Under t->mu. */
static void window_log_loss(struct alloctrace *t)
{
	uint64_t jt = 0, most = 0;
	unsigned n;
	double x;

	for (size_t i = 0; i < t->nseen; i++)
		if (t->seen[i].in_window && t->seen[i].samples > most) {
			most = t->seen[i].samples;
			jt = t->seen[i].v.thread;
		}
	if (jt && threadctr_reading(&t->tc, jt, &n, &x))
		fprintf(t->winlog, "loss %u %.5f\n", n, x);
}

/*
 * Before a window opens after a detach (no program runs): a new attach
 * generation, and each thread the program has seen starts it from its
 * counter read now, so that its first sample in the window weighs what it
 * used since (without this, nothing: a thread slower than a sample per
 * window would never count). The same reading measures each thread's
 * slowdown in the window before (threadctr_open). A thread not read starts
 * afresh at its first sample. Under t->mu.
 */
static void window_baselines(struct alloctrace *t, uint64_t now)
{
	int fd = bpf_map__fd(t->skel->maps.alloc_tids);
	uint32_t gen = ++t->skel->bss->attach_gen;

	if (read_threads(t, NULL)) /* after every thread the program has now */
		return;
	read_stops(t);
	threadctr_open(&t->tc, now);
	if (t->winlog) /* the bench's hook: the busiest thread's newest loss reading */
		window_log_loss(t);
	for (size_t i = 0; i < t->nseen; i++) {
		struct mt_alloc_tid v;
		uint64_t ctr;

		/* fresh: samples after the close moved it (weighing nothing) */
		if (bpf_map_lookup_elem(fd, &t->seen[i].tid, &v) || !v.thread ||
		    !threadctr_last(&t->tc, v.thread, &ctr) || !threadctr_valid(ctr, v.allocated))
			continue;
		v.allocated = ctr;
		v.attach = gen;
		bpf_map_update_elem(fd, &t->seen[i].tid, &v, BPF_EXIST);
	}
}

/* bench/window_profile.sh: each attach and detach of the windows, as
 * "attach|detach <CLOCK_MONOTONIC ns before the call> <ns after> <ns planned>",
 * to the file MEMTRACE_WINDOW_LOG names (a bench's hook, off by default). */
static void window_log(struct alloctrace *t, const char *what, uint64_t before,
		       uint64_t planned)
{
	if (!t->winlog)
		return;
	fprintf(t->winlog, "%s %llu %llu %llu\n", what, (unsigned long long)before,
		(unsigned long long)mono_ns(), (unsigned long long)planned);
	fflush(t->winlog);
}

/* The duty cycle's thread: at each window edge, close or open a window (and
 * THREADCTR_TAIL_NS after each detach, read the threads' counters); the slow
 * attach and detach calls happen outside the lock. */
static void *duty_main(void *arg)
{
	struct alloctrace *t = arg;

	pthread_mutex_lock(&t->mu);
	while (!t->stop) {
		struct dutycycle_measure m = { 0 };
		uint64_t now = mono_ns(), next = dutycycle_next(&t->dc);
		enum dutycycle_action a;
		struct timespec ts;
		uint64_t len, start;
		bool closing;

		/* THREADCTR_TAIL_NS after a detach: the threads' counters, for
		 * the windows' whole cost (threadctr_tail) */
		if (t->tail_due && !t->dc.on && now >= t->tail_due) {
			t->tail_due = 0;
			if (!read_threads(t, NULL)) {
				read_stops(t);
				threadctr_tail(&t->tc, now);
			}
			continue;
		}
		if (t->tail_due && !t->dc.on && t->tail_due < next)
			next = t->tail_due;
		if (now < next) { /* sleep until the edge (or until told to stop) */
			clock_gettime(CLOCK_MONOTONIC, &ts);
			ts.tv_sec += (time_t)((next - now) / 1000000000ull);
			ts.tv_nsec += (long)((next - now) % 1000000000ull);
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&t->cv, &t->mu, &ts);
			continue;
		}
		closing = t->dc.on;
		len = now > t->dc.wstart ? now - t->dc.wstart : 0; /* as dutycycle_tick() takes it */
		if (closing) { /* the window ends: later samples add nothing */
			t->skel->data->weight_scale = 0;
			if (!read_threads(t, &m))
				threadctr_close(&t->tc, now);
		}
		a = dutycycle_tick(&t->dc, now, &m);
		if (closing)
			window_thread_keeps(t, len);
		if (a == DUTYCYCLE_RESCALE)
			window_open(t);
		pthread_mutex_unlock(&t->mu);
		if (a == DUTYCYCLE_DETACH) {
			uint64_t t0 = mono_ns();

			detach_tlab(t);
			t->detached = true;
			window_log(t, "detach", t0, next);
			if (t->tl_on)
				t->tail_due = t0 + THREADCTR_TAIL_NS;
		}
		start = 0;
		if (a == DUTYCYCLE_ATTACH)
			t->tail_due = 0; /* the next window came first: no tail reading */
		if (a == DUTYCYCLE_ATTACH && !t->attached) {
			/* no program runs now: the window opens (its weights) and
			 * each thread's next sample weighs from its counter read
			 * here, so the window counts from here */
			pthread_mutex_lock(&t->mu);
			start = mono_ns();
			if (t->detached)
				window_baselines(t, start);
			t->detached = false;
			window_open(t);
			pthread_mutex_unlock(&t->mu);
			/* the breakpoints are in place when the call returns */
			if (!attach_tlab(t, &t->proc, t->elf))
				t->attached = true;
			window_log(t, "attach", start, next);
		}
		pthread_mutex_lock(&t->mu);
		if (a == DUTYCYCLE_ATTACH) {
			if (!start)
				window_open(t);
			dutycycle_started(&t->dc, start ? start : mono_ns());
		}
	}
	pthread_mutex_unlock(&t->mu);
	return NULL;
}

int alloctrace_poll(struct alloctrace *t, int timeout_ms)
{
	int n = ring_buffer__poll(t->rb, timeout_ms);

	warm_stacks(t);
	return n == -EINTR ? 0 : n;
}

void alloctrace_duty(struct alloctrace *t, struct alloctrace_duty *d)
{
	struct dutycycle_measure m = { 0 };
	uint64_t now = mono_ns();
	double kept, seen;

	memset(d, 0, sizeof(*d));
	if (!t->duty)
		return;
	pthread_mutex_lock(&t->mu);
	d->on = true;
	d->budget = t->dc.budget;
	d->observed = dutycycle_observed(&t->dc, now);
	d->duty = t->dc.duty;
	d->keep = t->dc.wkeep;
	d->threads_thinned = t->thinned;
	/* the closed windows and the open one: a run shorter than a window
	 * (a burst) would otherwise say 1 while most of it was thinned */
	if (t->dc.on && !t->dc.wclosed)
		window_measure(t, &m);
	kept = t->dc.kept + (double)m.samples;
	seen = t->dc.seen + (double)(m.samples + m.skipped);
	d->kept_share = seen ? kept / seen : 1;
	d->max_cost_share = t->dc.max_share;
	d->rate = t->dc.rate;
	d->cost_ns = t->dc.cost_ns;
	d->trap_ns = t->dc.trap_ns;
	d->windows = t->dc.windows;
	d->period_ms = (double)t->dc.period_ns / 1e6;
	d->loss_share = t->dc.loss;
	d->loss_adj = t->dc.loss_adj;
	/* the thinning's spread: known only when no window scaled the weights;
	 * none when the total is counted */
	d->counted_total = t->tl_on && t->skel->rodata->targ_key_tid;
	d->stderr_bytes = d->counted_total ? 0 :
			  d->observed > 0.999 && !t->dc.windowed ?
			  sqrt((double)cost_now(t).var_kib2) * 1024 : -1;
	pthread_mutex_unlock(&t->mu);
}

/*
 * The factors that turn the kernel's scaled weights into bytes, now: one
 * for the whole (the duty cycle's correction, 1 without windows), and
 * under windows with per-thread keys one per thread - its counter's move
 * since the session began over its keys' weights (probe/threadctr.h) -,
 * with @f->other for the keys of threads without one (the other threads'
 * bytes over their weights) and @f->norm for the bytes of threads never
 * sampled (all keys scaled by exact / counted then). Under no lock.
 */
struct factors {
	double global, other, norm;
	bool per_thread;
	struct idmap by_tid, by_jt; /* -> double * into vals */
	double *vals;
};

static void factors_free(struct factors *f)
{
	idmap_free(&f->by_tid);
	idmap_free(&f->by_jt);
	free(f->vals);
}

/* @by_tid (tid -> double *: the weights each thread's keys hold) and
 * @total (all keys'): the denominators, when not the program's per-thread
 * sums (the class view's parsed TLABs); NULL: those sums. */
static void factors_now(struct alloctrace *t, struct factors *f, const struct idmap *by_tid,
			double total)
{
	struct dutycycle_measure m = { 0 };
	double exact, scaled, known_exact = 0, known_scaled = 0;
	bool counted;
	int err = 0;

	memset(f, 0, sizeof(*f));
	idmap_init(&f->by_tid);
	idmap_init(&f->by_jt);
	f->global = f->other = f->norm = 1;
	/* keys by thread (windows allowed): every thread's bytes since the
	 * session began are its counter's move, not the windows' rates nor the
	 * thinned samples' sum */
	counted = t->tl_on && (t->dc.windowed || t->skel->rodata->targ_key_tid);
	pthread_mutex_lock(&t->mu);
	/* one pass over the threads: the open window's bytes, and t->seen
	 * (with the threads' counters when counted) */
	if (counted)
		err = read_threads(t, &m);
	else if (t->dc.on && !t->dc.wclosed)
		window_measure(t, &m);
	f->global = dutycycle_factor(&t->dc, mono_ns(), m.raw_bytes);
	if (!counted)
		goto out;
	scaled = by_tid ? total : (double)cost_now(t).scaled_bytes;
	if (err || scaled <= 0)
		goto out;
	exact = threadctr_total(&t->tc);
	f->global = f->other = exact / scaled;
	if (!t->skel->rodata->targ_key_tid || !t->nseen ||
	    !(f->vals = calloc(t->nseen, sizeof(*f->vals))))
		goto out;
	for (size_t i = 0; i < t->nseen; i++) {
		const struct mt_alloc_tid *v = &t->seen[i].v;
		const double *d = by_tid ? idmap_get(by_tid, t->seen[i].tid) : NULL;
		double bytes, w = by_tid ? (d ? *d : 0) : (double)v->scaled;

		if (w <= 0 || !v->thread || !threadctr_thread(&t->tc, v->thread, &bytes))
			continue;
		f->vals[i] = bytes / w;
		if (idmap_put(&f->by_tid, t->seen[i].tid, &f->vals[i]) ||
		    idmap_put(&f->by_jt, v->thread, &f->vals[i]))
			continue;
		known_exact += bytes;
		known_scaled += w;
	}
	f->per_thread = true;
	if (scaled > known_scaled + 0.5)
		f->other = (exact - known_exact) / (scaled - known_scaled);
	else if (known_exact > 0) /* bytes of threads never sampled: spread */
		f->norm = exact / known_exact;
	if (f->other < 0)
		f->other = 0;
out:
	pthread_mutex_unlock(&t->mu);
}

/* The factor for the keys of thread @tid (JavaThread @jt when @tid is 0). */
static double factor_of(const struct factors *f, uint32_t tid, uint64_t jt)
{
	double *v;

	if (!f->per_thread)
		return f->global;
	v = tid ? idmap_get(&f->by_tid, tid) : idmap_get(&f->by_jt, jt);
	return (v ? *v : f->other) * f->norm;
}

/* Rows alike but for their thread, next to each other. */
static int row_cmp(const void *a, const void *b)
{
	const struct alloc_row *x = a, *y = b;

	if (x->class_name != y->class_name)
		return x->class_name < y->class_name ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	if (x->java_pc != y->java_pc)
		return x->java_pc < y->java_pc ? -1 : 1;
	if (x->method != y->method)
		return x->method < y->method ? -1 : 1;
	if (x->jstack != y->jstack)
		return x->jstack < y->jstack ? -1 : 1;
	return 0;
}

/* Merge the per-thread rows of one key (sorted first). */
static void rows_merge(struct alloc_row *rows, size_t *n)
{
	size_t w = 0;

	if (*n < 2)
		return;
	qsort(rows, *n, sizeof(*rows), row_cmp);
	for (size_t i = 1; i < *n; i++) {
		if (!row_cmp(&rows[w], &rows[i])) {
			rows[w].bytes += rows[i].bytes;
			rows[w].samples += rows[i].samples;
		} else {
			rows[++w] = rows[i];
		}
	}
	*n = w + 1;
}

struct alloc_row *alloctrace_rows(struct alloctrace *t, size_t *n)
{
	int fd = bpf_map__fd(t->skel->maps.allocs);
	struct mt_alloc_key key, next, *prev = NULL;
	struct alloc_row *rows = NULL, *tmp;
	struct factors f = { .global = 1, .other = 1, .norm = 1 };
	size_t cap = 0;

	ring_buffer__consume(t->rb); /* names of the newest keys first */
	*n = 0;
	if (t->duty)
		factors_now(t, &f, NULL, 0);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct mt_alloc_val v;
		struct name_ent *e;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			tmp = realloc(rows, cap * sizeof(*rows));
			if (!tmp)
				break;
			rows = tmp;
		}
		e = find_ent(t, key.klass, key.gen);
		if (!e) { /* its announcement was lost: read the name now */
			resolve(t, key.klass, key.gen, 0);
			e = find_ent(t, key.klass, key.gen);
		}
		rows[*n] = (struct alloc_row){ e ? e->name : "(unknown class)", key.stack_id,
					       key.gen, key.java_pc, key.method, key.jstack,
					       (uint64_t)((double)v.bytes * factor_of(&f, key.tid, 0) +
							  0.5), v.samples };
		/* the walker's keys leave the allocating frame to its stack (key is
		 * the iteration's cursor: not changed) */
		if (key.jstack && !key.java_pc && !key.method && t->store) {
			struct mt_jstack st;

			if (!jstackstore_get(t->store, key.jstack, &st))
				jwalk_leaf(t->vs, &t->jw, &st, &rows[*n].java_pc, &rows[*n].method);
		}
		(*n)++;
	}
	factors_free(&f);
	if (t->skel->rodata->targ_key_tid)
		rows_merge(rows, n);
	return rows;
}

/* The name of (@klass, @gen), read now if its announcement was lost. */
static const char *class_name(struct alloctrace *t, uint64_t klass, uint32_t gen)
{
	struct name_ent *e = find_ent(t, klass, gen);

	if (!e) {
		resolve(t, klass, gen, 0);
		e = find_ent(t, klass, gen);
	}
	return e ? e->name : "(unknown class)";
}

/* Add @bytes, @tlabs and the spread's sums to @name's row in @c (*n rows,
 * room for one more). */
static void class_add(struct alloc_class *c, size_t *n, const char *name, uint64_t bytes,
		      uint64_t tlabs, double sq, double cross)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (c[i].class_name == name || !strcmp(c[i].class_name, name))
			break;
	if (i == *n)
		c[(*n)++] = (struct alloc_class){ name, 0, 0, 0, 0, 0 };
	c[i].bytes += bytes;
	c[i].tlabs += tlabs;
	c[i].sq_kib2 += sq;
	c[i].cross_kib2 += cross;
}

/* Each class's share s = Y_c / Y and its standard error by the ratio
 * estimator's linearisation over the draws i (kept TLABs, objects outside
 * them): var(s) = sum_i (y_ic - s W_i)^2 / Y^2
 *               = (sum y_ic^2 - 2 s sum y_ic W_i + s^2 sum W_i^2) / Y^2.
 * It holds the thinning's spread and the parsed slices' (a slice that
 * misses a class); at keep 1 it still counts the TLAB-to-TLAB variation,
 * so it is an upper bound there. */
static void class_spread(struct alloc_class *c, size_t n, double w2, bool known)
{
	double y = 0;

	for (size_t i = 0; i < n; i++)
		y += (double)c[i].bytes / 1024;
	for (size_t i = 0; i < n; i++) {
		double s = y > 0 ? (double)c[i].bytes / 1024 / y : 0;
		double v = c[i].sq_kib2 - 2 * s * c[i].cross_kib2 + s * s * w2;

		c[i].share_stderr = !known ? -1 : y > 0 && v > 0 ? sqrt(v) / y : 0;
	}
}

struct alloc_class *alloctrace_classes(struct alloctrace *t, size_t *n,
				       uint64_t stats[MT_CONTENT_NSTATS])
{
	int fd = bpf_map__fd(t->skel->maps.content), sfd = bpf_map__fd(t->skel->maps.tlab_state);
	struct mt_content_key key, next, *prev = NULL;
	uint64_t tkey, tnext, *tprev = NULL;
	struct alloc_class *c = NULL, *tmp;
	struct factors f = { .global = 1, .other = 1, .norm = 1 };
	struct content_ent { struct mt_content_key k; struct mt_content_val v; } *ents = NULL;
	size_t cap = 0, ne = 0, capent = 0;
	double w2, ww, total = 0, *sums = NULL;
	struct idmap by_tid;

	*n = 0;
	w2 = (double)bpfutil_percpu_sum_at(bpf_map__fd(t->skel->maps.content_stats),
					   MT_CONTENT_W2);
	if (stats)
		for (uint32_t i = 0; i < MT_CONTENT_NSTATS; i++)
			stats[i] = bpfutil_percpu_sum_at(bpf_map__fd(t->skel->maps.content_stats), i);
	if (!t->content)
		return NULL;
	idmap_init(&by_tid);
	ring_buffer__consume(t->rb); /* names of the newest keys first */
	/* parsed TLABs and objects outside TLABs (keyed by thread: each
	 * thread's sum first, for its factor) */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct content_ent *x;

		key = next;
		prev = &key;
		if (ne == capent) {
			capent = capent ? 2 * capent : 256;
			if (!(x = realloc(ents, capent * sizeof(*ents))))
				break;
			ents = x;
		}
		if (bpf_map_lookup_elem(fd, &key, &ents[ne].v))
			continue;
		ents[ne].k = key;
		total += (double)ents[ne].v.bytes;
		ne++;
	}
	if (t->duty && t->skel->rodata->targ_key_tid && ne &&
	    (sums = calloc(ne, sizeof(*sums)))) {
		size_t ns = 0;

		for (size_t i = 0; i < ne; i++) {
			double *d = idmap_get(&by_tid, ents[i].k.tid);

			if (!d && !idmap_put(&by_tid, ents[i].k.tid, &sums[ns]))
				d = &sums[ns++];
			if (d)
				*d += (double)ents[i].v.bytes;
		}
		factors_now(t, &f, &by_tid, total);
	} else if (t->duty) {
		factors_now(t, &f, NULL, 0);
	}
	for (size_t i = 0; i < ne; i++) {
		if (*n + 1 >= cap) {
			cap = cap ? 2 * cap : 256;
			if (!(tmp = realloc(c, cap * sizeof(*c))))
				break;
			c = tmp;
		}
		class_add(c, n, class_name(t, ents[i].k.klass, ents[i].k.gen),
			  (uint64_t)((double)ents[i].v.bytes * factor_of(&f, ents[i].k.tid, 0) + 0.5),
			  ents[i].v.parsed, (double)ents[i].v.sq_kib2, (double)ents[i].v.cross_kib2);
	}
	free(ents);
	free(sums);
	idmap_free(&by_tid);
	/* kept TLABs not parsed yet: all their opening class's, unless each
	 * thread is scaled to its counter (its parsed TLABs stand for it) */
	while (!f.per_thread && !bpf_map_get_next_key(sfd, tprev, &tnext)) {
		struct mt_tlab_state st;

		tkey = tnext;
		tprev = &tkey;
		if (bpf_map_lookup_elem(sfd, &tkey, &st) || !st.weight)
			continue;
		if (*n + 1 >= cap) {
			cap = cap ? 2 * cap : 256;
			if (!(tmp = realloc(c, cap * sizeof(*c))))
				break;
			c = tmp;
		}
		ww = (double)(st.weight >> 10) * (double)(st.weight >> 10);
		w2 += ww;
		class_add(c, n, class_name(t, st.klass, st.gen),
			  (uint64_t)((double)st.weight * factor_of(&f, 0, tkey) + 0.5), 0, ww, ww);
	}
	/* the draws' spread: known without windows, or with each thread scaled
	 * to its counter (a thread's share of each window is then its own) */
	class_spread(c, *n, w2, !(t->duty && t->dc.windowed) || f.per_thread);
	factors_free(&f);
	return c;
}

int alloctrace_stack(struct alloctrace *t, int32_t id, uint64_t *ips, int max)
{
	uint64_t buf[MT_ALLOC_STACK_DEPTH];
	int n = 0;

	if (id < 0 || bpf_map_lookup_elem(bpf_map__fd(t->skel->maps.alloc_stacks), &id, buf))
		return -ENOENT;
	while (n < MT_ALLOC_STACK_DEPTH && n < max && buf[n]) {
		ips[n] = buf[n];
		n++;
	}
	return n;
}

uint64_t alloctrace_lost_events(struct alloctrace *t)
{
	return bpfutil_percpu_sum(bpf_map__fd(t->skel->maps.alloc_drops));
}

uint64_t alloctrace_lost_keys(struct alloctrace *t)
{
	return bpfutil_percpu_sum(bpf_map__fd(t->skel->maps.alloc_key_drops));
}

uint64_t alloctrace_lost_stacks(struct alloctrace *t)
{
	return bpfutil_percpu_sum(bpf_map__fd(t->skel->maps.alloc_stack_drops));
}

uint64_t alloctrace_unloads(struct alloctrace *t)
{
	return t->unloads;
}

uint64_t alloctrace_unnamed(struct alloctrace *t)
{
	return t->unnamed;
}

const char *alloctrace_method_name(struct alloctrace *t, uint64_t method, uint32_t gen)
{
	if (!t->jn)
		return NULL;
	jstackname_seen_gen(t->jn, t->seen_gen);
	return jstackname_method(t->jn, method, gen);
}

int alloctrace_java_frames(struct alloctrace *t, const struct alloc_row *r, const char **names,
			   int max, bool stubs)
{
	struct mt_jstack st;

	if (!t->store || !r->jstack || jstackstore_get(t->store, r->jstack, &st))
		return -ENOENT;
	jstackname_seen_gen(t->jn, t->seen_gen);
	return jstackname_frames(t->jn, &st, r->gen, names, max, stubs);
}

int alloctrace_java_frames_full(struct alloctrace *t, const struct alloc_row *r,
				struct profile_frame *frames, int max, bool stubs)
{
	struct mt_jstack st;

	if (!t->store || !r->jstack || jstackstore_get(t->store, r->jstack, &st))
		return -ENOENT;
	jstackname_seen_gen(t->jn, t->seen_gen);
	return jstackname_frames_full(t->jn, &st, r->gen, frames, max, stubs);
}

uint64_t alloctrace_unknown_frames(struct alloctrace *t)
{
	return t->jn ? jstackname_unknown(t->jn) : 0;
}

int alloctrace_walks(struct alloctrace *t, uint64_t *by_stop)
{
	int fd = bpf_map__fd(t->skel->maps.jstack_stops), ncpu = libbpf_num_possible_cpus();
	uint64_t *v;

	memset(by_stop, 0, MT_JSTOP_NSTOPS * sizeof(*by_stop));
	if (!t->walker)
		return -ENOENT;
	if (ncpu <= 0)
		return -EINVAL;
	v = calloc((size_t)ncpu, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (uint32_t i = 0; i < MT_JSTOP_NSTOPS; i++)
		if (!bpf_map_lookup_elem(fd, &i, v))
			for (int c = 0; c < ncpu; c++)
				by_stop[i] += v[c];
	free(v);
	return 0;
}

uint64_t alloctrace_lost_jstacks(struct alloctrace *t)
{
	return bpfutil_percpu_sum(bpf_map__fd(t->skel->maps.jstack_drops));
}
