// SPDX-License-Identifier: GPL-2.0
/* nmethod.c - compiled code of a live JVM from outside; see nmethod.h. */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "jvm/hotspot.h"
#include "jstack/methodsym.h"
#include "jvm/unsigned5.h"
#include "jstack/nmethod.h"
#include "jvm/vmstructs.h"

#define HDR_MAX 1024            /* largest nmethod / HeapBlock header we read */
#define SEGMAP_WINDOW 256       /* segment map bytes read at a time */
#define MAX_HOPS (1u << 20)     /* segment map hops before giving up */
#define MAX_SECTION (64u << 20) /* larger tables make no sense */
#define U5_TRIPLE 15            /* three UNSIGNED5 numbers take at most this */
#define SEG_FREE 0xff           /* segment map: a free segment */

/* Little-endian value of @size bytes at @buf + @off, zero- or sign-extended. */
static uint64_t get_u(const uint8_t *buf, uint64_t off, unsigned size)
{
	uint64_t v = 0;

	memcpy(&v, buf + off, size);
	return v;
}

static int64_t get_s(const uint8_t *buf, uint64_t off, unsigned size)
{
	unsigned sh = 64 - 8 * size;

	return (int64_t)(get_u(buf, off, size) << sh) >> sh;
}

/* The code heaps: CodeCache::_heaps, a GrowableArray<CodeHeap*>*. */
static int read_heaps(const struct mt_vmstructs *vs, struct mt_nmethod_layout *l)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t arr, data, mem = hs->codeheap_memory, low = hs->virtualspace_low;
	int32_t n = 0, lg = 0;
	int err;

	if (!hs->codecache_heaps || !hs->has_growablearraybase_len ||
	    !hs->has_growablearray_int_data || !hs->has_codeheap_memory ||
	    !hs->has_codeheap_segmap || !hs->has_codeheap_log2_segment_size ||
	    !hs->has_virtualspace_low || !hs->has_virtualspace_high ||
	    !hs->has_virtualspace_high_boundary)
		return -ENOENT;
	l->vs_high = hs->virtualspace_high;
	if ((err = vmstructs_read_ptr(vs, hs->codecache_heaps, &arr)))
		return err;
	if (!arr)
		return -ENOENT;
	if ((err = vmstructs_read(vs, arr + hs->growablearraybase_len, &n, sizeof(n))) ||
	    (err = vmstructs_read_ptr(vs, arr + hs->growablearray_int_data, &data)))
		return err;
	if (n <= 0 || !data)
		return -ENOENT;
	for (int32_t i = 0; i < n && l->nheaps < MT_NMETHOD_MAX_HEAPS; i++) {
		struct mt_codeheap *h = &l->heaps[l->nheaps];

		if ((err = vmstructs_read_ptr(vs, data + (uint64_t)i * 8, &h->heap)) ||
		    (err = vmstructs_read_ptr(vs, h->heap + mem + low, &h->low)) ||
		    (err = vmstructs_read_ptr(vs, h->heap + mem + hs->virtualspace_high_boundary,
					      &h->high_max)) ||
		    (err = vmstructs_read_ptr(vs, h->heap + hs->codeheap_segmap + low, &h->segmap)) ||
		    (err = vmstructs_read(vs, h->heap + hs->codeheap_log2_segment_size, &lg,
					  sizeof(lg))))
			return err;
		if (!h->low || h->low >= h->high_max || !h->segmap || lg < 3 || lg > 20)
			continue; /* an empty heap */
		h->log2_seg = (unsigned)lg;
		l->nheaps++;
	}
	l->vs_high += mem; /* from now on: _memory._high's offset in a CodeHeap */
	return l->nheaps ? 0 : -ENOENT;
}

/* Where an nmethod keeps its PcDescs, scopes and metadata. */
static int data_layout(const struct mt_hotspot *hs, struct mt_nmethod_layout *l)
{
	/* JDK 17-22: everything after the header, offsets from it */
	if (hs->has_compiledmethod_scopes_data_begin && hs->has_nmethod_scopes_pcs_offset &&
	    hs->has_nmethod_dependencies_offset &&
	    hotspot_size(&hs->nmethod_dependencies_offset, 4) ==
		    hotspot_size(&hs->nmethod_scopes_pcs_offset, 4) &&
	    hs->has_nmethod_metadata_offset) {
		l->f_scopes_begin = hs->compiledmethod_scopes_data_begin;
		l->f_pcs_off = hs->nmethod_scopes_pcs_offset.off;
		l->f_pcs_off_size = hotspot_size(&hs->nmethod_scopes_pcs_offset, 4);
		l->f_deps_off = hs->nmethod_dependencies_offset.off;
		l->f_meta_off = hs->nmethod_metadata_offset.off;
		l->f_meta_off_size = hotspot_size(&hs->nmethod_metadata_offset, 4);
		l->style = 1;
		return 0;
	}
	/* JDK 23+: PcDescs and scopes in a separate immutable block */
	if (!hs->has_nmethod_immutable_data || !hs->has_nmethod_immutable_data_size ||
	    !hs->has_nmethod_scopes_pcs_offset || !hs->has_nmethod_scopes_data_offset)
		return -ENOENT;
	l->f_imm = hs->nmethod_immutable_data;
	l->f_imm_size = hs->nmethod_immutable_data_size;
	l->f_pcs_off = hs->nmethod_scopes_pcs_offset.off;
	l->f_pcs_off_size = hotspot_size(&hs->nmethod_scopes_pcs_offset, 4);
	l->f_scopes_off = hs->nmethod_scopes_data_offset.off;
	l->f_scopes_off_size = hotspot_size(&hs->nmethod_scopes_data_offset, 4);
	/* metadata: after the oops in the data section (23, 24) */
	if (hs->has_nmethod_metadata_offset && hs->has_codeblob_data_offset) {
		l->f_meta_off = hs->nmethod_metadata_offset.off;
		l->f_meta_off_size = hotspot_size(&hs->nmethod_metadata_offset, 2);
		l->f_data_off = hs->codeblob_data_offset;
		l->style = 3;
		return 0;
	}
	/* metadata: after the relocations in the malloc'd mutable data (25) */
	if (hs->has_codeblob_mutable_data && hs->has_codeblob_mutable_data_size &&
	    hs->has_codeblob_relocation_size) {
		l->f_mut = hs->codeblob_mutable_data;
		l->f_mut_size = hs->codeblob_mutable_data_size;
		l->f_reloc_size = hs->codeblob_relocation_size;
		l->style = 2;
		return 0;
	}
	return -ENOENT;
}

/* The code blob's header: name, size, kind, where its code is. */
static int blob_layout(const struct mt_hotspot *hs, struct mt_nmethod_layout *l)
{
	if (!hs->has_codeblob_name || !hs->has_codeblob_size)
		return -ENOENT;
	l->cb_name = hs->codeblob_name;
	l->cb_size = hs->codeblob_size;
	if (hs->has_codeblob_kind && hotspot_size(&hs->codeblob_kind, 1) == 1 &&
	    hs->has_codeblobkind_nmethod) {
		l->cb_kind = hs->codeblob_kind.off;
		l->kind_nmethod = hs->codeblobkind_nmethod;
		l->has_kind = 1;
	}
	if (hs->has_codeblob_code_begin && hs->has_codeblob_code_end) {
		l->cb_code_begin = hs->codeblob_code_begin;
		l->cb_code_end = hs->codeblob_code_end;
		l->code_abs = 1;
	} else if (hs->has_codeblob_code_offset && hs->has_codeblob_data_offset) {
		l->cb_code_begin = hs->codeblob_code_offset;
		l->cb_code_end = hs->codeblob_data_offset;
	} else {
		return -ENOENT;
	}
	return 0;
}

int nmethod_layout(const struct mt_vmstructs *vs, struct mt_nmethod_layout *l)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	struct mt_methodsym_layout ml;
	uint64_t v;
	int err;

	memset(l, 0, sizeof(*l));
	if ((err = read_heaps(vs, l)))
		return err;
	/* HeapBlock: its header (_header's offset 0 when not listed) */
	if (!hs->sizeof_heapblock || !hs->has_heapblock_header_length ||
	    !hs->has_heapblock_header_used || hs->sizeof_heapblock > HDR_MAX)
		return -ENOENT;
	l->hb_sizeof = hs->sizeof_heapblock;
	l->hb_length = hs->heapblock_header_length.off + hs->heapblock_header;
	l->hb_length_size = hotspot_size(&hs->heapblock_header_length, 8);
	l->hb_used = hs->heapblock_header_used + hs->heapblock_header;
	if ((err = blob_layout(hs, l)))
		return err;
	/* nmethod */
	if (!hs->sizeof_nmethod || hs->sizeof_nmethod > HDR_MAX || !hs->has_nmethod_method ||
	    !hs->has_nmethod_compile_id || !hs->has_nmethod_entry_bci || !hs->has_nmethod_state ||
	    !hs->has_nmethod_comp_level)
		return -ENOENT;
	l->nm_sizeof = hs->sizeof_nmethod;
	l->nm_method = hs->nmethod_method;
	l->nm_compile_id = hs->nmethod_compile_id;
	l->nm_entry_bci = hs->nmethod_entry_bci;
	l->nm_state = hs->nmethod_state;
	l->nm_comp_level = hs->nmethod_comp_level.off;
	l->comp_level_size = hotspot_size(&hs->nmethod_comp_level, 4);
	if ((err = data_layout(hs, l)))
		return err;
	/* PcDesc */
	if (!hs->sizeof_pcdesc || !hs->has_pcdesc_pc_offset || !hs->has_pcdesc_scope_decode_offset)
		return -ENOENT;
	l->pc_sizeof = hs->sizeof_pcdesc;
	l->pc_pc_offset = hs->pcdesc_pc_offset;
	l->pc_scope_offset = hs->pcdesc_scope_decode_offset;
	l->entry_bci = hs->has_invocation_entry_bci ? hs->invocation_entry_bci : -1;
	l->level_c2 = hs->has_complevel_full_optimization ? hs->complevel_full_optimization : 4;
	/* every header field must be inside the header we read */
	v = l->nm_sizeof;
	if (l->nm_method + 8 > v || l->nm_compile_id + 4 > v || l->nm_entry_bci + 4 > v ||
	    l->nm_state >= v || l->nm_comp_level + l->comp_level_size > v)
		return -ENOENT;
	if ((err = methodsym_layout(vs, &ml)))
		return err;
	l->u5_excl = ml.u5_excl;
	return 0;
}

const char *nmethod_kind_name(enum mt_frame_kind k)
{
	switch (k) {
	case MT_FRAME_INTERPRETED: return "interpreted";
	case MT_FRAME_C1: return "c1";
	case MT_FRAME_C2: return "c2";
	case MT_FRAME_NATIVE: return "native";
	case MT_FRAME_INLINED: return "inlined";
	}
	return "?";
}

/* The sections of the nmethod whose header is @h, at @blob. */
static void sections(const struct mt_nmethod_layout *l, const uint8_t *h, uint64_t blob,
		     struct mt_nmethod *nm)
{
	uint64_t imm;

	if (l->style == 1) {
		nm->scopes_begin = get_u(h, l->f_scopes_begin, 8);
		nm->pcs_begin = blob + get_s(h, l->f_pcs_off, l->f_pcs_off_size);
		nm->pcs_end = blob + get_s(h, l->f_deps_off, l->f_pcs_off_size);
		nm->scopes_end = nm->pcs_begin;
		nm->meta_begin = blob + get_s(h, l->f_meta_off, l->f_meta_off_size);
		nm->meta_end = nm->scopes_begin;
		return;
	}
	imm = get_u(h, l->f_imm, 8);
	nm->pcs_begin = imm + get_s(h, l->f_pcs_off, l->f_pcs_off_size);
	nm->pcs_end = imm + get_s(h, l->f_scopes_off, l->f_scopes_off_size);
	nm->scopes_begin = nm->pcs_end;
	nm->scopes_end = imm + get_s(h, l->f_imm_size, 4);
	if (l->style == 2) {
		uint64_t mut = get_u(h, l->f_mut, 8);

		nm->meta_begin = mut + get_s(h, l->f_reloc_size, 4);
		nm->meta_end = mut + get_s(h, l->f_mut_size, 4);
	} else {
		nm->meta_begin = blob + get_s(h, l->f_data_off, 4) +
				 get_u(h, l->f_meta_off, l->f_meta_off_size);
		nm->meta_end = blob + get_s(h, l->cb_size, 4);
	}
}

static bool section_ok(uint64_t begin, uint64_t end, uint64_t unit)
{
	return begin && begin <= end && end - begin <= MAX_SECTION && (end - begin) % unit == 0;
}

int nmethod_read(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l, uint64_t blob,
		 struct mt_nmethod *nm)
{
	uint8_t h[HDR_MAX];
	uint64_t name;
	int64_t size;
	bool is_nm;
	int err;

	memset(nm, 0, sizeof(*nm));
	nm->start = blob;
	if ((err = vmstructs_read(vs, blob, h, l->nm_sizeof)))
		return err;
	name = get_u(h, l->cb_name, 8);
	if (name && vmstructs_read_string(vs, name, nm->blob_name, sizeof(nm->blob_name)) < 0)
		nm->blob_name[0] = '\0';
	if (l->has_kind)
		is_nm = get_s(h, l->cb_kind, 1) == l->kind_nmethod;
	else /* JDK 17 names its nmethods so (CompiledMethod's constructor) */
		is_nm = !strcmp(nm->blob_name, "nmethod") || !strcmp(nm->blob_name, "native nmethod");
	if (!is_nm)
		return -ENOEXEC;
	size = get_s(h, l->cb_size, 4);
	if (l->code_abs) {
		nm->code_begin = get_u(h, l->cb_code_begin, 8);
		nm->code_end = get_u(h, l->cb_code_end, 8);
	} else {
		nm->code_begin = blob + get_s(h, l->cb_code_begin, 4);
		nm->code_end = blob + get_s(h, l->cb_code_end, 4);
	}
	if (size <= 0 || nm->code_begin <= blob || nm->code_begin > nm->code_end ||
	    nm->code_end > blob + (uint64_t)size)
		return -EBADMSG;
	nm->method = get_u(h, l->nm_method, 8);
	nm->compile_id = (int32_t)get_s(h, l->nm_compile_id, 4);
	nm->entry_bci = (int32_t)get_s(h, l->nm_entry_bci, 4);
	nm->state = (int)get_s(h, l->nm_state, 1);
	nm->comp_level = (int)get_s(h, l->nm_comp_level, l->comp_level_size);
	nm->kind = nm->comp_level <= 0 ? MT_FRAME_NATIVE :
		   nm->comp_level >= l->level_c2 ? MT_FRAME_C2 : MT_FRAME_C1;
	sections(l, h, blob, nm);
	if (!nm->method || !section_ok(nm->pcs_begin, nm->pcs_end, l->pc_sizeof) ||
	    !section_ok(nm->scopes_begin, nm->scopes_end, 1) ||
	    !section_ok(nm->meta_begin, nm->meta_end, 8))
		return -EBADMSG;
	return 0;
}

/* The HeapBlock before @blob: is it used, and how many bytes does it span? */
static int block_at(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		    const struct mt_codeheap *hp, uint64_t hb, bool *used, uint64_t *bytes)
{
	uint8_t h[HDR_MAX];
	int err;

	if ((err = vmstructs_read(vs, hb, h, l->hb_sizeof)))
		return err;
	*used = h[l->hb_used] != 0;
	*bytes = get_u(h, l->hb_length, l->hb_length_size) << hp->log2_seg;
	return 0;
}

/* The heap holding @pc, and its committed end. */
static const struct mt_codeheap *heap_of(const struct mt_vmstructs *vs,
					 const struct mt_nmethod_layout *l, uint64_t pc,
					 uint64_t *high)
{
	for (unsigned i = 0; i < l->nheaps; i++) {
		const struct mt_codeheap *h = &l->heaps[i];

		if (pc >= h->low && pc < h->high_max)
			return vmstructs_read_ptr(vs, h->heap + l->vs_high, high) ? NULL : h;
	}
	return NULL;
}

/* The HeapBlock holding @pc: follow the segment map's hops back to a 0. */
static int block_of(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		    const struct mt_codeheap *hp, uint64_t pc, uint64_t *hb)
{
	uint8_t win[SEGMAP_WINDOW];
	uint64_t seg = (pc - hp->low) >> hp->log2_seg, wlo = 0, whi = 0;
	int err;

	for (unsigned hops = 0; hops < MAX_HOPS; hops++) {
		uint8_t b;

		if (seg < wlo || seg >= whi) { /* read the window ending at seg */
			wlo = seg + 1 >= SEGMAP_WINDOW ? seg + 1 - SEGMAP_WINDOW : 0;
			whi = seg + 1;
			if ((err = vmstructs_read(vs, hp->segmap + wlo, win, whi - wlo)))
				return err;
		}
		b = win[seg - wlo];
		if (b == SEG_FREE)
			return -ENOENT;
		if (b == 0) {
			*hb = hp->low + (seg << hp->log2_seg);
			return 0;
		}
		if (b > seg)
			return -ENOENT;
		seg -= b;
	}
	return -ENOENT;
}

int nmethod_find(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l, uint64_t pc,
		 struct mt_nmethod *nm)
{
	const struct mt_codeheap *hp;
	uint64_t high, hb, bytes;
	bool used;
	int err;

	memset(nm, 0, sizeof(*nm));
	if (!(hp = heap_of(vs, l, pc, &high)) || pc >= high)
		return -ENOENT;
	if ((err = block_of(vs, l, hp, pc, &hb)) ||
	    (err = block_at(vs, l, hp, hb, &used, &bytes)))
		return err;
	if (!used || pc >= hb + bytes || pc < hb + l->hb_sizeof)
		return -ENOENT;
	if ((err = nmethod_read(vs, l, hb + l->hb_sizeof, nm)))
		return err;
	if (pc < nm->code_begin || pc >= nm->code_end)
		return -ERANGE;
	return 0;
}

int nmethod_verify(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		   const struct mt_nmethod *nm)
{
	const struct mt_codeheap *hp;
	struct mt_nmethod now;
	uint64_t high, bytes;
	bool used;
	int err;

	if (!(hp = heap_of(vs, l, nm->start, &high)))
		return -ESTALE;
	if ((err = block_at(vs, l, hp, nm->start - l->hb_sizeof, &used, &bytes)))
		return err;
	if (!used)
		return -ESTALE;
	err = nmethod_read(vs, l, nm->start, &now);
	if (err == -ENOEXEC || err == -EBADMSG)
		return -ESTALE;
	if (err)
		return err;
	if (now.compile_id != nm->compile_id || now.method != nm->method ||
	    now.code_begin != nm->code_begin || now.pcs_begin != nm->pcs_begin ||
	    now.scopes_begin != nm->scopes_begin || now.meta_begin != nm->meta_begin)
		return -ESTALE;
	return 0;
}

size_t nmethod_npcs(const struct mt_nmethod_layout *l, const struct mt_nmethod *nm)
{
	return nm->pcs_end > nm->pcs_begin ? (nm->pcs_end - nm->pcs_begin) / l->pc_sizeof : 0;
}

/* PcDesc @i's pc offset and scope decode offset. */
static int pcdesc(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		  const struct mt_nmethod *nm, size_t i, int32_t *pc_off, int32_t *scope_off)
{
	uint64_t d = nm->pcs_begin + i * l->pc_sizeof;
	int err;

	if ((err = vmstructs_read(vs, d + l->pc_pc_offset, pc_off, sizeof(*pc_off))))
		return err;
	return scope_off ? vmstructs_read(vs, d + l->pc_scope_offset, scope_off, sizeof(*scope_off)) : 0;
}

int nmethod_pc_at(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		  const struct mt_nmethod *nm, size_t i, uint64_t *pc)
{
	int32_t off;
	int err;

	if (i >= nmethod_npcs(l, nm))
		return -ERANGE;
	if ((err = pcdesc(vs, l, nm, i, &off, NULL)))
		return err;
	/* the table starts and ends with sentinels (-1, INT32_MAX) */
	if (off < 0 || nm->code_begin + (uint64_t)off >= nm->code_end)
		return -ERANGE;
	*pc = nm->code_begin + (uint64_t)off;
	return 0;
}

/* The scope decode offset of the PcDesc at @pc (the first at or after it when
 * @approx). The table is sorted by pc offset. */
static int find_pcdesc(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		       const struct mt_nmethod *nm, uint64_t pc, bool approx, int32_t *scope_off)
{
	size_t lo = 0, hi = nmethod_npcs(l, nm);
	int64_t want = (int64_t)(pc - nm->code_begin);
	int32_t off;
	int err;

	while (lo < hi) { /* first desc with offset >= want */
		size_t mid = lo + (hi - lo) / 2;

		if ((err = pcdesc(vs, l, nm, mid, &off, NULL)))
			return err;
		if (off < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= nmethod_npcs(l, nm))
		return -ENOENT;
	if ((err = pcdesc(vs, l, nm, lo, &off, scope_off)))
		return err;
	if (approx ? nm->code_begin + (uint64_t)off >= nm->code_end : off != want)
		return -ENOENT;
	return 0;
}

/* Decode the scope at @off: its sender's offset, Method* and bci. */
static int scope_at(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		    const struct mt_nmethod *nm, uint32_t off, uint32_t *sender,
		    struct mt_nmethod_scope *sc)
{
	uint8_t buf[U5_TRIPLE];
	uint64_t size = nm->scopes_end - nm->scopes_begin, n;
	uint32_t midx, bci;
	size_t p = 0;
	int err;

	if (off >= size)
		return -EBADMSG;
	n = size - off < sizeof(buf) ? size - off : sizeof(buf);
	if ((err = vmstructs_read(vs, nm->scopes_begin + off, buf, n)))
		return err;
	if ((err = unsigned5_read(buf, n, &p, l->u5_excl, sender)) ||
	    (err = unsigned5_read(buf, n, &p, l->u5_excl, &midx)) ||
	    (err = unsigned5_read(buf, n, &p, l->u5_excl, &bci)))
		return -EBADMSG;
	/* metadata indexes start at 1 (0 is NULL) */
	if (midx == 0 || (uint64_t)midx > (nm->meta_end - nm->meta_begin) / 8)
		return -EBADMSG;
	if ((err = vmstructs_read_ptr(vs, nm->meta_begin + (uint64_t)(midx - 1) * 8, &sc->method)))
		return err;
	if (!sc->method)
		return -EBADMSG;
	sc->bci = (int32_t)bci + l->entry_bci;
	sc->kind = MT_FRAME_INLINED;
	return 0;
}

int nmethod_scopes(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		   const struct mt_nmethod *nm, uint64_t pc, unsigned flags,
		   struct mt_nmethod_scope *out, size_t max)
{
	struct mt_nmethod_scope sc;
	uint32_t off, sender;
	int32_t start;
	size_t n = 0, total = 0;
	int err, verr;

	if (!max)
		return -EINVAL;
	if ((err = find_pcdesc(vs, l, nm, pc, flags & MT_NMETHOD_APPROX, &start)))
		goto check;
	if (start < 0) {
		err = -EBADMSG;
		goto check;
	}
	if (start == 0) { /* no debug info: the method itself, at entry */
		out[0] = (struct mt_nmethod_scope){ nm->method, l->entry_bci, nm->kind };
		n = total = 1;
		goto check;
	}
	/* innermost first; senders were written first, so offsets decrease */
	for (off = (uint32_t)start;; off = sender) {
		if (total >= MT_NMETHOD_MAX_SCOPES) {
			err = -EBADMSG;
			goto check;
		}
		if ((err = scope_at(vs, l, nm, off, &sender, &sc)))
			goto check;
		if (n < max)
			out[n++] = sc;
		total++;
		if (sender == 0)
			break;
		if (sender >= off) {
			err = -EBADMSG;
			goto check;
		}
	}
	if (total == n)
		out[n - 1].kind = nm->kind; /* the outermost is the compiled frame */
	err = total > n ? -E2BIG : 0;
check:
	/* whatever went wrong may be the nmethod going away under us */
	verr = nmethod_verify(vs, l, nm);
	if (verr)
		return verr;
	return err ? err : (int)n;
}

int nmethod_walk(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		 int (*fn)(void *arg, uint64_t blob), void *arg, size_t max)
{
	size_t count = 0;
	int err;

	for (unsigned i = 0; i < l->nheaps; i++) {
		const struct mt_codeheap *hp = &l->heaps[i];
		uint64_t high, hb, bytes;
		bool used;

		if ((err = vmstructs_read_ptr(vs, hp->heap + l->vs_high, &high)))
			return err;
		for (hb = hp->low; hb < high && count < max; hb += bytes) {
			if ((err = block_at(vs, l, hp, hb, &used, &bytes)))
				return err;
			if (!bytes) /* past the last block: never written */
				break;
			if (bytes > high - hb)
				return -EBADMSG;
			if (used && (err = fn(arg, hb + l->hb_sizeof)))
				return err;
			count += used;
		}
	}
	return 0;
}
