/* test_elfsym.c - symbols and USDT notes of a real libjvm.so (the Debian
 * JDK 17 that the test suite installs), and of a file that is not ELF. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
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

/* Another thread's open of the same file: a handle of its own. */
static void *open_elsewhere(void *arg)
{
	struct mt_elf *e = elfsym_open(LIBJVM), *mine = arg;
	uintptr_t same = e == mine;

	elfsym_free(e);
	return (void *)same;
}

/* The last file a thread opened is kept for its next open of it: the same
 * handle, freed by each owner (ASan: nothing freed twice, nothing used
 * after its free); another file, or another thread, opens its own. */
static void test_kept(void **state)
{
	struct mt_elf *a = elfsym_open(LIBJVM), *b, *c;
	uint64_t x = 0, y = 0;
	pthread_t t;
	void *same = NULL;

	(void)state;
	assert_non_null(a);
	b = elfsym_open(LIBJVM);
	assert_ptr_equal(a, b);
	elfsym_free(a);
	assert_int_equal(elfsym_lookup(b, "gHotSpotVMStructs", &x, NULL), 0);
	elfsym_free(b);
	elfsym_expire(); /* opened well within 2 s: still kept */
	c = elfsym_open(LIBJVM);
	assert_ptr_equal(c, a);
	assert_int_equal(elfsym_lookup(c, "gHotSpotVMStructs", &y, NULL), 0);
	assert_true(x == y && x != 0);
	assert_int_equal(pthread_create(&t, NULL, open_elsewhere, c), 0);
	assert_int_equal(pthread_join(t, &same), 0);
	assert_null(same);
	elfsym_free(c);
	/* another file in its place: the kept libjvm goes (ASan sees the free) */
	a = elfsym_open("/usr/lib/jvm/java-17-openjdk-amd64/lib/libjava.so");
	assert_non_null(a);
	assert_int_equal(elfsym_lookup(a, "JNU_ThrowByName", NULL, NULL), 0);
	b = elfsym_open(LIBJVM);
	assert_true(b != a);
	assert_int_equal(elfsym_lookup(b, "DTraceAllocProbes", NULL, NULL), 0);
	elfsym_free(a);
	elfsym_free(b);
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
		cmocka_unit_test(test_kept),
		cmocka_unit_test(test_not_elf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
