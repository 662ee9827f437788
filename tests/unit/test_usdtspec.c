/* test_usdtspec.c - USDT argument specs as GNU as writes them on x86-64. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "probe/usdtspec.h"

static void expect_arg(const char *tok, int kind, int reg, int size, int sign, int64_t val)
{
	struct mt_usdt_arg a;

	assert_int_equal(usdtspec_parse_arg(tok, &a), 0);
	assert_int_equal(a.kind, kind);
	if (kind != MT_ARG_CONST)
		assert_int_equal(a.reg, reg);
	assert_int_equal(a.size, size);
	assert_int_equal(a.is_signed, sign);
	if (kind != MT_ARG_REG)
		assert_int_equal(a.val, val);
}

static void test_args(void **state)
{
	expect_arg("8@%r14", MT_ARG_REG, MT_REG_R14, 8, 0, 0);
	expect_arg("1@%dil", MT_ARG_REG, MT_REG_DI, 1, 0, 0);
	expect_arg("-4@%eax", MT_ARG_REG, MT_REG_AX, 4, 1, 0);
	expect_arg("8@%rbx", MT_ARG_REG, MT_REG_BX, 8, 0, 0);
	expect_arg("4@%r8d", MT_ARG_REG, MT_REG_R8, 4, 0, 0);
	expect_arg("2@%r15w", MT_ARG_REG, MT_REG_R15, 2, 0, 0);
	expect_arg("1@$1", MT_ARG_CONST, 0, 1, 0, 1);
	expect_arg("-4@$-5", MT_ARG_CONST, 0, 4, 1, -5);
	expect_arg("8@-16(%rbp)", MT_ARG_REG_DEREF, MT_REG_BP, 8, 0, -16);
	expect_arg("8@(%rsp)", MT_ARG_REG_DEREF, MT_REG_SP, 8, 0, 0);
	expect_arg("-8@24(%rip)", MT_ARG_REG_DEREF, MT_REG_IP, 8, 1, 24);
}

static void test_bad_args(void **state)
{
	static const char *const bad[] = {
		"", "8", "@%rax", "3@%rax", "16@%rax", "8@%xmm0", "8@%r16", "8@$", "8@$x",
		"8@-16(%rbp", "8@-16(rbp)", "8@16(%rbp)x", "0@%rax", "8@%r8q",
	};
	struct mt_usdt_arg a;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_int_equal(usdtspec_parse_arg(bad[i], &a), -EINVAL);
}

/* HotSpot's real pool probe (JDK 17) and gc__begin with a constant (JDK 25). */
static void test_spec(void **state)
{
	struct mt_usdt_spec s;

	assert_int_equal(usdtspec_parse("8@%r14 8@%rbx 8@%r13 8@%rdi 8@%r8 8@%rax 8@%r9 8@%rdx", &s), 0);
	assert_int_equal(s.nargs, 8);
	assert_int_equal(s.args[0].reg, MT_REG_R14);
	assert_int_equal(s.args[7].reg, MT_REG_DX);
	assert_int_equal(usdtspec_parse("1@$1", &s), 0);
	assert_int_equal(s.nargs, 1);
	assert_int_equal(s.args[0].kind, MT_ARG_CONST);
	assert_int_equal(usdtspec_parse("", &s), 0);
	assert_int_equal(s.nargs, 0);
	assert_int_equal(usdtspec_parse("8@%rax 8@%rax 8@%rax 8@%rax 8@%rax 8@%rax 8@%rax 8@%rax 8@%rax", &s), -E2BIG);
	assert_int_equal(usdtspec_parse("8@%rax bogus", &s), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_args),
		cmocka_unit_test(test_bad_args),
		cmocka_unit_test(test_spec),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
