// SPDX-License-Identifier: GPL-2.0
/* test_hash - the two integer hashes of user/lib/hash.h: their values (the
 * tables that use them must not change layout unnoticed) and their spread. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "lib/hash.h"

static void test_values(void **state)
{
	assert_true(hash_mix64(0) == 0);
	assert_true(hash_mix64(1) == 0xff51afd792fd5b26ULL);
	assert_true(hash_fib64(0) == 0);
	assert_true(hash_fib64(1) == 0x9e3779b97f4a7c15ULL);
	assert_true(hash_fib64(2) == 0x3c6ef372fe94f82aULL); /* wraps mod 2^64 */
}

/* 4096 keys in a row into 4096 slots: 8-byte-aligned addresses by the low
 * 12 bits of hash_mix64 fill more than half (as random slots would: 63 %),
 * word indexes by the top 12 bits of hash_fib64 more than three quarters
 * (89 %); the addresses' own low bits would fill one slot in eight. */
static void test_spread(void **state)
{
	static unsigned char mix[4096], fib[4096];
	unsigned nmix = 0, nfib = 0;

	for (uint64_t i = 0; i < 4096; i++) {
		mix[hash_mix64(0x7f0000000ull + 8 * i) & 4095] = 1;
		fib[hash_fib64(i + 1) >> 52] = 1;
	}
	for (int i = 0; i < 4096; i++) {
		nmix += mix[i];
		nfib += fib[i];
	}
	assert_true(nmix > 4096 / 2);
	assert_true(nfib > 4096 * 3 / 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values),
		cmocka_unit_test(test_spread),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
