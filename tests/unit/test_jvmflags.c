// SPDX-License-Identifier: GPL-2.0
/*
 * test_jvmflags.c - JVM flag lookup over a synthetic JVM memory image: a
 * VMStructs description of JVMFlag and a flag table, read through a fake
 * reader (the same fake address space as test_vmstructs.c).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jvm/jvmflags.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

#include "fake_target.h"

static struct fake *new_fake(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->used = 64; /* address FAKE_BASE itself stays unused */
	return f;
}


struct tflag {
	const char *name;
	int type;
	uint64_t value; /* stored with the type's width */
};

static const struct tflag FLAGS[] = {
	{ "DTraceMethodProbes", MT_FLAG_BOOL, 0 },
	{ "DTraceAllocProbes", MT_FLAG_BOOL, 1 },
	{ "DTraceMonitorProbes", MT_FLAG_BOOL, 0 },
	{ "MaxHeapSize", MT_FLAG_SIZE_T, 268435456 },
	{ "ParallelGCThreads", MT_FLAG_UINT, 2 },
	{ "IntFlag", MT_FLAG_INT, (uint32_t)-7 },
	{ "TieredStopAtLevel", MT_FLAG_INTX, (uint64_t)-1 },
	{ "MaxRAMPercentage", MT_FLAG_DOUBLE, 0 },
	{ "ErrorFile", MT_FLAG_CCSTR, 0 },
};

/* Build a JVM whose VMStructs describe JVMFlag as JDK 17/25 do (24-byte
 * entries: _addr 0, _name 8, _flags 16, _type 20) and whose flag table holds
 * FLAGS plus the NULL-named terminator. *numflags_addr: where numFlags is. */
static uint64_t name_off = 8; /* JVMFlag::_name's offset as VMStructs says it */

static struct mt_vmstructs *flag_vm(struct fake *f, bool with_table, uint64_t *numflags_addr)
{
	uint64_t flags_var = fake_alloc(f, 8), num_var = fake_alloc(f, 8);
	size_t n = MT_ARRAY_SIZE(FLAGS);
	uint64_t tab = fake_alloc(f, (n + 1) * 24);
	const struct tfield fields[] = {
		{ "JVMFlag", "_addr", "", 0, 0, 0 },
		{ "JVMFlag", "_name", "const char*", 0, name_off, 0 },
		{ "JVMFlag", "_flags", "JVMFlag::Flags", 0, 16, 0 },
		{ "JVMFlag", "_type", "int", 0, 20, 0 },
		{ "JVMFlag", "flags", "JVMFlag*", 1, 0, flags_var },
		{ "JVMFlag", "numFlags", "size_t", 1, 0, num_var },
	};
	const struct ttype types[] = { { "JVMFlag", NULL, 0, 0, 0, 24 } };
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;

	memset(fake_at(f, tab), 0, (n + 1) * 24);
	for (size_t i = 0; i < n; i++) {
		uint64_t e = tab + i * 24, val = fake_alloc(f, 8);
		double d = 25.0;

		if (FLAGS[i].type == MT_FLAG_DOUBLE)
			memcpy(fake_at(f, val), &d, 8);
		else
			put64(f, val, FLAGS[i].value);
		put64(f, e, val);
		put64(f, e + 8, fake_str(f, FLAGS[i].name));
		put32(f, e + 16, 0x10);
		put32(f, e + 20, (uint32_t)FLAGS[i].type);
	}
	put64(f, flags_var, tab);
	put64(f, num_var, n + 1);
	*numflags_addr = num_var;
	build(f, &s, fields, with_table ? MT_ARRAY_SIZE(fields) : 0, types, 1, NULL, 0, NULL, 0);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
	return vs;
}

static void test_get_values(void **state)
{
	struct fake *f = new_fake();
	uint64_t num, u;
	struct mt_vmstructs *vs = flag_vm(f, true, &num);
	struct mt_jvmflag fl;
	int64_t i;
	double d;
	bool b = false;

	assert_int_equal(jvmflags_get_bool(NULL, vs, "DTraceAllocProbes", &b), 0);
	assert_true(b);
	assert_int_equal(jvmflags_get_bool(NULL, vs, "DTraceMonitorProbes", &b), 0);
	assert_false(b);
	assert_int_equal(jvmflags_get_uintx(NULL, vs, "MaxHeapSize", &u), 0);
	assert_int_equal(u, 268435456);
	assert_int_equal(jvmflags_get_uintx(NULL, vs, "ParallelGCThreads", &u), 0);
	assert_int_equal(u, 2);
	assert_int_equal(jvmflags_get_intx(NULL, vs, "IntFlag", &i), 0);
	assert_int_equal(i, -7);
	assert_int_equal(jvmflags_get_intx(NULL, vs, "TieredStopAtLevel", &i), 0);
	assert_int_equal(i, -1);
	assert_int_equal(jvmflags_get_double(NULL, vs, "MaxRAMPercentage", &d), 0);
	assert_true(d == 25.0);

	assert_int_equal(jvmflags_find(NULL, vs, "DTraceMonitorProbes", &fl), 0);
	assert_int_equal(fl.type, MT_FLAG_BOOL);
	assert_false(fl.via_symtab);
	assert_int_equal(fl.flags, 0x10);
	assert_true(fl.addr > FAKE_BASE);
	assert_string_equal(jvmflags_type_name(fl.type), "bool");
	assert_string_equal(jvmflags_type_name(MT_FLAG_SIZE_T), "size_t");
	assert_string_equal(jvmflags_type_name(MT_FLAG_UNKNOWN), "unknown");
	assert_string_equal(jvmflags_type_name(99), "unknown");
	vmstructs_free(vs);
	free(f);
}

static void test_missing_and_mismatched(void **state)
{
	struct fake *f = new_fake();
	uint64_t num, u;
	struct mt_vmstructs *vs = flag_vm(f, true, &num);
	int64_t i;
	bool b;

	assert_int_equal(jvmflags_get_bool(NULL, vs, "ExtendedDTraceProbes", &b), -ENOENT);
	assert_int_equal(jvmflags_get_bool(NULL, vs, "DTraceAlloc", &b), -ENOENT); /* a prefix */
	assert_int_equal(jvmflags_get_bool(NULL, vs, "DTraceAllocProbesX", &b), -ENOENT);
	assert_int_equal(jvmflags_get_bool(NULL, vs, "", &b), -ENOENT);
	assert_int_equal(jvmflags_get_bool(NULL, vs, "MaxHeapSize", &b), -EINVAL);
	assert_int_equal(jvmflags_get_intx(NULL, vs, "MaxHeapSize", &i), -EINVAL);
	assert_int_equal(jvmflags_get_uintx(NULL, vs, "DTraceAllocProbes", &u), -EINVAL);
	assert_int_equal(jvmflags_get_uintx(NULL, vs, "ErrorFile", &u), -EINVAL);
	/* A corrupt numFlags is refused, not followed. */
	put64(f, num, 1u << 30);
	assert_int_equal(jvmflags_get_bool(NULL, vs, "DTraceAllocProbes", &b), -EINVAL);
	vmstructs_free(vs);
	free(f);
}

static void test_no_table_no_symtab(void **state)
{
	struct fake *f = new_fake();
	uint64_t num;
	struct mt_vmstructs *vs = flag_vm(f, false, &num);
	bool b;

	/* No JVMFlag in VMStructs and no ELF file: nothing to look in. */
	assert_int_equal(jvmflags_get_bool(NULL, vs, "DTraceAllocProbes", &b), -ENOENT);
	assert_int_equal(jvmflags_get_bool(NULL, NULL, "DTraceAllocProbes", &b), -ENOENT);
	vmstructs_free(vs);
	free(f);
}

/* An offset whose end wraps around 2^64 (found by fuzz_vmstructs: it read
 * far outside the copied table): the table makes no sense. */
static void test_offset_wraps(void **state)
{
	struct fake *f = new_fake();
	uint64_t num;
	struct mt_vmstructs *vs;
	bool b;

	name_off = 0xfffffffffffffffcULL;
	vs = flag_vm(f, true, &num);
	name_off = 8;
	assert_int_equal(jvmflags_get_bool(NULL, vs, "DTraceAllocProbes", &b), -EINVAL);
	vmstructs_free(vs);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_values),
		cmocka_unit_test(test_missing_and_mismatched),
		cmocka_unit_test(test_no_table_no_symtab),
		cmocka_unit_test(test_offset_wraps),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
