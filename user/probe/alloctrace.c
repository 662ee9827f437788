// SPDX-License-Identifier: GPL-2.0
/*
 * alloctrace.c - the allocation tracer: the alloc BPF object's lifecycle
 * (open -> rodata -> load -> attach, a named step each), its events, and
 * what it answers through its parts (allocnames, allocwindows, allocrows).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memtrace/jstack.h"
#include "memtrace/alloc.h"
#include "alloc.skel.h"
#include "probe/alloctrace.h"
#include "jvm/elfsym.h"
#include "jvm/hotspot.h"
#include "probe/allocnames.h"
#include "probe/allocrows.h"
#include "probe/allocwindows.h"
#include "probe/bpfutil.h"
#include "probe/kfeatures.h"
#include "jstack/jstackstore.h"
#include "jstack/jframes.h"
#include "jvm/jobject.h"
#include "jstack/jstackname.h"
#include "jstack/jwalk.h"
#include "jvm/jvmflags.h"
#include "jvm/klassname.h"
#include "jvm/pidns.h"
#include "probe/usdtspec.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

/* the kernel features its BPF object needs (ring buffer, USDT arguments, the walker and TLAB parser) */
#define ALLOC_NEEDS (KF_RINGBUF | KF_COOKIE | KF_LOOP)

struct alloctrace {
	struct alloc_bpf *skel;
	struct ring_buffer *rb;
	struct usdt_links usdt;
	struct mt_vmstructs *vs;  /* NULL in exact mode when unreadable */
	bool exact;
	struct jframes_layout jl;
	struct jwalk_layout jw;
	bool walker;              /* the Java stack walker is on */
	uint32_t depth;           /* its bound, in frames (opts.stack_depth) */
	bool content;             /* class shares from the TLABs' contents */
	struct jstackname *jn;    /* names for the walker's stacks */
	struct jstackstore *store; /* the walker's stacks, drained from `jstacks` */
	uint64_t last_warm;       /* mono_ns of the last pass over new stacks */
	struct allocnames names;  /* (klass, gen) -> class name */
	struct allocwindows win;  /* the TLAB uprobes and the duty cycle */
	struct allocrows_src src; /* what the rows are read from */
};

static int handle_event(void *ctx, void *data, size_t len)
{
	const struct mt_alloc_event *e = data;
	struct alloctrace *t = ctx;

	if (len < sizeof(*e))
		return 0;
	if (e->kind == MT_ALLOC_UNLOAD)
		allocnames_unload(&t->names, e->gen);
	else if (e->kind == MT_ALLOC_NEW_KEY)
		allocnames_resolve(&t->names, e->klass, e->gen, e->name_len);
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

/* The JVM's tables and the class names: VMStructs (needed but in exact
 * mode, which names classes from the probe), and the Klass* cache or, in
 * exact mode, the flag the probe needs. */
static int open_names(struct alloctrace *t, const struct mt_proc *p,
		      const struct alloctrace_opts *o)
{
	struct mt_klassname_cache *cache = NULL;
	int err;

	err = vmstructs_open(p, &t->vs);
	if (err && !o->exact) {
		p_err("cannot read the VMStructs tables of pid %d (%s): class names "
		      "cannot be resolved", p->pid, vmstructs_strerror(err));
		return err;
	}
	if (o->exact) {
		err = exact_preflight(p, t->vs);
		if (err)
			return err;
	} else {
		cache = klassname_cache_new(t->vs);
		if (!cache) {
			err = -errno;
			p_err("this JVM's VMStructs lack Klass::_name or Symbol: class names "
			      "cannot be resolved");
			return err;
		}
	}
	allocnames_init(&t->names, p->pid, o->exact, cache);
	return 0;
}

/* Weigh a sample by the bytes its thread used since its last one (its
 * Thread::_allocated_bytes), not by the new TLAB's size. */
static void set_weights(struct alloctrace *t)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(t->vs);
	uint64_t off = hs->thread_allocated_bytes;

	if (hs->has_thread_allocated_bytes && off && off < UINT32_MAX)
		t->skel->rodata->targ_allocated_off = (uint32_t)off;
	else
		p_warn("this JVM's VMStructs lack Thread::_allocated_bytes: a sample stands "
		       "for its new TLAB's size, and TLABs a GC retires unused count as "
		       "allocated");
}

/* The Java stack walker's layout and the names of its frames, with inlined
 * frames from the nmethods' debug info (PcDesc, scopes). Off (warned) when
 * the tables lack what it needs. */
static void set_walker(struct alloctrace *t)
{
	int err = jwalk_layout(t->vs, &t->jw);

	if (err)
		p_warn("the Java stack walker is off (%s): this JVM's tables lack what it "
		       "needs; stacks stop at the allocating frame", strerror(-err));
	else
		t->skel->rodata->targ_jw = t->jw.bpf;
	t->skel->rodata->targ_jdepth = MT_JSTACK_WALK_FRAMES(t->depth);
	t->walker = !err;
	if (!t->walker)
		return;
	t->jn = jstackname_new(t->vs, &t->jw);
	if (!t->jn) {
		p_warn("the Java stack walker is off: Method* names cannot be read (%s)",
		       strerror(errno));
		t->walker = false;
		return;
	}
	jstackname_set_depth(t->jn, t->depth);
	if (!jstackname_inlining(t->jn))
		p_warn("inlined frames are not expanded: this JVM's nmethod layout is "
		       "not known; a compiled frame is named by its outermost method");
}

/* The allocating frame: the thread's frame anchor, the interpreter's and the
 * code cache's ranges, and Method* names (kept also without the walker). */
static void set_frames(struct alloctrace *t)
{
	if (!t->jn)
		t->jn = jstackname_new(t->vs, &t->jw);
	if (jframes_layout(t->vs, &t->jl))
		return;
	t->skel->rodata->targ_anchor_sp = t->jl.anchor_sp;
	t->skel->rodata->targ_anchor_pc = t->jl.anchor_pc;
	t->skel->rodata->targ_anchor_fp = t->jl.anchor_fp;
	t->skel->rodata->targ_interp_lo = t->jl.interp_lo;
	t->skel->rodata->targ_interp_hi = t->jl.interp_hi;
	t->skel->rodata->targ_cc_lo = t->jl.cc_lo;
	t->skel->rodata->targ_cc_hi = t->jl.cc_hi;
}

/* Class shares from the TLABs' contents (the object layout from VMStructs). */
static void set_content(struct alloctrace *t, const struct mt_proc *p)
{
	struct jobject_layout ol;
	struct mt_tlab_layout tl;

	if (!jobject_layout(p, t->vs, &ol) && !jobject_tlab_layout(t->vs, &ol, &tl)) {
		t->skel->rodata->targ_tl = tl;
		t->content = true;
	}
}

/* Open the skeleton and set its read-only settings (filters, layouts). */
static int open_skel(struct alloctrace *t, const struct mt_proc *p,
		     const struct alloctrace_opts *o)
{
	bool duty = !o->exact && o->budget > 0;
	int err;

	t->skel = alloc_bpf__open();
	if (!t->skel) {
		err = -errno;
		p_err("cannot open the alloc BPF object: %s", strerror(-err));
		return err;
	}
	t->skel->rodata->targ_tgid = pidns_targ_tgid(p); /* 0 below the host pid ns */
	t->skel->rodata->targ_stacks = o->stacks;
	t->skel->rodata->targ_native = o->stacks && o->native;
	t->skel->rodata->targ_duty = duty;
	if (t->vs)
		set_weights(t);
	if (o->stacks && t->vs && !o->exact)
		set_walker(t);
	if (t->vs)
		set_frames(t);
	if (!o->exact && t->vs)
		set_content(t, p);
	allocwindows_init(&t->win, t->skel, t->vs, p, duty, o->windows);
	/* the walker's stacks: a small preallocated map user space drains
	 * (jstack/jstackstore.h), not one that allocates as it fills */
	if (t->walker)
		jstackstore_size_map(t->skel->maps.jstacks, MT_JSTACK_WALK_FRAMES(t->depth));
	return 0;
}

/* Load the program, and open the store of the walker's stacks. */
static int load(struct alloctrace *t)
{
	int err = bpfutil_check("alloc", ALLOC_NEEDS);

	if (err)
		return err; /* said */
	err = alloc_bpf__load(t->skel);
	if (err) {
		bpfutil_load_failed("alloc", err, ALLOC_NEEDS);
		return err;
	}
	bpfutil_loaded("alloc", t->skel->obj);
	if (t->walker && !(t->store = jstackstore_new(bpf_map__fd(t->skel->maps.jstacks),
						      JSTACKSTORE_MAX_KEPT))) {
		err = -errno;
		p_err("cannot keep the walker's stacks: %s", strerror(-err));
		return err;
	}
	return 0;
}

/* Attach: class unloading always; the TLAB uprobes (after the duty cycle's
 * first measures) or object__alloc; a thread's end and code unloads for
 * what needs them. */
static int attach(struct alloctrace *t, const struct mt_proc *p, const struct alloctrace_opts *o,
		  struct mt_elf *e)
{
	int err;

	t->usdt.spec_map_fd = bpf_map__fd(t->skel->maps.usdt_specs);
	err = usdt_attach(&t->usdt, t->skel->progs.handle_class_unloaded, e, p->libjvm_host,
			  p->pid, "hotspot", "class__unloaded");
	if (err < 0) {
		p_err("cannot attach to hotspot:class__unloaded (%s): without it a reused "
		      "Klass* could be misnamed, so memtrace does not sample",
		      strerror(-err));
		return err;
	}
	if (o->exact) {
		err = usdt_attach(&t->usdt, t->skel->progs.handle_object_alloc, e,
				  p->libjvm_host, p->pid, "hotspot", "object__alloc");
		if (err < 0) {
			p_err("cannot attach to hotspot:object__alloc: %s", strerror(-err));
			return err;
		}
	} else {
		if (t->win.on && (err = allocwindows_prepare(&t->win, o->budget, o->windows,
							      p->pid)))
			return err;
		err = allocwindows_attach(&t->win, p, e);
		if (err)
			return err;
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
	return 0;
}

struct alloctrace *alloctrace_new(const struct mt_proc *p, const struct alloctrace_opts *o)
{
	struct mt_elf *e = NULL;
	struct alloctrace *t;
	int err;

	bpfutil_setup_logging();
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->exact = o->exact;
	t->depth = o->stack_depth >= 1 && o->stack_depth <= MT_JSTACK_MAX_DEPTH ?
		   o->stack_depth : MT_JSTACK_DEFAULT_DEPTH;
	t->win.fd[0] = t->win.fd[1] = -1;
	if ((err = open_names(t, p, o)))
		goto err;
	e = elfsym_open(p->libjvm_host);
	if (!e) {
		err = -errno;
		p_err("cannot read %s: %s", p->libjvm_host, strerror(errno));
		goto err;
	}
	if ((err = open_skel(t, p, o)) || (err = load(t)) || (err = attach(t, p, o, e)))
		goto err;
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.alloc_events), handle_event, t, NULL);
	if (!t->rb) {
		err = -errno;
		p_err("cannot open the alloc ring buffer: %s", strerror(errno));
		goto err;
	}
	t->src = (struct allocrows_src){ t->skel, t->rb, &t->names, &t->win, t->store, t->vs,
					 &t->jw, t->content };
	if (t->win.on) { /* the windows attach the uprobes again: e is theirs */
		err = allocwindows_start(&t->win, p, e);
		e = NULL;
		if (err)
			goto err;
		return t;
	}
	elfsym_free(e);
	return t;
err:
	elfsym_free(e);
	alloctrace_free(t);
	errno = -err;
	return NULL;
}

void alloctrace_free(struct alloctrace *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	allocwindows_free(&t->win);
	usdt_detach_all(&t->usdt);
	alloc_bpf__destroy(t->skel);
	allocnames_free(&t->names);
	jstackname_free(t->jn);
	jstackstore_free(t->store);
	vmstructs_free(t->vs);
	free(t);
}

static void warm_one(void *arg, uint64_t key, const struct mt_jstack *st)
{
	struct alloctrace *t = arg;

	(void)key;
	jstackname_warm(t->jn, st, t->names.seen_gen);
}

/* Move the stacks the walker stored since the last pass into user space
 * (jstack/jstackstore.h), naming each new one while its compiled code still
 * lives (five times a second at most). */
static void warm_stacks(struct alloctrace *t)
{
	uint64_t now = mono_ns();

	if (!t->store || now - t->last_warm < 200000000ull)
		return;
	t->last_warm = now;
	jstackname_seen_gen(t->jn, t->names.seen_gen);
	jstackstore_drain(t->store, warm_one, t);
}

int alloctrace_poll(struct alloctrace *t, int timeout_ms)
{
	int n = ring_buffer__poll(t->rb, timeout_ms);

	warm_stacks(t);
	return n == -EINTR ? 0 : n;
}

void alloctrace_duty(struct alloctrace *t, struct alloctrace_duty *d)
{
	allocwindows_duty(&t->win, d);
}

struct alloc_row *alloctrace_rows(struct alloctrace *t, size_t *n)
{
	return allocrows_rows(&t->src, n);
}

struct alloc_class *alloctrace_classes(struct alloctrace *t, size_t *n,
				       uint64_t stats[MT_CONTENT_NSTATS])
{
	return allocrows_classes(&t->src, n, stats);
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
	return t->names.unloads;
}

uint64_t alloctrace_unnamed(struct alloctrace *t)
{
	return t->names.unnamed;
}

const char *alloctrace_method_name(struct alloctrace *t, uint64_t method, uint32_t gen)
{
	if (!t->jn)
		return NULL;
	jstackname_seen_gen(t->jn, t->names.seen_gen);
	return jstackname_method(t->jn, method, gen);
}

int alloctrace_java_frames(struct alloctrace *t, const struct alloc_row *r, const char **names,
			   int max, bool stubs)
{
	struct mt_jstack st;

	if (!t->store || !r->jstack || jstackstore_get(t->store, r->jstack, &st))
		return -ENOENT;
	jstackname_seen_gen(t->jn, t->names.seen_gen);
	return jstackname_frames(t->jn, &st, r->gen, names, max, stubs);
}

int alloctrace_java_frames_full(struct alloctrace *t, const struct alloc_row *r,
				struct profile_frame *frames, int max, bool stubs)
{
	struct mt_jstack st;

	if (!t->store || !r->jstack || jstackstore_get(t->store, r->jstack, &st))
		return -ENOENT;
	jstackname_seen_gen(t->jn, t->names.seen_gen);
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
