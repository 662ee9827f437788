// SPDX-License-Identifier: GPL-2.0
/* test_kfeatures - the kernel's BPF features as probed here (6.18, root: all
 * present), MEMTRACE_HIDE_BPF's hiding of each, what a loader's needs lack
 * and how the refusal names them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "probe/kfeatures.h"

static void test_hidden(void **state)
{
	(void)state;
	unsetenv("MEMTRACE_HIDE_BPF");
	assert_int_equal(kfeatures_hidden(), 0);
	setenv("MEMTRACE_HIDE_BPF", "loop", 1);
	assert_int_equal(kfeatures_hidden(), KF_LOOP);
	setenv("MEMTRACE_HIDE_BPF", "cookie,ringbuf", 1);
	assert_int_equal(kfeatures_hidden(), KF_COOKIE | KF_RINGBUF);
	unsetenv("MEMTRACE_HIDE_BPF");
}

static void test_missing(void **state)
{
	struct kfeatures kf = { .ringbuf = true, .cookie = false, .loop = false };

	(void)state;
	assert_int_equal(kfeatures_missing(&kf, KF_RINGBUF), 0);
	assert_int_equal(kfeatures_missing(&kf, KF_RINGBUF | KF_COOKIE), KF_COOKIE);
	assert_int_equal(kfeatures_missing(&kf, KF_COOKIE | KF_LOOP), KF_COOKIE | KF_LOOP);
	assert_int_equal(kfeatures_missing(&kf, 0), 0);
}

static void test_describe(void **state)
{
	char b[256], tiny[12];

	(void)state;
	kfeatures_describe(KF_LOOP, b, sizeof(b));
	assert_non_null(strstr(b, "bpf_loop (Linux 5.17"));
	kfeatures_describe(KF_COOKIE | KF_LOOP, b, sizeof(b));
	assert_non_null(strstr(b, "bpf_get_attach_cookie (Linux 5.15"));
	assert_non_null(strstr(b, " and bpf_loop"));
	kfeatures_describe(0, b, sizeof(b));
	assert_string_equal(b, "");
	kfeatures_describe(KF_RINGBUF | KF_COOKIE | KF_LOOP, tiny, sizeof(tiny)); /* cut, ended */
	assert_true(strlen(tiny) < sizeof(tiny));
}

/* On this machine (make check runs as root on 6.18) every feature is there,
 * and hiding one makes the probe say it is not. */
static void test_probe(void **state)
{
	struct kfeatures kf;

	(void)state;
	if (geteuid() != 0 || kfeatures_probe(&kf)) {
		skip();
		return;
	}
	assert_true(kf.ringbuf && kf.cookie && kf.loop);
	setenv("MEMTRACE_HIDE_BPF", "loop", 1);
	assert_int_equal(kfeatures_probe(&kf), 0);
	assert_false(kf.loop);
	assert_true(kf.cookie);
	assert_int_equal(kf.hidden, KF_LOOP);
	unsetenv("MEMTRACE_HIDE_BPF");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hidden),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_describe),
		cmocka_unit_test(test_probe),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
