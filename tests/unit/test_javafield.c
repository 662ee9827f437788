// SPDX-License-Identifier: GPL-2.0
/* test_javafield - Java field tables of both encodings (JDK 17's u2 records,
 * JDK 21+'s UNSIGNED5 stream), decoded from bytes built here. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "jvm/javafield.h"
#include "jvm/unsigned5.h"

/* UNSIGNED5 writer, the inverse of the reader under test (unsigned5.hpp's scheme). */
static size_t u5_put(uint8_t *out, uint32_t v)
{
	size_t n = 0;

	for (int i = 0;; i++) {
		if (v < 191 || i == 4) {
			out[n++] = (uint8_t)(1 + v);
			return n;
		}
		v -= 191;
		out[n++] = (uint8_t)(1 + 191 + v % 64);
		v >>= 6;
	}
}

static const struct javafield_ffbits FF = {
	.initialized = 0, .injected = 1, .generic = 2, .stable = 3, .contended = 4,
};

/* name sig offset access flags [initval] [generic] [group] */
static size_t put_field(uint8_t *p, uint32_t name, uint32_t off, uint32_t acc, uint32_t flags)
{
	size_t n = 0;

	n += u5_put(p + n, name);
	n += u5_put(p + n, name + 1);
	n += u5_put(p + n, off);
	n += u5_put(p + n, acc);
	n += u5_put(p + n, flags);
	if (flags & 1u << FF.initialized)
		n += u5_put(p + n, 77);
	if (flags & 1u << FF.generic)
		n += u5_put(p + n, 300);
	if (flags & 1u << FF.contended)
		n += u5_put(p + n, 5);
	return n;
}

static void test_stream(void **state)
{
	uint8_t buf[256];
	struct javafield_entry f[8];
	size_t n = 0, got;

	(void)state;
	n += u5_put(buf + n, 3); /* java fields */
	n += u5_put(buf + n, 1); /* injected */
	n += put_field(buf + n, 12, 12, 0x0002, 0);
	n += put_field(buf + n, 400, 16, 0x0008 | 0x0010, 1u << FF.initialized | 1u << FF.generic);
	n += put_field(buf + n, 20, 1000, 0x0040, 1u << FF.contended | 1u << FF.stable);
	n += put_field(buf + n, 3, 24, 0x0002, 1u << FF.injected);
	assert_int_equal(javafield_parse_stream(buf, n, &FF, f, 8, &got), 0);
	assert_int_equal(got, 4);
	assert_int_equal(f[0].name_index, 12);
	assert_int_equal(f[0].offset, 12);
	assert_int_equal(f[0].access, 2);
	assert_false(f[0].injected);
	assert_int_equal(f[1].name_index, 400);
	assert_int_equal(f[1].offset, 16);
	assert_int_equal(f[1].access, 0x18);
	assert_int_equal(f[2].offset, 1000);
	assert_true(f[3].injected);
	assert_int_equal(f[3].offset, 24);
	/* @max bounds what is written, not what is checked */
	assert_int_equal(javafield_parse_stream(buf, n, &FF, f, 2, &got), 0);
	assert_int_equal(got, 2);
	/* truncated anywhere: refused */
	for (size_t cut = 0; cut < n; cut++)
		assert_int_equal(javafield_parse_stream(buf, cut, &FF, f, 8, &got), -EPROTO);
}

static void test_stream_unknown_flag(void **state)
{
	uint8_t buf[64];
	struct javafield_entry f[2];
	size_t n = 0, got;

	(void)state;
	n += u5_put(buf + n, 1);
	n += u5_put(buf + n, 0);
	n += put_field(buf + n, 5, 12, 0, 1u << 6); /* a flag that may announce an item */
	assert_int_equal(javafield_parse_stream(buf, n, &FF, f, 2, &got), -EPROTO);
}

static const struct javafield_layout L17 = {
	.slots = 6, .acc_slot = 0, .name_slot = 1, .low_slot = 4, .high_slot = 5,
	.tag_size = 2, .tag_offset = 1, .acc_internal = 0x400,
};

static void put_rec(uint16_t *a, uint16_t acc, uint16_t name, uint32_t off, uint32_t tag)
{
	uint32_t packed = off << 2 | tag;

	a[0] = acc, a[1] = name, a[2] = name + 1, a[3] = 0;
	a[4] = (uint16_t)packed, a[5] = (uint16_t)(packed >> 16);
}

static void test_u2(void **state)
{
	uint16_t a[6 * 3 + 2];
	struct javafield_entry f[4];
	size_t got;

	(void)state;
	put_rec(a, 0x0002, 10, 12, 1);
	put_rec(a + 6, 0x0008, 11, 112, 1);
	put_rec(a + 12, 0x0400 | 0x0002, 3, 70000, 1); /* injected, offset above 16 bits */
	a[18] = a[19] = 0;                              /* generic signature slots follow */
	assert_int_equal(javafield_parse_u2(a, 20, 3, &L17, f, 4, &got), 0);
	assert_int_equal(got, 3);
	assert_int_equal(f[0].name_index, 10);
	assert_int_equal(f[0].offset, 12);
	assert_int_equal(f[1].access, 8);
	assert_int_equal(f[1].offset, 112);
	assert_true(f[2].injected);
	assert_int_equal(f[2].offset, 70000);
	/* fewer u2 than the count needs */
	assert_int_equal(javafield_parse_u2(a, 17, 3, &L17, f, 4, &got), -EPROTO);
	/* an offset not tagged as one (the class is not linked) */
	put_rec(a + 6, 0x0002, 11, 16, 2);
	assert_int_equal(javafield_parse_u2(a, 20, 3, &L17, f, 4, &got), -EPROTO);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_stream_unknown_flag),
		cmocka_unit_test(test_u2),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
