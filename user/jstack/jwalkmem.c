// SPDX-License-Identifier: GPL-2.0
/* jwalkmem.c - a waiting thread's Java stack read from outside; see jwalkmem.h. */
#include <errno.h>
#include <string.h>

#include "jstack/jwalkmem.h"
#include "jvm/vmstructs.h"

/* Segment map hops per blob lookup: the BPF walker's bound is 64 (blobs up to
 * ~1 MiB at 64-byte segments); here a loop costs nothing to the verifier. */
#define MAX_HOPS 4096
#define MAX_STEPS (MT_JSTACK_MAX_DEPTH + 16) /* frames + entry frames */
#define MAX_FRAME_WORDS (1 << 16)
/* What a step returns to go on to the caller's frame (MT_JSTOP_END is 0). */
#define GO_ON MT_JSTOP_NSTOPS

struct walk {
	const struct mt_vmstructs *vs;
	const struct mt_jwalk_layout *l;
	uint64_t sp, fp, pc;
	struct mt_jstack *st;
};

/* Start from the JavaFrameAnchor at @fa: 0, or a stop reason. */
static uint32_t anchor(struct walk *w, uint64_t fa)
{
	uint64_t a[4] = { 0 };

	/* the three fields are the anchor's three words (checked by jwalk_layout) */
	if (vmstructs_read(w->vs, fa, a, 3 * sizeof(a[0])))
		return MT_JSTOP_READ;
	w->sp = a[(w->l->fa_sp >> 3) & 3];
	w->pc = a[(w->l->fa_pc >> 3) & 3];
	w->fp = a[(w->l->fa_fp >> 3) & 3];
	if (!w->sp)
		return MT_JSTOP_NO_ANCHOR;
	/* no pc recorded: the return address below the sp */
	if (!w->pc && vmstructs_read_ptr(w->vs, w->sp - 8, &w->pc))
		return MT_JSTOP_READ;
	return 0;
}

/* Append a frame: 0, or 1 when the stack is full. */
static int emit(struct walk *w, uint64_t a, uint64_t b, uint64_t m)
{
	if (w->st->depth >= MT_JSTACK_MAX_DEPTH)
		return 1;
	w->st->f[w->st->depth++] = (struct mt_jframe){ a, b, m };
	return 0;
}

/* The CodeBlob holding @pc, through its CodeHeap's segment map; 0 and *@why if none. */
static uint64_t find_blob(struct walk *w, uint64_t pc, uint32_t *why)
{
	const struct mt_jwalk_layout *l = w->l;
	uint64_t lo = 0, map = 0, idx, block;
	uint32_t log2 = 0;
	uint8_t b = 0, used = 0;

	for (uint32_t h = 0; h < l->nheaps && h < MT_JSTACK_MAX_HEAPS; h++)
		if (pc >= l->heap_lo[h] && pc < l->heap_hi[h]) {
			lo = l->heap_lo[h];
			map = l->heap_segmap[h];
			log2 = l->heap_log2seg[h] & 31;
			break;
		}
	if (!lo) {
		*why = MT_JSTOP_PC;
		return 0;
	}
	idx = (pc - lo) >> log2;
	for (int i = 0; i < MAX_HOPS; i++) {
		if (vmstructs_read(w->vs, map + idx, &b, 1)) {
			*why = MT_JSTOP_READ;
			return 0;
		}
		if (b == 0xff || b > idx) { /* a free segment, or a broken chain */
			*why = MT_JSTOP_NO_BLOB;
			return 0;
		}
		if (!b)
			break;
		idx -= b;
	}
	block = lo + (idx << log2);
	if (b || vmstructs_read(w->vs, block + l->block_used, &used, 1) || !used) {
		*why = MT_JSTOP_NO_BLOB;
		return 0;
	}
	return block + l->block_size;
}

/* Each step returns GO_ON, or why the walk ends. */

/* An entry frame (the call stub's): go on below the VM call, if Java called it. */
static uint32_t step_entry(struct walk *w)
{
	uint64_t wrapper = 0, sp = w->sp;
	uint32_t why;

	if (!w->fp || vmstructs_read_ptr(w->vs, w->fp + (int64_t)w->l->entry_wrapper, &wrapper) ||
	    !wrapper)
		return MT_JSTOP_READ;
	why = anchor(w, wrapper + w->l->wrapper_anchor);
	if (why)
		return why == MT_JSTOP_NO_ANCHOR ? MT_JSTOP_END : why;
	return w->sp <= sp ? MT_JSTOP_SP : GO_ON;
}

/* An interpreted frame: its Method* and bcp, then its caller. */
static uint32_t step_interp(struct walk *w)
{
	const struct mt_jwalk_layout *l = w->l;
	uint64_t v[11] = { 0 }, sp = w->sp, fp = w->fp, nsp;
	uint32_t im = (uint32_t)(l->if_method - l->if_bcp) >> 3;
	uint32_t is = (uint32_t)(l->if_sender_sp - l->if_bcp) >> 3;
	uint32_t il = (uint32_t)(-l->if_bcp) >> 3;

	/* words fp + if_bcp .. fp + 1 (if_bcp is the lowest slot read) */
	if (!fp || im > 10 || is > 10 || il > 9 ||
	    vmstructs_read(w->vs, fp + (int64_t)l->if_bcp, v, sizeof(v)))
		return MT_JSTOP_READ;
	if (emit(w, v[im], v[0], 0))
		return MT_JSTOP_DEPTH;
	nsp = v[is];       /* the caller's unextended sp */
	w->fp = v[il];     /* saved rbp */
	w->pc = v[il + 1]; /* return address */
	if (nsp <= sp || fp + 16 <= sp)
		return MT_JSTOP_SP;
	w->sp = nsp;
	return GO_ON;
}

/* A frame in the code cache (compiled, a stub, an adapter): its blob, then its caller. */
static uint32_t step_compiled(struct walk *w)
{
	const struct mt_jwalk_layout *l = w->l;
	uint64_t blob, method = 0, ret[2], nsp;
	uint32_t why = 0;
	int32_t fs = 0;

	blob = find_blob(w, w->pc, &why);
	if (!blob)
		return why;
	if (vmstructs_read(w->vs, blob + l->blob_frame_size, &fs, sizeof(fs)))
		return MT_JSTOP_READ;
	if (fs < 2 || fs > MAX_FRAME_WORDS)
		return MT_JSTOP_FRAME_SIZE;
	/* meaningful for nmethods only; jstackname tells them apart */
	vmstructs_read_ptr(w->vs, blob + l->nm_method, &method);
	if (emit(w, w->pc, blob | MT_JFRAME_COMPILED, method))
		return MT_JSTOP_DEPTH;
	nsp = w->sp + (uint64_t)fs * 8;
	if (vmstructs_read(w->vs, nsp - 16, ret, sizeof(ret)))
		return MT_JSTOP_READ;
	w->fp = ret[0];
	w->pc = ret[1];
	w->sp = nsp;
	return GO_ON;
}

int jwalkmem_walk(const struct mt_vmstructs *vs, const struct mt_jwalk_layout *l, uint64_t thread,
		  struct mt_jstack *st)
{
	struct walk w = { .vs = vs, .l = l, .st = st };
	uint64_t fa[3] = { 0 }, again[3] = { 0 };
	uint32_t why;
	int i;

	st->depth = 0;
	st->stop = MT_JSTOP_NO_ANCHOR;
	if (!l->nheaps || !thread)
		return -ENOENT;
	if (vmstructs_read(vs, thread + l->thread_anchor, fa, sizeof(fa)))
		return -EFAULT;
	why = anchor(&w, thread + l->thread_anchor);
	if (why) {
		st->stop = why;
		return why == MT_JSTOP_NO_ANCHOR ? -ENOENT : -EFAULT;
	}
	why = MT_JSTOP_LOOP;
	for (i = 0; i < MAX_STEPS; i++) {
		if (w.pc == l->call_stub_ret)
			why = step_entry(&w);
		else if (w.pc >= l->interp_lo && w.pc < l->interp_hi)
			why = step_interp(&w);
		else
			why = step_compiled(&w);
		if (why != GO_ON)
			break;
	}
	st->stop = i == MAX_STEPS ? MT_JSTOP_LOOP : why;
	/* the same anchor after the walk: the thread still waits where it did */
	if (vmstructs_read(vs, thread + l->thread_anchor, again, sizeof(again)) ||
	    memcmp(fa, again, sizeof(fa)))
		return -EAGAIN;
	return 0;
}
