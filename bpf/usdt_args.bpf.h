/* SPDX-License-Identifier: GPL-2.0 */
/*
 * usdt_args.bpf.h - read USDT arguments with the specs user/probe/usdtspec.c
 * placed in the usdt_specs map, indexed by the attach cookie. See
 * include/memtrace/usdt.h for why memtrace does not use bpf_usdt_arg().
 */
#ifndef MEMTRACE_USDT_ARGS_BPF_H
#define MEMTRACE_USDT_ARGS_BPF_H

#include "memtrace/usdt.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MT_USDT_MAX_SPECS);
	__type(key, __u32);
	__type(value, struct mt_usdt_spec);
} usdt_specs SEC(".maps");

/*
 * The registers, copied once per hit with constant-offset loads from
 * pt_regs (the verifier forbids a computed offset into ctx, and clang merges
 * a switch of loads into exactly that), then indexed on the stack.
 */
struct mt_regs {
	__u64 r[MT_REG_COUNT];
};

static __always_inline void mt_regs_load(struct pt_regs *ctx, struct mt_regs *g)
{
	g->r[MT_REG_AX] = ctx->ax;
	g->r[MT_REG_BX] = ctx->bx;
	g->r[MT_REG_CX] = ctx->cx;
	g->r[MT_REG_DX] = ctx->dx;
	g->r[MT_REG_SI] = ctx->si;
	g->r[MT_REG_DI] = ctx->di;
	g->r[MT_REG_BP] = ctx->bp;
	g->r[MT_REG_SP] = ctx->sp;
	g->r[MT_REG_R8] = ctx->r8;
	g->r[MT_REG_R9] = ctx->r9;
	g->r[MT_REG_R10] = ctx->r10;
	g->r[MT_REG_R11] = ctx->r11;
	g->r[MT_REG_R12] = ctx->r12;
	g->r[MT_REG_R13] = ctx->r13;
	g->r[MT_REG_R14] = ctx->r14;
	g->r[MT_REG_R15] = ctx->r15;
	g->r[MT_REG_IP] = ctx->ip;
}

/*
 * The registers in a per-CPU slot instead of the program's stack (NULL: the
 * lookup failed), for programs that walk the Java stack beneath them: a
 * kernel whose verifier counts a bpf_loop() callback's stack on top of its
 * caller's (6.18.44: "combined stack size of 2 calls is 544. Too large")
 * refuses a program whose own 136 bytes of registers and the walker's
 * callback (jw_step(), 168) do not fit in 512 together.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mt_regs);
} mt_regs_slot SEC(".maps");

static __always_inline struct mt_regs *mt_regs_percpu(struct pt_regs *ctx)
{
	__u32 zero = 0;
	struct mt_regs *g = bpf_map_lookup_elem(&mt_regs_slot, &zero);

	if (g)
		mt_regs_load(ctx, g);
	return g;
}

/* The spec of the probe site that fired (NULL if none was placed). */
static __always_inline const struct mt_usdt_spec *mt_usdt_spec(struct pt_regs *ctx)
{
	__u32 id = (__u32)bpf_get_attach_cookie(ctx);

	return bpf_map_lookup_elem(&usdt_specs, &id);
}

/* Argument @i of the firing probe, sized and sign-extended per its spec. */
static __always_inline __u64 mt_usdt_arg(const struct mt_regs *g, const struct mt_usdt_spec *s,
					 int i)
{
	const struct mt_usdt_arg *a;
	__u64 v = 0;
	__u8 r;

	if (i >= MT_USDT_MAX_ARGS || i >= s->nargs)
		return 0;
	a = &s->args[i];
	r = a->reg;
	if (r >= MT_REG_COUNT)
		return 0;
	switch (a->kind) {
	case MT_ARG_CONST:
		return a->val;
	case MT_ARG_REG:
		v = g->r[r];
		break;
	case MT_ARG_REG_DEREF:
		if (bpf_probe_read_user(&v, sizeof(v), (void *)(g->r[r] + a->val)))
			return 0;
		break;
	default:
		return 0;
	}
	switch (a->size) {
	case 1: return a->is_signed ? (__u64)(__s64)(__s8)v : (__u8)v;
	case 2: return a->is_signed ? (__u64)(__s64)(__s16)v : (__u16)v;
	case 4: return a->is_signed ? (__u64)(__s64)(__s32)v : (__u32)v;
	default: return v;
	}
}

#endif
