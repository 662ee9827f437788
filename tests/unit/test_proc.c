/* test_proc.c - /proc parsing: main class, JDK release file, NStgid; and a
 * live check on memtrace's own process. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <time.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <cmocka.h>

#include "jvm/proc.h"

static void check_main(const char *args, size_t len, const char *want)
{
	char out[256];

	proc_main_class(args, len, out, sizeof(out));
	assert_string_equal(out, want);
}
#define MAIN(lit, want) check_main(lit, sizeof(lit), want)

static void test_main_class(void **state)
{
	MAIN("java\0-Xmx1g\0-cp\0/a:/b\0com.example.Main\0arg", "com.example.Main");
	MAIN("java\0-jar\0/srv/app.jar\0--port\0""8080", "/srv/app.jar");
	MAIN("java\0--module-path\0mods\0-m\0app/app.Main", "app/app.Main");
	MAIN("java\0--module=app/app.Main", "app/app.Main");
	MAIN("java\0-XX:+UseG1GC\0-classpath\0x\0Hello", "Hello");
	MAIN("java\0-version", "");
	MAIN("java", "");
}

static void test_release(void **state)
{
	char v[64], n[64];

	assert_int_equal(proc_parse_release("IMPLEMENTOR=\"Eclipse Adoptium\"\n"
					    "JAVA_VERSION=\"25.0.3\"\n", v, sizeof(v), n, sizeof(n)),
			 25);
	assert_string_equal(v, "25.0.3");
	assert_string_equal(n, "Eclipse Adoptium");
	assert_int_equal(proc_parse_release("JAVA_VERSION=\"1.8.0_392\"\n", v, sizeof(v), n,
					    sizeof(n)), 8);
	assert_string_equal(n, "");
	assert_int_equal(proc_parse_release("garbage", v, sizeof(v), n, sizeof(n)), 0);
	assert_string_equal(v, "");
}

static void test_nstgid(void **state)
{
	assert_int_equal(proc_parse_nstgid("Name:\tjava\nNStgid:\t4242\t1\nNSpid:\t4242\t1\n"), 1);
	assert_int_equal(proc_parse_nstgid("Name:\tjava\nNStgid:\t4242\n"), 4242);
	assert_int_equal(proc_parse_nstgid("Name:\tjava\n"), -1);
}

/* PF_KTHREAD from /proc/PID/stat's flags (the 9th field), comm with spaces
 * and parentheses included. */
static void test_kthread(void **state)
{
	assert_true(proc_parse_kthread("2 (kthreadd) S 0 0 0 0 -1 2129984 0 0 0 0 0 0 0 0 20"));
	assert_true(proc_parse_kthread("55 (kworker/0:1-events) I 2 0 0 0 -1 69238880 0 0"));
	assert_false(proc_parse_kthread("1 (systemd) S 0 1 1 0 -1 4194560 5000 0"));
	assert_false(proc_parse_kthread("77 (a) b (c)) S 1 77 77 0 -1 4194304 0 0"));
	assert_false(proc_parse_kthread("garbage"));
	assert_false(proc_parse_kthread("9 (x) S 1"));
}

/* starttime, field 22, after a comm with spaces and parentheses; our own
 * process started after boot and not in the future. */
static void test_starttime(void **state)
{
	unsigned long long t = 0;

	(void)state;
	assert_int_equal(proc_parse_starttime("4242 (java) S 1 4242 4242 0 -1 4194560 100 0 0 0 "
					      "12 3 0 0 20 0 30 0 987654 1000 50\n", &t), 0);
	assert_int_equal(t, 987654);
	assert_int_equal(proc_parse_starttime("7 (a) b (c)) S 1 7 7 0 -1 0 0 0 0 0 0 0 0 0 20 0 "
					      "1 0 55 1 2", &t), 0);
	assert_int_equal(t, 55);
	assert_int_equal(proc_parse_starttime("7 (x) S 1 7", &t), -EINVAL);
	assert_int_equal(proc_parse_starttime("garbage", &t), -EINVAL);
	assert_true(proc_start_time(getpid()) > 0);
	assert_true(proc_start_time(getpid()) <= time(NULL));
	assert_true(proc_start_time(getpid()) > time(NULL) - 3600);
	assert_int_equal(proc_start_time(0x3ffffff0), 0);
}

/* Our own process is alive and is not a JVM; pid 0x3ffffff0 does not exist. */
static void test_live(void **state)
{
	struct mt_proc p;

	assert_true(proc_exists(getpid()));
	assert_int_equal(proc_open(getpid(), &p), -ENOEXEC);
	assert_int_equal(p.nspid, getpid());
	assert_int_equal(proc_open(0x3ffffff0, &p), -ESRCH);
	assert_false(proc_exists(0x3ffffff0));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_main_class),
		cmocka_unit_test(test_release),
		cmocka_unit_test(test_nstgid),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_kthread),
		cmocka_unit_test(test_starttime),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
