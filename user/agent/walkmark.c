// SPDX-License-Identifier: GPL-2.0
/*
 * walkmark.c - the frozen copy's own mark in a heap walk (walkmark.h).
 *
 * The copy goes on with FollowReferences after the fork only for its roots:
 * each root callback keeps the root's address and answers "do not follow"
 * (but for objects other than classes: one of them visited brings the first
 * callback past the roots, after every root was reported). That callback
 * builds the marker's input from what the walk prepared before the pause -
 * the named objects' addresses (read at the fork), the class table with
 * each field's offset (from its jfieldID), java.lang.Class's own fields -
 * runs heapmark_run() and aborts the walk. The JVM's thread then reads
 * hw.mark out of the copy (walkcopy.c) and memtrace reads the records.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "walkmark.h"
#include "walkstate.h"

bool walkmark_active(void)
{
	return hw.marking && hw.fz.in_child;
}

jint walkmark_root(jvmtiHeapReferenceKind kind, uint64_t addr)
{
	struct mt_ap_hroot *r = walkvec_push(&hw.mroots);

	if (!r)
		return JVMTI_VISIT_ABORT; /* out of memory: the mark does not run */
	r->to = addr;
	r->kind = (uint32_t)kind;
	r->flags = 0;
	if (hw.comparing) /* the JVMTI walk follows every root */
		return JVMTI_VISIT_OBJECTS;
	return kind == JVMTI_HEAP_REFERENCE_SYSTEM_CLASS ? 0 : JVMTI_VISIT_OBJECTS;
}

jint walkmark_broken(const char *why)
{
	if (!hw.mark_ran) {
		hw.mark_ran = true;
		hw.mark.status = -EPROTO;
		snprintf(hw.mark.why, sizeof(hw.mark.why), "%s", why);
	}
	return JVMTI_VISIT_ABORT;
}

static int by_off(const void *a, const void *b)
{
	const struct hm_field *x = a, *y = b;

	return x->off < y->off ? -1 : x->off > y->off;
}

/* @n walk fields as marker fields (sorted by offset) into *@out. */
static int to_hm_fields(const struct walk_field *wf, uint32_t n, struct hm_field **out)
{
	struct hm_field *f = calloc(n ? n : 1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		f[i] = (struct hm_field){ .off = wf[i].off, .index = wf[i].index,
					  .type = wf[i].string ? 'L' : wf[i].type,
					  .projected = wf[i].projected };
	qsort(f, n, sizeof(*f), by_off);
	*out = f;
	return 0;
}

/* The offset of @c's instance field @name of type @type, 0 when it has none
 * (or its offset is unknown). Of two such (Thread and VirtualThread each
 * declare a `cont`) the subclass's: the fields are in JVMTI's order,
 * superclasses' first (walkfields.c). */
static uint32_t field_off(const struct walk_class *c, const char *name, char type)
{
	for (uint32_t i = c->nfields; i-- > 0;)
		if (c->fields[i].name && !strcmp(c->fields[i].name, name) &&
		    c->fields[i].type == type)
			return c->fields[i].off;
	return 0;
}

/* The Klass a class object (in the copy) stands for. */
static uint64_t klass_of_mirror(uint64_t mirror)
{
	return *(const uint64_t *)(uintptr_t)(mirror + (uint32_t)hw.layout.m_klass);
}

static int by_id(const void *a, const void *b)
{
	const struct hm_named *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* The address of the named object with @id in @byid (sorted by id), or 0. */
static uint64_t named_addr(const struct hm_named *byid, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (byid[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && byid[lo].id == id ? byid[lo].addr : 0;
}

/* The marker's input from the walk's tables; its arrays malloc'd here and
 * left to the copy's end (it dies soon after). */
static int build_input(struct hm_input *in)
{
	const struct walk_named *wn = (const struct walk_named *)hw.named.p;
	struct hm_named *nm = calloc(hw.named.n + 1, sizeof(*nm));
	struct hm_class *cls = calloc(hw.ncls + 1, sizeof(*cls));
	size_t nn = 0, nc = 0;

	if (!nm || !cls)
		return -ENOMEM;
	struct hm_named *byid = calloc(hw.named.n + 1, sizeof(*byid));
	size_t nb = 0;

	if (!byid)
		return -ENOMEM;
	for (size_t i = 0; i < hw.named.n; i++) {
		if (!wn[i].addr)
			continue;
		nm[nn++] = (struct hm_named){ .addr = wn[i].addr, .id = wn[i].id,
					      .sample = wn[i].sample };
		if (!wn[i].sample)
			byid[nb++] = nm[nn - 1];
	}
	qsort(byid, nb, sizeof(*byid), by_id);
	for (uint32_t i = 0; i < hw.ncls; i++) {
		const struct walk_class *c = &hw.cls[i];
		struct hm_field *f = NULL, *st = NULL;
		uint64_t mirror = named_addr(byid, nb, c->id);

		if (!mirror)
			continue;
		if (to_hm_fields(c->fields, c->nfields, &f) ||
		    to_hm_fields(c->statics, c->nstatics, &st))
			return -ENOMEM;
		cls[nc++] = (struct hm_class){ .mirror = mirror, .fields = f, .nfields = c->nfields,
					       .statics = st, .nstatics = c->nstatics };
		if (c->sig && !strcmp(c->sig, "Ljava/lang/Class;")) {
			in->class_fields = f;
			in->nclass_fields = c->nfields;
		}
		/* the stack chunk class (JDK 19+): its instances end the mark */
		if (c->sig && !strcmp(c->sig, "Ljdk/internal/vm/StackChunk;")) {
			hw.layout.stackchunk_klass = klass_of_mirror(mirror);
			in->sc_parent = field_off(c, "parent", 'L');
		}
		/* a virtual thread: its continuation and tid name a chunk's locals */
		if (c->sig && !strcmp(c->sig, "Ljava/lang/VirtualThread;")) {
			in->vt_klass = klass_of_mirror(mirror);
			in->vt_cont = field_off(c, "cont", 'L');
			in->vt_tid = field_off(c, "tid", 'J');
		}
		/* which reference types are weak: as the JDK numbers them */
		if (c->sig && (!strcmp(c->sig, "Ljava/lang/ref/WeakReference;") ||
			       !strcmp(c->sig, "Ljava/lang/ref/PhantomReference;"))) {
			uint8_t t = *(const uint8_t *)(uintptr_t)(klass_of_mirror(mirror) +
								   hw.layout.ik_reference_type);

			if (t && t < 32)
				hw.layout.ref_weak |= 1u << t;
		}
	}
	in->L = &hw.layout;
	in->heap_lo = hw.fz.req.heap_lo;
	in->heap_hi = hw.fz.req.heap_hi;
	if (hw.fz.zgc.on) { /* ZGC: its used pages, at their canonical addresses */
		in->zgc = &hw.fz.zgc.refs;
		in->heap_lo = hw.fz.zgc.refs.base | hw.fz.zgc.lo;
		in->heap_hi = hw.fz.zgc.refs.base | hw.fz.zgc.hi;
	}
	in->roots = (const struct mt_ap_hroot *)hw.mroots.p;
	in->nroots = hw.mroots.n;
	in->named = nm;
	in->nnamed = nn;
	in->classes = cls;
	in->nclasses = nc;
	in->next_id = hs.next_id;
	in->progress = &hw.progress;
	in->flags = 0;
	if (hw.flags & MT_AP_HEAP_COUNTS)
		in->flags |= HM_HISTO;
	else
		in->flags |= HM_OBJS;
	if (hw.flags & MT_AP_HEAP_REFS)
		in->flags |= HM_REFS;
	if ((hw.flags & MT_AP_HEAP_ALLFIELDS) || hw.nprojidx)
		in->flags |= HM_PRIMS;
	if (hw.flags & MT_AP_HEAP_STRINGS)
		in->flags |= HM_STRINGS;
	if (hw.comparing)
		in->flags |= HM_OBJS | HM_ADDRS;
	if (hw.fz.req.flags & MT_AP_FREEZE_FORWARDING)
		in->flags |= HM_FORWARDING;
	if (hw.fz.req.flags & MT_AP_FREEZE_SMALLPAGES)
		in->flags |= HM_SMALLPAGES;
	if (hw.fz.req.flags & MT_AP_FREEZE_ONETHREAD)
		in->threads = 1;
	else if (hw.fz.req.flags & MT_AP_FREEZE_TWOTHREADS)
		in->threads = 2;
	in->mark_one = (hw.fz.req.flags & MT_AP_FREEZE_MARKONE) != 0;
	if ((hw.fz.req.flags & MT_AP_FREEZE_LIVE) && !hw.comparing) {
		in->live = &hw.live;
		in->pool = hw.fz.pool; /* mapped in the copy (MT_AP_FREEZE_POOL) */
		in->pool_bytes = hw.fz.pool_bytes;
		if ((hw.fz.req.flags & MT_AP_FREEZE_INPLACE) && in->pool)
			in->flags |= HM_INPLACE;
		/* references by position: only for a view built where they lie
		 * (memtrace reads the format in the mark's record either way) */
		if ((hw.fz.req.flags & MT_AP_FREEZE_REFPOS) && (in->flags & HM_INPLACE))
			in->flags |= HM_REFPOS;
		if ((hw.fz.req.flags & MT_AP_FREEZE_NOCLASS) && (in->flags & HM_REFPOS))
			in->flags |= HM_NOCLASS;
	}
	return 0;
}

jint walkmark_run(void)
{
	struct hm_input in = { 0 };
	struct hm_result *r = &hw.mres;
	int err;

	if (hw.mark_ran)
		return hw.comparing ? JVMTI_VISIT_OBJECTS : JVMTI_VISIT_ABORT;
	hw.mark_ran = true;
	err = build_input(&in);
	if (err) {
		hw.mark.status = err;
		snprintf(hw.mark.why, sizeof(hw.mark.why), "out of memory in the frozen copy");
		return hw.comparing ? JVMTI_VISIT_OBJECTS : JVMTI_VISIT_ABORT;
	}
	heapmark_run(&in, r);
	/* the records' second thread has ended: no thread may start now (what
	 * HotSpot's code goes on to do in the copy) */
	if (hw.fz.in_child)
		freeze_no_threads();
	hw.mark = r->info;
	hw.mark.objs = (uint64_t)(uintptr_t)r->objs;
	hw.mark.refs = (uint64_t)(uintptr_t)r->refs;
	hw.mark.roots = (uint64_t)(uintptr_t)r->roots;
	hw.mark.prims = (uint64_t)(uintptr_t)r->prims;
	hw.mark.strs = (uint64_t)(uintptr_t)r->strs;
	hw.mark.histo = (uint64_t)(uintptr_t)r->histo;
	hw.mark.klasses = (uint64_t)(uintptr_t)r->klasses;
	hw.mark.sampled = (uint64_t)(uintptr_t)r->sampled;
	hw.mark.addrs = (uint64_t)(uintptr_t)r->addrs;
	/* comparing: the JVMTI walk goes on over the same frozen image */
	return hw.comparing ? JVMTI_VISIT_OBJECTS : JVMTI_VISIT_ABORT;
}
