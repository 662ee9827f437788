// SPDX-License-Identifier: GPL-2.0
/* heapused.c - the heap pools' used bytes from the JVM's memory (see heapused.h). */
#include <errno.h>
#include <string.h>

#include "jvm/heapused.h"
#include "jvm/hotspot.h"
#include "jvm/vmstructs.h"

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

int heapused_space(const char *pool)
{
	if (ends_with(pool, "Eden Space"))
		return HEAPUSED_EDEN;
	if (ends_with(pool, "Survivor Space"))
		return HEAPUSED_SURVIVOR;
	if (ends_with(pool, "Old Gen") || !strcmp(pool, "Tenured Gen"))
		return HEAPUSED_OLD;
	return -1;
}

/* The collector: the heap object's vtable, else the pool names' prefix. */
static enum heapused_kind kind_of(const struct mt_vmstructs *vs, uint64_t heap, const char *hint)
{
	static const struct {
		const char *vtable;
		enum heapused_kind kind;
	} vt[] = {
		{ "_ZTV15G1CollectedHeap", HEAPUSED_G1 },
		{ "_ZTV20ParallelScavengeHeap", HEAPUSED_PARALLEL },
		{ "_ZTV10SerialHeap", HEAPUSED_SERIAL },
	};
	uint64_t vptr, addr;

	if (!vmstructs_read_ptr(vs, heap, &vptr))
		for (size_t i = 0; i < sizeof(vt) / sizeof(vt[0]); i++)
			if (!vmstructs_symbol(vs, vt[i].vtable, &addr) && vptr == addr + 16)
				return vt[i].kind;
	if (!hint)
		return HEAPUSED_NONE;
	if (!strncmp(hint, "G1 ", 3))
		return HEAPUSED_G1;
	if (!strncmp(hint, "PS ", 3))
		return HEAPUSED_PARALLEL;
	if (!strcmp(hint, "Eden Space") || !strcmp(hint, "Survivor Space") ||
	    !strcmp(hint, "Tenured Gen"))
		return HEAPUSED_SERIAL;
	return HEAPUSED_NONE;
}

static int open_g1(const struct mt_vmstructs *vs, uint64_t heap, struct heapused *h)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	int err;

	if (!hs->has_g1collectedheap_monitoring_support)
		return -ENOENT;
	err = vmstructs_read_ptr(vs, heap + hs->g1collectedheap_monitoring_support, &h->g1mm);
	if (err)
		return err;
	if (!hs->has_g1monitoringsupport_eden_space_used ||
	    !hs->has_g1monitoringsupport_survivor_space_used ||
	    !hs->has_g1monitoringsupport_old_gen_used)
		return -ENOENT;
	h->g1_off[HEAPUSED_EDEN] = hs->g1monitoringsupport_eden_space_used;
	h->g1_off[HEAPUSED_SURVIVOR] = hs->g1monitoringsupport_survivor_space_used;
	h->g1_off[HEAPUSED_OLD] = hs->g1monitoringsupport_old_gen_used;
	return h->g1mm ? 0 : -ENOENT;
}

/* Read the pointer field at offset @off (@has: the JVM has that field) of
 * the object at @obj into *@val. */
static int read_field(const struct mt_vmstructs *vs, uint64_t obj, bool has, uint64_t off,
		      uint64_t *val)
{
	if (!has)
		return -ENOENT;
	return vmstructs_read_ptr(vs, obj + off, val);
}

static int open_parallel(const struct mt_vmstructs *vs, struct heapused *h)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t young, old;
	int err;

	if (!hs->parallelscavengeheap_young_gen || !hs->parallelscavengeheap_old_gen ||
	    !hs->has_mutablespace_bottom || !hs->has_mutablespace_top)
		return -ENOENT;
	h->off_bottom = hs->mutablespace_bottom;
	h->off_top = hs->mutablespace_top;
	err = vmstructs_read_ptr(vs, hs->parallelscavengeheap_young_gen, &young) ?:
	      vmstructs_read_ptr(vs, hs->parallelscavengeheap_old_gen, &old);
	if (err)
		return err;
	return read_field(vs, young, hs->has_psyounggen_eden_space, hs->psyounggen_eden_space,
			  &h->space[HEAPUSED_EDEN]) ?:
	       read_field(vs, young, hs->has_psyounggen_from_space, hs->psyounggen_from_space,
			  &h->space[HEAPUSED_SURVIVOR]) ?:
	       read_field(vs, old, hs->has_psoldgen_object_space, hs->psoldgen_object_space,
			  &h->space[HEAPUSED_OLD]);
}

static int open_serial(const struct mt_vmstructs *vs, uint64_t heap, struct heapused *h)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t young, old;
	int err;

	/* SerialHeap's generations (JDK 21+), GenCollectedHeap's before */
	if (read_field(vs, heap, hs->has_serialheap_young_gen, hs->serialheap_young_gen, &young) ||
	    read_field(vs, heap, hs->has_serialheap_old_gen, hs->serialheap_old_gen, &old))
		return -ENOENT;
	if (!hs->has_contiguousspace_bottom || !hs->has_contiguousspace_top)
		return -ENOENT;
	h->off_bottom = hs->contiguousspace_bottom;
	h->off_top = hs->contiguousspace_top;
	err = read_field(vs, young, hs->has_defnewgeneration_eden_space,
			 hs->defnewgeneration_eden_space, &h->space[HEAPUSED_EDEN]) ?:
	      read_field(vs, young, hs->has_defnewgeneration_from_space,
			 hs->defnewgeneration_from_space, &h->space[HEAPUSED_SURVIVOR]) ?:
	      read_field(vs, old, hs->has_tenuredgeneration_the_space,
			 hs->tenuredgeneration_the_space, &h->space[HEAPUSED_OLD]);
	return err;
}

int heapused_open(const struct mt_vmstructs *vs, const char *hint, struct heapused *h)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t heap;
	int err;

	memset(h, 0, sizeof(*h));
	h->vs = vs;
	if (!hs->universe_collectedheap)
		return -ENOENT;
	err = vmstructs_read_ptr(vs, hs->universe_collectedheap, &heap);
	if (err)
		return err;
	if (!heap)
		return -ENOENT;
	h->kind = kind_of(vs, heap, hint);
	switch (h->kind) {
	case HEAPUSED_G1:
		err = open_g1(vs, heap, h);
		break;
	case HEAPUSED_PARALLEL:
		err = open_parallel(vs, h);
		break;
	case HEAPUSED_SERIAL:
		err = open_serial(vs, heap, h);
		break;
	default:
		err = -ENOENT;
	}
	for (int i = 0; !err && h->kind != HEAPUSED_G1 && i < HEAPUSED_NSPACES; i++)
		if (!h->space[i])
			err = -ENOENT;
	if (err)
		h->kind = HEAPUSED_NONE;
	return err;
}

const char *heapused_pool_name(const struct heapused *h, enum heapused_space s)
{
	static const char *const names[][HEAPUSED_NSPACES] = {
		[HEAPUSED_G1] = { "G1 Eden Space", "G1 Survivor Space", "G1 Old Gen" },
		[HEAPUSED_PARALLEL] = { "PS Eden Space", "PS Survivor Space", "PS Old Gen" },
		[HEAPUSED_SERIAL] = { "Eden Space", "Survivor Space", "Tenured Gen" },
	};

	if (h->kind == HEAPUSED_NONE || s < 0 || s >= HEAPUSED_NSPACES)
		return NULL;
	return names[h->kind][s];
}

int heapused_read(const struct heapused *h, enum heapused_space s, uint64_t *used)
{
	uint64_t bottom, top;
	int err;

	if (h->kind == HEAPUSED_NONE || s < 0 || s >= HEAPUSED_NSPACES)
		return -ENOENT;
	if (h->kind == HEAPUSED_G1)
		return vmstructs_read_ptr(h->vs, h->g1mm + h->g1_off[s], used);
	err = vmstructs_read_ptr(h->vs, h->space[s] + h->off_bottom, &bottom) ?:
	      vmstructs_read_ptr(h->vs, h->space[s] + h->off_top, &top);
	if (err)
		return err;
	if (top < bottom)
		return -EIO; /* torn: read again next time */
	*used = top - bottom;
	return 0;
}
