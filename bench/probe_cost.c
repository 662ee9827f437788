// SPDX-License-Identifier: GPL-2.0
/*
 * probe_cost.c - cost per USDT probe hit: nothing attached, a no-op BPF
 * program (the bare trap), and memtrace's gc program with its ring-buffer
 * path (bpf/gc.bpf.c's handle_pool_begin, the heaviest: eight arguments
 * and a 72-byte record). Modes alternate round by round; medians are printed.
 *
 * The probe is this binary's own hotspot:mem__pool__gc__begin with the same
 * eight arguments HotSpot passes, so the very program memtrace loads runs.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sdt.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "jvm/elfsym.h"
#include "gc.skel.h"
#include "noop.skel.h"
#include "probe/usdtspec.h"

static unsigned long long consumed;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static int on_event(void *ctx, void *data, size_t len)
{
	consumed++;
	return 0;
}

/*
 * Hits in timed batches of BATCH, the ring drained between batches (not
 * timed): like a collection, whose few dozen events memtrace reads up to
 * 100 ms later. BATCH records fit the ring, so none is dropped and every
 * hit takes the full reserve/fill/submit path.
 */
#define BATCH 2000

static __attribute__((noinline)) double run_loop(long n, struct ring_buffer *rb)
{
	static const char mgr[] = "G1 Young Generation", pool[] = "G1 Eden Space";
	unsigned long long total = 0;

	for (long done = 0; done < n; done += BATCH) {
		unsigned long long t0 = now_ns();

		for (long i = 0; i < BATCH; i++)
			DTRACE_PROBE8(hotspot, mem__pool__gc__begin, mgr, sizeof(mgr) - 1, pool,
				      sizeof(pool) - 1, i, i, i, i);
		total += now_ns() - t0;
		if (rb)
			ring_buffer__consume(rb);
	}
	return (double)total / n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long hits = argc > 1 ? atol(argv[1]) : 200000;
	int rounds = argc > 2 ? atoi(argv[2]) : 7;
	double none[64], noop[64], mt[64];
	struct noop_bpf *ns = NULL;
	struct gc_bpf *gs = NULL;
	struct bpf_link *ln = NULL;
	struct usdt_links lg = { 0 };
	struct mt_elf *self = NULL;
	struct ring_buffer *rb = NULL;
	unsigned long long drops = 0;
	int err = 1;

	if (rounds > 64)
		rounds = 64;
	/* open → set rodata → load, for both objects */
	ns = noop_bpf__open_and_load(); /* no rodata to set */
	gs = gc_bpf__open();
	if (!ns || !gs) {
		fprintf(stderr, "probe_cost: cannot open the BPF objects (root needed)\n");
		goto cleanup;
	}
	gs->rodata->targ_tgid = getpid();
	if (gc_bpf__load(gs)) {
		fprintf(stderr, "probe_cost: cannot load gc.bpf.o\n");
		goto cleanup;
	}
	rb = ring_buffer__new(bpf_map__fd(gs->maps.gc_events), on_event, NULL, NULL);
	self = elfsym_open("/proc/self/exe");
	if (!rb || !self)
		goto cleanup;
	lg.spec_map_fd = bpf_map__fd(gs->maps.usdt_specs);
	run_loop(hits, NULL); /* warm-up */
	for (int r = 0; r < rounds; r++) {
		none[r] = run_loop(hits, NULL);

		ln = bpf_program__attach_usdt(ns->progs.handle_noop, getpid(), "/proc/self/exe",
					      "hotspot", "mem__pool__gc__begin", NULL);
		if (!ln) {
			fprintf(stderr, "probe_cost: attach noop: %s\n", strerror(errno));
			goto cleanup;
		}
		noop[r] = run_loop(hits, NULL);
		bpf_link__destroy(ln);
		ln = NULL;

		/* exactly as memtrace attaches: user/probe/usdtspec.c */
		if (usdt_attach(&lg, gs->progs.handle_pool_begin, self, "/proc/self/exe",
				getpid(), "hotspot", "mem__pool__gc__begin") <= 0) {
			fprintf(stderr, "probe_cost: attach gc: %s\n", strerror(errno));
			goto cleanup;
		}
		mt[r] = run_loop(hits, rb);
		usdt_detach_all(&lg);
		lg.next_spec = 0;
	}
	{
		int fd = bpf_map__fd(gs->maps.gc_drops), ncpu = libbpf_num_possible_cpus();
		unsigned long long v[ncpu > 0 ? ncpu : 1];
		unsigned int zero = 0;

		if (ncpu > 0 && !bpf_map_lookup_elem(fd, &zero, v))
			for (int i = 0; i < ncpu; i++)
				drops += v[i];
	}
	qsort(none, rounds, sizeof(double), cmp);
	qsort(noop, rounds, sizeof(double), cmp);
	qsort(mt, rounds, sizeof(double), cmp);
	printf("probe_cost: %ld hits x %d rounds, modes alternating; median ns per hit\n", hits,
	       rounds);
	printf("  no program attached       %8.1f ns\n", none[rounds / 2]);
	printf("  bare trap (no-op program) %8.1f ns\n", noop[rounds / 2]);
	printf("  memtrace gc program       %8.1f ns  (events consumed %llu, dropped %llu)\n",
	       mt[rounds / 2], consumed, drops);
	printf("  ratio memtrace / bare trap: %.3f (goal <= 1.2)\n", mt[rounds / 2] / noop[rounds / 2]);
	err = 0;
cleanup:
	bpf_link__destroy(ln);
	usdt_detach_all(&lg);
	elfsym_free(self);
	ring_buffer__free(rb);
	gc_bpf__destroy(gs);
	noop_bpf__destroy(ns);
	return err;
}
