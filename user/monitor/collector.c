// SPDX-License-Identifier: GPL-2.0
/* collector.c - jvmev BPF object lifecycle and USDT -> event model. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memtrace/jstack.h"
#include "jvm/pidns.h"
#include "jstack/stacktext.h"
#include "jstack/jstackname.h"
#include "jstack/jstackstore.h"
#include "jstack/jwalk.h"
#include "probe/alloctrace.h"
#include "probe/gcendprobe.h"
#include "probe/gcpauseprobe.h"
#include "jvm/gcmanager.h"
#include "probe/parktrace.h"
#include "monitor/collector.h"
#include "jvm/elfsym.h"
#include "probe/bpfutil.h"
#include "probe/kfeatures.h"
#include "lib/idmap.h"
#include "probe/tlabprobe.h"
#include "jvmev.skel.h"
#include "jvm/klassname.h"
#include "memtrace/jvmev.h"
#include "jvm/monowner.h"
#include "agentctl/objstream.h"
#include "probe/usdtspec.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

/* the kernel features its BPF object needs (ring buffer, USDT arguments, the stack walker) */
#define JVMEV_NEEDS (KF_RINGBUF | KF_COOKIE | KF_LOOP)

/* Classes read from the JVM in one resynchronisation, at most. */
#define RESYNC_MAX_CLASSES 200000

struct collector {
	struct jvmev_bpf *skel;
	struct ring_buffer *rb;
	struct usdt_links links;
	struct mt_seq *seq;
	collector_tick_fn tick;
	void *ctx;
	int pid;
	int monitor_sites;
	uint64_t attached_ns;        /* mono_ns() once the USDT probes were attached */
	uint64_t lost_seen;
	struct idmap strs;    /* address in the JVM -> name id (pool/manager names) */
	struct idmap tids;    /* threads the sequencer has been told about */
	struct idmap types;   /* type keys the sequencer has been told about */
	struct idmap monitors;/* lock objects told of: ObjectMonitor or park blocker address ->
			       * its type key (1: untyped, MT_WAIT_SELF's) */
	struct idmap jtids;   /* Java thread id -> kernel tid */
	struct mt_vmstructs *vs;      /* NULL: this JVM's tables are unreadable */
	struct mt_klass_layout kl;
	bool have_kl;
	struct monowner *owners;      /* NULL: monitor owners cannot be read */
	struct bpf_link *alloc_links[2];
	struct bpf_link *cause_link;  /* GCMemoryManager::gc_end; NULL: no causes */
	struct bpf_link *pause_links[GCPAUSEPROBE_N]; /* the JVM's GC clock; NULL: none */
	struct gccause_table causes;
	struct idmap managers; /* GCMemoryManager address -> name id of its name */
	uint64_t resyncs, resync_classes;
	struct idmap name_keys;   /* class name id -> type key (the latest with that name) */
	struct idmap synth;       /* types made up for agent classes: key -> name id */
	uint64_t nsynth;
	struct objstream *objs;   /* the agent's sampled objects, NULL: not asked for */
	struct parktrace *parks;  /* parks and sleeps into jvm_events, NULL: not asked for */
	/* allocation stacks (collector_enable_alloc_stacks) */
	struct jwalk_layout jw;
	bool have_jw;
	struct jstackname *jn;
	struct idmap stack_names; /* stack key -> name id of its text */
	char *stack_buf;
	uint32_t stack_depth;     /* collector_new's: 0, no allocation stacks */
	struct mt_jstack *stack;  /* a stack being named */
	struct profile_frame *frames; /* its names: MT_JSTACK_MAX_DEPTH + 1 */
	struct jstackstore *store; /* the walker's stacks, drained from `jstacks` */
	uint64_t last_drain;      /* mono_ns of the last drain */
};

static void feed(struct collector *c, struct mt_ev *e)
{
	if (c->tick)
		c->tick(c->ctx, e->ts);
	sequencer_feed(c->seq, e);
}

/* The name id of the C string at @addr in the JVM (read once, cached). */
static uint64_t jvm_str(struct collector *c, uint64_t addr)
{
	uintptr_t id = (uintptr_t)idmap_get(&c->strs, addr);
	char buf[128];
	size_t n = 0;

	if (id)
		return id;
	/* read byte runs up to the page end, never past it */
	while (n + 1 < sizeof(buf)) {
		size_t chunk = 4096 - ((addr + n) & 4095);

		if (chunk > sizeof(buf) - 1 - n)
			chunk = sizeof(buf) - 1 - n;
		if (proc_read_mem(c->pid, addr + n, buf + n, chunk))
			break;
		if (memchr(buf + n, '\0', chunk)) {
			n += strlen(buf + n);
			break;
		}
		n += chunk;
	}
	buf[n] = '\0';
	if (!n)
		n = (size_t)snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)addr);
	id = sequencer_name(c->seq, buf, n);
	idmap_put(&c->strs, addr, (void *)id);
	return id;
}

/* The name id of a raw event's (possibly truncated) string, as a Java class
 * name when @klass. */
static uint64_t raw_name(struct collector *c, const struct mt_jvmev_raw *r, bool klass)
{
	size_t n = r->name_len < MT_JVMEV_NAME_LEN ? r->name_len : MT_JVMEV_NAME_LEN - 1;
	char java[MT_JVMEV_NAME_LEN * 2];
	int k;

	n = strnlen(r->name, n);
	if (klass) {
		k = klassname_to_java(r->name, n, java, sizeof(java));
		if (k > 0)
			return sequencer_name(c->seq, java, (size_t)k);
	}
	return sequencer_name(c->seq, r->name, n);
}

static uint64_t comm_name(struct collector *c, uint64_t tid)
{
	char path[64], buf[64];
	FILE *f;
	size_t n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task/%llu/comm", c->pid, (unsigned long long)tid);
	f = fopen(path, "r");
	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\0'))
		n--;
	return n ? sequencer_name(c->seq, buf, n) : 0;
}

/* Make sure the sequencer knows thread @tid by name before an event on it. */
static void known_thread(struct collector *c, uint64_t tid, uint64_t ts)
{
	struct mt_ev e = { .ts = ts, .kind = MT_EV_THREAD_CREATE, .thread = tid, .id = tid };

	if (idmap_get(&c->tids, tid))
		return;
	e.name = comm_name(c, tid);
	idmap_put(&c->tids, tid, (void *)1);
	feed(c, &e);
}

/* Make sure the sequencer knows the class whose name Symbol is at @key. */
static void known_type(struct collector *c, uint64_t key, const struct mt_jvmev_raw *r)
{
	struct mt_ev e = { .ts = r->ts_ns, .kind = MT_EV_TYPE_CREATE, .id = key };

	if (idmap_get(&c->types, key))
		return;
	e.name = raw_name(c, r, true);
	idmap_put(&c->name_keys, e.name, (void *)(uintptr_t)key);
	feed(c, &e);
	e.kind = MT_EV_TYPE_LOAD;
	e.name = 0;
	feed(c, &e);
	idmap_put(&c->types, key, (void *)1);
}

/* Make sure the sequencer knows type @key of class @klass (a Klass*) at
 * @ts: a class loaded before we looked is created (and loaded) now, named
 * through its Klass* (rule 2: the type exists before an event refers to it). */
static void klass_type(struct collector *c, uint64_t key, uint64_t klass, uint64_t ts)
{
	struct mt_ev e = { .ts = ts, .kind = MT_EV_TYPE_CREATE, .id = key };
	char buf[512];
	int n = -ENOENT;

	if (idmap_get(&c->types, key))
		return;
	if (c->have_kl)
		n = klassname_read(c->vs, &c->kl, klass, true, buf, sizeof(buf));
	if (n <= 0)
		n = snprintf(buf, sizeof(buf), "(unknown class 0x%llx)", (unsigned long long)klass);
	e.name = sequencer_name(c->seq, buf, (size_t)n);
	idmap_put(&c->name_keys, e.name, (void *)(uintptr_t)key);
	feed(c, &e);
	e.kind = MT_EV_TYPE_LOAD;
	e.name = 0;
	feed(c, &e);
	idmap_put(&c->types, key, (void *)1);
}

/* The name id of the text of the Java stack stored under @key (0: none),
 * named now (the events arrive within a poll of the sample). */
static uint64_t stack_name(struct collector *c, uint64_t key)
{
	uintptr_t id = key ? (uintptr_t)idmap_get(&c->stack_names, key) : 0;
	int n, len;

	if (id || !key || !c->jn || !c->store)
		return id;
	if (jstackstore_get(c->store, key, c->stack))
		return 0;
	n = jstackname_frames_full(c->jn, c->stack, 0, c->frames, MT_JSTACK_MAX_DEPTH + 1, false);
	len = n > 0 ? stacktext_encode(c->frames, n, c->stack_buf, STACKTEXT_MAX) : -1;
	if (len <= 0)
		return 0;
	id = sequencer_name(c->seq, c->stack_buf, (size_t)len);
	idmap_put(&c->stack_names, key, (void *)id);
	return id;
}

static void alloc_event(struct collector *c, const struct mt_jvmev_raw *r)
{
	struct mt_ev e = { .ts = r->ts_ns, .kind = MT_EV_ALLOC_SAMPLE, .thread = r->tid,
			   .ref = r->a1 };

	known_thread(c, r->tid, r->ts_ns);
	if (r->a1)
		klass_type(c, r->a1, r->a0, r->ts_ns);
	e.name2 = stack_name(c, r->v[2]);
	e.v[0] = r->a2;
	e.v[1] = r->v[0];
	e.v[2] = r->v[1];
	feed(c, &e);
}

static void monitor_event(struct collector *c, const struct mt_jvmev_raw *r)
{
	struct mt_ev e = { .ts = r->ts_ns, .thread = r->tid, .id = r->a1 };
	uint64_t key = r->v[0];
	uintptr_t have;

	/* The probes attach one at a time, a span's begin before its end
	 * (contended__enter before __entered, monitor__wait before __waited):
	 * until the last is in, a span's begin may fire and its end not, and
	 * the sequencer would infer an end that was never lost (record_counts
	 * saw "1 waits ended by inference" once). The monitor stream starts
	 * once all are in, as `locks`' window does: a span open then began
	 * before the recording. */
	if (r->ts_ns < c->attached_ns)
		return;
	known_thread(c, r->tid, r->ts_ns);
	idmap_put(&c->jtids, r->a0, (void *)(uintptr_t)r->tid);
	if (key) {
		known_type(c, key, r);
		have = (uintptr_t)idmap_get(&c->monitors, r->a1);
		if (have != key) { /* a new monitor, or a reused one for another object */
			struct mt_ev o = { .ts = r->ts_ns, .kind = MT_EV_OBJ_CREATE, .id = r->a1,
					   .ref = key };

			feed(c, &o);
			idmap_put(&c->monitors, r->a1, (void *)(uintptr_t)key);
		}
	}
	switch (r->kind) {
	case MT_J_MON_ENTER:
		e.kind = MT_EV_MON_WAIT_BEGIN;
		e.aux = MT_WAIT_ENTER;
		feed(c, &e);
		break;
	case MT_J_MON_ENTERED:
		e.kind = MT_EV_MON_WAIT_END;
		feed(c, &e);
		e.kind = MT_EV_MON_ACQUIRE;
		feed(c, &e);
		break;
	case MT_J_MON_EXIT:
		e.kind = MT_EV_MON_RELEASE;
		feed(c, &e);
		break;
	case MT_J_MON_WAIT:
		e.kind = MT_EV_MON_WAIT_BEGIN;
		e.aux = MT_WAIT_NOTIFY;
		e.v[0] = r->a2;
		feed(c, &e);
		break;
	case MT_J_MON_WAITED:
		e.kind = MT_EV_MON_WAIT_END;
		feed(c, &e);
		break;
	}
}

/*
 * The object a park or sleep of @r waits on, told to the sequencer before
 * the wait begins: the blocker (typed by its class; a new object when the
 * address now holds another class's), or the thread's own MT_WAIT_SELF
 * (untyped). 0 at a wait's end whose object was not told (its begin
 * was not seen, or was before a gap).
 */
static uint64_t wait_obj(struct collector *c, const struct mt_jvmev_raw *r, bool begin)
{
	uint64_t id = r->a0 ? r->a0 : MT_WAIT_SELF(r->tid), key = r->a0 ? r->a2 : 0;
	uintptr_t have = (uintptr_t)idmap_get(&c->monitors, id), want = key ? key : 1;
	struct mt_ev o = { .ts = r->ts_ns, .kind = MT_EV_OBJ_CREATE, .id = id, .ref = key };

	if (!begin)
		return have ? id : 0;
	if (have == want)
		return id;
	if (key)
		klass_type(c, key, r->a1, r->ts_ns);
	feed(c, &o);
	idmap_put(&c->monitors, id, (void *)want);
	return id;
}

/* A park or sleep (bpf/park.bpf.c) as a wait on its object (events.h). */
static void park_event(struct collector *c, const struct mt_jvmev_raw *r)
{
	bool begin = r->kind == MT_J_PARK_BEGIN || r->kind == MT_J_SLEEP_BEGIN;
	struct mt_ev e = { .ts = r->ts_ns, .thread = r->tid };

	known_thread(c, r->tid, r->ts_ns);
	if (r->kind == MT_J_SLEEP_BEGIN || r->kind == MT_J_SLEEP_END) {
		struct mt_jvmev_raw self = *r;

		self.a0 = 0; /* a sleep waits on the thread's own object */
		e.id = wait_obj(c, &self, begin);
	} else {
		e.id = wait_obj(c, r, begin);
	}
	if (!e.id)
		return;
	if (!begin) {
		e.kind = MT_EV_MON_WAIT_END;
		feed(c, &e);
		return;
	}
	e.kind = MT_EV_MON_WAIT_BEGIN;
	e.v[0] = r->v[0];
	if (r->kind == MT_J_SLEEP_BEGIN) {
		e.aux = MT_WAIT_SLEEP;
	} else {
		e.aux = MT_WAIT_PARK;
		e.v[1] = r->v[1];
		e.v[3] = !!(r->v[3] & MT_J_PARK_NO_THREAD); /* not "no blocker": unread */
		/* an owner only where the class has one (AbstractOwnableSynchronizer) */
		if (r->v[2] && r->a0 && parktrace_ownable(c->parks, r->a1))
			e.v[2] = parktrace_host_tid(c->parks, (uint32_t)r->v[2]);
	}
	feed(c, &e);
}

/* The name id of the GCMemoryManager at @obj (its end message at @msg), read
 * once (jvm/gcmanager.h); 0 when it cannot be read. */
static uint64_t manager_name(struct collector *c, uint64_t obj, uint64_t msg)
{
	uintptr_t id = (uintptr_t)idmap_get(&c->managers, obj);
	char buf[64];

	if (id || !obj)
		return id;
	if (gcmanager_name(c->pid, obj, msg, buf, sizeof(buf)))
		return 0;
	id = sequencer_name(c->seq, buf, strlen(buf));
	if (id)
		idmap_put(&c->managers, obj, (void *)id);
	return id;
}

static int handle_event(void *ctx, void *data, size_t len)
{
	const struct mt_jvmev_raw *r = data;
	struct collector *c = ctx;
	struct mt_ev e;

	if (len < MT_JVMEV_HEAD_LEN)
		return 0;
	switch (r->kind) { /* records without a name */
	case MT_J_PARK_BEGIN:
	case MT_J_PARK_END:
	case MT_J_SLEEP_BEGIN:
	case MT_J_SLEEP_END:
		if (c->parks)
			park_event(c, r);
		return 0;
	}
	if (len < sizeof(*r))
		return 0;
	memset(&e, 0, sizeof(e));
	e.ts = r->ts_ns;
	e.thread = r->tid;
	switch (r->kind) {
	case MT_J_THREAD_START:
		e.kind = MT_EV_THREAD_CREATE;
		e.id = r->tid;
		e.name = raw_name(c, r, false);
		e.v[0] = r->a0;
		e.v[1] = r->a2;
		idmap_put(&c->tids, r->tid, (void *)1);
		idmap_put(&c->jtids, r->a0, (void *)(uintptr_t)r->tid);
		feed(c, &e);
		return 0;
	case MT_J_THREAD_STOP:
		if (idmap_del(&c->monitors, MT_WAIT_SELF(r->tid))) {
			struct mt_ev o = { .ts = r->ts_ns, .kind = MT_EV_OBJ_RECLAIM,
					   .id = MT_WAIT_SELF(r->tid) };

			feed(c, &o);
		}
		e.kind = MT_EV_THREAD_DESTROY;
		e.id = r->tid;
		idmap_del(&c->tids, r->tid);
		idmap_del(&c->jtids, r->a0);
		feed(c, &e);
		return 0;
	case MT_J_CLASS_LOAD:
		idmap_del(&c->types, r->a0); /* a reused key: a new type */
		known_type(c, r->a0, r);
		return 0;
	case MT_J_CLASS_UNLOAD:
		if (c->parks)
			parktrace_forget_classes(c->parks); /* a Klass* may be reused */
		e.kind = MT_EV_TYPE_RECLAIM;
		e.thread = 0;
		e.id = r->a0;
		idmap_del(&c->types, r->a0);
		feed(c, &e);
		return 0;
	case MT_J_MON_ENTER:
	case MT_J_MON_ENTERED:
	case MT_J_MON_EXIT:
	case MT_J_MON_WAIT:
	case MT_J_MON_WAITED:
		monitor_event(c, r);
		return 0;
	case MT_J_ALLOC:
		alloc_event(c, r);
		return 0;
	}
	known_thread(c, r->tid, r->ts_ns);
	switch (r->kind) {
	case MT_J_VMOP_BEGIN:
		e.kind = MT_EV_INV_ENTER;
		e.name = raw_name(c, r, false);
		e.v[0] = MT_INV_VMOP;
		e.v[1] = r->a1;
		break;
	case MT_J_GC_BEGIN:
		e.kind = MT_EV_INV_ENTER;
		e.name = sequencer_name(c->seq, "GC", 2);
		e.v[0] = MT_INV_GC;
		e.v[1] = r->a2;
		break;
	case MT_J_VMOP_END:
	case MT_J_GC_END:
		e.kind = MT_EV_INV_LEAVE;
		break;
	case MT_J_GC_CAUSE: {
		char buf[32];
		const char *cause = gccause_name(&c->causes, (uint32_t)r->a0, buf, sizeof(buf));

		e.kind = MT_EV_GC_CAUSE;
		e.name = sequencer_name(c->seq, cause, strlen(cause));
		e.name2 = r->a1 ? jvm_str(c, r->a1) : 0;
		e.ref = manager_name(c, r->a2, r->a1);
		e.v[0] = r->a0;
		break;
	}
	case MT_J_PAUSE_BEGIN:
		e.kind = MT_EV_INV_ENTER;
		e.name = r->a0 ? jvm_str(c, r->a0) : 0;
		e.v[0] = MT_INV_GC_PAUSE;
		e.v[1] = r->a1;
		break;
	case MT_J_PAUSE_END:
	case MT_J_TRACE_END:
		e.kind = MT_EV_INV_LEAVE;
		e.v[0] = r->a1;
		break;
	case MT_J_TRACE_BEGIN:
		e.kind = MT_EV_INV_ENTER;
		e.name = sequencer_name(c->seq, "GC trace", 8);
		e.v[0] = MT_INV_GC_TRACE;
		e.v[1] = r->a1;
		break;
	case MT_J_POOL_BEGIN:
	case MT_J_POOL_END:
		e.kind = MT_EV_POOL_USAGE;
		e.aux = r->kind == MT_J_POOL_BEGIN ? MT_POOL_PHASE_BEFORE : MT_POOL_PHASE_AFTER;
		e.name = jvm_str(c, r->a1);
		e.name2 = jvm_str(c, r->a0);
		memcpy(e.v, r->v, sizeof(e.v));
		break;
	default:
		return 0;
	}
	feed(c, &e);
	return 0;
}

void collector_resync_threads(struct collector *c, uint64_t ts)
{
	struct sequencer_thread_info *live = NULL;
	size_t n = 0, cap = 0;
	char path[64];
	struct dirent *d;
	DIR *dir;

	snprintf(path, sizeof(path), "/proc/%d/task", c->pid);
	dir = opendir(path);
	if (!dir)
		return;
	idmap_free(&c->tids);
	while ((d = readdir(dir))) {
		uint64_t tid;

		if (parse_u64(d->d_name, &tid) || !tid)
			continue;
		if (n == cap) {
			struct sequencer_thread_info *nl;

			cap = cap ? cap * 2 : 64;
			nl = realloc(live, cap * sizeof(*nl));
			if (!nl)
				break;
			live = nl;
		}
		live[n].tid = tid;
		live[n].name = comm_name(c, tid);
		idmap_put(&c->tids, tid, (void *)1);
		n++;
	}
	closedir(dir);
	sequencer_resync_threads(c->seq, ts, live, n);
	free(live);
}

struct type_walk {
	struct collector *c;
	struct sequencer_type_info *live;
	size_t n, cap;
};

static int walk_one(void *arg, uint64_t klass)
{
	struct type_walk *w = arg;
	struct collector *c = w->c;
	uint64_t sym;
	char buf[512];
	int n;

	if (vmstructs_read_ptr(c->vs, klass + c->kl.klass_name, &sym) || !sym)
		return 0;
	n = klassname_read(c->vs, &c->kl, klass, true, buf, sizeof(buf));
	if (n <= 0)
		return 0; /* being created or torn down: not a class to report */
	if (w->n == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 1024;
		struct sequencer_type_info *nl = realloc(w->live, cap * sizeof(*nl));

		if (!nl)
			return -ENOMEM;
		w->live = nl;
		w->cap = cap;
	}
	w->live[w->n].key = sym + c->kl.sym_body;
	w->live[w->n].name = sequencer_name(c->seq, buf, (size_t)n);
	idmap_put(&c->name_keys, w->live[w->n].name, (void *)(uintptr_t)w->live[w->n].key);
	w->n++;
	return 0;
}

int collector_resync_types(struct collector *c, uint64_t ts)
{
	struct type_walk w = { .c = c };
	int err;

	if (!c->have_kl)
		return -ENOENT;
	err = klassname_walk(c->vs, walk_one, &w, RESYNC_MAX_CLASSES);
	if (err || !w.n) {
		/* a partial list would reclaim live classes: keep what we have */
		free(w.live);
		return err ? err : -ENOENT;
	}
	/* the types made up for the agent's classes live on */
	size_t pos = 0;
	uint64_t key;
	void *val;

	while (idmap_next(&c->synth, &pos, &key, &val)) {
		if (w.n == w.cap) {
			struct sequencer_type_info *nl = realloc(w.live, (w.cap * 2 + 1) * sizeof(*nl));

			if (!nl)
				break;
			w.live = nl;
			w.cap = w.cap * 2 + 1;
		}
		w.live[w.n].key = key;
		w.live[w.n++].name = (uintptr_t)val;
	}
	sequencer_resync_types(c->seq, ts, w.live, w.n);
	idmap_free(&c->types);
	for (size_t i = 0; i < w.n; i++)
		idmap_put(&c->types, w.live[i].key, (void *)1);
	c->resyncs++;
	c->resync_classes = w.n;
	free(w.live);
	return 0;
}

int collector_enable_alloc(struct collector *c, const struct mt_proc *p)
{
	struct bpf_program *progs[2] = { c->skel->progs.handle_alloc_new_tlab,
					 c->skel->progs.handle_alloc_outside_tlab };
	const char *missing = "";
	struct mt_elf *elf;
	int err;

	if (!c->have_kl) {
		p_err("cannot read Klass::_name through the VMStructs of pid %d: allocation "
		      "samples could not be tied to their classes", p->pid);
		return -ENOENT;
	}
	elf = elfsym_open(p->libjvm_host);
	if (!elf) {
		err = -errno;
		p_err("cannot read %s: %s", p->libjvm_host, strerror(errno));
		return err;
	}
	err = tlabprobe_attach(progs, elf, p, c->alloc_links, &missing);
	if (err == -ENOENT)
		p_err("libjvm.so of pid %d (%s) has no symbol AllocTracer::%s (no .symtab): "
		      "allocations cannot be sampled; install the JDK's debug symbols",
		      p->pid, p->libjvm, missing);
	elfsym_free(elf);
	return err;
}

int collector_enable_parks(struct collector *c, const struct mt_proc *p)
{
	if (!c->vs) {
		p_err("cannot read the VMStructs of pid %d: parks cannot be tied to their "
		      "blockers", p->pid);
		return -ENOENT;
	}
	c->parks = parktrace_new_stream(p, c->vs, bpf_map__fd(c->skel->maps.jvm_events),
					bpf_map__fd(c->skel->maps.jvm_drops));
	return c->parks ? 0 : -errno;
}

int collector_enable_alloc_stacks(struct collector *c, const struct mt_proc *p)
{
	struct usdt_probe unload = { "compiled__method__unload",
				     c->skel->progs.handle_code_unload, true, 0 };

	if (!c->stack_depth) {
		p_err("allocation stacks were not asked for when the collector was made");
		return -EINVAL;
	}
	if (!c->have_jw || !(c->jn = jstackname_new(c->vs, &c->jw))) {
		p_err("the Java stack walker cannot run in pid %d: this JVM's VMStructs lack "
		      "what it needs; record allocation samples without --alloc-stacks", p->pid);
		return -ENOENT;
	}
	jstackname_set_depth(c->jn, c->stack_depth);
	c->store = jstackstore_new(bpf_map__fd(c->skel->maps.jstacks), JSTACKSTORE_MAX_KEPT);
	if (!c->store) {
		p_err("cannot keep the walker's stacks: %s", strerror(errno));
		return -errno;
	}
	c->stack_buf = malloc(STACKTEXT_MAX);
	c->stack = malloc(sizeof(*c->stack));
	c->frames = calloc(MT_JSTACK_MAX_DEPTH + 1, sizeof(*c->frames));
	if (!c->stack_buf || !c->stack || !c->frames) {
		p_err("out of memory");
		return -ENOMEM;
	}
	/* the walker's pc cache needs to hear of code being freed */
	if (!usdt_attach_hotspot(&c->links, &unload, 1, p) && unload.sites > 0)
		c->skel->bss->cache_on = 1;
	c->skel->bss->alloc_stacks = 1;
	return 0;
}

static void obj_feed(void *ctx, struct mt_ev *e)
{
	feed(ctx, e);
}

/* The type of an agent-sampled object's class @name: the live type of that
 * name if the JVM's probes or class list named it, else one made up for it
 * (key: bit 63 set and a counter; it lives as long as the recording). */
static uint64_t obj_type(void *ctx, const char *name, uint64_t ts)
{
	struct collector *c = ctx;
	uint64_t id = sequencer_name(c->seq, name, strlen(name));
	uint64_t key = (uintptr_t)idmap_get(&c->name_keys, id);
	struct mt_ev e = { .ts = ts, .kind = MT_EV_TYPE_CREATE, .name = id };

	if (key && (idmap_get(&c->types, key) || idmap_get(&c->synth, key)))
		return key;
	key = (1ull << 63) | ++c->nsynth;
	e.id = key;
	feed(c, &e);
	e.kind = MT_EV_TYPE_LOAD;
	e.name = 0;
	feed(c, &e);
	idmap_put(&c->synth, key, (void *)(uintptr_t)id);
	idmap_put(&c->name_keys, id, (void *)(uintptr_t)key);
	return key;
}

int collector_enable_objects(struct collector *c, const struct mt_proc *p, uint32_t interval)
{
	c->objs = objstream_new(p, interval, obj_feed, obj_type, c);
	return c->objs ? 0 : -EIO;
}

struct objstream *collector_objstream(struct collector *c)
{
	return c->objs;
}

void collector_stop_objects(struct collector *c, uint64_t *created, uint64_t *reclaimed,
			    uint64_t *lost)
{
	struct objstream_stats st;

	*created = *reclaimed = *lost = 0;
	if (!c->objs)
		return;
	objstream_poll(c->objs, 0);
	objstream_free(c->objs, &st); /* feeds what the agent still held */
	c->objs = NULL;
	*created = st.created;
	*reclaimed = st.reclaimed;
	*lost = st.dropped_allocs + st.dropped_frees;
}

uint64_t collector_monitor_owner(void *ctx, uint64_t monitor)
{
	struct collector *c = ctx;

	return c->owners ? monowner_tid(c->owners, monitor) : 0;
}

struct probe {
	const char *name;
	bool required;
	bool monitor;
};

struct collector *collector_new(const struct mt_proc *p, struct mt_seq *seq,
				collector_tick_fn tick, void *ctx, uint32_t stack_depth)
{
	static const struct probe probes[] = {
		{ "thread__start", true, false },   { "thread__stop", true, false },
		{ "class__loaded", false, false },  { "class__unloaded", false, false },
		{ "vmops__begin", false, false },   { "vmops__end", false, false },
		/* outside in, ends first (as probe/gctrace.c): while they attach,
		 * no begin is heard without its end */
		{ "gc__end", true, false },         { "gc__begin", true, false },
		{ "mem__pool__gc__end", true, false }, { "mem__pool__gc__begin", true, false },
		{ "monitor__contended__enter", false, true },
		{ "monitor__contended__entered", false, true },
		{ "monitor__contended__exit", false, true },
		{ "monitor__wait", false, true },   { "monitor__waited", false, true },
	};
	struct bpf_program *progs[MT_ARRAY_SIZE(probes)];
	struct usdt_probe attach[MT_ARRAY_SIZE(probes)];
	struct collector *c;
	int err;

	bpfutil_setup_logging();
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pid = p->pid;
	c->seq = seq;
	c->tick = tick;
	c->ctx = ctx;
	c->stack_depth = stack_depth <= MT_JSTACK_MAX_DEPTH ? stack_depth : MT_JSTACK_MAX_DEPTH;

	/* Open the skeleton. */
	c->skel = jvmev_bpf__open();
	if (!c->skel) {
		err = -errno;
		p_err("cannot open the jvmev BPF object: %s", strerror(errno));
		goto err_free;
	}
	/* Set the read-only filter before load. */
	c->skel->rodata->targ_tgid = pidns_targ_tgid(p); /* 0 below the host pid ns */
	/* A smaller ring buffer on request (tests of the gap path). */
	{
		const char *kb = getenv("MEMTRACE_RING_KB");
		uint64_t v;

		if (kb && !parse_u64(kb, &v) && v >= 4 && !(v & (v - 1)))
			bpf_map__set_max_entries(c->skel->maps.jvm_events, (uint32_t)v * 1024);
	}
	/* The JVM's own tables: class names, class list, monitor owners. */
	if (!vmstructs_open(p, &c->vs)) {
		c->have_kl = !klassname_layout(c->vs, &c->kl);
		c->owners = monowner_new(c->vs);
	}
	if (c->have_kl) {
		c->skel->rodata->targ_klass_name = (uint32_t)c->kl.klass_name;
		c->skel->rodata->targ_sym_body = (uint32_t)c->kl.sym_body;
	}
	/* the stack walker's layout, used once allocation stacks are asked for */
	if (c->vs && !jwalk_layout(c->vs, &c->jw)) {
		c->have_jw = true;
		c->skel->rodata->targ_jw = c->jw.bpf;
	}
	/* their stacks: a small preallocated map drained into a store
	 * (jstack/jstackstore.h) when asked for, else room for one */
	if (c->stack_depth) {
		c->skel->rodata->targ_jdepth = MT_JSTACK_WALK_FRAMES(c->stack_depth);
		jstackstore_size_map(c->skel->maps.jstacks, MT_JSTACK_WALK_FRAMES(c->stack_depth));
	} else {
		bpf_map__set_max_entries(c->skel->maps.jstacks, 1);
	}

	/* Load and verify. */
	err = bpfutil_check("jvmev", JVMEV_NEEDS);
	if (err)
		goto err_destroy;
	err = jvmev_bpf__load(c->skel);
	if (err) {
		bpfutil_load_failed("jvmev", err, JVMEV_NEEDS);
		goto err_destroy;
	}
	bpfutil_loaded("jvmev", c->skel->obj);

	/* Attach each program at every site of its USDT probe. */
	c->links.spec_map_fd = bpf_map__fd(c->skel->maps.usdt_specs);
	progs[0] = c->skel->progs.handle_thread_start;
	progs[1] = c->skel->progs.handle_thread_stop;
	progs[2] = c->skel->progs.handle_class_load;
	progs[3] = c->skel->progs.handle_class_unload;
	progs[4] = c->skel->progs.handle_vmop_begin;
	progs[5] = c->skel->progs.handle_vmop_end;
	progs[6] = c->skel->progs.handle_gc_end;
	progs[7] = c->skel->progs.handle_gc_begin;
	progs[8] = c->skel->progs.handle_pool_end;
	progs[9] = c->skel->progs.handle_pool_begin;
	progs[10] = c->skel->progs.handle_mon_enter;
	progs[11] = c->skel->progs.handle_mon_entered;
	progs[12] = c->skel->progs.handle_mon_exit;
	progs[13] = c->skel->progs.handle_mon_wait;
	progs[14] = c->skel->progs.handle_mon_waited;
	for (size_t i = 0; i < MT_ARRAY_SIZE(probes); i++)
		attach[i] = (struct usdt_probe){ .name = probes[i].name, .prog = progs[i],
						 .optional = !probes[i].required };
	err = usdt_attach_hotspot(&c->links, attach, MT_ARRAY_SIZE(probes), p);
	if (err)
		goto err_links;
	c->attached_ns = mono_ns(); /* events fire from here (the setup goes on) */
	for (size_t i = 0; i < MT_ARRAY_SIZE(probes); i++)
		if (probes[i].monitor)
			c->monitor_sites += attach[i].sites;
	/* The causes of collections and the JVM's GC clock (pauses of concurrent
	 * cycles, collections' durations): without the symbols, recordings have
	 * none of them. */
	{
		struct bpf_program *const clock[GCPAUSEPROBE_N] = {
			c->skel->progs.handle_pause_begin, c->skel->progs.handle_pause_end,
			c->skel->progs.handle_trace_begin, c->skel->progs.handle_trace_end,
		};
		struct mt_elf *elf = elfsym_open(p->libjvm_host); /* one parse for both */
		const char *why;

		err = gcendprobe_attach(c->skel->progs.handle_gc_cause, p, elf, &c->cause_link, NULL,
					&c->causes, &why);
		if (err == -ENOENT || err == -ENOTSUP)
			err = 0;
		if (!err)
			err = gcpauseprobe_attach(clock, p, elf, c->pause_links, NULL, &why);
		if (err == -ENOENT)
			err = 0;
		elfsym_free(elf);
		if (err)
			goto err_links;
	}

	/* Open the ring buffer. */
	c->rb = ring_buffer__new(bpf_map__fd(c->skel->maps.jvm_events), handle_event, c, NULL);
	if (!c->rb) {
		err = -errno;
		p_err("cannot open the jvmev ring buffer: %s", strerror(errno));
		goto err_links;
	}
	/* The threads alive before we looked. */
	collector_resync_threads(c, mono_ns());
	return c;

err_links:
	for (int i = 0; i < GCPAUSEPROBE_N; i++)
		bpf_link__destroy(c->pause_links[i]);
	bpf_link__destroy(c->cause_link);
	usdt_detach_all(&c->links);
err_destroy:
	jvmev_bpf__destroy(c->skel);
err_free:
	monowner_free(c->owners);
	vmstructs_free(c->vs);
	free(c);
	errno = -err;
	return NULL;
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	objstream_free(c->objs, NULL);
	parktrace_free(c->parks);
	ring_buffer__free(c->rb);
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(c->alloc_links[i]);
	for (int i = 0; i < GCPAUSEPROBE_N; i++)
		bpf_link__destroy(c->pause_links[i]);
	bpf_link__destroy(c->cause_link);
	usdt_detach_all(&c->links);
	jvmev_bpf__destroy(c->skel);
	monowner_free(c->owners);
	jstackname_free(c->jn);
	jstackstore_free(c->store);
	vmstructs_free(c->vs);
	free(c->stack_buf);
	free(c->stack);
	free(c->frames);
	idmap_free(&c->stack_names);
	idmap_free(&c->strs);
	idmap_free(&c->managers);
	idmap_free(&c->tids);
	idmap_free(&c->types);
	idmap_free(&c->monitors);
	idmap_free(&c->jtids);
	idmap_free(&c->name_keys);
	idmap_free(&c->synth);
	free(c);
}

int collector_poll(struct collector *c, int timeout_ms)
{
	int n = ring_buffer__poll(c->rb, timeout_ms);
	uint64_t lost;

	if (n == -EINTR)
		n = 0;
	if (n < 0)
		return n;
	/* The BPF side submits without wakeups: drain what is there. */
	n = ring_buffer__consume(c->rb);
	/* the walker's stacks into user space, five times a second (each was
	 * named as its sample arrived) */
	if (c->store && mono_ns() - c->last_drain >= 200000000ull) {
		c->last_drain = mono_ns();
		jstackstore_drain(c->store, NULL, NULL);
	}
	if (c->parks)
		parktrace_refresh(c->parks); /* the threads whose blockers it reads */
	if (n >= 0 && c->objs) {
		int k = objstream_poll(c->objs, 0);

		if (k < 0)
			return k;
		n += k;
	}
	lost = collector_lost(c);
	if (lost > c->lost_seen) {
		uint64_t now = mono_ns();

		sequencer_gap(c->seq, now, lost - c->lost_seen, MT_LOST_KERNEL);
		c->lost_seen = lost;
		idmap_free(&c->monitors);
		collector_resync_threads(c, now);
		collector_resync_types(c, now); /* unreadable: types stay as they were */
	}
	return n;
}

uint64_t collector_lost(const struct collector *c)
{
	/* the ring buffer's drops, and probe hits the kernel ran no program for */
	return bpfutil_percpu_sum(bpf_map__fd(c->skel->maps.jvm_drops)) +
	       bpfutil_obj_misses(c->skel->obj) + (c->parks ? parktrace_misses(c->parks) : 0);
}

int collector_monitor_sites(const struct collector *c)
{
	return c->monitor_sites;
}

uint64_t collector_attached_ns(const struct collector *c)
{
	return c->attached_ns;
}

void collector_resync_stats(const struct collector *c, uint64_t *resyncs, uint64_t *classes)
{
	*resyncs = c->resyncs;
	*classes = c->resync_classes;
}

uint64_t collector_java_tid(const struct collector *c, uint64_t java_tid)
{
	return (uintptr_t)idmap_get(&c->jtids, java_tid);
}
