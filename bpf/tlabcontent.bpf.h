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

#define TC_CHUNK 1024
#define TC_BUF 16384 /* a power of two, at least MT_TLAB_SPREAD + MT_TLAB_WINDOW */
#define TC_NCHUNKS (TC_BUF / TC_CHUNK)

/* The parser's state lives in this per-CPU map value, not on the stack: the
 * verifier then treats the loop's carried values as unknown and does not
 * explore every offset the callback could be called with. Offsets are from
 * `base`: the TLAB's start, or the end of its first object. */
struct tc_scratch {
	__u8 buf[TC_BUF + 64];
	__u64 klass[MT_TLAB_MAX_CLASSES];
	__u64 bytes[MT_TLAB_MAX_CLASSES];
	__s32 lh[MT_TLAB_MAX_CLASSES];  /* klass[j]'s layout helper */
	__u32 off;          /* the next object in buf */
	__u32 from;         /* objects starting before this are passed over */
	__u32 len;          /* ... and from this on: the window is [from, len) */
	__u32 nclasses;     /* classes in the table */
	__u32 have;         /* 1 KiB chunks read into buf, a bit each */
	__u32 first;        /* whole TLAB: the first object's slot in the table */
	__u32 whole;        /* the window is the whole TLAB (its first object in it) */
	__u32 ended;        /* the parse reached the filler at the TLAB's end */
	__u32 bad;
	__u32 pad;
	__u64 base;         /* buf[0] in the JVM */
	__u64 end;          /* bytes from base to the TLAB's end */
	__u64 parsed;       /* bytes of the objects counted */
	__u64 first_size;   /* whole TLAB: its first object's bytes (counted) */
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

/* a * b bytes^2 in KiB^2, each rounded to KiB (a weight of 4 GiB squared
 * still fits) */
static __always_inline __u64 tc_kib2(__u64 a, __u64 b)
{
	return ((a + 512) >> 10) * ((b + 512) >> 10);
}

/* The weight @w of a sample, into the sum of the samples' weights. */
static __always_inline void tc_weight(__u64 w)
{
	__u32 which = MT_CONTENT_WSUM;
	__u64 *n = bpf_map_lookup_elem(&content_stats, &which);

	if (n)
		*n += w;
}

/* Add @bytes (its y) of a draw of x @w to (@klass, @gen); a new key is
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
 * thread's parsed TLABs stand for it, scaled to its counter); else it
 * carries over to the thread's next kept TLAB (tc_refill) when the thread
 * had one, and stays the object's class's when not.
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
	if (rest && thread && (st = bpf_map_lookup_elem(&tlab_state, &thread)) &&
	    (st->start || !targ_key_tid)) {
		__sync_fetch_and_add(&st->weight, rest);
		rest = 0;
	} else if (targ_key_tid) {
		rest = 0;
	}
	tc_weight(own + rest);
	tc_add(klass, gen, own + rest, 0, own + rest);
}

/* Bytes [off, off + 24) in c->buf (off + 24 <= TC_BUF): the chunks holding
 * them, read from the TLAB the first time. 0, or 1 if a read failed. */
static __always_inline int tc_have(struct tc_scratch *c, __u32 off)
{
	for (__u32 k = 0; k < 2; k++) {
		__u32 ch = ((off + k * 23) / TC_CHUNK) & (TC_NCHUNKS - 1);

		if (c->have & (1u << ch))
			continue;
		if (bpf_probe_read_user(c->buf + ch * TC_CHUNK, TC_CHUNK,
					(void *)(c->base + ch * TC_CHUNK)))
			return 1;
		c->have |= 1u << ch;
	}
	return 0;
}

/* The Klass* in the header at @hdr (24 bytes of an object), 0 if none. */
static __always_inline __u64 tc_klass(const __u8 *hdr)
{
	__u64 klass;

	if (targ_tl.mark_klass_shift)
		klass = *(const __u64 *)hdr >> targ_tl.mark_klass_shift;
	else if (targ_tl.ccp)
		klass = *(const __u32 *)(hdr + (targ_tl.klass_off & 15));
	else
		klass = *(const __u64 *)(hdr + (targ_tl.klass_off & 15));
	if (klass && targ_tl.ccp)
		klass = targ_tl.klass_base + (klass << (targ_tl.klass_shift & 63));
	return klass;
}

/* @klass's layout helper into *@lh (the per-CPU cache, else the Klass). 0,
 * or 1 when it cannot be read. */
static __always_inline int tc_lh(__u64 klass, __s32 *lh)
{
	__s32 *cached = bpf_map_lookup_elem(&klass_lh, &klass);

	if (cached) {
		*lh = *cached;
		return 0;
	}
	*lh = 0;
	if (bpf_probe_read_user(lh, sizeof(*lh), (void *)(klass + targ_tl.lh_off)) || !*lh)
		return 1;
	bpf_map_update_elem(&klass_lh, &klass, lh, BPF_ANY);
	return 0;
}

/* The bytes of the object whose header is at @hdr, of layout helper @lh; 0
 * when the helper does not say (a java.lang.Class: its size is its own). */
static __always_inline __u64 tc_size(const __u8 *hdr, __s32 lh)
{
	__u32 alen, h, l2;

	if (lh > 0)
		return lh & targ_tl.lh_slow_bit ? 0 : (__u64)lh;
	alen = *(const __u32 *)(hdr + (targ_tl.arr_len_off & 15));
	h = ((__u32)lh >> (targ_tl.lh_hdr_shift & 31)) & targ_tl.lh_hdr_mask;
	l2 = ((__u32)lh >> (targ_tl.lh_log2_shift & 31)) & targ_tl.lh_log2_mask;
	return ((__u64)h + ((__u64)alen << (l2 & 7)) + 7) & ~7ull;
}

/* One object at c->off: its class and size, counted when it starts in the
 * window. 0 = go on, 1 = stop. */
struct tc_ctx {
	struct tc_scratch *c;   /* bpf_loop wants a stack pointer; the state is in the map */
	__u64 weight, d, x;     /* tc_class: the TLAB's weight, y's divisor, the draw's x */
	__u32 gen;
};

static long tc_object(__u32 i, void *vctx)
{
	struct tc_scratch *c = ((struct tc_ctx *)vctx)->c;
	__u32 off = c->off, j, k;
	__u64 klass, size;
	__u8 *hdr;
	__s32 lh;

	if (off >= c->len || off > TC_BUF - 24 || (__u64)off + 24 > c->end)
		return 1;
	if (tc_have(c, off)) {
		c->bad = 1;
		return 1;
	}
	hdr = &c->buf[off & (TC_BUF - 1)];
	klass = tc_klass(hdr);
	if (!klass) {
		c->bad = 1;
		return 1;
	}
	/* the classes met, in an open-addressed table (never full here: see
	 * below), which keeps their layout helpers */
	j = (__u32)((klass >> 3) ^ (klass >> 11));
	for (k = 0; k < MT_TLAB_MAX_CLASSES; k++) {
		__u32 at = (j + k) & (MT_TLAB_MAX_CLASSES - 1);

		if (!c->klass[at] || c->klass[at] == klass)
			break;
	}
	if (k == MT_TLAB_MAX_CLASSES)
		return 1;
	j = (j + k) & (MT_TLAB_MAX_CLASSES - 1);
	if (c->klass[j])
		lh = c->lh[j];
	else if (tc_lh(klass, &lh)) {
		c->bad = 1;
		return 1;
	}
	size = tc_size(hdr, lh);
	if (size < 16 || (__u64)off + size > c->end) {
		/* a java.lang.Class (its size is in the object), or garbage:
		 * what was counted before it stands for the window */
		c->bad = 1;
		return 1;
	}
	/* the filler that closed the TLAB ends exactly at its end: not an allocation */
	if ((__u64)off + size == c->end) {
		c->ended = 1;
		return 1;
	}
	if (!c->klass[j]) {
		c->klass[j] = klass;
		c->lh[j] = lh;
		c->bytes[j] = 0;
		c->nclasses++;
	}
	if (off >= c->from) {
		if (!off && c->whole) {
			c->first = j;
			c->first_size = size;
		}
		c->bytes[j] += size;
		c->parsed += size;
	}
	c->off += (__u32)(size > TC_BUF ? TC_BUF : size);
	/* a table now full stops after this object: a stop decided by the
	 * objects before the next one leaves no class out more than another
	 * (before stop 29 the parse stopped at the first class past the table,
	 * never counting it: rare classes, the likeliest to be new in a
	 * window, lost their bytes there) */
	return c->off >= c->len || c->nclasses >= MT_TLAB_MAX_CLASSES;
}

/*
 * The window: a TLAB of at most MT_TLAB_SLICE bytes is parsed whole, from its
 * first object to the filler at its end. In a larger one, the objects that
 * start in MT_TLAB_WINDOW bytes at a random offset (below MT_TLAB_SPREAD)
 * from the end of its first object: that one is the allocation that did not
 * fit in the thread's previous TLAB, a draw weighted by size (a 2 KiB array
 * next to 24-byte objects opens most TLABs), and where it ends is the same
 * place of a periodic program's loop again and again. Before stop 29 the
 * window was the TLAB's first 8 KiB, first object in: AllocMix (JDK 17) read
 * byte[] 64.1 % where the program allocates 54.8 %, 50-90 standard errors
 * off; a window right after the first object read 49.2 % (the loop's phase).
 * A whole TLAB is a part of the program's sequence with its own first
 * object, and is fair as it is. 0, or 1 when the first object cannot be read.
 */
static __always_inline int tc_window(struct tc_scratch *c, const struct mt_tlab_state *st)
{
	__u64 klass, size, spread;
	__s32 lh;

	c->base = st->start;
	c->end = st->size;
	c->whole = st->size <= MT_TLAB_SLICE;
	c->from = 0;
	c->len = (__u32)(c->whole ? st->size : MT_TLAB_WINDOW);
	if (c->whole)
		return 0;
	if (bpf_probe_read_user(c->buf, 24, (void *)st->start))
		return 1;
	klass = tc_klass(c->buf);
	if (!klass || tc_lh(klass, &lh))
		return 1;
	size = tc_size(c->buf, lh);
	if (size < 16 || size + 24 > st->size)
		return 1;
	c->base = st->start + size;
	c->end = st->size - size;
	/* the offset: the sum of two uniform draws below MT_TLAB_SPREAD / 2
	 * (less when the TLAB ends sooner: a first object of most of it). A
	 * window's reach is then a smooth hill over the bytes after the first
	 * object, and a loop's phase weighs little: one uniform draw below
	 * 8 KiB left byte[] -0.2 points in AllocMix (simulated), two -0.05 */
	spread = c->end > MT_TLAB_WINDOW ? c->end - MT_TLAB_WINDOW : 2;
	spread = spread < MT_TLAB_SPREAD ? spread / 2 : MT_TLAB_SPREAD / 2;
	c->from = bpf_get_prandom_u32() % (__u32)spread + bpf_get_prandom_u32() % (__u32)spread;
	c->len = c->from + MT_TLAB_WINDOW;
	return 0;
}

/* @w * @b / @d without overflowing (@d > 0; @b at most a TLAB's bytes). */
static __always_inline __u64 tc_scale(__u64 w, __u64 b, __u64 d)
{
	return (w / d) * b + (w % d) * b / d;
}

/* Slot @j of the window's class table to the class's y (a callback: the
 * verifier sees one class, not 32 copies of tc_add). Always 0. */
static long tc_class(__u32 j, void *vctx)
{
	struct tc_ctx *x = vctx;
	struct tc_scratch *c = x->c;
	__u32 i = j & (MT_TLAB_MAX_CLASSES - 1);

	if (c->klass[i] && c->bytes[i] && x->d)
		tc_add(c->klass[i], x->gen, tc_scale(x->weight, c->bytes[i], x->d), 1, x->x);
	return 0;
}

/*
 * The thread's kept TLAB (@st), full now: its weight to the classes in it.
 * W is the TLAB's own draw weight (its size over its chance to be kept,
 * st->draw); its sample's weight, the thread's bytes since its previous
 * sample, only goes into the total (MT_CONTENT_WSUM). Until stop 35 W was
 * that weight: the bytes of the thread's previous TLAB, and after the
 * probes had been detached for a while (time windows) all the bytes since
 * its last sample - on a busy machine one AllocMix TLAB weighed 1.12 GB,
 * a third of all the weights, and its 4 KiB window set the class shares
 * (byte[] 1.8 points low; runs 5-6 stated standard errors off).
 * A whole TLAB gives each class its part of W (y = W b / parsed).
 * A window is a draw of a ratio estimator: y = W b / MT_TLAB_WINDOW for each
 * class and x = W parsed / MT_TLAB_WINDOW for the draw (what its classes' y
 * add up to; user space scales the sum of every draw's y to the sum of the
 * weights, allocrows.c). Dividing each window by its own bytes instead gave
 * the object that crosses its end, often a large one, the weight of the
 * whole window (AllocMix: -0.9 points for byte[] in simulation).
 * A TLAB that cannot be parsed goes to its opening class (a first object
 * that fills it, an unreadable one), or is left out when a collection
 * retired it. Returns 1 when its weights are to carry over to the
 * thread's next kept TLAB, else 0.
 */
static __noinline int tc_parse(const struct mt_tlab_state *st)
{
	struct tc_scratch *c;
	struct tc_ctx ctx;
	__u32 zero = 0, gc = 0;
	__u64 d, x;

	if (!targ_tl.gc_count || bpf_probe_read_user(&gc, sizeof(gc), (void *)targ_tl.gc_count) ||
	    gc != st->gc) {
		tc_stat(MT_CONTENT_GC);
		/* a TLAB a collection retired cannot be read: keyed by thread
		 * (time windows) it is left out, its thread's parsed TLABs stand
		 * for it, scaled to its counter; else its weight carries over to
		 * the thread's next kept TLAB (tc_open). Until stop 35 it went to
		 * its opening class, the allocation that did not fit in the
		 * previous TLAB - a draw weighted by size: AllocMix's byte[] read
		 * 0.12-0.31 points high with every sample kept (14-16 TLABs of
		 * ~4450 retired by a GC, 0.33-0.72 % of the weight, each all
		 * byte[]); the parsed windows alone read 54.74 % for 54.78 % */
		return !targ_key_tid;
	}
	c = bpf_map_lookup_elem(&tc_scratch, &zero);
	if (!c)
		return 0;
	c->off = 0;
	c->have = 0;
	c->nclasses = 0;
	c->parsed = 0;
	c->first = MT_TLAB_MAX_CLASSES;
	c->first_size = 0;
	c->ended = 0;
	c->bad = 0;
	if (st->size < 24 || tc_window(c, st)) {
		tc_stat(MT_CONTENT_BAD);
		if (!targ_key_tid) {
			tc_weight(st->weight);
			tc_add(st->klass, st->gen, st->draw, 0, st->draw);
		}
		return 0;
	}
	__builtin_memset(c->klass, 0, sizeof(c->klass));
	ctx.c = c;
	bpf_loop(MT_TLAB_MAX_OBJS, tc_object, &ctx, 0);
	if (c->bad)
		tc_stat(MT_CONTENT_BAD);
	/* a small TLAB not parsed to its end: the objects after its first */
	if (c->first < MT_TLAB_MAX_CLASSES && !c->ended && c->parsed > c->first_size) {
		__u32 f = c->first & (MT_TLAB_MAX_CLASSES - 1);

		c->bytes[f] -= c->first_size;
		c->parsed -= c->first_size;
	}
	if (!c->parsed) {
		if (!targ_key_tid) {
			tc_weight(st->weight);
			tc_add(st->klass, st->gen, st->draw, 0, st->draw);
		}
		return 0;
	}
	tc_stat(MT_CONTENT_PARSED);
	d = c->whole ? c->parsed : MT_TLAB_WINDOW;
	x = c->whole ? st->draw : tc_scale(st->draw, c->parsed, d);
	tc_weight(st->weight);
	ctx.weight = st->draw;
	ctx.d = d;
	ctx.x = x;
	ctx.gen = st->gen;
	bpf_loop(MT_TLAB_MAX_CLASSES, tc_class, &ctx, 0);
	return 0;
}

/* A refill of @thread: its previous kept TLAB is full, parse it. A weight
 * left (a TLAB a collection retired) stays in the state without a start:
 * the next kept TLAB's (tc_open), or its opening class's at the end
 * (allocrows.c). */
static __always_inline void tc_refill(__u64 thread)
{
	struct mt_tlab_state *st = bpf_map_lookup_elem(&tlab_state, &thread);

	if (!st || !st->start)
		return;
	if (!st->draw || !tc_parse(st))
		st->weight = st->draw = 0;
	st->start = 0; /* parsed: no longer the thread's TLAB (tc_outside) */
}

/* A kept sample opened a TLAB at @obj: parse it at the thread's next
 * refill, with what carried over from the thread's TLABs not parsed. */
static __always_inline void tc_open(__u64 thread, __u64 obj, __u64 size, __u64 weight,
				    __u64 draw, __u64 klass, __u32 gen)
{
	struct mt_tlab_state st = { obj, size, weight, draw, klass, 0, gen };

	struct mt_tlab_state *old = bpf_map_lookup_elem(&tlab_state, &thread);

	if (old && !old->start) { /* what carried over (tc_refill) */
		st.weight += old->weight;
		st.draw += old->draw;
	}
	if (targ_tl.gc_count)
		bpf_probe_read_user(&st.gc, sizeof(st.gc), (void *)targ_tl.gc_count);
	bpf_map_update_elem(&tlab_state, &thread, &st, BPF_ANY);
}

#endif
