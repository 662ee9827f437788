// SPDX-License-Identifier: GPL-2.0
/* jwalk.c - layout and frame naming for the BPF stack walker; see jwalk.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jvm/hotspot.h"
#include "jstack/jwalk.h"
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

/* CodeCache::_heaps: a GrowableArray<CodeHeap*> */
static int read_heaps(const struct mt_vmstructs *vs, struct mt_jwalk_layout *b)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t arr, data, mem = hs->codeheap_memory, lo_b = hs->virtualspace_low_boundary,
		 hi_b = hs->virtualspace_high_boundary;
	int32_t len = 0;
	int err;

	if (!hs->codecache_heaps)
		return -ENOENT;
	if ((err = vmstructs_read_ptr(vs, hs->codecache_heaps, &arr)))
		return err;
	if (!hs->has_growablearraybase_len || !hs->has_growablearray_int_data ||
	    !hs->has_codeheap_memory || !hs->has_codeheap_segmap ||
	    !hs->has_codeheap_log2_segment_size || !hs->has_virtualspace_low_boundary ||
	    !hs->has_virtualspace_high_boundary)
		return -ENOENT;
	if ((err = vmstructs_read(vs, arr + hs->growablearraybase_len, &len, sizeof(len))) ||
	    (err = vmstructs_read_ptr(vs, arr + hs->growablearray_int_data, &data)))
		return err;
	if (len <= 0 || len > MT_JSTACK_MAX_HEAPS)
		return -EINVAL;
	for (int i = 0; i < len; i++) {
		uint64_t heap, lo, hi, map;
		int32_t log2 = 0;

		if ((err = vmstructs_read_ptr(vs, data + 8 * (uint64_t)i, &heap)) ||
		    (err = vmstructs_read_ptr(vs, heap + mem + lo_b, &lo)) ||
		    (err = vmstructs_read_ptr(vs, heap + mem + hi_b, &hi)) ||
		    (err = vmstructs_read_ptr(vs, heap + hs->codeheap_segmap + lo_b, &map)) ||
		    (err = vmstructs_read(vs, heap + hs->codeheap_log2_segment_size, &log2,
					  sizeof(log2))))
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

/* The entries the walker cannot go without: all there, or -ENOENT. */
static int have_entries(const struct mt_hotspot *hs)
{
	if (!hs->has_javathread_anchor || !hs->has_javacallwrapper_anchor ||
	    !hs->has_javaframeanchor_last_java_sp || !hs->has_javaframeanchor_last_java_pc ||
	    !hs->has_javaframeanchor_last_java_fp || !hs->has_codeblob_frame_size ||
	    !hs->has_codeblob_size || !hs->has_codeblob_name || !hs->has_heapblock_header ||
	    !hs->has_heapblock_header_used || !hs->sizeof_heapblock ||
	    !hs->has_frame_entry_frame_call_wrapper_offset ||
	    !hs->has_frame_interpreter_frame_sender_sp_offset ||
	    !hs->has_frame_interpreter_frame_last_sp_offset ||
	    !hs->stubroutines_call_stub_return_address)
		return -ENOENT;
	return 0;
}

int jwalk_layout(const struct mt_vmstructs *vs, struct jwalk_layout *l)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	struct mt_jwalk_layout *b = &l->bpf;
	uint64_t sp = hs->javaframeanchor_last_java_sp, pc = hs->javaframeanchor_last_java_pc,
		 fp = hs->javaframeanchor_last_java_fp, q, buf, ret;
	int32_t lim = 0;
	int err;

	memset(l, 0, sizeof(*l));
	if ((err = have_entries(hs)) ||
	    (err = vmstructs_read_ptr(vs, hs->stubroutines_call_stub_return_address, &ret)))
		goto fail;
	l->blob_size = hs->codeblob_size;
	l->blob_name = hs->codeblob_name;
	/* nmethod::_method (JDK 21+), CompiledMethod::_method before */
	if (!hs->has_nmethod_method) {
		err = -ENOENT;
		goto fail;
	}
	l->nm_method = hs->nmethod_method;
	/* CodeBlob::_kind (JDK 21+); before, nmethods are told by their name */
	l->has_kind = hs->has_codeblob_kind && hs->has_codeblobkind_nmethod;
	if (l->has_kind) {
		l->blob_kind = hs->codeblob_kind.off;
		l->kind_nmethod = hs->codeblobkind_nmethod;
	}
	/* AbstractInterpreter::_code is a StubQueue holding the interpreter */
	if (!hs->abstractinterpreter_code) {
		err = -ENOENT;
		goto fail;
	}
	if ((err = vmstructs_read_ptr(vs, hs->abstractinterpreter_code, &q)))
		goto fail;
	if (!hs->has_stubqueue_stub_buffer || !hs->has_stubqueue_buffer_limit) {
		err = -ENOENT;
		goto fail;
	}
	if ((err = vmstructs_read_ptr(vs, q + hs->stubqueue_stub_buffer, &buf)) ||
	    (err = vmstructs_read(vs, q + hs->stubqueue_buffer_limit, &lim, sizeof(lim))))
		goto fail;
	if (!q || lim <= 0 || !ret) {
		err = -EINVAL;
		goto fail;
	}
	b->thread_anchor = (uint32_t)hs->javathread_anchor;
	b->wrapper_anchor = (uint32_t)hs->javacallwrapper_anchor;
	b->fa_sp = (uint32_t)sp;
	b->fa_pc = (uint32_t)pc;
	b->fa_fp = (uint32_t)fp;
	b->entry_wrapper = hs->frame_entry_frame_call_wrapper_offset * 8;
	b->if_sender_sp = hs->frame_interpreter_frame_sender_sp_offset * 8;
	b->if_method = (hs->frame_interpreter_frame_last_sp_offset - IF_METHOD_BELOW_LAST_SP) * 8;
	b->if_bcp = b->if_method - IF_BCP_BELOW_METHOD * 8;
	b->blob_frame_size = (uint32_t)hs->codeblob_frame_size;
	b->blob_name = (uint32_t)l->blob_name;
	b->blob_kind = l->has_kind ? (uint32_t)l->blob_kind : 0;
	b->kind_nmethod = l->kind_nmethod;
	b->nm_method = (uint32_t)l->nm_method;
	b->block_used = (uint32_t)(hs->heapblock_header + hs->heapblock_header_used);
	b->block_size = (uint32_t)hs->sizeof_heapblock;
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
