/*
 * jobject.h - Java objects of a live JVM read from outside: references
 * (compressed or not), an object's class, java.lang.String contents. The
 * reads race with the JVM (a moving collector may copy an object under us):
 * every result is best effort, and callers that need a stable answer read
 * twice.
 */
#ifndef MEMTRACE_JOBJECT_H
#define MEMTRACE_JOBJECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jvm/javafield.h"

struct mt_proc;
struct mt_vmstructs;

struct jobject_layout {
	bool coops;            /* UseCompressedOops: references are 32-bit */
	uint64_t oop_base;     /* CompressedOops base and shift */
	int32_t oop_shift;
	bool ccp;              /* UseCompressedClassPointers: the klass word is 32-bit */
	uint64_t klass_base;   /* CompressedKlassPointers base and shift */
	int32_t klass_shift;
	uint64_t klass_off;    /* oopDesc::_metadata */
	bool compact;          /* UseCompactObjectHeaders: the narrow klass is in the mark word */
	uint32_t mark_klass_shift; /* markWord::klass_shift (compact headers) */
	uint64_t string_ik;    /* java.lang.String's InstanceKlass */
	uint32_t str_value, str_coder; /* String.value (byte[]), String.coder (byte) */
	uint64_t arr_len_off;  /* arrayOopDesc length: after the klass word */
	struct javafield_layout jf;
};

/*
 * jobject_layout - fill @l for JVM @p (@vs its tables). Returns 0, -ENOENT
 * when an entry is missing, or -errno. Prints nothing. With compact object
 * headers (JDK 24+, UseCompactObjectHeaders) the class is read from the mark
 * word's upper bits (markWord::klass_shift): with those headers HotSpot keeps
 * monitors in a side table, so the mark word is not displaced by locking.
 */
int jobject_layout(const struct mt_proc *p, const struct mt_vmstructs *vs,
		   struct jobject_layout *l);

struct mt_tlab_layout;

/*
 * jobject_tlab_layout - what bpf/tlabcontent.bpf.h needs to parse a TLAB's
 * objects (include/memtrace/alloc.h): the header layout of @l, Klass's layout
 * helper and its constants, the address of CollectedHeap::_total_collections.
 * Sets out->on. Returns 0, -ENOENT when an entry is missing, or -errno.
 */
int jobject_tlab_layout(const struct mt_vmstructs *vs, const struct jobject_layout *l,
			struct mt_tlab_layout *out);

/* jobject_decode - the address a reference value @ref (as stored in a field)
 * stands for. Pure. */
uint64_t jobject_decode(const struct jobject_layout *l, uint64_t ref);

/* jobject_ref - the object the reference field at byte @off of @obj points
 * to (0 for null). Returns 0 or -errno. */
int jobject_ref(const struct mt_vmstructs *vs, const struct jobject_layout *l, uint64_t obj,
		uint32_t off, uint64_t *out);

/* jobject_klass - the Klass* of @obj. Returns 0, -EFAULT for a null object, or -errno. */
int jobject_klass(const struct mt_vmstructs *vs, const struct jobject_layout *l, uint64_t obj,
		  uint64_t *klass);

/*
 * jobject_string - the contents of java.lang.String @str as UTF-8 in @out
 * (at most @len - 1 bytes, always terminated; characters outside ASCII of a
 * UTF-16 string are written as '?'). Returns the length written or -errno
 * (-EFAULT for null, -EPROTO for an implausible string).
 */
int jobject_string(const struct mt_vmstructs *vs, const struct jobject_layout *l, uint64_t str,
		   char *out, size_t len);

/*
 * jobject_vm_class - the InstanceKlass of a class the VM keeps at hand, from
 * its vmClasses slot @slot (a vmclasses_* entry of struct mt_hotspot, e.g.
 * vmclasses_thread; 0, a JVM without it, gives -ENOENT). Returns 0, -ENOENT,
 * or -errno.
 */
int jobject_vm_class(const struct mt_vmstructs *vs, uint64_t slot, uint64_t *ik);

/*
 * jobject_find_class - the first loaded class named @internal
 * ("java/util/concurrent/locks/AbstractOwnableSynchronizer") in a walk of
 * every class loader. Returns 0, -ENOENT, or -errno.
 */
int jobject_find_class(const struct mt_vmstructs *vs, const char *internal, uint64_t *ik);

/*
 * jobject_super_named - walk the class @k and its superclasses for the one
 * named @internal; 1 and its Klass* in *@found when there is one, 0 when not,
 * or -errno. A few reads: cheaper than jobject_find_class() when a subclass
 * is at hand.
 */
int jobject_super_named(const struct mt_vmstructs *vs, const struct jobject_layout *l, uint64_t k,
			const char *internal, uint64_t *found);

/* jobject_is_subclass - 1 when the class @k is @super or extends it, 0 if
 * not, or -errno. */
int jobject_is_subclass(const struct mt_vmstructs *vs, const struct jobject_layout *l,
			uint64_t k, uint64_t super);

#endif
