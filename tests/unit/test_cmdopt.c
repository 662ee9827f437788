/* test_cmdopt.c - the pieces the subcommands share (user/cmd/cmdopt.c): the
 * common options with their exact messages and exit codes, the "needs -p
 * PID" check, the recording FILE argument; and util's write_all(). */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmd/cmdopt.h"
#include "monitor/recording_read.h"
#include "lib/util.h"

static int usage_out, usage_err;

static void fake_usage(FILE *f)
{
	if (f == stdout)
		usage_out++;
	else
		usage_err++;
}

/* cmdopt_common: each shared letter, its message and its exit code */
static void test_common(void **state)
{
	struct cmdopt o = { .usage = fake_usage, .top = 20 };
	char msg[160];

	p_err_capture(msg, sizeof(msg));
	assert_int_equal(cmdopt_common('p', "42", &o), MT_CMDOPT_MORE);
	assert_int_equal(o.pid, 42);
	assert_int_equal(cmdopt_common('p', "x", &o), 2);
	assert_string_equal(msg, "invalid pid 'x': expected a positive number");
	o.terse = true;
	assert_int_equal(cmdopt_common('p', "0", &o), 2);
	assert_string_equal(msg, "invalid pid '0'");

	assert_int_equal(cmdopt_common('d', "2.5", &o), MT_CMDOPT_MORE);
	assert_true(o.duration == 2.5);
	assert_int_equal(cmdopt_common('d', "soon", &o), 2);
	assert_string_equal(msg, "invalid --duration 'soon': expected a duration: 20 (seconds), "
				 "500ms, 5s, 2m, 1h");
	/* units: ns us ms s m h; a bare number is seconds */
	{
		static const struct { const char *s; double v; } ok[] = {
			{ "5s", 5 }, { "500ms", 0.5 }, { "2m", 120 }, { "1.5h", 5400 },
			{ "250us", 0.00025 }, { "0", 0 }, { "0.25", 0.25 }, { "7", 7 },
		};
		static const char *const bad[] = { "5 s", "-1s", "1y", "s", "", "5sec", "1e30",
						   "+3", " 3", "2m30s" };
		double v;

		for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
			assert_int_equal(parse_seconds(ok[i].s, &v), 0);
			assert_true(v > ok[i].v - 1e-12 && v < ok[i].v + 1e-12);
		}
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
			assert_int_equal(parse_seconds(bad[i], &v), -EINVAL);
	}

	assert_int_equal(o.top, 20);
	assert_int_equal(cmdopt_common('t', "5", &o), MT_CMDOPT_MORE);
	assert_int_equal(o.top, 5);
	assert_int_equal(cmdopt_common('t', "0", &o), 2);
	assert_string_equal(msg, "invalid --top '0'");

	assert_false(o.has_max_pause);
	assert_int_equal(cmdopt_common('m', "3600000", &o), MT_CMDOPT_MORE);
	assert_int_equal(o.max_pause, 3600000);
	assert_true(o.has_max_pause);
	assert_int_equal(cmdopt_common('m', "3600001", &o), 2);
	assert_string_equal(msg, "invalid --max-pause '3600001' (milliseconds)");

	mt_opts.json = false;
	assert_int_equal(cmdopt_common('j', NULL, &o), MT_CMDOPT_MORE);
	assert_true(mt_opts.json);
	mt_opts.json = false;

	usage_out = usage_err = 0;
	assert_int_equal(cmdopt_common('h', NULL, &o), 0);
	assert_int_equal(usage_out, 1);
	assert_int_equal(cmdopt_common('?', NULL, &o), 2);
	assert_int_equal(cmdopt_common('Z', NULL, &o), 2);
	assert_int_equal(usage_err, 2);
	p_err_capture(NULL, 0);
}

/* GNU order (options anywhere, `--` ends them) and cmdopt_no_args */
static void test_gnu_order(void **state)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "top", required_argument, NULL, 't' },
		{ 0 },
	};
	char a0[] = "report", a1[] = "FILE", a2[] = "--json", a3[] = "--top", a4[] = "3";
	char b0[] = "gc", b1[] = "-t", b2[] = "5", b3[] = "--", b4[] = "-p", b5[] = "x";
	char *av[] = { a0, a1, a2, a3, a4, NULL };
	char *bv[] = { b0, b1, b2, b3, b4, b5, NULL };
	struct cmdopt o = { .usage = fake_usage, .top = 20 };
	char msg[160];
	int opt;

	p_err_capture(msg, sizeof(msg));
	mt_opts.json = false;
	/* the FILE first, options after it */
	optind = 0;
	while ((opt = getopt_long(5, av, "jt:", longopts, NULL)) != -1)
		assert_int_equal(cmdopt_common(opt, optarg, &o), MT_CMDOPT_MORE);
	assert_true(mt_opts.json);
	assert_int_equal(o.top, 3);
	assert_int_equal(optind, 4);
	assert_string_equal(av[optind], "FILE");
	usage_err = 0;
	assert_int_equal(cmdopt_no_args(5, av, "gc", fake_usage), 2);
	assert_string_equal(msg, "gc takes no argument (got 'FILE')");
	assert_int_equal(usage_err, 1);
	/* `--` ends the options: what follows is an argument, even "-p" */
	optind = 0;
	while ((opt = getopt_long(6, bv, "jt:", longopts, NULL)) != -1)
		assert_int_equal(cmdopt_common(opt, optarg, &o), MT_CMDOPT_MORE);
	assert_int_equal(o.top, 5);
	assert_string_equal(bv[optind], "-p");
	assert_int_equal(6 - optind, 2);
	optind = 6;
	assert_int_equal(cmdopt_no_args(6, bv, "gc", fake_usage), 0);
	mt_opts.json = false;
	p_err_capture(NULL, 0);
}

/* cmdopt_need_pid: the message names the command; no usage printed */
static void test_need_pid(void **state)
{
	struct cmdopt o = { .usage = fake_usage };
	char msg[160];

	p_err_capture(msg, sizeof(msg));
	usage_out = usage_err = 0;
	assert_int_equal(cmdopt_need_pid(&o, "gc"), -EINVAL);
	assert_string_equal(msg, "gc needs -p PID (`memtrace ps` lists the JVMs)");
	assert_int_equal(usage_err, 0);
	o.pid = 7;
	msg[0] = '\0';
	assert_int_equal(cmdopt_need_pid(&o, "gc"), 0);
	assert_string_equal(msg, "");
	p_err_capture(NULL, 0);
}

/* cmdopt_recording: not one file, unreadable, not a recording */
static void test_recording(void **state)
{
	char path[] = "/tmp/memtrace-test-cmdopt-XXXXXX";
	char *none[] = { "check" };
	char *two[] = { "check", "a", "b" };
	char *missing[] = { "report", "/nonexistent/memtrace.rec" };
	char *junk[] = { "check", path };
	struct recording_reader *r = NULL;
	struct recording_header h;
	char msg[256], want[300];
	int fd;

	p_err_capture(msg, sizeof(msg));
	assert_int_equal(cmdopt_recording(1, none, 1, "check", &r, &h), 2);
	assert_string_equal(msg, "check needs one recording file (`memtrace check FILE`)");
	assert_int_equal(cmdopt_recording(3, two, 1, "report", &r, &h), 2);
	assert_string_equal(msg, "report needs one recording file (`memtrace report FILE`)");
	assert_int_equal(cmdopt_recording(2, missing, 1, "report", &r, &h), 1);
	assert_string_equal(msg, "cannot read /nonexistent/memtrace.rec: No such file or directory");

	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write_all(fd, "not a recording\n", 16), 0);
	close(fd);
	assert_int_equal(cmdopt_recording(2, junk, 1, "check", &r, &h), 1);
	snprintf(want, sizeof(want), "cannot read %s: not a memtrace recording", path);
	assert_string_equal(msg, want);
	assert_null(r);
	unlink(path);
	p_err_capture(NULL, 0);
}

/* write_all: everything arrives; a bad descriptor is -EBADF */
static void test_write_all(void **state)
{
	char big[200000], back[sizeof(big)];
	size_t got = 0;
	int fds[2], status;
	pid_t child;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7);
	assert_int_equal(pipe(fds), 0);
	child = fork();
	assert_true(child >= 0);
	if (child == 0) { /* the writer: more than a pipe holds, in one call */
		close(fds[0]);
		_exit(write_all(fds[1], big, sizeof(big)) ? 1 : 0);
	}
	close(fds[1]);
	while (got < sizeof(back)) {
		ssize_t n = read(fds[0], back + got, sizeof(back) - got);

		assert_true(n > 0);
		got += (size_t)n;
	}
	close(fds[0]);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_memory_equal(big, back, sizeof(big));
	assert_int_equal(write_all(-1, "x", 1), -EBADF);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_common),
		cmocka_unit_test(test_gnu_order),
		cmocka_unit_test(test_need_pid),
		cmocka_unit_test(test_recording),
		cmocka_unit_test(test_write_all),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
