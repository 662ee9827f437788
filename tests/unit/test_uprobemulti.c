// SPDX-License-Identifier: GPL-2.0
/* test_uprobemulti - file offsets of our own code from /proc/self/maps
 * (checked against the ELF's symbol table), errors for a bad path and a
 * bad program, and on a kernel that has uprobe_multi with the privileges
 * for it (6.6+, root: as make check runs here), a real attach and detach,
 * and one link on two functions of ours, each with its cookie (what
 * usdt_attach does with a probe's sites): a program stores the cookie it
 * is given, and each call finds its own. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <sys/utsname.h>
#include <cmocka.h>

#include "jvm/elfsym.h"
#include "probe/uprobecost.h"
#include "probe/uprobemulti.h"

static void test_self_offset(void **state)
{
	struct mt_elf *e = elfsym_open("/proc/self/exe");
	uint64_t off = 0, addr = 0, foff = 0;

	(void)state;
	assert_non_null(e);
	assert_int_equal(uprobemulti_self_offset((uint64_t)(uintptr_t)uprobecost_target,
						 &off), 0);
	assert_int_equal(elfsym_lookup(e, "uprobecost_target", &addr, NULL), 0);
	assert_int_equal(elfsym_vaddr_to_offset(e, addr, &foff), 0);
	assert_int_equal(off, foff);
	/* not an address of our code */
	assert_int_equal(uprobemulti_self_offset(8, &off), -ENOENT);
	elfsym_free(e);
}

static void test_errors(void **state)
{
	uint64_t off = 0;

	(void)state;
	assert_true(uprobemulti_attach(-1, "/proc/self/exe", &off, 1, getpid()) < 0);
	assert_true(uprobemulti_attach(-1, "/nonexistent", &off, 1, getpid()) < 0);
}

static void test_supported(void **state)
{
	struct utsname u;
	int major = 0, minor = 0;

	(void)state;
	uname(&u);
	sscanf(u.release, "%d.%d", &major, &minor);
	if (geteuid() || major < 6 || (major == 6 && minor < 6)) {
		skip(); /* unprivileged, or a kernel before uprobe_multi */
		return;
	}
	/* 6.6 and later as root: it must work, and the answer must stay */
	assert_true(uprobemulti_supported());
	assert_true(uprobemulti_supported());
}

/* a second function of ours to probe */
__attribute__((noinline)) int probe_here(int x);
__attribute__((noinline)) int probe_here(int x)
{
	__asm__ volatile("" : "+r"(x));
	return x * 2;
}

/* "map[0] = bpf_get_attach_cookie(ctx); return 0" for uprobe_multi. */
static int cookie_prog(int map_fd)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_get_attach_cookie },
		{ .code = BPF_STX | BPF_MEM | BPF_DW, .dst_reg = BPF_REG_10, .src_reg = BPF_REG_0,
		  .off = -8 },
		{ .code = BPF_ST | BPF_MEM | BPF_W, .dst_reg = BPF_REG_10, .off = -12, .imm = 0 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_1,
		  .src_reg = BPF_PSEUDO_MAP_FD, .imm = map_fd },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -12 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_3, .src_reg = BPF_REG_10 },
		{ .code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_3, .imm = -8 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4, .imm = 0 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_update_elem },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = (enum bpf_attach_type)UPROBEMULTI_ATTACH_TYPE);

	return bpf_prog_load(BPF_PROG_TYPE_KPROBE, "mt_um_cookie", "GPL", insns,
			     sizeof(insns) / sizeof(insns[0]), &o);
}

static void test_cookies(void **state)
{
	uint64_t off[2], cookies[2] = { 0x5eed0001, 0x5eed0002 }, got = 0;
	uint32_t key = 0;
	int map, prog, link;

	(void)state;
	if (!uprobemulti_supported()) {
		skip(); /* unprivileged, or a kernel before uprobe_multi */
		return;
	}
	map = bpf_map_create(BPF_MAP_TYPE_ARRAY, "mt_um_ck", 4, 8, 1, NULL);
	assert_true(map >= 0);
	prog = cookie_prog(map);
	assert_true(prog >= 0);
	assert_int_equal(uprobemulti_self_offset((uint64_t)(uintptr_t)uprobecost_target, &off[0]), 0);
	assert_int_equal(uprobemulti_self_offset((uint64_t)(uintptr_t)probe_here, &off[1]), 0);
	link = uprobemulti_attach_cookies(prog, "/proc/self/exe", off, cookies, 2, getpid());
	assert_true(link >= 0);
	assert_int_equal(probe_here(3), 6);
	assert_int_equal(bpf_map_lookup_elem(map, &key, &got), 0);
	assert_int_equal(got, cookies[1]);
	assert_int_equal(uprobecost_target(3), 4);
	assert_int_equal(bpf_map_lookup_elem(map, &key, &got), 0);
	assert_int_equal(got, cookies[0]);
	close(link);
	/* detached: a call changes nothing */
	got = 0;
	assert_int_equal(bpf_map_update_elem(map, &key, &got, BPF_ANY), 0);
	assert_int_equal(probe_here(4), 8);
	assert_int_equal(bpf_map_lookup_elem(map, &key, &got), 0);
	assert_int_equal(got, 0);
	close(prog);
	close(map);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_self_offset),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_supported),
		cmocka_unit_test(test_cookies),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
