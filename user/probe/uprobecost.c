// SPDX-License-Identifier: GPL-2.0
/* uprobecost.c - the cost of one uprobe hit, measured; see uprobecost.h. */
#include <errno.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "probe/uprobecost.h"
#include "lib/util.h"

/*
 * uprobecost_target, in assembly so that it begins as the probes it stands
 * for do: AllocTracer::send_allocation_in_new_tlab and _outside_tlab start
 * with `push %rbp` in the libjvm of JDK 17 and 25, an instruction the kernel
 * emulates at a uprobe; one it cannot emulate (gcc's `lea` of a leaf
 * function) is single-stepped out of line, at ten times the cost.
 */
__asm__(".text\n"
	".globl uprobecost_target\n"
	".type uprobecost_target, @function\n"
	"uprobecost_target:\n"
	"	push %rbp\n"
	"	mov %rsp, %rbp\n"
	"	lea 1(%rdi), %eax\n"
	"	pop %rbp\n"
	"	ret\n"
	".size uprobecost_target, .-uprobecost_target\n");

/* ns per call of @calls calls of the target, the fastest of 3 rounds. */
static double per_call(int calls)
{
	double best = 0;

	for (int r = 0; r < 3; r++) {
		uint64_t t0 = mono_ns();
		int x = 0;

		for (int i = 0; i < calls; i++)
			x = uprobecost_target(x);
		__asm__ volatile("" : : "r"(x));
		double ns = (double)(mono_ns() - t0) / calls;

		if (!r || ns < best)
			best = ns;
	}
	return best;
}

int uprobecost_measure(struct bpf_program *noop, int calls, double *ns)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = "uprobecost_target");
	struct bpf_link *l;
	double base, probed;

	base = per_call(calls);
	l = bpf_program__attach_uprobe_opts(noop, getpid(), "/proc/self/exe", 0, &o);
	if (!l)
		return -errno;
	probed = per_call(calls);
	bpf_link__destroy(l);
	*ns = probed > base ? probed - base : 0;
	return *ns > 0 ? 0 : -EINVAL;
}
