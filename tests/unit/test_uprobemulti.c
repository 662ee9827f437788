// SPDX-License-Identifier: GPL-2.0
/* test_uprobemulti - file offsets of our own code from /proc/self/maps
 * (checked against the ELF's symbol table), errors for a bad path and a
 * bad program, and on a kernel that has uprobe_multi with the privileges
 * for it (6.6+, root: as make check runs here), a real attach and detach. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <cmocka.h>

#include "jvm/elfsym.h"
#include "probe/uprobecost.h"
#include "probe/uprobemulti.h"

static void test_self_offset(void **state)
{
	struct mt_elf *e = elfsym_open("/proc/self/exe");
	uint64_t off = 0, addr = 0, foff = 0;

	(void)state;
	assert_non_null(e);
	assert_int_equal(uprobemulti_self_offset((uint64_t)(uintptr_t)uprobecost_target,
						 &off), 0);
	assert_int_equal(elfsym_lookup(e, "uprobecost_target", &addr, NULL), 0);
	assert_int_equal(elfsym_vaddr_to_offset(e, addr, &foff), 0);
	assert_int_equal(off, foff);
	/* not an address of our code */
	assert_int_equal(uprobemulti_self_offset(8, &off), -ENOENT);
	elfsym_free(e);
}

static void test_errors(void **state)
{
	uint64_t off = 0;

	(void)state;
	assert_true(uprobemulti_attach(-1, "/proc/self/exe", &off, 1, getpid()) < 0);
	assert_true(uprobemulti_attach(-1, "/nonexistent", &off, 1, getpid()) < 0);
}

static void test_supported(void **state)
{
	struct utsname u;
	int major = 0, minor = 0;

	(void)state;
	uname(&u);
	sscanf(u.release, "%d.%d", &major, &minor);
	if (geteuid() || major < 6 || (major == 6 && minor < 6)) {
		skip(); /* unprivileged, or a kernel before uprobe_multi */
		return;
	}
	/* 6.6 and later as root: it must work, and the answer must stay */
	assert_true(uprobemulti_supported());
	assert_true(uprobemulti_supported());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_offset),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_supported),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
