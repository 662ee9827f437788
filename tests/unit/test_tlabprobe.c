// SPDX-License-Identifier: GPL-2.0
/* test_tlabprobe - a libjvm without AllocTracer symbols: -ENOENT, the missing
 * method named, nothing left attached. (Attaching for real needs a JVM and
 * BPF: the e2e cases alloc_*, record_alloc and leaks_rank do that.) */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "jvm/elfsym.h"
#include "jvm/proc.h"
#include "probe/tlabprobe.h"

static void test_stripped(void **state)
{
	struct mt_elf *e = elfsym_open("/proc/self/exe"); /* this test: no AllocTracer */
	struct bpf_link *links[2] = { (void *)1, (void *)1 };
	struct bpf_program *progs[2] = { NULL, NULL };
	struct mt_proc p = { .pid = 1 };
	const char *missing = NULL;

	assert_non_null(e);
	strcpy(p.libjvm, "/nonexistent/libjvm.so");
	strcpy(p.libjvm_host, "/nonexistent/libjvm.so");
	assert_int_equal(tlabprobe_attach(progs, e, &p, links, &missing), -ENOENT);
	assert_string_equal(missing, "send_allocation_in_new_tlab");
	assert_null(links[0]);
	assert_null(links[1]);
	elfsym_free(e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_stripped),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
