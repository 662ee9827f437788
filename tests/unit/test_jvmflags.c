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

#include "jvmflags.h"
#include "util.h"
#include "vmstructs.h"

/* ---- a fake target address space: one mapping from FAKE_BASE up to the
 * page holding the last byte used (mappings are whole pages) ---- */

#define FAKE_BASE 0x100000ULL
#define FAKE_SIZE (1u << 20)

struct fake {
	unsigned char mem[FAKE_SIZE];
	size_t used;
	unsigned long reads;
};

static int fake_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct fake *f = ctx;
	size_t end = (f->used + 4095) & ~(size_t)4095;

	f->reads++;
	if (addr < FAKE_BASE || addr - FAKE_BASE > end || len > end - (addr - FAKE_BASE))
		return -EFAULT;
	memcpy(buf, f->mem + (addr - FAKE_BASE), len);
	return 0;
}

static uint64_t fake_alloc(struct fake *f, size_t n)
{
	uint64_t a;

	f->used = (f->used + 7) & ~(size_t)7;
	assert_true(f->used + n <= FAKE_SIZE);
	a = FAKE_BASE + f->used;
	f->used += n;
	return a;
}

static void *fake_at(struct fake *f, uint64_t addr)
{
	return f->mem + (addr - FAKE_BASE);
}

static void put64(struct fake *f, uint64_t addr, uint64_t v)
{
	memcpy(fake_at(f, addr), &v, 8);
}

static void put32(struct fake *f, uint64_t addr, uint32_t v)
{
	memcpy(fake_at(f, addr), &v, 4);
}

static uint64_t fake_str(struct fake *f, const char *s)
{
	uint64_t a;

	if (!s)
		return 0;
	a = fake_alloc(f, strlen(s) + 1);
	memcpy(fake_at(f, a), s, strlen(s) + 1);
	return a;
}

/* A layout variable holding @v; returns its address. */
static uint64_t var(struct fake *f, uint64_t v)
{
	uint64_t a = fake_alloc(f, 8);

	put64(f, a, v);
	return a;
}

struct tfield {
	const char *type, *field, *type_string;
	int is_static;
	uint64_t offset, address;
};
struct ttype {
	const char *name, *super;
	int oop, integer, is_unsigned;
	uint64_t size;
};
struct tconst {
	const char *name;
	int64_t value;
};

/* HotSpot's entry layouts on x86_64 (what the JVM publishes). */
enum { SF_STRIDE = 48, TY_STRIDE = 40, C_STRIDE = 16 };

/* Build the four tables (each with its NULL terminator) and the layout
 * variables describing them into @f; fill @s with their addresses. */
static void build(struct fake *f, struct mt_vmstructs_syms *s, const struct tfield *fl, size_t nf,
		  const struct ttype *ty, size_t nt, const struct tconst *ic, size_t ni,
		  const struct tconst *lc, size_t nl)
{
	uint64_t t;

	t = fake_alloc(f, (nf + 1) * SF_STRIDE);
	memset(fake_at(f, t), 0, (nf + 1) * SF_STRIDE);
	for (size_t i = 0; i < nf; i++) {
		uint64_t e = t + i * SF_STRIDE;

		put64(f, e + 0, fake_str(f, fl[i].type));
		put64(f, e + 8, fake_str(f, fl[i].field));
		put64(f, e + 16, fake_str(f, fl[i].type_string));
		put32(f, e + 24, fl[i].is_static);
		put64(f, e + 32, fl[i].offset);
		put64(f, e + 40, fl[i].address);
	}
	s->structs = var(f, t);
	s->s_type_name = var(f, 0);
	s->s_field_name = var(f, 8);
	s->s_type_string = var(f, 16);
	s->s_is_static = var(f, 24);
	s->s_offset = var(f, 32);
	s->s_address = var(f, 40);
	s->s_stride = var(f, SF_STRIDE);

	t = fake_alloc(f, (nt + 1) * TY_STRIDE);
	memset(fake_at(f, t), 0, (nt + 1) * TY_STRIDE);
	for (size_t i = 0; i < nt; i++) {
		uint64_t e = t + i * TY_STRIDE;

		put64(f, e + 0, fake_str(f, ty[i].name));
		put64(f, e + 8, fake_str(f, ty[i].super));
		put32(f, e + 16, ty[i].oop);
		put32(f, e + 20, ty[i].integer);
		put32(f, e + 24, ty[i].is_unsigned);
		put64(f, e + 32, ty[i].size);
	}
	s->types = var(f, t);
	s->t_type_name = var(f, 0);
	s->t_super_name = var(f, 8);
	s->t_is_oop = var(f, 16);
	s->t_is_integer = var(f, 20);
	s->t_is_unsigned = var(f, 24);
	s->t_size = var(f, 32);
	s->t_stride = var(f, TY_STRIDE);

	for (int l = 0; l < 2; l++) {
		const struct tconst *c = l ? lc : ic;
		size_t n = l ? nl : ni;

		t = fake_alloc(f, (n + 1) * C_STRIDE);
		memset(fake_at(f, t), 0, (n + 1) * C_STRIDE);
		for (size_t i = 0; i < n; i++) {
			put64(f, t + i * C_STRIDE, fake_str(f, c[i].name));
			if (l)
				put64(f, t + i * C_STRIDE + 8, (uint64_t)c[i].value);
			else
				put32(f, t + i * C_STRIDE + 8, (uint32_t)(int32_t)c[i].value);
		}
		if (l) {
			s->longs = var(f, t);
			s->l_name = var(f, 0);
			s->l_value = var(f, 8);
			s->l_stride = var(f, C_STRIDE);
		} else {
			s->ints = var(f, t);
			s->i_name = var(f, 0);
			s->i_value = var(f, 8);
			s->i_stride = var(f, C_STRIDE);
		}
	}
}

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
static struct mt_vmstructs *flag_vm(struct fake *f, bool with_table, uint64_t *numflags_addr)
{
	uint64_t flags_var = fake_alloc(f, 8), num_var = fake_alloc(f, 8);
	size_t n = MT_ARRAY_SIZE(FLAGS);
	uint64_t tab = fake_alloc(f, (n + 1) * 24);
	const struct tfield fields[] = {
		{ "JVMFlag", "_addr", "", 0, 0, 0 },
		{ "JVMFlag", "_name", "const char*", 0, 8, 0 },
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_values),
		cmocka_unit_test(test_missing_and_mismatched),
		cmocka_unit_test(test_no_table_no_symtab),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
