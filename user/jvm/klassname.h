/*
 * klassname.h - Klass* of a live JVM -> Java class name ("java.lang.String",
 * "int[]"), through Klass::_name (a Symbol*) and Symbol::_length/_body, all
 * located with VMStructs. A cache keeps names by Klass* for the allocation
 * profiler, whose BPF side hands over raw Klass* values.
 */
#ifndef MEMTRACE_KLASSNAME_H
#define MEMTRACE_KLASSNAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_vmstructs;
struct mt_klassname_cache;

/* Longest class name we read (a Symbol's _length is a u2). */
#define MT_KLASSNAME_MAX 65535
/* Names the cache keeps before it starts over. */
#define MT_KLASSNAME_CACHE_MAX 65536

/* Where the name is, from VMStructs. */
struct mt_klass_layout {
	uint64_t klass_name;  /* Klass::_name offset (Symbol*) */
	uint64_t sym_length;  /* Symbol::_length offset */
	uint64_t sym_body;    /* Symbol::_body offset */
	unsigned length_size; /* sizeof Symbol::_length: 2 (u2) or 4 */
};

/* klassname_layout - fill *l from @vs (Klass::_name, Symbol::_length and
 * Symbol::_body are required entries: a handle has them). Returns 0, or
 * -EINVAL when Symbol::_length is neither 2 nor 4 bytes. */
int klassname_layout(const struct mt_vmstructs *vs, struct mt_klass_layout *l);

/*
 * klassname_to_java - convert an internal class name (@len bytes, not
 * necessarily NUL-terminated) to its Java form in @out:
 *   java/lang/String -> java.lang.String     [J -> long[]
 *   [[Ljava/lang/Object; -> java.lang.Object[][]   Outer$Inner unchanged
 *   pkg/Foo$$Lambda+0x0000000800c01200 (hidden) -> pkg.Foo$$Lambda/0x0000000800c01200
 * Returns the length written (without the NUL), -EINVAL for a malformed
 * name (bad descriptor, empty), -ENOSPC when @outlen is too small.
 * Pure: no memory of the target is touched.
 */
int klassname_to_java(const char *internal, size_t len, char *out, size_t outlen);

/*
 * klassname_read - the internal name (@java false) or Java name (@java true)
 * of the Klass at @klass, read now through @vs. Returns the length, -EFAULT
 * for a NULL klass or name, -EINVAL for an implausible Symbol, -ENOSPC,
 * or -errno from reading the target.
 */
int klassname_read(const struct mt_vmstructs *vs, const struct mt_klass_layout *l,
		   uint64_t klass, bool java, char *out, size_t outlen);

/*
 * klassname_walk - call @fn(@arg, klass) for every Klass of every class
 * loader (ClassLoaderDataGraph::_head -> ClassLoaderData::_klasses ->
 * Klass::_next_link), at most @max klasses. The lists change under us: this
 * is a best-effort snapshot for diagnostics and tests. Stops early when @fn
 * returns non-zero (and returns that value). Returns 0, -ENOENT when the
 * tables lack a needed field, or -errno from reading the target.
 */
int klassname_walk(const struct mt_vmstructs *vs, int (*fn)(void *arg, uint64_t klass),
		   void *arg, size_t max);

/*
 * klassname_cache_new - a cache of Java names by Klass* reading through @vs
 * (which must outlive the cache). Returns NULL with errno ENOENT when @vs
 * lacks the layout, ENOMEM.
 */
struct mt_klassname_cache *klassname_cache_new(const struct mt_vmstructs *vs);
/* klassname_cache_free - release @c and its names; NULL is a no-op. */
void klassname_cache_free(struct mt_klassname_cache *c);
/*
 * klassname_cache_get - the Java name of @klass copied into @out: from the
 * cache, else read from the target and remembered. Returns the length or
 * -errno as klassname_read() (failures are not cached).
 */
int klassname_cache_get(struct mt_klassname_cache *c, uint64_t klass, char *out, size_t outlen);
/* klassname_cache_invalidate - forget @klass (its class was unloaded). */
void klassname_cache_invalidate(struct mt_klassname_cache *c, uint64_t klass);
/* klassname_cache_clear - forget every name. */
void klassname_cache_clear(struct mt_klassname_cache *c);
/* klassname_cache_count - names held now. */
size_t klassname_cache_count(const struct mt_klassname_cache *c);

#endif
