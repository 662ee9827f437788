/* fake_jvm.h - a synthetic HotSpot for test_methodsym.c and test_nmethod.c:
 * VMStructs shaped like JDK 17's or JDK 25's (their real offsets and sizes,
 * as `memtrace vmstructs --dump` shows them), Methods with names, bytecodes
 * and compressed line tables, and an encoder for HotSpot's UNSIGNED5 streams
 * (both variants). Built on fake_target.h, which must come first. */
#ifndef MEMTRACE_TEST_FAKE_JVM_H
#define MEMTRACE_TEST_FAKE_JVM_H

/* A JVM image under construction. */
struct fj {
	struct fake *f;
	int jdk;                  /* 17 or 25 */
	unsigned excl;            /* the stream encoding that JDK uses */
	struct mt_vmstructs *vs;
	uint64_t heaps_var;       /* CodeCache::_heaps (a GrowableArray<CodeHeap*>*) */
	uint64_t major_var;       /* Abstract_VM_Version::_vm_major_version */
	uint64_t cm_sizeof, cp_sizeof, hb_sizeof, nm_sizeof;
};

/* The fields both JDKs export the same way. */
static const struct tfield FJ_COMMON[] = {
	{ "Klass", "_name", "Symbol*", 0, 24, 0 },
	{ "Symbol", "_length", "u2", 0, 4, 0 },
	{ "Symbol", "_body", "", 0, 6, 0 },
	{ "Method", "_constMethod", "ConstMethod*", 0, 8, 0 },
	{ "ConstMethod", "_constants", "ConstantPool*", 0, 8, 0 },
	{ "ConstMethod", "_constMethod_size", "int", 0, 24, 0 },
	{ "ConstantPool", "_pool_holder", "InstanceKlass*", 0, 24, 0 },
	{ "ConstantPool", "_source_file_name_index", "u2", 0, 54, 0 },
	{ "ConstantPool", "_length", "int", 0, 60, 0 },
	{ "GrowableArrayBase", "_len", "int", 0, 0, 0 },
	{ "GrowableArray<int>", "_data", "int*", 0, 8, 0 },
	{ "VirtualSpace", "_low_boundary", "char*", 0, 0, 0 },
	{ "VirtualSpace", "_high_boundary", "char*", 0, 8, 0 },
	{ "VirtualSpace", "_low", "char*", 0, 16, 0 },
	{ "VirtualSpace", "_high", "char*", 0, 24, 0 },
	{ "HeapBlock", "_header", "HeapBlock::Header", 0, 0, 0 },
	{ "PcDesc", "_pc_offset", "int", 0, 0, 0 },
	{ "PcDesc", "_scope_decode_offset", "int", 0, 4, 0 },
	{ "PcDesc", "_obj_decode_offset", "int", 0, 8, 0 },
	{ "PcDesc", "_flags", "int", 0, 12, 0 },
};

static const struct tfield FJ_17[] = {
	{ "ConstMethod", "_flags", "u2", 0, 28, 0 },
	{ "ConstMethod", "_code_size", "u2", 0, 32, 0 },
	{ "ConstMethod", "_name_index", "u2", 0, 34, 0 },
	{ "ConstMethod", "_signature_index", "u2", 0, 36, 0 },
	{ "CodeHeap", "_memory", "VirtualSpace", 0, 8, 0 },
	{ "CodeHeap", "_segmap", "VirtualSpace", 0, 120, 0 },
	{ "CodeHeap", "_log2_segment_size", "int", 0, 256, 0 },
	{ "HeapBlock::Header", "_length", "size_t", 0, 0, 0 },
	{ "HeapBlock::Header", "_used", "bool", 0, 8, 0 },
	{ "CodeBlob", "_size", "int", 0, 12, 0 },
	{ "CodeBlob", "_data_offset", "int", 0, 24, 0 },
	{ "CodeBlob", "_code_begin", "address", 0, 32, 0 },
	{ "CodeBlob", "_code_end", "address", 0, 40, 0 },
	{ "CodeBlob", "_name", "const char*", 0, 96, 0 },
	{ "CompiledMethod", "_method", "Method*", 0, 112, 0 },
	{ "CompiledMethod", "_scopes_data_begin", "address", 0, 120, 0 },
	{ "nmethod", "_entry_bci", "int", 0, 192, 0 },
	{ "nmethod", "_metadata_offset", "int", 0, 260, 0 },
	{ "nmethod", "_scopes_pcs_offset", "int", 0, 268, 0 },
	{ "nmethod", "_dependencies_offset", "int", 0, 272, 0 },
	{ "nmethod", "_compile_id", "int", 0, 304, 0 },
	{ "nmethod", "_comp_level", "int", 0, 308, 0 },
	{ "nmethod", "_state", "volatile signed char", 0, 315, 0 },
};

static const struct tfield FJ_25[] = {
	{ "ConstMethod", "_flags._flags", "u4", 0, 28, 0 },
	{ "ConstMethod", "_code_size", "u2", 0, 34, 0 },
	{ "ConstMethod", "_name_index", "u2", 0, 36, 0 },
	{ "ConstMethod", "_signature_index", "u2", 0, 38, 0 },
	{ "CodeHeap", "_memory", "VirtualSpace", 0, 0, 0 },
	{ "CodeHeap", "_segmap", "VirtualSpace", 0, 112, 0 },
	{ "CodeHeap", "_log2_segment_size", "int", 0, 248, 0 },
	{ "HeapBlock::Header", "_length", "uint32_t", 0, 0, 0 },
	{ "HeapBlock::Header", "_used", "bool", 0, 4, 0 },
	{ "CodeBlob", "_name", "const char*", 0, 8, 0 },
	{ "CodeBlob", "_mutable_data", "address", 0, 16, 0 },
	{ "CodeBlob", "_size", "int", 0, 24, 0 },
	{ "CodeBlob", "_relocation_size", "int", 0, 28, 0 },
	{ "CodeBlob", "_code_offset", "int", 0, 36, 0 },
	{ "CodeBlob", "_data_offset", "int", 0, 40, 0 },
	{ "CodeBlob", "_mutable_data_size", "int", 0, 48, 0 },
	{ "CodeBlob", "_kind", "CodeBlobKind", 0, 56, 0 },
	{ "nmethod", "_method", "Method*", 0, 80, 0 },
	{ "nmethod", "_immutable_data", "address", 0, 96, 0 },
	{ "nmethod", "_entry_bci", "int", 0, 156, 0 },
	{ "nmethod", "_immutable_data_size", "int", 0, 160, 0 },
	{ "nmethod", "_scopes_pcs_offset", "int", 0, 196, 0 },
	{ "nmethod", "_scopes_data_offset", "int", 0, 200, 0 },
	{ "nmethod", "_compile_id", "int", 0, 212, 0 },
	{ "nmethod", "_comp_level", "CompLevel", 0, 216, 0 },
	{ "nmethod", "_state", "volatile signed char", 0, 219, 0 },
};

static const struct ttype FJ_TYPES_17[] = {
	{ "u2", NULL, 0, 1, 1, 2 }, { "u4", NULL, 0, 1, 1, 4 }, { "int", NULL, 0, 1, 0, 4 },
	{ "size_t", NULL, 0, 1, 1, 8 }, { "bool", NULL, 0, 1, 0, 1 },
	{ "ConstMethod", "MetaspaceObj", 0, 0, 0, 48 }, { "ConstantPool", "Metadata", 0, 0, 0, 88 },
	{ "HeapBlock", NULL, 0, 0, 0, 16 }, { "PcDesc", NULL, 0, 0, 0, 16 },
	{ "nmethod", "CompiledMethod", 0, 0, 0, 352 },
};
static const struct ttype FJ_TYPES_25[] = {
	{ "u2", NULL, 0, 1, 1, 2 }, { "u4", NULL, 0, 1, 1, 4 }, { "int", NULL, 0, 1, 0, 4 },
	{ "uint32_t", NULL, 0, 1, 1, 4 }, { "bool", NULL, 0, 1, 0, 1 },
	{ "CompLevel", NULL, 0, 1, 0, 1 }, { "CodeBlobKind", NULL, 0, 1, 0, 1 },
	{ "ConstMethod", "MetaspaceObj", 0, 0, 0, 56 }, { "ConstantPool", "Metadata", 0, 0, 0, 88 },
	{ "HeapBlock", NULL, 0, 0, 0, 8 }, { "PcDesc", NULL, 0, 0, 0, 16 },
	{ "nmethod", "CodeBlob", 0, 0, 0, 224 },
};
static const struct tconst FJ_INTS_17[] = {
	{ "ConstMethod::_has_linenumber_table", 1 }, { "InvocationEntryBci", -1 },
	{ "CompLevel_full_optimization", 4 },
};
static const struct tconst FJ_INTS_25[] = {
	{ "ConstMethodFlags::_misc_has_linenumber_table", 1 }, { "InvocationEntryBci", -1 },
	{ "CompLevel_full_optimization", 4 }, { "CodeBlobKind::Nmethod", 1 },
};

/* fj_new - a JVM image of JDK @jdk (17 or 25) with its VMStructs parsed. */
static struct fj *fj_new(int jdk)
{
	struct tfield fl[64];
	struct mt_vmstructs_syms s;
	struct fj *j = calloc(1, sizeof(*j));
	size_t nf = 0, nc = MT_ARRAY_SIZE(FJ_COMMON);
	const struct tfield *own = jdk == 17 ? FJ_17 : FJ_25;
	size_t nown = jdk == 17 ? MT_ARRAY_SIZE(FJ_17) : MT_ARRAY_SIZE(FJ_25);

	assert_non_null(j);
	assert_non_null(j->f = calloc(1, sizeof(*j->f)));
	j->f->used = 64; /* FAKE_BASE itself stays unused */
	j->jdk = jdk;
	j->excl = jdk >= 20;
	j->heaps_var = fake_alloc(j->f, 8);
	j->major_var = fake_alloc(j->f, 8);
	put32(j->f, j->major_var, (uint32_t)jdk);
	memcpy(fl, FJ_COMMON, sizeof(FJ_COMMON));
	memcpy(fl + nc, own, nown * sizeof(*own));
	nf = nc + nown;
	fl[nf++] = (struct tfield){ "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1, 0, j->heaps_var };
	fl[nf++] = (struct tfield){ "Abstract_VM_Version", "_vm_major_version", "int", 1, 0, j->major_var };
	assert_true(nf <= MT_ARRAY_SIZE(fl));
	if (jdk == 17)
		build(j->f, &s, fl, nf, FJ_TYPES_17, MT_ARRAY_SIZE(FJ_TYPES_17), FJ_INTS_17,
		      MT_ARRAY_SIZE(FJ_INTS_17), NULL, 0);
	else
		build(j->f, &s, fl, nf, FJ_TYPES_25, MT_ARRAY_SIZE(FJ_TYPES_25), FJ_INTS_25,
		      MT_ARRAY_SIZE(FJ_INTS_25), NULL, 0);
	assert_int_equal(vmstructs_parse(&s, fake_read, j->f, &j->vs), 0);
	j->cm_sizeof = jdk == 17 ? 48 : 56;
	j->cp_sizeof = 88;
	j->hb_sizeof = jdk == 17 ? 16 : 8;
	j->nm_sizeof = jdk == 17 ? 352 : 224;
	return j;
}

static void fj_free(struct fj *j)
{
	if (!j)
		return;
	vmstructs_free(j->vs);
	free(j->f);
	free(j);
}

static void put16(struct fake *f, uint64_t addr, uint16_t v)
{
	memcpy(fake_at(f, addr), &v, 2);
}

/* fj_u5 - HotSpot's UNSIGNED5 encoding of @v with @excl excluded bytes,
 * written the way CompressedWriteStream does. Returns the bytes written. */
static size_t fj_u5(uint8_t *out, uint32_t v, unsigned excl)
{
	const uint32_t lo = 256 - 64 - excl;
	size_t n = 0;

	for (int i = 0; i < 4 && v >= lo; i++) {
		out[n++] = (uint8_t)(lo + ((v - lo) & 63) + excl);
		v = (v - lo) >> 6;
	}
	out[n++] = (uint8_t)(v + excl);
	return n;
}

static uint32_t fj_zigzag(int32_t v)
{
	return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}

/* fj_lines - a compressed line number table of @n (bci, line) pairs, as
 * CompressedLineNumberWriteStream writes it, 0-terminated. Returns its size. */
static size_t fj_lines(uint8_t *out, const int (*pairs)[2], size_t n, unsigned excl)
{
	int bci = 0, line = 0;
	size_t p = 0;

	for (size_t i = 0; i < n; i++) {
		int db = pairs[i][0] - bci, dl = pairs[i][1] - line;

		if (!(db & ~0x1f) && !(dl & ~7) && ((db << 3) | dl) != 0xff && (db | dl)) {
			out[p++] = (uint8_t)((db << 3) | dl);
		} else {
			out[p++] = 0xff;
			p += fj_u5(out + p, fj_zigzag(db), excl);
			p += fj_u5(out + p, fj_zigzag(dl), excl);
		}
		bci = pairs[i][0];
		line = pairs[i][1];
	}
	out[p++] = 0;
	return p;
}

/* A counted Symbol {u4 refcount; u2 length; bytes}. */
static uint64_t fj_symbol(struct fj *j, const char *s)
{
	size_t n = strlen(s);
	uint64_t a = fake_alloc(j->f, 8 + n);

	put16(j->f, a + 4, (uint16_t)n);
	memcpy(fake_at(j->f, a + 6), s, n);
	return a;
}

/*
 * fj_method - a Method of class @klass (internal name) named @name with
 * signature @sig, source file @file (NULL: none), @code_size bytes of
 * bytecodes and a line table of @n @pairs (@n 0: none). Returns the Method*;
 * *code (if not NULL) gets where the bytecodes are.
 */
static uint64_t fj_method(struct fj *j, const char *klass, const char *name, const char *sig,
			  const char *file, uint16_t code_size, const int (*pairs)[2], size_t n,
			  uint64_t *code)
{
	uint8_t tab[512];
	size_t tlen = n ? fj_lines(tab, pairs, n, j->excl) : 0;
	uint64_t k = fake_alloc(j->f, 208), cp = fake_alloc(j->f, j->cp_sizeof + 4 * 8);
	uint64_t cm_size = (j->cm_sizeof + code_size + tlen + 7) & ~7ULL;
	uint64_t cm = fake_alloc(j->f, cm_size), m = fake_alloc(j->f, 88);

	put64(j->f, k + 24, fj_symbol(j, klass));
	put64(j->f, cp + 24, k);
	put32(j->f, cp + 60, 4); /* slots 1..3 */
	put64(j->f, cp + j->cp_sizeof + 1 * 8, fj_symbol(j, name));
	put64(j->f, cp + j->cp_sizeof + 2 * 8, fj_symbol(j, sig));
	if (file) {
		put64(j->f, cp + j->cp_sizeof + 3 * 8, fj_symbol(j, file));
		put16(j->f, cp + 54, 3);
	}
	put64(j->f, cm + 8, cp);
	put32(j->f, cm + 24, (uint32_t)(cm_size / 8));
	put16(j->f, cm + (j->jdk == 17 ? 32 : 34), code_size);
	put16(j->f, cm + (j->jdk == 17 ? 34 : 36), 1);
	put16(j->f, cm + (j->jdk == 17 ? 36 : 38), 2);
	if (n) /* has_linenumber_table, next to another flag bit */
		put32(j->f, cm + 28, 1 | 0x40);
	for (uint16_t i = 0; i < code_size; i++) /* some bytecodes */
		((uint8_t *)fake_at(j->f, cm + j->cm_sizeof))[i] = (uint8_t)(0x10 + i % 32);
	memcpy(fake_at(j->f, cm + j->cm_sizeof + code_size), tab, tlen);
	put64(j->f, m + 8, cm);
	if (code)
		*code = cm + j->cm_sizeof;
	return m;
}

#endif
