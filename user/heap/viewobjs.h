/* viewobjs.h - the heap view's objects from a frozen copy's records by
 * position (MT_AP_FREEZE_REFPOS), where they lie: each record made the view's
 * object in its place, in two threads on a large heap (heapview.c's build
 * calls it; viewrefs.c then places the references with the offsets it
 * leaves). */
#ifndef MEMTRACE_VIEWOBJS_H
#define MEMTRACE_VIEWOBJS_H

#include <stdint.h>

#include "heap/viewrefs.h"

/* viewobjs_check - object record @o's size, added to *@total: 0, or -EINVAL
 * with the reason in @why (@wn bytes): a corrupt snapshot. */
int viewobjs_check(const struct mt_ap_hobj *o, uint64_t *total, char *why, size_t wn);

/* Class ids looked up lately, by the id's low bits: a heap's objects come in
 * runs of a few classes, and a class's index from the map costs a hash
 * probe (10 M objects: 40 ms of a view's 195 without it). */
#define VIEWOBJS_CLS_CACHE 64
struct viewobjs_cls {
	uint64_t id[VIEWOBJS_CLS_CACHE];
	uint32_t ci[VIEWOBJS_CLS_CACHE];
};

/* viewobjs_cls_index - the index of class @id in @b's classes (DSL_NOOBJ:
 * none), through cache @c (zeroed before its first use). */
static inline uint32_t viewobjs_cls_index(const struct viewbuild *b, struct viewobjs_cls *c,
					  uint64_t id)
{
	unsigned k = (unsigned)(id ^ id >> 6) & (VIEWOBJS_CLS_CACHE - 1);

	if (c->id[k] != id || !id) {
		c->id[k] = id;
		c->ci[k] = idmap_index_get(&b->clsmap, id);
	}
	return c->ci[k];
}

/*
 * viewobjs_by_pos - b->objs (the records, b->take->objs, already the view's
 * array in place) made the view's objects: class index, size, length, each
 * object's references a run of b->take->refpos by the count its record
 * carries; ids indexed (b->fused), sizes checked, b->cls_count/cls_bytes
 * and b->aux's known/inst counted, b->ages and b->values (b->values_of)
 * filled where the build made them. With a million objects or more, two CPUs and no values
 * (MEMTRACE_VIEW_THREADS=1|2 says for tests), two threads each take half the
 * objects; the second half's ref_first are then relative to its first
 * object's until viewrefs places the references (b->pos_mid, b->pos_off).
 * Returns 0, -ENOMEM, or -EINVAL with b->why (a corrupt snapshot).
 */
int viewobjs_by_pos(struct viewbuild *b);

#endif
