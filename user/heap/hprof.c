// SPDX-License-Identifier: GPL-2.0
/*
 * hprof.c - HPROF binary heap dump import (see hprof.h).
 *
 * The format: "JAVA PROFILE 1.0.x\0", u4 identifier size, u8 timestamp, then
 * records (u1 tag, u4 time, u4 length, body), big-endian. memtrace uses
 * UTF8 (0x01), LOAD CLASS (0x02) and HEAP DUMP / HEAP DUMP SEGMENT
 * (0x0C / 0x1C), whose sub-records are roots, CLASS DUMP (0x20), INSTANCE
 * DUMP (0x21), OBJECT ARRAY DUMP (0x22) and PRIMITIVE ARRAY DUMP (0x23).
 *
 * Three passes over the heap-dump segments: class dumps first (instance
 * layouts need every superclass), then objects, arrays and roots, then
 * String values (their byte[]/char[] may come later in the dump). Every
 * read goes through struct rd, which checks the bounds and sets `bad`.
 *
 * What the import makes of a dump, to match the agent's snapshots: one
 * object per instance, array and class; references of JVMTI's kinds (class,
 * field, array_element, class_loader, signers, protection_domain,
 * static_field, constant_pool, superclass); the dump's roots mapped to
 * JVMTI root kinds; field indices in "superclass fields first" order.
 * Shallow sizes are estimates (HPROF has none; its class dump's "instance
 * size" counts every reference as an 8-byte id), computed for HotSpot's
 * default layout on heaps below 32 GiB -- compressed oops and class
 * pointers: instances 12 (header) + the hierarchy's fields with references
 * as 4 bytes, arrays 16 + elements (references 4), rounded up to 8. HotSpot
 * packs fields densely (subclass fields fill the holes of their supers), so
 * this equals JVMTI's GetObjectSize for ordinary classes; a JVM run with
 * -XX:-UseCompressedOops or compact headers gets sizes off by the header
 * and reference widths (the live and snapshot sources are exact). Two kinds
 * of classes come out smaller than they are, the dump lacking what makes
 * the difference (measured, QuerySeeds on JDK 17): those with @Contended
 * fields (java.lang.Thread and its subclasses: 112 bytes for 376, the
 * padding) and those with fields the VM injects (a ClassLoader subclass: 88
 * for 96).
 * An object field counts as a String field of its class when every non-null
 * value it holds in the dump is a java.lang.String.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/hprof.h"
#include "lib/util.h"

#define HPROF_MAGIC "JAVA PROFILE 1.0."

enum {
	T_UTF8 = 0x01, T_LOAD_CLASS = 0x02, T_HEAP_DUMP = 0x0c, T_HEAP_SEGMENT = 0x1c,
	S_ROOT_UNKNOWN = 0xff, S_ROOT_JNI_GLOBAL = 0x01, S_ROOT_JNI_LOCAL = 0x02,
	S_ROOT_JAVA_FRAME = 0x03, S_ROOT_NATIVE_STACK = 0x04, S_ROOT_STICKY_CLASS = 0x05,
	S_ROOT_THREAD_BLOCK = 0x06, S_ROOT_MONITOR_USED = 0x07, S_ROOT_THREAD_OBJECT = 0x08,
	S_CLASS_DUMP = 0x20, S_INSTANCE_DUMP = 0x21, S_OBJ_ARRAY_DUMP = 0x22,
	S_PRIM_ARRAY_DUMP = 0x23,
	/* HotSpot-specific sub-records of newer JDKs: skipped by their layout */
	S_ROOT_INTERNED_STRING = 0x89, S_ROOT_FINALIZING = 0x8a, S_ROOT_DEBUGGER = 0x8b,
	S_ROOT_REFERENCE_CLEANUP = 0x8c, S_ROOT_VM_INTERNAL = 0x8d, S_ROOT_JNI_MONITOR = 0x8e,
	S_UNREACHABLE = 0x90,
};

/* JVMTI heap-reference kinds (agent_proto.h uses the same numbers). */
enum { K_CLASS = 1, K_FIELD = 2, K_ARRAY = 3, K_LOADER = 4, K_SIGNERS = 5, K_PD = 6,
       K_STATIC = 8, K_CPOOL = 9, K_SUPER = 10, R_JNI_GLOBAL = 21, R_SYSTEM_CLASS = 22,
       R_MONITOR = 23, R_STACK_LOCAL = 24, R_JNI_LOCAL = 25, R_THREAD = 26, R_OTHER = 27 };

/* A bounds-checked big-endian reader. */
struct rd {
	const uint8_t *p;
	size_t n, off;
	bool bad;
};

static uint64_t rd_u(struct rd *r, unsigned k)
{
	uint64_t v = 0;

	if (r->bad || k > r->n - r->off || r->off > r->n) {
		r->bad = true;
		return 0;
	}
	for (unsigned i = 0; i < k; i++)
		v = v << 8 | r->p[r->off + i];
	r->off += k;
	return v;
}

static void rd_skip(struct rd *r, uint64_t k)
{
	if (r->bad || r->off > r->n || k > r->n - r->off)
		r->bad = true;
	else
		r->off += (size_t)k;
}

/* Bytes of a value of HPROF basic type t; 0 for an unknown type. */
static unsigned type_size(unsigned t, unsigned idsz)
{
	switch (t) {
	case 2: return idsz;
	case 4: case 8: return 1;
	case 5: case 9: return 2;
	case 6: case 10: return 4;
	case 7: case 11: return 8;
	default: return 0;
	}
}

static char type_char(unsigned t)
{
	static const char c[] = { [2] = 'L', [4] = 'Z', [5] = 'C', [6] = 'F', [7] = 'D',
				  [8] = 'B', [9] = 'S', [10] = 'I', [11] = 'J' };

	return t < sizeof(c) ? c[t] : 0;
}

struct hp_field {
	uint64_t name;
	uint8_t type;
};

struct hp_class {
	uint64_t id, super, loader;
	uint32_t inst_size;      /* as dumped (references as ids) */
	uint32_t est_size;       /* the shallow size estimate, 0 until computed */
	struct hp_field *fields; /* own instance fields, in dump order */
	uint32_t nfields;
	struct hp_field *statics; /* static fields, in dump order (their index) */
	uint32_t nstatics;
	uint64_t name_id;
	int64_t snap;            /* index in s->classes, -1 none yet */
	uint8_t *is_str;         /* per field of the flattened table: 0 unknown, 1 str, 2 not */
};

struct hp_utf8 {
	uint64_t id;
	size_t off;
	uint32_t len;
};

/* A sorted-array map from ids to indices. */
struct hp_idx {
	uint64_t id;
	size_t i;
};

static int cmp_idx(const void *a, const void *b)
{
	const struct hp_idx *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static long find_idx(const struct hp_idx *v, size_t n, uint64_t id)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].id == id)
			return (long)v[mid].i;
		if (v[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

struct hp {
	struct rd r;
	unsigned idsz;
	struct hp_utf8 *utf8; size_t nutf8, cap_utf8;
	struct hp_idx *names; size_t nnames, cap_names;   /* class id -> name id */
	struct hp_class *cls; size_t ncls, cap_cls;
	struct hp_idx *cidx;                              /* class id -> cls[] */
	struct hp_idx *segs; size_t nsegs, cap_segs;      /* (offset, length) of heap dumps */
	struct hp_idx *parr; size_t nparr, cap_parr;      /* byte/char array id -> offset */
	struct hp_idx *oidx;                              /* object id -> s->objs[] */
	/* String instances: object id, value array id, coder */
	struct { uint64_t obj, value; int coder; } *strs; size_t nstrs, cap_strs;
	int64_t string_cls;     /* cls[] of java/lang/String, -1 */
	uint64_t class_cls_id;  /* id of java/lang/Class */
	char *why; size_t wn;
};

#define PUSH(h, arr, val)                                                                 \
	(snapshot_grow(&(h)->arr, &(h)->cap_##arr, (h)->n##arr, 1, sizeof(*(h)->arr)) ? -ENOMEM : \
	 ((h)->arr[(h)->n##arr++] = (val), 0))

static const char *utf8_name(struct hp *h, uint64_t id, uint32_t *len)
{
	/* utf8[] is sorted by id once pass 1 is done */
	size_t lo = 0, hi = h->nutf8;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->utf8[mid].id == id) {
			*len = h->utf8[mid].len;
			return (const char *)h->r.p + h->utf8[mid].off;
		}
		if (h->utf8[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	*len = 0;
	return NULL;
}

static int cmp_utf8(const void *a, const void *b)
{
	const struct hp_utf8 *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

/* Pass 1: the top-level records. */
static int pass_top(struct hp *h)
{
	struct rd *r = &h->r;
	const uint8_t *z = memchr(r->p, '\0', r->n < 64 ? r->n : 64);

	if (!z) {
		snprintf(h->why, h->wn, "malformed HPROF header");
		return -EINVAL;
	}
	r->off = (size_t)(z - r->p) + 1;
	h->idsz = (unsigned)rd_u(r, 4);
	rd_u(r, 8);
	if (r->bad || (h->idsz != 4 && h->idsz != 8)) {
		snprintf(h->why, h->wn, "malformed HPROF header (identifier size %u)", h->idsz);
		return -EINVAL;
	}
	while (r->off < r->n) {
		unsigned tag = (unsigned)rd_u(r, 1);
		uint64_t len;
		size_t start;

		rd_u(r, 4);
		len = rd_u(r, 4);
		start = r->off;
		if (r->bad || len > r->n - r->off) {
			snprintf(h->why, h->wn, "truncated HPROF record at byte %zu", start);
			return -EINVAL;
		}
		if (tag == T_UTF8 && len >= h->idsz) {
			struct hp_utf8 u = { .id = rd_u(r, h->idsz), .off = start + h->idsz,
					     .len = (uint32_t)(len - h->idsz) };

			if (PUSH(h, utf8, u))
				return -ENOMEM;
		} else if (tag == T_LOAD_CLASS && len >= 8 + 2 * h->idsz) {
			struct hp_idx x;

			rd_u(r, 4);
			x.id = rd_u(r, h->idsz);
			rd_u(r, 4);
			x.i = (size_t)rd_u(r, h->idsz);
			if (PUSH(h, names, x))
				return -ENOMEM;
		} else if (tag == T_HEAP_DUMP || tag == T_HEAP_SEGMENT) {
			struct hp_idx x = { .id = start, .i = (size_t)len };

			if (PUSH(h, segs, x))
				return -ENOMEM;
		}
		r->off = start + (size_t)len;
	}
	if (h->nutf8)
		qsort(h->utf8, h->nutf8, sizeof(*h->utf8), cmp_utf8);
	if (h->nnames)
		qsort(h->names, h->nnames, sizeof(*h->names), cmp_idx);
	return 0;
}

/* Skip the body of a sub-record we do not use; false if unknown. */
static bool skip_root(struct hp *h, unsigned sub)
{
	struct rd *r = &h->r;
	unsigned id = h->idsz;

	switch (sub) {
	case S_ROOT_UNKNOWN: case S_ROOT_STICKY_CLASS: case S_ROOT_MONITOR_USED:
	case S_ROOT_INTERNED_STRING: case S_ROOT_FINALIZING: case S_ROOT_DEBUGGER:
	case S_ROOT_REFERENCE_CLEANUP: case S_ROOT_VM_INTERNAL: case S_UNREACHABLE:
		rd_skip(r, id); return true;
	case S_ROOT_JNI_GLOBAL: rd_skip(r, 2 * id); return true;
	case S_ROOT_JNI_LOCAL: case S_ROOT_JAVA_FRAME: case S_ROOT_THREAD_OBJECT:
	case S_ROOT_JNI_MONITOR:
		rd_skip(r, id + 8); return true;
	case S_ROOT_NATIVE_STACK: case S_ROOT_THREAD_BLOCK: rd_skip(r, id + 4); return true;
	default: return false;
	}
}

static int root_kind(unsigned sub)
{
	switch (sub) {
	case S_ROOT_JNI_GLOBAL: return R_JNI_GLOBAL;
	case S_ROOT_JNI_LOCAL: return R_JNI_LOCAL;
	case S_ROOT_JAVA_FRAME: return R_STACK_LOCAL;
	case S_ROOT_STICKY_CLASS: return R_SYSTEM_CLASS;
	case S_ROOT_MONITOR_USED: return R_MONITOR;
	case S_ROOT_THREAD_OBJECT: return R_THREAD;
	default: return R_OTHER;
	}
}

static int bad_sub(struct hp *h, unsigned sub)
{
	snprintf(h->why, h->wn, "malformed or unknown heap-dump sub-record 0x%02x at byte %zu",
		 sub, h->r.off);
	return -EINVAL;
}

/* Skip one CLASS DUMP's body, or read it into h->cls when @keep. */
static int class_dump(struct hp *h, bool keep)
{
	struct rd *r = &h->r;
	unsigned id = h->idsz;
	struct hp_class c = { .snap = -1 };
	unsigned n;

	c.id = rd_u(r, id);
	rd_u(r, 4);
	c.super = rd_u(r, id);
	c.loader = rd_u(r, id);
	rd_skip(r, 4 * (uint64_t)id); /* signers, protection domain, 2 reserved */
	c.inst_size = (uint32_t)rd_u(r, 4);
	n = (unsigned)rd_u(r, 2); /* constant pool */
	for (unsigned i = 0; i < n && !r->bad; i++) {
		unsigned t;

		rd_u(r, 2);
		t = (unsigned)rd_u(r, 1);
		if (!type_size(t, id))
			return bad_sub(h, S_CLASS_DUMP);
		rd_skip(r, type_size(t, id));
	}
	n = (unsigned)rd_u(r, 2); /* statics */
	if (keep && n) {
		c.statics = calloc(n, sizeof(*c.statics));
		if (!c.statics)
			return -ENOMEM;
	}
	for (unsigned i = 0; i < n && !r->bad; i++) {
		uint64_t name = rd_u(r, id);
		unsigned t = (unsigned)rd_u(r, 1);

		if (!type_size(t, id))
			goto bad;
		rd_skip(r, type_size(t, id));
		if (keep)
			c.statics[c.nstatics++] = (struct hp_field){ .name = name, .type = (uint8_t)t };
	}
	n = (unsigned)rd_u(r, 2); /* instance fields */
	if (keep && n) {
		c.fields = calloc(n, sizeof(*c.fields));
		if (!c.fields)
			goto nomem;
	}
	for (unsigned i = 0; i < n && !r->bad; i++) {
		uint64_t name = rd_u(r, id);
		unsigned t = (unsigned)rd_u(r, 1);

		if (!type_size(t, id))
			goto bad;
		if (keep)
			c.fields[c.nfields++] = (struct hp_field){ .name = name, .type = (uint8_t)t };
	}
	if (r->bad)
		goto bad;
	if (keep && PUSH(h, cls, c))
		goto nomem;
	return 0;
bad:
	free(c.fields);
	free(c.statics);
	return bad_sub(h, S_CLASS_DUMP);
nomem:
	free(c.fields);
	free(c.statics);
	return -ENOMEM;
}

/* Walk every sub-record of every segment; @pass 2 reads class dumps, 3 the rest. */
static int pass_heap(struct hp *h, struct mt_snapshot *s, int pass);

static struct hp_class *class_of(struct hp *h, uint64_t id)
{
	long i = find_idx(h->cidx, h->ncls, id);

	return i < 0 ? NULL : &h->cls[i];
}

/* The flattened instance-field table of c (superclass fields first). */
static int flat_fields(struct hp *h, struct hp_class *c, struct hp_class **chain, int *depth)
{
	int d = 0;

	for (struct hp_class *k = c; k && d < 256; k = k->super ? class_of(h, k->super) : NULL)
		chain[d++] = k;
	*depth = d;
	return d < 256 ? 0 : -EINVAL;
}

static uint64_t round8(uint64_t v)
{
	return (v + 7) & ~7ull;
}

static int add_obj(struct mt_snapshot *s, uint64_t id, uint64_t cls, uint64_t size, int32_t len)
{
	struct mt_ap_hobj o = { .id = id, .cls = cls, .size = size, .length = len };

	if (snapshot_grow(&s->objs, &s->cap_objs, s->nobjs, 1, sizeof(*s->objs)))
		return -ENOMEM;
	s->objs[s->nobjs++] = o;
	s->info.bytes += size;
	return 0;
}

static int add_ref(struct mt_snapshot *s, uint64_t from, uint64_t to, int32_t index, uint32_t kind)
{
	struct mt_ap_href x = { .from = from, .to = to, .index = index, .kind = kind };

	if (!to)
		return 0;
	if (snapshot_grow(&s->refs, &s->cap_refs, s->nrefs, 1, sizeof(*s->refs)))
		return -ENOMEM;
	s->refs[s->nrefs++] = x;
	return 0;
}

/* Class dump again in pass 3: the class object, its references and statics. */
static int class_refs(struct hp *h, struct mt_snapshot *s)
{
	struct rd *r = &h->r;
	unsigned id = h->idsz;
	uint64_t cid, super, loader, signers, pd;
	unsigned n;
	int err;

	cid = rd_u(r, id);
	rd_u(r, 4);
	super = rd_u(r, id);
	loader = rd_u(r, id);
	signers = rd_u(r, id);
	pd = rd_u(r, id);
	rd_skip(r, 2 * (uint64_t)id);
	rd_u(r, 4);
	if ((err = add_obj(s, cid, h->class_cls_id, 112, -1)) ||
	    (err = add_ref(s, cid, super, -1, K_SUPER)) ||
	    (err = add_ref(s, cid, loader, -1, K_LOADER)) ||
	    (err = add_ref(s, cid, signers, -1, K_SIGNERS)) ||
	    (err = add_ref(s, cid, pd, -1, K_PD)) ||
	    (err = add_ref(s, cid, h->class_cls_id, -1, K_CLASS)))
		return err;
	n = (unsigned)rd_u(r, 2);
	for (unsigned i = 0; i < n && !r->bad; i++) {
		unsigned idx = (unsigned)rd_u(r, 2), t = (unsigned)rd_u(r, 1);

		if (t == 2) {
			if ((err = add_ref(s, cid, rd_u(r, id), (int32_t)idx, K_CPOOL)))
				return err;
		} else {
			rd_skip(r, type_size(t, id));
		}
	}
	n = (unsigned)rd_u(r, 2);
	for (unsigned i = 0; i < n && !r->bad; i++) {
		unsigned t;

		rd_skip(r, id);
		t = (unsigned)rd_u(r, 1);
		if (t == 2) {
			if ((err = add_ref(s, cid, rd_u(r, id), (int32_t)i, K_STATIC)))
				return err;
		} else {
			rd_skip(r, type_size(t, id));
		}
	}
	n = (unsigned)rd_u(r, 2);
	rd_skip(r, (uint64_t)n * (id + 1));
	return r->bad ? bad_sub(h, S_CLASS_DUMP) : 0;
}

/* The shallow size estimate of an instance of @c (see the header), cached. */
static uint64_t inst_estimate(struct hp *h, struct hp_class *c)
{
	struct hp_class *chain[256];
	uint64_t bytes = 12;
	int depth;

	if (c->est_size)
		return c->est_size;
	flat_fields(h, c, chain, &depth); /* a chain cut at 256 still gives an estimate */
	for (int d = 0; d < depth; d++)
		for (uint32_t i = 0; i < chain[d]->nfields; i++)
			bytes += chain[d]->fields[i].type == 2 ? 4 : type_size(chain[d]->fields[i].type, 4);
	c->est_size = (uint32_t)round8(bytes);
	return c->est_size;
}

static int instance_dump(struct hp *h, struct mt_snapshot *s)
{
	struct rd *r = &h->r;
	unsigned id = h->idsz;
	struct hp_class *chain[256], *c;
	uint64_t oid, cid, nbytes;
	size_t end;
	int depth, err, index = 0, total = 0, str_coder = 0;
	uint64_t str_value = 0;
	bool is_string;

	oid = rd_u(r, id);
	rd_u(r, 4);
	cid = rd_u(r, id);
	nbytes = rd_u(r, 4);
	if (r->bad || nbytes > r->n - r->off)
		return bad_sub(h, S_INSTANCE_DUMP);
	end = r->off + (size_t)nbytes;
	c = class_of(h, cid);
	is_string = c && h->string_cls >= 0 && c == &h->cls[h->string_cls];
	if ((err = add_obj(s, oid, cid, (c ? inst_estimate(h, c) : round8(12 + nbytes)), -1)) ||
	    (err = add_ref(s, oid, cid, -1, K_CLASS)))
		return err;
	if (!c || flat_fields(h, c, chain, &depth)) {
		r->off = end;
		return 0;
	}
	for (int d = 0; d < depth; d++)
		total += (int)chain[d]->nfields;
	/* values: the class's own fields first, then each superclass's */
	for (int d = 0; d < depth && r->off < end; d++) {
		struct hp_class *k = chain[d];
		int base = 0;

		for (int e = d + 1; e < depth; e++) /* superclass fields come first */
			base += (int)chain[e]->nfields;
		for (uint32_t f = 0; f < k->nfields; f++) {
			unsigned t = k->fields[f].type;
			uint64_t v;

			index = base + (int)f;
			if (type_size(t, id) > end - r->off)
				return bad_sub(h, S_INSTANCE_DUMP);
			v = rd_u(r, type_size(t, id));
			if (t == 2) {
				if ((err = add_ref(s, oid, v, index, K_FIELD)))
					return err;
				if (is_string && v) {
					uint32_t nl;
					const char *nm = utf8_name(h, k->fields[f].name, &nl);

					if (nm && nl == 5 && !memcmp(nm, "value", 5))
						str_value = v;
				}
			} else {
				struct mt_ap_hprim p = { .obj = oid, .index = index,
							 .type = (uint32_t)type_char(t) };

				switch (t) {
				case 4: p.bits = v != 0; break;
				case 5: p.bits = v; break;
				case 8: p.bits = (uint64_t)(int64_t)(int8_t)v; break;
				case 9: p.bits = (uint64_t)(int64_t)(int16_t)v; break;
				case 10: p.bits = (uint64_t)(int64_t)(int32_t)v; break;
				case 11: p.bits = v; break;
				case 6: {
					uint32_t u = (uint32_t)v;
					float fl;
					double dd;

					memcpy(&fl, &u, 4);
					dd = fl;
					memcpy(&p.bits, &dd, 8);
					break;
				}
				case 7: p.bits = v; break;
				}
				if (is_string && t == 8) {
					uint32_t nl;
					const char *nm = utf8_name(h, k->fields[f].name, &nl);

					if (nm && nl == 5 && !memcmp(nm, "coder", 5))
						str_coder = (int)(int8_t)v;
				}
				if (snapshot_grow(&s->prims, &s->cap_prims, s->nprims, 1,
						  sizeof(*s->prims)))
					return -ENOMEM;
				s->prims[s->nprims++] = p;
			}
		}
	}
	r->off = end;
	if (str_value) {
		if (snapshot_grow(&h->strs, &h->cap_strs, h->nstrs, 1, sizeof(*h->strs)))
			return -ENOMEM;
		h->strs[h->nstrs].obj = oid;
		h->strs[h->nstrs].value = str_value;
		h->strs[h->nstrs].coder = str_coder;
		h->nstrs++;
	}
	return 0;
}

static int pass_heap(struct hp *h, struct mt_snapshot *s, int pass)
{
	struct rd *r = &h->r;
	unsigned id = h->idsz;
	int err;

	for (size_t g = 0; g < h->nsegs; g++) {
		size_t end = h->segs[g].id + h->segs[g].i;

		r->off = h->segs[g].id;
		while (r->off < end) {
			unsigned sub = (unsigned)rd_u(r, 1);
			size_t at = r->off;

			if (r->bad)
				return bad_sub(h, sub);
			switch (sub) {
			case S_CLASS_DUMP:
				err = pass == 2 ? class_dump(h, true) : class_refs(h, s);
				if (err)
					return err;
				break;
			case S_INSTANCE_DUMP:
				if (pass == 3) {
					err = instance_dump(h, s);
					if (err)
						return err;
				} else {
					uint64_t nb;

					rd_skip(r, 2 * (uint64_t)id + 4);
					nb = rd_u(r, 4);
					rd_skip(r, nb);
				}
				break;
			case S_OBJ_ARRAY_DUMP: {
				uint64_t aid = rd_u(r, id), n, cid;

				rd_u(r, 4);
				n = rd_u(r, 4);
				cid = rd_u(r, id);
				if (r->bad || n > (r->n - r->off) / id)
					return bad_sub(h, sub);
				if (pass != 3) {
					rd_skip(r, n * id);
					break;
				}
				if ((err = add_obj(s, aid, cid, round8(16 + n * 4), (int32_t)n)) ||
				    (err = add_ref(s, aid, cid, -1, K_CLASS)))
					return err;
				for (uint64_t i = 0; i < n; i++)
					if ((err = add_ref(s, aid, rd_u(r, id), (int32_t)i, K_ARRAY)))
						return err;
				break;
			}
			case S_PRIM_ARRAY_DUMP: {
				uint64_t aid = rd_u(r, id), n;
				unsigned t, es;

				rd_u(r, 4);
				n = rd_u(r, 4);
				t = (unsigned)rd_u(r, 1);
				es = type_size(t, id);
				if (r->bad || !es || t == 2 || n > (r->n - r->off) / es)
					return bad_sub(h, sub);
				if (pass == 3) {
					/* the class: "[B" etc. found by name at the end */
					struct hp_idx x = { .id = aid, .i = r->off };

					if ((err = add_obj(s, aid, 0x8000000000000000ull | t,
							   round8(16 + n * es), (int32_t)n)))
						return err;
					if ((t == 8 || t == 5) && PUSH(h, parr, x))
						return -ENOMEM;
				}
				rd_skip(r, n * es);
				break;
			}
			default:
				if (!skip_root(h, sub))
					return bad_sub(h, sub);
				if (pass == 3) {
					struct rd save = *r;
					uint64_t obj;
					struct mt_ap_hroot rt = { .kind = (uint32_t)root_kind(sub) };

					r->off = at;
					obj = rd_u(r, id);
					*r = save;
					rt.to = obj;
					if (snapshot_grow(&s->roots, &s->cap_roots, s->nroots, 1,
							  sizeof(*s->roots)))
						return -ENOMEM;
					s->roots[s->nroots++] = rt;
					if (sub == S_ROOT_THREAD_OBJECT) {
						struct mt_snap_thread th = { .id = obj, .name = "" };

						if (snapshot_grow(&s->threads, &s->cap_threads,
								  s->nthreads, 1, sizeof(*s->threads)))
							return -ENOMEM;
						s->threads[s->nthreads++] = th;
					}
				}
			}
			if (r->bad || r->off > end)
				return bad_sub(h, sub);
		}
	}
	return 0;
}

/* Decode a String's value array (LATIN1 / UTF16 byte[], or char[]) to UTF-8. */
static const char *decode_string(struct hp *h, struct mt_snapshot *s, uint64_t arr, int coder)
{
	long at = find_idx(h->parr, h->nparr, arr);
	struct rd r = h->r;
	uint64_t n;
	unsigned t;
	char *buf;
	size_t o = 0;
	const char *res;

	if (at < 0)
		return NULL;
	/* back up over the array header to read its length and type */
	r.off = (size_t)at - 4 - 1;
	n = rd_u(&r, 4);
	t = (unsigned)rd_u(&r, 1);
	if (r.bad)
		return NULL;
	if (t == 8 && coder == 1)
		n /= 2;
	if (n > MT_AP_HSTR_MAX / 3)
		n = MT_AP_HSTR_MAX / 3;
	buf = malloc(n * 3 + 1);
	if (!buf)
		return NULL;
	for (uint64_t i = 0; i < n && !r.bad; i++) {
		unsigned c;

		if (t == 8 && coder != 1) {
			c = (unsigned)rd_u(&r, 1);
		} else if (t == 8) { /* UTF16 in a byte[]: the JVM's (little-endian) order */
			unsigned lo = (unsigned)rd_u(&r, 1);

			c = lo | (unsigned)rd_u(&r, 1) << 8;
		} else {
			c = (unsigned)rd_u(&r, 2);
		}
		if (c < 0x80) {
			buf[o++] = (char)c;
		} else if (c < 0x800) {
			buf[o++] = (char)(0xc0 | c >> 6);
			buf[o++] = (char)(0x80 | (c & 0x3f));
		} else {
			buf[o++] = (char)(0xe0 | c >> 12);
			buf[o++] = (char)(0x80 | ((c >> 6) & 0x3f));
			buf[o++] = (char)(0x80 | (c & 0x3f));
		}
	}
	res = snapshot_strdup(s, buf, o);
	free(buf);
	return res;
}

/* Classes for the snapshot: names, flattened field tables, String fields. */
static int build_classes(struct hp *h, struct mt_snapshot *s)
{
	for (size_t i = 0; i < h->ncls; i++) {
		struct hp_class *c = &h->cls[i], *chain[256];
		struct mt_snap_class *sc;
		long ni = find_idx(h->names, h->nnames, c->id);
		uint32_t nl = 0;
		const char *nm = ni >= 0 ? utf8_name(h, (uint64_t)ni, &nl) : NULL;
		char *sig;
		int depth, k = 0, total = 0;

		if (snapshot_grow(&s->classes, &s->cap_classes, s->nclasses, 1, sizeof(*s->classes)))
			return -ENOMEM;
		sc = &s->classes[s->nclasses];
		memset(sc, 0, sizeof(*sc));
		sc->id = c->id;
		sc->super = c->super;
		sc->loader = c->loader;
		sig = malloc((size_t)nl + 3);
		if (!sig)
			return -ENOMEM;
		if (nm && nl && nm[0] == '[')
			snprintf(sig, (size_t)nl + 3, "%.*s", (int)nl, nm);
		else
			snprintf(sig, (size_t)nl + 3, "L%.*s;", (int)nl, nm ? nm : "");
		sc->sig = snapshot_strdup(s, sig, strlen(sig));
		free(sig);
		if (!sc->sig)
			return -ENOMEM;
		c->snap = (int64_t)s->nclasses;
		s->nclasses++;
		/* the reference statics, for naming STATIC_FIELD references (index: the
		 * dump's order, as class_refs() numbers them) */
		for (uint32_t f = 0; f < c->nstatics; f++)
			sc->nstatics += c->statics[f].type == 2;
		if (sc->nstatics) {
			uint32_t k2 = 0;

			sc->statics = calloc(sc->nstatics, sizeof(*sc->statics));
			if (!sc->statics)
				return -ENOMEM;
			for (uint32_t f = 0; f < c->nstatics; f++) {
				uint32_t fl;
				const char *fn;

				if (c->statics[f].type != 2)
					continue;
				fn = utf8_name(h, c->statics[f].name, &fl);
				sc->statics[k2].index = (int32_t)f;
				sc->statics[k2].type = 'L';
				sc->statics[k2].name = snapshot_strdup(s, fn ? fn : "?", fn ? fl : 1);
				if (!sc->statics[k2++].name)
					return -ENOMEM;
			}
		}
		if (flat_fields(h, c, chain, &depth))
			continue;
		for (int d = 0; d < depth; d++)
			total += (int)chain[d]->nfields;
		if (!total)
			continue;
		sc->fields = calloc((size_t)total, sizeof(*sc->fields));
		c->is_str = calloc((size_t)total, 1);
		if (!sc->fields || !c->is_str)
			return -ENOMEM;
		for (int d = depth - 1; d >= 0; d--) {
			for (uint32_t f = 0; f < chain[d]->nfields; f++, k++) {
				uint32_t fl;
				const char *fn = utf8_name(h, chain[d]->fields[f].name, &fl);

				sc->fields[k].index = k;
				sc->fields[k].type = type_char(chain[d]->fields[f].type);
				sc->fields[k].name = snapshot_strdup(s, fn ? fn : "?", fn ? fl : 1);
				if (!sc->fields[k].name)
					return -ENOMEM;
			}
		}
		sc->nfields = (uint32_t)k;
	}
	return 0;
}

int hprof_read_mem(const void *buf, size_t n, struct mt_snapshot *s, char *why, size_t wn)
{
	struct hp h = { .r = { .p = buf, .n = n }, .string_cls = -1, .why = why, .wn = wn };
	struct hp_idx *sidx = NULL;
	int err;

	snapshot_init(s);
	if (!hprof_is(buf, n)) {
		snprintf(why, wn, "not an HPROF dump (bad magic)");
		return -EINVAL;
	}
	err = pass_top(&h);
	if (!err && !h.nsegs) {
		snprintf(why, wn, "the HPROF file holds no heap dump");
		err = -EINVAL;
	}
	if (!err)
		err = pass_heap(&h, s, 2);
	if (err)
		goto out;
	h.cidx = malloc((h.ncls + 1) * sizeof(*h.cidx));
	if (!h.cidx) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < h.ncls; i++)
		h.cidx[i] = (struct hp_idx){ .id = h.cls[i].id, .i = i };
	qsort(h.cidx, h.ncls, sizeof(*h.cidx), cmp_idx);
	for (size_t i = 0; i < h.ncls; i++) {
		long ni = find_idx(h.names, h.nnames, h.cls[i].id);
		uint32_t nl = 0;
		const char *nm = ni >= 0 ? utf8_name(&h, (uint64_t)ni, &nl) : NULL;

		if (nm && nl == 16 && !memcmp(nm, "java/lang/String", 16))
			h.string_cls = (int64_t)i;
		if (nm && nl == 15 && !memcmp(nm, "java/lang/Class", 15))
			h.class_cls_id = h.cls[i].id;
	}
	err = build_classes(&h, s);
	if (!err)
		err = pass_heap(&h, s, 3);
	if (err)
		goto out;
	/* primitive arrays' classes: "[B" ... by name */
	{
		uint64_t pcls[12] = { 0 };
		static const char *const pn[12] = { [4] = "[Z", [5] = "[C", [6] = "[F", [7] = "[D",
						    [8] = "[B", [9] = "[S", [10] = "[I", [11] = "[J" };

		for (size_t i = 0; i < s->nclasses; i++)
			for (int t = 4; t < 12; t++)
				if (!strcmp(s->classes[i].sig, pn[t]))
					pcls[t] = s->classes[i].id;
		for (size_t i = 0; i < s->nobjs; i++)
			if (s->objs[i].cls & 0x8000000000000000ull) {
				unsigned t = (unsigned)(s->objs[i].cls & 0xff);

				s->objs[i].cls = t < 12 ? pcls[t] : 0;
				err = add_ref(s, s->objs[i].id, s->objs[i].cls, -1, K_CLASS);
				if (err)
					goto out;
			}
	}
	/* String values, then which object fields are String fields */
	if (h.nparr)
		qsort(h.parr, h.nparr, sizeof(*h.parr), cmp_idx);
	for (size_t i = 0; i < h.nstrs; i++) {
		struct mt_snap_string st = { .obj = h.strs[i].obj };

		st.s = decode_string(&h, s, h.strs[i].value, h.strs[i].coder);
		if (!st.s)
			continue;
		if (snapshot_grow(&s->strings, &s->cap_strings, s->nstrings, 1, sizeof(*s->strings))) {
			err = -ENOMEM;
			goto out;
		}
		s->strings[s->nstrings++] = st;
	}
	sidx = malloc((s->nstrings + 1) * sizeof(*sidx));
	h.oidx = util_big_alloc((size_t)s->nobjs + 1, sizeof(*h.oidx));
	if (!sidx || !h.oidx) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->nstrings; i++)
		sidx[i] = (struct hp_idx){ .id = s->strings[i].obj, .i = i };
	qsort(sidx, s->nstrings, sizeof(*sidx), cmp_idx);
	for (size_t i = 0; i < s->nobjs; i++)
		h.oidx[i] = (struct hp_idx){ .id = s->objs[i].id, .i = i };
	qsort(h.oidx, s->nobjs, sizeof(*h.oidx), cmp_idx);
	for (size_t i = 0; i < s->nrefs; i++) {
		const struct mt_ap_href *x = &s->refs[i];
		long oi;
		struct hp_class *c;

		if (x->kind != K_FIELD)
			continue;
		oi = find_idx(h.oidx, s->nobjs, x->from);
		c = oi >= 0 ? class_of(&h, s->objs[oi].cls) : NULL;
		if (!c || !c->is_str || c->snap < 0 || x->index < 0 ||
		    (uint32_t)x->index >= s->classes[c->snap].nfields)
			continue;
		if (c->is_str[x->index] != 2)
			c->is_str[x->index] = find_idx(sidx, s->nstrings, x->to) >= 0 ? 1 : 2;
	}
	for (size_t i = 0; i < h.ncls; i++) {
		struct hp_class *c = &h.cls[i];

		if (c->snap < 0 || !c->is_str)
			continue;
		for (uint32_t f = 0; f < s->classes[c->snap].nfields; f++)
			if (c->is_str[f] == 1)
				s->classes[c->snap].fields[f].type = 'T';
	}
	/* thread names: the String in each thread object's `name` field */
	for (size_t t = 0; t < s->nthreads; t++) {
		long oi = find_idx(h.oidx, s->nobjs, s->threads[t].id);
		struct hp_class *c = oi >= 0 ? class_of(&h, s->objs[oi].cls) : NULL;
		const struct mt_snap_class *sc = c && c->snap >= 0 ? &s->classes[c->snap] : NULL;

		for (size_t i = 0; sc && i < s->nrefs; i++) {
			const struct mt_ap_href *x = &s->refs[i];
			long si;

			if (x->from != s->threads[t].id || x->kind != K_FIELD || x->index < 0 ||
			    (uint32_t)x->index >= sc->nfields || strcmp(sc->fields[x->index].name, "name"))
				continue;
			si = find_idx(sidx, s->nstrings, x->to);
			if (si >= 0)
				s->threads[t].name = s->strings[si].s;
		}
	}
	s->info.objects = s->nobjs;
	s->info.refs = s->nrefs;
	s->info.roots = s->nroots;
	s->info.values = s->nprims;
	s->info.strings = s->nstrings;
	s->info.nclasses = (uint32_t)s->nclasses;
	s->info.nthreads = (uint32_t)s->nthreads;
	s->info.flags = MT_AP_HEAP_REFS | MT_AP_HEAP_ALLFIELDS | MT_AP_HEAP_STRINGS;
	s->source = "hprof";
out:
	if (err == -ENOMEM)
		snprintf(why, wn, "out of memory importing the dump");
	for (size_t i = 0; i < h.ncls; i++) {
		free(h.cls[i].fields);
		free(h.cls[i].statics);
		free(h.cls[i].is_str);
	}
	free(h.cls);
	free(h.cidx);
	free(h.utf8);
	free(h.names);
	free(h.segs);
	free(h.parr);
	free(h.oidx);
	free(h.strs);
	free(sidx);
	if (err)
		snapshot_free(s);
	return err;
}

bool hprof_is(const void *buf, size_t n)
{
	return n >= sizeof(HPROF_MAGIC) - 1 && !memcmp(buf, HPROF_MAGIC, sizeof(HPROF_MAGIC) - 1);
}
