/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jstack.bpf.h - the HotSpot stack walker: whole Java stacks from the frame
 * anchor of a JavaThread that is in the VM, on a JVM without frame pointers.
 * The frame layouts and the walk are described in include/memtrace/jstack.h;
 * every offset comes from user space (targ_jw, from VMStructs or frame_x86.hpp
 * constants, see user/jstack/jwalk.c) before load. targ_jw.nheaps == 0 turns the
 * walker off.
 *
 * Cost: every bpf_probe_read_user is about 100 ns here (bench/alloc_stacks_cost.sh),
 * so reads are few: the anchor is one read; an interpreted frame is one read
 * of 11 words; a compiled frame is one read of the two words below the
 * caller's sp once its pc is in the per-CPU pc cache (CodeBlob and frame
 * size), else also 1-2 segment-map reads (more for huge blobs), one of the
 * block header, one of the frame size and one of the nmethod's Method*.
 *
 * The pc cache is valid while no code is freed: user space attaches
 * handle_code_unload() to hotspot:compiled__method__unload, which the JVM
 * fires before an nmethod's memory can be freed; each hit bumps code_gen and
 * so empties the cache. Entries are used only once user space has attached
 * it (cache_on). Other blobs (runtime stubs, adapters, vtable stubs) are
 * never freed in a running JVM.
 */
#ifndef MEMTRACE_JSTACK_BPF_H
#define MEMTRACE_JSTACK_BPF_H

#include "memtrace/jstack.h"

const volatile struct mt_jwalk_layout targ_jw = {};
/* Frames a walk keeps at most (1..MT_JSTACK_MAX_DEPTH); deeper is cut,
 * MT_JSTOP_DEPTH. User space sets it with the `jstacks` map's value size
 * (MT_JSTACK_BYTES of it: jstack/jstackstore.h). */
const volatile __u32 targ_jdepth = MT_JSTACK_DEFAULT_DEPTH;

#define JW_MAX_HOPS 64      /* segment map hops per lookup: blobs up to ~1 MiB at 64 B segments */
#define JW_EXTRA_STEPS 16   /* loop steps beyond the frames: entry frames */
#define JW_MAX_FRAME_WORDS (1 << 16)
#define JW_BLOB_MIN 4096    /* jw_find_blob(): below, a stop reason, not a blob */
#define JW_CACHE_SIZE 4096  /* pc cache entries per CPU (power of two) */

__u32 code_gen = 0;  /* bumped on every compiled__method__unload */
__u8 cache_on = 0;   /* set by user space once that probe is attached */

struct jw_cent {
	__u64 pc;
	__u64 blob;
	__u64 method;  /* the word at blob + nm_method */
	__s32 fs;
	__u32 gen;
	__u32 nm;      /* jstack_leaf: 0 not looked at, 1 an nmethod, 2 a stub */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, JW_CACHE_SIZE);
	__type(key, __u32);
	__type(value, struct jw_cent);
} jw_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mt_jstack);
} jstack_scratch SEC(".maps");

/* Distinct stacks, keyed by a 64-bit hash of their frames. A map that grows
 * as it fills by default; alloc, park and record make it a small
 * preallocated one that user space drains (user/jstack/jstackstore.h), its
 * values MT_JSTACK_BYTES(targ_jdepth): the first bytes of a struct
 * mt_jstack. Sizes, not a BTF type: the value size is set before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MT_JSTACK_MAX_KEYS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(key_size, sizeof(__u64));
	__uint(value_size, sizeof(struct mt_jstack));
} jstacks SEC(".maps");

/* Walks by how they ended (enum mt_jstack_stop). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_JSTOP_NSTOPS);
	__type(key, __u32);
	__type(value, __u64);
} jstack_stops SEC(".maps");

MT_DEFINE_DROPS(jstack_drops); /* stack map full: the sample has no Java stack */

struct jw_state {
	__u64 sp, fp, pc;
	__u64 hash;
	__u32 depth;
	__u32 stop;
	__u32 gen;      /* code_gen when the walk began; ~0: cache not used */
	__u32 leaf;     /* jstack_leaf: stop at the first Java frame */
	struct mt_jstack *st;
};

static __always_inline void jw_count_stop(__u32 why)
{
	__u64 *n = bpf_map_lookup_elem(&jstack_stops, &why);

	if (n)
		*n += 1;
}

static __always_inline __u64 jw_mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x100000001b3ull;
	return h ^ (h >> 29);
}

/* Start from the anchor at @fa (a JavaFrameAnchor). 0, or a stop reason. */
static __always_inline __u32 jw_anchor(struct jw_state *s, __u64 fa)
{
	__u64 w[4] = {}, sp, pc, fp;

	/* the three fields are the anchor's three words (checked by user space) */
	if (bpf_probe_read_user(w, 3 * sizeof(w[0]), (void *)fa))
		return MT_JSTOP_READ;
	sp = w[(targ_jw.fa_sp >> 3) & 3];
	pc = w[(targ_jw.fa_pc >> 3) & 3];
	fp = w[(targ_jw.fa_fp >> 3) & 3];
	if (!sp)
		return MT_JSTOP_NO_ANCHOR;
	if (!pc && bpf_probe_read_user(&pc, sizeof(pc), (void *)(sp - 8)))
		return MT_JSTOP_READ; /* not recorded: the return address below the sp */
	s->sp = sp;
	s->pc = pc;
	s->fp = fp;
	return 0;
}

static __always_inline int jw_emit(struct jw_state *s, __u64 a, __u64 b, __u64 m)
{
	__u32 d = s->depth;

	if (d >= targ_jdepth || d >= MT_JSTACK_MAX_DEPTH) {
		s->stop = MT_JSTOP_DEPTH;
		return 1;
	}
	s->st->f[d & (MT_JSTACK_MAX_DEPTH - 1)].a = a;
	s->st->f[d & (MT_JSTACK_MAX_DEPTH - 1)].b = b;
	s->st->f[d & (MT_JSTACK_MAX_DEPTH - 1)].m = m;
	s->depth = d + 1;
	s->hash = jw_mix(jw_mix(jw_mix(s->hash, a), b), m);
	return 0;
}

/*
 * The CodeBlob holding @pc, through its CodeHeap's segment map, or why there
 * is none (a stop reason, below JW_BLOB_MIN).
 *
 * A global function: the verifier checks it once, apart from its callers,
 * with @pc unknown. Inlined into jw_step it was checked again for each
 * state of the walk that reached it, its 64 hops unrolled each time: ~570 k
 * of the 625 k instructions the verifier went through for a program with
 * the walker (JDK 25), 1.2-1.4 s of the kernel's CPU at every load of it
 * (kernel 6.18; JDK 17's two programs 4.9 s).
 */
__noinline __u64 jw_find_blob(__u64 pc)
{
	__u64 lo = 0, map = 0, idx, block;
	__u32 log2 = 0;
	__u8 b = 0, used = 0;
	int h, i;

	for (h = 0; h < MT_JSTACK_MAX_HEAPS; h++) {
		if (h < targ_jw.nheaps && pc >= targ_jw.heap_lo[h] && pc < targ_jw.heap_hi[h]) {
			lo = targ_jw.heap_lo[h];
			map = targ_jw.heap_segmap[h];
			log2 = targ_jw.heap_log2seg[h] & 31;
			break;
		}
	}
	if (!lo)
		return MT_JSTOP_PC;
	idx = (pc - lo) >> log2;
	for (i = 0; i < JW_MAX_HOPS; i++) {
		if (bpf_probe_read_user(&b, 1, (void *)(map + idx)))
			return MT_JSTOP_READ;
		if (b == 0xff || b > idx) /* free segment, or a broken chain */
			return MT_JSTOP_NO_BLOB;
		if (!b)
			break;
		idx -= b;
	}
	if (b)
		return MT_JSTOP_NO_BLOB;
	block = lo + (idx << log2);
	if (bpf_probe_read_user(&used, 1, (void *)(block + targ_jw.block_used)) || !used)
		return MT_JSTOP_NO_BLOB;
	return block + targ_jw.block_size;
}

/* Is the CodeBlob at @blob an nmethod (compiled Java, or a native method's
 * wrapper)? 1 yes, 2 no (a stub or adapter): its CodeBlobKind on JDK 21+,
 * its name before ("nmethod", "native nmethod"). A global function, as
 * jw_find_blob(): the name's comparisons, inlined, were checked for each
 * state of the walk that reached them (JDK 17: 103 k of a program's
 * instructions with them inlined, 36 k without). */
__noinline __u8 jw_is_nmethod(__u64 blob)
{
	__u64 name = 0;
	char s[16] = {};
	__u8 k = 0;

	if (targ_jw.blob_kind) {
		if (bpf_probe_read_user(&k, 1, (void *)(blob + targ_jw.blob_kind)))
			return 2;
		return k == (__u8)targ_jw.kind_nmethod ? 1 : 2;
	}
	if (bpf_probe_read_user(&name, sizeof(name), (void *)(blob + targ_jw.blob_name)) ||
	    !name || bpf_probe_read_user(s, sizeof(s), (void *)name))
		return 2;
	if (s[0] == 'n' && s[1] == 'm' && s[2] == 'e' && s[3] == 't' && s[4] == 'h' &&
	    s[5] == 'o' && s[6] == 'd' && !s[7])
		return 1;
	if (s[0] == 'n' && s[1] == 'a' && s[2] == 't' && s[3] == 'i' && s[4] == 'v' &&
	    s[5] == 'e' && s[6] == ' ' && s[7] == 'n' && s[8] == 'm' && s[9] == 'e' &&
	    s[10] == 't' && s[11] == 'h' && s[12] == 'o' && s[13] == 'd' && !s[14])
		return 1;
	return 2;
}

/* One frame: emit it and move to its caller. 0 = go on, 1 = stop (s->stop set). */
static long jw_step(__u32 i, void *ctx)
{
	struct jw_state *s = ctx;
	__u64 pc = s->pc, sp = s->sp, fp = s->fp, nsp;
	__u32 why;

	if (pc == targ_jw.call_stub_ret) {
		/* entry frame: fp is the call stub's; the wrapper keeps the anchor
		 * of the Java frames that called into the VM, if any */
		__u64 wrapper = 0;

		if (!fp || bpf_probe_read_user(&wrapper, sizeof(wrapper),
					       (void *)(fp + (__s64)targ_jw.entry_wrapper)) || !wrapper) {
			s->stop = MT_JSTOP_READ;
			return 1;
		}
		why = jw_anchor(s, wrapper + targ_jw.wrapper_anchor);
		if (why) {
			s->stop = why == MT_JSTOP_NO_ANCHOR ? MT_JSTOP_END : why;
			return 1;
		}
		if (s->sp <= sp) {
			s->stop = MT_JSTOP_SP;
			return 1;
		}
		return 0;
	}
	if (pc >= targ_jw.interp_lo && pc < targ_jw.interp_hi) {
		/* words fp + if_bcp .. fp + 1 (if_bcp is the lowest slot read) */
		__u64 w[11] = {};
		__s64 base = targ_jw.if_bcp;
		__u32 im = (__u32)(targ_jw.if_method - targ_jw.if_bcp) >> 3;
		__u32 is = (__u32)(targ_jw.if_sender_sp - targ_jw.if_bcp) >> 3;
		__u32 il = (__u32)(-targ_jw.if_bcp) >> 3;

		if (!fp || bpf_probe_read_user(w, sizeof(w), (void *)(fp + base))) {
			s->stop = MT_JSTOP_READ;
			return 1;
		}
		if (im > 10 || is > 10 || il > 9) {
			s->stop = MT_JSTOP_READ;
			return 1;
		}
		if (jw_emit(s, w[im], w[0], 0))
			return 1;
		if (s->leaf) {
			s->stop = MT_JSTOP_END;
			return 1;
		}
		nsp = w[is];           /* the caller's unextended sp */
		s->fp = w[il];         /* saved rbp */
		s->pc = w[il + 1];     /* return address */
		if (nsp <= sp || fp + 16 <= sp) {
			s->stop = MT_JSTOP_SP;
			return 1;
		}
		s->sp = nsp;
		return 0;
	}
	{
		__u32 slot = (__u32)(pc ^ (pc >> 13)) & (JW_CACHE_SIZE - 1);
		struct jw_cent *e = bpf_map_lookup_elem(&jw_cache, &slot);
		__u64 blob, ret[2], method = 0;
		__s32 fs = 0;
		__u8 nm = 0;

		if (e && e->pc == pc && e->gen == s->gen) {
			blob = e->blob;
			fs = e->fs;
			method = e->method;
			nm = e->nm;
		} else {
			blob = jw_find_blob(pc);
			if (blob < JW_BLOB_MIN) {
				s->stop = blob;
				return 1;
			}
			if (bpf_probe_read_user(&fs, sizeof(fs),
						(void *)(blob + targ_jw.blob_frame_size))) {
				s->stop = MT_JSTOP_READ;
				return 1;
			}
			if (fs < 2 || fs > JW_MAX_FRAME_WORDS) {
				s->stop = MT_JSTOP_FRAME_SIZE;
				return 1;
			}
			/* meaningful for nmethods only; user space tells them apart */
			bpf_probe_read_user(&method, sizeof(method),
					    (void *)(blob + targ_jw.nm_method));
			if (e && s->gen != ~0u) {
				e->pc = pc;
				e->blob = blob;
				e->method = method;
				e->fs = fs;
				e->gen = s->gen;
				e->nm = 0;
			}
		}
		if (jw_emit(s, pc, blob | MT_JFRAME_COMPILED, method))
			return 1;
		if (s->leaf) {
			if (!nm) {
				nm = jw_is_nmethod(blob);
				if (e && e->pc == pc && s->gen != ~0u)
					e->nm = nm;
			}
			if (nm == 1) {
				s->stop = MT_JSTOP_END;
				return 1;
			}
		}
		nsp = sp + (__u64)fs * 8;
		if (bpf_probe_read_user(ret, sizeof(ret), (void *)(nsp - 16))) {
			s->stop = MT_JSTOP_READ;
			return 1;
		}
		s->fp = ret[0];
		s->pc = ret[1];
		s->sp = nsp;
		return 0;
	}
}

/*
 * jstack_walk - walk the Java stack of @thread (a JavaThread*), store it in
 * `jstacks` and return its key, or 0 when there is none (the stop reason is
 * counted either way; a walk cut short still gives the frames it found).
 */
static __always_inline __u64 jstack_walk(__u64 thread)
{
	struct jw_state s = {};
	__u32 zero = 0, why;

	if (!targ_jw.nheaps || !thread)
		return 0;
	s.st = bpf_map_lookup_elem(&jstack_scratch, &zero);
	if (!s.st)
		return 0;
	s.hash = 0xcbf29ce484222325ull;
	s.gen = cache_on ? *(volatile __u32 *)&code_gen : ~0u;
	why = jw_anchor(&s, thread + targ_jw.thread_anchor);
	if (why) {
		jw_count_stop(why);
		return 0;
	}
	s.stop = MT_JSTOP_LOOP;
	bpf_loop(targ_jdepth + JW_EXTRA_STEPS, jw_step, &s, 0);
	jw_count_stop(s.stop);
	if (!s.depth)
		return 0;
	s.st->depth = s.depth;
	s.st->stop = s.stop;
	s.hash = jw_mix(jw_mix(s.hash, s.depth), s.stop);
	if (!s.hash)
		s.hash = 1;
	if (!bpf_map_lookup_elem(&jstacks, &s.hash) &&
	    bpf_map_update_elem(&jstacks, &s.hash, s.st, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&jstacks, &s.hash)) {
		mt_count_drop(&jstack_drops);
		return 0;
	}
	return s.hash;
}

/* Frames jstack_leaf() looks at, at most: the allocating frame is the first,
 * or the one above a runtime stub (and an entry frame). */
#define JW_LEAF_STEPS 4

/*
 * jstack_leaf - the innermost Java frame of @thread (a JavaThread*): the
 * first interpreted frame or nmethod frame from the anchor, runtime stubs and
 * adapters skipped, into *@out (as in struct mt_jstack). Returns 0, or why
 * none was found (the stop reasons of a walk; MT_JSTOP_DEPTH: not within
 * JW_LEAF_STEPS frames). Nothing is counted or stored.
 */
static __always_inline __u32 jstack_leaf(__u64 thread, struct mt_jframe *out)
{
	struct jw_state s = {};
	__u32 zero = 0, why;

	if (!targ_jw.nheaps || !thread)
		return MT_JSTOP_NO_ANCHOR;
	s.st = bpf_map_lookup_elem(&jstack_scratch, &zero);
	if (!s.st)
		return MT_JSTOP_READ;
	s.leaf = 1;
	s.gen = cache_on ? *(volatile __u32 *)&code_gen : ~0u;
	why = jw_anchor(&s, thread + targ_jw.thread_anchor);
	if (why)
		return why;
	s.stop = MT_JSTOP_DEPTH;
	bpf_loop(JW_LEAF_STEPS, jw_step, &s, 0);
	if (s.stop != MT_JSTOP_END || !s.depth)
		return s.stop == MT_JSTOP_END ? MT_JSTOP_READ : s.stop;
	*out = s.st->f[(s.depth - 1) & (MT_JSTACK_MAX_DEPTH - 1)];
	return 0;
}

#endif
