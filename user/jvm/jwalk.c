// SPDX-License-Identifier: GPL-2.0
/* jwalk.c - layout and frame naming for the BPF stack walker; see jwalk.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jvm/jwalk.h"
#include "jvm/vmstructs.h"

/*
 * x86_64 interpreter frame slots, in words from fp (frame_x86.hpp). VMStructs
 * exports frame::interpreter_frame_sender_sp_offset (-1) and
 * interpreter_frame_last_sp_offset (-2) only; the header defines the method
 * slot as last_sp - 1 and the bcp slot five below that (mirror, mdp, cache,
 * locals, bcp), the same from JDK 9 to 25 on x86_64.
 */
#define IF_METHOD_BELOW_LAST_SP 1
#define IF_BCP_BELOW_METHOD 5

static int field(const struct mt_vmstructs *vs, const char *type, const char *name,
		 uint64_t *off)
{
	return vmstructs_field_offset(vs, type, name, off);
}

/* CodeCache::_heaps: a GrowableArray<CodeHeap*> */
static int read_heaps(const struct mt_vmstructs *vs, struct mt_jwalk_layout *b)
{
	uint64_t addr, arr, data, len_off, data_off, mem, segmap, log2_off, lo_b, hi_b;
	int32_t len = 0;
	int err;

	if ((err = vmstructs_static_addr(vs, "CodeCache", "_heaps", &addr)) ||
	    (err = vmstructs_read_ptr(vs, addr, &arr)) ||
	    (err = field(vs, "GrowableArrayBase", "_len", &len_off)) ||
	    (err = field(vs, "GrowableArray<int>", "_data", &data_off)) ||
	    (err = field(vs, "CodeHeap", "_memory", &mem)) ||
	    (err = field(vs, "CodeHeap", "_segmap", &segmap)) ||
	    (err = field(vs, "CodeHeap", "_log2_segment_size", &log2_off)) ||
	    (err = field(vs, "VirtualSpace", "_low_boundary", &lo_b)) ||
	    (err = field(vs, "VirtualSpace", "_high_boundary", &hi_b)) ||
	    (err = vmstructs_read(vs, arr + len_off, &len, sizeof(len))) ||
	    (err = vmstructs_read_ptr(vs, arr + data_off, &data)))
		return err;
	if (len <= 0 || len > MT_JSTACK_MAX_HEAPS)
		return -EINVAL;
	for (int i = 0; i < len; i++) {
		uint64_t heap, lo, hi, map;
		int32_t log2 = 0;

		if ((err = vmstructs_read_ptr(vs, data + 8 * (uint64_t)i, &heap)) ||
		    (err = vmstructs_read_ptr(vs, heap + mem + lo_b, &lo)) ||
		    (err = vmstructs_read_ptr(vs, heap + mem + hi_b, &hi)) ||
		    (err = vmstructs_read_ptr(vs, heap + segmap + lo_b, &map)) ||
		    (err = vmstructs_read(vs, heap + log2_off, &log2, sizeof(log2))))
			return err;
		if (log2 < 4 || log2 > 20 || !lo || lo >= hi || !map)
			return -EINVAL;
		b->heap_lo[i] = lo;
		b->heap_hi[i] = hi;
		b->heap_segmap[i] = map;
		b->heap_log2seg[i] = (uint32_t)log2;
	}
	b->nheaps = (uint32_t)len;
	return 0;
}

int jwalk_layout(const struct mt_vmstructs *vs, struct jwalk_layout *l)
{
	struct mt_jwalk_layout *b = &l->bpf;
	uint64_t anchor, wanchor, sp, pc, fp, fs, hdr, used, hbsize, addr, q, off_buf, off_lim,
		 buf, ret;
	int32_t lim = 0, wrapper, sender_sp, last_sp, kind;
	int err;

	memset(l, 0, sizeof(*l));
	if ((err = field(vs, "JavaThread", "_anchor", &anchor)) ||
	    (err = field(vs, "JavaCallWrapper", "_anchor", &wanchor)) ||
	    (err = field(vs, "JavaFrameAnchor", "_last_Java_sp", &sp)) ||
	    (err = field(vs, "JavaFrameAnchor", "_last_Java_pc", &pc)) ||
	    (err = field(vs, "JavaFrameAnchor", "_last_Java_fp", &fp)) ||
	    (err = field(vs, "CodeBlob", "_frame_size", &fs)) ||
	    (err = field(vs, "CodeBlob", "_size", &l->blob_size)) ||
	    (err = field(vs, "CodeBlob", "_name", &l->blob_name)) ||
	    (err = field(vs, "HeapBlock", "_header", &hdr)) ||
	    (err = field(vs, "HeapBlock::Header", "_used", &used)) ||
	    (err = vmstructs_type_size(vs, "HeapBlock", &hbsize)) ||
	    (err = vmstructs_int_constant(vs, "frame::entry_frame_call_wrapper_offset", &wrapper)) ||
	    (err = vmstructs_int_constant(vs, "frame::interpreter_frame_sender_sp_offset",
					  &sender_sp)) ||
	    (err = vmstructs_int_constant(vs, "frame::interpreter_frame_last_sp_offset", &last_sp)) ||
	    (err = vmstructs_static_addr(vs, "StubRoutines", "_call_stub_return_address", &addr)) ||
	    (err = vmstructs_read_ptr(vs, addr, &ret)))
		goto fail;
	/* nmethod::_method (JDK 21+), CompiledMethod::_method before */
	if (field(vs, "nmethod", "_method", &l->nm_method) &&
	    (err = field(vs, "CompiledMethod", "_method", &l->nm_method)))
		goto fail;
	/* CodeBlob::_kind (JDK 21+); before, nmethods are told by their name */
	l->has_kind = !field(vs, "CodeBlob", "_kind", &l->blob_kind) &&
		      !vmstructs_int_constant(vs, "CodeBlobKind::Nmethod", &kind);
	if (l->has_kind)
		l->kind_nmethod = kind;
	/* AbstractInterpreter::_code is a StubQueue holding the interpreter */
	if ((err = vmstructs_static_addr(vs, "AbstractInterpreter", "_code", &addr)) ||
	    (err = vmstructs_read_ptr(vs, addr, &q)) ||
	    (err = field(vs, "StubQueue", "_stub_buffer", &off_buf)) ||
	    (err = field(vs, "StubQueue", "_buffer_limit", &off_lim)) ||
	    (err = vmstructs_read_ptr(vs, q + off_buf, &buf)) ||
	    (err = vmstructs_read(vs, q + off_lim, &lim, sizeof(lim))))
		goto fail;
	if (!q || lim <= 0 || !ret) {
		err = -EINVAL;
		goto fail;
	}
	b->thread_anchor = (uint32_t)anchor;
	b->wrapper_anchor = (uint32_t)wanchor;
	b->fa_sp = (uint32_t)sp;
	b->fa_pc = (uint32_t)pc;
	b->fa_fp = (uint32_t)fp;
	b->entry_wrapper = wrapper * 8;
	b->if_sender_sp = sender_sp * 8;
	b->if_method = (last_sp - IF_METHOD_BELOW_LAST_SP) * 8;
	b->if_bcp = b->if_method - IF_BCP_BELOW_METHOD * 8;
	b->blob_frame_size = (uint32_t)fs;
	b->blob_name = (uint32_t)l->blob_name;
	b->blob_kind = l->has_kind ? (uint32_t)l->blob_kind : 0;
	b->kind_nmethod = l->kind_nmethod;
	b->nm_method = (uint32_t)l->nm_method;
	b->block_used = (uint32_t)(hdr + used);
	b->block_size = (uint32_t)hbsize;
	b->interp_lo = buf;
	b->interp_hi = buf + (uint64_t)lim;
	b->call_stub_ret = ret;
	/* the walker reads the anchor as three words in one go */
	if (sp > 16 || pc > 16 || fp > 16 || sp % 8 || pc % 8 || fp % 8 || sp == pc || sp == fp ||
	    pc == fp) {
		err = -EINVAL;
		goto fail;
	}
	/* and fp + if_bcp .. fp + 1 word in one go (11 words) */
	if (b->if_bcp < -9 * 8 || b->if_sender_sp <= b->if_bcp || b->if_sender_sp >= 0) {
		err = -EINVAL;
		goto fail;
	}
	if ((err = read_heaps(vs, b)))
		goto fail;
	return 0;
fail:
	memset(l, 0, sizeof(*l));
	return err == -ENOENT || !err ? -ENOENT : err;
}

bool jwalk_name_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	if (!*p)
		return false;
	while (*p) {
		int n;
		uint32_t c;

		if (*p < 0x80) {
			if (*p < 0x20 || *p == 0x7f)
				return false;
			p++;
			continue;
		}
		if ((*p & 0xe0) == 0xc0) {
			n = 1;
			c = *p & 0x1f;
		} else if ((*p & 0xf0) == 0xe0) {
			n = 2;
			c = *p & 0x0f;
		} else if ((*p & 0xf8) == 0xf0) {
			n = 3;
			c = *p & 0x07;
		} else {
			return false;
		}
		for (int i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				return false;
			c = (c << 6) | (p[i] & 0x3f);
		}
		/* overlong forms, surrogates, beyond Unicode, C1 controls */
		if ((n == 1 && c < 0x80) || (n == 2 && c < 0x800) || (n == 3 && c < 0x10000) ||
		    (c >= 0xd800 && c <= 0xdfff) || c > 0x10ffff || (c >= 0x80 && c < 0xa0))
			return false;
		p += n + 1;
	}
	return true;
}

enum jwalk_kind jwalk_frame_method(const struct mt_vmstructs *vs, const struct jwalk_layout *l,
				   const struct mt_jframe *f, uint64_t *method, char *stub,
				   size_t len)
{
	uint64_t blob = f->b & ~MT_JFRAME_COMPILED, name_ptr;
	int32_t size = 0;
	bool nm;
	char name[64];

	*method = 0;
	if (stub && len)
		stub[0] = '\0';
	if (!(f->b & MT_JFRAME_COMPILED)) {
		*method = f->a;
		return f->a ? JWALK_INTERP : JWALK_UNKNOWN;
	}
	/* the blob must still hold the pc (it may have been freed since) */
	if (vmstructs_read(vs, blob + l->blob_size, &size, sizeof(size)) || size <= 0 ||
	    f->a < blob || f->a >= blob + (uint64_t)size)
		return JWALK_UNKNOWN;
	name[0] = '\0';
	if (!vmstructs_read_ptr(vs, blob + l->blob_name, &name_ptr))
		vmstructs_read_string(vs, name_ptr, name, sizeof(name));
	if (l->has_kind) {
		uint8_t k = 0;

		if (vmstructs_read(vs, blob + l->blob_kind, &k, 1))
			return JWALK_UNKNOWN;
		nm = k == (uint8_t)l->kind_nmethod;
	} else {
		/* JDK 17: nmethods are named "nmethod", native wrappers "native nmethod" */
		nm = !strcmp(name, "nmethod") || !strcmp(name, "native nmethod");
	}
	if (!nm) {
		if (stub && len) {
			if (!jwalk_name_ok(name))
				strcpy(name, "stub");
			snprintf(stub, len, "[%s]", name);
		}
		return JWALK_STUB;
	}
	/* an nmethod of another method at the same place: the frame's is gone */
	if (vmstructs_read_ptr(vs, blob + l->nm_method, method) || !*method || *method != f->m) {
		*method = 0;
		return JWALK_UNKNOWN;
	}
	return JWALK_COMPILED;
}

void jwalk_leaf(const struct mt_vmstructs *vs, const struct jwalk_layout *l,
		const struct mt_jstack *st, uint64_t *pc, uint64_t *method)
{
	*pc = *method = 0;
	for (uint32_t d = 0; d < st->depth && d < MT_JSTACK_MAX_DEPTH; d++) {
		const struct mt_jframe *f = &st->f[d];
		uint64_t m;

		if (!(f->b & MT_JFRAME_COMPILED)) {
			*method = f->a;
			return;
		}
		if (jwalk_frame_method(vs, l, f, &m, NULL, 0) != JWALK_STUB) {
			*pc = f->a;
			return;
		}
	}
}

const char *jwalk_stop_name(uint32_t stop)
{
	static const char *const names[MT_JSTOP_NSTOPS] = {
		[MT_JSTOP_END] = "end",
		[MT_JSTOP_NO_ANCHOR] = "no_anchor",
		[MT_JSTOP_DEPTH] = "depth",
		[MT_JSTOP_READ] = "read_failed",
		[MT_JSTOP_PC] = "pc_outside_code",
		[MT_JSTOP_NO_BLOB] = "no_code_blob",
		[MT_JSTOP_FRAME_SIZE] = "bad_frame_size",
		[MT_JSTOP_SP] = "bad_sp",
		[MT_JSTOP_LOOP] = "loop_bound",
	};

	return stop < MT_JSTOP_NSTOPS ? names[stop] : "?";
}
