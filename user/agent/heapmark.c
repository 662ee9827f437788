// SPDX-License-Identifier: GPL-2.0
/*
 * heapmark.c - the frozen copy's own mark of the live heap (see heapmark.h).
 *
 * Why: HotSpot's FollowReferences costs 0.2-0.7 us per object and reference
 * in the copy (a callback per reference, the walk's own object marker
 * writing every header, which copies every heap page the copy touches), and
 * its records were ~40 bytes per reference for memtrace to turn into ids
 * with a hash look-up each. A mark of our own costs a bit per 8 heap bytes,
 * a few loads per object, and writes the records memtrace keeps, with ids it
 * needs no table for (an object's rank in address order).
 *
 * What is live is what the collector keeps (so a histogram equals jmap
 * -histo:live, class objects and what hangs off them included):
 *   - the roots JVMTI reported (JNI globals, every oop of the always-alive
 *     class loader data as SYSTEM_CLASS, monitors, VM globals, threads, stack
 *     and JNI locals);
 *   - an object's reference fields (InstanceKlass's nonstatic oop maps: a
 *     class object's own fields among them - Class.classLoader, reflection
 *     data, its module - which FollowReferences never reported), an object
 *     array's elements, a class object's static reference fields;
 *   - the first time an object of a class, or the class's own mirror, is
 *     met, the data of the class's loader (ClassLoaderData), which the
 *     collector keeps as one: the loader object, the mirror of every class it
 *     defined, each one's constant pool resolved references (an Object[]);
 *   - not the referent of a WeakReference or PhantomReference (a
 *     SoftReference's is kept: the collector keeps those while memory is
 *     ample; a FinalReference's until it is finalized).
 * A virtual thread's stack chunk's references are in its frames, told by
 * each frame's oop map: HotSpot's own iteration reads them (chunk_scan();
 * without it a chunk ends the mark and the caller walks the old way).
 *
 * Then one pass over the mark bits in address order writes the records: an
 * object's id is its named id (class, loader, thread) or next_id + its rank
 * among the marked objects. Edges are written as FollowReferences reports
 * them (CLASS to the object's class, FIELD with the JVMTI field index,
 * ARRAY_ELEMENT with the slot, and from a class object CLASS_LOADER, SIGNERS,
 * PROTECTION_DOMAIN, SUPERCLASS, INTERFACE, STATIC_FIELD, and CONSTANT_POOL
 * to its resolved references array), so that queries, dominators and paths
 * read them alike.
 */
#include <errno.h>
#include <jvmti.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "heapmark.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

#define KPOOL_BLOCK   1024      /* class infos per block (blocks never move) */
#define MAX_MAPS      4096      /* oop map blocks a class may have */
#define MAX_INSTANCE  (1u << 24) /* bytes an instance may have */
#define KCACHE_BITS   10        /* classes the look-up remembers: 1024 (a server's heap has
				 * thousands of classes: 64 sent 12% of Tomcat's copy to the
				 * map) */
#define KCACHE        (1u << KCACHE_BITS)
#define POP_CHUNK     (2u << 20) /* HM_INPLACE: bytes of records mapped in at a time */
#define PROGRESS_MASK 0xffff    /* bump the progress counter every 64 Ki objects */
#define SPLIT_BLOCKS  1024      /* blocks of bit words the records' two threads take */
#define SPLIT_MIN     (1u << 20) /* objects from which the records take two threads (auto) */

struct oopmap {
	int32_t off;
	uint32_t count;
};

/* What the marker knows of one Klass. */
struct kinfo {
	uint64_t klass;
	uint64_t mirror;           /* its class object, 0 none (yet) */
	const struct hm_class *cls; /* the named class's fields, NULL if unnamed */
	const struct oopmap *maps;
	uint32_t nmaps;
	int32_t lh;                /* layout helper */
	uint8_t kind;              /* MT_AP_K_* */
	uint8_t reftype;
	bool checked;              /* its fields agree with its layout (its first instance) */
	bool vthread;              /* java.lang.VirtualThread (hm_input.vt_klass) */
	bool has_mirror_id;        /* mirror_id is known (the records) */
	uint64_t mirror_id;        /* its class object's id, 0 when not marked */
	uint32_t mirror_pos;       /* ... and its position (mirror_id not 0) */
	uint64_t count, bytes;     /* live instances */
	uint32_t idx;              /* its index (kinfo_at()) */
};

/* Open addressing: 64-bit keys (never 0) to 32-bit values. */
struct u64map {
	uint64_t *keys;
	uint32_t *vals;
	size_t mask, n;
};

struct growvec {
	char *p;
	size_t n, cap, esz;
	bool pooled;       /* p lies in the input's pool: never realloc'd or freed */
	size_t pop_at;     /* HM_INPLACE: entries from here on not mapped in yet */
};

struct mark {
	const struct hm_input *in;
	const struct mt_ap_heap_layout *L;
	struct hm_result *out;
	uint64_t lo, hi;
	unsigned shift;            /* log2(obj_align) */
	uint32_t oopsz;            /* 4 with compressed oops, else 8 */
	uint64_t *bits;            /* one bit per obj_align bytes of [lo, hi) */
	size_t nwords;
	uint32_t *rank;            /* marked objects before each word */
	uint64_t *stack;           /* the objects to scan */
	size_t sp, scap;
	uint64_t pushed;           /* non-null references pushed (roots, fields, elements, ...) */
	uint64_t classrefs;        /* object records with MT_AP_HOBJ_CLASSREF */
	bool refpos;               /* HM_REFPOS: references as struct mt_ap_hrefpos */
	bool noclass;              /* HM_NOCLASS: with refpos, CLASS references implied */
	int64_t lead_max;          /* the most classrefs - reference records before,
				    * at an object with a CLASS reference (lead_need) */
	uint64_t extra;            /* references a class object has besides those it
				    * pushes (its super, interfaces, constant pool) */
	unsigned blkshift;         /* a bit word's block (emit_split()): word >> blkshift */
	bool ro;                   /* the records' second thread: shares the classes
				    * read only, publishes nothing */
	bool split;                /* the records in blocks by two threads (emit_split()):
				    * mk->refs a block's, published by emit_block() */
	struct mpar *par;          /* the mark in two threads (struct mpar): NULL alone */
	bool helper;               /* ... and this is its second thread: it makes no
				    * class and scans no loader or stack chunk */
	bool defer;                /* the helper's last look-up found no class (or one
				    * not checked yet): the object goes to the first */
	uint64_t *hcount;          /* while two mark: instances and bytes per class index */
	size_t nhcount;
	unsigned share_mask;       /* look at the other thread every share_mask + 1 objects */
	struct kinfo **kpool;      /* blocks of KPOOL_BLOCK */
	size_t nk, kblocks;
	struct u64map kmap;        /* Klass* -> kinfo index */
	struct u64map cldset;      /* ClassLoaderData* seen */
	struct u64map named;       /* address -> index in in->named */
	uint64_t named_bits[1024]; /* a bit per hash of a named address: most
				    * objects are not named, and their ids (one
				    * per object and per reference) skip the map */
	struct u64map classes;     /* mirror -> index in in->classes */
	/* classes looked up lately, by a hash of their Klass*: heaps interleave
	 * a few classes (an entry and its array), which one entry kept missing
	 * (a map look-up per object, 13% of the copy's records at 5 M) */
	struct kinfo *kcache[KCACHE];
	struct growvec objs, refs, roots, prims, strs, histo, klasses, sampled;
	struct growvec xroots;     /* roots the marker added (by address) */
	struct growvec vts;        /* the virtual threads marked (addresses; the first thread) */
	uint64_t *cslots;          /* a stack chunk's reference slots (bit 0: narrow) */
	size_t ncslots, ccslots;
	struct growvec addrs;      /* HM_ADDRS */
	bool forwarding;           /* HM_FORWARDING: follow forwarding pointers */
	struct zgc_refs *zgc;      /* ZGC: coloured references (in->zgc) */
	uint64_t *nfwd;            /* references followed to a moved object */
	char **arena;              /* string bytes (blocks never move) */
	size_t narena, arena_left;
	char *arena_at;
	int err;
};

/*
 * The mark in two threads (mark_start(), mark_loop()). Each has its own stack; the mark
 * bits are set with an atomic OR. The first thread makes every class (its
 * map, under the lock), and scans the loaders (their data, its map) and
 * stack chunks (HotSpot's iteration): the helper hands it those objects and
 * those of a class it has not made yet (defer), already marked. A thread
 * whose stack runs out asks (want), and the other gives it the older half
 * of its own stack when it next looks (every SHARE_EVERY objects). Both
 * stop when both wait with nothing handed over.
 */
struct mpar {
	pthread_mutex_t mu;
	pthread_cond_t cv;         /* work handed over, deferred, or the end (get_work()) */
	struct mark *a;            /* the first thread's marker: the classes */
	uint64_t *xfer;            /* objects given to the thread that asked (xfer_to) */
	size_t nxfer, cxfer;
	int xfer_to;
	uint64_t *defer;           /* the helper's objects the first scans */
	size_t ndefer, cdefer;
	int want[2];               /* atomic: thread i waits for work */
	int stop;                  /* atomic: done, or a thread failed */
	uint64_t b_marked, b_pushed; /* atomic: the helper's counts (progress) */
};

static void par_lock(struct mark *mk)
{
	if (mk->par)
		pthread_mutex_lock(&mk->par->mu);
}

static void par_unlock(struct mark *mk)
{
	if (mk->par)
		pthread_mutex_unlock(&mk->par->mu);
}

/* ---- small containers ---- */

static int u64map_init(struct u64map *m, size_t expect)
{
	size_t cap = 16;

	while (cap < expect * 2)
		cap <<= 1;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->vals = calloc(cap, sizeof(*m->vals));
	m->mask = cap - 1;
	m->n = 0;
	return m->keys && m->vals ? 0 : -ENOMEM;
}

static void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static size_t u64hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

/* The value of @k, or -1. */
static int64_t u64map_get(const struct u64map *m, uint64_t k)
{
	for (size_t i = u64hash(k) & m->mask;; i = (i + 1) & m->mask) {
		if (m->keys[i] == k)
			return m->vals[i];
		if (!m->keys[i])
			return -1;
	}
}

static int u64map_put(struct u64map *m, uint64_t k, uint32_t v)
{
	size_t i;

	if ((m->n + 1) * 2 > m->mask + 1) {
		struct u64map g;
		int err = u64map_init(&g, (m->mask + 1));

		if (err) {
			u64map_free(&g);
			return err;
		}
		for (size_t j = 0; j <= m->mask; j++)
			if (m->keys[j])
				u64map_put(&g, m->keys[j], m->vals[j]);
		u64map_free(m);
		*m = g;
	}
	for (i = u64hash(k) & m->mask; m->keys[i] && m->keys[i] != k; i = (i + 1) & m->mask)
		;
	m->n += !m->keys[i];
	m->keys[i] = k;
	m->vals[i] = v;
	return 0;
}

/* The 2 MiB blocks inside @p's @bytes in huge pages where the kernel has
 * them (a large array not touched yet), unless @small (HM_SMALLPAGES).
 * memtrace's util_hugepages() does the same; the agent .so links nothing
 * of user/lib, and memtrace tells it its choice in HM_SMALLPAGES. */
static void huge_inside(void *p, size_t bytes, bool small)
{
	uintptr_t a = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
	uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)((2u << 20) - 1);

	if (p && !small && bytes >= (8u << 20) && e > a)
		madvise((void *)a, e - a, MADV_HUGEPAGE);
}

/* Room for @n entries in @v at once (its pages in huge pages where the
 * kernel has them, unless @small: the records of millions of objects fault
 * far less; but where free 2 MiB blocks go back to a hypervisor, a fresh
 * huge page costs a host fault, and memtrace asks for small pages). */
static void vec_reserve(struct growvec *v, size_t n, bool small)
{
	char *p;

	if (n <= v->cap || v->pooled)
		return;
	p = realloc(v->p, n * v->esz);
	if (!p)
		return; /* vec_push() grows it, or says it could not */
	huge_inside(p, n * v->esz, small);
	v->p = p;
	v->cap = n;
}

/*
 * Room for @n entries of empty @v in the input's pool (memtrace's memfd,
 * MT_AP_FREEZE_POOL), after what the pool holds already (*@used bytes,
 * advanced): its pages are resident, so the records need no fresh pages.
 * False (nothing changed) when they do not fit.
 */
static bool vec_pool(struct mark *mk, struct growvec *v, size_t n, uint64_t *used)
{
	uint64_t at = (*used + 63) & ~63ull, bytes = (uint64_t)n * v->esz;

	if (!mk->in->pool || v->p || !n || at > mk->in->pool_bytes ||
	    bytes > mk->in->pool_bytes - at)
		return false;
	v->p = (char *)mk->in->pool + at;
	v->cap = n;
	v->pooled = true;
	/* its page tables in one call, not a fault per page as they are written;
	 * HM_INPLACE: a chunk at a time ahead of the writes (vec_push()), which
	 * memtrace fills meanwhile (in its cgroup): most are then mapped, not
	 * made */
	v->pop_at = 0;
	if (!(mk->in->flags & HM_INPLACE))
		madvise(v->p - ((uintptr_t)v->p & 4095), bytes + ((uintptr_t)v->p & 4095),
			MADV_POPULATE_WRITE);
	*used = at + bytes;
	return true;
}

/* ---- the records as they are written (MT_AP_FREEZE_LIVE) ---- */

static void live_store(uint64_t *at, uint64_t v)
{
	__atomic_store_n(at, v, __ATOMIC_RELEASE);
}

/* gen odd: the arrays are about to move (a reader keeps nothing it reads). */
static void live_moving(struct mark *mk)
{
	struct mt_ap_hlive *l = mk->in->live;

	if (l && !(l->gen & 1))
		live_store(&l->gen, l->gen + 1);
}

/* The arrays' addresses and sizes as they are now; gen even again. */
static void live_arrays(struct mark *mk)
{
	struct mt_ap_hlive *l = mk->in->live;

	if (!l)
		return;
	live_moving(mk);
	live_store(&l->objs, (uint64_t)(uintptr_t)mk->objs.p);
	live_store(&l->refs, (uint64_t)(uintptr_t)mk->refs.p);
	live_store(&l->cap_objs, mk->objs.cap);
	live_store(&l->cap_refs, mk->refs.cap);
	live_store(&l->pool, (uint64_t)(uintptr_t)mk->in->pool);
	live_store(&l->pool_bytes, mk->in->pool ? mk->in->pool_bytes : 0);
	live_store(&l->gen, l->gen + 1);
}

/* HM_INPLACE: how far the mark has come (memtrace fills its pool ahead). */
static void live_progress(struct mark *mk)
{
	struct mt_ap_hlive *l = mk->in->live;

	if (!l || !(mk->in->flags & HM_INPLACE))
		return;
	uint64_t objs = mk->out->info.marked, refs = mk->pushed;

	if (mk->par) { /* and the helper's, as it last told them */
		objs += __atomic_load_n(&mk->par->b_marked, __ATOMIC_RELAXED);
		refs += __atomic_load_n(&mk->par->b_pushed, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&l->mark_objs, objs, __ATOMIC_RELAXED);
	__atomic_store_n(&l->mark_refs, refs, __ATOMIC_RELAXED);
}

/* How many records are written: each count after the records it counts. */
static void live_counts(struct mark *mk)
{
	struct mt_ap_hlive *l = mk->in->live;

	if (!l)
		return;
	live_store(&l->nobjs, mk->objs.n);
	live_store(&l->nrefs, mk->refs.n);
}

/* A record zeroed: the sizes of the records millions of are written in a
 * few stores, not a call (memset was 5% of the copy's records at 5 M). */
static inline void *zero_rec(char *p, size_t esz)
{
	switch (esz) {
	case 12:
		return memset(p, 0, 12);
	case 24:
		return memset(p, 0, 24);
	case 32:
		return memset(p, 0, 32);
	default:
		return memset(p, 0, esz);
	}
}

/* HM_INPLACE: map in the next POP_CHUNK of pooled @v's pages in one call
 * (those memtrace has filled are only mapped; the others made). */
static void pool_ahead(struct growvec *v)
{
	size_t k = POP_CHUNK / v->esz, end = v->n + k < v->cap ? v->n + k : v->cap;
	uintptr_t a = (uintptr_t)(v->p + v->n * v->esz) & ~(uintptr_t)4095;

	madvise((void *)a, (uintptr_t)(v->p + end * v->esz) - a, MADV_POPULATE_WRITE);
	v->pop_at = end;
}

static void *vec_push(struct mark *mk, struct growvec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 4096;
		bool published = !mk->ro && !mk->split && (v == &mk->objs || v == &mk->refs);
		char *p;

		if (published) /* before the old array can go */
			live_moving(mk);
		if (v->pooled) { /* out of the pool: the rest in memory of our own */
			p = malloc(cap * v->esz);
			if (p)
				memcpy(p, v->p, v->n * v->esz);
			v->pooled = !p;
		} else {
			p = realloc(v->p, cap * v->esz);
		}
		if (!p) {
			mk->err = -ENOMEM;
			return NULL; /* gen stays odd: a reader keeps nothing more */
		}
		v->p = p;
		v->cap = cap;
		if (published)
			live_arrays(mk);
	}
	if (v->pooled && v->n >= v->pop_at && (mk->in->flags & HM_INPLACE))
		pool_ahead(v);
	return zero_rec(v->p + v->n++ * v->esz, v->esz);
}

/* ---- reading the heap ---- */

static uint64_t rd64(uint64_t a)
{
	return *(const uint64_t *)(uintptr_t)a;
}

static uint32_t rd32(uint64_t a)
{
	return *(const uint32_t *)(uintptr_t)a;
}

static int32_t rdi32(uint64_t a)
{
	return *(const int32_t *)(uintptr_t)a;
}

static bool in_heap(const struct mark *mk, uint64_t a)
{
	return a >= mk->lo && a < mk->hi && !(a & ((1ull << mk->shift) - 1));
}

/*
 * Where object @a is now (HM_FORWARDING): a copy forked while the collector
 * was moving objects (Shenandoah's evacuation, or before it updated the
 * references to what it moved) holds both copies of a moved object; the old
 * one's mark word is its forwarding pointer, low bits 11 (markWord's
 * "marked"; a JDK 17 JVMTI walk's own marked header has no pointer above
 * them). The new copy is the object: it has every write since the move.
 */
static uint64_t fwd(const struct mark *mk, uint64_t a)
{
	uint64_t m, to;

	if (!mk->forwarding || !in_heap(mk, a))
		return a;
	m = rd64(a);
	to = m & ~3ull;
	if ((m & 3) != 3 || !in_heap(mk, to) || to == a)
		return a;
	(*mk->nfwd)++;
	return to;
}

/* A reference field's object (0 for null). */
static uint64_t load_oop(const struct mark *mk, uint64_t slot)
{
	uint32_t n;

	if (mk->zgc)
		return zgc_load(mk->zgc, rd64(slot));
	if (mk->oopsz == 8)
		return fwd(mk, rd64(slot));
	n = rd32(slot);
	return n ? fwd(mk, mk->L->oop_base + ((uint64_t)n << mk->L->oop_shift)) : 0;
}

/* An OopHandle's object (0 for an empty handle). */
static uint64_t load_handle(const struct mark *mk, uint64_t handle_at)
{
	uint64_t p = rd64(handle_at);

	if (p && mk->zgc) /* OopStorage slots hold coloured pointers too */
		return zgc_load(mk->zgc, rd64(p));
	return p ? fwd(mk, rd64(p)) : 0;
}

static uint64_t klass_of(const struct mark *mk, uint64_t obj)
{
	const struct mt_ap_heap_layout *L = mk->L;

	if (L->flags & MT_AP_LAYOUT_CKLASS)
		return L->klass_base + ((uint64_t)rd32(obj + L->klass_off) << L->klass_shift);
	return rd64(obj + L->klass_off);
}

static size_t bit_of(const struct mark *mk, uint64_t a)
{
	return (size_t)((a - mk->lo) >> mk->shift);
}

static bool marked(const struct mark *mk, uint64_t a)
{
	size_t b;

	if (!in_heap(mk, a))
		return false;
	b = bit_of(mk, a);
	return mk->bits[b >> 6] & (1ull << (b & 63));
}

static void fail(struct mark *mk, int err, const char *fmt, unsigned long long a)
	__attribute__((format(printf, 3, 0)));

/* Stop the mark with @err; the first reason stays. @fmt takes one %llx. */
static void fail(struct mark *mk, int err, const char *fmt, unsigned long long a)
{
	if (mk->err)
		return;
	mk->err = err;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	snprintf(mk->out->info.why, sizeof(mk->out->info.why), fmt, a);
#pragma GCC diagnostic pop
}

/*
 * The mark stack's entries are objects' addresses, or an object array's
 * chunk still to scan: CHUNK_FLAG, the chunk's number in bits 48-62 and the
 * array's address (below 2^48; an array above is scanned whole). A large
 * array's elements are pushed ARRAY_CHUNK at a time (the rest one entry,
 * below them), so that one array of millions (a cache's table,
 * FreezeWorkload's) is shared between the mark's threads and its progress
 * told like any other: its scan pushed 5 M elements in one go, the helper
 * waited ~100 ms for it to end (10 M objects), memtrace's fill too.
 */
#define ARRAY_CHUNK  (1u << 16)
#define CHUNK_FLAG   (1ull << 63) /* never a user-space address */
#define CHUNK_SHIFT  48           /* 2^31 elements at most: 2^15 chunks */
#define CHUNK_OF(e)  ((uint32_t)((e) >> CHUNK_SHIFT) & 0x7fffu)
#define ENTRY_ADDR(e) ((e) & CHUNK_FLAG ? (e) & ((1ull << CHUNK_SHIFT) - 1) : (e))

static void stack_push(struct mark *mk, uint64_t e);

/* Mark @a and queue it for scanning, unless it is null or marked already. */
static void mark_push(struct mark *mk, uint64_t a)
{
	size_t b;
	uint64_t bit;

	if (!a)
		return;
	mk->pushed++;
	if (!in_heap(mk, a)) {
		fail(mk, -EPROTO, "a reference outside the heap (0x%llx)", (unsigned long long)a);
		return;
	}
	b = bit_of(mk, a);
	bit = 1ull << (b & 63);
	if (__atomic_load_n(&mk->bits[b >> 6], __ATOMIC_RELAXED) & bit)
		return;
	if (!mk->par)
		mk->bits[b >> 6] |= bit;
	else if (__atomic_fetch_or(&mk->bits[b >> 6], bit, __ATOMIC_RELAXED) & bit)
		return; /* the other thread's */
	stack_push(mk, a);
}

/* Put stack entry @e (an object, or an array's next chunk) on @mk's stack. */
static void stack_push(struct mark *mk, uint64_t e)
{
	if (mk->sp == mk->scap) {
		size_t cap = mk->scap ? mk->scap * 2 : 65536;
		uint64_t *s = realloc(mk->stack, cap * sizeof(*s));

		if (!s) {
			mk->err = -ENOMEM;
			return;
		}
		mk->stack = s;
		mk->scap = cap;
	}
	mk->stack[mk->sp++] = e;
}

/* ---- classes ---- */

static struct kinfo *kinfo_at(const struct mark *mk, size_t i)
{
	return &mk->kpool[i / KPOOL_BLOCK][i % KPOOL_BLOCK];
}

static struct kinfo *kinfo_new(struct mark *mk)
{
	if (mk->nk == mk->kblocks * KPOOL_BLOCK) {
		struct kinfo **p = realloc(mk->kpool, (mk->kblocks + 1) * sizeof(*p));

		if (!p)
			return NULL;
		mk->kpool = p;
		p[mk->kblocks] = calloc(KPOOL_BLOCK, sizeof(struct kinfo));
		if (!p[mk->kblocks])
			return NULL;
		mk->kblocks++;
	}
	kinfo_at(mk, mk->nk)->idx = (uint32_t)mk->nk;
	return kinfo_at(mk, mk->nk++);
}

/* Is Klass @k @super or one of its subclasses? */
static bool subclass_of(const struct mark *mk, uint64_t k, uint64_t super)
{
	for (int depth = 0; k && depth < 256; depth++, k = rd64(k + mk->L->k_super))
		if (k == super)
			return true;
	return false;
}

/* The kind of the Klass at @k, as HotSpot tells it, or -1 when its layout
 * helper is none a Klass has. */
static int klass_kind(const struct mark *mk, uint64_t k)
{
	const struct mt_ap_heap_layout *L = mk->L;
	int32_t lh = rdi32(k + L->k_layout_helper);

	if (lh < 0) {
		uint32_t tag = (uint32_t)lh >> 30;

		return tag == 3 ? MT_AP_K_TYPEARRAY : tag == 2 ? MT_AP_K_OBJARRAY : -1;
	}
	if (lh == 0)
		return -1;
	if (k == L->class_klass)
		return MT_AP_K_MIRROR;
	if (*(const uint8_t *)(uintptr_t)(k + L->ik_reference_type))
		return MT_AP_K_REF;
	if (L->stackchunk_klass && k == L->stackchunk_klass)
		return MT_AP_K_STACKCHUNK;
	if (L->loader_klass && subclass_of(mk, k, L->loader_klass))
		return MT_AP_K_LOADER;
	return MT_AP_K_INSTANCE;
}

static void keep_cld(struct mark *mk, uint64_t cld);

static uint32_t type_size(char t)
{
	return t == 'J' || t == 'D' ? 8 : t == 'I' || t == 'F' ? 4 : t == 'C' || t == 'S' ? 2 : 1;
}

/* Do @fields agree with the class's layout: each reference field in one of
 * its oop maps, each primitive inside its instances, clear of the header?
 * (Their offsets come from jfieldIDs, which are HotSpot's own encoding.) */
static const struct hm_field *fields_hold(const struct mark *mk, const struct kinfo *ki,
					  const struct hm_field *fields, uint32_t n)
{
	uint32_t size = (uint32_t)ki->lh & ~7u;

	for (uint32_t i = 0; i < n; i++) {
		const struct hm_field *f = &fields[i];
		bool in_map = false;

		if (f->off < mk->L->klass_off + ((mk->L->flags & MT_AP_LAYOUT_CKLASS) ? 4 : 8) ||
		    f->off + type_size(f->type) > size)
			return f;
		if (f->type != 'L' && f->type != '[')
			continue;
		if (ki->kind == MT_AP_K_REF && (f->off == (uint32_t)mk->L->ref_referent ||
						f->off == (uint32_t)mk->L->ref_discovered))
			continue; /* kept out of the oop maps: scanned apart */
		for (uint32_t m = 0; m < ki->nmaps && !in_map; m++) {
			uint32_t lo = (uint32_t)ki->maps[m].off;

			in_map = f->off >= lo && f->off < lo + ki->maps[m].count * mk->oopsz &&
				 !((f->off - lo) % mk->oopsz);
		}
		if (!in_map)
			return f;
	}
	return NULL;
}

/* What the marker needs of Klass @k, read once. The first sight of a class
 * keeps its loader's data alive, as the collector does. NULL when @k is not
 * a Klass as the layout says (mk->err set). */
/* A new class's kinfo for Klass @k (kinfo_get()); under the mark's lock
 * when two threads mark. NULL when @k is not a Klass as the layout says
 * (mk->err set). */
static struct kinfo *kinfo_make(struct mark *mk, uint64_t k)
{
	const struct mt_ap_heap_layout *L = mk->L;
	struct kinfo *ki;
	int kind;

	if (!k || (k & 7)) {
		fail(mk, -EPROTO, "an object whose class pointer is 0x%llx", (unsigned long long)k);
		return NULL;
	}
	kind = klass_kind(mk, k);
	if (kind < 0) {
		fail(mk, -EPROTO, "a class pointer 0x%llx that is no Klass the layout knows",
		     (unsigned long long)k);
		return NULL;
	}
	/* a Klass and its class object name each other */
	{
		uint64_t m = load_handle(mk, k + L->k_java_mirror);

		if (m && (!in_heap(mk, m) || rd64(m + (uint32_t)L->m_klass) != k)) {
			fail(mk, -EPROTO, "a class pointer 0x%llx whose class object does not "
			     "name it back", (unsigned long long)k);
			return NULL;
		}
	}
	ki = kinfo_new(mk);
	if (!ki || u64map_put(&mk->kmap, k, (uint32_t)(mk->nk - 1))) {
		mk->err = -ENOMEM;
		return NULL;
	}
	ki->klass = k;
	ki->kind = (uint8_t)kind;
	ki->lh = rdi32(k + L->k_layout_helper);
	ki->mirror = load_handle(mk, k + L->k_java_mirror);
	ki->vthread = mk->in->vt_klass && k == mk->in->vt_klass && mk->in->vt_cont &&
		      mk->in->vt_tid && mk->in->sc_parent;
	if (kind <= MT_AP_K_STACKCHUNK) {
		uint64_t maps = k + L->ik_size + 8ull * (uint32_t)rdi32(k + L->k_vtable_len) +
				8ull * (uint32_t)rdi32(k + L->ik_itable_len);
		int32_t n = rdi32(k + L->ik_oop_map_size);

		if (ki->lh <= 0 || (uint32_t)ki->lh >= MAX_INSTANCE || n < 0 || n > MAX_MAPS) {
			fail(mk, -EPROTO, "an instance class 0x%llx whose layout makes no sense",
			     (unsigned long long)k);
			return NULL;
		}
		ki->maps = (const struct oopmap *)(uintptr_t)maps;
		ki->nmaps = (uint32_t)n;
		for (uint32_t j = 0; j < ki->nmaps; j++)
			if (ki->maps[j].off < 8 || ki->maps[j].count > MAX_INSTANCE / 4 ||
			    ki->maps[j].off + (uint64_t)ki->maps[j].count * mk->oopsz >
				    (uint32_t)(ki->lh & ~7)) {
				fail(mk, -EPROTO, "an oop map of class 0x%llx outside its instances",
				     (unsigned long long)k);
				return NULL;
			}
		if (kind == MT_AP_K_REF)
			ki->reftype = *(const uint8_t *)(uintptr_t)(k + L->ik_reference_type);
	} else if (ki->lh >= 0) {
		fail(mk, -EPROTO, "an array class 0x%llx whose layout helper is not an array's",
		     (unsigned long long)k);
		return NULL;
	}
	if (ki->mirror) {
		int64_t c = u64map_get(&mk->classes, ki->mirror);

		ki->cls = c >= 0 ? &mk->in->classes[c] : NULL;
	}
	return ki;
}

/* The helper's look-up (struct mpar): the classes are the first thread's,
 * read under the lock; one it has not made yet sets mk->defer. */
static struct kinfo *helper_kinfo(struct mark *mk, uint64_t k);

/* What the marker needs of Klass @k, read once. The first sight of a class
 * keeps its loader's data alive, as the collector does. NULL when @k is not
 * a Klass as the layout says (mk->err set), or (the helper) not made yet. */
static struct kinfo *kinfo_get(struct mark *mk, uint64_t k)
{
	struct kinfo *ki;
	int64_t i;
	struct kinfo **slot = &mk->kcache[(k * 0x9e3779b97f4a7c15ull) >> (64 - KCACHE_BITS)];

	if (*slot && (*slot)->klass == k)
		return *slot;
	if (mk->helper)
		return *slot = helper_kinfo(mk, k);
	i = u64map_get(&mk->kmap, k); /* this thread alone writes the map */
	if (i >= 0)
		return *slot = kinfo_at(mk, (size_t)i);
	if (mk->ro) { /* a class the mark never met: the first thread writes it */
		mk->err = -EAGAIN;
		return NULL;
	}
	par_lock(mk);
	ki = kinfo_make(mk, k);
	par_unlock(mk);
	if (!ki)
		return NULL;
	*slot = ki;
	keep_cld(mk, rd64(k + mk->L->k_cld));
	/* keep_cld may have added classes: the cache moved on, ki did not (a block) */
	return ki;
}

/* A ClassLoaderData met for the first time: what it holds is live. */
static void keep_cld(struct mark *mk, uint64_t cld)
{
	const struct mt_ap_heap_layout *L = mk->L;

	if (!cld || mk->err || u64map_get(&mk->cldset, cld) >= 0)
		return;
	if (u64map_put(&mk->cldset, cld, 1)) {
		mk->err = -ENOMEM;
		return;
	}
	mk->out->info.clds++;
	mark_push(mk, load_handle(mk, cld + L->cld_loader));
	for (uint64_t k = rd64(cld + L->cld_klasses); k && !mk->err; k = rd64(k + L->k_next_link)) {
		uint64_t cp, cache;

		int32_t lh = rdi32(k + L->k_layout_helper);

		mark_push(mk, load_handle(mk, k + L->k_java_mirror));
		if (lh <= 0) /* an array class: no constant pool */
			continue;
		cp = rd64(k + L->ik_constants);
		cache = cp ? rd64(cp + L->cp_cache) : 0;
		if (cache)
			mark_push(mk, load_handle(mk, cache + L->cpc_resolved_refs));
	}
}

/* A stack chunk's bytes (InstanceStackChunkKlass::instance_size): its
 * fields, its stack (the int `size`, in words), and a bitmap of a bit per
 * reference slot the stack could hold (2 a word with compressed oops),
 * whether the collector made one or not; 0 for a size that makes no sense. */
static uint64_t chunk_size(const struct mark *mk, const struct kinfo *ki, uint64_t obj)
{
	int32_t words = rdi32(obj + (uint32_t)mk->L->sc_size);
	uint64_t bits, sz, al = mk->L->obj_align;

	if (words < 0 || words > (1 << 26))
		return 0;
	bits = (uint64_t)words << (mk->oopsz == 4 ? 1 : 0);
	sz = ((uint32_t)ki->lh & ~7u) + 8ull * (uint64_t)words + 8ull * ((bits + 63) / 64);
	return (sz + al - 1) & ~(al - 1);
}

/* An array's element count and byte size; the object's size for others. */
static uint64_t obj_size(const struct mark *mk, const struct kinfo *ki, uint64_t obj,
			 int32_t *length)
{
	uint32_t lh = (uint32_t)ki->lh;

	*length = -1;
	if (ki->kind == MT_AP_K_MIRROR)
		return 8ull * (uint32_t)rdi32(obj + mk->L->m_oop_size);
	if (ki->kind == MT_AP_K_STACKCHUNK && mk->L->sc_size > 0)
		return chunk_size(mk, ki, obj);
	if (ki->kind < MT_AP_K_TYPEARRAY)
		return lh & ~7u;
	*length = rdi32(obj + mk->L->length_off);
	{
		uint64_t hdr = (lh >> 16) & 0xff, sz = hdr + ((uint64_t)(uint32_t)*length << (lh & 63));
		uint64_t al = mk->L->obj_align;

		return (sz + al - 1) & ~(al - 1);
	}
}

/* ---- the mark ---- */

/* Is @at a Reference @obj's referent or discovered slot? JDK 17 keeps them
 * out of Reference's oop maps, JDK 25 keeps them in (and its collectors skip
 * the referent): either way the marker reads them apart. */
static bool ref_slot(const struct mark *mk, uint64_t obj, uint64_t at)
{
	return at == obj + (uint32_t)mk->L->ref_referent ||
	       at == obj + (uint32_t)mk->L->ref_discovered;
}

/* Is the referent of a Reference of @ki weak (weak and phantom references),
 * so that the collector does not keep it? */
static bool weak_referent(const struct mark *mk, const struct kinfo *ki)
{
	return ki->reftype < 32 && ((mk->L->ref_weak >> ki->reftype) & 1);
}

/* The first instance of a class: do the fields the agent named agree with
 * the class's layout? (Checked on instances only: an abstract class such as
 * java.lang.ref.Reference itself has the referent of its subclasses among
 * its fields but no instance, and on JDK 25 no reference type either.) */
static bool check_fields(struct mark *mk, struct kinfo *ki)
{
	const struct hm_field *bad = NULL;

	if (ki->kind > MT_AP_K_STACKCHUNK || __atomic_load_n(&ki->checked, __ATOMIC_ACQUIRE))
		return true;
	if (mk->helper) { /* its first instance: the first thread checks it */
		mk->defer = true;
		return false;
	}
	__atomic_store_n(&ki->checked, true, __ATOMIC_RELEASE);
	if (ki->cls)
		bad = fields_hold(mk, ki, ki->cls->fields, ki->cls->nfields);
	if (!bad && ki->kind == MT_AP_K_MIRROR)
		bad = fields_hold(mk, ki, mk->in->class_fields, mk->in->nclass_fields);
	if (!bad)
		return true;
	if (!mk->err) {
		mk->err = -EPROTO;
		snprintf(mk->out->info.why, sizeof(mk->out->info.why),
			 "field %d (%c at byte %u) of class 0x%llx is in none of its oop maps",
			 bad->index, bad->type, bad->off, (unsigned long long)ki->klass);
	}
	return false;
}

/* ---- virtual threads' stack chunks ---- */

/*
 * A chunk's references are in its frames, where each frame's oop map
 * (compiled code) or bytecode (the interpreter) says which slot holds one;
 * the copy asks HotSpot's own iteration (the layout's sc_iterate, called
 * only in the copy: it runs HotSpot's code as JVMTI's walk there does, and
 * what it writes - ZGC colours the slots, derived pointers made relative -
 * stays in the copy). It is passed a closure as HotSpot's OopIterateClosure
 * is laid out (Itanium C++ ABI): a vtable pointer, its one field (the
 * ReferenceDiscoverer), then ours. The vtable's entries in HotSpot's
 * declaration order: do_oop(oop *), do_oop(narrowOop *),
 * reference_iteration_mode(), do_metadata(), do_klass(), do_cld(),
 * do_method(), do_nmethod(); all but the two do_oop() answer 0 (no
 * metadata: no classes, no methods). The order is checked on every chunk:
 * the header's references (its oop map: parent, cont) must come in the
 * heap's own format, narrow with compressed oops, and every slot inside the
 * chunk. A stack slot's object is a STACK_LOCAL root, as JVMTI reports an
 * unmounted virtual thread's locals.
 */
struct hs_closure {
	const void *const *vptr;
	void *ref_discoverer;
	struct mark *mk;
	uint64_t obj, hdr_end, end;
	uint32_t header_ok, header_bad, outside;
	bool nomem;
};

#define SC_GC_MODE 0x08 /* stackChunkOopDesc::FLAG_GC_MODE */

static void chunk_slot(struct hs_closure *c, uint64_t at, bool narrow)
{
	struct mark *mk = c->mk;

	if (at < c->obj || at + (narrow ? 4 : 8) > c->end || (at & (narrow ? 3 : 7))) {
		c->outside++;
		return;
	}
	if (at < c->hdr_end) {
		if (narrow == (mk->oopsz == 4))
			c->header_ok++;
		else
			c->header_bad++;
		return;
	}
	if (mk->ncslots == mk->ccslots) {
		size_t cap = mk->ccslots ? mk->ccslots * 2 : 256;
		uint64_t *n = realloc(mk->cslots, cap * sizeof(*n));

		if (!n) {
			c->nomem = true;
			return;
		}
		mk->cslots = n;
		mk->ccslots = cap;
	}
	mk->cslots[mk->ncslots++] = at | narrow;
}

static void hs_do_oop(struct hs_closure *c, uint64_t *p)
{
	chunk_slot(c, (uint64_t)(uintptr_t)p, false);
}

static void hs_do_narrow(struct hs_closure *c, uint32_t *p)
{
	chunk_slot(c, (uint64_t)(uintptr_t)p, true);
}

static long hs_nothing(void)
{
	return 0;
}

static const void *const hs_vtable[] = {
	(const void *)hs_do_oop, (const void *)hs_do_narrow, (const void *)hs_nothing,
	(const void *)hs_nothing, (const void *)hs_nothing, (const void *)hs_nothing,
	(const void *)hs_nothing, (const void *)hs_nothing,
};

/* The Continuation whose stack chunk @obj is (its `cont`: the reference of
 * its header's oop map that is not its `parent`), 0 when not one. */
static uint64_t chunk_cont(const struct mark *mk, const struct kinfo *ki, uint64_t obj)
{
	uint64_t cont = 0;
	int n = 0;

	for (uint32_t m = 0; m < ki->nmaps; m++)
		for (uint32_t i = 0; i < ki->maps[m].count; i++) {
			uint32_t off = (uint32_t)ki->maps[m].off + i * mk->oopsz;

			if (off != mk->in->sc_parent) {
				cont = load_oop(mk, obj + off);
				n++;
			}
		}
	return n == 1 ? cont : 0;
}

/* A stack chunk's stack: every reference HotSpot finds in its frames (and
 * its lock stack) marked, each a STACK_LOCAL root. */
static void chunk_scan(struct mark *mk, const struct kinfo *ki, uint64_t obj, uint64_t size)
{
	void (*iterate)(void *, uint64_t, uint64_t) =
		(void (*)(void *, uint64_t, uint64_t))(uintptr_t)mk->L->sc_iterate;
	struct hs_closure c = { .vptr = hs_vtable, .mk = mk, .obj = obj,
				.hdr_end = obj + ((uint32_t)ki->lh & ~7u), .end = obj + size };
	uint32_t header = 0;
	uint64_t nbad = mk->zgc ? mk->zgc->nbad : 0;

	for (uint32_t m = 0; m < ki->nmaps; m++)
		header += ki->maps[m].count;
	mk->ncslots = 0;
	if (mk->in->vt_klass && mk->in->sc_parent) { /* whose locals: vthread_tids() */
		struct mt_ap_hroot *r = vec_push(mk, &mk->xroots);

		if (!r)
			return;
		r->to = chunk_cont(mk, ki, obj);
		r->flags = MT_AP_HROOT_VTHREAD | MT_AP_HROOT_TID;
	}
	iterate(&c, obj, ki->klass);
	if (c.nomem) {
		mk->err = -ENOMEM;
		return;
	}
	if (c.outside || c.header_bad || c.header_ok != header) {
		fail(mk, -ENOTSUP, "stack chunk 0x%llx: its frames did not report as expected",
		     (unsigned long long)obj);
		return;
	}
	/* ZGC's chunk slots are coloured once in its "GC mode" (the iteration
	 * puts a chunk in it): a plain address otherwise, which no colour reads */
	if (mk->zgc && !(*(const uint8_t *)(uintptr_t)(obj + (uint32_t)mk->L->sc_flags) &
			 SC_GC_MODE)) {
		fail(mk, -ENOTSUP, "a stack chunk (0x%llx) ZGC had not coloured", (unsigned long long)obj);
		return;
	}
	for (size_t i = 0; i < mk->ncslots && !mk->err; i++) {
		uint64_t at = mk->cslots[i] & ~1ull, to;
		struct mt_ap_hroot *r;

		if (mk->cslots[i] & 1) {
			uint32_t n = rd32(at);

			to = n ? fwd(mk, mk->L->oop_base + ((uint64_t)n << mk->L->oop_shift)) : 0;
		} else {
			to = mk->zgc ? zgc_load(mk->zgc, rd64(at)) : fwd(mk, rd64(at));
		}
		if (!to)
			continue;
		mark_push(mk, to);
		mk->out->info.edges++;
		r = vec_push(mk, &mk->xroots);
		if (r) {
			r->to = to;
			r->kind = JVMTI_HEAP_REFERENCE_STACK_LOCAL;
			r->flags = MT_AP_HROOT_VTHREAD;
		}
	}
	if (mk->zgc && mk->zgc->nbad != nbad)
		fail(mk, -ENOTSUP, "a stack chunk (0x%llx) with a reference no colour "
		     "explains", (unsigned long long)obj);
}

/* The helper's look-up (see its declaration above). */
static struct kinfo *helper_kinfo(struct mark *mk, uint64_t k)
{
	struct mark *a = mk->par->a;
	struct kinfo *ki = NULL;
	int64_t i;

	pthread_mutex_lock(&mk->par->mu);
	i = u64map_get(&a->kmap, k);
	if (i >= 0)
		ki = kinfo_at(a, (size_t)i);
	pthread_mutex_unlock(&mk->par->mu);
	if (!ki)
		mk->defer = true;
	return ki;
}

/* May the helper scan @obj of @ki? Not a loader (its data: the first's map),
 * a stack chunk (HotSpot's iteration), or a class object whose class the
 * first thread has not made (mk->defer set then). */
static bool helper_scans(struct mark *mk, const struct kinfo *ki, uint64_t obj)
{
	uint64_t k;

	if (ki->kind == MT_AP_K_LOADER || ki->kind == MT_AP_K_STACKCHUNK || ki->vthread) {
		mk->defer = true;
		return false;
	}
	if (ki->kind != MT_AP_K_MIRROR)
		return true;
	k = rd64(obj + (uint32_t)mk->L->m_klass);
	return !k || kinfo_get(mk, k) || !mk->defer;
}

/* The helper hands @obj (marked) to the first thread to scan. */
static void defer_obj(struct mark *mk, uint64_t obj)
{
	struct mpar *p = mk->par;

	mk->defer = false;
	pthread_mutex_lock(&p->mu);
	if (p->ndefer == p->cdefer) {
		size_t cap = p->cdefer ? 2 * p->cdefer : 1024;
		uint64_t *d = realloc(p->defer, cap * sizeof(*d));

		if (!d) {
			pthread_mutex_unlock(&p->mu);
			mk->err = -ENOMEM;
			return;
		}
		p->defer = d;
		p->cdefer = cap;
	}
	p->defer[p->ndefer] = obj;
	__atomic_store_n(&p->ndefer, p->ndefer + 1, __ATOMIC_RELAXED);
	pthread_cond_signal(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

/* Either thread's count of an instance of class @idx, @size bytes, while
 * two mark (added to the classes' at the end). */
static void par_count(struct mark *mk, uint32_t idx, uint64_t size)
{
	if (2 * (size_t)idx + 1 >= mk->nhcount) {
		size_t n = 2 * (size_t)idx + 2 > 2 * mk->nhcount ? 2 * (size_t)idx + 2 :
								      2 * mk->nhcount;
		uint64_t *c = realloc(mk->hcount, n * sizeof(*c));

		if (!c) {
			mk->err = -ENOMEM;
			return;
		}
		memset(c + mk->nhcount, 0, (n - mk->nhcount) * sizeof(*c));
		mk->hcount = c;
		mk->nhcount = n;
	}
	mk->hcount[2 * (size_t)idx]++;
	mk->hcount[2 * (size_t)idx + 1] += size;
}

/* Push the elements of chunk @chunk of object array @obj (@len elements,
 * class @ki); the chunks after it as one entry, first (scanned after them). */
static void scan_elements(struct mark *mk, const struct kinfo *ki, uint64_t obj, int32_t len,
			  uint32_t chunk)
{
	uint64_t from = (uint64_t)chunk * ARRAY_CHUNK, to = len > 0 ? (uint64_t)len : 0;
	uint64_t at = obj + (((uint32_t)ki->lh >> 16) & 0xff) + from * mk->oopsz;

	if (to > from + ARRAY_CHUNK && obj < (1ull << CHUNK_SHIFT)) {
		to = from + ARRAY_CHUNK;
		stack_push(mk, CHUNK_FLAG | (uint64_t)(chunk + 1) << CHUNK_SHIFT | obj);
	}
	for (uint64_t i = from; i < to; i++, at += mk->oopsz)
		mark_push(mk, load_oop(mk, at));
	mk->out->info.edges += to > from ? to - from : 0;
}

/* An array's chunk after its first (entry @e): counted with the first. */
static void scan_chunk(struct mark *mk, uint64_t e)
{
	uint64_t obj = ENTRY_ADDR(e);
	struct kinfo *ki = kinfo_get(mk, klass_of(mk, obj));

	if (!ki) {
		if (mk->defer)
			defer_obj(mk, e);
		else
			fail(mk, -EPROTO, "an array at 0x%llx lost its class",
			     (unsigned long long)obj);
		return;
	}
	if (ki->kind != MT_AP_K_OBJARRAY) {
		fail(mk, -EPROTO, "a chunk of 0x%llx, not an object array",
		     (unsigned long long)obj);
		return;
	}
	scan_elements(mk, ki, obj, rdi32(obj + (uint32_t)mk->L->length_off), CHUNK_OF(e));
}

static void scan(struct mark *mk, uint64_t obj)
{
	const struct mt_ap_heap_layout *L = mk->L;
	struct kinfo *ki;
	uint64_t size;
	int32_t len;

	if (obj & CHUNK_FLAG) {
		scan_chunk(mk, obj);
		return;
	}
	ki = kinfo_get(mk, klass_of(mk, obj));
	if (!ki || !check_fields(mk, ki) || (mk->helper && !helper_scans(mk, ki, obj))) {
		if (mk->defer)
			defer_obj(mk, obj);
		return;
	}
	size = obj_size(mk, ki, obj, &len);
	if (size < 8 || obj + size > mk->hi || len < -1) {
		fail(mk, -EPROTO, "an object at 0x%llx whose size makes no sense",
		     (unsigned long long)obj);
		return;
	}
	if (mk->par) { /* not into ki: the other thread reads its line on every object */
		par_count(mk, ki->idx, size);
	} else {
		ki->count++;
		ki->bytes += size;
	}
	mk->out->info.marked++;
	mk->out->info.bytes += size;
	if (ki->vthread) { /* the first thread's alone (the helper defers them) */
		uint64_t *v = vec_push(mk, &mk->vts);

		if (v)
			*v = obj;
	}
	switch (ki->kind) {
	case MT_AP_K_STACKCHUNK:
		if (!mk->L->sc_iterate) {
			fail(mk, -ENOTSUP, "a virtual thread's stack chunk at 0x%llx: JVMTI "
			     "walks this JVM", (unsigned long long)obj);
			return;
		}
		chunk_scan(mk, ki, obj, size);
		break; /* then its header's two references, in its oop map */
	case MT_AP_K_TYPEARRAY:
		return;
	case MT_AP_K_OBJARRAY:
		scan_elements(mk, ki, obj, len, 0);
		return;
	default:
		break;
	}
	for (uint32_t m = 0; m < ki->nmaps; m++) {
		uint64_t at = obj + (uint32_t)ki->maps[m].off;

		for (uint32_t i = 0; i < ki->maps[m].count; i++, at += mk->oopsz) {
			if (ki->kind == MT_AP_K_REF && ref_slot(mk, obj, at))
				continue;
			mark_push(mk, load_oop(mk, at));
			mk->out->info.edges++;
		}
	}
	if (ki->kind == MT_AP_K_REF) { /* referent and discovered: apart, as the collector */
		uint64_t referent = load_oop(mk, obj + (uint32_t)L->ref_referent);

		if (weak_referent(mk, ki))
			mk->out->info.weak += referent != 0;
		else
			mark_push(mk, referent);
		mark_push(mk, load_oop(mk, obj + (uint32_t)L->ref_discovered));
	}
	if (ki->kind == MT_AP_K_LOADER) /* a loader keeps what it defined */
		keep_cld(mk, rd64(obj + (uint32_t)L->loader_data));
	if (ki->kind == MT_AP_K_MIRROR) {
		int32_t n = rdi32(obj + L->m_static_count);
		uint64_t k = rd64(obj + (uint32_t)L->m_klass), at = obj + (uint32_t)L->m_statics;

		if (n < 0 || at + (uint64_t)n * mk->oopsz > obj + size) {
			fail(mk, -EPROTO, "a class object at 0x%llx whose statics make no sense",
			     (unsigned long long)obj);
			return;
		}
		for (int32_t i = 0; i < n; i++, at += mk->oopsz)
			mark_push(mk, load_oop(mk, at));
		mk->out->info.edges += (uint64_t)n;
		if (k) {
			const struct kinfo *mi = kinfo_get(mk, k); /* its loader's data */

			if (mi && mi->kind <= MT_AP_K_STACKCHUNK) { /* put_mirror()'s others */
				uint64_t ifs = rd64(k + L->ik_local_interfaces);
				int32_t ni = ifs ? rdi32(ifs + L->array_length) : 0;

				mk->extra += 2 + (uint32_t)(ni < 0 ? 0 : ni > 65536 ? 65536 : ni);
			}
		}
	}
}

/* Every JavaThread's java.lang.Thread (and, JDK 19+, its current virtual
 * thread): roots of the collector's that JVMTI leaves out for the threads it
 * hides. Those not marked yet become THREAD roots of their own. */
static void thread_roots(struct mark *mk)
{
	const struct mt_ap_heap_layout *L = mk->L;
	uint64_t tl = L->threads_list ? rd64(L->threads_list) : 0, threads;
	uint32_t n;

	if (!tl)
		return;
	n = rd32(tl + L->tl_length);
	threads = rd64(tl + L->tl_threads);
	for (uint32_t i = 0; i < n && i < (1u << 20) && threads && !mk->err; i++) {
		uint64_t jt = rd64(threads + 8ull * i);
		uint64_t objs[2] = { jt ? load_handle(mk, jt + L->jt_threadobj) : 0,
				     jt && L->jt_vthread ? load_handle(mk, jt + L->jt_vthread) : 0 };

		for (int k = 0; k < 2; k++) {
			struct mt_ap_hroot *r;

			if (!objs[k] || marked(mk, objs[k]))
				continue;
			mark_push(mk, objs[k]);
			r = vec_push(mk, &mk->xroots);
			if (r) {
				r->to = objs[k];
				r->kind = JVMTI_HEAP_REFERENCE_THREAD;
			}
		}
	}
}

#define PAR_START   (1u << 18) /* objects the first thread marks before the helper
				* starts (auto: a small heap is not worth a thread) */
#define SHARE_EVERY 256        /* objects between looks at the other thread */

/* Mark in two threads (see struct mpar)? Not where the heap's references
 * need state a load changes (ZGC's colours, forwarding); in->threads 1
 * never, 2-4 (tests) from the start. */
static bool par_wanted(const struct mark *mk)
{
	cpu_set_t cpus;

	if (mk->in->threads == 1 || mk->in->mark_one || mk->zgc || mk->forwarding)
		return false;
	if (mk->in->threads >= 2)
		return true;
	CPU_ZERO(&cpus);
	return !sched_getaffinity(0, sizeof(cpus), &cpus) && CPU_COUNT(&cpus) >= 2;
}

/* Move @n objects from @from to @mk's stack. 0 or -ENOMEM. */
static int take(struct mark *mk, const uint64_t *from, size_t n)
{
	if (mk->sp + n > mk->scap) {
		size_t cap = mk->scap ? mk->scap : 65536;
		uint64_t *st;

		while (cap < mk->sp + n)
			cap *= 2;
		st = realloc(mk->stack, cap * sizeof(*st));
		if (!st)
			return -ENOMEM;
		mk->stack = st;
		mk->scap = cap;
	}
	memcpy(mk->stack + mk->sp, from, n * sizeof(*from));
	mk->sp += n;
	return 0;
}

/* The first thread takes what the helper deferred onto its stack (under
 * the lock). */
static void take_deferred(struct mark *mk)
{
	struct mpar *p = mk->par;

	if (take(mk, p->defer, p->ndefer))
		mk->err = -ENOMEM;
	__atomic_store_n(&p->ndefer, 0, __ATOMIC_RELAXED);
}

/* Every SHARE_EVERY objects: the first takes what the helper deferred; a
 * thread the other asked gives it the older half of its stack (the roots of
 * what is still to mark: larger parts than the newest). */
static void share(struct mark *mk)
{
	struct mpar *p = mk->par;
	int other = mk->helper ? 0 : 1;

	if (!mk->helper && __atomic_load_n(&p->ndefer, __ATOMIC_RELAXED)) {
		pthread_mutex_lock(&p->mu);
		take_deferred(mk);
		pthread_mutex_unlock(&p->mu);
	}
	if (mk->sp < 2 || !__atomic_load_n(&p->want[other], __ATOMIC_ACQUIRE))
		return;
	pthread_mutex_lock(&p->mu);
	if (p->want[other] && !p->nxfer) {
		size_t k = mk->sp / 2;

		if (k > p->cxfer) {
			uint64_t *x = realloc(p->xfer, k * sizeof(*x));

			if (!x)
				goto out;
			p->xfer = x;
			p->cxfer = k;
		}
		memcpy(p->xfer, mk->stack, k * sizeof(*mk->stack));
		memmove(mk->stack, mk->stack + k, (mk->sp - k) * sizeof(*mk->stack));
		mk->sp -= k;
		p->nxfer = k;
		p->xfer_to = other;
		__atomic_store_n(&p->want[other], 0, __ATOMIC_RELEASE);
		pthread_cond_signal(&p->cv);
	}
out:
	pthread_mutex_unlock(&p->mu);
}

/* A thread out of objects: work handed over (true), or none anywhere and
 * both waiting, or a stop (false). */
static bool get_work(struct mark *mk)
{
	struct mpar *p = mk->par;
	int me = mk->helper ? 1 : 0;
	bool got = false, done = false;

	for (unsigned spins = 0;; spins++) {
		if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
			return false;
		pthread_mutex_lock(&p->mu);
		if (!me && p->ndefer) {
			take_deferred(mk);
			got = true;
		} else if (p->nxfer && p->xfer_to == me) {
			if (take(mk, p->xfer, p->nxfer))
				mk->err = -ENOMEM;
			got = true;
			p->nxfer = 0;
		} else {
			__atomic_store_n(&p->want[me], 1, __ATOMIC_RELEASE);
			/* both waiting, nothing handed over: the mark is done */
			done = __atomic_load_n(&p->want[!me], __ATOMIC_ACQUIRE) && !p->ndefer &&
			       !p->nxfer;
			if (done) {
				__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
				pthread_cond_signal(&p->cv);
			} else if (spins >= 64 && !mk->err) {
				/* asleep, not in sched_yield(): a thread that spun kept
				 * its CPU looking busy, and the one with the work
				 * shared the other with memtrace's fill of the pool
				 * (10 M objects: 110 ms of yields in the mark). Woken
				 * by what the other hands over, a 1 ms bound on it */
				struct timespec ts;

				clock_gettime(CLOCK_REALTIME, &ts);
				ts.tv_nsec += 1000000;
				if (ts.tv_nsec >= 1000000000) {
					ts.tv_sec++;
					ts.tv_nsec -= 1000000000;
				}
				pthread_cond_timedwait(&p->cv, &p->mu, &ts);
			}
		}
		if (got)
			__atomic_store_n(&p->want[me], 0, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&p->mu);
		if (mk->err) {
			__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
			return false;
		}
		if (got)
			return true;
		if (done)
			return false;
#if defined(__x86_64__) || defined(__i386__)
		if (spins < 64)
			__builtin_ia32_pause();
#endif
	}
}

/* Objects taken off the mark stack ahead of their scan. */
#define MARK_AHEAD 8

/* Scan what is on @mk's stack, and with a helper what the two hand over,
 * until none is left (or a stop). The first thread also tells the progress,
 * and starts the helper (@start, when there is none yet). */
static void mark_loop(struct mark *mk, int (*start)(struct mark *))
{
	const struct hm_input *in = mk->in;
	unsigned n = 0;

	uint64_t ahead[MARK_AHEAD]; /* taken off the stack, their headers fetched */
	unsigned head = 0, nahead = 0;

	for (;;) {
		while ((mk->sp || nahead) && !mk->err) {
			uint64_t obj;

			/* an object is scanned MARK_AHEAD objects after its header
			 * was asked for (each a cache miss; one ahead, as before,
			 * left most of it waited for: Tomcat's mark 134-159 ->
			 * 120-132 ms, FreezeWorkload's unchanged) */
			while (nahead < MARK_AHEAD && mk->sp) {
				obj = mk->stack[--mk->sp];
				__builtin_prefetch((const void *)(uintptr_t)ENTRY_ADDR(obj));
				ahead[(head + nahead++) % MARK_AHEAD] = obj;
			}
			obj = ahead[head];
			head = (head + 1) % MARK_AHEAD;
			nahead--;
			scan(mk, obj);
			if (++n & mk->share_mask)
				continue;
			if (mk->helper) {
				__atomic_store_n(&mk->par->b_marked, mk->out->info.marked,
						 __ATOMIC_RELAXED);
				__atomic_store_n(&mk->par->b_pushed, mk->pushed, __ATOMIC_RELAXED);
			} else if (!(n & PROGRESS_MASK)) {
				if (in->progress)
					(*in->progress)++;
				live_progress(mk);
			}
			if (!mk->par && start && mk->out->info.marked >= PAR_START && start(mk))
				start = NULL; /* none to be had: alone */
			if (mk->par) {
				if (__atomic_load_n(&mk->par->stop, __ATOMIC_ACQUIRE))
					return;
				share(mk);
			}
		}
		if (!mk->par || mk->err || !get_work(mk))
			return;
	}
}

/* The helper's thread. */
static void *mark_helper(void *arg)
{
	struct mark *mk = arg;

	mark_loop(mk, NULL);
	if (mk->err) /* the first thread stops too */
		__atomic_store_n(&mk->par->stop, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* The helper's marker (a copy of the first's, its own stack and counts)
 * and its thread. */
struct mhelp {
	struct mpar par;
	struct mark mk;
	struct hm_result out;
	pthread_t t;
};

/* Start the helper (mark_loop()'s start). 0, or -errno with none started. */
static int mark_start(struct mark *mk)
{
	struct mhelp *h = calloc(1, sizeof(*h));
	pthread_attr_t at;
	int err;

	if (!h)
		return -ENOMEM;
	if (pthread_mutex_init(&h->par.mu, NULL)) {
		free(h);
		return -EAGAIN;
	}
	if (pthread_cond_init(&h->par.cv, NULL)) {
		pthread_mutex_destroy(&h->par.mu);
		free(h);
		return -EAGAIN;
	}
	h->par.a = mk;
	memcpy(&h->mk, mk, sizeof(*mk));
	h->mk.out = &h->out;
	h->mk.stack = NULL;
	h->mk.sp = h->mk.scap = 0;
	h->mk.pushed = h->mk.extra = h->mk.classrefs = 0;
	h->mk.helper = true;
	h->mk.par = &h->par;
	h->mk.err = 0;
	mk->par = &h->par; /* from here on the bits are set atomically */
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 1u << 20);
	err = pthread_create(&h->t, &at, mark_helper, &h->mk);
	pthread_attr_destroy(&at);
	if (err) {
		mk->par = NULL;
		pthread_cond_destroy(&h->par.cv);
		pthread_mutex_destroy(&h->par.mu);
		free(h);
		return -err;
	}
	return 0;
}

/* The helper done: join it, add its counts to the first thread's, take its
 * reason if it failed. */
static void mark_join(struct mark *mk)
{
	struct mhelp *h = (struct mhelp *)(void *)((char *)mk->par - offsetof(struct mhelp, par));
	const struct mark *b = &h->mk;
	struct hm_info_sum { uint64_t *to, from; } sums[] = {
		{ &mk->out->info.marked, h->out.info.marked },
		{ &mk->out->info.bytes, h->out.info.bytes },
		{ &mk->out->info.edges, h->out.info.edges },
		{ &mk->out->info.weak, h->out.info.weak },
	};

	__atomic_store_n(&h->par.stop, 1, __ATOMIC_RELEASE);
	pthread_join(h->t, NULL);
	mk->par = NULL;
	if (!mk->err && b->err) {
		mk->err = b->err;
		memcpy(mk->out->info.why, h->out.info.why, sizeof(mk->out->info.why));
	}
	if (!mk->err && (h->par.ndefer || h->par.nxfer || b->sp))
		fail(mk, -EPROTO, "the mark's two threads stopped with objects left (%llu)",
		     (unsigned long long)(h->par.ndefer + h->par.nxfer + b->sp));
	for (size_t i = 0; i < sizeof(sums) / sizeof(sums[0]); i++)
		*sums[i].to += sums[i].from;
	mk->pushed += b->pushed;
	mk->extra += b->extra;
	for (const struct mark *t = mk; t; t = t == mk ? b : NULL)
		for (size_t i = 0; i + 1 < t->nhcount && i / 2 < mk->nk; i += 2) {
			struct kinfo *ki = kinfo_at(mk, i / 2);

			ki->count += t->hcount[i];
			ki->bytes += t->hcount[i + 1];
		}
	free(mk->hcount);
	mk->hcount = NULL;
	mk->nhcount = 0;
	mk->out->info.mark_threads = 2;
	mk->out->helper_marked = h->out.info.marked;
	free(b->stack);
	free(b->hcount);
	free(h->par.xfer);
	free(h->par.defer);
	pthread_cond_destroy(&h->par.cv);
	pthread_mutex_destroy(&h->par.mu);
	free(h);
}

static int mark_all(struct mark *mk)
{
	const struct hm_input *in = mk->in;
	bool two = par_wanted(mk);

	mk->out->info.mark_threads = 1;
	/* tests (threads 2-4): every 4 objects, so that small heaps share */
	mk->share_mask = in->threads >= 2 ? 3 : SHARE_EVERY - 1;
	for (size_t i = 0; i < in->nroots && !mk->err; i++)
		mark_push(mk, in->roots[i].to); /* outside the heap: fails */
	if (!mk->err)
		thread_roots(mk);
	if (two && in->threads >= 2 && !mk->err && !mark_start(mk)) {
		two = false; /* tests: from the start (started: no later start), */
		while (!__atomic_load_n(&mk->par->want[1], __ATOMIC_ACQUIRE))
			sched_yield(); /* once the helper asks (a small heap is
					* marked before a thread starts) */
	}
	mark_loop(mk, two ? mark_start : NULL);
	if (mk->par)
		mark_join(mk);
	live_progress(mk);
	return mk->err;
}

/* ---- the records ---- */

/* Set bits of @x: the POPCNT instruction where the CPU has it (every x86-64
 * since 2008; the agent is built for any x86-64, so GCC's builtin is a
 * libgcc call - 6% of the copy's time at 5 M objects, one per reference). */
static bool have_popcnt;

static inline uint32_t pop64(uint64_t x)
{
#if defined(__x86_64__)
	if (__builtin_expect(have_popcnt, 1)) {
		uint64_t r;

		__asm__("popcnt %1, %0" : "=r"(r) : "rm"(x) : "cc");
		return (uint32_t)r;
	}
#endif
	return (uint32_t)__builtin_popcountll(x);
}

static int build_rank(struct mark *mk)
{
	uint32_t r = 0;

	mk->rank = malloc((mk->nwords + 1) * sizeof(*mk->rank));
	if (!mk->rank)
		return -ENOMEM;
	huge_inside(mk->rank, (mk->nwords + 1) * sizeof(*mk->rank),
		    mk->in->flags & HM_SMALLPAGES);
	for (size_t w = 0; w < mk->nwords; w++) {
		mk->rank[w] = r;
		r += pop64(mk->bits[w]);
	}
	mk->rank[mk->nwords] = r;
	return 0;
}

/* The position of marked object @a among the marked (its rank in address
 * order). */
static uint32_t pos_of(const struct mark *mk, uint64_t a)
{
	size_t b = bit_of(mk, a);

	return (uint32_t)(mk->rank[b >> 6] + pop64(mk->bits[b >> 6] & ((1ull << (b & 63)) - 1)));
}

/* The id of marked object @a. */
static uint64_t id_of(const struct mark *mk, uint64_t a);

/* @ki's class object's id and position, once per class (0: not marked). */
static void mirror_known(const struct mark *mk, struct kinfo *ki)
{
	ki->mirror_id = ki->mirror && marked(mk, ki->mirror) ? id_of(mk, ki->mirror) : 0;
	ki->mirror_pos = ki->mirror_id ? pos_of(mk, ki->mirror) : 0;
	ki->has_mirror_id = true;
}

static uint64_t id_of(const struct mark *mk, uint64_t a)
{
	size_t h = u64hash(a) >> 48, b;
	int64_t n = mk->named_bits[h >> 6] & (1ull << (h & 63)) ? u64map_get(&mk->named, a) : -1;

	if (n >= 0 && !mk->in->named[n].sample)
		return mk->in->named[n].id;
	b = bit_of(mk, a);
	return mk->in->next_id + mk->rank[b >> 6] +
	       pop64(mk->bits[b >> 6] & ((1ull << (b & 63)) - 1));
}

/* A reference record by position (HM_REFPOS: the referrer implied). */
static void put_pos(struct mark *mk, uint32_t pos, int32_t index, uint32_t kind)
{
	struct mt_ap_hrefpos *p = vec_push(mk, &mk->refs);

	if (p) {
		p->to = pos;
		p->index = index;
		p->kind = kind;
	}
}

static void put_ref(struct mark *mk, uint64_t from, uint64_t to, int32_t index, uint32_t kind)
{
	struct mt_ap_href *r;

	if (!to || !marked(mk, to))
		return;
	if (mk->refpos) {
		put_pos(mk, pos_of(mk, to), index, kind);
		return;
	}
	r = vec_push(mk, &mk->refs);
	if (!r)
		return;
	r->from = from;
	r->to = id_of(mk, to);
	r->index = index;
	r->kind = kind;
}

/* The field at byte @off of @fields (sorted by offset), or NULL. */
static const struct hm_field *field_at(const struct hm_field *f, uint32_t n, uint32_t off)
{
	uint32_t lo = 0, hi = n;

	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (f[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && f[lo].off == off ? &f[lo] : NULL;
}

static bool wants(const struct mark *mk, const struct hm_field *f)
{
	return (mk->in->flags & HM_REFS) || (f && f->projected);
}

/* An instance's reference fields as FIELD edges (a class object's own fields
 * as FollowReferences names them). */
static void put_fields(struct mark *mk, const struct kinfo *ki, uint64_t obj, uint64_t id)
{
	const struct mt_ap_heap_layout *L = mk->L;
	const struct hm_field *fields = ki->cls ? ki->cls->fields : NULL;
	uint32_t nfields = ki->cls ? ki->cls->nfields : 0;

	if (ki->kind == MT_AP_K_MIRROR) {
		fields = mk->in->class_fields;
		nfields = mk->in->nclass_fields;
	}
	for (uint32_t m = 0; m < ki->nmaps && !mk->err; m++) {
		uint32_t off = (uint32_t)ki->maps[m].off;

		for (uint32_t i = 0; i < ki->maps[m].count; i++, off += mk->oopsz) {
			const struct hm_field *f = field_at(fields, nfields, off);
			uint32_t kind = JVMTI_HEAP_REFERENCE_FIELD;

			if (ki->kind == MT_AP_K_REF && ref_slot(mk, obj, obj + off))
				continue; /* below */
			if (ki->kind == MT_AP_K_MIRROR) {
				if ((int32_t)off == L->m_loader)
					kind = JVMTI_HEAP_REFERENCE_CLASS_LOADER;
				else if ((int32_t)off == L->m_pd)
					kind = JVMTI_HEAP_REFERENCE_PROTECTION_DOMAIN;
				else if ((int32_t)off == L->m_signers)
					kind = JVMTI_HEAP_REFERENCE_SIGNERS;
			}
			if (kind == JVMTI_HEAP_REFERENCE_FIELD && !wants(mk, f))
				continue;
			if (kind != JVMTI_HEAP_REFERENCE_FIELD && !(mk->in->flags & HM_REFS))
				continue;
			put_ref(mk, id, load_oop(mk, obj + off),
				kind == JVMTI_HEAP_REFERENCE_FIELD && f ? f->index : -1, kind);
		}
	}
	if (ki->kind == MT_AP_K_REF) { /* as FollowReferences reports them: fields */
		uint32_t two[2] = { (uint32_t)L->ref_referent, (uint32_t)L->ref_discovered };

		for (int i = 0; i < 2 && !mk->err; i++) {
			const struct hm_field *f = field_at(fields, nfields, two[i]);

			if (wants(mk, f))
				put_ref(mk, id, load_oop(mk, obj + two[i]), f ? f->index : -1,
					JVMTI_HEAP_REFERENCE_FIELD);
		}
	}
}

/* A class object's edges besides its own fields: statics, super, interfaces,
 * its constant pool's resolved references. */
static void put_mirror(struct mark *mk, uint64_t obj, uint64_t id)
{
	const struct mt_ap_heap_layout *L = mk->L;
	uint64_t k = rd64(obj + (uint32_t)L->m_klass), at = obj + (uint32_t)L->m_statics;
	int32_t n = rdi32(obj + L->m_static_count);
	const struct kinfo *ki = k ? kinfo_get(mk, k) : NULL;
	const struct hm_class *c = ki ? ki->cls : NULL;

	for (uint32_t i = 0; c && i < c->nstatics; i++)
		if (c->statics[i].off < (uint32_t)L->m_statics ||
		    c->statics[i].off >= (uint32_t)L->m_statics + (uint32_t)(n > 0 ? n : 0) * mk->oopsz) {
			fail(mk, -EPROTO, "static fields of class 0x%llx outside its class object",
			     (unsigned long long)k);
			return;
		}

	for (int32_t i = 0; i < n; i++, at += mk->oopsz) {
		const struct hm_field *f = c ? field_at(c->statics, c->nstatics,
							(uint32_t)(at - obj)) : NULL;

		if (wants(mk, f))
			put_ref(mk, id, load_oop(mk, at), f ? f->index : -1,
				JVMTI_HEAP_REFERENCE_STATIC_FIELD);
	}
	if (!ki || !(mk->in->flags & HM_REFS))
		return;
	if (ki->kind <= MT_AP_K_STACKCHUNK) {
		uint64_t sup = rd64(k + L->k_super), ifs = rd64(k + L->ik_local_interfaces);
		uint64_t cp = rd64(k + L->ik_constants), cache = cp ? rd64(cp + L->cp_cache) : 0;

		if (sup)
			put_ref(mk, id, load_handle(mk, sup + L->k_java_mirror), -1,
				JVMTI_HEAP_REFERENCE_SUPERCLASS);
		if (ifs) {
			int32_t ni = rdi32(ifs + L->array_length);

			for (int32_t i = 0; i < ni && i < 65536; i++) {
				uint64_t ik = rd64(ifs + L->array_data + 8ull * (uint32_t)i);

				if (ik)
					put_ref(mk, id, load_handle(mk, ik + L->k_java_mirror), -1,
						JVMTI_HEAP_REFERENCE_INTERFACE);
			}
		}
		if (cache)
			put_ref(mk, id, load_handle(mk, cache + L->cpc_resolved_refs), -1,
				JVMTI_HEAP_REFERENCE_CONSTANT_POOL);
	}
}

static void put_prims(struct mark *mk, const struct kinfo *ki, uint64_t obj, uint64_t id)
{
	const struct hm_class *c = ki->cls;

	for (uint32_t i = 0; c && i < c->nfields; i++) {
		const struct hm_field *f = &c->fields[i];
		struct mt_ap_hprim *p;
		uint64_t bits = 0;

		if (!f->projected || f->type == 'L' || f->type == '[')
			continue;
		switch (f->type) { /* as the JVMTI walk sends them: 64-bit integers, a double */
		case 'Z':
			bits = *(const uint8_t *)(uintptr_t)(obj + f->off);
			break;
		case 'B':
			bits = (uint64_t)(int64_t)*(const int8_t *)(uintptr_t)(obj + f->off);
			break;
		case 'C':
			bits = *(const uint16_t *)(uintptr_t)(obj + f->off);
			break;
		case 'S':
			bits = (uint64_t)(int64_t)*(const int16_t *)(uintptr_t)(obj + f->off);
			break;
		case 'I':
			bits = (uint64_t)(int64_t)rdi32(obj + f->off);
			break;
		case 'F': {
			float fl;
			double d;

			memcpy(&fl, (const void *)(uintptr_t)(obj + f->off), 4);
			d = fl;
			memcpy(&bits, &d, 8);
			break;
		}
		case 'J': case 'D':
			bits = rd64(obj + f->off);
			break;
		default:
			continue;
		}
		p = vec_push(mk, &mk->prims);
		if (!p)
			return;
		p->obj = id;
		p->bits = bits;
		p->index = f->index;
		p->type = (uint32_t)f->type;
	}
}

static char *arena_take(struct mark *mk, size_t n)
{
	char *p;

	if (n > mk->arena_left) {
		size_t sz = n > (1u << 20) ? n : (1u << 20);
		char **a = realloc(mk->arena, (mk->narena + 1) * sizeof(*a));

		if (!a)
			return NULL;
		mk->arena = a;
		a[mk->narena] = malloc(sz);
		if (!a[mk->narena])
			return NULL;
		mk->arena_at = a[mk->narena++];
		mk->arena_left = sz;
	}
	p = mk->arena_at;
	mk->arena_at += n;
	mk->arena_left -= n;
	return p;
}

size_t heapmark_utf8(const uint16_t *s, size_t n, char *out, size_t max, bool *cut)
{
	size_t o = 0;

	*cut = false;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = s[i];
		size_t need;

		if (c >= 0xd800 && c < 0xdc00 && i + 1 < n && s[i + 1] >= 0xdc00 && s[i + 1] < 0xe000) {
			c = 0x10000 + ((c - 0xd800) << 10) + (s[i + 1] - 0xdc00);
			i++;
		} else if (c >= 0xd800 && c < 0xe000) {
			c = 0xfffd;
		}
		need = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
		if (o + need > max) {
			*cut = true;
			break;
		}
		if (need == 1) {
			out[o++] = (char)c;
		} else if (need == 2) {
			out[o++] = (char)(0xc0 | (c >> 6));
			out[o++] = (char)(0x80 | (c & 0x3f));
		} else if (need == 3) {
			out[o++] = (char)(0xe0 | (c >> 12));
			out[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[o++] = (char)(0x80 | (c & 0x3f));
		} else {
			out[o++] = (char)(0xf0 | (c >> 18));
			out[o++] = (char)(0x80 | ((c >> 12) & 0x3f));
			out[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			out[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	out[o] = '\0';
	return o;
}

/* A java.lang.String's value (compact strings: LATIN1 bytes or UTF-16). */
static void put_string(struct mark *mk, uint64_t obj, uint64_t id)
{
	const struct mt_ap_heap_layout *L = mk->L;
	uint64_t val = load_oop(mk, obj + (uint32_t)L->str_value);
	uint8_t coder = *(const uint8_t *)(uintptr_t)(obj + (uint32_t)L->str_coder);
	struct kinfo *vk;
	struct mt_ap_hstrref *s;
	uint32_t n, chars;
	uint64_t data;
	uint16_t *u16;
	bool cut;
	char *o;

	if (!val || !marked(mk, val))
		return;
	vk = kinfo_get(mk, klass_of(mk, val));
	if (!vk || vk->kind != MT_AP_K_TYPEARRAY)
		return;
	n = rd32(val + L->length_off);
	data = val + (((uint32_t)vk->lh >> 16) & 0xff);
	chars = coder ? n / 2 : n;
	u16 = malloc((chars ? chars : 1) * sizeof(*u16));
	o = u16 ? arena_take(mk, (chars < MT_AP_HSTR_MAX / 3 ? chars * 3 : MT_AP_HSTR_MAX) + 1)
		: NULL;
	s = o ? vec_push(mk, &mk->strs) : NULL;
	if (!s) {
		free(u16);
		mk->err = -ENOMEM;
		return;
	}
	for (uint32_t i = 0; i < chars; i++)
		u16[i] = coder ? ((const uint16_t *)(uintptr_t)data)[i]
			       : ((const uint8_t *)(uintptr_t)data)[i];
	s->obj = id;
	s->len = (uint32_t)heapmark_utf8(u16, chars,
				 o, chars < MT_AP_HSTR_MAX / 3 ? chars * 3 : MT_AP_HSTR_MAX, &cut);
	s->utf8 = (uint64_t)(uintptr_t)o;
	mk->out->info.truncated += cut;
	/* give back what the string did not use */
	mk->arena_left += (size_t)((chars < MT_AP_HSTR_MAX / 3 ? chars * 3 : MT_AP_HSTR_MAX) -
				   s->len);
	mk->arena_at = o + s->len + 1;
	free(u16);
}

static void put_object(struct mark *mk, uint64_t obj)
{
	uint32_t fl = mk->in->flags;
	struct kinfo *ki = kinfo_get(mk, klass_of(mk, obj));
	struct mt_ap_hobj *o = NULL;
	size_t r0 = mk->refs.n;
	uint32_t cref = 0;
	uint64_t id, size;
	int32_t len;

	if (!ki)
		return;
	id = id_of(mk, obj);
	size = obj_size(mk, ki, obj, &len);
	if (fl & HM_OBJS) {
		o = vec_push(mk, &mk->objs);
		if (!o)
			return;
		o->id = id;
		if (!ki->has_mirror_id) /* once per class, not per object */
			mirror_known(mk, ki);
		o->cls = ki->mirror_id;
		o->size = size;
		o->length = len;
		/* the CLASS reference goes with the object, not as a record */
		if ((fl & HM_REFS) && ki->kind != MT_AP_K_MIRROR && o->cls && !mk->refpos) {
			o->flags = MT_AP_HOBJ_CLASSREF;
			mk->classrefs++;
			if ((int64_t)mk->classrefs - (int64_t)mk->refs.n > mk->lead_max)
				mk->lead_max = (int64_t)mk->classrefs - (int64_t)mk->refs.n;
		}
		if (fl & HM_ADDRS) {
			uint64_t *a = vec_push(mk, &mk->addrs);

			if (a)
				*a = obj;
		}
	}
	/* as JVMTI: a CLASS reference from every object but a class object; with
	 * its object (MT_AP_HOBJ_CLASSREF) when objects are sent too, but for
	 * references by position (the object's first) */
	if ((fl & HM_REFS) && ki->kind != MT_AP_K_MIRROR && !(fl & HM_OBJS)) {
		put_ref(mk, id, ki->mirror, -1, JVMTI_HEAP_REFERENCE_CLASS);
	} else if (mk->refpos && ki->kind != MT_AP_K_MIRROR && ki->mirror_id) {
		if (mk->noclass) /* implied: its record says (below) */
			cref = MT_AP_HOBJ_POS_CLASS;
		else
			put_pos(mk, ki->mirror_pos, -1, JVMTI_HEAP_REFERENCE_CLASS); /* its class's */
		mk->classrefs++; /* among the records or implied (info.classrefs) */
	}
	if (fl & (HM_REFS | HM_PRIMS)) {
		if (ki->kind == MT_AP_K_OBJARRAY) {
			if (fl & HM_REFS) {
				uint64_t at = obj + (((uint32_t)ki->lh >> 16) & 0xff);

				for (int32_t i = 0; i < len && !mk->err; i++, at += mk->oopsz)
					put_ref(mk, id, load_oop(mk, at), i,
						JVMTI_HEAP_REFERENCE_ARRAY_ELEMENT);
			}
		} else if (ki->kind < MT_AP_K_TYPEARRAY) {
			put_fields(mk, ki, obj, id);
			if (ki->kind == MT_AP_K_MIRROR)
				put_mirror(mk, obj, id);
		}
	}
	if ((fl & HM_PRIMS) && ki->cls && ki->kind < MT_AP_K_TYPEARRAY)
		put_prims(mk, ki, obj, id);
	if ((fl & HM_STRINGS) && ki->klass == mk->L->string_klass)
		put_string(mk, obj, id);
	if (o && mk->refpos) /* its references' count (its record is where it was) */
		o->flags = (uint32_t)(mk->refs.n - r0) | cref;
}

/* The records of the objects marked in bit words [@w0, @w1). */
static void emit_words(struct mark *mk, size_t w0, size_t w1)
{
	uint64_t done = 0;
	for (size_t w = w0; w < w1 && !mk->err; w++) {
		for (uint64_t bits = mk->bits[w]; bits && !mk->err; bits &= bits - 1) {
			size_t b = (w << 6) + (size_t)__builtin_ctzll(bits);

			put_object(mk, mk->lo + ((uint64_t)b << mk->shift));
			if (!(++done & PROGRESS_MASK)) {
				if (!mk->ro && !mk->split)
					live_counts(mk);
				if (mk->in->progress) /* both threads bump it */
					__atomic_fetch_add((uint64_t *)(uintptr_t)mk->in->progress,
							   1, __ATOMIC_RELAXED);
			}
		}
	}
}

/* ---- the records in two threads ---- */

/*
 * Whether the records' pass takes two threads: hm_input.threads says, or
 * (0) when the copy may use two CPUs, has marked a million objects or more
 * and writes object and reference records both in memtrace's pool (their
 * places known before a record is written), and besides them at most
 * primitive values (each thread its own, appended after: a query reading a
 * field `size` projects ArrayList's and HashMap's); strings (an arena both
 * would grow) and ZGC's colours are state the pass changes.
 */
static bool split_wanted(const struct mark *mk)
{
	const struct hm_input *in = mk->in;
	cpu_set_t cpus;

	if (in->threads == 1 || mk->zgc || !mk->objs.pooled || !mk->refs.pooled ||
	    (in->flags & (HM_STRINGS | HM_ADDRS)) || !(in->flags & HM_OBJS) ||
	    !(in->flags & HM_REFS) || mk->objs.cap != mk->out->info.marked)
		return false;
	if (in->threads >= 2)
		return true;
	if (mk->out->info.marked < SPLIT_MIN)
		return false;
	CPU_ZERO(&cpus);
	return !sched_getaffinity(0, sizeof(cpus), &cpus) && CPU_COUNT(&cpus) >= 2;
}

/*
 * The records in two threads, in blocks of bit words (SPLIT_BLOCKS over the
 * heap, block_words()): the first thread takes blocks from the heap's
 * start upwards, the second from its end downwards, each the next not taken,
 * until they meet - whichever gets more of the CPUs writes more. A static
 * split at half the work left one thread ~100 ms alone at 10 M objects
 * (memtrace's fill of the pool and the copy's nice shared a CPU with one).
 * Each block's objects go to their ranks; its references to a buffer of the
 * thread's own, then to the pool: the first thread's from the references'
 * start up, the second's from the end of their room down, both taken under
 * the lock (struct split). The second's are moved down to the first's at the
 * end. Values (HM_PRIMS) go with the block, the second thread's appended in
 * the blocks' order after.
 */
struct blkout {
	uint64_t classrefs;        /* the block's CLASS references (info.classrefs) */
	uint64_t nrefs;            /* its reference records */
	int64_t lead;              /* the most classrefs - records before, within it
				    * (INT64_MIN: no object with MT_AP_HOBJ_CLASSREF) */
	size_t prim_at, nprim;     /* its values in its thread's (read for the second's) */
};

struct split {
	pthread_mutex_t mu;
	size_t lo, hi;             /* blocks [lo, hi) not taken yet */
	size_t rlo, rhi;           /* reference slots [rlo, rhi) free */
	bool full;                 /* a block's references did not fit: all again in one */
	int started;               /* atomic: the second took a block (tests wait for it) */
	char *obase, *rbase;       /* the pool's objects and references */
	size_t oesz, resz;
	struct blkout *blk;
};

/* The second thread: a copy of the marker with vectors of its own. */
struct half {
	struct mark mk;
	struct hm_result out;      /* its reason, if it stops */
	uint64_t nfwd;
	struct split *sp;
	size_t low;                /* the lowest block it wrote an object of */
};

/* Bit words [*@w0, *@w1) of block @b. */
static void block_words(const struct mark *mk, size_t b, size_t *w0, size_t *w1)
{
	*w0 = b << mk->blkshift;
	*w1 = *w0 + ((size_t)1 << mk->blkshift) < mk->nwords ? *w0 + ((size_t)1 << mk->blkshift)
							      : mk->nwords;
}

/* Copy @n bytes from @src to @dst in the pool, its pages mapped in one call
 * first. (Written through the pool's file instead, no page of it mapped in
 * the copy, the records took longer: 10 M objects, 385-390 ms against
 * 330-340, the kernel's copy slower than this one.) */
static void pool_put(char *dst, const char *src, size_t n)
{
	uintptr_t a = (uintptr_t)dst & ~(uintptr_t)4095;

	if (!n)
		return;
	madvise((void *)a, (uintptr_t)dst + n - a, MADV_POPULATE_WRITE);
	memcpy(dst, src, n);
}

/*
 * Block @b's records by @mk (@up: the first thread's, else the second's):
 * its objects at their ranks, its references into @mk's buffer (mk->refs,
 * malloc'd), then at their place, taken under the lock. 0, or -ENOSPC: they
 * did not fit (sp->full set), or mk->err.
 */
static int emit_block(struct mark *mk, struct split *sp, size_t b, bool up)
{
	struct blkout *o = &sp->blk[b];
	size_t w0, w1, at, first, n;
	uint64_t prims = mk->prims.n;

	block_words(mk, b, &w0, &w1);
	first = mk->rank[w0];
	n = mk->rank[w1] - first;
	mk->objs = (struct growvec){ .p = sp->obase + first * sp->oesz, .cap = n,
				     .esz = sp->oesz, .pooled = true, .pop_at = n };
	if (n)
		madvise((void *)((uintptr_t)mk->objs.p & ~(uintptr_t)4095),
			((uintptr_t)mk->objs.p & 4095) + n * sp->oesz, MADV_POPULATE_WRITE);
	mk->refs.n = 0;
	mk->classrefs = 0;
	mk->lead_max = INT64_MIN;
	emit_words(mk, w0, w1);
	if (mk->err)
		return mk->err;
	if (mk->objs.n != n || !mk->objs.pooled) {
		fail(mk, -EPROTO, "a block of the records holds %llu objects, not the marked",
		     (unsigned long long)mk->objs.n);
		return mk->err;
	}
	o->classrefs = mk->classrefs;
	o->nrefs = mk->refs.n;
	o->lead = mk->lead_max;
	o->prim_at = prims;
	o->nprim = mk->prims.n - prims;
	pthread_mutex_lock(&sp->mu);
	if (sp->full || sp->rhi - sp->rlo < mk->refs.n) {
		sp->full = true;
		pthread_mutex_unlock(&sp->mu);
		return -ENOSPC;
	}
	if (up) {
		at = sp->rlo;
		sp->rlo += mk->refs.n;
	} else {
		sp->rhi -= mk->refs.n;
		at = sp->rhi;
	}
	pthread_mutex_unlock(&sp->mu);
	pool_put(sp->rbase + at * sp->resz, mk->refs.p, mk->refs.n * sp->resz);
	if (up && mk->in->live) { /* the first's records are whole from the start */
		live_store(&mk->in->live->nobjs, mk->rank[w1]);
		live_store(&mk->in->live->nrefs, sp->rlo);
	}
	return 0;
}

/* The next block not taken (@up: the lowest, else the highest), or -1. */
static ssize_t take_block(struct split *sp, bool up)
{
	ssize_t b = -1;

	pthread_mutex_lock(&sp->mu);
	if (sp->lo < sp->hi && !sp->full)
		b = up ? (ssize_t)sp->lo++ : (ssize_t)--sp->hi;
	pthread_mutex_unlock(&sp->mu);
	if (!up)
		__atomic_store_n(&sp->started, 1, __ATOMIC_RELEASE);
	return b;
}

/* Either thread's blocks until none is left. The second gives back a block
 * it cannot write (a class the mark never met: -EAGAIN) and stops. */
static void emit_blocks(struct mark *mk, struct split *sp, bool up, size_t *low)
{
	ssize_t b;

	while ((b = take_block(sp, up)) >= 0) {
		int err = emit_block(mk, sp, (size_t)b, up);

		if (!up && !err && mk->objs.n)
			*low = (size_t)b; /* (a block of no object: the first's as well) */
		if (err == -EAGAIN && !up) {
			pthread_mutex_lock(&sp->mu);
			sp->hi = (size_t)b + 1; /* the first writes it, and those below */
			pthread_mutex_unlock(&sp->mu);
			mk->prims.n = sp->blk[b].prim_at;
			return;
		}
		if (err)
			return;
	}
}

static void *emit_half(void *arg)
{
	struct half *h = arg;

	emit_blocks(&h->mk, h->sp, false, &h->low);
	return NULL;
}

/*
 * A thread's buffer for a block's references (emit_block()): room for as
 * many as the records may hold (@n of @esz bytes), reserved and touched only
 * as used, so that it never moves as it grows; in 2 MiB pages unless
 * @small. A block holding one array of millions (a table's) grew a buffer
 * grown by realloc to 60 MiB in 4 KiB faults, ~15 k of them at ~10 us each
 * on a PVM guest, reused for the blocks after. NULL: none (the buffer then
 * grows as any vector).
 */
static char *block_buffer(size_t n, size_t esz, bool small)
{
	size_t bytes = n * esz;
	void *p;

	if (!n || bytes / esz != n)
		return NULL;
	p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		 -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (!small)
		madvise(p, bytes, MADV_HUGEPAGE);
	return p;
}

/* @v's memory: @buf (block_buffer()'s, @bytes; NULL: none) and what @v
 * holds if it is not @buf (grown out of it, or its own from the start). */
static void block_buffer_free(struct growvec *v, char *buf, size_t bytes)
{
	if (v->p != buf)
		free(v->p);
	if (buf)
		munmap(buf, bytes);
	v->p = NULL;
}

/*
 * The records in two threads (see struct split). Returns 0 (the records
 * written, or mk->err set) or -EAGAIN: nothing kept, write them all in one
 * thread (the vectors as they were).
 */
static int emit_split(struct mark *mk)
{
	size_t nblk = ((mk->nwords - 1) >> mk->blkshift) + 1;
	struct growvec objs = mk->objs, refs = mk->refs;
	struct split sp = { .obase = objs.p, .rbase = refs.p, .oesz = objs.esz,
			    .resz = refs.esz, .lo = 0, .hi = nblk, .rlo = 0, .rhi = refs.cap };
	struct half *h = NULL;
	char *buf[2] = { NULL, NULL };
	uint64_t C = 0, R = 0;
	pthread_attr_t at;
	pthread_t t;
	int err = -EAGAIN;

	if (objs.n || refs.n || nblk < 2 || pthread_mutex_init(&sp.mu, NULL))
		return -EAGAIN;
	sp.blk = calloc(nblk, sizeof(*sp.blk));
	h = malloc(sizeof(*h));
	if (!sp.blk || !h) {
		free(sp.blk);
		free(h);
		pthread_mutex_destroy(&sp.mu);
		return -EAGAIN;
	}
	if (mk->in->threads == 4)
		sp.rhi = 1; /* tests: the references outgrow their room */
	for (size_t i = 0; i < mk->nk; i++) /* what put_object() would learn */
		mirror_known(mk, kinfo_at(mk, i));
	memcpy(&h->mk, mk, sizeof(*mk));
	memset(&h->out, 0, sizeof(h->out));
	h->nfwd = 0;
	h->sp = &sp;
	h->low = nblk;
	h->mk.out = &h->out;
	h->mk.nfwd = &h->nfwd;
	h->mk.ro = true;
	if (mk->in->threads == 3) { /* tests: a second thread that knows no class */
		static uint64_t no_key;
		static uint32_t no_val;

		h->mk.kmap = (struct u64map){ .keys = &no_key, .vals = &no_val, .mask = 0 };
		memset(h->mk.kcache, 0, sizeof(h->mk.kcache));
	}
	/* each its buffer for a block's references, its values apart */
	h->mk.refs = mk->refs = (struct growvec){ .esz = refs.esz };
	buf[0] = block_buffer(refs.cap, refs.esz, mk->in->flags & HM_SMALLPAGES);
	buf[1] = buf[0] ? block_buffer(refs.cap, refs.esz, mk->in->flags & HM_SMALLPAGES) : NULL;
	if (buf[0] && !buf[1]) {
		munmap(buf[0], refs.cap * refs.esz);
		buf[0] = NULL;
	}
	if (buf[1]) { /* pooled: never grown, moved or freed by vec_push() */
		mk->refs = (struct growvec){ .p = buf[0], .cap = refs.cap, .esz = refs.esz,
					     .pooled = true, .pop_at = refs.cap };
		h->mk.refs = (struct growvec){ .p = buf[1], .cap = refs.cap, .esz = refs.esz,
					       .pooled = true, .pop_at = refs.cap };
	}
	h->mk.prims = (struct growvec){ .esz = mk->prims.esz };
	mk->split = h->mk.split = true;
	pthread_attr_init(&at);
	pthread_attr_setstacksize(&at, 1u << 20);
	err = pthread_create(&t, &at, emit_half, h);
	pthread_attr_destroy(&at);
	if (err) {
		err = -EAGAIN;
		goto restore;
	}
	if (mk->in->threads >= 2) /* tests: the second takes a block first */
		while (!__atomic_load_n(&sp.started, __ATOMIC_ACQUIRE))
			sched_yield();
	emit_blocks(mk, &sp, true, NULL);
	pthread_join(t, NULL);
	/* blocks the second gave back after the first had stopped */
	for (size_t b = sp.lo; b < sp.hi && !mk->err && !sp.full; b++)
		emit_block(mk, &sp, b, true);
	if (!mk->err && h->mk.err && h->mk.err != -EAGAIN) { /* its reason */
		mk->err = h->mk.err;
		memcpy(mk->out->info.why, h->out.info.why, sizeof(mk->out->info.why));
	}
	if (mk->err || sp.full) {
		err = mk->err ? 0 : -EAGAIN; /* not all fit: all again, in one thread */
		goto restore;
	}
	/* the second's references down onto the first's */
	if (sp.rhi > sp.rlo && refs.cap > sp.rhi)
		memmove(sp.rbase + sp.rlo * sp.resz, sp.rbase + sp.rhi * sp.resz,
			(refs.cap - sp.rhi) * sp.resz);
	block_buffer_free(&mk->refs, buf[0], refs.cap * refs.esz);
	mk->refs = refs;
	mk->refs.n = sp.rlo + (refs.cap - sp.rhi);
	mk->objs = objs;
	mk->objs.n = objs.cap;
	mk->objs.pop_at = objs.cap;
	mk->split = false;
	mk->lead_max = 0;
	for (size_t b = 0; b < nblk; b++) { /* the blocks in their order */
		const struct blkout *o = &sp.blk[b];

		if (o->lead != INT64_MIN && (int64_t)C - (int64_t)R + o->lead > mk->lead_max)
			mk->lead_max = (int64_t)C - (int64_t)R + o->lead;
		C += o->classrefs;
		R += o->nrefs;
		for (size_t i = 0; b >= h->low && i < o->nprim && !mk->err; i++) {
			void *v = vec_push(mk, &mk->prims);

			if (v)
				memcpy(v, h->mk.prims.p + (o->prim_at + i) * h->mk.prims.esz,
				       h->mk.prims.esz);
		}
	}
	mk->classrefs = C;
	mk->out->info.emit_threads = h->low < nblk ? 2 : 1;
	err = 0;
	goto cleanup;
restore: /* the vectors as they were (mk->err, or all again in one thread) */
	block_buffer_free(&mk->refs, buf[0], refs.cap * refs.esz);
	mk->refs = refs;
	mk->objs = objs;
	mk->split = false;
	mk->classrefs = 0;
	mk->lead_max = 0;
	mk->prims.n = 0;
cleanup:
	if (h) {
		block_buffer_free(&h->mk.refs, buf[1], refs.cap * refs.esz);
		free(h->mk.prims.p);
	}
	free(h);
	free(sp.blk);
	pthread_mutex_destroy(&sp.mu);
	return err;
}

/* Each chunk's marker root (chunk_scan(): `to` its Continuation) gets the
 * tid of the virtual thread whose `cont` that is, 0 when no thread marked
 * has it. The tids are read here, after the mark, from the virtual threads
 * it met (mk->vts). */
static int vthread_tids(struct mark *mk)
{
	const struct hm_input *in = mk->in;
	const uint64_t *vt = (const uint64_t *)mk->vts.p;
	struct mt_ap_hroot *x = (struct mt_ap_hroot *)mk->xroots.p;
	struct u64map conts = { 0 }; /* a thread's Continuation -> its index in vts */

	if (!in->vt_klass || !in->sc_parent || !mk->xroots.n)
		return 0;
	if (u64map_init(&conts, mk->vts.n))
		goto nomem;
	for (size_t i = 0; i < mk->vts.n; i++) {
		uint64_t cont = load_oop(mk, vt[i] + in->vt_cont);

		if (cont && u64map_put(&conts, cont, (uint32_t)i))
			goto nomem;
	}
	for (size_t i = 0; i < mk->xroots.n; i++) {
		uint64_t cont;
		int64_t v;

		if (!(x[i].flags & MT_AP_HROOT_TID))
			continue;
		cont = x[i].to;
		v = cont ? u64map_get(&conts, cont) : -1;
		x[i].to = v >= 0 ? rd64(vt[v] + in->vt_tid) : 0;
	}
	u64map_free(&conts);
	return 0;
nomem:
	u64map_free(&conts);
	return -ENOMEM;
}

/* The tid of @obj when it is a virtual thread (a mounted one JVMTI reported
 * as an OTHER root), else 0. */
static uint64_t mounted_tid(const struct mark *mk, uint64_t obj)
{
	const struct hm_input *in = mk->in;

	if (!in->vt_klass || !in->vt_tid || !in->sc_parent || !obj || !marked(mk, obj) ||
	    klass_of(mk, obj) != in->vt_klass)
		return 0;
	return rd64(obj + in->vt_tid);
}

static int emit(struct mark *mk)
{
	const struct hm_input *in = mk->in;

	if (in->flags & (HM_OBJS | HM_REFS | HM_PRIMS | HM_STRINGS)) {
		bool small = in->flags & HM_SMALLPAGES;

		/* references by position: each object's CLASS reference one of
		 * them (not in its object record) */
		mk->refpos = (in->flags & HM_REFPOS) && (in->flags & HM_OBJS) && (in->flags & HM_REFS);
		mk->noclass = mk->refpos && (in->flags & HM_NOCLASS);
		if (mk->refpos)
			mk->refs.esz = sizeof(struct mt_ap_hrefpos);
		/* the non-null references pushed (slots, the edges, may be null):
		 * what memtrace reads as the records' bound before they are
		 * written (heap/heapmem.h) */
		size_t nrefs = mk->pushed + (mk->pushed >> 4) +
			       (in->flags & HM_OBJS ? 0 : mk->out->info.marked);

		if (mk->refpos && !mk->noclass) /* and a sixteenth of room on them too */
			nrefs += mk->out->info.marked + (mk->out->info.marked >> 4);
		uint64_t used = 0;

		if (build_rank(mk))
			return -ENOMEM;
		/* what the records will take, known now: one growth, no copies;
		 * in memtrace's pool when both fit there */
		if ((in->flags & HM_OBJS) && (in->flags & HM_REFS) &&
		    vec_pool(mk, &mk->objs, mk->out->info.marked, &used)) {
			/* HM_INPLACE: the references at the pool's middle (memtrace
			 * fills both places as the mark goes), the objects and the
			 * room for memtrace's view of them (16 bytes each) below */
			if (in->flags & HM_INPLACE)
				used = used + mk->out->info.marked * 16 <= mt_ap_inplace_refs(in->pool_bytes) ?
				       mt_ap_inplace_refs(in->pool_bytes) : in->pool_bytes;
			if (!vec_pool(mk, &mk->refs, nrefs, &used)) {
				mk->objs.p = NULL; /* objects alone there would not spare much */
				mk->objs.cap = 0;
				mk->objs.pooled = false;
			}
		}
		if (in->flags & HM_OBJS)
			vec_reserve(&mk->objs, mk->out->info.marked, small);
		if (in->flags & HM_ADDRS)
			vec_reserve(&mk->addrs, mk->out->info.marked, small);
		if (in->flags & HM_REFS)
			vec_reserve(&mk->refs, nrefs, small);
		live_arrays(mk);
		mk->out->info.emit_threads = 1;
		if (!split_wanted(mk) || emit_split(mk))
			emit_words(mk, 0, mk->nwords);
		live_counts(mk);
	}
	if ((in->flags & HM_REFS) && mk->rank) {
		const struct mt_ap_hroot *x = (const struct mt_ap_hroot *)mk->xroots.p;

		for (size_t i = 0; i < in->nroots + mk->xroots.n && !mk->err; i++) {
			const struct mt_ap_hroot *from = i < in->nroots ? &in->roots[i]
									: &x[i - in->nroots];
			struct mt_ap_hroot *r = vec_push(mk, &mk->roots);
			uint64_t tid;

			if (!r)
				break;
			r->to = from->flags & MT_AP_HROOT_TID ? from->to : id_of(mk, from->to);
			r->kind = from->kind;
			r->flags = from->flags;
			/* a mounted virtual thread: its tid before its locals */
			if (from->kind == JVMTI_HEAP_REFERENCE_OTHER && i < in->nroots &&
			    (tid = mounted_tid(mk, from->to))) {
				r = vec_push(mk, &mk->roots);
				if (r)
					*r = (struct mt_ap_hroot){ .to = tid,
								   .flags = MT_AP_HROOT_TID };
			}
		}
	}
	for (size_t i = 0; i < in->nnamed && mk->rank && !mk->err; i++) {
		struct mt_ap_hsampled *s;

		if (!in->named[i].sample || !marked(mk, in->named[i].addr))
			continue;
		s = vec_push(mk, &mk->sampled);
		if (s) {
			s->id = id_of(mk, in->named[i].addr);
			s->sample = in->named[i].sample;
		}
	}
	/* per class: totals, and the class objects that are not named classes */
	for (size_t i = 0; i < mk->nk && !mk->err; i++) {
		const struct kinfo *ki = kinfo_at(mk, i);
		int64_t nm = ki->mirror ? u64map_get(&mk->named, ki->mirror) : -1;
		bool walked = ki->mirror && mk->rank && marked(mk, ki->mirror);

		if ((in->flags & HM_HISTO) && ki->count) {
			struct mt_ap_hhisto *h = vec_push(mk, &mk->histo);

			if (!h)
				break;
			h->klass = ki->klass;
			h->cls = nm >= 0 ? in->named[nm].id : walked ? id_of(mk, ki->mirror) : 0;
			h->count = ki->count;
			h->bytes = ki->bytes;
		}
		if (nm < 0 && walked) {
			struct mt_ap_hklass *k = vec_push(mk, &mk->klasses);

			if (k) {
				k->id = id_of(mk, ki->mirror);
				k->klass = ki->klass;
			}
		}
	}
	return mk->err;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int check_layout(struct mark *mk)
{
	const struct mt_ap_heap_layout *L = mk->L;
	uint32_t al;

	if (!L || L->size != sizeof(*L))
		return -EINVAL;
	al = L->obj_align;
	if (al < 8 || (al & (al - 1)) || al > 256)
		return -EINVAL;
	if (!mk->lo || mk->hi <= mk->lo || (mk->lo & (al - 1)) || !L->k_java_mirror ||
	    !L->ik_size || !L->klass_off || !L->length_off || L->m_statics <= 0 ||
	    L->m_oop_size <= 0 || L->m_klass <= 0 || L->ref_referent <= 0 ||
	    L->ref_discovered <= 0 || !L->ref_weak || !L->class_klass ||
	    (L->loader_klass && L->loader_data <= 0))
		return -EINVAL;
	mk->shift = (unsigned)__builtin_ctz(al);
	mk->oopsz = (L->flags & MT_AP_LAYOUT_COOPS) ? 4 : 8;
	return 0;
}

static int setup(struct mark *mk)
{
	const struct hm_input *in = mk->in;
	size_t bits = (size_t)((mk->hi - mk->lo) >> mk->shift);

	mk->nwords = (bits + 63) / 64;
	while ((mk->nwords >> mk->blkshift) >= SPLIT_BLOCKS)
		mk->blkshift++;
	mk->bits = calloc(mk->nwords ? mk->nwords : 1, sizeof(*mk->bits));
	/* a bit per 8 heap bytes (26 MiB for a 1.7 GiB heap), set at random:
	 * in small pages a fault each, ~10 us apiece on a VM like this one's */
	huge_inside(mk->bits, mk->nwords * sizeof(*mk->bits), in->flags & HM_SMALLPAGES);
	if (!mk->bits || u64map_init(&mk->kmap, 1024) || u64map_init(&mk->cldset, 64) ||
	    u64map_init(&mk->named, in->nnamed) || u64map_init(&mk->classes, in->nclasses))
		return -ENOMEM;
	for (size_t i = 0; i < in->nnamed; i++) {
		size_t h = u64hash(in->named[i].addr) >> 48;

		if (in->named[i].addr && u64map_put(&mk->named, in->named[i].addr, (uint32_t)i))
			return -ENOMEM;
		mk->named_bits[h >> 6] |= 1ull << (h & 63);
	}
	for (size_t i = 0; i < in->nclasses; i++)
		if (in->classes[i].mirror &&
		    u64map_put(&mk->classes, in->classes[i].mirror, (uint32_t)i))
			return -ENOMEM;
	mk->objs.esz = sizeof(struct mt_ap_hobj);
	mk->refs.esz = sizeof(struct mt_ap_href);
	mk->roots.esz = sizeof(struct mt_ap_hroot);
	mk->prims.esz = sizeof(struct mt_ap_hprim);
	mk->strs.esz = sizeof(struct mt_ap_hstrref);
	mk->histo.esz = sizeof(struct mt_ap_hhisto);
	mk->klasses.esz = sizeof(struct mt_ap_hklass);
	mk->sampled.esz = sizeof(struct mt_ap_hsampled);
	mk->xroots.esz = sizeof(struct mt_ap_hroot);
	mk->vts.esz = sizeof(uint64_t);
	mk->addrs.esz = sizeof(uint64_t);
	return 0;
}

/* Hand the record vectors to @out; free the rest of the marker's state
 * (the string arena stays: the strings point into it). */
static void finish(struct mark *mk, struct hm_result *out)
{
	struct {
		void **dst;
		struct growvec *v;
		uint64_t *n;
	} give[] = {
		{ (void **)&out->objs, &mk->objs, &out->info.nobjs },
		{ (void **)&out->refs, &mk->refs, &out->info.nrefs },
		{ (void **)&out->roots, &mk->roots, &out->info.nroots },
		{ (void **)&out->prims, &mk->prims, &out->info.nprims },
		{ (void **)&out->strs, &mk->strs, &out->info.nstrs },
		{ (void **)&out->histo, &mk->histo, &out->info.nhisto },
		{ (void **)&out->klasses, &mk->klasses, &out->info.nklasses },
		{ (void **)&out->sampled, &mk->sampled, &out->info.nsampled },
	};
	uint64_t naddrs;

	for (size_t i = 0; i < sizeof(give) / sizeof(give[0]); i++) {
		*give[i].dst = give[i].v->p;
		*give[i].n = give[i].v->n;
		give[i].v->p = NULL;
	}
	out->objs_pooled = mk->objs.pooled;
	out->refs_pooled = mk->refs.pooled;
	out->addrs = (uint64_t *)mk->addrs.p;
	naddrs = mk->addrs.n;
	(void)naddrs; /* == info.nobjs */
	for (size_t i = 0; i < mk->kblocks; i++)
		free(mk->kpool[i]);
	free(mk->kpool);
	u64map_free(&mk->kmap);
	u64map_free(&mk->cldset);
	u64map_free(&mk->named);
	u64map_free(&mk->classes);
	free(mk->bits);
	free(mk->rank);
	free(mk->stack);
	free(mk->xroots.p);
	free(mk->vts.p);
	free(mk->cslots);
}

/* The string arena, owned by the result (struct hm_result.priv). */
struct arena_own {
	char **blocks;
	size_t n;
};

/* An input address as the mark knows the object: ZGC's canonical address,
 * else where a forwarding pointer leads. */
static uint64_t resolve(struct mark *mk, uint64_t a)
{
	return mk->zgc ? zgc_root(mk->zgc, a) : fwd(mk, a);
}

/*
 * HM_FORWARDING: the input's addresses (roots, named objects, class objects:
 * read before the copy's references were updated, some name an old copy)
 * as where the objects are now, in *@now's arrays (malloc'd: free_resolved());
 * ZGC: as canonical addresses.
 */
static int resolve_input(struct mark *mk, struct hm_input *now)
{
	const struct hm_input *in = mk->in;
	struct mt_ap_hroot *roots = malloc((in->nroots + 1) * sizeof(*roots));
	struct hm_named *named = malloc((in->nnamed + 1) * sizeof(*named));
	struct hm_class *classes = malloc((in->nclasses + 1) * sizeof(*classes));

	*now = *in;
	now->roots = roots;
	now->named = named;
	now->classes = classes;
	if (!roots || !named || !classes)
		return -ENOMEM;
	for (size_t i = 0; i < in->nroots; i++) {
		roots[i] = in->roots[i];
		roots[i].to = resolve(mk, roots[i].to);
	}
	for (size_t i = 0; i < in->nnamed; i++) {
		named[i] = in->named[i];
		named[i].addr = resolve(mk, named[i].addr);
	}
	for (size_t i = 0; i < in->nclasses; i++) {
		classes[i] = in->classes[i];
		classes[i].mirror = resolve(mk, classes[i].mirror);
	}
	mk->in = now;
	return 0;
}

static void free_resolved(struct hm_input *now)
{
	free((void *)now->roots);
	free((void *)now->named);
	free((void *)now->classes);
}

int heapmark_run(const struct hm_input *in, struct hm_result *out)
{
	struct mark mk = { .in = in, .L = in->L, .out = out, .lo = in->heap_lo, .hi = in->heap_hi };
	struct hm_input now = { 0 };
	struct arena_own *ar;
	uint64_t t0 = now_ns(), t1, nfwd = 0;
	int err;

	memset(out, 0, sizeof(*out));
#if defined(__x86_64__)
	__builtin_cpu_init();
	have_popcnt = __builtin_cpu_supports("popcnt");
#endif
	mk.forwarding = (in->flags & HM_FORWARDING) && !in->zgc; /* ZGC moves no mark word */
	mk.zgc = in->zgc;
	mk.nfwd = &nfwd;
	err = check_layout(&mk);
	if (err) {
		snprintf(out->info.why, sizeof(out->info.why), "the heap layout memtrace sent is "
			 "incomplete");
		goto out;
	}
	if (mk.forwarding || mk.zgc)
		err = resolve_input(&mk, &now);
	if (!err)
		err = setup(&mk);
	if (!err)
		err = mark_all(&mk);
	if (mk.zgc)
		nfwd = mk.zgc->nfwd;
	out->info.forwarded = nfwd > UINT32_MAX ? UINT32_MAX : (uint32_t)nfwd; /* the mark's */
	t1 = now_ns();
	out->info.mark_ns = t1 - t0;
	if (!err)
		err = vthread_tids(&mk);
	if (!err)
		err = emit(&mk);
	out->info.emit_ns = now_ns() - t1;
	out->info.classrefs = mk.classrefs < UINT32_MAX ? (uint32_t)mk.classrefs : UINT32_MAX;
	out->info.ref_format = mk.noclass ? MT_AP_REFS_POS_NOCLASS :
			       mk.refpos ? MT_AP_REFS_POS : MT_AP_REFS_IDS;
	out->info.lead_need = mk.lead_max <= 0 ? 0 : mk.lead_max >= UINT32_MAX ? UINT32_MAX :
			      (uint32_t)mk.lead_max + 1;
	if (err == -ENOMEM && !out->info.why[0])
		snprintf(out->info.why, sizeof(out->info.why), "out of memory in the frozen copy");
out:
	out->info.status = err;
	out->info.next_id = in->next_id;
	finish(&mk, out);
	free_resolved(&now);
	ar = calloc(1, sizeof(*ar));
	if (ar) {
		ar->blocks = mk.arena;
		ar->n = mk.narena;
	} else {
		for (size_t i = 0; i < mk.narena; i++)
			free(mk.arena[i]);
		free(mk.arena);
		out->strs = NULL;
		out->info.nstrs = 0;
	}
	out->priv = ar;
	return err;
}

void heapmark_free(struct hm_result *r)
{
	struct arena_own *ar;

	if (!r)
		return;
	ar = r->priv;
	if (ar) {
		for (size_t i = 0; i < ar->n; i++)
			free(ar->blocks[i]);
		free(ar->blocks);
		free(ar);
	}
	if (!r->objs_pooled)
		free(r->objs);
	if (!r->refs_pooled)
		free(r->refs);
	free(r->roots);
	free(r->prims);
	free(r->strs);
	free(r->histo);
	free(r->klasses);
	free(r->sampled);
	free(r->addrs);
	memset(r, 0, sizeof(*r));
}
