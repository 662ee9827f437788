/* heapmark.h - the frozen copy's own mark of the live heap (MT_AP_FREEZE_MARK).
 *
 * In the frozen copy, after JVMTI has reported the heap's roots, the marker
 * finds every object the collector would keep - from those roots, through
 * each object's reference fields (HotSpot's oop maps), array elements, a
 * class object's static fields and, as the collector does, everything the
 * data of a live class's loader holds (every class object it defined, their
 * constant pools' resolved references, the loader itself) - and leaves the
 * referents of weak and phantom references alone. It reads the heap with
 * HotSpot's own layouts (struct mt_ap_heap_layout, from memtrace) and writes
 * one bit per possible object start; then, in address order, it writes the
 * records memtrace asked for. No JVMTI, no JNI, no HotSpot code: plain reads
 * of the copy's own memory, each object and Klass checked before use (a
 * check that fails stops the mark with a reason; the caller then walks the
 * old way). Self-contained (libc only), so a unit test drives it on a heap
 * built in memory (tests/unit/test_agent_heapmark.c).
 */
#ifndef MEMTRACE_AGENT_HEAPMARK_H
#define MEMTRACE_AGENT_HEAPMARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/agent_proto.h"
#include "zgcref.h"

/* A field as the marker uses it: by its byte offset in an instance (instance
 * fields, inherited ones included) or in the class's mirror (statics). */
struct hm_field {
	uint32_t off;
	int32_t index;      /* JVMTI field index */
	char type;          /* signature char: 'L' or '[' a reference, else a primitive */
	bool projected;     /* a primitive whose value is sent */
};

/* A class the agent named before the pause. fields and statics are sorted by
 * offset and belong to the caller. */
struct hm_class {
	uint64_t mirror;    /* the class object's address (read in the pause) */
	const struct hm_field *fields;
	uint32_t nfields;
	const struct hm_field *statics;
	uint32_t nstatics;
};

/* An object the agent named before the pause (a class, loader or thread), or
 * a sampled object (sample != 0). */
struct hm_named {
	uint64_t addr;
	uint64_t id;
	uint64_t sample;    /* the sampling session's id of a sampled object, else 0 */
};

#define HM_OBJS    (1u << 0) /* object records */
#define HM_REFS    (1u << 1) /* reference records (and roots) */
#define HM_PRIMS   (1u << 2) /* values of projected primitive fields */
#define HM_STRINGS (1u << 3) /* java.lang.String values */
#define HM_HISTO   (1u << 4) /* totals per class */
#define HM_ADDRS   (1u << 5) /* with HM_OBJS: each object's address (comparisons) */
#define HM_FORWARDING (1u << 6) /* follow forwarding pointers (MT_AP_FREEZE_FORWARDING) */
#define HM_SMALLPAGES (1u << 7) /* no huge pages for the records (MT_AP_FREEZE_SMALLPAGES) */
#define HM_INPLACE (1u << 8) /* with a pool: progress in live->mark_objs/mark_refs, room
			      * after the object records (MT_AP_FREEZE_INPLACE) */
#define HM_REFPOS  (1u << 9) /* with HM_OBJS and HM_REFS: references as struct
			      * mt_ap_hrefpos, their counts in the objects' flags
			      * (MT_AP_FREEZE_REFPOS; info.ref_format says) */
#define HM_NOCLASS (1u << 10) /* with HM_REFPOS: CLASS references implied, not
			      * records (MT_AP_FREEZE_NOCLASS) */

struct hm_input {
	const struct mt_ap_heap_layout *L;
	uint64_t heap_lo, heap_hi;     /* the reserved heap: no object lies outside */
	uint32_t flags;                /* HM_* */
	const struct mt_ap_hroot *roots; /* to: the root's address; kind: JVMTI's */
	size_t nroots;
	const struct hm_named *named;
	size_t nnamed;
	const struct hm_class *classes; /* the named classes' fields, by mirror */
	size_t nclasses;
	const struct hm_field *class_fields; /* java.lang.Class's own fields */
	uint32_t nclass_fields;
	uint64_t next_id;              /* ids of objects not named start here */
	volatile uint64_t *progress;   /* bumped now and then (the JVM's thread watches) */
	struct zgc_refs *zgc;          /* NULL, or ZGC's colours and forwarding tables (every
					* reference decoded by them; heap_lo/hi and every
					* address in canonical form, zgcref.h) */
	struct mt_ap_hlive *live;      /* NULL, or where the records are published as they
					* are written (MT_AP_FREEZE_LIVE: memtrace reads them) */
	void *pool;                    /* NULL, or memory for the object and reference
					* records (MT_AP_FREEZE_POOL: memtrace's memfd), used
					* when both fit in its pool_bytes */
	uint64_t pool_bytes;
	uint32_t threads;              /* the mark (from 256 Ki objects) and the records'
					* pass (from a million): 0 as the copy sees fit (two
					* threads on two CPUs), 1, 2 (tests: any heap, the
					* mark's threads sharing every 4 objects), 3 (tests:
					* two, the records' second
					* finding no class: the first writes its blocks), 4
					* (tests: two, the references outgrowing their room:
					* all again in one) */
	bool mark_one;                 /* the mark in one thread whatever threads says */
	/* Naming parked virtual threads (JDK 19+), 0 each when unknown: the
	 * Klass of java.lang.VirtualThread, the offsets of its `cont` (the
	 * Continuation) and `tid` (Thread's), and of StackChunk's `parent` (its
	 * header's other reference is its `cont`, a field HotSpot injects, which
	 * JVMTI does not list). A chunk's locals follow an MT_AP_HROOT_TID
	 * marker root whose `to` is the tid of the virtual thread whose
	 * continuation the chunk is part of. */
	uint64_t vt_klass;
	uint32_t vt_cont, vt_tid, sc_parent;
};

/* What the marker wrote (arrays malloc'd by it but those in the input's
 * pool; heapmark_free() frees). */
struct hm_result {
	struct mt_ap_hmark info;       /* counts, times, status; addresses unset */
	struct mt_ap_hobj *objs;
	struct mt_ap_href *refs;       /* (info.ref_format MT_AP_REFS_POS: struct
					* mt_ap_hrefpos records there) */
	struct mt_ap_hroot *roots;
	struct mt_ap_hprim *prims;
	struct mt_ap_hstrref *strs;    /* utf8 points into memory the result owns */
	struct mt_ap_hhisto *histo;
	struct mt_ap_hklass *klasses;
	struct mt_ap_hsampled *sampled;
	uint64_t *addrs;               /* HM_ADDRS: info.nobjs addresses */
	bool objs_pooled, refs_pooled; /* objs, refs lie in hm_input.pool (not freed) */
	uint64_t helper_marked;        /* objects the mark's second thread scanned (0: one) */
	void *priv;                    /* the marker's own state */
};

/* heapmark_run - mark the live heap from @in's roots and write the records
 * @in->flags asks for into @out (zeroed by the call). Returns 0, or -errno
 * with @out->info.why saying what stopped it (a layout that does not hold, a
 * stack chunk, no memory); @out is to be freed either way. */
int heapmark_run(const struct hm_input *in, struct hm_result *out);

/* heapmark_free - free what heapmark_run() allocated in @r. No operation on a
 * zeroed result. */
void heapmark_free(struct hm_result *r);

/* heapmark_utf8 - Java's UTF-16 @s[0..n) as UTF-8 into @out (at most @max
 * bytes, NUL not counted; an unpaired surrogate becomes U+FFFD). Returns the
 * bytes written; *@cut is set when the string did not fit. @out holds
 * @max + 1 bytes. */
size_t heapmark_utf8(const uint16_t *s, size_t n, char *out, size_t max, bool *cut);

#endif
