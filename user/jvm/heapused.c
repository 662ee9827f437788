// SPDX-License-Identifier: GPL-2.0
/* heapused.c - the heap pools' used bytes from the JVM's memory (see heapused.h). */
#include <errno.h>
#include <string.h>

#include "jvm/heapused.h"
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
	static const char *const fields[HEAPUSED_NSPACES] = { "_eden_space_used",
							       "_survivor_space_used",
							       "_old_gen_used" };
	uint64_t off;
	int err;

	if (vmstructs_field_offset(vs, "G1CollectedHeap", "_monitoring_support", &off) &&
	    vmstructs_field_offset(vs, "G1CollectedHeap", "_g1mm", &off))
		return -ENOENT;
	err = vmstructs_read_ptr(vs, heap + off, &h->g1mm);
	if (err)
		return err;
	for (int i = 0; i < HEAPUSED_NSPACES; i++)
		if (vmstructs_field_offset(vs, "G1MonitoringSupport", fields[i], &h->g1_off[i]))
			return -ENOENT;
	return h->g1mm ? 0 : -ENOENT;
}

/* Read pointer field @type::@field of the object at @obj into *@val. */
static int read_field(const struct mt_vmstructs *vs, uint64_t obj, const char *type,
		      const char *field, uint64_t *val)
{
	uint64_t off;

	if (vmstructs_field_offset_inherited(vs, type, field, &off))
		return -ENOENT;
	return vmstructs_read_ptr(vs, obj + off, val);
}

static int open_parallel(const struct mt_vmstructs *vs, struct heapused *h)
{
	uint64_t ay, ao, young, old;
	int err;

	if (vmstructs_static_addr(vs, "ParallelScavengeHeap", "_young_gen", &ay) ||
	    vmstructs_static_addr(vs, "ParallelScavengeHeap", "_old_gen", &ao) ||
	    vmstructs_field_offset(vs, "MutableSpace", "_bottom", &h->off_bottom) ||
	    vmstructs_field_offset(vs, "MutableSpace", "_top", &h->off_top))
		return -ENOENT;
	err = vmstructs_read_ptr(vs, ay, &young) ?: vmstructs_read_ptr(vs, ao, &old);
	if (err)
		return err;
	return read_field(vs, young, "PSYoungGen", "_eden_space", &h->space[HEAPUSED_EDEN]) ?:
	       read_field(vs, young, "PSYoungGen", "_from_space", &h->space[HEAPUSED_SURVIVOR]) ?:
	       read_field(vs, old, "PSOldGen", "_object_space", &h->space[HEAPUSED_OLD]);
}

static int open_serial(const struct mt_vmstructs *vs, uint64_t heap, struct heapused *h)
{
	uint64_t young, old;
	int err;

	/* SerialHeap's generations (JDK 21+), GenCollectedHeap's before */
	if (read_field(vs, heap, "SerialHeap", "_young_gen", &young) &&
	    read_field(vs, heap, "GenCollectedHeap", "_young_gen", &young))
		return -ENOENT;
	if (read_field(vs, heap, "SerialHeap", "_old_gen", &old) &&
	    read_field(vs, heap, "GenCollectedHeap", "_old_gen", &old))
		return -ENOENT;
	if (vmstructs_field_offset_inherited(vs, "ContiguousSpace", "_bottom", &h->off_bottom) ||
	    vmstructs_field_offset_inherited(vs, "ContiguousSpace", "_top", &h->off_top))
		return -ENOENT;
	err = read_field(vs, young, "DefNewGeneration", "_eden_space", &h->space[HEAPUSED_EDEN]) ?:
	      read_field(vs, young, "DefNewGeneration", "_from_space", &h->space[HEAPUSED_SURVIVOR]) ?:
	      read_field(vs, old, "TenuredGeneration", "_the_space", &h->space[HEAPUSED_OLD]);
	return err;
}

int heapused_open(const struct mt_vmstructs *vs, const char *hint, struct heapused *h)
{
	uint64_t a, heap;
	int err;

	memset(h, 0, sizeof(*h));
	h->vs = vs;
	if (vmstructs_static_addr(vs, "Universe", "_collectedHeap", &a))
		return -ENOENT;
	err = vmstructs_read_ptr(vs, a, &heap);
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
