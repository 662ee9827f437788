// SPDX-License-Identifier: GPL-2.0
/*
 * test_methodsym.c - HotSpot's compressed streams (UNSIGNED5 as JDK 17 and
 * as JDK 20+ write it; byte vectors worked out by hand from the format),
 * line number tables, and Method* -> names / line / bci over a synthetic JVM
 * laid out like JDK 17's and JDK 25's.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jstack/methodsym.h"
#include "jvm/unsigned5.h"
#include "jvm/vmstructs.h"
#include "lib/util.h"

#include "fake_target.h"
#include "fake_jvm.h"

/* Decode @n bytes as one number; returns the error, *v and *used set. */
static int dec(const uint8_t *b, size_t n, unsigned excl, uint32_t *v, size_t *used)
{
	size_t p = 0;
	int err = unsigned5_read(b, n, &p, excl, v);

	*used = p;
	return err;
}

static void test_u5_classic(void **state)
{
	/* JDK 17: L = 192, H = 64, no excluded byte */
	static const uint8_t zero[] = { 0 }, b191[] = { 191 }, b192[] = { 192, 0 },
			     big[] = { 255, 63 }, five[] = { 192, 192, 192, 192, 5 },
			     more[] = { 200, 1, 7 }, cut[] = { 192 };
	uint32_t v;
	size_t used;

	(void)state;
	assert_int_equal(dec(zero, 1, 0, &v, &used), 0);
	assert_int_equal(v, 0);
	assert_int_equal(used, 1);
	assert_int_equal(dec(b191, 1, 0, &v, &used), 0);
	assert_int_equal(v, 191);
	assert_int_equal(dec(b192, 2, 0, &v, &used), 0);
	assert_int_equal(v, 192);
	assert_int_equal(used, 2);
	assert_int_equal(dec(big, 2, 0, &v, &used), 0);
	assert_int_equal(v, 255 + (63 << 6)); /* 4287 */
	/* five bytes: the fifth ends the number whatever its value */
	assert_int_equal(dec(five, 5, 0, &v, &used), 0);
	assert_int_equal(v, 192u + (192u << 6) + (192u << 12) + (192u << 18) + (5u << 24));
	assert_int_equal(used, 5);
	/* 200 continues, 1 ends: 200 + 64; the 7 is the next number's */
	assert_int_equal(dec(more, 3, 0, &v, &used), 0);
	assert_int_equal(v, 264);
	assert_int_equal(used, 2);
	assert_int_equal(dec(cut, 1, 0, &v, &used), -ERANGE);
	assert_int_equal(used, 0);
}

static void test_u5_excluded(void **state)
{
	/* JDK 20+: byte 0 never appears, every byte is stored + 1, L = 191 */
	static const uint8_t zero[] = { 1 }, nul[] = { 0 }, b190[] = { 191 },
			     b191[] = { 192, 1 }, b576[] = { 193, 7 }, bad2[] = { 200, 0 };
	uint32_t v;
	size_t used;

	(void)state;
	assert_int_equal(dec(zero, 1, 1, &v, &used), 0);
	assert_int_equal(v, 0);
	assert_int_equal(dec(nul, 1, 1, &v, &used), -EBADMSG);
	assert_int_equal(dec(b190, 1, 1, &v, &used), 0);
	assert_int_equal(v, 190);
	assert_int_equal(used, 1);
	assert_int_equal(dec(b191, 2, 1, &v, &used), 0);
	assert_int_equal(v, 191);
	assert_int_equal(used, 2);
	assert_int_equal(dec(b576, 2, 1, &v, &used), 0);
	assert_int_equal(v, 576); /* 192 + 6 * 64 */
	assert_int_equal(dec(bad2, 2, 1, &v, &used), -EBADMSG);
	/* the same bytes mean something else to the other decoder */
	assert_int_equal(dec(b576, 2, 0, &v, &used), 0);
	assert_int_equal(v, 193 + (7 << 6));
}

static void test_u5_encoder_roundtrip(void **state)
{
	static const uint32_t vals[] = { 0, 1, 190, 191, 192, 255, 4286, 4287, 4288, 100000,
					 0x7fffffff, 0xffffffff };
	uint8_t b[8];

	(void)state;
	/* the test encoder agrees with the vectors above... */
	assert_int_equal(fj_u5(b, 576, 1), 2);
	assert_int_equal(b[0], 193);
	assert_int_equal(b[1], 7);
	assert_int_equal(fj_u5(b, 192, 0), 2);
	assert_int_equal(b[0], 192);
	assert_int_equal(b[1], 0);
	/* ...and the decoder reads back whatever it writes */
	for (unsigned excl = 0; excl < 2; excl++)
		for (size_t i = 0; i < MT_ARRAY_SIZE(vals); i++) {
			size_t n = fj_u5(b, vals[i], excl), used;
			uint32_t v;

			assert_int_equal(dec(b, n, excl, &v, &used), 0);
			assert_int_equal(v, vals[i]);
			assert_int_equal(used, n);
			for (size_t k = 0; excl && k < n; k++)
				assert_int_not_equal(b[k], 0);
		}
	assert_int_equal(unsigned5_signed(0), 0);
	assert_int_equal(unsigned5_signed(1), -1);
	assert_int_equal(unsigned5_signed(7), -4);
	assert_int_equal(unsigned5_signed(576), 288);
	assert_int_equal(unsigned5_signed(0xffffffffu), INT32_MIN);
}

/* (bci 0, line 10) escaped; (4, 11) and (12, 13) one byte each;
 * (300, 9) escaped with a two-byte bci delta (288 -> zigzag 576) and -4. */
static const uint8_t LINES_17[] = { 0xff, 0, 20, 33, 66, 0xff, 192, 6, 7, 0 };
static const uint8_t LINES_25[] = { 0xff, 1, 21, 33, 66, 0xff, 193, 7, 8, 0 };
static const int PAIRS[][2] = { { 0, 10 }, { 4, 11 }, { 12, 13 }, { 300, 9 } };

static void check_lines(const uint8_t *t, size_t n, unsigned excl)
{
	static const int want[][2] = { { 0, 10 }, { 3, 10 }, { 4, 11 }, { 5, 11 }, { 12, 13 },
				       { 299, 13 }, { 300, 9 }, { 4000, 9 } };
	int line;

	for (size_t i = 0; i < MT_ARRAY_SIZE(want); i++) {
		line = -7;
		assert_int_equal(methodsym_line_lookup(t, n, excl, want[i][0], &line), 0);
		assert_int_equal(line, want[i][1]);
	}
}

static void test_line_tables(void **state)
{
	static const uint8_t empty[] = { 0 }, late[] = { 0xff, 10, 10, 0 },
			     unterminated[] = { 33, 66 };
	uint8_t b[64];
	int line = -7;

	(void)state;
	check_lines(LINES_17, sizeof(LINES_17), 0);
	check_lines(LINES_25, sizeof(LINES_25), 1);
	/* the test encoder writes exactly these bytes */
	assert_int_equal(fj_lines(b, PAIRS, 4, 0), sizeof(LINES_17));
	assert_memory_equal(b, LINES_17, sizeof(LINES_17));
	assert_int_equal(fj_lines(b, PAIRS, 4, 1), sizeof(LINES_25));
	assert_memory_equal(b, LINES_25, sizeof(LINES_25));
	/* no pairs; a first pair past the bci (bci 5, line 5); no terminator */
	assert_int_equal(methodsym_line_lookup(empty, 1, 0, 0, &line), -ENOENT);
	assert_int_equal(methodsym_line_lookup(late, sizeof(late), 0, 2, &line), -ENOENT);
	assert_int_equal(methodsym_line_lookup(late, sizeof(late), 0, 5, &line), 0);
	assert_int_equal(line, 5);
	assert_int_equal(methodsym_line_lookup(unterminated, 2, 0, 100, &line), -ERANGE);
	/* a zero inside an escape is malformed for JDK 25, fine for 17 */
	assert_int_equal(methodsym_line_lookup(LINES_17, sizeof(LINES_17), 1, 4, &line), -EBADMSG);
}

static void check_methods(int jdk)
{
	struct fj *j = fj_new(jdk);
	struct mt_methodsym_layout l;
	struct mt_methodsym ms;
	uint64_t code, m, bare;
	int v;

	m = fj_method(j, "pkg/Outer$Inner", "alloc", "(I)[B", "Outer.java", 320, PAIRS, 4, &code);
	bare = fj_method(j, "pkg/Gen", "lambda$0", "()V", NULL, 5, NULL, 0, NULL);
	assert_int_equal(methodsym_layout(j->vs, &l), 0);
	assert_int_equal(l.vm_major, jdk);
	assert_int_equal(l.u5_excl, jdk == 17 ? 0 : 1);
	assert_int_equal(l.cm_flags_size, jdk == 17 ? 2 : 4);
	assert_int_equal(l.has_linenumbers, 1);

	assert_int_equal(methodsym_names(j->vs, &l, m, &ms), 0);
	assert_string_equal(ms.klass, "pkg.Outer$Inner");
	assert_string_equal(ms.name, "alloc");
	assert_string_equal(ms.sig, "(I)[B");
	assert_string_equal(ms.file, "Outer.java");
	assert_int_equal(methodsym_names(j->vs, &l, bare, &ms), 0);
	assert_string_equal(ms.klass, "pkg.Gen");
	assert_string_equal(ms.file, "");
	assert_int_equal(methodsym_names(j->vs, &l, 0, &ms), -EFAULT);
	assert_int_equal(methodsym_names(j->vs, &l, 0x10, &ms), -EFAULT); /* unreadable */

	assert_int_equal(methodsym_line(j->vs, &l, m, 4, &v), 0);
	assert_int_equal(v, 11);
	assert_int_equal(methodsym_line(j->vs, &l, m, 305, &v), 0);
	assert_int_equal(v, 9);
	assert_int_equal(methodsym_line(j->vs, &l, m, -1, &v), 0); /* entry: bci 0 */
	assert_int_equal(v, 10);
	assert_int_equal(methodsym_line(j->vs, &l, m, 320, &v), -ERANGE);
	assert_int_equal(methodsym_line(j->vs, &l, bare, 0, &v), -ENOENT);

	assert_int_equal(methodsym_bci(j->vs, &l, m, code + 17, &v), 0);
	assert_int_equal(v, 17);
	assert_int_equal(methodsym_bci(j->vs, &l, m, code + 320, &v), -ERANGE);
	assert_int_equal(methodsym_bci(j->vs, &l, m, code - 1, &v), -ERANGE);
	fj_free(j);
}

static void test_methods_jdk17(void **state)
{
	(void)state;
	check_methods(17);
}

static void test_methods_jdk25(void **state)
{
	(void)state;
	check_methods(25);
}

/* A method whose signature is longer than MT_METHODSYM_SIG_MAX (Derby's
 * B2IForwardScan.init: 615 bytes) is named, its signature cut; a name that
 * does not fit is still refused. */
static void test_long_signature(void **state)
{
	struct fj *j = fj_new(17);
	struct mt_methodsym_layout l;
	struct mt_methodsym ms;
	char sig[700], name[300];
	uint64_t m, m2;
	size_t n = 0;

	(void)state;
	sig[n++] = '(';
	while (n < 600)
		n += (size_t)snprintf(sig + n, sizeof(sig) - n, "Lorg/apache/derby/X;");
	snprintf(sig + n, sizeof(sig) - n, ")V");
	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	m = fj_method(j, "org/apache/derby/B2IForwardScan", "init", sig, "B2IForwardScan.java", 1,
		      NULL, 0, NULL);
	m2 = fj_method(j, "A", name, "()V", NULL, 1, NULL, 0, NULL);
	assert_int_equal(methodsym_layout(j->vs, &l), 0);
	assert_int_equal(methodsym_names(j->vs, &l, m, &ms), 0);
	assert_string_equal(ms.klass, "org.apache.derby.B2IForwardScan");
	assert_string_equal(ms.name, "init");
	assert_string_equal(ms.file, "B2IForwardScan.java");
	assert_int_equal(strlen(ms.sig), MT_METHODSYM_SIG_MAX - 1);
	assert_memory_equal(ms.sig, sig, MT_METHODSYM_SIG_MAX - 4);
	assert_string_equal(ms.sig + MT_METHODSYM_SIG_MAX - 4, "...");
	assert_int_equal(methodsym_names(j->vs, &l, m2, &ms), -EINVAL);
	fj_free(j);
}

/* A method whose constant pool index points outside the pool. */
static void test_bad_index(void **state)
{
	struct fj *j = fj_new(25);
	struct mt_methodsym_layout l;
	struct mt_methodsym ms;
	uint64_t m = fj_method(j, "A", "f", "()V", NULL, 1, NULL, 0, NULL), cm;

	(void)state;
	assert_int_equal(methodsym_layout(j->vs, &l), 0);
	memcpy(&cm, fake_at(j->f, m + 8), 8);
	put16(j->f, cm + 36, 9); /* _name_index beyond _length 4 */
	assert_int_equal(methodsym_names(j->vs, &l, m, &ms), -EINVAL);
	fj_free(j);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u5_classic),
		cmocka_unit_test(test_u5_excluded),
		cmocka_unit_test(test_u5_encoder_roundtrip),
		cmocka_unit_test(test_line_tables),
		cmocka_unit_test(test_methods_jdk17),
		cmocka_unit_test(test_methods_jdk25),
		cmocka_unit_test(test_bad_index),
		cmocka_unit_test(test_long_signature),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
