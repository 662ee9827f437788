/*
 * nmethod.h - compiled Java code of a live JVM, read from outside through
 * VMStructs: which nmethod holds a pc (CodeCache::_heaps, each CodeHeap's
 * segment map), and which Java frames a return address inside it stands for
 * (its PcDesc, then the chain of inlined scopes in its scopes data, each a
 * Method* from its metadata table and a bytecode index).
 *
 * Every offset and size comes from VMStructs; the layouts of JDK 17 (data
 * after the nmethod header, CompiledMethod) and of JDK 23+ (immutable data,
 * metadata in the malloc'd mutable data) are told apart by which fields the
 * JVM exports. The scopes use the compressed stream encoding methodsym.h
 * describes.
 *
 * Races: the JVM frees and reuses code while we read. nmethod_find() and
 * nmethod_scopes() only name a pc when the blob under it is a used nmethod
 * whose code holds the pc, and nmethod_scopes() re-reads the nmethod's
 * identity (compile id, Method*, block still used) after decoding and
 * returns -ESTALE when it changed. A caller that saw the nmethod at sample
 * time (its start or compile id) compares them with struct mt_nmethod's:
 * only that catches a pc whose nmethod was freed and replaced in between.
 *
 * Conventions: 0 (or a count) or -errno; nothing is printed.
 */
#ifndef MEMTRACE_NMETHOD_H
#define MEMTRACE_NMETHOD_H

#include <stddef.h>
#include <stdint.h>

struct mt_vmstructs;

/* How a Java frame runs. */
enum mt_frame_kind {
	MT_FRAME_INTERPRETED,
	MT_FRAME_C1,       /* compiled by C1 (levels 1-3) */
	MT_FRAME_C2,       /* compiled by C2 (or JVMCI: level 4) */
	MT_FRAME_NATIVE,   /* level 0: a compiled native wrapper or intrinsic */
	MT_FRAME_INLINED,  /* inlined into the next (outer) compiled frame */
};

/* Code heaps remembered by nmethod_layout() (JDK 17/25 have 1 or 3). */
#define MT_NMETHOD_MAX_HEAPS 8
/* Inlining depth nmethod_scopes() follows at most (HotSpot's MaxInlineLevel is 15). */
#define MT_NMETHOD_MAX_SCOPES 64

struct mt_codeheap {
	uint64_t heap;          /* CodeHeap* */
	uint64_t low, high_max; /* _memory: _low .. _high_boundary (reserved) */
	uint64_t segmap;        /* _segmap._low */
	unsigned log2_seg;
};

/* Where things are, from VMStructs (filled once per JVM). */
struct mt_nmethod_layout {
	struct mt_codeheap heaps[MT_NMETHOD_MAX_HEAPS];
	unsigned nheaps;
	uint64_t vs_high;                     /* VirtualSpace::_high (committed end) */
	uint64_t hb_sizeof, hb_length, hb_used; /* HeapBlock, its Header's fields */
	unsigned hb_length_size;
	/* CodeBlob */
	uint64_t cb_name, cb_size, cb_kind;
	int has_kind;
	int32_t kind_nmethod;                 /* CodeBlobKind::Nmethod */
	int code_abs;                         /* 1: _code_begin/_code_end; 0: _code_offset/_data_offset */
	uint64_t cb_code_begin, cb_code_end;  /* those fields' offsets */
	/* nmethod */
	uint64_t nm_sizeof, nm_method, nm_compile_id, nm_entry_bci, nm_state, nm_comp_level;
	unsigned comp_level_size;
	int style;                            /* 1: JDK 17-22, 2: immutable + mutable data, 3: immutable + _metadata_offset */
	uint64_t f_scopes_begin, f_pcs_off, f_deps_off, f_meta_off; /* style 1 */
	uint64_t f_imm, f_imm_size, f_scopes_off, f_mut, f_mut_size, f_reloc_size, f_data_off; /* styles 2, 3 */
	unsigned f_meta_off_size, f_pcs_off_size, f_scopes_off_size;
	/* PcDesc */
	uint64_t pc_sizeof, pc_pc_offset, pc_scope_offset;
	int32_t entry_bci;                    /* InvocationEntryBci */
	int32_t level_c2;                     /* CompLevel_full_optimization */
	unsigned u5_excl;                     /* see methodsym.h */
};

/* One nmethod, as nmethod_find() read it. */
struct mt_nmethod {
	uint64_t start;                       /* the nmethod (CodeBlob) */
	uint64_t code_begin, code_end;
	uint64_t method;                      /* Method* */
	int32_t compile_id;
	int32_t entry_bci;                    /* InvocationEntryBci unless an OSR compilation */
	int comp_level;
	int state;                            /* nmethod::_state, raw */
	enum mt_frame_kind kind;              /* C1, C2 or NATIVE */
	uint64_t pcs_begin, pcs_end;          /* PcDesc table */
	uint64_t scopes_begin, scopes_end;    /* scopes data */
	uint64_t meta_begin, meta_end;        /* Metadata* table */
	char blob_name[64];                   /* CodeBlob::_name ("nmethod", or a stub's) */
};

/* One Java frame of a compiled pc. */
struct mt_nmethod_scope {
	uint64_t method;                      /* Method* */
	int32_t bci;                          /* -1: method entry */
	enum mt_frame_kind kind;              /* INLINED but the outermost */
};

/* nmethod_scopes() @flags */
enum {
	/* @pc is not a return address (a sampled top frame): take the next
	 * PcDesc at or after it, as HotSpot's approximate lookup */
	MT_NMETHOD_APPROX = 1,
};

/*
 * nmethod_layout - fill *l from @vs: the code heaps and field offsets.
 * Returns 0, -ENOENT when the JVM lacks something needed (no code heaps
 * exported, unknown nmethod layout), or -errno from reading the target.
 */
int nmethod_layout(const struct mt_vmstructs *vs, struct mt_nmethod_layout *l);

/* nmethod_kind_name - "interpreted", "c1", "c2", "native", "inlined". */
const char *nmethod_kind_name(enum mt_frame_kind k);

/*
 * nmethod_find - the nmethod holding @pc, into *nm. Returns 0; -ENOENT when
 * @pc is in no code heap or in free space; -ENOEXEC when it is in a blob that
 * is no nmethod (a stub, an adapter: nm->start and nm->blob_name are set);
 * -ERANGE when it is in an nmethod but outside its code; -EBADMSG for a
 * header that makes no sense (being rewritten); or -errno from reading.
 */
int nmethod_find(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l, uint64_t pc,
		 struct mt_nmethod *nm);

/*
 * nmethod_read - the nmethod starting at @blob (a CodeBlob address, as
 * nmethod_walk() gives), into *nm. Returns 0, -ENOEXEC when @blob is no
 * nmethod (nm->blob_name set), -EBADMSG, or -errno from reading.
 */
int nmethod_read(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l, uint64_t blob,
		 struct mt_nmethod *nm);

/*
 * nmethod_verify - is @nm still there: its block used, and the same start,
 * compile id and Method*? Returns 0, -ESTALE, or -errno from reading.
 */
int nmethod_verify(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		   const struct mt_nmethod *nm);

/*
 * nmethod_scopes - the Java frames compiled pc @pc of @nm stands for,
 * innermost first, into @out (at most @max). Returns how many (>= 1);
 * -ENOENT when no PcDesc is at @pc (e.g. a deoptimization handler's pc;
 * the caller may still name nm->method); -E2BIG when there are more than
 * @max (the innermost @max are in @out); -EBADMSG for scopes that make no
 * sense; -ESTALE when @nm changed while being read; or -errno.
 */
int nmethod_scopes(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		   const struct mt_nmethod *nm, uint64_t pc, unsigned flags,
		   struct mt_nmethod_scope *out, size_t max);

/* nmethod_npcs - how many PcDescs @nm has (its sentinels included). */
size_t nmethod_npcs(const struct mt_nmethod_layout *l, const struct mt_nmethod *nm);

/*
 * nmethod_pc_at - the pc of PcDesc @i of @nm into *pc. Returns 0, -ERANGE
 * for @i out of the table or a sentinel (whose offset is no pc), or -errno.
 */
int nmethod_pc_at(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		  const struct mt_nmethod *nm, size_t i, uint64_t *pc);

/*
 * nmethod_walk - call @fn(@arg, blob) for every used block of every code
 * heap (nmethods and stubs alike; nmethod_find(blob) tells them apart), at
 * most @max. The heaps change under us: a best-effort snapshot for tests and
 * diagnostics. Stops when @fn returns non-zero and returns that. Returns 0,
 * -EBADMSG for a block list that makes no sense, or -errno from reading.
 */
int nmethod_walk(const struct mt_vmstructs *vs, const struct mt_nmethod_layout *l,
		 int (*fn)(void *arg, uint64_t blob), void *arg, size_t max);

#endif
