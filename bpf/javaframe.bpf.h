/* SPDX-License-Identifier: GPL-2.0 */
/*
 * javaframe.bpf.h - the allocating Java frame of a JavaThread, read from its
 * frame anchor (_last_Java_sp/pc/fp, set whenever Java code calls into the
 * VM). Shared by alloc.bpf.c and sites.bpf.c; user space fills the targ_*
 * offsets and ranges from VMStructs (user/jstack/jframes.c) before load.
 */
#ifndef MEMTRACE_JAVAFRAME_BPF_H
#define MEMTRACE_JAVAFRAME_BPF_H

/* JavaThread frame anchor, from VMStructs; 0 = not known */
const volatile __u32 targ_anchor_sp = 0;  /* JavaThread::_anchor + _last_Java_sp */
const volatile __u32 targ_anchor_pc = 0;  /* ... + _last_Java_pc */
const volatile __u32 targ_anchor_fp = 0;  /* ... + _last_Java_fp */
const volatile __u64 targ_interp_lo = 0;  /* the interpreter's code */
const volatile __u64 targ_interp_hi = 0;
const volatile __u64 targ_cc_lo = 0;      /* the code cache */
const volatile __u64 targ_cc_hi = 0;

#define STUB_SCAN_WORDS 32

/*
 * The stub's words, per CPU: not on the stack, where they were 256 of a
 * program's 512 bytes - a kernel whose verifier counts a bpf_loop()
 * callback's stack on top of its caller's (6.18.44: "combined stack size
 * of 2 calls is 592. Too large") refused alloc's and sites' programs, whose
 * callbacks (the TLAB parse, the stack walk) run beneath them.
 */
struct jf_words {
	__u64 w[STUB_SCAN_WORDS];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct jf_words);
} jf_scratch SEC(".maps");

/*
 * The allocating Java frame of @thread (a JavaThread*): *@pc, and *@method
 * (its Method*) if the frame is interpreted. Both stay 0 when unknown.
 */
static __always_inline void java_frame(__u64 thread, __u64 *java_pc, __u64 *method)
{
	__u64 sp = 0, pc = 0, fp = 0;

	if (!thread || !targ_anchor_pc)
		return;
	if (bpf_probe_read_user(&sp, sizeof(sp), (void *)(thread + targ_anchor_sp)) || !sp)
		return;
	bpf_probe_read_user(&pc, sizeof(pc), (void *)(thread + targ_anchor_pc));
	if (!pc) /* not recorded: the return address just below the last Java sp */
		bpf_probe_read_user(&pc, sizeof(pc), (void *)(sp - 8));
	*java_pc = pc;
	if (pc >= targ_interp_lo && pc < targ_interp_hi) {
		if (!bpf_probe_read_user(&fp, sizeof(fp), (void *)(thread + targ_anchor_fp)) && fp)
			bpf_probe_read_user(method, sizeof(*method), (void *)(fp - 24));
		return;
	}
	/*
	 * Compiled code reaches the VM through a runtime stub (C2's
	 * _new_array_Java, C1's new_instance stub), which sets the anchor to
	 * its own frame. The compiled caller's return address is the first
	 * word on the stub's stack that points into the code cache (the rest
	 * are saved registers, stack addresses, metadata).
	 */
	if (targ_cc_hi && pc >= targ_cc_lo && pc < targ_cc_hi) {
		__u32 zero = 0;
		struct jf_words *b = bpf_map_lookup_elem(&jf_scratch, &zero);

		if (!b || bpf_probe_read_user(b->w, sizeof(b->w), (void *)sp))
			return;
		for (int i = 0; i < STUB_SCAN_WORDS; i++) {
			__u64 x = b->w[i];

			if (x >= targ_cc_lo && x < targ_cc_hi &&
			    !(x >= targ_interp_lo && x < targ_interp_hi)) {
				*java_pc = x;
				break;
			}
		}
	}
}

#endif
