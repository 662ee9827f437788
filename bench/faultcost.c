// SPDX-License-Identifier: GPL-2.0
/*
 * faultcost - what one page fault after a fork costs a writer on this machine
 * (bench/freeze.sh turns the JVM's fault counts into time with it):
 * MiB of anonymous memory touched, fork, the child sleeping; the parent
 * writes one byte per 4 KiB page (a copy-on-write fault each), the child is
 * killed, the parent writes the rest (a write-protect fault each, no copy:
 * the page is its own again). Prints one JSON line:
 *   {"mib":N,"fork_ms":F,"cow_us":C,"reuse_us":R,"nofault_us":Z}
 *   build/bench/faultcost [MiB]   (default 256)
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? (size_t)atoi(argv[1]) : 256, sz = mib << 20, pg = 4096, half = sz / 2;
	char *m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double t0, t1, t2, t3, t4;
	pid_t c;

	if (m == MAP_FAILED || !mib)
		return 1;
	memset(m, 1, sz);
	t0 = now();
	c = fork();
	if (c == 0) {
		pause();
		_exit(0);
	}
	t1 = now();
	for (size_t o = 0; o < half; o += pg)
		m[o] = 2; /* shared with the child: copied */
	t2 = now();
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	t3 = now();
	for (size_t o = half; o < sz; o += pg)
		m[o] = 2; /* ours again, still write-protected */
	t4 = now();
	{
		double t5 = now();

		for (size_t o = 0; o < sz; o += pg)
			m[o] = 3;
		printf("{\"mib\":%zu,\"fork_ms\":%.3f,\"cow_us\":%.3f,\"reuse_us\":%.3f,\"nofault_us\":%.4f}\n",
		       mib, (t1 - t0) * 1e3, (t2 - t1) * 1e6 / (double)(half / pg),
		       (t4 - t3) * 1e6 / (double)(half / pg), (now() - t5) * 1e6 / (double)(sz / pg));
	}
	return 0;
}
