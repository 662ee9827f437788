/* test_elfsym.c - symbols and USDT notes of a real libjvm.so (the Debian
 * JDK 17 that the test suite installs), and of a file that is not ELF. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "jvm/elfsym.h"

#define LIBJVM "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"

static void test_symbols(void **state)
{
	struct mt_elf *e = elfsym_open(LIBJVM);
	uint64_t addr = 0, size = 0;

	assert_non_null(e);
	assert_true(elfsym_has_symtab(e));
	/* a .symtab-only symbol (a plain global bool flag) */
	assert_int_equal(elfsym_lookup(e, "DTraceAllocProbes", &addr, &size), 0);
	assert_true(addr != 0);
	assert_int_equal(size, 1);
	/* a .dynsym export */
	assert_int_equal(elfsym_lookup(e, "gHotSpotVMStructs", &addr, NULL), 0);
	assert_int_equal(elfsym_lookup(e, "no_such_symbol_in_libjvm", NULL, NULL), -ENOENT);
	/* libjvm is linked at 0: the bias is the mapping address */
	assert_int_equal(elfsym_load_bias(e, 0x7f0000000000ull), 0x7f0000000000ull);
	elfsym_free(e);
	elfsym_free(NULL);
}

static void test_usdt_notes(void **state)
{
	struct mt_elf *e = elfsym_open(LIBJVM);
	struct mt_usdt_note *notes = NULL;
	int n, gc = 0, pool = 0;

	assert_non_null(e);
	n = elfsym_usdt_notes(e, "hotspot", &notes);
	assert_true(n > 40);
	for (int i = 0; i < n; i++) {
		assert_string_equal(notes[i].provider, "hotspot");
		if (!strcmp(notes[i].name, "gc__begin"))
			gc++;
		if (!strcmp(notes[i].name, "mem__pool__gc__begin")) {
			pool++;
			/* eight 8-byte arguments */
			assert_non_null(strstr(notes[i].args, "8@"));
		}
	}
	assert_true(gc >= 1);
	assert_true(pool >= 1);
	free(notes);
	elfsym_free(e);
}

static void test_not_elf(void **state)
{
	assert_null(elfsym_open("/proc/self/status"));
	assert_int_equal(errno, ENOEXEC);
	assert_null(elfsym_open("/nonexistent/libjvm.so"));
	assert_int_equal(errno, ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_symbols),
		cmocka_unit_test(test_usdt_notes),
		cmocka_unit_test(test_not_elf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
