/* test_mhdload.c - libmicrohttpd loaded at serve's start: the real library
 * fills the table; a missing file or a library without the functions is a
 * clear error; what memtrace links does not map it. */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "serve/mhdload.h"

/* Does this process map a file whose name holds @part? (/proc/self/maps) */
static bool mapped(const char *part)
{
	char line[1024];
	bool found = false;
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		found |= strstr(line, part) != NULL;
	fclose(f);
	return found;
}

/* A file that does not exist, then a real library without MHD_*: errors
 * that name the file and the package, and the table left empty. */
static void test_missing(void **state)
{
	const char *none[] = { "libmemtrace-no-such-httpd.so.99", NULL };
	const char *other[] = { "libz.so.1", NULL };
	char err[512];

	assert_int_equal(mhd_load(none, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "libmemtrace-no-such-httpd.so.99 could not be loaded ("));
	assert_non_null(strstr(err, "apt-get install libmicrohttpd12"));
	assert_null(mhd.start_daemon);
	assert_int_equal(mhd_load(other, err, sizeof(err)), -ENOSYS);
	assert_non_null(strstr(err, "libz.so.1 has no MHD_start_daemon"));
	assert_null(mhd.start_daemon);
	/* an empty list: said, not crashed */
	const char *empty[] = { NULL };
	assert_int_equal(mhd_load(empty, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "libmicrohttpd could not be loaded"));
}

/* The installed library: the first name that loads (the second when the
 * first is absent) fills every slot, and a second call keeps it. */
static void test_real(void **state)
{
	const char *names[] = { "libmemtrace-no-such-httpd.so.99", "libmicrohttpd.so.12", NULL };
	void **slot = (void **)&mhd;

	assert_int_equal(mhd_load(names, NULL, 0), 0);
	for (size_t i = 0; i < sizeof(mhd) / sizeof(void *); i++)
		assert_non_null(slot[i]);
	assert_int_equal(mhd_load(NULL, NULL, 0), 0);
	assert_non_null(mhd.start_daemon);
	assert_true(mapped("libmicrohttpd"));
}

/* This binary links what memtrace links (the Makefile's LDLIBS): neither
 * libmicrohttpd nor GnuTLS is mapped before mhd_load() (run first). */
static void test_not_linked(void **state)
{
	assert_true(mapped("libelf"));
	assert_false(mapped("libmicrohttpd"));
	assert_false(mapped("libgnutls"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_not_linked),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_real),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
