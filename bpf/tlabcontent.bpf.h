/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tlabcontent.bpf.h - class shares from the TLABs' contents, for
 * bpf/alloc.bpf.c; the why and the maps' meaning are in
 * include/memtrace/alloc.h ("Class shares from the TLABs' contents").
 *
 * Cost: the TLAB is read in 1 KiB chunks as the parse reaches them (one
 * bpf_probe_read_user each) and, per class met, a hash look-up of its layout
 * helper (a read of the Klass the first time; the objects after the first of
 * their class find it in the slice's own class table). Done once per kept
 * sample, at the thread's next refill; its time is in the duty cycle's
 * measure. The TLAB's start is cold by then: on javac (JDK 25, every sample
 * kept, kernel BPF statistics, bench/alloc_stacks_javac.sh) the two 4 KiB
 * reads of the whole slice this parse used to begin with cost ~18 us of the
 * program's 44-50 us a sample (26.5 us without them), the parse itself ~5 us;
 * read as reached, 43-45 us.
 */
#ifndef MEMTRACE_TLABCONTENT_BPF_H
#define MEMTRACE_TLABCONTENT_BPF_H

#include "memtrace/alloc.h"

const volatile struct mt_tlab_layout targ_tl = {};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, MT_ALLOC_MAX_TIDS);
	__type(key, __u64);                    /* JavaThread* */
	__type(value, struct mt_tlab_state);
} tlab_state SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u64);                    /* Klass* */
	__type(value, __s32);                  /* its _layout_helper */
} klass_lh SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, MT_ALLOC_MAX_KEYS);
	__type(key, struct mt_content_key);
	__type(value, struct mt_content_val);
} content SEC(".maps");

/* The parser's state lives in this per-CPU map value, not on the stack: the
 * verifier then treats the loop's carried values as unknown and does not
 * explore every offset the callback could be called with. */
struct tc_scratch {
	__u8 buf[MT_TLAB_SLICE + 64];
	__u64 klass[MT_TLAB_MAX_CLASSES];
	__u64 bytes[MT_TLAB_MAX_CLASSES];
	__s32 lh[MT_TLAB_MAX_CLASSES];  /* klass[j]'s layout helper */
	__u32 off;          /* the next object in buf */
	__u32 len;          /* bytes of the slice (buf holds the chunks in `have`) */
	__u32 have;         /* 1 KiB chunks of the slice read into buf, a bit each */
	__u64 start;        /* the TLAB's */
	__u64 size;         /* the TLAB's */
	__u64 parsed;       /* bytes of the objects counted */
	__u32 bad;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct tc_scratch);
} tc_scratch SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, MT_CONTENT_NSTATS);
	__type(key, __u32);
	__type(value, __u64);
} content_stats SEC(".maps");

MT_DEFINE_DROPS(content_drops); /* content map full: bytes not counted by content */

static __always_inline void tc_stat(__u32 which)
{
	__u64 *n = bpf_map_lookup_elem(&content_stats, &which);

	if (n)
		*n += 1;
}

/* a * b bytes^2 in KiB^2 (a weight of 4 GiB squared still fits) */
static __always_inline __u64 tc_kib2(__u64 a, __u64 b)
{
	return (a >> 10) * (b >> 10);
}

/* A draw (a kept TLAB, an object outside one) of weight @w: its W^2. */
static __always_inline void tc_draw(__u64 w)
{
	__u32 which = MT_CONTENT_W2;
	__u64 *n = bpf_map_lookup_elem(&content_stats, &which);

	if (n)
		*n += tc_kib2(w, w);
}

/* Add @bytes of a draw of weight @w to (@klass, @gen); a new key is
 * announced for its name. */
static __always_inline void tc_add(__u64 klass, __u32 gen, __u64 bytes, __u64 parsed, __u64 w)
{
	struct mt_content_key k = { .klass = klass, .gen = gen,
				    .tid = targ_key_tid ? (__u32)bpf_get_current_pid_tgid() : 0 };
	__u64 sq = tc_kib2(bytes, bytes), cross = tc_kib2(bytes, w);
	struct mt_content_val *v, init = { bytes, parsed, sq, cross };

	v = bpf_map_lookup_elem(&content, &k);
	if (v) {
		__sync_fetch_and_add(&v->bytes, bytes);
		__sync_fetch_and_add(&v->parsed, parsed);
		__sync_fetch_and_add(&v->sq_kib2, sq);
		__sync_fetch_and_add(&v->cross_kib2, cross);
		return;
	}
	if (bpf_map_update_elem(&content, &k, &init, BPF_NOEXIST)) {
		v = bpf_map_lookup_elem(&content, &k);
		if (v) {
			__sync_fetch_and_add(&v->bytes, bytes);
			__sync_fetch_and_add(&v->parsed, parsed);
			__sync_fetch_and_add(&v->sq_kib2, sq);
			__sync_fetch_and_add(&v->cross_kib2, cross);
		} else {
			mt_count_drop(&content_drops);
		}
		return;
	}
	tc_announce(klass, gen);
}

/*
 * An object of @obj bytes outside a TLAB (of @thread), its sample of weight
 * @w standing for the @used bytes the thread allocated since its last
 * sample: the object's own part of @w is its class's; the rest was
 * allocated in the thread's TLAB, and goes to that TLAB's weight when it is
 * a kept one not parsed yet (its contents share it out at the next refill).
 * Otherwise, keyed by thread (time windows), the rest is left out (the
 * thread's parsed TLABs stand for it, scaled to its counter), and else it
 * stays the object's class's.
 *
 * Until stop 28 all of @w went to the object's class. On G1 a thread that
 * fills the last TLAB of a region allocates the object that does not fit
 * outside any TLAB: one sample in two TLABs, weighing a whole TLAB, and
 * always a large object (AllocAlias on JDK 17.0.21: char[] 35.5 % and
 * Obj64 4.5 % of the bytes where the program allocates 30 % and 10 %).
 */
static __always_inline void tc_outside(__u64 thread, __u64 klass, __u32 gen, __u64 w,
				       __u64 obj, __u64 used)
{
	struct mt_tlab_state *st;
	__u64 own = w, rest = 0;

	if (obj && used > obj) { /* w * obj / used without overflowing */
		own = (w / used) * obj + (w % used) * obj / used;
		rest = w - own;
	}
	if (rest && thread && (st = bpf_map_lookup_elem(&tlab_state, &thread)) && st->start) {
		__sync_fetch_and_add(&st->weight, rest);
		rest = 0;
	} else if (targ_key_tid) {
		rest = 0;
	}
	tc_draw(own + rest);
	tc_add(klass, gen, own + rest, 0, own + rest);
}

#define TC_CHUNK 1024
#define TC_NCHUNKS (MT_TLAB_SLICE / TC_CHUNK)

/* Bytes [off, off + 24) of the slice in c->buf (off + 24 <= c->len): the
 * chunks holding them, read from the TLAB the first time. 0, or 1 if a read
 * failed. */
static __always_inline int tc_have(struct tc_scratch *c, __u32 off)
{
	for (__u32 k = 0; k < 2; k++) {
		__u32 ch = ((off + k * 23) / TC_CHUNK) & (TC_NCHUNKS - 1);

		if (c->have & (1u << ch))
			continue;
		if (bpf_probe_read_user(c->buf + ch * TC_CHUNK, TC_CHUNK,
					(void *)(c->start + ch * TC_CHUNK)))
			return 1;
		c->have |= 1u << ch;
	}
	return 0;
}

/* One object at c->off: its class and size, counted. 0 = go on, 1 = stop. */
struct tc_ctx {
	struct tc_scratch *c;   /* bpf_loop wants a stack pointer; the state is in the map */
};

static long tc_object(__u32 i, void *vctx)
{
	struct tc_scratch *c = ((struct tc_ctx *)vctx)->c;
	__u32 off = c->off, j, k;
	__u64 klass, mark, size;
	__s32 lh, *cached;

	__u32 ko, ao;

	if (off + 24 > c->len || off >= MT_TLAB_SLICE)
		return 1;
	if (tc_have(c, off)) {
		c->bad = 1;
		return 1;
	}
	ko = off + targ_tl.klass_off;
	ao = off + targ_tl.arr_len_off;
	if (ko > MT_TLAB_SLICE + 48 || ao > MT_TLAB_SLICE + 48)
		return 1;
	mark = *(__u64 *)&c->buf[off];
	if (targ_tl.mark_klass_shift)
		klass = mark >> targ_tl.mark_klass_shift;
	else if (targ_tl.ccp)
		klass = *(__u32 *)&c->buf[ko];
	else
		klass = *(__u64 *)&c->buf[ko];
	if (targ_tl.ccp)
		klass = targ_tl.klass_base + (klass << (targ_tl.klass_shift & 63));
	if (!klass) {
		c->bad = 1;
		return 1;
	}
	/* the slice's classes, in an open-addressed table: a class finds its
	 * slot or a free one; a class more than the table holds stops the
	 * parse here (what was parsed stands for the slice). Until stop 28 a
	 * second class in a slot stopped it, so which classes got counted
	 * hung on their Klass addresses */
	j = (__u32)((klass >> 3) ^ (klass >> 11));
	for (k = 0; k < MT_TLAB_MAX_CLASSES; k++) {
		__u32 at = (j + k) & (MT_TLAB_MAX_CLASSES - 1);

		if (!c->klass[at] || c->klass[at] == klass)
			break;
	}
	if (k == MT_TLAB_MAX_CLASSES)
		return 1;
	j = (j + k) & (MT_TLAB_MAX_CLASSES - 1);
	if (c->klass[j]) {
		lh = c->lh[j];
	} else if ((cached = bpf_map_lookup_elem(&klass_lh, &klass))) {
		lh = *cached;
	} else {
		lh = 0;
		if (bpf_probe_read_user(&lh, sizeof(lh), (void *)(klass + targ_tl.lh_off)) || !lh) {
			c->bad = 1;
			return 1;
		}
		bpf_map_update_elem(&klass_lh, &klass, &lh, BPF_ANY);
	}
	if (lh > 0) {
		if (lh & targ_tl.lh_slow_bit) { /* a mirror, a reference: size not in the helper */
			c->bad = 1;
			return 1;
		}
		size = (__u64)lh;
	} else {
		__u32 alen = *(__u32 *)&c->buf[ao];
		__u32 hdr = ((__u32)lh >> (targ_tl.lh_hdr_shift & 31)) & targ_tl.lh_hdr_mask;
		__u32 l2 = ((__u32)lh >> (targ_tl.lh_log2_shift & 31)) & targ_tl.lh_log2_mask;

		size = ((__u64)hdr + ((__u64)alen << (l2 & 7)) + 7) & ~7ull;
	}
	if (size < 16 || (__u64)c->off + size > c->size) {
		c->bad = 1;
		return 1;
	}
	/* the filler that closed the TLAB ends exactly at its end: not an allocation */
	if ((__u64)c->off + size == c->size)
		return 1;
	if (!c->klass[j]) {
		c->klass[j] = klass;
		c->lh[j] = lh;
		c->bytes[j] = 0;
	}
	c->bytes[j] += size;
	c->parsed += size;
	c->off += (__u32)(size > MT_TLAB_SLICE ? MT_TLAB_SLICE : size);
	return c->off >= c->len;
}

/* The thread's kept TLAB (@st), full now: its weight to the classes in it. */
static __always_inline void tc_parse(const struct mt_tlab_state *st)
{
	struct tc_scratch *c;
	struct tc_ctx ctx;
	__u32 zero = 0, gc = 0;
	__u64 len;

	tc_draw(st->weight);
	if (!targ_tl.gc_count || bpf_probe_read_user(&gc, sizeof(gc), (void *)targ_tl.gc_count) ||
	    gc != st->gc) {
		tc_stat(MT_CONTENT_GC);
		/* keyed by thread (time windows), a TLAB that cannot be read is
		 * left out: its thread's parsed TLABs stand for it, scaled to its
		 * counter; the opening class would bring back the aliasing */
		if (!targ_key_tid)
			tc_add(st->klass, st->gen, st->weight, 0, st->weight);
		return;
	}
	c = bpf_map_lookup_elem(&tc_scratch, &zero);
	if (!c)
		return;
	len = st->size < MT_TLAB_SLICE ? st->size : MT_TLAB_SLICE;
	if (len < 24) {
		tc_stat(MT_CONTENT_BAD);
		if (!targ_key_tid)
			tc_add(st->klass, st->gen, st->weight, 0, st->weight);
		return;
	}
	c->off = 0;
	c->len = (__u32)len;
	c->have = 0;
	c->start = st->start;
	c->size = st->size;
	c->parsed = 0;
	c->bad = 0;
	for (__u32 j = 0; j < MT_TLAB_MAX_CLASSES; j++)
		c->klass[j] = 0;
	ctx.c = c;
	bpf_loop(MT_TLAB_MAX_OBJS, tc_object, &ctx, 0);
	if (c->bad)
		tc_stat(MT_CONTENT_BAD);
	if (!c->parsed) {
		if (!targ_key_tid)
			tc_add(st->klass, st->gen, st->weight, 0, st->weight);
		return;
	}
	tc_stat(MT_CONTENT_PARSED);
	for (__u32 j = 0; j < MT_TLAB_MAX_CLASSES; j++)
		if (c->klass[j])
			tc_add(c->klass[j], st->gen, st->weight * c->bytes[j] / c->parsed, 1,
			       st->weight);
}

/* A refill of @thread: its previous kept TLAB is full, parse it. */
static __always_inline void tc_refill(__u64 thread)
{
	struct mt_tlab_state *st = bpf_map_lookup_elem(&tlab_state, &thread);

	if (!st || !st->start)
		return;
	if (st->weight)
		tc_parse(st);
	st->weight = 0;
	st->start = 0; /* parsed: no longer the thread's TLAB (tc_outside) */
}

/* A kept sample opened a TLAB at @obj: parse it at the thread's next refill. */
static __always_inline void tc_open(__u64 thread, __u64 obj, __u64 size, __u64 weight,
				    __u64 klass, __u32 gen)
{
	struct mt_tlab_state st = { obj, size, weight, klass, 0, gen };

	if (targ_tl.gc_count)
		bpf_probe_read_user(&st.gc, sizeof(st.gc), (void *)targ_tl.gc_count);
	bpf_map_update_elem(&tlab_state, &thread, &st, BPF_ANY);
}

#endif
