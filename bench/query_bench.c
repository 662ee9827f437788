// SPDX-License-Identifier: GPL-2.0
/*
 * query_bench.c - heap snapshot costs on a live JVM (bench/query.sh):
 *   query_bench PID ROUNDS PROGRAM.mq
 * Alternates, ROUNDS times, a bare FollowReferences walk (no-op callback,
 * MT_AP_HEAP_BARE) with the projected snapshot walk PROGRAM needs and with a
 * full snapshot walk (what `memtrace snapshot` asks), all on the same heap;
 * prints the median JVM pause of each and the ratios. Then builds the heap
 * of the projected snapshot and runs PROGRAM on it: objects per second.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heapview.h"
#include "heap/snapshot.h"
#include "heap/snaptake.h"
#include "jvm/proc.h"
#include "lib/util.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double median_ms(uint64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_u64);
	return (double)v[n / 2] / 1e6;
}

int main(int argc, char **argv)
{
	uint64_t bare[64], proj[64], full[64], t0, t_build, t_run;
	struct dsl_diags *d = dsl_diags_new();
	struct dsl_program *prog = NULL;
	const struct dsl_needs *needs;
	struct mt_snapshot s;
	struct mt_heapview hv;
	struct mt_proc p;
	uint32_t flags;
	char *src, why[160];
	size_t len;
	int pid, rounds;
	FILE *null_out = fopen("/dev/null", "w");

	if (argc != 4 || parse_pid(argv[1], &pid) || (rounds = atoi(argv[2])) < 1 || rounds > 64) {
		fprintf(stderr, "usage: query_bench PID ROUNDS(1..64) PROGRAM.mq\n");
		return 2;
	}
	mt_opts.quiet = true;
	src = read_file(argv[3], &len);
	if (!src || !d || dsl_compile(src, len, argv[3], NULL, &prog, d)) {
		dsl_diags_render(d, stderr);
		return 1;
	}
	needs = dsl_program_needs(prog);
	flags = (needs->refs ? MT_AP_HEAP_REFS : 0) | (needs->nfields ? MT_AP_HEAP_STRINGS : 0);
	if (proc_open(pid, &p)) {
		fprintf(stderr, "no JVM %d\n", pid);
		return 1;
	}
	for (int i = 0; i < rounds; i++) {
		if (snaptake_once(&p, MT_AP_HEAP_BARE, 0, NULL, 0, HEAPMEM_NONE, &s))
			return 1;
		bare[i] = s.info.pause_ns;
		snapshot_free(&s);
		if (snaptake_once(&p, MT_AP_HEAP_REFS | MT_AP_HEAP_ALLFIELDS | MT_AP_HEAP_STRINGS, 0,
				  NULL, 0, HEAPMEM_VIEW, &s))
			return 1;
		full[i] = s.info.pause_ns;
		snapshot_free(&s);
		if (snaptake_once(&p, flags, 0, needs->fields, needs->nfields, HEAPMEM_VIEW, &s))
			return 1;
		proj[i] = s.info.pause_ns;
		if (i < rounds - 1)
			snapshot_free(&s);
	}
	printf("heap: %llu objects, %llu references, %u classes\n",
	       (unsigned long long)s.info.objects, (unsigned long long)s.info.refs, s.info.nclasses);
	printf("JVM pause, median of %d: bare FollowReferences %.2f ms, %s walk %.2f ms "
	       "(ratio %.2f), full snapshot walk %.2f ms (ratio %.2f)\n", rounds,
	       median_ms(bare, rounds), argv[3], median_ms(proj, rounds),
	       median_ms(proj, rounds) / median_ms(bare, rounds), median_ms(full, rounds),
	       median_ms(full, rounds) / median_ms(bare, rounds));
	t0 = mono_ns();
	if (heapview_build(&s, needs, &hv, why, sizeof(why))) {
		fprintf(stderr, "%s\n", why);
		return 1;
	}
	t_build = mono_ns() - t0;
	t0 = mono_ns();
	if (dsl_run(prog, &hv.heap, null_out, d)) {
		dsl_diags_render(d, stderr);
		return 1;
	}
	t_run = mono_ns() - t0;
	printf("evaluation: heap built in %.2f ms, program ran in %.2f ms: %.1f M objects/s "
	       "(%.1f M objects/s with the build)\n", (double)t_build / 1e6, (double)t_run / 1e6,
	       (double)hv.heap.nobjects / ((double)t_run / 1e9) / 1e6,
	       (double)hv.heap.nobjects / ((double)(t_run + t_build) / 1e9) / 1e6);
	heapview_free(&hv);
	snapshot_free(&s);
	dsl_program_free(prog);
	dsl_diags_free(d);
	free(src);
	return 0;
}
