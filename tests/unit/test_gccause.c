// SPDX-License-Identifier: GPL-2.0
/* test_gccause - GC cause names from GCCause::to_string: the real libjvm of
 * JDK 17 and 25 (their enums differ: the names are read, not assumed), and
 * synthetic code of the expected shape and of others (refused). The e2e case
 * gc_vs_jfr compares the causes with JFR's on live JVMs. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "jvm/elfsym.h"
#include "jvm/gccause.h"

#define JDK17 "/usr/lib/jvm/java-17-openjdk-amd64/lib/server/libjvm.so"
#define JDK25 "/usr/lib/jvm/temurin-25-jdk-amd64/lib/server/libjvm.so"

static int find(const struct gccause_table *t, const char *name)
{
	for (int i = 0; i < t->n; i++)
		if (!strcmp(t->name[i], name))
			return i;
	return -1;
}

static void check_jdk(const char *path, int ncauses)
{
	struct gccause_table t;
	struct mt_elf *e;
	char buf[32];

	if (access(path, R_OK)) {
		print_message("skipped: %s absent\n", path);
		skip();
	}
	e = elfsym_open(path);
	assert_non_null(e);
	assert_int_equal(gccause_read(e, &t), 0);
	assert_int_equal(t.n, ncauses);
	/* GCCause::_java_lang_system_gc is the first value in every JDK */
	assert_string_equal(t.name[0], "System.gc()");
	assert_string_equal(t.unknown, "unknown GCCause");
	assert_true(find(&t, "G1 Evacuation Pause") > 0);
	assert_true(find(&t, "Metadata GC Threshold") > 0);
	assert_true(find(&t, "G1 Humongous Allocation") > 0);
	assert_true(find(&t, "No GC") > 0);
	assert_string_equal(gccause_name(&t, 0, buf, sizeof(buf)), "System.gc()");
	assert_string_equal(gccause_name(&t, 200, buf, sizeof(buf)), "unknown GCCause");
	elfsym_free(e);
}

static void test_jdk17(void **state)
{
	check_jdk(JDK17, 39);
}

static void test_jdk25(void **state)
{
	struct gccause_table t17, t25;
	struct mt_elf *e;

	check_jdk(JDK25, 34);
	/* the enums differ: the same name sits at another number */
	if (access(JDK17, R_OK))
		return;
	e = elfsym_open(JDK17);
	assert_int_equal(gccause_read(e, &t17), 0);
	elfsym_free(e);
	e = elfsym_open(JDK25);
	assert_int_equal(gccause_read(e, &t25), 0);
	elfsym_free(e);
	assert_int_not_equal(find(&t17, "G1 Evacuation Pause"), find(&t25, "G1 Evacuation Pause"));
	assert_true(find(&t17, "Allocation Failure") > 0);
	assert_true(find(&t25, "Allocation Failure") > 0);
}

/* A fake library image: code at 0x1000, table at 0x2000, strings at 0x3000. */
static uint8_t img[0x4000];

static int img_read(void *ctx, uint64_t vaddr, void *buf, size_t n)
{
	if (vaddr < 0x1000 || vaddr + n > sizeof(img))
		return -ENOENT;
	memcpy(buf, img + vaddr, n);
	return 0;
}

static void put32(uint64_t at, int32_t v)
{
	memcpy(img + at, &v, 4);
}

/* lea STR(%rip), %rax ; ret at @pc */
static void put_case(uint64_t pc, uint64_t str)
{
	img[pc] = 0x48;
	img[pc + 1] = 0x8d;
	img[pc + 2] = 0x05;
	put32(pc + 3, (int32_t)(str - (pc + 7)));
	img[pc + 7] = 0xc3;
}

static void build(void)
{
	static const uint8_t head[] = {
		0x83, 0xff, 0x02,                         /* cmp $2, %edi */
		0x0f, 0x87, 0, 0, 0, 0,                   /* ja DEFAULT */
		0x48, 0x8d, 0x15, 0, 0, 0, 0,             /* lea TABLE(%rip), %rdx */
		0x89, 0xff,                               /* mov %edi, %edi */
		0x48, 0x63, 0x04, 0xba,                   /* movslq (%rdx,%rdi,4), %rax */
		0x48, 0x01, 0xd0,                         /* add %rdx, %rax */
		0xff, 0xe0,                               /* jmp *%rax */
	};

	memset(img, 0, sizeof(img));
	memcpy(img + 0x1000, head, sizeof(head));
	put32(0x1005, 0x1100 - 0x1009);           /* ja -> 0x1100 */
	put32(0x100c, 0x2000 - 0x1010);           /* the table */
	put_case(0x1100, 0x3000);
	put_case(0x1110, 0x3020);
	put_case(0x1120, 0x3040);
	put_case(0x1130, 0x3060);
	strcpy((char *)img + 0x3000, "unknown GCCause");
	strcpy((char *)img + 0x3020, "System.gc()");
	strcpy((char *)img + 0x3040, "Allocation Failure");
	strcpy((char *)img + 0x3060, "No GC");
	put32(0x2000, 0x1110 - 0x2000);
	put32(0x2004, 0x1120 - 0x2000);
	put32(0x2008, 0x1130 - 0x2000);
}

static void test_synthetic(void **state)
{
	struct gccause_table t;
	char buf[32];

	build();
	assert_int_equal(gccause_decode(img_read, NULL, 0x1000, 0x200, &t), 0);
	assert_int_equal(t.n, 3);
	assert_string_equal(t.name[0], "System.gc()");
	assert_string_equal(t.name[1], "Allocation Failure");
	assert_string_equal(t.name[2], "No GC");
	assert_string_equal(t.unknown, "unknown GCCause");
	assert_string_equal(gccause_name(NULL, 7, buf, sizeof(buf)), "cause 7");
}

static void test_other_shapes(void **state)
{
	struct gccause_table t;

	/* not a cmp on %edi */
	build();
	img[0x1001] = 0xfe;
	assert_int_equal(gccause_decode(img_read, NULL, 0x1000, 0x200, &t), -ENOTSUP);
	assert_int_equal(t.n, 0);
	/* a case that is not lea+ret */
	build();
	img[0x1127] = 0x90;
	assert_int_equal(gccause_decode(img_read, NULL, 0x1000, 0x200, &t), -ENOTSUP);
	/* a table entry leaving the function */
	build();
	put32(0x2004, 0x0100);
	assert_int_equal(gccause_decode(img_read, NULL, 0x1000, 0x200, &t), -ENOTSUP);
	/* a string that is not text */
	build();
	img[0x3041] = 0x01;
	assert_int_equal(gccause_decode(img_read, NULL, 0x1000, 0x200, &t), -ENOTSUP);
	/* no symbol: a stripped library */
	{
		struct mt_elf *e = elfsym_open("/proc/self/exe");

		assert_non_null(e);
		assert_int_equal(gccause_read(e, &t), -ENOENT);
		elfsym_free(e);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jdk17),
		cmocka_unit_test(test_jdk25),
		cmocka_unit_test(test_synthetic),
		cmocka_unit_test(test_other_shapes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
