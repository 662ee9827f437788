/*
 * offmap.h - a compact map from addresses in one bounded range (a heap,
 * during one safepoint) to 32-bit values: one 64-bit word per slot, key
 * (offset / 8 + 1) in the high half, value in the low half. For the agent's
 * untagged heap walk (user/agent/heapwalk.c), whose millions of look-ups
 * missed the cache with 16-byte slots: at 8 bytes and at most 3/4 full, a
 * 625 k-object heap's table is 8 MiB. Not thread-safe.
 */
#ifndef MEMTRACE_OFFMAP_H
#define MEMTRACE_OFFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct offmap {
	uint64_t lo, hi;  /* the range: lo <= address <= hi, 8-byte aligned */
	uint64_t *slots;  /* 0: empty */
	unsigned bits;    /* 1 << bits slots */
	size_t n;
};

/* offmap_init - an empty map for addresses in [@lo, @hi], sized for @expect
 * keys. 0, -ERANGE (the range has 2^32 - 1 or more 8-byte words: use another
 * map) or -ENOMEM; *@m can be freed in every case. */
int offmap_init(struct offmap *m, uint64_t lo, uint64_t hi, size_t expect);
/* offmap_put_new - the value of @addr: the one it has, or @val, which it
 * gets. 0, -EINVAL (outside the range or unaligned) or -ENOMEM. */
int offmap_put_new(struct offmap *m, uint64_t addr, uint32_t val, uint32_t *cur);
/* offmap_get - the value of @addr, false if it has none. */
bool offmap_get(const struct offmap *m, uint64_t addr, uint32_t *val);
/* offmap_free - release the table; @m may be zeroed. */
void offmap_free(struct offmap *m);

#endif
