// SPDX-License-Identifier: GPL-2.0
/* gctrace.c - the gc BPF object's lifecycle: open → rodata → load → attach. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "gc.skel.h"
#include "probe/gcendprobe.h"
#include "probe/gcpauseprobe.h"
#include "probe/gctrace.h"
#include "jvm/elfsym.h"
#include "jvm/gcmanager.h"
#include "jvm/pidns.h"
#include "probe/bpfutil.h"
#include "probe/kfeatures.h"
#include "probe/uprobemulti.h"
#include "probe/usdtspec.h"
#include "lib/util.h"

/* the kernel features its BPF object needs (ring buffer, USDT arguments) */
#define GC_NEEDS (KF_RINGBUF | KF_COOKIE)

#define MAX_NAMES 64

/* Manager and pool names by their address in the JVM (they never move). */
struct name_cache {
	int n;
	uint64_t addr[MAX_NAMES];
	char name[MAX_NAMES][MT_GC_NAME_LEN];
};

struct gctrace {
	struct gc_bpf *skel;
	struct ring_buffer *rb;
	struct usdt_links links;
	struct bpf_link *cause_link;  /* GCMemoryManager::gc_end; NULL: no causes */
	struct gccause_table causes;
	const char *no_cause;         /* why there are no causes, NULL if there are */
	struct bpf_link *pause_links[GCPAUSEPROBE_N]; /* the JVM's GC clock; NULL: none */
	int cause_fd;                 /* with uprobe_multi links: cause_link's, -1 if none */
	int pause_fds[GCPAUSEPROBE_N]; /* with uprobe_multi links: pause_links', -1 if none */
	const char *no_pauses;        /* why pauses are not timed, NULL if they are */
	struct gcpair gp;
	int pid;
	struct name_cache names;
	struct name_cache managers;   /* GCMemoryManager names by the object's address */
	uint64_t name_errors;
};

/* Read the C string at @addr in the JVM, a page at a time (never past it). */
static void read_name(int pid, uint64_t addr, char *out, size_t len)
{
	size_t got = 0;

	out[0] = '\0';
	while (got + 1 < len) {
		size_t chunk = 4096 - ((addr + got) & 4095);

		if (chunk > len - 1 - got)
			chunk = len - 1 - got;
		if (proc_read_mem(pid, addr + got, out + got, chunk))
			break;
		got += chunk;
		out[got] = '\0';
		if (memchr(out + got - chunk, '\0', chunk))
			return;
	}
	out[got] = '\0';
}

static const char *name_of(struct gctrace *t, uint64_t addr)
{
	struct name_cache *c = &t->names;
	int i;

	for (i = 0; i < c->n; i++)
		if (c->addr[i] == addr)
			return c->name[i];
	if (c->n == MAX_NAMES)
		i = c->n - 1; /* never seen: HotSpot has ~10 pools and managers */
	else
		i = c->n++;
	c->addr[i] = addr;
	read_name(t->pid, addr, c->name[i], MT_GC_NAME_LEN);
	if (!c->name[i][0]) {
		t->name_errors++;
		snprintf(c->name[i], MT_GC_NAME_LEN, "0x%llx", (unsigned long long)addr);
	}
	return c->name[i];
}

/* The name of the GCMemoryManager at @obj whose end message is at @action
 * ("" when it cannot be read: the record then has no manager). */
static const char *manager_of(struct gctrace *t, uint64_t obj, uint64_t action)
{
	struct name_cache *c = &t->managers;
	int i;

	for (i = 0; i < c->n; i++)
		if (c->addr[i] == obj)
			return c->name[i];
	i = c->n == MAX_NAMES ? c->n - 1 : c->n++;
	c->addr[i] = obj;
	if (gcmanager_name(t->pid, obj, action, c->name[i], MT_GC_NAME_LEN))
		t->name_errors++;
	return c->name[i];
}

static int handle_event(void *ctx, void *data, size_t len)
{
	const struct mt_gc_raw *r = data;
	struct gctrace *t = ctx;
	struct mt_gc_event e;

	if (len < sizeof(*r))
		return 0;
	memset(&e, 0, sizeof(e));
	e.ts_ns = r->ts_ns;
	e.tid = r->tid;
	e.kind = r->kind;
	e.is_full = r->is_full;
	e.init = r->init;
	e.used = r->used;
	e.committed = r->committed;
	e.max = r->max;
	if (r->kind == MT_POOL_BEGIN || r->kind == MT_POOL_END) {
		snprintf(e.manager, sizeof(e.manager), "%s", name_of(t, r->manager));
		snprintf(e.pool, sizeof(e.pool), "%s", name_of(t, r->pool));
	} else if (r->kind == MT_GC_CAUSE) {
		char buf[32];

		snprintf(e.cause, sizeof(e.cause), "%s",
			 gccause_name(&t->causes, r->cause, buf, sizeof(buf)));
		if (r->action)
			snprintf(e.action, sizeof(e.action), "%s", name_of(t, r->action));
		if (r->manager)
			snprintf(e.manager, sizeof(e.manager), "%s",
				 manager_of(t, r->manager, r->action));
	} else if (r->kind == MT_PAUSE_BEGIN || r->kind == MT_PAUSE_END ||
		   r->kind == MT_TRACE_BEGIN || r->kind == MT_TRACE_END) {
		e.ticks = r->ticks;
		if (r->kind == MT_PAUSE_BEGIN && r->manager)
			snprintf(e.pause, sizeof(e.pause), "%s", name_of(t, r->manager));
	}
	gcpair_feed(&t->gp, &e);
	return 0;
}

/* detach - every uprobe of @t: perf-event links and uprobe_multi links. */
static void detach(struct gctrace *t)
{
	for (int i = 0; i < GCPAUSEPROBE_N; i++) {
		bpf_link__destroy(t->pause_links[i]);
		if (t->pause_fds[i] >= 0)
			close(t->pause_fds[i]);
	}
	bpf_link__destroy(t->cause_link);
	if (t->cause_fd >= 0)
		close(t->cause_fd);
	usdt_detach_all(&t->links);
}

struct gctrace *gctrace_new(const struct mt_proc *p, gcpair_cb cb, void *ctx)
{
	/* Attached in this order, outside in and ends first: while they attach,
	 * an end may come without its begin (a collection in flight then,
	 * counted so by gcpair), never a begin without its end; a collection
	 * whose pool probes are not attached yet is a pause of its VM operation. */
	struct usdt_probe probes[4] = { { .name = "gc__end" }, { .name = "gc__begin" },
					{ .name = "mem__pool__gc__end" },
					{ .name = "mem__pool__gc__begin" } };
	struct gctrace *t;
	int err;

	bpfutil_setup_logging();
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->pid = p->pid;
	t->cause_fd = -1;
	for (int i = 0; i < GCPAUSEPROBE_N; i++)
		t->pause_fds[i] = -1;
	gcpair_init(&t->gp, cb, ctx);

	/* Open the skeleton. */
	t->skel = gc_bpf__open();
	if (!t->skel) {
		err = -errno;
		p_err("cannot open the gc BPF object: %s", strerror(errno));
		goto err_free;
	}
	/* Set the read-only filter before load. */
	t->skel->rodata->targ_tgid = pidns_targ_tgid(p); /* 0 below the host pid ns */
	/* tests: a program the verifier refuses, as a kernel unlike ours could */
	t->skel->rodata->targ_refuse = getenv("MEMTRACE_TEST_VERIFIER") &&
				       !strcmp(getenv("MEMTRACE_TEST_VERIFIER"), "refuse");
	/* Every uprobe through uprobe_multi links where the kernel has them:
	 * a perf-event uprobe is destroyed under the kernel's trace-event
	 * mutex, waiting for a grace period there (probe/uprobemulti.h), and
	 * every attach waits behind it - serve --all over JVMs coming and
	 * going one a second spent its main thread there (bench/serve_scale.sh:
	 * JVMs watched 6-18 s late, then not at all). */
	t->links.multi = uprobemulti_supported();
	if (t->links.multi) {
		struct bpf_program *prog;

		bpf_object__for_each_program(prog, t->skel->obj)
			bpf_program__set_expected_attach_type(prog,
				(enum bpf_attach_type)UPROBEMULTI_ATTACH_TYPE);
	}

	/* Load and verify. */
	err = bpfutil_check("gc", GC_NEEDS);
	if (err)
		goto err_destroy;
	err = gc_bpf__load(t->skel);
	if (err) {
		bpfutil_load_failed("gc", err, GC_NEEDS);
		goto err_destroy;
	}
	bpfutil_loaded("gc", t->skel->obj);

	/* Attach each program at every site of its USDT probe in this JVM's libjvm. */
	t->links.spec_map_fd = bpf_map__fd(t->skel->maps.usdt_specs);
	probes[0].prog = t->skel->progs.handle_gc_end;
	probes[1].prog = t->skel->progs.handle_gc_begin;
	probes[2].prog = t->skel->progs.handle_pool_end;
	probes[3].prog = t->skel->progs.handle_pool_begin;
	/* The causes: a uprobe of their own; without it collections have none.
	 * Attached first: a cycle whose pool begins are seen then always has
	 * its gc_end seen too (attached after, the first cycle could lack its
	 * cause and its end time). A cause heard for a cycle whose begins were
	 * missed is overwritten by the next cycle's own before its pool ends. */
	{
		struct bpf_program *const progs[GCPAUSEPROBE_N] = {
			t->skel->progs.handle_pause_begin, t->skel->progs.handle_pause_end,
			t->skel->progs.handle_trace_begin, t->skel->progs.handle_trace_end,
		};
		struct mt_elf *elf = elfsym_open(p->libjvm_host); /* one parse for both */

		err = gcendprobe_attach(t->skel->progs.handle_gc_cause, p, elf, &t->cause_link,
					t->links.multi ? &t->cause_fd : NULL, &t->causes,
					&t->no_cause);
		if (err == -ENOENT || err == -ENOTSUP)
			err = 0;
		/* The pauses of concurrent cycles and every collection's duration,
		 * timed as JFR times them; without these uprobes gc__begin/gc__end
		 * bracket the pauses and cycles last their memory managers' windows. */
		if (!err)
			err = gcpauseprobe_attach(progs, p, elf, t->pause_links,
						  t->links.multi ? t->pause_fds : NULL, &t->no_pauses);
		if (err == -ENOENT)
			err = 0;
		elfsym_free(elf);
		if (err)
			goto err_links;
	}
	err = usdt_attach_hotspot(&t->links, probes, MT_ARRAY_SIZE(probes), p);
	if (err)
		goto err_links;

	/* Open the ring buffer. */
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.gc_events), handle_event, t, NULL);
	if (!t->rb) {
		err = -errno;
		p_err("cannot open the gc ring buffer: %s", strerror(errno));
		goto err_links;
	}
	return t;

err_links:
	detach(t);
err_destroy:
	gc_bpf__destroy(t->skel);
err_free:
	free(t);
	errno = -err;
	return NULL;
}

void gctrace_free(struct gctrace *t)
{
	if (!t)
		return;
	ring_buffer__free(t->rb);
	detach(t);
	gc_bpf__destroy(t->skel);
	free(t);
}

const char *gctrace_no_cause(const struct gctrace *t)
{
	return t->no_cause;
}

const char *gctrace_no_pauses(const struct gctrace *t)
{
	return t->no_pauses;
}

int gctrace_poll(struct gctrace *t, int timeout_ms)
{
	int n = ring_buffer__poll(t->rb, timeout_ms);

	if (n == -EINTR)
		n = 0;
	if (n < 0)
		return n;
	/* The BPF side submits without wakeups: drain what is there. */
	return ring_buffer__consume(t->rb);
}

void gctrace_finish(struct gctrace *t)
{
	ring_buffer__consume(t->rb);
	gcpair_finish(&t->gp);
}

uint64_t gctrace_lost(struct gctrace *t)
{
	return bpfutil_percpu_sum(bpf_map__fd(t->skel->maps.gc_drops));
}

const struct gcpair *gctrace_pairing(struct gctrace *t)
{
	return &t->gp;
}
