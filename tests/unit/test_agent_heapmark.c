/* test_agent_heapmark.c - the frozen copy's own mark (user/agent/heapmark.c)
 * on a heap built in memory with HotSpot's layouts: fake Klass structures
 * (vtable word, layout helper, mirror handle, loader data, oop maps after
 * the vtable and itable), class objects with statics, loader data with its
 * class list and resolved references, references weak and soft, with and
 * without compressed oops and class pointers. What is live, what each record
 * says, and how a layout that does not hold stops the mark. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <errno.h>
#include <jvmti.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <cmocka.h>

#include "agent/heapmark.h"

/* The fake layout's offsets. */
enum {
	K_LH = 8, K_MIRROR = 16, K_CLD = 24, K_NEXT = 32, K_SUPER = 40, K_VTLEN = 48,
	IK_ITLEN = 52, IK_MAPS = 56, IK_REFTYPE = 60, IK_CONSTANTS = 64, IK_IFACES = 72,
	IK_SIZE = 96, CP_CACHE = 8, CPC_RR = 16, CLD_LOADER = 8, CLD_KLASSES = 16,
	M_KLASS = 16, M_OOPSIZE = 24, M_SCOUNT = 28, M_LOADER = 32, M_PD = 40, M_SIGNERS = 44,
	M_STATICS = 48, REF_REFERENT = 12, REF_DISCOVERED = 24, STR_VALUE = 12, STR_CODER = 16, LOADER_DATA = 16,
};

#define VT(kind) (0x7000 + 16 * (kind))
#define HEAP_SZ (1u << 20)

/* A heap and the metadata around it. */
struct fake {
	bool coops, cklass;
	char *heap;            /* objects from heap + 4096 (the oop base's first page is null) */
	size_t top;
	char *meta;            /* Klasses, loader data, constant pools, handles */
	size_t mtop;
	struct mt_ap_heap_layout L;
	uint64_t class_klass;  /* java.lang.Class's Klass */
};

static struct fake *fake_new(bool coops, bool cklass)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->coops = coops;
	f->cklass = cklass;
	f->heap = aligned_alloc(4096, HEAP_SZ);
	f->meta = aligned_alloc(4096, HEAP_SZ);
	assert_non_null(f->heap);
	assert_non_null(f->meta);
	memset(f->heap, 0, HEAP_SZ);
	memset(f->meta, 0, HEAP_SZ);
	f->top = 4096;
	f->mtop = 64;
	f->L = (struct mt_ap_heap_layout){
		.size = sizeof(struct mt_ap_heap_layout),
		.flags = (coops ? MT_AP_LAYOUT_COOPS : 0) | (cklass ? MT_AP_LAYOUT_CKLASS : 0),
		.oop_base = (uint64_t)(uintptr_t)f->heap, .oop_shift = 3,
		.klass_base = (uint64_t)(uintptr_t)f->meta, .klass_shift = 3,
		.obj_align = 8, .klass_off = 8, .length_off = cklass ? 12 : 16,
		.k_layout_helper = K_LH, .k_java_mirror = K_MIRROR, .k_cld = K_CLD,
		.k_next_link = K_NEXT, .k_super = K_SUPER, .k_vtable_len = K_VTLEN,
		.ik_size = IK_SIZE, .ik_itable_len = IK_ITLEN, .ik_oop_map_size = IK_MAPS,
		.ik_reference_type = IK_REFTYPE, .ik_constants = IK_CONSTANTS,
		.ik_local_interfaces = IK_IFACES, .cp_cache = CP_CACHE, .cpc_resolved_refs = CPC_RR,
		.cld_loader = CLD_LOADER, .cld_klasses = CLD_KLASSES, .array_data = 8,
		.array_length = 0, .m_klass = M_KLASS, .m_oop_size = M_OOPSIZE,
		.m_static_count = M_SCOUNT, .m_statics = M_STATICS, .m_loader = M_LOADER,
		.m_pd = M_PD, .m_signers = M_SIGNERS, .ref_referent = REF_REFERENT,
		.ref_discovered = REF_DISCOVERED, .ref_weak = (1u << 3) | (1u << 5),
		.str_value = STR_VALUE, .str_coder = STR_CODER, .loader_data = LOADER_DATA,
	};
	return f;
}

static void fake_free(struct fake *f)
{
	free(f->heap);
	free(f->meta);
	free(f);
}

static uint64_t addr(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static void w64(uint64_t a, uint64_t v) { memcpy((void *)(uintptr_t)a, &v, 8); }
static void w32(uint64_t a, uint32_t v) { memcpy((void *)(uintptr_t)a, &v, 4); }

static uint64_t meta_alloc(struct fake *f, size_t n)
{
	uint64_t a = addr(f->meta + f->mtop);

	f->mtop = (f->mtop + n + 15) & ~(size_t)15;
	assert_true(f->mtop < HEAP_SZ);
	return a;
}

/* An OopHandle: a pointer to a slot holding the object. */
static void set_handle(struct fake *f, uint64_t at, uint64_t obj)
{
	uint64_t slot = meta_alloc(f, 8);

	w64(slot, obj);
	w64(at, slot);
}

static uint64_t cld_new(struct fake *f)
{
	return meta_alloc(f, 32);
}

/* A Klass of @kind with layout helper @lh and oop maps {off,count}... (pairs). */
static uint64_t klass_new(struct fake *f, int kind, int32_t lh, uint64_t cld, int nmaps, ...)
{
	uint64_t k = meta_alloc(f, IK_SIZE + 8 * 3 + 8 * 2 + 8 * (size_t)nmaps);
	va_list ap;

	w64(k, VT(kind));
	w32(k + K_LH, (uint32_t)lh);
	w64(k + K_CLD, cld);
	w32(k + K_VTLEN, 3);
	w32(k + IK_ITLEN, 2);
	w32(k + IK_MAPS, (uint32_t)nmaps);
	va_start(ap, nmaps);
	for (int i = 0; i < nmaps; i++) {
		uint64_t m = k + IK_SIZE + 8 * 5 + 8 * (uint64_t)i;

		w32(m, (uint32_t)va_arg(ap, int));
		w32(m + 4, (uint32_t)va_arg(ap, int));
	}
	va_end(ap);
	if (cld) { /* linked into its loader data's list */
		w64(k + K_NEXT, *(uint64_t *)(uintptr_t)(cld + CLD_KLASSES));
		w64(cld + CLD_KLASSES, k);
	}
	return k;
}

static uint64_t obj_alloc(struct fake *f, uint64_t klass, size_t size)
{
	uint64_t o = addr(f->heap + f->top);

	f->top += (size + 7) & ~(size_t)7;
	assert_true(f->top < HEAP_SZ);
	if (f->cklass)
		w32(o + 8, (uint32_t)((klass - f->L.klass_base) >> 3));
	else
		w64(o + 8, klass);
	return o;
}

/* Store a reference to @to in the slot at @at. */
static void put_oop(struct fake *f, uint64_t at, uint64_t to)
{
	if (f->coops)
		w32(at, to ? (uint32_t)((to - f->L.oop_base) >> 3) : 0);
	else
		w64(at, to);
}

static uint32_t oopsz(const struct fake *f)
{
	return f->coops ? 4 : 8;
}

/* An array class's layout helper: tag, header, log2 element size. */
static int32_t array_lh(bool obj, uint32_t hdr, uint32_t log2)
{
	return (int32_t)((obj ? 0x80000000u : 0xc0000000u) | (hdr << 16) | log2);
}

static uint32_t array_hdr(const struct fake *f)
{
	return f->cklass ? 16 : 24;
}

static uint64_t array_new(struct fake *f, uint64_t klass, uint32_t len, uint32_t esz)
{
	uint64_t o = obj_alloc(f, klass, array_hdr(f) + (size_t)len * esz);

	w32(o + f->L.length_off, len);
	return o;
}

/* A class object for @k (its statics: @nstatics references), made @k's mirror. */
static uint64_t mirror_new(struct fake *f, uint64_t k, uint32_t nstatics)
{
	size_t size = (M_STATICS + nstatics * oopsz(f) + 7) & ~(size_t)7;
	uint64_t m = obj_alloc(f, f->class_klass, size);

	w64(m + M_KLASS, k);
	w32(m + M_OOPSIZE, (uint32_t)(size / 8));
	w32(m + M_SCOUNT, nstatics);
	if (k)
		set_handle(f, k + K_MIRROR, m);
	return m;
}

static struct mt_ap_hlive *run_live; /* MT_AP_FREEZE_LIVE: where run() publishes */
static void *run_pool;               /* MT_AP_FREEZE_POOL: memory for the records */
static uint32_t run_threads;         /* hm_input.threads */
static uint64_t run_helper_marked;   /* objects the mark's second thread scanned, */
static unsigned run_two;             /* ... in this many runs again in two threads */
static bool run_one;                 /* no second run (a test counting calls) */
static uint32_t run_kinds[32];       /* the roots' kinds (0: JNI_GLOBAL) */
static struct {                      /* hm_input.vt_klass, vt_cont, vt_tid, sc_parent */
	uint64_t klass;
	uint32_t cont, tid, parent;
} run_vt;
static uint64_t run_pool_bytes;

static int by_klass(const void *a, const void *b)
{
	const struct mt_ap_hhisto *x = a, *y = b;

	return x->klass < y->klass ? -1 : x->klass > y->klass;
}

/* @n histogram rows of @h, by class (the order classes were met in differs
 * between one thread and two). The caller frees. */
static struct mt_ap_hhisto *sorted_histo(const struct mt_ap_hhisto *h, uint64_t n)
{
	struct mt_ap_hhisto *c = malloc((n + 1) * sizeof(*c));

	assert_non_null(c);
	if (n)
		memcpy(c, h, n * sizeof(*c));
	qsort(c, n, sizeof(*c), by_klass);
	return c;
}

/* Every run of a test heap again with the mark in two threads (threads 2:
 * from the start, sharing every 4 objects): the same live objects, counts,
 * histogram and records as the one thread's @one. */
static void same_in_two_threads(const struct hm_input *in1, const struct hm_result *one, int want)
{
	struct hm_input in = *in1;
	struct hm_result two;

	in.threads = 2;
	assert_int_equal(heapmark_run(&in, &two), want);
	if (want) {
		heapmark_free(&two);
		return;
	}
	/* not where a load changes state (forwarding, ZGC's colours) */
	assert_int_equal(two.info.mark_threads, (in.flags & HM_FORWARDING) || in.zgc ? 1 : 2);
	assert_int_equal(one->info.mark_threads, 1);
	assert_int_equal(two.info.marked, one->info.marked);
	assert_int_equal(two.info.bytes, one->info.bytes);
	assert_int_equal(two.info.edges, one->info.edges);
	assert_int_equal(two.info.weak, one->info.weak);
	assert_int_equal(two.info.clds, one->info.clds);
	assert_int_equal(two.info.nobjs, one->info.nobjs);
	assert_int_equal(two.info.nrefs, one->info.nrefs);
	assert_int_equal(two.info.nroots, one->info.nroots);
	assert_int_equal(two.info.nprims, one->info.nprims);
	assert_int_equal(two.info.nstrs, one->info.nstrs);
	assert_int_equal(two.info.nhisto, one->info.nhisto);
	if (one->info.nobjs)
		assert_memory_equal(two.objs, one->objs, one->info.nobjs * sizeof(*one->objs));
	if (one->info.nrefs)
		assert_memory_equal(two.refs, one->refs, one->info.nrefs * sizeof(*one->refs));
	if (one->info.nroots)
		assert_memory_equal(two.roots, one->roots, one->info.nroots * sizeof(*one->roots));
	if (one->info.nprims)
		assert_memory_equal(two.prims, one->prims, one->info.nprims * sizeof(*one->prims));
	if (one->info.nhisto) {
		struct mt_ap_hhisto *a = sorted_histo(one->histo, one->info.nhisto);
		struct mt_ap_hhisto *b = sorted_histo(two.histo, two.info.nhisto);

		assert_memory_equal(a, b, one->info.nhisto * sizeof(*a));
		free(a);
		free(b);
	}
	run_helper_marked += two.helper_marked;
	run_two++;
	heapmark_free(&two);
}

static void run(struct fake *f, uint32_t flags, const uint64_t *roots, size_t nroots,
		const struct hm_named *named, size_t nnamed, const struct hm_class *cls,
		size_t ncls, struct hm_result *r, int want)
{
	struct mt_ap_hroot rr[32];
	struct hm_input in = {
		.L = &f->L, .heap_lo = addr(f->heap) + 4096, .heap_hi = addr(f->heap) + HEAP_SZ,
		.flags = flags, .roots = rr, .nroots = nroots, .named = named, .nnamed = nnamed,
		.classes = cls, .nclasses = ncls, .next_id = 1000, .live = run_live,
		.pool = run_pool, .pool_bytes = run_pool_bytes, .threads = run_threads,
		.vt_klass = run_vt.klass, .vt_cont = run_vt.cont, .vt_tid = run_vt.tid,
		.sc_parent = run_vt.parent,
	};

	assert_true(nroots <= 32);
	for (size_t i = 0; i < nroots; i++)
		rr[i] = (struct mt_ap_hroot){ .to = roots[i], .kind = run_kinds[i] ? run_kinds[i] :
							JVMTI_HEAP_REFERENCE_JNI_GLOBAL };
	assert_int_equal(heapmark_run(&in, r), want);
	if (!run_threads && !run_live && !run_pool && !run_one)
		same_in_two_threads(&in, r, want);
}

/* The java.lang.Class klass (its instances' fields: loader, pd, signers, one more). */
static void class_klass(struct fake *f, uint64_t boot_cld)
{
	/* a mirror's instance fields: 32 (loader) .. 48, as oops */
	f->class_klass = klass_new(f, MT_AP_K_MIRROR, 48 | 1, boot_cld, 1, M_LOADER,
				   f->coops ? 4 : 2);
	f->L.class_klass = f->class_klass;
}

static const struct mt_ap_hhisto *histo_of(const struct hm_result *r, uint64_t klass)
{
	for (uint64_t i = 0; i < r->info.nhisto; i++)
		if (r->histo[i].klass == klass)
			return &r->histo[i];
	return NULL;
}

static uint64_t count_of(const struct hm_result *r, uint64_t klass)
{
	const struct mt_ap_hhisto *h = histo_of(r, klass);

	return h ? h->count : 0;
}

/* Objects, arrays and what is not reached, for each layout. */
static void graph(bool coops, bool cklass)
{
	struct fake *f = fake_new(coops, cklass);
	uint64_t boot = cld_new(f), A, B, Arr, Bytes, a1, a2, b1, b2, dead, arr, bytes;
	struct hm_result r;

	class_klass(f, 0);
	A = klass_new(f, MT_AP_K_INSTANCE, 32, boot, 1, 16, 2); /* two fields at 16 */
	B = klass_new(f, MT_AP_K_INSTANCE, 24, boot, 0);
	Arr = klass_new(f, MT_AP_K_OBJARRAY, array_lh(true, array_hdr(f), coops ? 2 : 3), boot, 0);
	Bytes = klass_new(f, MT_AP_K_TYPEARRAY, array_lh(false, array_hdr(f), 0), boot, 0);
	mirror_new(f, A, 0);
	mirror_new(f, B, 0);
	mirror_new(f, Arr, 0);
	mirror_new(f, Bytes, 0);
	a1 = obj_alloc(f, A, 32);
	b1 = obj_alloc(f, B, 24);
	dead = obj_alloc(f, B, 24); /* reachable from nothing */
	b2 = obj_alloc(f, B, 24);
	a2 = obj_alloc(f, A, 32);   /* a1 <-> a2: a cycle */
	arr = array_new(f, Arr, 5, oopsz(f));
	bytes = array_new(f, Bytes, 13, 1);
	put_oop(f, a1 + 16, b1);
	put_oop(f, a1 + 16 + oopsz(f), a2);
	put_oop(f, a2 + 16, a1);
	put_oop(f, arr + array_hdr(f) + 0 * oopsz(f), b2);
	put_oop(f, arr + array_hdr(f) + 2 * oopsz(f), bytes);
	put_oop(f, arr + array_hdr(f) + 4 * oopsz(f), b2);
	(void)dead;
	{
		uint64_t roots[] = { a1, arr };

		run(f, HM_HISTO | HM_OBJS, roots, 2, NULL, 0, NULL, 0, &r, 0);
	}
	assert_int_equal(count_of(&r, A), 2);
	assert_int_equal(count_of(&r, B), 2);
	assert_int_equal(count_of(&r, Arr), 1);
	assert_int_equal(count_of(&r, Bytes), 1);
	assert_int_equal(histo_of(&r, Bytes)->bytes, (array_hdr(f) + 13 + 7) & ~7u);
	assert_int_equal(histo_of(&r, Arr)->bytes, (array_hdr(f) + 5 * oopsz(f) + 7) & ~7u);
	assert_int_equal(histo_of(&r, A)->bytes, 64);
	/* the boot loader's data: every class object in it is live */
	assert_int_equal(count_of(&r, f->class_klass), 4);
	assert_int_equal(r.info.marked, 2 + 2 + 1 + 1 + 4);
	assert_int_equal(r.info.nobjs, r.info.marked);
	/* ids: next_id + rank in address order; sizes and lengths */
	for (uint64_t i = 0; i < r.info.nobjs; i++)
		assert_int_equal(r.objs[i].id, 1000 + i);
	for (uint64_t i = 1; i < r.info.nobjs; i++)
		assert_true(r.objs[i].id > r.objs[i - 1].id);
	{
		bool saw_arr = false;

		for (uint64_t i = 0; i < r.info.nobjs; i++)
			if (r.objs[i].length == 5) {
				saw_arr = true;
				assert_int_not_equal(r.objs[i].cls, 0);
			}
		assert_true(saw_arr);
	}
	heapmark_free(&r);
	heapmark_free(&r); /* a zeroed result: nothing */
	fake_free(f);
}

/* MT_AP_FREEZE_LIVE: what the copy publishes as it writes its records ends
 * as the result: the arrays where they are, every record counted, gen even
 * (memtrace keeps what it read only when gen did not change meanwhile). */
static void test_live(void **st)
{
	struct fake *f = fake_new(true, true);
	uint64_t boot = cld_new(f), A, B, a1, a2, b1;
	struct mt_ap_hlive live = { 0 };
	struct hm_result r;

	(void)st;
	class_klass(f, 0);
	A = klass_new(f, MT_AP_K_INSTANCE, 32, boot, 1, 16, 2);
	B = klass_new(f, MT_AP_K_INSTANCE, 24, boot, 0);
	mirror_new(f, A, 0);
	mirror_new(f, B, 0);
	a1 = obj_alloc(f, A, 32);
	b1 = obj_alloc(f, B, 24);
	a2 = obj_alloc(f, A, 32);
	put_oop(f, a1 + 16, b1);
	put_oop(f, a1 + 16 + oopsz(f), a2);
	put_oop(f, a2 + 16, a1);
	run_live = &live;
	{
		uint64_t roots[] = { a1 };

		run(f, HM_OBJS | HM_REFS, roots, 1, NULL, 0, NULL, 0, &r, 0);
	}
	run_live = NULL;
	assert_true(live.gen > 0 && !(live.gen & 1));
	assert_true(live.objs == (uint64_t)(uintptr_t)r.objs);
	assert_true(live.refs == (uint64_t)(uintptr_t)r.refs);
	assert_int_equal(live.nobjs, r.info.nobjs);
	assert_int_equal(live.nrefs, r.info.nrefs);
	assert_true(live.nobjs >= 3 && live.nrefs >= 3); /* a1, b1, a2 and their fields */
	assert_true(live.cap_objs >= live.nobjs && live.cap_refs >= live.nrefs);
	heapmark_free(&r);
	fake_free(f);
}

/* MT_AP_FREEZE_POOL: the object and reference records go into the pool
 * memtrace gave when both fit (published there, never freed by the
 * marker), the same records as without it; a pool too small is not used. */
static void test_pool(void **st)
{
	struct fake *f = fake_new(true, true);
	uint64_t boot = cld_new(f), A, B, a1, a2, b1, roots[1];
	struct mt_ap_hlive live = { 0 };
	struct hm_result r0, r, small;
	size_t bytes = 1u << 20;
	char *pool = aligned_alloc(4096, bytes);

	(void)st;
	assert_non_null(pool);
	memset(pool, 0xa5, bytes); /* what an earlier snapshot left there */
	class_klass(f, 0);
	A = klass_new(f, MT_AP_K_INSTANCE, 32, boot, 1, 16, 2);
	B = klass_new(f, MT_AP_K_INSTANCE, 24, boot, 0);
	mirror_new(f, A, 0);
	mirror_new(f, B, 0);
	a1 = obj_alloc(f, A, 32);
	b1 = obj_alloc(f, B, 24);
	a2 = obj_alloc(f, A, 32);
	put_oop(f, a1 + 16, b1);
	put_oop(f, a1 + 16 + oopsz(f), a2);
	put_oop(f, a2 + 16, a1);
	roots[0] = a1;
	run_live = &live;
	run(f, HM_OBJS | HM_REFS, roots, 1, NULL, 0, NULL, 0, &r0, 0);
	assert_false(r0.objs_pooled || r0.refs_pooled);
	assert_int_equal(live.pool, 0);
	run_pool = pool;
	run_pool_bytes = bytes;
	run(f, HM_OBJS | HM_REFS, roots, 1, NULL, 0, NULL, 0, &r, 0);
	assert_true(r.objs_pooled && r.refs_pooled);
	assert_true((char *)r.objs >= pool && (char *)(r.objs + r.info.nobjs) <= pool + bytes);
	assert_true((char *)r.refs >= (char *)(r.objs + r.info.nobjs) &&
		    (char *)(r.refs + r.info.nrefs) <= pool + bytes);
	assert_true(live.pool == (uint64_t)(uintptr_t)pool && live.pool_bytes == bytes);
	assert_true(live.objs == (uint64_t)(uintptr_t)r.objs && live.refs == (uint64_t)(uintptr_t)r.refs);
	assert_int_equal(r.info.nobjs, r0.info.nobjs);
	assert_int_equal(r.info.nrefs, r0.info.nrefs);
	assert_true(r0.info.nobjs >= 3 && r0.info.nrefs >= 3);
	assert_memory_equal(r.objs, r0.objs, r0.info.nobjs * sizeof(*r.objs));
	assert_memory_equal(r.refs, r0.refs, r0.info.nrefs * sizeof(*r.refs));
	/* HM_INPLACE: the objects at the pool's start, room for 16 bytes more
	 * each after them, the references at its middle; the mark's progress
	 * published (its final counts at least); the same records */
	{
		struct hm_result ip;

		memset(&live, 0, sizeof(live));
		run(f, HM_OBJS | HM_REFS | HM_INPLACE, roots, 1, NULL, 0, NULL, 0, &ip, 0);
		assert_true(ip.objs_pooled && ip.refs_pooled);
		assert_ptr_equal(ip.objs, pool);
		assert_ptr_equal(ip.refs, pool + mt_ap_inplace_refs(bytes));
		assert_true(mt_ap_inplace_refs(bytes) >= r0.info.nobjs * (sizeof(*r.objs) + 16));
		assert_int_equal(live.mark_objs, r0.info.marked);
		assert_true(live.mark_refs >= r0.info.nrefs && live.mark_refs <= live.cap_refs);
		assert_int_equal(live.cap_objs, r0.info.nobjs);
		assert_memory_equal(ip.objs, r0.objs, r0.info.nobjs * sizeof(*r.objs));
		assert_memory_equal(ip.refs, r0.refs, r0.info.nrefs * sizeof(*r.refs));
		/* without it no progress is published */
		memset(&live, 0, sizeof(live));
		heapmark_free(&ip);
		run(f, HM_OBJS | HM_REFS, roots, 1, NULL, 0, NULL, 0, &ip, 0);
		assert_int_equal(live.mark_objs, 0);
		heapmark_free(&ip);
		/* objects and their room past the middle: nothing in the pool */
		run_pool_bytes = r0.info.nobjs * (sizeof(*r.objs) + 16);
		run(f, HM_OBJS | HM_REFS | HM_INPLACE, roots, 1, NULL, 0, NULL, 0, &ip, 0);
		assert_false(ip.objs_pooled || ip.refs_pooled);
		assert_memory_equal(ip.objs, r0.objs, r0.info.nobjs * sizeof(*r.objs));
		heapmark_free(&ip);
		run_pool_bytes = bytes;
	}
	/* room for the objects but not the references: neither goes there */
	run_pool_bytes = r0.info.nobjs * sizeof(*r.objs) + sizeof(*r.refs);
	run(f, HM_OBJS | HM_REFS, roots, 1, NULL, 0, NULL, 0, &small, 0);
	assert_false(small.objs_pooled || small.refs_pooled);
	assert_true((char *)small.objs < pool || (char *)small.objs >= pool + bytes);
	assert_memory_equal(small.objs, r0.objs, r0.info.nobjs * sizeof(*r.objs));
	assert_memory_equal(small.refs, r0.refs, r0.info.nrefs * sizeof(*r.refs));
	run_live = NULL;
	run_pool = NULL;
	run_pool_bytes = 0;
	heapmark_free(&small);
	heapmark_free(&r); /* the pooled arrays stay: the pool's owner frees it */
	heapmark_free(&r0);
	free(pool);
	fake_free(f);
}


/* The room a view built over @r's records needs below them (lead_need),
 * from the records: the most CLASS references up to an object less the
 * reference records before it, + 1 (0: none). */
static uint32_t lead_of(const struct hm_result *r)
{
	int64_t c = 0, best = 0;
	uint64_t j = 0;

	for (uint64_t k = 0; k < r->info.nobjs; k++) {
		if (r->objs[k].flags & MT_AP_HOBJ_CLASSREF) {
			c++;
			if (c - (int64_t)j > best)
				best = c - (int64_t)j;
		}
		while (j < r->info.nrefs && r->refs[j].from == r->objs[k].id)
			j++;
	}
	assert_int_equal(j, r->info.nrefs); /* the records in their objects' order */
	return best > 0 ? (uint32_t)best + 1 : 0;
}

/* The records in two threads (hm_input.threads 2; 0 on heaps this small:
 * one): the same records, byte for byte, as one thread writes - objects at
 * their ranks, the second half's references moved down after the first's;
 * a second thread that finds no class (3) leaves its half to the first, with
 * the same records; without a pool, or with values, one thread. */
/* References by position (@p, HM_REFPOS) against the same heap's by id (@co,
 * @cr: @nco objects, @ncr references): the same objects, their flags each
 * one's count; each object's CLASS reference its first record, then its
 * others in order, each target's id the one by id's. */
static void check_pos(const struct mt_ap_hobj *co, size_t nco, const struct mt_ap_href *cr,
		      size_t ncr, const struct hm_result *p)
{
	const struct mt_ap_hobj *po = p->objs;
	const struct mt_ap_hrefpos *pr = (const struct mt_ap_hrefpos *)(const void *)p->refs;
	size_t ci = 0, pi = 0, ncls = 0;

	assert_int_equal(p->info.ref_format, MT_AP_REFS_POS);
	assert_int_equal(p->info.lead_need, 0);
	assert_int_equal(p->info.nobjs, nco);
	for (size_t o = 0; o < nco; o++) {
		uint32_t k = 0;

		assert_int_equal(po[o].id, co[o].id);
		assert_int_equal(po[o].cls, co[o].cls);
		assert_int_equal(po[o].size, co[o].size);
		assert_int_equal(po[o].length, co[o].length);
		if (co[o].flags & MT_AP_HOBJ_CLASSREF) {
			assert_true(pi < p->info.nrefs && pr[pi].to < nco);
			assert_int_equal(pr[pi].kind, JVMTI_HEAP_REFERENCE_CLASS);
			assert_int_equal(pr[pi].index, -1);
			assert_int_equal(po[pr[pi].to].id, co[o].cls);
			pi++, k++, ncls++;
		}
		for (; ci < ncr && cr[ci].from == co[o].id; ci++, pi++, k++) {
			assert_true(pi < p->info.nrefs && pr[pi].to < nco);
			assert_int_equal(po[pr[pi].to].id, cr[ci].to);
			assert_int_equal(pr[pi].index, cr[ci].index);
			assert_int_equal(pr[pi].kind, cr[ci].kind);
		}
		assert_int_equal(po[o].flags, k);
	}
	assert_int_equal(ci, ncr);
	assert_int_equal(pi, p->info.nrefs);
	assert_true(ncls > 0);
	assert_int_equal(p->info.classrefs, ncls); /* among the records, counted */
}

/* @r's records those of one thread's run @one, kept at @copy (its objects,
 * then its references by id): byte for byte. */
static void same_records(const struct hm_result *r, const struct hm_result *one,
			 const char *copy)
{
	assert_int_equal(r->info.nobjs, one->info.nobjs);
	assert_int_equal(r->info.nrefs, one->info.nrefs);
	assert_memory_equal(r->objs, copy, one->info.nobjs * sizeof(*one->objs));
	assert_memory_equal(r->refs, copy + one->info.nobjs * sizeof(*one->objs),
			    one->info.nrefs * sizeof(*one->refs));
}

/* ... by position (check_pos()). */
static void same_by_pos(const struct hm_result *r, const struct hm_result *one, const char *copy)
{
	check_pos((const struct mt_ap_hobj *)(const void *)copy, one->info.nobjs,
		  (const struct mt_ap_href *)(const void *)(copy + one->info.nobjs *
							    sizeof(*one->objs)),
		  one->info.nrefs, r);
}

static void test_split(void **st)
{
	struct fake *f = fake_new(true, true);
	uint64_t boot = cld_new(f), A, B, Arr, arr, roots[2], prev = 0, mA;
	struct mt_ap_hlive live = { 0 };
	struct hm_result one, two, back, auto_, prims;
	size_t bytes = 4u << 20, n = 3000;
	char *pool = aligned_alloc(4096, bytes), *copy;

	(void)st;
	assert_non_null(pool);
	class_klass(f, 0);
	A = klass_new(f, MT_AP_K_INSTANCE, 32, boot, 1, 16, 2); /* next, other */
	B = klass_new(f, MT_AP_K_INSTANCE, 24, boot, 0);
	Arr = klass_new(f, MT_AP_K_OBJARRAY, array_lh(true, array_hdr(f), 2), boot, 0);
	mA = mirror_new(f, A, 0);
	mirror_new(f, B, 0);
	mirror_new(f, Arr, 0);
	arr = array_new(f, Arr, (uint32_t)n, oopsz(f));
	/* a chain of A through the heap, every third with a B, the array
	 * holding every fifth: references from both halves of the bits */
	for (size_t i = 0; i < n; i++) {
		uint64_t a = obj_alloc(f, A, 32);

		*(int32_t *)(uintptr_t)(a + 12) = (int32_t)i + 7; /* an int field (values) */

		if (i % 3 == 0)
			put_oop(f, a + 16 + oopsz(f), obj_alloc(f, B, 24));
		if (prev)
			put_oop(f, prev + 16, a);
		if (i % 5 == 0)
			put_oop(f, arr + array_hdr(f) + i * oopsz(f), a);
		if (!prev)
			roots[1] = a;
		prev = a;
	}
	roots[0] = arr;
	run_live = &live;
	run_pool = pool;
	run_pool_bytes = bytes;
	run_threads = 1;
	run(f, HM_OBJS | HM_REFS | HM_INPLACE, roots, 2, NULL, 0, NULL, 0, &one, 0);
	assert_true(one.objs_pooled && one.refs_pooled);
	assert_int_equal(one.info.emit_threads, 1);
	assert_int_equal(one.info.lead_need, lead_of(&one));
	assert_true(one.info.lead_need > 0); /* the array's elements: objects before references */
	assert_true(one.info.nobjs > n + n / 3 && one.info.nrefs > n);
	/* the pool is overwritten by the next run: keep the first's records */
	copy = malloc(one.info.nobjs * sizeof(*one.objs) + one.info.nrefs * sizeof(*one.refs));
	assert_non_null(copy);
	memcpy(copy, one.objs, one.info.nobjs * sizeof(*one.objs));
	memcpy(copy + one.info.nobjs * sizeof(*one.objs), one.refs,
	       one.info.nrefs * sizeof(*one.refs));
	memset(pool, 0xa5, bytes);
	run_threads = 2;
	run(f, HM_OBJS | HM_REFS | HM_INPLACE, roots, 2, NULL, 0, NULL, 0, &two, 0);
	assert_int_equal(two.info.emit_threads, 2);
	assert_int_equal(two.info.mark_threads, 2);
	assert_int_equal(two.info.lead_need, one.info.lead_need); /* the halves joined */
	assert_true(two.helper_marked < two.info.marked); /* how many: test_mark_random */
	assert_true(two.objs_pooled && two.refs_pooled);
	assert_int_equal(two.info.nobjs, one.info.nobjs);
	assert_int_equal(two.info.nrefs, one.info.nrefs);
	assert_memory_equal(two.objs, copy, one.info.nobjs * sizeof(*one.objs));
	assert_memory_equal(two.refs, copy + one.info.nobjs * sizeof(*one.objs),
			    one.info.nrefs * sizeof(*one.refs));
	{ /* the class references the objects carry, counted */
		uint64_t c = 0;

		for (uint64_t i = 0; i < one.info.nobjs; i++)
			c += (((const struct mt_ap_hobj *)(const void *)copy)[i].flags &
			      MT_AP_HOBJ_CLASSREF) != 0;
		assert_true(c > n);
		assert_int_equal(one.info.classrefs, c);
		assert_int_equal(two.info.classrefs, c);
	}
	assert_int_equal(live.nobjs, two.info.nobjs); /* the counts published: all */
	assert_int_equal(live.nrefs, two.info.nrefs);
	assert_true(live.gen > 0 && !(live.gen & 1));
	heapmark_free(&two);
	memset(pool, 0xa5, bytes);
	run_threads = 3;
	run(f, HM_OBJS | HM_REFS | HM_INPLACE, roots, 2, NULL, 0, NULL, 0, &back, 0);
	assert_int_equal(back.info.emit_threads, 1);
	assert_int_equal(back.info.classrefs, one.info.classrefs);
	same_records(&back, &one, copy);
	heapmark_free(&back);
	/* the references outgrow their room in two threads: all again in one,
	 * in the pool */
	memset(pool, 0xa5, bytes);
	run_threads = 4;
	run(f, HM_OBJS | HM_REFS | HM_INPLACE, roots, 2, NULL, 0, NULL, 0, &back, 0);
	assert_int_equal(back.info.emit_threads, 1);
	assert_true(back.refs_pooled);
	assert_true(back.objs_pooled);
	assert_int_equal(back.info.lead_need, one.info.lead_need);
	same_records(&back, &one, copy);
	assert_int_equal(live.nrefs, back.info.nrefs);
	assert_true(live.refs == (uint64_t)(uintptr_t)back.refs && !(live.gen & 1));
	heapmark_free(&back);
	/* references by position: one thread, two, the second knowing no
	 * class, the references outgrowing their room */
	for (uint32_t t = 1; t <= 4; t++) {
		memset(pool, 0xa5, bytes);
		run_threads = t;
		run(f, HM_OBJS | HM_REFS | HM_INPLACE | HM_REFPOS, roots, 2, NULL, 0, NULL, 0,
		    &back, 0);
		assert_int_equal(back.info.emit_threads, t == 2 ? 2 : 1);
		assert_true(back.objs_pooled);
		assert_true(back.refs_pooled);
		same_by_pos(&back, &one, copy);
		assert_int_equal(live.nrefs, back.info.nrefs);
		heapmark_free(&back);
	}
	/* the pool a shared mapping of a memfd (as memtrace's in the copy): the
	 * records the same, by id and by position, in two threads, and again
	 * in one when they outgrow their room */
	{
		int fd = memfd_create("test_split", MFD_CLOEXEC);
		char *fp;

		assert_true(fd >= 0);
		assert_int_equal(ftruncate(fd, (off_t)bytes), 0);
		fp = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		assert_true(fp != MAP_FAILED);
		run_pool = fp;
		for (uint32_t t = 2; t <= 4; t += 2) {
			run_threads = t;
			run(f, HM_OBJS | HM_REFS | HM_INPLACE, roots, 2, NULL, 0, NULL, 0, &back, 0);
			assert_int_equal(back.info.emit_threads, t == 2 ? 2 : 1);
			assert_true(back.objs_pooled && back.refs_pooled);
			assert_int_equal(back.info.lead_need, one.info.lead_need);
			same_records(&back, &one, copy);
			heapmark_free(&back);
			memset(fp, 0xa5, bytes);
			run(f, HM_OBJS | HM_REFS | HM_INPLACE | HM_REFPOS, roots, 2, NULL, 0, NULL, 0,
			    &back, 0);
			assert_int_equal(back.info.emit_threads, t == 2 ? 2 : 1);
			same_by_pos(&back, &one, copy);
			heapmark_free(&back);
		}
		run_pool = pool;
		munmap(fp, bytes);
		close(fd);
	}
	/* as the copy decides: a heap this small takes one */
	run_threads = 0;
	run(f, HM_OBJS | HM_REFS | HM_INPLACE, roots, 2, NULL, 0, NULL, 0, &auto_, 0);
	assert_int_equal(auto_.info.emit_threads, 1);
	heapmark_free(&auto_);
	/* values (a query reading `size` projects ArrayList's int field): each
	 * thread its own, the second's appended - the records one thread writes */
	{
		struct hm_field af[] = {
			{ .off = 12, .index = 0, .type = 'I', .projected = true },
			{ .off = 16, .index = 1, .type = 'L' },
			{ .off = 20, .index = 2, .type = 'L' },
		};
		struct hm_class ac[] = { { .mirror = mA, .fields = af, .nfields = 3 } };
		struct hm_result p1;

		memset(pool, 0xa5, bytes);
		run_threads = 1;
		run(f, HM_OBJS | HM_REFS | HM_PRIMS | HM_INPLACE, roots, 2, NULL, 0, ac, 1, &p1, 0);
		assert_int_equal(p1.info.emit_threads, 1);
		assert_int_equal(p1.info.nprims, n);
		memset(pool, 0xa5, bytes);
		run_threads = 2;
		run(f, HM_OBJS | HM_REFS | HM_PRIMS | HM_INPLACE, roots, 2, NULL, 0, ac, 1, &prims, 0);
		assert_int_equal(prims.info.emit_threads, 2);
		assert_int_equal(prims.info.nprims, n);
		assert_memory_equal(prims.prims, p1.prims, n * sizeof(*p1.prims));
		assert_int_equal(prims.prims[n - 1].bits, (uint64_t)(n - 1 + 7));
		heapmark_free(&prims);
		/* the second half knowing no class: the first writes it, values too */
		memset(pool, 0xa5, bytes);
		run_threads = 3;
		run(f, HM_OBJS | HM_REFS | HM_PRIMS | HM_INPLACE, roots, 2, NULL, 0, ac, 1, &prims, 0);
		assert_int_equal(prims.info.emit_threads, 1);
		assert_int_equal(prims.info.nprims, n);
		assert_memory_equal(prims.prims, p1.prims, n * sizeof(*p1.prims));
		heapmark_free(&prims);
		heapmark_free(&p1);
	}
	/* strings: an arena both would grow - one thread */
	run_threads = 2;
	run(f, HM_OBJS | HM_REFS | HM_STRINGS | HM_INPLACE, roots, 2, NULL, 0, NULL, 0, &prims, 0);
	assert_int_equal(prims.info.emit_threads, 1);
	heapmark_free(&prims);
	/* no pool: one */
	run_pool = NULL;
	run_pool_bytes = 0;
	run(f, HM_OBJS | HM_REFS, roots, 2, NULL, 0, NULL, 0, &prims, 0);
	assert_int_equal(prims.info.emit_threads, 1);
	assert_memory_equal(prims.refs, copy + one.info.nobjs * sizeof(*one.objs),
			    one.info.nrefs * sizeof(*one.refs));
	heapmark_free(&prims);
	run_threads = 0;
	run_live = NULL;
	heapmark_free(&one);
	free(copy);
	free(pool);
	fake_free(f);
}

static void test_graph_coops_cklass(void **st) { (void)st; graph(true, true); }
static void test_graph_wide(void **st) { (void)st; graph(false, false); }
static void test_graph_coops_wide_klass(void **st) { (void)st; graph(true, false); }

/* A class's loader data is kept as one, as the collector keeps it: an instance
 * keeps its loader, every class object the loader defined, their resolved
 * references; statics are followed; a class object's own fields too. */
static void test_loader_data(void **st)
{
	struct fake *f = fake_new(true, true);
	uint64_t boot = cld_new(f), app = cld_new(f), Loader, K1, K2, loader, m1, m2, inst;
	uint64_t Arr, rr, str, statobj, cp, cache, Other, other_m, refl;
	struct hm_result r;

	(void)st;
	class_klass(f, boot);
	Loader = klass_new(f, MT_AP_K_LOADER, 24, boot, 0);
	f->L.loader_klass = Loader;
	Arr = klass_new(f, MT_AP_K_OBJARRAY, array_lh(true, 16, 2), boot, 0);
	Other = klass_new(f, MT_AP_K_INSTANCE, 16, boot, 0);
	mirror_new(f, Loader, 0);
	mirror_new(f, Arr, 0);
	other_m = mirror_new(f, Other, 0);
	K1 = klass_new(f, MT_AP_K_INSTANCE, 16, app, 0);
	K2 = klass_new(f, MT_AP_K_INSTANCE, 16, app, 0);
	m1 = mirror_new(f, K1, 1);
	m2 = mirror_new(f, K2, 0);
	loader = obj_alloc(f, Loader, 24);
	w64(loader + LOADER_DATA, app);
	set_handle(f, app + CLD_LOADER, loader);
	put_oop(f, m1 + M_LOADER, loader);
	/* K2's constant pool's resolved references: an Object[] holding a string-ish object */
	rr = array_new(f, Arr, 1, 4);
	str = obj_alloc(f, Other, 16);
	put_oop(f, rr + 16, str);
	cp = meta_alloc(f, 32);
	cache = meta_alloc(f, 32);
	w64(K2 + IK_CONSTANTS, cp);
	w64(cp + CP_CACHE, cache);
	set_handle(f, cache + CPC_RR, rr);
	/* K1's static field holds an object; its mirror's second own field another */
	statobj = obj_alloc(f, Other, 16);
	put_oop(f, m1 + M_STATICS, statobj);
	refl = obj_alloc(f, Other, 16);
	put_oop(f, m1 + M_LOADER + 4, refl); /* another of the class object's own fields */
	inst = obj_alloc(f, K1, 16);
	{
		uint64_t roots[] = { inst };

		run(f, HM_HISTO, roots, 1, NULL, 0, NULL, 0, &r, 0);
	}
	assert_int_equal(count_of(&r, K1), 1);
	assert_int_equal(count_of(&r, Loader), 1);
	/* m1, m2 (the app loader's classes) and the boot data's class objects */
	assert_int_equal(count_of(&r, f->class_klass), 2 + 3);
	assert_int_equal(count_of(&r, Arr), 1);         /* resolved references */
	assert_int_equal(count_of(&r, Other), 3);       /* in them, the static, the field */
	assert_int_equal(r.info.clds, 2);
	heapmark_free(&r);
	{ /* a loader object alone keeps what it defined (its injected loader_data) */
		uint64_t third = cld_new(f), K3 = klass_new(f, MT_AP_K_INSTANCE, 16, third, 0);
		uint64_t l2 = obj_alloc(f, Loader, 24), roots[] = { l2 };

		mirror_new(f, K3, 0);
		w64(l2 + LOADER_DATA, third);
		set_handle(f, third + CLD_LOADER, l2);
		run(f, HM_HISTO, roots, 1, NULL, 0, NULL, 0, &r, 0);
		assert_int_equal(count_of(&r, Loader), 1);
		assert_int_equal(count_of(&r, f->class_klass), 1 + 3); /* K3's and the boot ones */
		assert_int_equal(count_of(&r, K1), 0);
		assert_int_equal(r.info.clds, 2);
		heapmark_free(&r);
	}
	(void)m2;
	(void)other_m;
	fake_free(f);
}

/* Weak and phantom referents are not followed; soft ones are. As in HotSpot,
 * a Reference's referent and discovered fields are in none of its oop maps
 * (the collector scans them apart): queue and next are. */
static void references(bool jdk25)
{
	struct fake *f = fake_new(true, true);
	uint64_t boot = cld_new(f), Weak, Soft, Obj, w, s, wo, so, disc, q;
	struct hm_result r;

	class_klass(f, 0);
	/* JDK 25: the referent and discovered in the maps, reference types renumbered */
	Weak = jdk25 ? klass_new(f, MT_AP_K_REF, 32, boot, 1, 12, 4)
		     : klass_new(f, MT_AP_K_REF, 32, boot, 1, 16, 2);
	Soft = jdk25 ? klass_new(f, MT_AP_K_REF, 32, boot, 1, 12, 4)
		     : klass_new(f, MT_AP_K_REF, 32, boot, 1, 16, 2);
	*(uint8_t *)(uintptr_t)(Weak + IK_REFTYPE) = jdk25 ? 2 : 3;
	*(uint8_t *)(uintptr_t)(Soft + IK_REFTYPE) = jdk25 ? 1 : 2;
	if (jdk25)
		f->L.ref_weak = (1u << 2) | (1u << 4);
	Obj = klass_new(f, MT_AP_K_INSTANCE, 16, boot, 0);
	w = obj_alloc(f, Weak, 32);
	s = obj_alloc(f, Soft, 32);
	wo = obj_alloc(f, Obj, 16);
	so = obj_alloc(f, Obj, 16);
	disc = obj_alloc(f, Obj, 16);
	q = obj_alloc(f, Obj, 16);
	put_oop(f, w + REF_REFERENT, wo);
	put_oop(f, s + REF_REFERENT, so);
	put_oop(f, s + REF_DISCOVERED, disc);
	put_oop(f, w + 16, q); /* queue */
	{
		uint64_t roots[] = { w, s };
		struct hm_field rf[] = {
			{ .off = REF_REFERENT, .index = 0, .type = 'L' },
			{ .off = 16, .index = 1, .type = 'L' },
			{ .off = 20, .index = 2, .type = 'L' },
			{ .off = REF_DISCOVERED, .index = 3, .type = 'L' },
		};
		struct hm_class rc[] = { { .mirror = mirror_new(f, Soft, 0), .fields = rf,
					   .nfields = 4 } };

		run(f, HM_HISTO | HM_REFS, roots, 2, NULL, 0, rc, 1, &r, 0);
	}
	assert_int_equal(count_of(&r, Obj), 3); /* so, disc, q: not wo */
	assert_int_equal(r.info.weak, 1);
	/* FIELD edges: the weak queue, the soft referent (index 0), its
	 * discovered (index 3); none to the weak referent (not live) */
	{
		int fields = 0, referent = 0, discovered = 0;

		for (uint64_t i = 0; i < r.info.nrefs; i++) {
			if (r.refs[i].kind != JVMTI_HEAP_REFERENCE_FIELD)
				continue;
			fields++;
			referent += r.refs[i].index == 0;
			discovered += r.refs[i].index == 3;
		}
		assert_int_equal(fields, 3);
		assert_int_equal(referent, 1);
		assert_int_equal(discovered, 1);
	}
	heapmark_free(&r);
	fake_free(f);
}

static void test_references(void **st)
{
	(void)st;
	references(false);
	references(true);
}

/* Records: ids of named objects, FIELD indices by offset, array slots, the
 * edges of a class object, roots, values, strings, sampled objects. */
static void test_records(void **st)
{
	struct fake *f = fake_new(true, true);
	uint64_t boot = cld_new(f), K, Sup, Str, Bytes, Chars, mK, mSup, mStr, mBytes, o, s1, s2;
	uint64_t v1, v2, loader_m;
	struct hm_field kf[] = {
		{ .off = 12, .index = 3, .type = 'I', .projected = true },
		{ .off = 16, .index = 4, .type = 'L', .projected = false },
		{ .off = 20, .index = 5, .type = 'L', .projected = false },
		{ .off = 24, .index = 6, .type = 'F', .projected = true },
	};
	struct hm_field ks[] = { { .off = M_STATICS, .index = 1, .type = 'L' } };
	struct hm_class cls[2];
	struct hm_named named[3];
	struct hm_result r;
	uint64_t oid = 0;
	float fv = 2.5f;
	bool saw_field4 = false, saw_field5 = false, saw_class = false, saw_static = false;
	bool saw_super = false;

	(void)st;
	class_klass(f, 0);
	Sup = klass_new(f, MT_AP_K_INSTANCE, 16, boot, 0);
	K = klass_new(f, MT_AP_K_INSTANCE, 32, boot, 1, 16, 2);
	w64(K + K_SUPER, Sup);
	Str = klass_new(f, MT_AP_K_INSTANCE, 24, boot, 1, STR_VALUE, 1);
	Bytes = klass_new(f, MT_AP_K_TYPEARRAY, array_lh(false, 16, 0), boot, 0);
	Chars = Bytes;
	f->L.string_klass = Str;
	mSup = mirror_new(f, Sup, 0);
	mK = mirror_new(f, K, 1);
	mStr = mirror_new(f, Str, 0);
	mBytes = mirror_new(f, Bytes, 0);
	loader_m = mSup;
	o = obj_alloc(f, K, 32);
	w32(o + 12, (uint32_t)-7);
	memcpy((void *)(uintptr_t)(o + 24), &fv, 4);
	s1 = obj_alloc(f, Str, 24);
	v1 = array_new(f, Bytes, 5, 1);
	memcpy((void *)(uintptr_t)(v1 + 16), "h\xe9llo", 5); /* LATIN1 */
	s2 = obj_alloc(f, Str, 24);
	v2 = array_new(f, Chars, 4, 1);
	{
		uint16_t u[2] = { 0xd83d, 0xde00 }; /* one code point, two chars: UTF16 */

		memcpy((void *)(uintptr_t)(v2 + 16), u, 4);
	}
	*(uint8_t *)(uintptr_t)(s2 + STR_CODER) = 1;
	put_oop(f, s1 + STR_VALUE, v1);
	put_oop(f, s2 + STR_VALUE, v2);
	put_oop(f, o + 16, s1);
	put_oop(f, o + 20, s2);
	put_oop(f, mK + M_STATICS, o);
	cls[0] = (struct hm_class){ .mirror = mK, .fields = kf, .nfields = 4, .statics = ks,
				    .nstatics = 1 };
	cls[1] = (struct hm_class){ .mirror = mStr };
	named[0] = (struct hm_named){ .addr = mK, .id = 10 };
	named[1] = (struct hm_named){ .addr = mSup, .id = 11 };
	named[2] = (struct hm_named){ .addr = s2, .sample = 77 };
	{
		uint64_t roots[] = { o };

		run(f, HM_OBJS | HM_REFS | HM_PRIMS | HM_STRINGS | HM_HISTO, roots, 1, named, 3,
		    cls, 2, &r, 0);
	}
	for (uint64_t i = 0; i < r.info.nobjs; i++) {
		if (r.objs[i].size == 32 && r.objs[i].cls == 10)
			oid = r.objs[i].id;
		/* the CLASS reference rides with the object, a class object has none */
		if (r.objs[i].size == 32 && r.objs[i].cls == 10 &&
		    r.objs[i].flags == MT_AP_HOBJ_CLASSREF)
			saw_class = true;
		if (r.objs[i].id == 10)
			assert_int_equal(r.objs[i].flags, 0);
	}
	assert_true(oid >= 1000);
	for (uint64_t i = 0; i < r.info.nrefs; i++) {
		const struct mt_ap_href *e = &r.refs[i];

		if (e->from == oid && e->kind == JVMTI_HEAP_REFERENCE_FIELD && e->index == 4)
			saw_field4 = true;
		if (e->from == oid && e->kind == JVMTI_HEAP_REFERENCE_FIELD && e->index == 5)
			saw_field5 = true;
		assert_true(e->kind != JVMTI_HEAP_REFERENCE_CLASS); /* with the objects */
		if (e->from == 10 && e->kind == JVMTI_HEAP_REFERENCE_STATIC_FIELD &&
		    e->index == 1 && e->to == oid)
			saw_static = true;
		if (e->from == 10 && e->kind == JVMTI_HEAP_REFERENCE_SUPERCLASS && e->to == 11)
			saw_super = true;
		assert_true(e->from == 10 || e->from == 11 || e->from >= 1000);
		assert_true(e->kind != JVMTI_HEAP_REFERENCE_CLASS || e->from != 10);
	}
	assert_true(saw_field4 && saw_field5 && saw_class && saw_static && saw_super);
	assert_int_equal(r.info.nroots, 1);
	assert_int_equal(r.roots[0].to, oid);
	assert_int_equal(r.roots[0].kind, JVMTI_HEAP_REFERENCE_JNI_GLOBAL);
	/* values: the int and the float (as a double), not the references */
	assert_int_equal(r.info.nprims, 2);
	for (uint64_t i = 0; i < r.info.nprims; i++) {
		assert_int_equal(r.prims[i].obj, oid);
		if (r.prims[i].type == 'I') {
			assert_int_equal((int64_t)r.prims[i].bits, -7);
		} else {
			double d;

			memcpy(&d, &r.prims[i].bits, 8);
			assert_true(d == 2.5);
		}
	}
	/* strings: LATIN1 and UTF-16 as UTF-8 */
	assert_int_equal(r.info.nstrs, 2);
	assert_string_equal((const char *)(uintptr_t)r.strs[0].utf8, "h\xc3\xa9llo");
	assert_int_equal(r.strs[0].len, 6);
	assert_string_equal((const char *)(uintptr_t)r.strs[1].utf8, "\xf0\x9f\x98\x80");
	/* the sampled string keeps its rank id and names its sample */
	assert_int_equal(r.info.nsampled, 1);
	assert_int_equal(r.sampled[0].sample, 77);
	assert_true(r.sampled[0].id >= 1000);
	/* unnamed class objects the walk met: named by their Klass */
	{
		bool saw_str = false;

		for (uint64_t i = 0; i < r.info.nklasses; i++) {
			assert_true(r.klasses[i].id >= 1000);
			saw_str |= r.klasses[i].klass == Str;
			assert_true(r.klasses[i].klass != K && r.klasses[i].klass != Sup);
		}
		assert_true(saw_str);
	}
	assert_int_equal(histo_of(&r, K)->cls, 10);
	(void)mStr;
	(void)mBytes;
	(void)loader_m;
	heapmark_free(&r);
	fake_free(f);
}

/* HotSpot's iteration of a stack chunk, as the copy calls it (the layout's
 * sc_iterate) - here a stand-in that calls the closure's vtable as
 * HotSpot's does: do_metadata() first, then each reference slot of the
 * stack (full oops by do_oop(oop *), slot 0; narrow ones by slot 1), then
 * the header's parent and cont in the heap's format. fake_chunk says what
 * it reports; .swap sends the header through the other slot (a vtable laid
 * out otherwise), .stray one slot outside the chunk. */
static struct {
	uint64_t full[4], narrow[4];
	int nfull, nnarrow;
	uint64_t header[2];
	bool coops, swap, stray;
	int calls;
	long metadata;
} fake_chunk;

static void fake_iterate(void *cl, uint64_t obj, uint64_t klass)
{
	const void *const *vt = *(const void *const *const *)cl;
	void (*do_full)(void *, uint64_t *) = (void (*)(void *, uint64_t *))(uintptr_t)vt[0];
	void (*do_narrow)(void *, uint32_t *) = (void (*)(void *, uint32_t *))(uintptr_t)vt[1];
	long (*do_metadata)(void *) = (long (*)(void *))(uintptr_t)vt[3];

	(void)klass;
	fake_chunk.calls++;
	fake_chunk.metadata = do_metadata(cl);
	for (int i = 0; i < fake_chunk.nfull; i++)
		do_full(cl, (uint64_t *)(uintptr_t)fake_chunk.full[i]);
	for (int i = 0; i < fake_chunk.nnarrow; i++)
		do_narrow(cl, (uint32_t *)(uintptr_t)fake_chunk.narrow[i]);
	for (int i = 0; i < 2; i++) {
		if (fake_chunk.coops != fake_chunk.swap)
			do_narrow(cl, (uint32_t *)(uintptr_t)fake_chunk.header[i]);
		else
			do_full(cl, (uint64_t *)(uintptr_t)fake_chunk.header[i]);
	}
	if (fake_chunk.stray)
		do_full(cl, (uint64_t *)(uintptr_t)(obj - 8));
}

/* A virtual thread's stack chunk: what HotSpot's iteration reports in its
 * stack is marked, each a STACK_LOCAL root; a stale word it does not report
 * is not; the header's parent is a FIELD; the chunk's size is its fields,
 * its stack and its bitmap's room; a vtable laid out otherwise, or a slot
 * outside the chunk, stops the mark. */
static void test_stack_chunks(void **st)
{
	for (int coops = 0; coops < 2; coops++) {
		struct fake *f = fake_new(coops, true);
		uint64_t boot = cld_new(f), K, C, A, B, X, P, c;
		uint32_t hdr = coops ? 24 : 32, words = 6;
		/* fields, stack, bitmap (a bit a slot: 2 a word with compressed oops) */
		uint64_t size = hdr + 8 * words + 8;
		struct hm_result r;

		(void)st;
		class_klass(f, 0);
		K = klass_new(f, MT_AP_K_INSTANCE, 16, boot, 0);
		/* parent and cont after the size int (12) and 4 bytes */
		C = klass_new(f, MT_AP_K_STACKCHUNK, (int32_t)hdr | 1, boot, 1, 16, 2);
		c = obj_alloc(f, C, size);
		A = obj_alloc(f, K, 16);
		B = obj_alloc(f, K, 16);
		X = obj_alloc(f, K, 16);
		P = obj_alloc(f, K, 16);
		f->L.stackchunk_klass = C;
		f->L.sc_size = 12;
		f->L.sc_flags = 20;
		w32(c + 12, words);
		put_oop(f, c + 16, P); /* parent */
		w64(c + hdr + 8, A);   /* a full oop in stack word 1 */
		w32(c + hdr + 24, (uint32_t)((B - f->L.oop_base) >> 3)); /* a narrow one, word 3 */
		w64(c + hdr + 32, X);  /* a stale word HotSpot does not report */
		memset(&fake_chunk, 0, sizeof(fake_chunk));
		fake_chunk.coops = coops;
		fake_chunk.full[fake_chunk.nfull++] = c + hdr + 8;
		fake_chunk.narrow[fake_chunk.nnarrow++] = c + hdr + 24;
		fake_chunk.header[0] = c + 16;
		fake_chunk.header[1] = c + 16 + oopsz(f);

		{ /* without sc_iterate: the mark stops at the chunk */
			uint64_t roots[] = { c };

			run(f, HM_HISTO, roots, 1, NULL, 0, NULL, 0, &r, -ENOTSUP);
			assert_non_null(strstr(r.info.why, "stack chunk"));
			heapmark_free(&r);
		}
		f->L.sc_iterate = (uint64_t)(uintptr_t)fake_iterate;
		{
			uint64_t roots[] = { c };
			int locals = 0;

			run_one = true; /* the iteration's calls counted: one run */
			run(f, HM_HISTO | HM_OBJS | HM_REFS, roots, 1, NULL, 0, NULL, 0, &r, 0);
			run_one = false;
			assert_int_equal(fake_chunk.calls, 1);
			assert_int_equal(fake_chunk.metadata, 0);
			assert_int_equal(r.info.marked, 4); /* c, A, B, P - not X */
			assert_int_equal(histo_of(&r, K)->count, 3);
			assert_int_equal(histo_of(&r, C)->bytes, size);
			for (uint64_t i = 0; i < r.info.nroots; i++)
				locals += r.roots[i].kind == JVMTI_HEAP_REFERENCE_STACK_LOCAL;
			assert_int_equal(locals, 2);
			{
				int parent = 0;

				for (uint64_t i = 0; i < r.info.nrefs; i++)
					parent += r.refs[i].kind == JVMTI_HEAP_REFERENCE_FIELD;
				assert_int_equal(parent, 1); /* P, from the header's oop map */
			}
			heapmark_free(&r);
		}
		{ /* whose locals: the virtual thread whose `cont` is the chunk's */
			uint64_t VK = klass_new(f, MT_AP_K_INSTANCE, 32, boot, 1, 16, 1);
			uint64_t V = obj_alloc(f, VK, 32), Kc = obj_alloc(f, K, 16);
			uint64_t roots[] = { c, V };

			put_oop(f, V + 16, Kc); /* VirtualThread.cont */
			w64(V + 24, 4242);      /* Thread.tid */
			put_oop(f, c + 16 + oopsz(f), Kc); /* the chunk's cont (injected) */
			run_vt.klass = VK;
			run_vt.cont = 16;
			run_vt.tid = 24;
			run_vt.parent = 16;
			for (int mounted = 0; mounted < 2; mounted++) {
				uint64_t i;

				/* mounted: JVMTI's OTHER root to the thread, its tid after it */
				run_kinds[1] = mounted ? JVMTI_HEAP_REFERENCE_OTHER : 0;
				run(f, HM_HISTO | HM_OBJS | HM_REFS, roots, 2, NULL, 0, NULL, 0, &r,
				    0);
				for (i = 0; i < r.info.nroots; i++) /* the chunk's marker */
					if (r.roots[i].flags == (MT_AP_HROOT_TID | MT_AP_HROOT_VTHREAD))
						break;
				assert_true(i + 2 < r.info.nroots);
				assert_int_equal(r.roots[i].to, 4242); /* the tid, no object */
				assert_int_equal(r.roots[i].kind, 0);
				/* the chunk's two locals follow it */
				assert_int_equal(r.roots[i + 1].kind, JVMTI_HEAP_REFERENCE_STACK_LOCAL);
				assert_int_equal(r.roots[i + 2].kind, JVMTI_HEAP_REFERENCE_STACK_LOCAL);
				assert_int_equal(r.roots[i + 1].flags, MT_AP_HROOT_VTHREAD);
				{
					int markers = 0, after_other = 0;

					for (uint64_t j = 0; j < r.info.nroots; j++) {
						markers += !!(r.roots[j].flags & MT_AP_HROOT_TID);
						after_other += j && r.roots[j].flags == MT_AP_HROOT_TID &&
							       r.roots[j - 1].kind ==
								       JVMTI_HEAP_REFERENCE_OTHER;
					}
					assert_int_equal(markers, 1 + mounted);
					assert_int_equal(after_other, mounted);
				}
				heapmark_free(&r);
			}
			{ /* a chunk of no thread the mark met: its marker's tid is 0 */
				uint64_t only[] = { c };
				uint64_t i;

				run_kinds[1] = 0;
				run(f, HM_HISTO | HM_OBJS | HM_REFS, only, 1, NULL, 0, NULL, 0, &r, 0);
				for (i = 0; i < r.info.nroots; i++)
					if (r.roots[i].flags & MT_AP_HROOT_TID)
						break;
				assert_true(i < r.info.nroots);
				assert_int_equal(r.roots[i].to, 0);
				heapmark_free(&r);
			}
			memset(&run_vt, 0, sizeof(run_vt));
			put_oop(f, c + 16 + oopsz(f), 0);
		}
		{ /* the header through the other do_oop: a vtable not as expected */
			uint64_t roots[] = { c };

			fake_chunk.swap = true;
			run(f, HM_HISTO, roots, 1, NULL, 0, NULL, 0, &r, -ENOTSUP);
			assert_non_null(strstr(r.info.why, "did not report as expected"));
			heapmark_free(&r);
			fake_chunk.swap = false;
		}
		{ /* a slot outside the chunk */
			uint64_t roots[] = { c };

			fake_chunk.stray = true;
			run(f, HM_HISTO, roots, 1, NULL, 0, NULL, 0, &r, -ENOTSUP);
			assert_non_null(strstr(r.info.why, "did not report as expected"));
			heapmark_free(&r);
		}
		fake_free(f);
	}
}

/* A layout that does not hold stops the mark, with a reason. */
static void test_bad_layouts(void **st)
{
	struct fake *f = fake_new(true, true);
	uint64_t boot = cld_new(f), K, o, bad;
	struct hm_result r;

	(void)st;
	class_klass(f, 0);
	K = klass_new(f, MT_AP_K_INSTANCE, 24, boot, 1, 16, 1);
	o = obj_alloc(f, K, 24);
	bad = meta_alloc(f, IK_SIZE + 64); /* layout helper 0: no Klass has that */
	{
		uint64_t p = obj_alloc(f, bad, 24), roots[] = { o };

		put_oop(f, o + 16, p);
		run(f, HM_HISTO, roots, 1, NULL, 0, NULL, 0, &r, -EPROTO);
		assert_non_null(strstr(r.info.why, "no Klass the layout knows"));
		assert_int_equal(r.info.status, -EPROTO);
		heapmark_free(&r);
	}
	{ /* a root outside the heap */
		uint64_t roots[] = { addr(f->meta) };

		run(f, HM_HISTO, roots, 1, NULL, 0, NULL, 0, &r, -EPROTO);
		assert_non_null(strstr(r.info.why, "outside the heap"));
		heapmark_free(&r);
	}
	{ /* a stack chunk */
		uint64_t C = klass_new(f, MT_AP_K_STACKCHUNK, 32, boot, 0), c = obj_alloc(f, C, 32);
		uint64_t roots[] = { c };

		f->L.stackchunk_klass = C;
		run(f, HM_HISTO, roots, 1, NULL, 0, NULL, 0, &r, -ENOTSUP);
		assert_non_null(strstr(r.info.why, "stack chunk"));
		heapmark_free(&r);
	}
	{ /* an oop map past the instance */
		uint64_t B = klass_new(f, MT_AP_K_INSTANCE, 16, boot, 1, 12, 4), b = obj_alloc(f, B, 16);
		uint64_t roots[] = { b };

		run(f, HM_HISTO, roots, 1, NULL, 0, NULL, 0, &r, -EPROTO);
		assert_non_null(strstr(r.info.why, "oop map"));
		heapmark_free(&r);
	}
	{ /* a Klass whose class object names another Klass */
		uint64_t K2 = klass_new(f, MT_AP_K_INSTANCE, 16, boot, 0), m = mirror_new(f, K2, 0);
		uint64_t x = obj_alloc(f, K2, 16), roots[] = { x };

		w64(m + M_KLASS, K);
		run(f, HM_HISTO, roots, 1, NULL, 0, NULL, 0, &r, -EPROTO);
		assert_non_null(strstr(r.info.why, "does not name it back"));
		heapmark_free(&r);
	}
	{ /* a named class whose reference field lies outside its oop maps */
		uint64_t F = klass_new(f, MT_AP_K_INSTANCE, 24, boot, 1, 16, 1);
		uint64_t mF = mirror_new(f, F, 0), x = obj_alloc(f, F, 24), roots[] = { x };
		struct hm_field ff[] = { { .off = 20, .index = 1, .type = 'L' } };
		struct hm_class fc = { .mirror = mF, .fields = ff, .nfields = 1 };

		run(f, HM_HISTO, roots, 1, NULL, 0, &fc, 1, &r, -EPROTO);
		assert_non_null(strstr(r.info.why, "in none of its oop maps"));
		heapmark_free(&r);
		ff[0].off = 16; /* where the map says: fine */
		run(f, HM_HISTO, roots, 1, NULL, 0, &fc, 1, &r, 0);
		heapmark_free(&r);
	}
	{ /* an incomplete layout */
		uint64_t roots[] = { o };

		f->L.size--;
		run(f, HM_HISTO, roots, 1, NULL, 0, NULL, 0, &r, -EINVAL);
		assert_non_null(strstr(r.info.why, "incomplete"));
		heapmark_free(&r);
		f->L.size++;
	}
	fake_free(f);
}

static void test_utf8(void **st)
{
	uint16_t s[] = { 'a', 0xe9, 0x20ac, 0xd83d, 0xde00, 0xdc00, 'z' };
	char out[32];
	bool cut;
	size_t n;

	(void)st;
	n = heapmark_utf8(s, 7, out, sizeof(out) - 1, &cut);
	assert_false(cut);
	assert_string_equal(out, "a\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\xef\xbf\xbdz");
	assert_int_equal(n, strlen(out));
	n = heapmark_utf8(s, 7, out, 4, &cut); /* 'a' + 2 bytes fit, the euro sign does not */
	assert_true(cut);
	assert_int_equal(n, 3);
}

/* A copy forked while the collector moved objects (Shenandoah): an old copy's
 * mark word is its forwarding pointer (low bits 11); with HM_FORWARDING the
 * mark follows it from roots and fields alike, counts the new copies only and
 * says how many references it followed; without it the stale copies count. */
static void test_forwarding(void **st)
{
	struct fake *f = fake_new(true, true);
	uint64_t boot = cld_new(f), A, B, a_new, a_old, b_old, b_new, b2;
	struct hm_result r;

	(void)st;
	class_klass(f, 0);
	A = klass_new(f, MT_AP_K_INSTANCE, 32, boot, 1, 16, 2); /* two fields at 16 */
	B = klass_new(f, MT_AP_K_INSTANCE, 24, boot, 1, 16, 1);
	mirror_new(f, A, 0);
	mirror_new(f, B, 0);
	a_old = obj_alloc(f, A, 32);
	b_old = obj_alloc(f, B, 24);
	b2 = obj_alloc(f, B, 24);
	a_new = obj_alloc(f, A, 32);
	b_new = obj_alloc(f, B, 24);
	/* a moved: its old copy's fields as they were, the new one's as now */
	put_oop(f, a_old + 16, b_old);
	put_oop(f, a_new + 16, b_old);   /* not yet updated: the old copy of b */
	put_oop(f, a_new + 20, b2);      /* a write after the move */
	put_oop(f, b_new + 16, a_old);   /* b's new copy names a's old one */
	w64(a_old, a_new | 3);
	w64(b_old, b_new | 3);
	{
		uint64_t roots[] = { a_old }; /* a root not yet updated either */
		struct hm_named nm[] = { { .addr = a_old, .id = 7 } };

		run(f, HM_HISTO | HM_OBJS | HM_REFS | HM_ADDRS | HM_FORWARDING, roots, 1, nm, 1,
		    NULL, 0, &r, 0);
	}
	assert_int_equal(count_of(&r, A), 1);
	assert_int_equal(count_of(&r, B), 2); /* b's new copy and b2 */
	assert_true(r.info.forwarded >= 3);   /* the root, a's field, b's field */
	for (uint64_t i = 0; i < r.info.nobjs; i++) {
		assert_int_not_equal(r.addrs[i], a_old);
		assert_int_not_equal(r.addrs[i], b_old);
		if (r.addrs[i] == a_new)
			assert_int_equal(r.objs[i].id, 7); /* the named object, at its new place */
	}
	/* every reference lands on a marked object's id: b_new -> a (id 7) */
	{
		bool saw = false;

		for (uint64_t i = 0; i < r.info.nrefs; i++)
			saw |= r.refs[i].to == 7 && r.refs[i].kind == JVMTI_HEAP_REFERENCE_FIELD;
		assert_true(saw);
	}
	heapmark_free(&r);
	/* without it: the stale copies are what the mark sees */
	{
		uint64_t roots[] = { a_old };

		run(f, HM_HISTO, roots, 1, NULL, 0, NULL, 0, &r, 0);
	}
	assert_int_equal(r.info.forwarded, 0);
	assert_int_equal(count_of(&r, B), 1); /* b_old only: b2 and b_new missed */
	heapmark_free(&r);
	fake_free(f);
}

/* A heap of many classes met late, for the mark in two threads: loaders
 * with their own loader data (each defining classes whose class objects hold
 * statics), instances of 60 classes (two reference fields each), object
 * arrays, weak references, random references between them (a fixed
 * sequence), so that the second thread meets classes the first has not made
 * (it hands those objects over), class objects, loaders. One thread and two
 * agree on everything (run(): same_in_two_threads()); the second scanned a
 * share. */
static void test_mark_random(void **st)
{
	struct fake *f = fake_new(true, true);
	uint64_t boot = cld_new(f), Loader, Arr, Weak, K[60], objs[4000], roots[8];
	uint64_t before = run_helper_marked, seed = 42;
	struct hm_result r;
	size_t n = 0;
	unsigned tries;

	(void)st;
	class_klass(f, 0);
	Loader = klass_new(f, MT_AP_K_LOADER, 24, boot, 0);
	Arr = klass_new(f, MT_AP_K_OBJARRAY, array_lh(true, array_hdr(f), 2), boot, 0);
	Weak = klass_new(f, MT_AP_K_REF, 32, boot, 1, 16, 2);
	*(uint8_t *)(uintptr_t)(Weak + IK_REFTYPE) = 3;
	mirror_new(f, Loader, 0);
	mirror_new(f, Arr, 0);
	mirror_new(f, Weak, 0);
	for (size_t c = 0; c < 60; c++) {
		uint64_t cld = boot;

		if (c % 10 == 0) { /* a loader of its own for the next ten */
			uint64_t l = obj_alloc(f, Loader, 24);

			cld = cld_new(f);
			w64(l + LOADER_DATA, cld);
			set_handle(f, cld + CLD_LOADER, l);
			objs[n++] = l;
		} else {
			cld = 0;
		}
		K[c] = klass_new(f, MT_AP_K_INSTANCE, 24, cld ? cld : boot, 1, 12, 2);
		objs[n++] = mirror_new(f, K[c], 1);
	}
	while (n < 3000) {
		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		switch ((seed >> 33) % 8) {
		case 0:
			objs[n++] = array_new(f, Arr, 6, oopsz(f));
			break;
		case 1:
			objs[n++] = obj_alloc(f, Weak, 32);
			break;
		default:
			objs[n++] = obj_alloc(f, K[(seed >> 40) % 60], 24);
			break;
		}
	}
	/* references: each object's slots to others, most forward (chains) */
	for (size_t i = 0; i < n; i++) {
		uint64_t o = objs[i];
		uint32_t slots[6], ns = 0;
		uint32_t k = *(uint32_t *)(uintptr_t)(o + 8);
		uint64_t kl = f->L.klass_base + ((uint64_t)k << 3);

		if (kl == Arr) {
			for (uint32_t e = 0; e < 6; e++)
				slots[ns++] = array_hdr(f) + e * oopsz(f);
		} else if (kl == Weak) {
			slots[ns++] = REF_REFERENT;
			slots[ns++] = 16;
		} else if (kl != Loader && kl != f->class_klass) {
			slots[ns++] = 12;
			slots[ns++] = 16;
		} else if (kl == f->class_klass) {
			slots[ns++] = M_STATICS;
		}
		for (uint32_t j = 0; j < ns; j++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			if ((seed >> 60) < 3)
				continue; /* null */
			put_oop(f, o + slots[j], objs[(seed >> 61) ? (i + 1 + (seed >> 35) % 40) % n :
								      (seed >> 33) % n]);
		}
	}
	for (size_t i = 0; i < 8; i++)
		roots[i] = objs[(i * 389 + 7) % n];
	/* how much the second thread takes depends on when it runs (a busy
	 * machine may run the first through the whole heap before it): again,
	 * until it took a share, each run checked against one thread */
	for (tries = 0; tries < 50 && run_helper_marked - before <= 100; tries++) {
		run(f, HM_HISTO | HM_OBJS | HM_REFS, roots, 8, NULL, 0, NULL, 0, &r, 0);
		assert_true(r.info.marked > 1000);
		assert_true(r.info.weak > 0);
		assert_true(r.info.clds >= 2);
		heapmark_free(&r);
	}
	print_message("the second thread scanned %llu objects in %u runs\n",
		      (unsigned long long)(run_helper_marked - before), tries);
	assert_true(run_helper_marked - before > 100);
	fake_free(f);
}

/* An object array of more than one chunk (heapmark.c's ARRAY_CHUNK, 64 Ki
 * elements, pushed a chunk at a time): every element followed, the last
 * chunk's too; one thread and two agree (run()), each chunk shared. */
static void test_big_array(void **st)
{
	struct fake *f = fake_new(true, true);
	uint64_t boot = cld_new(f), B, Arr, arr, last, roots[1];
	const uint32_t len = 3 * 32768 + 5, nb = 12000;
	uint64_t *bs = calloc(nb, sizeof(*bs));
	uint64_t before = run_two;
	struct hm_result r;

	(void)st;
	assert_non_null(bs);
	class_klass(f, 0);
	B = klass_new(f, MT_AP_K_INSTANCE, 24, boot, 0);
	Arr = klass_new(f, MT_AP_K_OBJARRAY, array_lh(true, array_hdr(f), 2), boot, 0);
	mirror_new(f, B, 0);
	mirror_new(f, Arr, 0);
	arr = array_new(f, Arr, len, oopsz(f));
	for (uint32_t i = 0; i < nb; i++)
		bs[i] = obj_alloc(f, B, 24);
	for (uint32_t i = 0; i + 1 < len; i++) /* every seventh null */
		if (i % 7)
			put_oop(f, arr + array_hdr(f) + (uint64_t)i * oopsz(f), bs[(i / 7) % nb]);
	last = obj_alloc(f, B, 24); /* in the last chunk alone */
	put_oop(f, arr + array_hdr(f) + (uint64_t)(len - 1) * oopsz(f), last);
	roots[0] = arr;
	run(f, HM_HISTO | HM_OBJS | HM_REFS, roots, 1, NULL, 0, NULL, 0, &r, 0);
	assert_int_equal(run_two, before + 1); /* again in two threads, the same */
	assert_true(r.info.edges >= len);
	{
		bool seen = false;
		uint64_t instances = 0;

		for (uint64_t i = 0; i < r.info.nhisto; i++)
			if (r.histo[i].klass == B)
				instances = r.histo[i].count;
		assert_int_equal(instances, nb + 1);
		for (uint64_t i = 0; i < r.info.nrefs; i++)
			seen |= r.refs[i].index == (int32_t)(len - 1);
		assert_true(seen);
	}
	heapmark_free(&r);
	free(bs);
	fake_free(f);
}

/* The tests before ran each heap again with the mark in two threads
 * (same_in_two_threads()): the second thread took a share of the work (the
 * first hands it half its stack when asked) and both agreed throughout. */
static void test_mark_shared(void **st)
{
	(void)st;
	print_message("%u runs again in two threads; the second scanned %llu objects\n", run_two,
		      (unsigned long long)run_helper_marked);
	assert_true(run_two >= 10);
	assert_true(run_helper_marked > 100); /* test_mark_random's at least */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_graph_coops_cklass),
		cmocka_unit_test(test_graph_wide),
		cmocka_unit_test(test_graph_coops_wide_klass),
		cmocka_unit_test(test_loader_data),
		cmocka_unit_test(test_references),
		cmocka_unit_test(test_records),
		cmocka_unit_test(test_bad_layouts),
		cmocka_unit_test(test_stack_chunks),
		cmocka_unit_test(test_utf8),
		cmocka_unit_test(test_forwarding),
		cmocka_unit_test(test_live),
		cmocka_unit_test(test_pool),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_mark_random),
		cmocka_unit_test(test_big_array),
		cmocka_unit_test(test_mark_shared), /* last: the runs before it counted */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
