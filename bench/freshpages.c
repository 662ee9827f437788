// SPDX-License-Identifier: GPL-2.0
/*
 * freshpages - what memory touched for the first time costs on this machine,
 * by page size (util_hugepages_wanted() in user/lib/util.c decides from the
 * machine; this measures what it decides about). Each round maps MiB of
 * anonymous memory four ways, one after the other, and writes one byte per
 * 4 KiB page:
 *   huge       MADV_HUGEPAGE (a 2 MiB fault each where THP allows it)
 *   small      MADV_NOHUGEPAGE (a 4 KiB fault each)
 *   populate   MADV_NOHUGEPAGE, then MADV_POPULATE_WRITE (one call)
 *   shmem      a memfd mapped shared (what a copy could share with memtrace)
 *   mapmade    a memfd whose pages are made already (fallocate, not timed),
 *              mapped shared and populated (MADV_POPULATE_WRITE): what each
 *              process pays to map in a pool another one made - memtrace
 *              and the frozen copy, for every 4 KiB page of the records
 * Between the ways it sleeps SLEEP seconds, so that memory freed by the one
 * before has been given back to a hypervisor that takes free pages (a virtio
 * balloon with free page reporting waits 2 s). One JSON line per way and
 * round: {"way":"huge","mib":N,"ms":T,"gbps":G}
 *   build/bench/freshpages [MiB] [rounds] [sleep]   (256, 3, 4)
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Map @n bytes the way @way says, touch every page; the time it took, or
 * -1 when the kernel refused. */
static double one(const char *way, size_t n)
{
	double t0 = now(), t;
	char *p;
	int fd = -1;

	if (!strcmp(way, "shmem") || !strcmp(way, "mapmade")) {
		fd = memfd_create("freshpages", 0);
		if (fd < 0 || ftruncate(fd, (off_t)n))
			return -1;
		if (!strcmp(way, "mapmade")) {
			if (fallocate(fd, 0, 0, (off_t)n)) {
				close(fd);
				return -1;
			}
			t0 = now(); /* the pages are made: their mapping is timed */
		}
		p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	} else {
		p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (p == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!strcmp(way, "huge"))
		madvise(p, n, MADV_HUGEPAGE);
	else if (strcmp(way, "shmem") && strcmp(way, "mapmade"))
		madvise(p, n, MADV_NOHUGEPAGE);
	if (!strcmp(way, "populate") || !strcmp(way, "mapmade"))
		madvise(p, n, MADV_POPULATE_WRITE);
	for (size_t i = 0; i < n; i += 4096)
		p[i] = 1;
	t = now() - t0;
	munmap(p, n);
	if (fd >= 0)
		close(fd);
	return t;
}

int main(int argc, char **argv)
{
	static const char *ways[] = { "huge", "small", "populate", "shmem", "mapmade" };
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 256;
	int rounds = argc > 2 ? atoi(argv[2]) : 3;
	int gap = argc > 3 ? atoi(argv[3]) : 4;

	if (!mib || rounds < 1 || gap < 0) {
		fprintf(stderr, "usage: freshpages [MiB] [rounds] [sleep seconds]\n");
		return 2;
	}
	for (int r = 0; r < rounds; r++) {
		for (size_t w = 0; w < sizeof(ways) / sizeof(ways[0]); w++) {
			double t;

			sleep((unsigned)gap);
			t = one(ways[w], mib << 20);
			if (t < 0) {
				fprintf(stderr, "freshpages: %s: the kernel refused %zu MiB\n",
					ways[w], mib);
				return 1;
			}
			printf("{\"way\":\"%s\",\"mib\":%zu,\"ms\":%.1f,\"gbps\":%.2f}\n", ways[w],
			       mib, t * 1e3, (double)(mib << 20) / t / 1e9);
			fflush(stdout);
		}
	}
	return 0;
}
