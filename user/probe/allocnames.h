/*
 * allocnames.h - the allocation tracer's class names: (Klass*, unload
 * generation) -> Java name, read when the kernel announces a new key (or
 * when a key turns up whose announcement was lost), through the Klass*
 * cache (jvm/klassname.h) or, in exact mode, from the name the probe gives.
 * A key made before a class was unloaded is not read: its Klass* may name
 * another class by now.
 */
#ifndef MEMTRACE_ALLOCNAMES_H
#define MEMTRACE_ALLOCNAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_klassname_cache;
struct allocnames_ent;

struct allocnames {
	bool exact;                       /* names from the probe's pointer (exact mode) */
	int pid;
	struct mt_klassname_cache *cache; /* not exact: Klass* -> name; owned */
	uint32_t seen_gen;                /* highest unload generation heard of */
	uint64_t unloads, unnamed;        /* classes unloaded, names not read */
	struct allocnames_ent *ents;      /* open addressing on (klass, gen) */
	size_t nents, cap;
};

/* allocnames_init - an empty table for pid @pid; @cache (owned from now on,
 * freed by allocnames_free) names Klass* values unless @exact. */
void allocnames_init(struct allocnames *n, int pid, bool exact, struct mt_klassname_cache *cache);
/* allocnames_free - free the names and the cache; the table stays usable as empty. */
void allocnames_free(struct allocnames *n);

/* allocnames_resolve - read the name of a freshly announced key (@name_len:
 * the name's length in exact mode). A name that cannot be read, or is not
 * printable, is "(unknown class 0x...)" and counted in unnamed. */
void allocnames_resolve(struct allocnames *n, uint64_t klass, uint32_t gen, uint32_t name_len);
/* allocnames_get - the name of (@klass, @gen), read now if its announcement
 * was lost; "(unknown class)" when there is no room. Owned by @n. */
const char *allocnames_get(struct allocnames *n, uint64_t klass, uint32_t gen);
/* allocnames_unload - a class of generation @gen was unloaded: a Klass* may
 * be reused from now on (the cache forgets what it knew). */
void allocnames_unload(struct allocnames *n, uint32_t gen);

#endif
