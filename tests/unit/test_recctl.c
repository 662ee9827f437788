/* test_recctl.c - the pure parts of serve's query and record endpoints:
 * finding `memtrace record` processes by their command line and SigCgt mask
 * (POST /api/v1/jvms/PID/record/pause), the heap flags of a query, and the
 * per-thread p_err capture a query's worker uses. */
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "heap/querylive.h"
#include "serve/recctl.h"
#include "lib/util.h"

/* A /proc/PID/cmdline from a string with '|' between arguments. */
static int pid_of(const char *args)
{
	char buf[512];
	size_t n = strlen(args);

	memcpy(buf, args, n + 1);
	for (size_t i = 0; i < n; i++)
		if (buf[i] == '|')
			buf[i] = '\0';
	return recctl_cmdline_pid(buf, n + 1);
}

static void test_cmdline(void **state)
{
	assert_int_equal(pid_of("memtrace|record|-p|42|-o|x.gz"), 42);
	assert_int_equal(pid_of("/usr/local/bin/memtrace|record|-o|x.gz|--pid|7"), 7);
	assert_int_equal(pid_of("./build/memtrace|--json|-q|record|--pid=123"), 123);
	assert_int_equal(pid_of("memtrace|record|-p99|--pause|1-2"), 99);
	/* not a record, not memtrace, no pid, bad pid, unknown global option */
	assert_int_equal(pid_of("memtrace|gc|-p|42"), 0);
	assert_int_equal(pid_of("memtrace|-p|42"), 0);
	assert_int_equal(pid_of("notmemtrace|record|-p|42"), 0);
	assert_int_equal(pid_of("memtrace-record|record|-p|42"), 0);
	assert_int_equal(pid_of("memtrace|record|-o|x.gz"), 0);
	assert_int_equal(pid_of("memtrace|record|-p|x"), 0);
	assert_int_equal(pid_of("memtrace|record|-p"), 0);
	assert_int_equal(pid_of("memtrace|record|--|-p|42"), 0);
	assert_int_equal(pid_of("memtrace|--weird|record|-p|42"), 0);
	assert_int_equal(pid_of("memtrace"), 0);
	assert_int_equal(recctl_cmdline_pid("", 0), 0);
	/* the last argument not NUL-terminated: ignored, never read past @len */
	assert_int_equal(recctl_cmdline_pid("memtrace\0record\0-p\0" "42", 21), 0);
}

static void test_catches(void **state)
{
	/* SIGUSR1 is 10 (bit 9: 0x200), SIGUSR2 12 (bit 11: 0x800) */
	const char *both = "Name:\tmemtrace\nSigIgn:\t0000000000000000\nSigCgt:\t0000000000004a02\n";
	const char *one = "Name:\tmemtrace\nSigCgt:\t0000000000000200\nCapEff:\t0\n";

	assert_true(recctl_catches(both, SIGUSR1));
	assert_true(recctl_catches(both, SIGUSR2));
	assert_true(recctl_catches(both, SIGINT));
	assert_false(recctl_catches(both, SIGQUIT));
	assert_true(recctl_catches(one, SIGUSR1));
	assert_false(recctl_catches(one, SIGUSR2));
	assert_false(recctl_catches("Name:\tx\n", SIGUSR1));
	assert_true(recctl_catches("SigCgt:\t0000000000000800\n", SIGUSR2));
	assert_false(recctl_catches(both, 0));
	assert_false(recctl_catches(both, 65));
}

/* No record of pid 2^30 runs: nothing signalled, nothing starting. */
static void test_signal_none(void **state)
{
	struct recctl_result r;

	assert_int_equal(recctl_signal(1 << 30, true, &r), 0);
	assert_int_equal(r.nsignalled, 0);
	assert_int_equal(r.nstarting, 0);
}

static void test_heap_flags(void **state)
{
	struct dsl_needs n = { 0 };
	const char *f[] = { "data" };

	assert_int_equal(querylive_heap_flags(&n), 0);
	n.refs = true;
	assert_int_equal(querylive_heap_flags(&n), MT_AP_HEAP_REFS);
	n.fields = f;
	n.nfields = 1;
	assert_int_equal(querylive_heap_flags(&n), MT_AP_HEAP_REFS | MT_AP_HEAP_STRINGS);
	n.refs = false;
	n.nfields = 0;
	n.strings = true;
	assert_int_equal(querylive_heap_flags(&n), MT_AP_HEAP_STRINGS);
}

/* p_err_capture: the last p_err of this thread, until stopped */
static void test_err_capture(void **state)
{
	char buf[16];

	p_err_capture(buf, sizeof(buf));
	assert_string_equal(buf, "");
	p_err("first %d", 1);
	p_err("second, longer than the buffer %d", 2);
	assert_string_equal(buf, "second, longer ");
	p_err_capture(NULL, 0);
	p_err("not kept");
	assert_string_equal(buf, "second, longer ");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cmdline),
		cmocka_unit_test(test_catches),
		cmocka_unit_test(test_signal_none),
		cmocka_unit_test(test_heap_flags),
		cmocka_unit_test(test_err_capture),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
