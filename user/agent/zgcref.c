// SPDX-License-Identifier: GPL-2.0
/*
 * zgcref.c - ZGC's coloured references and forwarding tables (zgcref.h).
 *
 * JDK 17 (MT_AP_ZGC_X): a reference is offset | one metadata bit above the
 * offset bits (Marked0, Marked1, Remapped, Finalizable). It is up to date
 * when it carries the Remapped bit or the current good bit; any other (a
 * Marked bit of an earlier cycle) may name an object's place before the
 * last relocation: look it up in the heap's forwarding table.
 *
 * Generational ZGC (MT_AP_ZGC_GEN): a "zpointer" is address << shift | 16
 * bits of colour, the shift given by which of the four Remapped bits (12-15)
 * the pointer carries: 13, 14, 15 or 16. A pointer is stale when it has a
 * bit of ZPointerLoadBadMask; which generation's table then holds its
 * forwarding follows ZBarrier::remap_generation().
 *
 * A forwarding (one per relocated page) is a hash table of 64-bit entries:
 * bit 0 populated, bits 1-45 the new heap offset, bits 46-63 the object's
 * index in its old page (offset from the page's start >> the page's
 * alignment shift); linear probing from the index's hash.
 */
#include "zgcref.h"

#define ENTRY_TO_BITS   45
#define ENTRY_FROM_SHIFT 46
#define ENTRY_FROM_MASK ((1ull << 18) - 1)
#define MAX_ENTRIES     (1ull << 32)  /* a page's forwarding is never this large */

static uint64_t rd64(uint64_t a)
{
	return *(const uint64_t *)(uintptr_t)a;
}

uint32_t zgc_hash(uint32_t k)
{
	k = ~k + (k << 15);
	k ^= k >> 12;
	k += k << 2;
	k ^= k >> 4;
	k *= 2057;
	k ^= k >> 16;
	return k;
}

uint64_t zgc_forward(struct zgc_refs *z, const struct zgc_map *m, uint64_t off)
{
	uint64_t g = off >> ZGC_GRANULE_SHIFT, fw, start, shift, len, idx, at;

	if (!m->map || g >= m->size || !(fw = m->map[g]))
		return off;
	start = rd64(fw + z->fw_start);
	shift = rd64(fw + z->fw_shift);
	len = rd64(fw + z->fw_length);
	if (off < start || shift > 30 || !len || (len & (len - 1)) || len > MAX_ENTRIES) {
		z->nbad++;
		return off;
	}
	idx = ((off - start) >> shift) & ENTRY_FROM_MASK;
	at = zgc_hash((uint32_t)idx) & (len - 1);
	for (uint64_t probes = 0; probes < len; probes++, at = (at + 1) & (len - 1)) {
		uint64_t e = rd64(fw + z->fw_entries + at * 8);

		if (!(e & 1))
			break; /* no entry: the object has not moved */
		if ((e >> ENTRY_FROM_SHIFT) == idx) {
			z->nfwd++;
			return (e >> 1) & ((1ull << ENTRY_TO_BITS) - 1);
		}
	}
	z->nstale++;
	return off;
}

/* GEN: the generation whose forwarding a load-bad pointer @v at heap offset
 * @off needs (ZBarrier::remap_generation). */
static const struct zgc_map *gen_table(const struct zgc_refs *z, uint64_t v, uint64_t off)
{
	uint64_t rb = v & 0xf000;
	const struct zgc_map *young = &z->fwd[0], *old = &z->fwd[1];
	uint64_t g = off >> ZGC_GRANULE_SHIFT;

	if (rb & z->rem_old)
		return young; /* old-good: only a young relocation can be missed */
	if (rb & z->rem_young)
		return old;
	if ((v & 0x30) == 0x30)
		return old;   /* both remembered bits: an old-to-old pointer */
	return young->map && g < young->size && young->map[g] ? young : old;
}

uint64_t zgc_load(struct zgc_refs *z, uint64_t v)
{
	uint64_t off;

	if (z->variant == MT_AP_ZGC_X) {
		if (!v)
			return 0;
		off = v & z->offset_mask;
		if (!(v & (z->remapped | z->good)))
			off = zgc_forward(z, &z->fwd[0], off);
		return z->base | off;
	}
	if (!(v >> 16))
		return 0; /* null, whatever its colour */
	switch ((v >> 12) & 0xf) {
	case 1: off = v >> 13; break;
	case 2: off = v >> 14; break;
	case 4: off = v >> 15; break;
	case 8: off = v >> 16; break;
	default:
		z->nbad++;
		return 0;
	}
	off &= z->offset_mask;
	if (v & z->load_bad)
		off = zgc_forward(z, gen_table(z, v, off), off);
	return z->base | off;
}

uint64_t zgc_root(struct zgc_refs *z, uint64_t a)
{
	if (!a)
		return 0;
	if (z->variant == MT_AP_ZGC_X)
		return zgc_load(z, a);
	return z->base | (a & z->offset_mask);
}
