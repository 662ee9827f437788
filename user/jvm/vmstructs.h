/*
 * vmstructs.h - HotSpot's own description of its data structures.
 *
 * libjvm.so exports gHotSpotVMStructs, gHotSpotVMTypes, gHotSpotVMIntConstants
 * and gHotSpotVMLongConstants (tables of entries terminated by a NULL name)
 * plus gHotSpotVM*Entry*Offset / *ArrayStride variables describing the entry
 * layout. All of them are in .dynsym, so this works on a stripped libjvm.
 * The tables are read once, through the target's memory, into sorted arrays.
 */
#ifndef MEMTRACE_VMSTRUCTS_H
#define MEMTRACE_VMSTRUCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_hotspot;
struct mt_proc;
struct mt_vmstructs;

/* Limits against a corrupt table: entries per table, bytes per name. */
#define MT_VMSTRUCTS_MAX_ENTRIES 100000
#define MT_VMSTRUCTS_MAX_STR 512

/* Reads @len bytes at target address @addr. Returns 0 or -errno. */
typedef int (*mt_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* One VMStructEntry: a field of a HotSpot type. */
struct mt_vmfield {
	const char *type;        /* "Klass" */
	const char *field;       /* "_name" */
	const char *type_string; /* "Symbol*", "" when the table has none */
	bool is_static;
	uint64_t offset;         /* non-static: offset in the object */
	uint64_t address;        /* static: address in the target */
};

/* One VMTypeEntry. */
struct mt_vmtype {
	const char *name;
	const char *super;       /* "" when none */
	bool is_oop, is_integer, is_unsigned;
	uint64_t size;
};

/* One VMIntConstantEntry or VMLongConstantEntry. */
struct mt_vmconst {
	const char *name;
	uint64_t value;          /* int constants are sign-extended */
};

/*
 * Runtime addresses of the exported symbols that describe the tables (the
 * address of each variable, not its value). vmstructs_open() fills this from
 * libjvm's symbols; tests fill it by hand.
 */
struct mt_vmstructs_syms {
	uint64_t structs, s_type_name, s_field_name, s_type_string, s_is_static,
		s_offset, s_address, s_stride;
	uint64_t types, t_type_name, t_super_name, t_is_oop, t_is_integer,
		t_is_unsigned, t_size, t_stride;
	uint64_t ints, i_name, i_value, i_stride;
	uint64_t longs, l_name, l_value, l_stride;
};

/*
 * vmstructs_open - read the tables of the live JVM @p, and from them the
 * named entries of jvm/hotspot.h (vmstructs_hotspot()).
 * Returns 0 and a handle in *out (free with vmstructs_free()); -ENOENT when
 * libjvm lacks the tables or they lack an entry hotspot_table requires
 * (vmstructs_missing() names it); -EAGAIN when they are not initialised yet
 * (a JVM still loading); -EINVAL for a table that makes no sense; other
 * -errno (-EPERM, -ESRCH, ...) from reading the target. Prints nothing.
 */
int vmstructs_open(const struct mt_proc *p, struct mt_vmstructs **out);

/* vmstructs_syms - the addresses of those symbols in the live JVM @p (what
 * vmstructs_open() parses from; a memory image's starting points). 0, -ENOENT
 * or -errno of opening libjvm. */
int vmstructs_syms(const struct mt_proc *p, struct mt_vmstructs_syms *s);

/*
 * vmstructs_parse - the same from symbol addresses @s and a memory reader
 * (@rd, @ctx must outlive the handle: later reads go through it too).
 * The handle has no ELF file, so vmstructs_symbol() returns -ENOENT.
 */
int vmstructs_parse(const struct mt_vmstructs_syms *s, mt_read_fn rd, void *ctx,
		    struct mt_vmstructs **out);

/* vmstructs_free - release @vs; NULL is a no-op. */
void vmstructs_free(struct mt_vmstructs *vs);

/* vmstructs_hotspot - the named entries, filled at open (valid as long as @vs). */
const struct mt_hotspot *vmstructs_hotspot(const struct mt_vmstructs *vs);
/* vmstructs_missing - the required entry ("Klass::_name") the calling
 * thread's last vmstructs_open() or vmstructs_parse() failed on for want of
 * it, "" when it did not. */
const char *vmstructs_missing(void);
/* vmstructs_strerror - what to print for an error @err of vmstructs_open()
 * on this thread: "no Klass::_name in its VMStructs" for a required entry
 * missing, else strerror(-err). The text lives until the thread's next call. */
const char *vmstructs_strerror(int err);

/*
 * The tables by name, for `memtrace vmstructs` (a dump, a lookup the user
 * types) and for filling struct mt_hotspot; everything else reads the
 * named entries.
 */

/* vmstructs_field - the entry Type::field, or NULL. */
const struct mt_vmfield *vmstructs_field(const struct mt_vmstructs *vs, const char *type,
					 const char *field);
/* vmstructs_field_offset - offset of non-static Type::field.
 * Returns 0, -ENOENT when absent, -EINVAL when the field is static. */
int vmstructs_field_offset(const struct mt_vmstructs *vs, const char *type, const char *field,
			   uint64_t *off);
/* vmstructs_field_offset_inherited - offset of non-static Type::field, or of
 * the field as one of Type's supertypes declares it (JDK 21+ moved
 * JavaThread::_osthread up to Thread). Returns 0 or -ENOENT. */
int vmstructs_field_offset_inherited(const struct mt_vmstructs *vs, const char *type,
				     const char *field, uint64_t *off);
/* vmstructs_field_sized - offset and byte size of non-static Type::field (the
 * size from the field's type in the type table, @dflt when it is not listed).
 * Returns 0 or -ENOENT. */
int vmstructs_field_sized(const struct mt_vmstructs *vs, const char *type, const char *field,
			  uint64_t *off, unsigned *size, unsigned dflt);
/* vmstructs_static_addr - target address of static Type::field.
 * Returns 0, -ENOENT when absent, -EINVAL when the field is not static. */
int vmstructs_static_addr(const struct mt_vmstructs *vs, const char *type, const char *field,
			  uint64_t *addr);

/* vmstructs_type - the entry of type @name, or NULL. */
const struct mt_vmtype *vmstructs_type(const struct mt_vmstructs *vs, const char *name);
/* vmstructs_type_size - sizeof(@name). Returns 0 or -ENOENT. */
int vmstructs_type_size(const struct mt_vmstructs *vs, const char *name, uint64_t *size);

/* vmstructs_int_constant / _long_constant - a named constant. 0 or -ENOENT. */
int vmstructs_int_constant(const struct mt_vmstructs *vs, const char *name, int32_t *val);
int vmstructs_long_constant(const struct mt_vmstructs *vs, const char *name, uint64_t *val);

/* Whole tables, sorted by name (type then field for fields), for dumps. */
size_t vmstructs_nfields(const struct mt_vmstructs *vs);
const struct mt_vmfield *vmstructs_field_at(const struct mt_vmstructs *vs, size_t i);
size_t vmstructs_ntypes(const struct mt_vmstructs *vs);
const struct mt_vmtype *vmstructs_type_at(const struct mt_vmstructs *vs, size_t i);
/* @longs: false for the int constants, true for the long ones. */
size_t vmstructs_nconsts(const struct mt_vmstructs *vs, bool longs);
const struct mt_vmconst *vmstructs_const_at(const struct mt_vmstructs *vs, bool longs, size_t i);

/* vmstructs_read - read target memory through the handle's reader. 0 or -errno. */
int vmstructs_read(const struct mt_vmstructs *vs, uint64_t addr, void *buf, size_t len);
/* vmstructs_read_ptr - read one 64-bit word. 0 or -errno. */
int vmstructs_read_ptr(const struct mt_vmstructs *vs, uint64_t addr, uint64_t *val);
/*
 * vmstructs_read_string - read the NUL-terminated string at @addr into @buf
 * (at most @len - 1 bytes, always terminated). Never reads past a page it
 * does not need. Returns its length, -E2BIG when truncated (buf still holds
 * the prefix), -EFAULT for a NULL address, or -errno.
 */
int vmstructs_read_string(const struct mt_vmstructs *vs, uint64_t addr, char *buf, size_t len);

/* vmstructs_symbol - runtime address of libjvm symbol @name (.symtab, then
 * .dynsym). Returns 0 or -ENOENT (also for handles from vmstructs_parse()). */
int vmstructs_symbol(const struct mt_vmstructs *vs, const char *name, uint64_t *addr);
/* vmstructs_has_symtab - true when libjvm keeps its .symtab. */
bool vmstructs_has_symtab(const struct mt_vmstructs *vs);

/* vmstructs_proc_read - an mt_read_fn over proc_read_mem(); @ctx is the pid
 * cast with (void *)(intptr_t)pid. */
int vmstructs_proc_read(void *ctx, uint64_t addr, void *buf, size_t len);

#endif
