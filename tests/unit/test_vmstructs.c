// SPDX-License-Identifier: GPL-2.0
/*
 * test_vmstructs.c - VMStructs table parsing over a synthetic JVM memory
 * image (a fake reader over a buffer), and klassname: the internal -> Java
 * name table, Symbol reading and the Klass* cache.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jvm/klassname.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

#include "fake_target.h"

static const struct tfield FIELDS[] = {
	{ "Symbol", "_length", "u2", 0, 4, 0 },
	{ "Klass", "_name", "Symbol*", 0, 24, 0 },
	{ "Symbol", "_body", "", 0, 6, 0 },
	{ "JVMFlag", "flags", "JVMFlag*", 1, 0, 0x7f0000001000ULL },
	{ "Klass", "_super", "Klass*", 0, 120, 0 },
};
static const struct ttype TYPES[] = {
	{ "Symbol", NULL, 0, 0, 0, 8 },
	{ "u2", NULL, 0, 1, 1, 2 },
	{ "Klass", "Metadata", 0, 0, 0, 208 },
};
static const struct tconst INTS[] = { { "oopSize", 8 }, { "Minus", -5 } };
static const struct tconst LONGS[] = { { "markWord::hash_mask", 0x7fffffffLL } };

static struct fake *new_fake(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->used = 64; /* address FAKE_BASE itself stays unused */
	return f;
}

/* Parse the standard synthetic JVM. */
static struct mt_vmstructs *std_vm(struct fake *f)
{
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;

	build(f, &s, FIELDS, MT_ARRAY_SIZE(FIELDS), TYPES, MT_ARRAY_SIZE(TYPES), INTS,
	      MT_ARRAY_SIZE(INTS), LONGS, MT_ARRAY_SIZE(LONGS));
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
	assert_non_null(vs);
	return vs;
}

/* ---- vmstructs ---- */

static void test_parse_lookups(void **state)
{
	struct fake *f = new_fake();
	struct mt_vmstructs *vs = std_vm(f);
	const struct mt_vmfield *fl;
	uint64_t v;
	int32_t i;

	assert_int_equal(vmstructs_field_offset(vs, "Klass", "_name", &v), 0);
	assert_int_equal(v, 24);
	assert_int_equal(vmstructs_field_offset(vs, "Symbol", "_body", &v), 0);
	assert_int_equal(v, 6);
	assert_int_equal(vmstructs_field_offset(vs, "Klass", "_nope", &v), -ENOENT);
	assert_int_equal(vmstructs_field_offset(vs, "Nope", "_name", &v), -ENOENT);
	assert_int_equal(vmstructs_field_offset(vs, "JVMFlag", "flags", &v), -EINVAL);
	assert_int_equal(vmstructs_static_addr(vs, "JVMFlag", "flags", &v), 0);
	assert_int_equal(v, 0x7f0000001000ULL);
	assert_int_equal(vmstructs_static_addr(vs, "Klass", "_name", &v), -EINVAL);
	fl = vmstructs_field(vs, "Symbol", "_length");
	assert_non_null(fl);
	assert_string_equal(fl->type_string, "u2");
	assert_string_equal(vmstructs_field(vs, "Symbol", "_body")->type_string, "");

	assert_int_equal(vmstructs_type_size(vs, "Klass", &v), 0);
	assert_int_equal(v, 208);
	assert_string_equal(vmstructs_type(vs, "Klass")->super, "Metadata");
	assert_string_equal(vmstructs_type(vs, "Symbol")->super, "");
	assert_true(vmstructs_type(vs, "u2")->is_unsigned);
	assert_int_equal(vmstructs_type_size(vs, "Nope", &v), -ENOENT);

	assert_int_equal(vmstructs_int_constant(vs, "oopSize", &i), 0);
	assert_int_equal(i, 8);
	assert_int_equal(vmstructs_int_constant(vs, "Minus", &i), 0);
	assert_int_equal(i, -5);
	assert_int_equal((int64_t)vmstructs_const_at(vs, false, 0)->value, -5); /* sorted, sign-extended */
	assert_int_equal(vmstructs_long_constant(vs, "markWord::hash_mask", &v), 0);
	assert_int_equal(v, 0x7fffffff);
	assert_int_equal(vmstructs_long_constant(vs, "oopSize", &v), -ENOENT);

	/* Sorted by type, then field. */
	assert_int_equal(vmstructs_nfields(vs), MT_ARRAY_SIZE(FIELDS));
	assert_string_equal(vmstructs_field_at(vs, 0)->type, "JVMFlag");
	assert_string_equal(vmstructs_field_at(vs, 1)->field, "_name");
	assert_string_equal(vmstructs_field_at(vs, 2)->field, "_super");
	assert_null(vmstructs_field_at(vs, 99));
	assert_int_equal(vmstructs_ntypes(vs), 3);
	assert_int_equal(vmstructs_nconsts(vs, true), 1);

	/* A parsed handle has no ELF file. */
	assert_int_equal(vmstructs_symbol(vs, "DTraceAllocProbes", &v), -ENOENT);
	assert_false(vmstructs_has_symtab(vs));
	vmstructs_free(vs);
	vmstructs_free(NULL);
	free(f);
}

static void test_uninitialised_and_bad_layout(void **state)
{
	struct fake *f = new_fake();
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = (void *)1;

	build(f, &s, FIELDS, 1, TYPES, 1, INTS, 1, LONGS, 1);
	/* All-zero layout: static initialisers have not run. */
	put64(f, s.s_stride, 0);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), -EAGAIN);
	assert_null(vs);
	/* An offset past the stride. */
	put64(f, s.s_stride, SF_STRIDE);
	put64(f, s.s_address, 4000);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), -EINVAL);
	/* An offset whose end wraps around 2^64 (found by fuzz_vmstructs). */
	put64(f, s.s_type_name, 0xfffffffffffffff9ULL);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), -EINVAL);
	put64(f, s.s_type_name, 0);
	put64(f, s.s_address, 40);
	/* A stride no JVM has. */
	put64(f, s.t_stride, 1 << 20);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), -EINVAL);
	put64(f, s.t_stride, TY_STRIDE);
	/* A table pointer that is NULL. */
	put64(f, s.ints, 0);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), -EAGAIN);
	/* A symbol address outside the target. */
	s.ints = 8;
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), -EFAULT);
	free(f);
}

static void test_unterminated_table(void **state)
{
	struct fake *f = new_fake();
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;
	uint64_t base;

	build(f, &s, FIELDS, MT_ARRAY_SIZE(FIELDS), TYPES, 1, INTS, 1, LONGS, 1);
	/* Point the struct table at an entry with a type name whose stride
	 * runs past the end of the mapping: the read fails, no loop. */
	assert_int_equal(fake_read(f, s.structs, &base, 8), 0);
	f->used = (f->used + 4095) & ~(size_t)4095;
	put64(f, s.structs, FAKE_BASE + f->used - 8);
	put64(f, FAKE_BASE + f->used - 8, fake_str(f, "T"));
	f->used = (f->used + 4095) & ~(size_t)4095;
	put64(f, s.structs, FAKE_BASE + f->used - 8);
	put64(f, FAKE_BASE + f->used - 8, FAKE_BASE + f->used - 4096 + 8);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), -EFAULT);
	assert_null(vs);
	free(f);
}

/*
 * A reader over an endless struct table: layout variables at 0x1000 + 8*k
 * (in struct mt_vmstructs_syms order), the struct table at 0x100000 where
 * every word is 0x2000, the string "A" at 0x2000, empty tables at 0x3000.
 */
static int endless_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	static const uint64_t lay[24] = { 0x100000, 0, 8, 16, 24, 32, 40, 48,
					  0x3000, 0, 8, 16, 20, 24, 32, 40,
					  0x3000, 0, 8, 16, 0x3000, 0, 8, 16 };
	unsigned char *b = buf;

	if (addr >= 0x1000 && addr + len <= 0x1000 + sizeof(lay) && len == 8) {
		memcpy(buf, &lay[(addr - 0x1000) / 8], 8);
	} else if (addr >= 0x2000 && addr + len <= 0x3000) {
		memset(buf, 0, len);
		b[0] = addr == 0x2000 ? 'A' : 0;
	} else if (addr >= 0x3000 && addr + len <= 0x4000) {
		memset(buf, 0, len);
	} else if (addr >= 0x100000) {
		for (size_t i = 0; i < len; i++)
			b[i] = (addr + i) % 8 == 1 ? 0x20 : 0;
	} else {
		return -EFAULT;
	}
	return 0;
}

static void test_endless_table_is_capped(void **state)
{
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;
	uint64_t *slot = (uint64_t *)&s;

	for (unsigned k = 0; k < 24; k++)
		slot[k] = 0x1000 + 8 * k;
	assert_int_equal(vmstructs_parse(&s, endless_read, NULL, &vs), -E2BIG);
	assert_null(vs);
}

static void test_read_string(void **state)
{
	struct fake *f = new_fake();
	struct mt_vmstructs *vs = std_vm(f);
	char buf[MT_VMSTRUCTS_MAX_STR], small[4];
	uint64_t a;

	/* A string whose NUL is the last byte of the mapping, at a page end. */
	f->used = 3 * 4096 - 8;
	a = fake_str(f, "tail!!!");
	assert_int_equal(f->used, 3 * 4096);
	assert_int_equal(vmstructs_read_string(vs, a, buf, sizeof(buf)), 7);
	assert_string_equal(buf, "tail!!!");
	/* Truncation. */
	assert_int_equal(vmstructs_read_string(vs, a, small, sizeof(small)), -E2BIG);
	assert_string_equal(small, "tai");
	assert_int_equal(vmstructs_read_string(vs, 0, buf, sizeof(buf)), -EFAULT);
	assert_int_equal(vmstructs_read_string(vs, 8, buf, sizeof(buf)), -EFAULT);
	vmstructs_free(vs);
	free(f);
}

static void test_long_names_truncated(void **state)
{
	struct fake *f = new_fake();
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;
	char *longname = malloc(3000);
	struct tfield fl[1] = { { NULL, "_x", "int", 0, 8, 0 } };

	memset(longname, 'T', 2999);
	longname[2999] = '\0';
	fl[0].type = longname;
	build(f, &s, fl, 1, TYPES, 1, INTS, 1, LONGS, 1);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
	/* T... sorts after the Klass and Symbol entries build() adds */
	assert_int_equal(strlen(vmstructs_field_at(vs, vmstructs_nfields(vs) - 1)->type),
			 MT_VMSTRUCTS_MAX_STR - 1);
	vmstructs_free(vs);
	free(longname);
	free(f);
}

/* ---- klassname ---- */

static void test_to_java_table(void **state)
{
	static const struct {
		const char *in, *out;
		int ret; /* 0: length of out */
	} cases[] = {
		{ "java/lang/String", "java.lang.String", 0 },
		{ "java/lang/Object", "java.lang.Object", 0 },
		{ "Idle", "Idle", 0 },
		{ "Outer$Inner", "Outer$Inner", 0 },
		{ "java/util/HashMap$Node", "java.util.HashMap$Node", 0 },
		{ "[J", "long[]", 0 },
		{ "[I", "int[]", 0 },
		{ "[Z", "boolean[]", 0 },
		{ "[B", "byte[]", 0 },
		{ "[C", "char[]", 0 },
		{ "[S", "short[]", 0 },
		{ "[F", "float[]", 0 },
		{ "[D", "double[]", 0 },
		{ "[[[D", "double[][][]", 0 },
		{ "[Ljava/lang/String;", "java.lang.String[]", 0 },
		{ "[[Ljava/lang/Object;", "java.lang.Object[][]", 0 },
		{ "[LOuter$Inner;", "Outer$Inner[]", 0 },
		{ "a/B$$Lambda+0x0000000800c01200", "a.B$$Lambda/0x0000000800c01200", 0 },
		{ "a/B$$Lambda/0x0000000800c01200", "a.B$$Lambda/0x0000000800c01200", 0 },
		{ "B$$Lambda$1/0x00007ff6d4001000", "B$$Lambda$1/0x00007ff6d4001000", 0 },
		{ "a/B/0xZZ", "a.B.0xZZ", 0 },
		{ "a/B+C", "a.B+C", 0 },
		{ "a/B+0xZZ", "a.B+0xZZ", 0 },
		{ "", NULL, -EINVAL },
		{ "[", NULL, -EINVAL },
		{ "[[", NULL, -EINVAL },
		{ "[X", NULL, -EINVAL },
		{ "[II", NULL, -EINVAL },
		{ "[L;", NULL, -EINVAL },
		{ "[Ljava/lang/String", NULL, -EINVAL },
		{ "[Lfoo;bar;", NULL, -EINVAL },
		{ "a;b", NULL, -EINVAL },
		{ "a[b", NULL, -EINVAL },
	};
	char out[128];

	for (size_t i = 0; i < MT_ARRAY_SIZE(cases); i++) {
		int r = klassname_to_java(cases[i].in, strlen(cases[i].in), out, sizeof(out));

		if (cases[i].out) {
			if (r != (int)strlen(cases[i].out) || strcmp(out, cases[i].out))
				fail_msg("'%s' -> '%s' (%d), expected '%s'", cases[i].in, out, r,
					 cases[i].out);
		} else if (r != cases[i].ret || out[0]) {
			fail_msg("'%s' -> %d '%s', expected %d", cases[i].in, r, out, cases[i].ret);
		}
	}
	/* Not NUL-terminated input: only len bytes count. */
	assert_int_equal(klassname_to_java("[Jxyz", 2, out, sizeof(out)), 6);
	assert_string_equal(out, "long[]");
	/* Output too small (exactly: "long[]" needs 7 bytes). */
	assert_int_equal(klassname_to_java("[J", 2, out, 6), -ENOSPC);
	assert_int_equal(klassname_to_java("[J", 2, out, 7), 6);
	assert_int_equal(klassname_to_java("abc", 3, out, 0), -ENOSPC);
	assert_int_equal(klassname_to_java("java/lang/String", 16, out, 10), -ENOSPC);
	assert_string_equal(out, "");
}

/* A Klass with _name at 24 pointing to a Symbol {u4 hash; u2 len; body}. */
static uint64_t fake_klass(struct fake *f, const char *name)
{
	size_t n = strlen(name);
	uint64_t k = fake_alloc(f, 208), sym = fake_alloc(f, 6 + n);
	uint16_t len = (uint16_t)n;

	memset(fake_at(f, k), 0, 208);
	put64(f, k + 24, sym);
	put32(f, sym, 0x12345678);
	memcpy(fake_at(f, sym + 4), &len, 2);
	memcpy(fake_at(f, sym + 6), name, n); /* no NUL: Symbols are counted */
	return k;
}

static void test_klass_read(void **state)
{
	struct fake *f = new_fake();
	struct mt_vmstructs *vs = std_vm(f);
	struct mt_klass_layout l;
	uint64_t k1, k2, k0;
	char out[64];

	assert_int_equal(klassname_layout(vs, &l), 0);
	assert_int_equal(l.klass_name, 24);
	assert_int_equal(l.sym_length, 4);
	assert_int_equal(l.sym_body, 6);
	assert_int_equal(l.length_size, 2);
	k1 = fake_klass(f, "[[Ljava/lang/Object;");
	k2 = fake_klass(f, "java/lang/String");
	assert_int_equal(klassname_read(vs, &l, k1, true, out, sizeof(out)), 20);
	assert_string_equal(out, "java.lang.Object[][]");
	assert_int_equal(klassname_read(vs, &l, k1, false, out, sizeof(out)), 20);
	assert_string_equal(out, "[[Ljava/lang/Object;");
	assert_int_equal(klassname_read(vs, &l, k2, false, out, 10), -ENOSPC);
	assert_int_equal(klassname_read(vs, &l, 0, true, out, sizeof(out)), -EFAULT);
	/* A Klass whose _name is NULL, and one with a zero-length Symbol. */
	k0 = fake_alloc(f, 208);
	memset(fake_at(f, k0), 0, 208);
	assert_int_equal(klassname_read(vs, &l, k0, true, out, sizeof(out)), -EFAULT);
	put64(f, k0 + 24, fake_alloc(f, 8));
	memset(fake_at(f, f->used - 8 + FAKE_BASE), 0, 8);
	assert_int_equal(klassname_read(vs, &l, k0, true, out, sizeof(out)), -EINVAL);
	/* A Klass pointer into nowhere. */
	assert_int_equal(klassname_read(vs, &l, 0x10, true, out, sizeof(out)), -EFAULT);
	vmstructs_free(vs);
	free(f);
}

static void test_klass_cache(void **state)
{
	struct fake *f = new_fake();
	struct mt_vmstructs *vs = std_vm(f);
	struct mt_klassname_cache *c = klassname_cache_new(vs);
	enum { N = 3000 };
	uint64_t *ks = calloc(N, sizeof(*ks));
	char out[64], name[64];
	unsigned long reads;

	assert_non_null(c);
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "p/C%d", i);
		ks[i] = fake_klass(f, name);
	}
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "p.C%d", i);
		assert_int_equal(klassname_cache_get(c, ks[i], out, sizeof(out)), strlen(name));
		assert_string_equal(out, name);
	}
	assert_int_equal(klassname_cache_count(c), N);
	/* Hits do not read the target. */
	reads = f->reads;
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "p.C%d", i);
		assert_true(klassname_cache_get(c, ks[i], out, sizeof(out)) > 0);
		assert_string_equal(out, name);
	}
	assert_int_equal(f->reads, reads);
	/* Invalidate every third (backward shift must keep the rest findable),
	 * and change those classes' memory: the next get reads it again. */
	for (int i = 0; i < N; i += 3) {
		klassname_cache_invalidate(c, ks[i]);
		memcpy(fake_at(f, ks[i]), fake_at(f, ks[(i + 1) % N]), 208);
	}
	klassname_cache_invalidate(c, 0x999999); /* absent: no-op */
	assert_int_equal(klassname_cache_count(c), N - (N + 2) / 3);
	reads = f->reads;
	for (int i = 0; i < N; i++) {
		snprintf(name, sizeof(name), "p.C%d", i % 3 ? i : (i + 1) % N);
		assert_true(klassname_cache_get(c, ks[i], out, sizeof(out)) > 0);
		assert_string_equal(out, name);
	}
	assert_true(f->reads > reads);
	assert_int_equal(klassname_cache_count(c), N);
	/* Too small a buffer, NULL klass, unreadable klass: not cached. */
	assert_int_equal(klassname_cache_get(c, ks[5], out, 3), -ENOSPC);
	assert_int_equal(klassname_cache_get(c, 0, out, sizeof(out)), -EFAULT);
	assert_int_equal(klassname_cache_get(c, 0x10, out, sizeof(out)), -EFAULT);
	assert_int_equal(klassname_cache_count(c), N);
	klassname_cache_clear(c);
	assert_int_equal(klassname_cache_count(c), 0);
	assert_int_equal(klassname_cache_get(c, ks[7], out, sizeof(out)), 4);
	klassname_cache_free(c);
	klassname_cache_free(NULL);
	free(ks);
	vmstructs_free(vs);
	free(f);
}

/* Class names need Klass::_name: a required entry, so a JVM without it is
 * refused once, at open, with its name (no module gets a handle to fail on). */
static void test_klass_cache_needs_layout(void **state)
{
	struct fake *f = new_fake();
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;

	build_exact(f, &s, FIELDS + 3, 2, TYPES, 1, INTS, 1, LONGS, 1); /* no Klass::_name */
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), -ENOENT);
	assert_null(vs);
	assert_string_equal(vmstructs_missing(), "Klass::_name");
	assert_string_equal(vmstructs_strerror(-ENOENT), "no Klass::_name in its VMStructs");
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_lookups),
		cmocka_unit_test(test_uninitialised_and_bad_layout),
		cmocka_unit_test(test_unterminated_table),
		cmocka_unit_test(test_endless_table_is_capped),
		cmocka_unit_test(test_read_string),
		cmocka_unit_test(test_long_names_truncated),
		cmocka_unit_test(test_to_java_table),
		cmocka_unit_test(test_klass_read),
		cmocka_unit_test(test_klass_cache),
		cmocka_unit_test(test_klass_cache_needs_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
