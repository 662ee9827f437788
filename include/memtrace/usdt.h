/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usdt.h - memtrace's own USDT argument specs, shared by bpf/usdt_args.bpf.h
 * and user/probe/usdtspec.c.
 *
 * Why not libbpf's bpf_usdt_arg(): it looks the spec up in a map and reads
 * each register with bpf_probe_read_kernel(), per argument: measured here,
 * ~90 ns per argument, 700 ns for HotSpot's eight-argument pool probe, on
 * top of an ~900 ns trap. memtrace attaches a plain uprobe at each probe site
 * with a BPF cookie naming its spec, and the program reads registers straight
 * from pt_regs at constant offsets (a switch), so an argument costs a few ns.
 */
#ifndef MEMTRACE_USDT_H
#define MEMTRACE_USDT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define MT_USDT_MAX_ARGS 8
#define MT_USDT_MAX_SPECS 64 /* probe sites one BPF object can hold */

enum mt_usdt_arg_kind {
	MT_ARG_NONE = 0,
	MT_ARG_CONST = 1,     /* "$5": the value is val */
	MT_ARG_REG = 2,       /* "%rdi": the register */
	MT_ARG_REG_DEREF = 3, /* "-16(%rbp)": user memory at register + val */
};

/* x86-64 registers, in the order of enum mt_usdt_reg. */
enum mt_usdt_reg {
	MT_REG_AX, MT_REG_BX, MT_REG_CX, MT_REG_DX, MT_REG_SI, MT_REG_DI, MT_REG_BP, MT_REG_SP,
	MT_REG_R8, MT_REG_R9, MT_REG_R10, MT_REG_R11, MT_REG_R12, MT_REG_R13, MT_REG_R14,
	MT_REG_R15, MT_REG_IP, MT_REG_COUNT,
};

struct mt_usdt_arg {
	__u8 kind;      /* enum mt_usdt_arg_kind */
	__u8 reg;       /* enum mt_usdt_reg */
	__u8 size;      /* 1, 2, 4 or 8 bytes */
	__u8 is_signed; /* sign-extend from size */
	__u32 pad;
	__s64 val;      /* constant, or displacement for REG_DEREF */
};

struct mt_usdt_spec {
	__u32 nargs;
	__u32 pad;
	struct mt_usdt_arg args[MT_USDT_MAX_ARGS];
};

#endif
