/*
 * javafield.h - where a Java field of a class lives in its objects, read from
 * outside the JVM: the class's field table (InstanceKlass), the field's name
 * from the constant pool, its offset. Two encodings, both from VMStructs:
 *   JDK 17      InstanceKlass::_fields, an Array<u2> of FieldInfo records of
 *               FieldInfo::field_slots u2 each (access flags, name index,
 *               signature index, initval index, low/high packed offset; the
 *               offset is packed >> FIELDINFO_TAG_SIZE when its tag is
 *               FIELDINFO_TAG_OFFSET);
 *   JDK 21+     InstanceKlass::_fieldinfo_stream, an Array<u1> holding
 *               UNSIGNED5 numbers: java count, injected count, then per field
 *               name, signature, offset, access flags, field flags and the
 *               optional items the field flags announce (initval, generic
 *               signature, contention group).
 * Fields injected by the VM (JVM_ACC_FIELD_INTERNAL / _ff_injected) name a VM
 * symbol, not a pool entry: they are skipped. Static fields are skipped (they
 * live in the class mirror).
 */
#ifndef MEMTRACE_JAVAFIELD_H
#define MEMTRACE_JAVAFIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jvm/klassname.h"

struct mt_vmstructs;

/* Most fields one class may declare (a u2 count in the class file). */
#define JAVAFIELD_MAX 65535

/* One field as the table holds it. */
struct javafield_entry {
	uint16_t name_index;   /* constant pool index of the name */
	uint16_t access;       /* JVM access flags (ACC_STATIC 0x0008, ...) */
	uint32_t offset;       /* byte offset in the object (instance fields) */
	bool injected;         /* VM-injected: name_index is a VM symbol id */
};

/* The field flags' bit positions of the JDK 21+ stream (FieldInfo::FieldFlags). */
struct javafield_ffbits {
	int initialized, injected, generic, stable, contended;
};

/* What javafield_offset() needs, from VMStructs. */
struct javafield_layout {
	bool stream;                    /* JDK 21+ encoding */
	uint64_t ik_fields;             /* InstanceKlass::_fields or ::_fieldinfo_stream */
	uint64_t ik_java_fields_count;  /* JDK 17: InstanceKlass::_java_fields_count (u2) */
	uint64_t ik_constants;          /* InstanceKlass::_constants */
	uint64_t klass_super;           /* Klass::_super */
	uint64_t cp_size;               /* sizeof(ConstantPool): the slots follow it */
	uint64_t arr_data;              /* Array<u1>/Array<u2>::_data (both 4) */
	/* JDK 17 */
	int32_t slots, acc_slot, name_slot, low_slot, high_slot, tag_size, tag_offset,
		acc_internal;
	/* JDK 21+ */
	struct javafield_ffbits ff;
	struct mt_klass_layout kl;      /* reading Symbols */
};

/* javafield_layout - fill @l from @vs. Returns 0, or -ENOENT when an entry
 * either encoding needs is missing. Prints nothing. */
int javafield_layout(const struct mt_vmstructs *vs, struct javafield_layout *l);

/*
 * javafield_offset - the offset of instance field @name declared by the
 * InstanceKlass at @ik or one of its superclasses (the nearest wins, as in
 * Java). Returns 0, -ENOENT when no class of the chain declares it, -EPROTO
 * for a field table this code cannot read, or -errno from reading the target.
 */
int javafield_offset(const struct mt_vmstructs *vs, const struct javafield_layout *l,
		     uint64_t ik, const char *name, uint32_t *offset);

/*
 * javafield_parse_stream - the fields of a JDK 21+ field-info stream @buf of
 * @len bytes into @out (at most @max; *@n gets how many, Java fields first,
 * then injected ones). Returns 0, or -EPROTO for a malformed stream or field
 * flags with bits this code does not know. Pure.
 */
int javafield_parse_stream(const uint8_t *buf, size_t len, const struct javafield_ffbits *ff,
			   struct javafield_entry *out, size_t max, size_t *n);

/*
 * javafield_parse_u2 - the first @count fields of a JDK 17 FieldInfo array
 * @a of @alen u2 into @out (at most @max; *@n gets how many). Returns 0, or
 * -EPROTO when @a is too short or an offset is not tagged as one. Pure.
 */
int javafield_parse_u2(const uint16_t *a, size_t alen, unsigned count,
		       const struct javafield_layout *l, struct javafield_entry *out, size_t max,
		       size_t *n);

#endif
