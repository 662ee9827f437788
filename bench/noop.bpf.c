// SPDX-License-Identifier: GPL-2.0
/* noop.bpf.c - the bare trap: a USDT program that does nothing. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/usdt.bpf.h>

SEC("usdt")
int BPF_USDT(handle_noop)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
