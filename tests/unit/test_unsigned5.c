// SPDX-License-Identifier: GPL-2.0
/* test_unsigned5 - HotSpot's UNSIGNED5 numbers, both variants (byte 0 excluded
 * or not), against a writer of the same scheme. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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

static void test_u5_roundtrip(void **state)
{
	static const uint32_t vals[] = { 0, 1, 189, 190, 191, 192, 255, 1000, 12345, 65535,
					 1u << 20, 0x7fffffff, 0xfffffffe };
	uint8_t buf[8];

	(void)state;
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		size_t n = u5_put(buf, vals[i]), pos = 0;
		uint32_t got = 0;

		assert_int_equal(unsigned5_read(buf, n, &pos, 1, &got), 0);
		assert_int_equal(got, vals[i]);
		assert_int_equal(pos, n);
	}
	/* one byte up to 190, two bytes from 191 */
	assert_int_equal(u5_put(buf, 190), 1);
	assert_int_equal(u5_put(buf, 191), 2);
}

static void test_u5_malformed(void **state)
{
	uint8_t buf[8] = { 0 };
	size_t pos = 0, n;
	uint32_t v;

	(void)state;
	/* empty, a zero byte, a number cut short */
	assert_int_equal(unsigned5_read(buf, 0, &pos, 1, &v), -ERANGE);
	buf[0] = 0;
	assert_int_equal(unsigned5_read(buf, 1, &pos, 1, &v), -EBADMSG);
	n = u5_put(buf, 100000);
	assert_true(n >= 2);
	assert_int_equal(unsigned5_read(buf, n - 1, &pos, 1, &v), -ERANGE);
	assert_int_equal(pos, 0);
	buf[1] = 0;
	assert_int_equal(unsigned5_read(buf, n, &pos, 1, &v), -EBADMSG);
}

static void test_zigzag(void **state)
{
	(void)state;
	assert_int_equal(unsigned5_signed(0), 0);
	assert_int_equal(unsigned5_signed(1), -1);
	assert_int_equal(unsigned5_signed(2), 1);
	assert_int_equal(unsigned5_signed(3), -2);
	assert_int_equal(unsigned5_signed(0xfffffffe), 0x7fffffff);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_u5_roundtrip),
		cmocka_unit_test(test_u5_malformed),
		cmocka_unit_test(test_zigzag),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
