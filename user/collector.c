// SPDX-License-Identifier: GPL-2.0
/* collector.c - jvmev BPF object lifecycle and USDT -> event model. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collector.h"
#include "elfsym.h"
#include "gctrace.h"
#include "idmap.h"
#include "jvmev.skel.h"
#include "klassname.h"
#include "memtrace/jvmev.h"
#include "usdtspec.h"
#include "util.h"

struct collector {
	struct jvmev_bpf *skel;
	struct ring_buffer *rb;
	struct usdt_links links;
	struct mt_seq *seq;
	collector_tick_fn tick;
	void *ctx;
	int pid;
	int monitor_sites;
	uint64_t lost_seen;
	struct idmap strs;    /* address in the JVM -> name id (pool/manager names) */
	struct idmap tids;    /* threads the sequencer has been told about */
	struct idmap types;   /* type keys the sequencer has been told about */
	struct idmap monitors;/* ObjectMonitor address -> type key of its object */
	struct idmap jtids;   /* Java thread id -> kernel tid */
};

static void feed(struct collector *c, struct mt_ev *e)
{
	if (c->tick)
		c->tick(c->ctx, e->ts);
	seq_feed(c->seq, e);
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
	id = seq_name(c->seq, buf, n);
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
			return seq_name(c->seq, java, (size_t)k);
	}
	return seq_name(c->seq, r->name, n);
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
	return n ? seq_name(c->seq, buf, n) : 0;
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
	feed(c, &e);
	e.kind = MT_EV_TYPE_LOAD;
	e.name = 0;
	feed(c, &e);
	idmap_put(&c->types, key, (void *)1);
}

static void monitor_event(struct collector *c, const struct mt_jvmev_raw *r)
{
	struct mt_ev e = { .ts = r->ts_ns, .thread = r->tid, .id = r->a1 };
	uint64_t key = r->v[0];
	uintptr_t have;

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

static int handle_event(void *ctx, void *data, size_t len)
{
	const struct mt_jvmev_raw *r = data;
	struct collector *c = ctx;
	struct mt_ev e;

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
		e.name = seq_name(c->seq, "GC", 2);
		e.v[0] = MT_INV_GC;
		e.v[1] = r->a2;
		break;
	case MT_J_VMOP_END:
	case MT_J_GC_END:
		e.kind = MT_EV_INV_LEAVE;
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
	struct seq_thread_info *live = NULL;
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
			struct seq_thread_info *nl;

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
	seq_resync_threads(c->seq, ts, live, n);
	free(live);
}

struct probe {
	const char *name;
	bool required;
	bool monitor;
};

struct collector *collector_new(const struct mt_proc *p, struct mt_seq *seq,
				collector_tick_fn tick, void *ctx)
{
	static const struct probe probes[] = {
		{ "thread__start", true, false },   { "thread__stop", true, false },
		{ "class__loaded", false, false },  { "class__unloaded", false, false },
		{ "vmops__begin", false, false },   { "vmops__end", false, false },
		{ "gc__begin", true, false },       { "gc__end", true, false },
		{ "mem__pool__gc__begin", true, false }, { "mem__pool__gc__end", true, false },
		{ "monitor__contended__enter", false, true },
		{ "monitor__contended__entered", false, true },
		{ "monitor__contended__exit", false, true },
		{ "monitor__wait", false, true },   { "monitor__waited", false, true },
	};
	struct bpf_program *progs[MT_ARRAY_SIZE(probes)];
	struct mt_elf *elf = NULL;
	struct collector *c;
	int err;

	bpf_setup_logging();
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pid = p->pid;
	c->seq = seq;
	c->tick = tick;
	c->ctx = ctx;

	/* Open the skeleton. */
	c->skel = jvmev_bpf__open();
	if (!c->skel) {
		err = -errno;
		p_err("cannot open the jvmev BPF object: %s", strerror(errno));
		goto err_free;
	}
	/* Set the read-only filter before load. */
	c->skel->rodata->targ_tgid = p->pid;

	/* Load and verify. */
	err = jvmev_bpf__load(c->skel);
	if (err) {
		p_err("cannot load the jvmev BPF programs into the kernel: %s%s", strerror(-err),
		      err == -EPERM ? " (run as root, or with CAP_BPF and CAP_PERFMON)" : "");
		goto err_destroy;
	}

	/* Attach each program at every site of its USDT probe. */
	elf = elfsym_open(p->libjvm_host);
	if (!elf) {
		err = -errno;
		p_err("cannot read %s: %s", p->libjvm_host, strerror(errno));
		goto err_destroy;
	}
	c->links.spec_map_fd = bpf_map__fd(c->skel->maps.usdt_specs);
	progs[0] = c->skel->progs.handle_thread_start;
	progs[1] = c->skel->progs.handle_thread_stop;
	progs[2] = c->skel->progs.handle_class_load;
	progs[3] = c->skel->progs.handle_class_unload;
	progs[4] = c->skel->progs.handle_vmop_begin;
	progs[5] = c->skel->progs.handle_vmop_end;
	progs[6] = c->skel->progs.handle_gc_begin;
	progs[7] = c->skel->progs.handle_gc_end;
	progs[8] = c->skel->progs.handle_pool_begin;
	progs[9] = c->skel->progs.handle_pool_end;
	progs[10] = c->skel->progs.handle_mon_enter;
	progs[11] = c->skel->progs.handle_mon_entered;
	progs[12] = c->skel->progs.handle_mon_exit;
	progs[13] = c->skel->progs.handle_mon_wait;
	progs[14] = c->skel->progs.handle_mon_waited;
	for (size_t i = 0; i < MT_ARRAY_SIZE(probes); i++) {
		err = usdt_attach(&c->links, progs[i], elf, p->libjvm_host, p->pid, "hotspot",
				  probes[i].name);
		if (err < 0 && probes[i].required) {
			p_err("cannot attach to USDT probe hotspot:%s in %s: %s "
			      "(`memtrace doctor -p %d` lists what this JVM offers)",
			      probes[i].name, p->libjvm, strerror(-err), p->pid);
			goto err_links;
		}
		if (err < 0) {
			p_warn("hotspot:%s not attached (%s): its events will be missing",
			       probes[i].name, strerror(-err));
			continue;
		}
		if (probes[i].monitor)
			c->monitor_sites += err;
	}
	elfsym_free(elf);
	elf = NULL;

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
	usdt_detach_all(&c->links);
	elfsym_free(elf);
err_destroy:
	jvmev_bpf__destroy(c->skel);
err_free:
	free(c);
	errno = -err;
	return NULL;
}

void collector_free(struct collector *c)
{
	if (!c)
		return;
	ring_buffer__free(c->rb);
	usdt_detach_all(&c->links);
	jvmev_bpf__destroy(c->skel);
	idmap_free(&c->strs);
	idmap_free(&c->tids);
	idmap_free(&c->types);
	idmap_free(&c->monitors);
	idmap_free(&c->jtids);
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
	lost = collector_lost(c);
	if (lost > c->lost_seen) {
		uint64_t now = mono_ns();

		seq_gap(c->seq, now, lost - c->lost_seen, MT_LOST_KERNEL);
		c->lost_seen = lost;
		idmap_free(&c->monitors);
		collector_resync_threads(c, now);
	}
	return n;
}

uint64_t collector_lost(const struct collector *c)
{
	return bpf_percpu_sum(bpf_map__fd(c->skel->maps.jvm_drops));
}

int collector_monitor_sites(const struct collector *c)
{
	return c->monitor_sites;
}

uint64_t collector_java_tid(const struct collector *c, uint64_t java_tid)
{
	return (uintptr_t)idmap_get(&c->jtids, java_tid);
}
