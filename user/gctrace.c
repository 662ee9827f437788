// SPDX-License-Identifier: GPL-2.0
/* gctrace.c - the gc BPF object's lifecycle: open → rodata → load → attach. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "gc.skel.h"
#include "gctrace.h"
#include "util.h"

struct gctrace {
	struct gc_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_link *links[4];
	struct gcpair gp;
};

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!getenv("MEMTRACE_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void bpf_setup_logging(void)
{
	libbpf_set_print(libbpf_print);
}

uint64_t bpf_percpu_sum(int map_fd)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0, *vals;
	uint32_t zero = 0;

	if (ncpu <= 0)
		return 0;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return 0;
	if (!bpf_map_lookup_elem(map_fd, &zero, vals))
		for (int i = 0; i < ncpu; i++)
			sum += vals[i];
	free(vals);
	return sum;
}

static int handle_event(void *ctx, void *data, size_t len)
{
	struct gctrace *t = ctx;

	if (len < sizeof(struct mt_gc_event))
		return 0;
	gcpair_feed(&t->gp, data);
	return 0;
}

struct gctrace *gctrace_new(const struct mt_proc *p, gcpair_cb cb, void *ctx)
{
	static const char *const probes[4] = { "gc__begin", "gc__end", "mem__pool__gc__begin",
					       "mem__pool__gc__end" };
	struct bpf_program *progs[4];
	struct gctrace *t;
	int err;

	bpf_setup_logging();
	t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	gcpair_init(&t->gp, cb, ctx);

	/* Open the skeleton. */
	t->skel = gc_bpf__open();
	if (!t->skel) {
		err = -errno;
		p_err("cannot open the gc BPF object: %s", strerror(errno));
		goto err_free;
	}
	/* Set the read-only filter before load. */
	t->skel->rodata->targ_tgid = p->pid;

	/* Load and verify. */
	err = gc_bpf__load(t->skel);
	if (err) {
		p_err("cannot load the gc BPF programs into the kernel: %s%s", strerror(-err),
		      err == -EPERM ? " (run as root, or with CAP_BPF and CAP_PERFMON)" : "");
		goto err_destroy;
	}

	/* Attach each program to its USDT probe in this JVM's libjvm. */
	progs[0] = t->skel->progs.handle_gc_begin;
	progs[1] = t->skel->progs.handle_gc_end;
	progs[2] = t->skel->progs.handle_pool_begin;
	progs[3] = t->skel->progs.handle_pool_end;
	for (int i = 0; i < 4; i++) {
		t->links[i] = bpf_program__attach_usdt(progs[i], p->pid, p->libjvm_host,
						       "hotspot", probes[i], NULL);
		if (!t->links[i]) {
			err = -errno;
			p_err("cannot attach to USDT probe hotspot:%s in %s: %s "
			      "(`memtrace doctor -p %d` lists what this JVM offers)",
			      probes[i], p->libjvm, strerror(errno), p->pid);
			goto err_links;
		}
	}

	/* Open the ring buffer. */
	t->rb = ring_buffer__new(bpf_map__fd(t->skel->maps.gc_events), handle_event, t, NULL);
	if (!t->rb) {
		err = -errno;
		p_err("cannot open the gc ring buffer: %s", strerror(errno));
		goto err_links;
	}
	return t;

err_links:
	for (int i = 0; i < 4; i++)
		bpf_link__destroy(t->links[i]);
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
	for (int i = 0; i < 4; i++)
		bpf_link__destroy(t->links[i]);
	gc_bpf__destroy(t->skel);
	free(t);
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
	return bpf_percpu_sum(bpf_map__fd(t->skel->maps.gc_drops));
}

const struct gcpair *gctrace_pairing(struct gctrace *t)
{
	return &t->gp;
}
