// SPDX-License-Identifier: GPL-2.0
/* test_heapfreeze - the pure parts of user/heap/heapfreeze.c: --walk's
 * values, a cgroup's bytes left under its limit (v1 and v2 texts), a field
 * of /proc/meminfo or /proc/PID/status. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "heap/heapfreeze.h"

static void test_mode(void **state)
{
	int m = -1;

	assert_int_equal(heapfreeze_mode_parse("auto", &m), 0);
	assert_int_equal(m, HEAPFREEZE_AUTO);
	assert_int_equal(heapfreeze_mode_parse("frozen", &m), 0);
	assert_int_equal(m, HEAPFREEZE_FROZEN);
	assert_int_equal(heapfreeze_mode_parse("paused", &m), 0);
	assert_int_equal(m, HEAPFREEZE_PAUSED);
	assert_int_equal(heapfreeze_mode_parse("Frozen", &m), -EINVAL);
	assert_int_equal(heapfreeze_mode_parse("", &m), -EINVAL);
	assert_int_equal(m, HEAPFREEZE_PAUSED); /* untouched on error */
}

static void test_cgroup_left(void **state)
{
	/* v2 */
	assert_true(heapfreeze_cgroup_left("max\n", "123\n") == UINT64_MAX);
	assert_true(heapfreeze_cgroup_left("1073741824\n", "1000000\n") == 1073741824ull - 1000000);
	assert_true(heapfreeze_cgroup_left("1000\n", "5000\n") == 0); /* over: nothing left */
	/* v1 "unlimited": 2^63 rounded down to a page */
	assert_true(heapfreeze_cgroup_left("9223372036854771712\n", "5\n") == UINT64_MAX);
	/* missing or garbage files: no limit known */
	assert_true(heapfreeze_cgroup_left(NULL, "5") == UINT64_MAX);
	assert_true(heapfreeze_cgroup_left("100", NULL) == UINT64_MAX);
	assert_true(heapfreeze_cgroup_left("x", "5") == UINT64_MAX);
	assert_true(heapfreeze_cgroup_left("100", "y") == UINT64_MAX);
}

static void test_meminfo(void **state)
{
	static const char meminfo[] = "MemTotal:       24684156 kB\n"
				      "MemFree:        21915204 kB\n"
				      "MemAvailable:   23277552 kB\n";
	static const char status[] = "Name:\tjava\nVmRSS:\t  719204 kB\nRssAnon:\t  680000 kB\n";

	assert_true(heapfreeze_meminfo_kb(meminfo, "MemAvailable") == 23277552);
	assert_true(heapfreeze_meminfo_kb(meminfo, "MemTotal") == 24684156);
	assert_true(heapfreeze_meminfo_kb(meminfo, "Mem") == UINT64_MAX); /* whole keys only */
	assert_true(heapfreeze_meminfo_kb(meminfo, "Cached") == UINT64_MAX);
	assert_true(heapfreeze_meminfo_kb(status, "RssAnon") == 680000);
	assert_true(heapfreeze_meminfo_kb(status, "VmRSS") == 719204);
	assert_true(heapfreeze_meminfo_kb("", "VmRSS") == UINT64_MAX);
}

/* ZGC's copy: its estimate (3.3 GB/s) and the most it may copy in a bound,
 * the fork's estimate taken off first (none when the fork alone is over). */
static void test_zgc_copy(void **state)
{
	(void)state;
	assert_true(heapfreeze_zgc_copy_estimate_ns(100ull << 20, 0) ==
		    100ull * HEAPFREEZE_ZGC_COPY_NS_PER_MB);
	assert_true(heapfreeze_zgc_copy_max_mib(0, 100, 0) == 100000000 / HEAPFREEZE_ZGC_COPY_NS_PER_MB);
	assert_true(heapfreeze_zgc_copy_max_mib(4000000, 100, 0) ==
		    96000000 / HEAPFREEZE_ZGC_COPY_NS_PER_MB);
	/* a copy of what the bound allows is estimated within it */
	assert_true(heapfreeze_zgc_copy_estimate_ns(heapfreeze_zgc_copy_max_mib(4000000, 100, 0) << 20, 0) +
		    4000000 <= 100000000);
	assert_true(heapfreeze_zgc_copy_max_mib(100000000, 100, 0) == 0);
	assert_true(heapfreeze_zgc_copy_max_mib(200000000, 100, 0) == 0);
	/* at a learned rate: 1 GB/s, 1 ms a MiB - 96 MiB in 100 ms with a 4 ms fork */
	assert_true(heapfreeze_zgc_copy_max_mib(4000000, 100, 1000000) == 96);
	assert_true(heapfreeze_zgc_copy_estimate_ns(96ull << 20, 1000000) == 96000000);
}

/* The rate learned from a copy: the slower of it and the assumed one; a
 * small copy says nothing. */
static void test_zgc_learn(void **state)
{
	uint64_t d = HEAPFREEZE_ZGC_COPY_NS_PER_MB;

	(void)state;
	/* 256 MiB in 170 ms: 1.5 GB/s, slower than 3.3: kept */
	assert_true(heapfreeze_zgc_learn(0, 256ull << 20, 170000000) == 170000000 / 256);
	/* 256 MiB in 50 ms (5 GB/s): the assumed rate stays */
	assert_true(heapfreeze_zgc_learn(0, 256ull << 20, 50000000) == d);
	/* once slower, a faster copy does not undo it */
	assert_true(heapfreeze_zgc_learn(700000, 256ull << 20, 50000000) == 700000);
	/* 16 MiB in 20 ms: too small a copy to say */
	assert_true(heapfreeze_zgc_learn(0, 16ull << 20, 20000000) == d);
	assert_true(heapfreeze_zgc_learn(0, 256ull << 20, 0) == d);
}

/* The copy's pid from the pid it has inside the JVM's namespace: this
 * process stands for the JVM and a child of it for the copy (one pid
 * namespace: the pid itself); a process that is not its child, or no
 * process, is none. */
static void test_copy_pid(void **state)
{
	pid_t c = fork();

	(void)state;
	assert_true(c >= 0);
	if (!c) {
		pause();
		_exit(0);
	}
	assert_int_equal(heapfreeze_copy_pid(getpid(), (uint32_t)c), c);
	assert_int_equal(heapfreeze_copy_pid(getpid(), (uint32_t)getpid()), 0); /* itself */
	assert_int_equal(heapfreeze_copy_pid(getppid(), (uint32_t)c), 0); /* not its parent's */
	assert_int_equal(heapfreeze_copy_pid(getpid(), 0), 0);
	kill(c, SIGKILL);
	waitpid(c, NULL, 0);
	assert_int_equal(heapfreeze_copy_pid(getpid(), (uint32_t)c), 0); /* gone */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mode),
		cmocka_unit_test(test_cgroup_left),
		cmocka_unit_test(test_meminfo),
		cmocka_unit_test(test_zgc_copy),
		cmocka_unit_test(test_zgc_learn),
		cmocka_unit_test(test_copy_pid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
