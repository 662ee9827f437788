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
#include <fcntl.h>
#include <gelf.h>
#include <unistd.h>

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

/* A symbol as libelf's own gelf_getsym() and elf_strptr() read it. */
struct gsym {
	const char *name;
	uint64_t value, size;
	size_t order; /* .symtab's first, then .dynsym's */
};

static int gsym_cmp(const void *a, const void *b)
{
	const struct gsym *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->order < y->order ? -1 : x->order > y->order;
}

/* Every named defined symbol of both tables, read here through libelf's
 * per-symbol calls (elfsym reads a 64-bit file's as they are in its data):
 * the lookup of each name answers its first definition in .symtab, else in
 * .dynsym - address and size. */
static void test_every_symbol(void **state)
{
	const char *libs[] = { LIBJVM,
			       "/usr/lib/jvm/temurin-25-jdk-amd64/lib/server/libjvm.so" };

	(void)state;
	for (size_t l = 0; l < 2; l++) {
		int fd = open(libs[l], O_RDONLY);
		struct gsym *g = NULL;
		size_t n = 0, cap = 0, names = 0;
		struct mt_elf *e;
		Elf_Scn *scn = NULL;
		Elf *elf;

		if (fd < 0 && l == 1) { /* the suite's second JDK: said when absent */
			print_message("skipped %s: absent\n", libs[l]);
			continue;
		}
		assert_true(fd >= 0);
		assert_int_not_equal(elf_version(EV_CURRENT), EV_NONE);
		elf = elf_begin(fd, ELF_C_READ, NULL);
		e = elfsym_open(libs[l]);
		assert_non_null(elf);
		assert_non_null(e);
		for (int pass = 0; pass < 2; pass++) {
			while ((scn = elf_nextscn(elf, scn))) {
				Elf_Data *d = elf_getdata(scn, NULL);
				GElf_Shdr sh;
				GElf_Sym sym;

				if (!gelf_getshdr(scn, &sh) ||
				    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
					continue;
				for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
					const char *name;

					assert_non_null(gelf_getsym(d, (int)i, &sym));
					name = elf_strptr(elf, sh.sh_link, sym.st_name);
					if (sym.st_shndx == SHN_UNDEF || !sym.st_value || !name || !*name)
						continue;
					if (n == cap) {
						cap = cap ? 2 * cap : 65536;
						g = realloc(g, cap * sizeof(*g));
						assert_non_null(g);
					}
					g[n] = (struct gsym){ name, sym.st_value, sym.st_size, n };
					n++;
				}
			}
		}
		qsort(g, n, sizeof(*g), gsym_cmp);
		for (size_t i = 0; i < n; i++) {
			uint64_t a = 0, z = 0;

			if (i && !strcmp(g[i].name, g[i - 1].name))
				continue; /* a later definition of the name */
			assert_int_equal(elfsym_lookup(e, g[i].name, &a, &z), 0);
			assert_int_equal(a, g[i].value);
			assert_int_equal(z, g[i].size);
			names++;
		}
		assert_true(names > 50000); /* libjvm: ~58-70 k symbols */
		free(g);
		elfsym_free(e);
		elf_end(elf);
		close(fd);
	}
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
		cmocka_unit_test(test_every_symbol),
		cmocka_unit_test(test_usdt_notes),
		cmocka_unit_test(test_kept),
		cmocka_unit_test(test_not_elf),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
