/* zgcref.h - ZGC's references as the frozen copy's marker reads them
 * (MT_AP_FREEZE_ZGC; docs/zgc-frozen-design.md has the sources).
 *
 * ZGC keeps metadata ("colour") in the bits of each reference stored in the
 * heap and moves objects concurrently: a reference whose colour is stale may
 * name where the object was before its page was relocated, and the object's
 * new place is in the collector's forwarding table for that page. The marker
 * sees every object at one address per object, its "canonical" address: the
 * heap offset on one view (JDK 17's Remapped view; the one heap mapping from
 * JDK 21 on). Self-contained (libc only): the forwarding tables are plain
 * memory reads, in the copy they are the JVM's own, frozen by the fork; the
 * unit test (tests/unit/test_agent_zgcref.c) builds them in memory.
 */
#ifndef MEMTRACE_AGENT_ZGCREF_H
#define MEMTRACE_AGENT_ZGCREF_H

#include <stdint.h>

#include "memtrace/agent_proto.h"

/* A granule map (ZGranuleMap<ZForwarding*>): one slot per 2 MiB of heap. */
struct zgc_map {
	uint64_t size;             /* slots */
	const uint64_t *map;       /* ZForwarding* per granule, 0: not relocated */
};

struct zgc_refs {
	uint32_t variant;          /* MT_AP_ZGC_* */
	uint64_t offset_mask;      /* ZAddressOffsetMask */
	uint64_t base;             /* the canonical view: offset | base is readable */
	uint64_t good;             /* X: ZAddressGoodMask */
	uint64_t remapped;         /* X: the Remapped bit */
	uint64_t load_bad;         /* GEN: ZPointerLoadBadMask */
	uint64_t rem_old, rem_young; /* GEN: ZPointerRemapped{Old,Young}Mask */
	struct zgc_map fwd[2];     /* X: [0]; GEN: [0] young, [1] old */
	uint32_t fw_start, fw_shift, fw_length, fw_entries; /* struct mt_ap_heap_zgc's */
	uint64_t nfwd;             /* references resolved through a forwarding entry */
	uint64_t nstale;           /* stale references whose object had not moved */
	uint64_t nbad;             /* references that decode to nothing (a bad colour) */
};

#define ZGC_GRANULE_SHIFT 21

/* zgc_hash - ZGC's hash of a forwarding index (ZHash::uint32_to_uint32). */
uint32_t zgc_hash(uint32_t k);

/* zgc_forward - where the object at heap offset @off is now, by forwarding
 * map @m: its new offset, or @off when its page was not relocated or it has
 * no entry (not moved; only dead objects lack one once relocation is over). */
uint64_t zgc_forward(struct zgc_refs *z, const struct zgc_map *m, uint64_t off);

/* zgc_load - the object a reference slot's raw value @v names, as a
 * canonical address; 0 for null (coloured or not) and for a value no
 * colour explains (counted in nbad). */
uint64_t zgc_load(struct zgc_refs *z, uint64_t v);

/* zgc_root - an address the VM handed over (a JVMTI root, a JNI local
 * reference's object) as a canonical address: on JDK 17 a coloured pointer
 * like any other; from JDK 21 a plain address. 0 stays 0. */
uint64_t zgc_root(struct zgc_refs *z, uint64_t a);

#endif
