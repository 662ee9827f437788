// SPDX-License-Identifier: GPL-2.0
/* test_bpfutil - a verifier's refusal read out of libbpf's message: the
 * program and the reason, as libbpf 1.1 prints them (the stack refusal stop
 * 54's kernel gave, a plain-number read, a log that is only its tally, no
 * log at all), and the reason cut to the room given. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "probe/bpfutil.h"

static void test_stack_refusal(void **state)
{
	/* as this VM's 6.18.44 kernel refused alloc's program at stop 54 */
	const char *msg =
		"libbpf: prog 'handle_alloc': -- BEGIN PROG LOAD LOG --\n"
		"combined stack size of 2 calls is 592. Too large\n"
		"verification time 1021 usec\n"
		"stack depth 464+128\n"
		"processed 2208 insns (limit 1000000) max_states_per_insn 4 total_states 160 "
		"peak_states 160 mark_read 31\n"
		"-- END PROG LOAD LOG --\n";
	char prog[64], why[128];

	(void)state;
	assert_int_equal(bpfutil_refusal_parse(msg, prog, sizeof(prog), why, sizeof(why)), 0);
	assert_string_equal(prog, "handle_alloc");
	/* the reason: the last line but the tally's (with BPF_LOG_STATS too) */
	assert_string_equal(why, "combined stack size of 2 calls is 592. Too large");
}

static void test_access_refusal(void **state)
{
	const char *msg =
		"libbpf: prog 'handle_gc_begin': -- BEGIN PROG LOAD LOG --\n"
		"0: R1=ctx() R10=fp0\n"
		"; e->cause = ... @ gc.bpf.c:70\n"
		"21: (61) r1 = *(u32 *)(r0 +0)\n"
		"R0 invalid mem access 'scalar'\n"
		"processed 21 insns (limit 1000000) max_states_per_insn 0 total_states 1 "
		"peak_states 1 mark_read 1\n"
		"-- END PROG LOAD LOG --\n";
	char prog[64], why[16];

	(void)state;
	assert_int_equal(bpfutil_refusal_parse(msg, prog, sizeof(prog), why, sizeof(why)), 0);
	assert_string_equal(prog, "handle_gc_begin");
	assert_string_equal(why, "R0 invalid mem "); /* cut to the room (15 bytes) */
}

static void test_no_log(void **state)
{
	char prog[64] = "x", why[64] = "y";

	(void)state;
	assert_int_equal(bpfutil_refusal_parse("libbpf: prog 'p': BPF program load failed: "
					       "Permission denied\n", prog, sizeof(prog), why,
					       sizeof(why)), -ENOENT);
	/* a log that is only its tally says no reason */
	assert_int_equal(bpfutil_refusal_parse("libbpf: prog 'p': -- BEGIN PROG LOAD LOG --\n"
					       "processed 1 insns (limit 1000000)\n"
					       "-- END PROG LOAD LOG --\n", prog, sizeof(prog), why,
					       sizeof(why)), -ENOENT);
	/* begun, never ended: not a log */
	assert_int_equal(bpfutil_refusal_parse("prog 'p': -- BEGIN PROG LOAD LOG --\nR0 !\n",
					       prog, sizeof(prog), why, sizeof(why)), -ENOENT);
	assert_string_equal(why, "y");
}

static void test_no_name(void **state)
{
	char prog[64] = "x", why[64];

	(void)state;
	assert_int_equal(bpfutil_refusal_parse("-- BEGIN PROG LOAD LOG --\nback-edge\n"
					       "-- END PROG LOAD LOG --\n", prog, sizeof(prog), why,
					       sizeof(why)), 0);
	assert_string_equal(prog, "");
	assert_string_equal(why, "back-edge");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stack_refusal),
		cmocka_unit_test(test_access_refusal),
		cmocka_unit_test(test_no_log),
		cmocka_unit_test(test_no_name),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
