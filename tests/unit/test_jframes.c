// SPDX-License-Identifier: GPL-2.0
/*
 * test_jframes.c - Java frame naming from outside the JVM over a synthetic
 * memory image (fake_target.h): the frame-anchor offsets, the interpreter's
 * and the code cache's ranges from VMStructs, and Method* ->
 * "pkg.Class.method" through ConstMethod, ConstantPool, Klass and Symbol.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jstack/jframes.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

#include "fake_target.h"

#define INTERP_LO 0x7f0000100000ULL
#define INTERP_LEN 0x20000
#define CC_LO 0x7f0010000000ULL
#define CC_HI 0x7f0020000000ULL
#define CP_SIZE 88

enum { F_ANCHOR, F_SP, F_PC, F_FP, F_INTERP, F_BUF, F_LIM, F_CCLO, F_CCHI, F_CONSTM,
       F_CONSTANTS, F_NAMEIDX, F_HOLDER, F_KNAME, F_SLEN, F_SBODY, NFIELDS };

/* The fields and types a JDK publishes, at made-up offsets; statics point
 * at variables in @f. @drop: a field left out (NFIELDS: none). */
struct vm {
	struct fake *f;
	struct mt_vmstructs *vs;
	uint64_t queue;        /* the interpreter's StubQueue */
};

static void vm_open(struct vm *v, int drop, bool cp_type, int32_t limit, uint64_t cc_hi)
{
	struct tfield fl[NFIELDS] = {
		[F_ANCHOR] = { "JavaThread", "_anchor", "JavaFrameAnchor", 0, 0x300, 0 },
		[F_SP] = { "JavaFrameAnchor", "_last_Java_sp", "intptr_t*", 0, 0, 0 },
		[F_PC] = { "JavaFrameAnchor", "_last_Java_pc", "address", 0, 16, 0 },
		[F_FP] = { "JavaFrameAnchor", "_last_Java_fp", "intptr_t*", 0, 8, 0 },
		[F_INTERP] = { "AbstractInterpreter", "_code", "StubQueue*", 1, 0, 0 },
		[F_BUF] = { "StubQueue", "_stub_buffer", "address", 0, 8, 0 },
		[F_LIM] = { "StubQueue", "_buffer_limit", "int", 0, 16, 0 },
		[F_CCLO] = { "CodeCache", "_low_bound", "address", 1, 0, 0 },
		[F_CCHI] = { "CodeCache", "_high_bound", "address", 1, 0, 0 },
		[F_CONSTM] = { "Method", "_constMethod", "ConstMethod*", 0, 8, 0 },
		[F_CONSTANTS] = { "ConstMethod", "_constants", "ConstantPool*", 0, 8, 0 },
		[F_NAMEIDX] = { "ConstMethod", "_name_index", "u2", 0, 42, 0 },
		[F_HOLDER] = { "ConstantPool", "_pool_holder", "InstanceKlass*", 0, 24, 0 },
		[F_KNAME] = { "Klass", "_name", "Symbol*", 0, 24, 0 },
		[F_SLEN] = { "Symbol", "_length", "u2", 0, 4, 0 },
		[F_SBODY] = { "Symbol", "_body", "", 0, 6, 0 },
	};
	const struct ttype ty[] = {
		{ "u2", NULL, 0, 1, 1, 2 },
		{ "Symbol", NULL, 0, 0, 0, 8 },
		{ "ConstantPool", "Metadata", 0, 0, 0, CP_SIZE },
	};
	struct tfield keep[NFIELDS];
	struct mt_vmstructs_syms s;
	size_t n = 0;

	v->f = calloc(1, sizeof(*v->f));
	assert_non_null(v->f);
	v->f->used = 64; /* address FAKE_BASE itself stays unused */
	v->queue = fake_alloc(v->f, 32);
	put64(v->f, v->queue + 8, INTERP_LO);
	put32(v->f, v->queue + 16, (uint32_t)limit);
	fl[F_INTERP].address = var(v->f, v->queue);
	fl[F_CCLO].address = var(v->f, CC_LO);
	fl[F_CCHI].address = var(v->f, cc_hi);
	for (int i = 0; i < NFIELDS; i++)
		if (i != drop)
			keep[n++] = fl[i];
	build(v->f, &s, keep, n, ty, cp_type ? 3 : 2, NULL, 0, NULL, 0);
	assert_int_equal(vmstructs_parse(&s, fake_read, v->f, &v->vs), 0);
}

static void vm_close(struct vm *v)
{
	vmstructs_free(v->vs);
	free(v->f);
}

/* A Symbol {u4 hash; u2 length; body} holding @s (not NUL-terminated). */
static uint64_t symbol(struct fake *f, const char *s)
{
	size_t n = strlen(s);
	uint64_t sym = fake_alloc(f, 6 + n);
	uint16_t len = (uint16_t)n;

	put32(f, sym, 0xabcdef);
	memcpy(fake_at(f, sym + 4), &len, 2);
	memcpy(fake_at(f, sym + 6), s, n);
	return sym;
}

/* Method @name of class @cls (internal form) as the JVM lays it out, the
 * name at constant pool slot 5. Returns the Method*. */
static uint64_t method(struct fake *f, const char *cls, const char *name)
{
	uint64_t m = fake_alloc(f, 64), cm = fake_alloc(f, 64), cp = fake_alloc(f, CP_SIZE + 8 * 8);
	uint64_t k = fake_alloc(f, 208);
	uint16_t idx = 5;

	memset(fake_at(f, cp), 0, CP_SIZE + 8 * 8);
	put64(f, m + 8, cm);
	put64(f, cm + 8, cp);
	memcpy(fake_at(f, cm + 42), &idx, 2);
	put64(f, cp + 24, k);
	put64(f, cp + CP_SIZE + 5 * 8, name ? symbol(f, name) : 0);
	put64(f, k + 24, symbol(f, cls));
	return m;
}

static void test_layout(void **state)
{
	struct jframes_layout l;
	struct vm v;

	vm_open(&v, NFIELDS, true, INTERP_LEN, CC_HI);
	assert_int_equal(jframes_layout(v.vs, &l), 0);
	assert_int_equal(l.anchor_sp, 0x300);
	assert_int_equal(l.anchor_pc, 0x310);
	assert_int_equal(l.anchor_fp, 0x308);
	assert_int_equal(l.interp_lo, INTERP_LO);
	assert_int_equal(l.interp_hi, INTERP_LO + INTERP_LEN);
	assert_int_equal(l.cc_lo, CC_LO);
	assert_int_equal(l.cc_hi, CC_HI);
	assert_int_equal(l.method_const, 8);
	assert_int_equal(l.const_constants, 8);
	assert_int_equal(l.const_name_index, 42);
	assert_int_equal(l.cp_holder, 24);
	assert_int_equal(l.cp_size, CP_SIZE);
	assert_true(l.names_ok);
	vm_close(&v);
}

/* The anchor is required; everything else degrades to zeros. */
static void test_layout_missing(void **state)
{
	struct jframes_layout l;
	struct vm v;

	for (int drop = F_ANCHOR; drop <= F_PC; drop++) {
		vm_open(&v, drop, true, INTERP_LEN, CC_HI);
		memset(&l, 0xff, sizeof(l));
		assert_int_equal(jframes_layout(v.vs, &l), -ENOENT);
		vm_close(&v);
	}
	vm_open(&v, F_FP, true, INTERP_LEN, CC_HI);
	assert_int_equal(jframes_layout(v.vs, &l), 0);
	assert_int_equal(l.anchor_fp, 0);
	assert_int_equal(l.anchor_sp, 0x300);
	vm_close(&v);
	/* no interpreter: 0/0, the rest is there */
	for (int drop = F_INTERP; drop <= F_LIM; drop++) {
		vm_open(&v, drop, true, INTERP_LEN, CC_HI);
		assert_int_equal(jframes_layout(v.vs, &l), 0);
		assert_int_equal(l.interp_lo, 0);
		assert_int_equal(l.interp_hi, 0);
		assert_int_equal(l.cc_lo, CC_LO);
		assert_true(l.names_ok);
		vm_close(&v);
	}
	/* an empty interpreter, a code cache upside down */
	vm_open(&v, NFIELDS, true, 0, CC_LO);
	assert_int_equal(jframes_layout(v.vs, &l), 0);
	assert_int_equal(l.interp_lo, 0);
	assert_int_equal(l.interp_hi, 0);
	assert_int_equal(l.cc_lo, 0);
	assert_int_equal(l.cc_hi, 0);
	vm_close(&v);
	vm_open(&v, F_CCHI, true, -1, CC_HI);
	assert_int_equal(jframes_layout(v.vs, &l), 0);
	assert_int_equal(l.interp_hi, 0);
	assert_int_equal(l.cc_lo, 0); /* _low_bound alone is no range */
	assert_int_equal(l.cc_hi, 0);
	vm_close(&v);
	/* naming needs all five */
	for (int drop = F_CONSTM; drop <= F_HOLDER; drop++) {
		vm_open(&v, drop, true, INTERP_LEN, CC_HI);
		assert_int_equal(jframes_layout(v.vs, &l), 0);
		assert_false(l.names_ok);
		vm_close(&v);
	}
	vm_open(&v, NFIELDS, false, INTERP_LEN, CC_HI); /* no sizeof(ConstantPool) */
	assert_int_equal(jframes_layout(v.vs, &l), 0);
	assert_false(l.names_ok);
	vm_close(&v);
}

static void test_method_name(void **state)
{
	struct jframes_layout l;
	char out[128], small[8];
	uint64_t m;
	struct vm v;

	vm_open(&v, NFIELDS, true, INTERP_LEN, CC_HI);
	assert_int_equal(jframes_layout(v.vs, &l), 0);
	m = method(v.f, "com/example/Foo$Bar", "compute");
	assert_int_equal(jframes_method_name(v.vs, &l, m, out, sizeof(out)), 0);
	assert_string_equal(out, "com.example.Foo$Bar.compute");
	m = method(v.f, "Top", "<init>");
	assert_int_equal(jframes_method_name(v.vs, &l, m, out, sizeof(out)), 0);
	assert_string_equal(out, "Top.<init>");
	/* a short buffer truncates */
	assert_int_equal(jframes_method_name(v.vs, &l, m, small, sizeof(small)), 0);
	assert_string_equal(small, "Top.<in");
	vm_close(&v);
}

static void test_method_name_failures(void **state)
{
	struct jframes_layout l;
	char out[512], longname[300];
	uint64_t m;
	struct vm v;

	vm_open(&v, NFIELDS, true, INTERP_LEN, CC_HI);
	assert_int_equal(jframes_layout(v.vs, &l), 0);
	assert_int_equal(jframes_method_name(v.vs, &l, 0, out, sizeof(out)), -ENOENT);
	/* no Symbol in the name slot */
	m = method(v.f, "pkg/A", NULL);
	assert_int_equal(jframes_method_name(v.vs, &l, m, out, sizeof(out)), -ENOENT);
	/* a Method* into nowhere, and one whose ConstMethod is */
	assert_int_equal(jframes_method_name(v.vs, &l, 0x10, out, sizeof(out)), -EFAULT);
	m = method(v.f, "pkg/A", "run");
	put64(v.f, m + 8, 0x7fff00000000ULL);
	assert_int_equal(jframes_method_name(v.vs, &l, m, out, sizeof(out)), -EFAULT);
	/* a method name longer than 255 bytes is cut there */
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	m = method(v.f, "pkg/A", longname);
	assert_int_equal(jframes_method_name(v.vs, &l, m, out, sizeof(out)), 0);
	assert_int_equal(strlen(out), strlen("pkg.A.") + 255);
	assert_memory_equal(out, "pkg.A.xxx", 9);
	/* the layout says names cannot be read */
	l.names_ok = 0;
	m = method(v.f, "pkg/A", "run");
	assert_int_equal(jframes_method_name(v.vs, &l, m, out, sizeof(out)), -ENOENT);
	vm_close(&v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_layout),
		cmocka_unit_test(test_layout_missing),
		cmocka_unit_test(test_method_name),
		cmocka_unit_test(test_method_name_failures),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
