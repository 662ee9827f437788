/* vmexercise.h - what memtrace reads through a VMStructs handle beyond its
 * tables, for the VMStructs fuzzer and the tool that captures its seeds (so
 * a captured image holds the memory these reads need): the named entries
 * (jvm/hotspot.h), lookups by name, the JVMFlag
 * table (`memtrace doctor`'s flags), and class names through the class
 * loader data graph (at most VMEX_CLASSES). Header only. */
#ifndef MEMTRACE_FUZZ_VMEXERCISE_H
#define MEMTRACE_FUZZ_VMEXERCISE_H

#include <stdbool.h>
#include <stdint.h>

#include "jvm/hotspot.h"
#include "jvm/jvmflags.h"
#include "jvm/klassname.h"
#include "jvm/vmstructs.h"

#define VMEX_CLASSES 48

struct vmex_walk {
	const struct mt_vmstructs *vs;
	struct mt_klass_layout l;
	unsigned named;
};

static inline int vmex_class(void *arg, uint64_t klass)
{
	struct vmex_walk *w = arg;
	char name[256];

	if (klassname_read(w->vs, &w->l, klass, true, name, sizeof(name)) > 0)
		w->named++;
	return 0;
}

/* vmex_present - how many entries of hotspot_table the handle has (the
 * named table vmstructs_parse() filled). */
static inline unsigned vmex_present(const struct mt_vmstructs *vs)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	unsigned n = 0;

	for (size_t i = 0; i < hotspot_nentries; i++) {
		const struct hotspot_entry *e = &hotspot_table[i];

		if (e->has != HOTSPOT_NO_FLAG)
			n += *(const bool *)((const char *)hs + e->has);
		else
			n += *(const uint64_t *)((const char *)hs + e->at) != 0;
	}
	return n;
}

/* vmex_run - the reads; returns how many answered (for a capture's log). */
static inline unsigned vmex_run(const struct mt_vmstructs *vs)
{
	static const char *const bools[] = { "DTraceAllocProbes", "DTraceMonitorProbes",
					     "DTraceMethodProbes", "UseG1GC",
					     "DisableAttachMechanism" };
	struct vmex_walk w = { .vs = vs };
	unsigned ok = 0;
	uint64_t u, off;
	unsigned size;
	int64_t i;
	int32_t c;
	double d;
	bool b;
	char s[64];

	ok += vmex_present(vs);
	for (size_t k = 0; k < sizeof(bools) / sizeof(bools[0]); k++)
		ok += !jvmflags_get_bool(NULL, vs, bools[k], &b);
	ok += !jvmflags_get_uintx(NULL, vs, "MaxHeapSize", &u);
	ok += !jvmflags_get_intx(NULL, vs, "MaxInlineSize", &i);
	ok += !jvmflags_get_double(NULL, vs, "SweeperThreshold", &d);
	ok += !vmstructs_field_offset_inherited(vs, "JavaThread", "_osthread", &off);
	ok += !vmstructs_field_sized(vs, "Klass", "_name", &off, &size, 8);
	ok += !vmstructs_static_addr(vs, "Universe", "_collectedHeap", &u);
	ok += !vmstructs_type_size(vs, "Method", &u);
	ok += !vmstructs_int_constant(vs, "oopSize", &c);
	ok += !vmstructs_long_constant(vs, "markWord::hash_mask", &u);
	for (size_t k = 0; k < vmstructs_nfields(vs) && k < 4; k++) {
		const struct mt_vmfield *f = vmstructs_field_at(vs, k);

		if (f->is_static && vmstructs_read_string(vs, f->address, s, sizeof(s)) >= 0)
			ok++;
	}
	if (!klassname_layout(vs, &w.l)) {
		ok++;
		klassname_walk(vs, vmex_class, &w, VMEX_CLASSES);
		ok += w.named;
	}
	return ok;
}

#endif
