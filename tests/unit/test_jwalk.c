// SPDX-License-Identifier: GPL-2.0
/*
 * test_jwalk.c - the stack walker's layout and frame naming (user/jstack/jwalk.c)
 * over synthetic JVM memory images laid out as JDK 25 (CodeBlob::_kind,
 * nmethod::_method) and JDK 17 (blobs told by name, CompiledMethod::_method).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "jstack/jwalk.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

#include "fake_target.h"

static struct fake *new_fake(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->used = 64;
	return f;
}

/* What a fake JVM holds: statics, the interpreter, one code heap, blobs. */
struct jvm {
	uint64_t heaps_var, interp_var, ret_var;    /* static fields' addresses */
	uint64_t interp_lo, heap_lo, segmap, nm, stub, method;
};

#define HEAP_SEGS 16
#define LOG2_SEG 6

/*
 * One CodeHeap of HEAP_SEGS 64-byte segments: an nmethod in segments 0-3
 * (block header 8 or 16 bytes, then the blob), a runtime stub in 4-5, the
 * rest free. Blob header: _size at 12, _frame_size at 28, _name at 96, the
 * kind byte at 56 (JDK 25 only), the nmethod's Method* at 112.
 */
static void lay_out(struct fake *f, struct jvm *j, bool jdk25, uint64_t hb)
{
	uint64_t arr, data, heap, q, v;
	unsigned char *map;

	j->heaps_var = fake_alloc(f, 8);
	j->interp_var = fake_alloc(f, 8);
	j->ret_var = fake_alloc(f, 8);
	/* GrowableArray<CodeHeap*>: _len at 0, _data at 8 */
	arr = fake_alloc(f, 16);
	data = fake_alloc(f, 8);
	heap = fake_alloc(f, 512);
	put64(f, j->heaps_var, arr);
	put32(f, arr, 1);
	put64(f, arr + 8, data);
	put64(f, data, heap);
	f->used = (f->used + 63) & ~(size_t)63;
	j->heap_lo = fake_alloc(f, HEAP_SEGS << LOG2_SEG);
	j->segmap = fake_alloc(f, HEAP_SEGS);
	/* CodeHeap: _memory at 8 (VirtualSpace: _low_boundary 0, _high_boundary 8),
	 * _segmap at 120, _log2_segment_size at 256 */
	put64(f, heap + 8, j->heap_lo);
	put64(f, heap + 16, j->heap_lo + (HEAP_SEGS << LOG2_SEG));
	put64(f, heap + 120, j->segmap);
	put32(f, heap + 256, LOG2_SEG);
	map = fake_at(f, j->segmap);
	memset(map, 0xff, HEAP_SEGS);
	for (int i = 0; i < 4; i++)
		map[i] = (unsigned char)i;
	map[4] = 0;
	map[5] = 1;
	/* blocks: the used flag at hb - 8 (the Header's second word or byte) */
	j->nm = j->heap_lo + hb;
	j->stub = j->heap_lo + (4 << LOG2_SEG) + hb;
	*(unsigned char *)fake_at(f, j->nm - hb + 8 - (hb == 8 ? 4 : 0)) = 1;
	*(unsigned char *)fake_at(f, j->stub - hb + 8 - (hb == 8 ? 4 : 0)) = 1;
	put32(f, j->nm + 12, (4 << LOG2_SEG) - (uint32_t)hb);
	put32(f, j->nm + 28, 6);
	put32(f, j->stub + 12, (2 << LOG2_SEG) - (uint32_t)hb);
	put32(f, j->stub + 28, 4);
	put64(f, j->nm + 96, fake_str(f, jdk25 ? "AllocStacks$Chain::c01" : "nmethod"));
	put64(f, j->stub + 96, fake_str(f, "_new_instance_Java"));
	if (jdk25) {
		*(unsigned char *)fake_at(f, j->nm + 56) = 1;
		*(unsigned char *)fake_at(f, j->stub + 56) = 6;
	}
	j->method = 0x7f1234567000ull;
	put64(f, j->nm + 112, j->method);
	/* the interpreter: a StubQueue (_stub_buffer 8, _buffer_limit 16) */
	q = fake_alloc(f, 32);
	j->interp_lo = 0x7f0000100000ull;
	put64(f, q + 8, j->interp_lo);
	put32(f, q + 16, 0x20000);
	put64(f, j->interp_var, q);
	v = 0x7f0000123456ull; /* the call stub's return address */
	put64(f, j->ret_var, v);
}

static struct mt_vmstructs *open_jvm(struct fake *f, struct jvm *j, bool jdk25, bool complete)
{
	uint64_t hb = jdk25 ? 8 : 16;
	struct tfield fields[] = {
		{ "JavaThread", "_anchor", "JavaFrameAnchor", 0, 1152, 0 },
		{ "JavaCallWrapper", "_anchor", "JavaFrameAnchor", 0, 32, 0 },
		{ "JavaFrameAnchor", "_last_Java_sp", "intptr_t*", 0, 0, 0 },
		{ "JavaFrameAnchor", "_last_Java_pc", "address", 0, 8, 0 },
		{ "JavaFrameAnchor", "_last_Java_fp", "intptr_t*", 0, 16, 0 },
		{ "CodeBlob", "_frame_size", "int", 0, 28, 0 },
		{ "CodeBlob", "_size", "int", 0, 12, 0 },
		{ "CodeBlob", "_name", "const char*", 0, 96, 0 },
		{ "HeapBlock", "_header", "HeapBlock::Header", 0, 0, 0 },
		{ "HeapBlock::Header", "_used", "bool", 0, hb == 8 ? 4 : 8, 0 },
		{ "StubRoutines", "_call_stub_return_address", "address", 1, 0, 0 },
		{ "AbstractInterpreter", "_code", "StubQueue*", 1, 0, 0 },
		{ "StubQueue", "_stub_buffer", "address", 0, 8, 0 },
		{ "StubQueue", "_buffer_limit", "int", 0, 16, 0 },
		{ "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1, 0, 0 },
		{ "GrowableArrayBase", "_len", "int", 0, 0, 0 },
		{ "GrowableArray<int>", "_data", "int*", 0, 8, 0 },
		{ "CodeHeap", "_memory", "VirtualSpace", 0, 8, 0 },
		{ "CodeHeap", "_segmap", "VirtualSpace", 0, 120, 0 },
		{ "CodeHeap", "_log2_segment_size", "int", 0, 256, 0 },
		{ "VirtualSpace", "_low_boundary", "char*", 0, 0, 0 },
		{ "VirtualSpace", "_high_boundary", "char*", 0, 8, 0 },
		{ jdk25 ? "nmethod" : "CompiledMethod", "_method", "Method*", 0, 112, 0 },
		{ "CodeBlob", "_kind", "CodeBlobKind", 0, 56, 0 },
	};
	const struct ttype types[] = { { "HeapBlock", NULL, 0, 0, 0, hb } };
	const struct tconst ints[] = {
		{ "frame::entry_frame_call_wrapper_offset", -6 },
		{ "frame::interpreter_frame_sender_sp_offset", -1 },
		{ "frame::interpreter_frame_last_sp_offset", -2 },
		{ "CodeBlobKind::Nmethod", 1 },
	};
	size_t nf = MT_ARRAY_SIZE(fields) - (jdk25 ? 0 : 1), ni = MT_ARRAY_SIZE(ints) - (jdk25 ? 0 : 1);
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;

	lay_out(f, j, jdk25, hb);
	fields[10].address = j->ret_var;
	fields[11].address = j->interp_var;
	fields[14].address = j->heaps_var;
	if (!complete)
		fields[5].field = "_frame_size_gone";
	build(f, &s, fields, nf, types, MT_ARRAY_SIZE(types), ints, ni, NULL, 0);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
	return vs;
}

static void check_frames(const struct mt_vmstructs *vs, const struct jwalk_layout *l,
			 const struct jvm *j)
{
	struct mt_jframe interp = { 0x7f00aa000010ull, 0x7f00bb000123ull, 0 };
	struct mt_jframe comp = { j->nm + 100, j->nm | MT_JFRAME_COMPILED, j->method };
	struct mt_jframe stub = { j->stub + 20, j->stub | MT_JFRAME_COMPILED, 0x1234 };
	struct mt_jframe gone = { j->nm + 4096, j->nm | MT_JFRAME_COMPILED, j->method };
	struct mt_jframe reused = { j->nm + 100, j->nm | MT_JFRAME_COMPILED, j->method + 88 };
	struct mt_jstack st = { 0 };
	uint64_t m, pc;
	char name[64];

	assert_int_equal(jwalk_frame_method(vs, l, &interp, &m, name, sizeof(name)), JWALK_INTERP);
	assert_int_equal(m, interp.a);
	assert_int_equal(jwalk_frame_method(vs, l, &comp, &m, name, sizeof(name)), JWALK_COMPILED);
	assert_int_equal(m, j->method);
	assert_int_equal(jwalk_frame_method(vs, l, &stub, &m, name, sizeof(name)), JWALK_STUB);
	assert_int_equal(m, 0);
	assert_string_equal(name, "[_new_instance_Java]");
	/* the blob no longer holds the pc, or is another method's now: never named */
	assert_int_equal(jwalk_frame_method(vs, l, &gone, &m, NULL, 0), JWALK_UNKNOWN);
	assert_int_equal(jwalk_frame_method(vs, l, &reused, &m, NULL, 0), JWALK_UNKNOWN);
	assert_int_equal(m, 0);
	/* the allocating frame: the first one that is not a stub */
	st.depth = 3;
	st.f[0] = stub;
	st.f[1] = comp;
	st.f[2] = interp;
	jwalk_leaf(vs, l, &st, &pc, &m);
	assert_int_equal(pc, comp.a);
	assert_int_equal(m, 0);
	st.f[1] = interp;
	jwalk_leaf(vs, l, &st, &pc, &m);
	assert_int_equal(pc, 0);
	assert_int_equal(m, interp.a);
	st.depth = 1;
	jwalk_leaf(vs, l, &st, &pc, &m);
	assert_int_equal(pc | m, 0);
}

static void check_layout(const struct jwalk_layout *l, const struct jvm *j, uint32_t hb)
{
	const struct mt_jwalk_layout *b = &l->bpf;

	assert_int_equal(b->thread_anchor, 1152);
	assert_int_equal(b->wrapper_anchor, 32);
	assert_int_equal(b->entry_wrapper, -48);
	assert_int_equal(b->if_sender_sp, -8);
	assert_int_equal(b->if_method, -24);
	assert_int_equal(b->if_bcp, -64);
	assert_int_equal(b->blob_frame_size, 28);
	assert_int_equal(b->nm_method, 112);
	assert_int_equal(b->block_size, hb);
	assert_int_equal(b->interp_lo, j->interp_lo);
	assert_int_equal(b->interp_hi, j->interp_lo + 0x20000);
	assert_int_equal(b->call_stub_ret, 0x7f0000123456ull);
	assert_int_equal(b->nheaps, 1);
	assert_int_equal(b->heap_lo[0], j->heap_lo);
	assert_int_equal(b->heap_hi[0], j->heap_lo + (HEAP_SEGS << LOG2_SEG));
	assert_int_equal(b->heap_segmap[0], j->segmap);
	assert_int_equal(b->heap_log2seg[0], LOG2_SEG);
}

static void test_jdk25(void **state)
{
	struct fake *f = new_fake();
	struct jwalk_layout l;
	struct jvm j;
	struct mt_vmstructs *vs = open_jvm(f, &j, true, true);

	assert_int_equal(jwalk_layout(vs, &l), 0);
	check_layout(&l, &j, 8);
	assert_true(l.has_kind);
	assert_int_equal(l.bpf.block_used, 4);
	check_frames(vs, &l, &j);
	vmstructs_free(vs);
	free(f);
}

static void test_jdk17(void **state)
{
	struct fake *f = new_fake();
	struct jwalk_layout l;
	struct jvm j;
	struct mt_vmstructs *vs = open_jvm(f, &j, false, true);
	struct mt_jframe native = { j.nm + 8, j.nm | MT_JFRAME_COMPILED, j.method };
	uint64_t m;

	assert_int_equal(jwalk_layout(vs, &l), 0);
	check_layout(&l, &j, 16);
	assert_false(l.has_kind);
	assert_int_equal(l.bpf.block_used, 8);
	check_frames(vs, &l, &j);
	/* native wrappers are nmethods too */
	put64(f, j.nm + 96, fake_str(f, "native nmethod"));
	assert_int_equal(jwalk_frame_method(vs, &l, &native, &m, NULL, 0), JWALK_COMPILED);
	put64(f, j.nm + 96, fake_str(f, "BufferBlob"));
	assert_int_equal(jwalk_frame_method(vs, &l, &native, &m, NULL, 0), JWALK_STUB);
	vmstructs_free(vs);
	free(f);
}

static void test_missing(void **state)
{
	struct fake *f = new_fake();
	struct jwalk_layout l;
	struct jvm j;
	struct mt_vmstructs *vs = open_jvm(f, &j, true, false);

	/* CodeBlob::_frame_size absent: the walker stays off */
	assert_int_equal(jwalk_layout(vs, &l), -ENOENT);
	assert_int_equal(l.bpf.nheaps, 0);
	vmstructs_free(vs);
	free(f);
}

static void test_name_ok(void **state)
{
	assert_true(jwalk_name_ok("java.util.HashMap.resize"));
	assert_true(jwalk_name_ok("p.Caf\xc3\xa9.m"));            /* é */
	assert_true(jwalk_name_ok("p.\xe6\x97\xa5.m"));           /* a CJK letter */
	assert_true(jwalk_name_ok("p.\xf0\x9f\x98\x80"));         /* beyond the BMP */
	assert_false(jwalk_name_ok(""));
	assert_false(jwalk_name_ok("a\tb"));
	assert_false(jwalk_name_ok("a\x7f"));
	assert_false(jwalk_name_ok("a\xff"));
	assert_false(jwalk_name_ok("a\xc3"));                      /* cut */
	assert_false(jwalk_name_ok("a\xc3("));
	assert_false(jwalk_name_ok("a\xc0\xaf"));                  /* overlong */
	assert_false(jwalk_name_ok("a\xed\xa0\x80"));              /* a surrogate */
	assert_false(jwalk_name_ok("a\xc2\x85"));                  /* a C1 control */
	assert_false(jwalk_name_ok("a\xf4\x90\x80\x80"));          /* beyond U+10FFFF */
}

static void test_stop_names(void **state)
{
	for (uint32_t i = 0; i < MT_JSTOP_NSTOPS; i++) {
		assert_non_null(jwalk_stop_name(i));
		assert_string_not_equal(jwalk_stop_name(i), "?");
		for (uint32_t k = 0; k < i; k++)
			assert_string_not_equal(jwalk_stop_name(i), jwalk_stop_name(k));
	}
	assert_string_equal(jwalk_stop_name(MT_JSTOP_END), "end");
	assert_string_equal(jwalk_stop_name(MT_JSTOP_NSTOPS), "?");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jdk25),
		cmocka_unit_test(test_jdk17),
		cmocka_unit_test(test_missing),
		cmocka_unit_test(test_name_ok),
		cmocka_unit_test(test_stop_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
