/*
 * jvmflags.h - current values of HotSpot -XX flags in a live JVM.
 *
 * First through the JVMFlag table that VMStructs describes (JVMFlag::flags,
 * ::numFlags, ::_name, ::_addr, ::_type): this works on a stripped libjvm.
 * Failing that (no table), through the flag's global symbol in .symtab
 * (a flag is a plain global such as `bool DTraceAllocProbes`).
 */
#ifndef MEMTRACE_JVMFLAGS_H
#define MEMTRACE_JVMFLAGS_H

#include <stdbool.h>
#include <stdint.h>

struct mt_proc;
struct mt_vmstructs;

/* JVMFlag::FlagType (jvmFlag.h), the same order in JDK 17 and 25. */
enum mt_flag_type {
	MT_FLAG_UNKNOWN = -1, /* found through .symtab: no type information */
	MT_FLAG_BOOL = 0,
	MT_FLAG_INT,
	MT_FLAG_UINT,
	MT_FLAG_INTX,
	MT_FLAG_UINTX,
	MT_FLAG_UINT64,
	MT_FLAG_SIZE_T,
	MT_FLAG_DOUBLE,
	MT_FLAG_CCSTR,
	MT_FLAG_CCSTRLIST,
	MT_FLAG_NTYPES,
};

/* Where a flag lives. */
struct mt_jvmflag {
	uint64_t addr;          /* address of the value in the target */
	int type;               /* enum mt_flag_type */
	uint32_t flags;         /* JVMFlag::_flags (origin, kind bits); 0 via symtab */
	bool via_symtab;        /* found through .symtab, not the JVMFlag table */
};

/* jvmflags_type_name - "bool", "size_t", ... or "unknown". */
const char *jvmflags_type_name(int type);

/*
 * jvmflags_find - locate flag @name (e.g. "DTraceMonitorProbes") in the
 * JVM @p described by @vs (@vs may be NULL: then only .symtab is tried; @p
 * may be NULL: then only the table is tried). Returns 0, -ENOENT when this
 * JVM has no such flag, or -errno from reading the target. Writes nothing.
 */
int jvmflags_find(const struct mt_proc *p, const struct mt_vmstructs *vs, const char *name,
		  struct mt_jvmflag *out);

/*
 * jvmflags_get_bool / _intx / _uintx / _double - the flag's current value.
 * Returns 0, -ENOENT (no such flag), -EINVAL (the flag has another type:
 * _intx takes int and intx, _uintx takes uint, uintx, uint64_t and size_t),
 * or -errno. Flags found through .symtab are read with the requested type.
 */
int jvmflags_get_bool(const struct mt_proc *p, const struct mt_vmstructs *vs, const char *name,
		      bool *val);
int jvmflags_get_intx(const struct mt_proc *p, const struct mt_vmstructs *vs, const char *name,
		      int64_t *val);
int jvmflags_get_uintx(const struct mt_proc *p, const struct mt_vmstructs *vs, const char *name,
		       uint64_t *val);
int jvmflags_get_double(const struct mt_proc *p, const struct mt_vmstructs *vs, const char *name,
			double *val);

/*
 * jvmflags_collector - the collector JVM @p runs, from its Use*GC flags:
 * "Serial", "Parallel", "G1", "ZGC (generational)", "ZGC (non-generational)"
 * (JDK 21-23: ZGenerational; JDK 24+ has only the generational one, JDK 17
 * only the other), "Shenandoah", "Epsilon"; NULL when no flag says (a static
 * string otherwise).
 */
const char *jvmflags_collector(const struct mt_proc *p, const struct mt_vmstructs *vs);

#endif
