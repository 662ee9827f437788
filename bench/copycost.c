// SPDX-License-Identifier: GPL-2.0
/*
 * copycost.c - the two ways to take a heap's bytes inside a safepoint
 * (issue #14's designs), timed on this machine with N MiB of touched memory:
 *  (a) copy: pwrite() the memory into a memfd pre-faulted by someone else;
 *  (b) freeze: fork() (the child exits at once; its page tables are the cost).
 * Usage: copycost MIB [ROUNDS]. Prints the median of each in ms and GB/s.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 1024, len = mib << 20;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, fd, rc = 1;
	double *tc = calloc((size_t)rounds, sizeof(double)), *tf = calloc((size_t)rounds, sizeof(double));
	char *mem;

	if (!mib || rounds < 1 || !tc || !tf)
		return 2;
	mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 2;
	madvise(mem, len, MADV_NOHUGEPAGE); /* a JVM heap without THP: 4 KiB pages */
	memset(mem, 1, len);
	fd = memfd_create("copycost", 0);
	if (fd < 0 || fallocate(fd, 0, 0, (off_t)len)) {
		perror("memfd");
		goto cleanup;
	}
	for (int r = 0; r < rounds; r++) {
		double t0 = now_ms();
		size_t off = 0;
		pid_t pid;

		while (off < len) { /* (a) */
			ssize_t n = pwrite(fd, mem + off, len - off > (64u << 20) ? 64u << 20 : len - off,
					   (off_t)off);
			if (n <= 0) {
				perror("pwrite");
				goto cleanup;
			}
			off += (size_t)n;
		}
		tc[r] = now_ms() - t0;
		t0 = now_ms();
		pid = fork(); /* (b) */
		if (pid == 0)
			_exit(0);
		tf[r] = now_ms() - t0;
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
	qsort(tc, (size_t)rounds, sizeof(double), cmp);
	qsort(tf, (size_t)rounds, sizeof(double), cmp);
	printf("%zu MiB touched: (a) pwrite into a pre-faulted memfd %.1f ms (%.2f GB/s), "
	       "(b) fork %.1f ms (medians of %d)\n", mib, tc[rounds / 2],
	       (double)len / tc[rounds / 2] / 1e6, tf[rounds / 2], rounds);
	rc = 0;
cleanup:
	if (fd >= 0)
		close(fd);
	munmap(mem, len);
	free(tc);
	free(tf);
	return rc;
}
