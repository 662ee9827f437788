// SPDX-License-Identifier: GPL-2.0
/*
 * test_hotspot.c - the table of HotSpot entries (jvm/hotspot.h) and how
 * vmstructs_parse() fills it: the table's own shape (one row per name, a
 * has_ flag where one is due), each kind of entry over a synthetic JVM
 * (fake_target.h), alternative spellings, required entries refused by name,
 * and the tables of real JDK 17 and 25 (the VMStructs images captured for
 * the fuzzer, tests/fuzz/seeds/vmstructs/): what each JDK lacks, and which
 * spelling each one uses.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "jvm/hotspot.h"
#include "jvm/vmstructs.h"
#include "lib/util.h"

#include "fake_target.h"
#include "../fuzz/memimage.h"

static struct fake *new_fake(void)
{
	struct fake *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	f->used = 64; /* address FAKE_BASE itself stays unused */
	return f;
}

/* "Type::field", "Type" (a size) or "name" (a constant) of @n into @buf. */
static const char *name_of(const struct hotspot_name *n, char *buf, size_t len)
{
	snprintf(buf, len, "%s%s%s", n->type ? n->type : "", n->type && n->field ? "::" : "",
		 n->field ? n->field : "");
	return buf;
}

/* Whether the JVM has entry @e (its has_ flag, or a non-zero static/size). */
static bool present(const struct mt_hotspot *hs, const struct hotspot_entry *e)
{
	if (e->has != HOTSPOT_NO_FLAG)
		return *(const bool *)((const char *)hs + e->has);
	return *(const uint64_t *)((const char *)hs + e->at) != 0;
}

static size_t member_size(enum hotspot_kind k)
{
	return k == HOTSPOT_SIZED ? sizeof(struct hotspot_sized) :
	       k == HOTSPOT_INT ? sizeof(int32_t) : sizeof(uint64_t);
}

/* Every row well formed; no HotSpot name in two rows; no member filled twice. */
static void test_table_shape(void **state)
{
	char a[256], b[256];
	size_t required = 0;

	assert_true(hotspot_nentries > 100);
	for (size_t i = 0; i < hotspot_nentries; i++) {
		const struct hotspot_entry *e = &hotspot_table[i];
		bool field = e->kind != HOTSPOT_SIZEOF && e->kind != HOTSPOT_INT &&
			     e->kind != HOTSPOT_LONG;

		for (int k = 0; k < HOTSPOT_NAMES; k++) {
			const struct hotspot_name *n = &e->name[k];

			if (k && !n->type && !n->field)
				continue;
			if (e->kind == HOTSPOT_SIZEOF)
				assert_true(n->type && !n->field);
			else if (!field)
				assert_true(!n->type && n->field);
			else
				assert_true(n->type && n->field);
		}
		assert_true(e->at + member_size(e->kind) <= sizeof(struct mt_hotspot));
		if (e->required) {
			required++;
			assert_int_equal(e->has, HOTSPOT_NO_FLAG);
		} else if (e->kind == HOTSPOT_STATIC || e->kind == HOTSPOT_SIZEOF) {
			assert_int_equal(e->has, HOTSPOT_NO_FLAG); /* 0 says absent */
		} else {
			assert_true(e->has != HOTSPOT_NO_FLAG);
			assert_true(e->has + sizeof(bool) <= sizeof(struct mt_hotspot));
		}
		for (size_t j = 0; j < i; j++) {
			const struct hotspot_entry *o = &hotspot_table[j];

			if (o->at == e->at)
				fail_msg("rows %zu and %zu fill the same member", j, i);
			for (int k = 0; k < HOTSPOT_NAMES; k++)
				for (int m = 0; m < HOTSPOT_NAMES; m++)
					if ((e->name[k].type || e->name[k].field) &&
					    !strcmp(name_of(&e->name[k], a, sizeof(a)),
						    name_of(&o->name[m], b, sizeof(b))))
						fail_msg("%s in rows %zu and %zu", a, j, i);
		}
	}
	assert_int_equal(required, 3); /* class names: Klass::_name, Symbol::_length, _body */
}

/* Each kind over a synthetic JVM, spellings old and new, entries absent. */
static void test_fill_kinds(void **state)
{
	struct fake *f = new_fake();
	uint64_t cc_heaps = fake_alloc(f, 8);
	const struct tfield fl[] = {
		{ "Klass", "_name", "Symbol*", 0, 24, 0 },
		{ "Symbol", "_length", "u2", 0, 4, 0 },
		{ "Symbol", "_body", "", 0, 6, 0 },
		/* an old spelling only (JDK 17's) */
		{ "G1CollectedHeap", "_g1mm", "G1MonitoringSupport*", 0, 0x1c8, 0 },
		/* both spellings: the newest is taken */
		{ "nmethod", "_method", "Method*", 0, 80, 0 },
		{ "CompiledMethod", "_method", "Method*", 0, 112, 0 },
		/* declared by a supertype two levels up */
		{ "Thread", "_osthread", "OSThread*", 0, 0x1f0, 0 },
		/* sized: a listed type, an unlisted one, the old spelling of another */
		{ "nmethod", "_comp_level", "CompLevel", 0, 216, 0 },
		{ "HeapBlock::Header", "_length", "mystery_t", 0, 0, 0 },
		{ "ConstMethod", "_flags", "u2", 0, 28, 0 },
		/* a static */
		{ "CodeCache", "_heaps", "GrowableArray<CodeHeap*>*", 1, 0, cc_heaps },
		/* static where the table wants a field, a field where it wants a static */
		{ "JavaThread", "_anchor", "JavaFrameAnchor", 1, 0, cc_heaps },
		{ "Universe", "_collectedHeap", "CollectedHeap*", 0, 8, 0 },
	};
	const struct ttype ty[] = {
		{ "u2", NULL, 0, 1, 1, 2 },
		{ "CompLevel", NULL, 0, 1, 0, 1 },
		{ "HeapBlock", NULL, 0, 0, 0, 16 },
		{ "JavaThread", "Thread", 0, 0, 0, 1024 },
		{ "Thread", "ThreadShadow", 0, 0, 0, 512 },
		{ "ThreadShadow", NULL, 0, 0, 0, 24 },
		{ "Method", "Metadata", 0, 0, 0, 88 },
	};
	const struct tconst ints[] = {
		{ "InvocationEntryBci", -1 },
		{ "ConstMethod::_has_linenumber_table", 1 },
	};
	const struct tconst longs[] = { { "ObjectMonitor::ANONYMOUS_OWNER", 1 } };
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;
	const struct mt_hotspot *hs;

	build_exact(f, &s, fl, MT_ARRAY_SIZE(fl), ty, MT_ARRAY_SIZE(ty), ints, MT_ARRAY_SIZE(ints),
		    longs, MT_ARRAY_SIZE(longs));
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
	assert_string_equal(vmstructs_missing(), "");
	hs = vmstructs_hotspot(vs);
	/* required */
	assert_int_equal(hs->klass_name, 24);
	assert_int_equal(hs->symbol_body, 6);
	assert_int_equal(hs->symbol_length.off, 4);
	assert_int_equal(hs->symbol_length.size, 2);
	/* spellings */
	assert_true(hs->has_g1collectedheap_monitoring_support);
	assert_int_equal(hs->g1collectedheap_monitoring_support, 0x1c8);
	assert_true(hs->has_nmethod_method);
	assert_int_equal(hs->nmethod_method, 80);
	/* inherited */
	assert_true(hs->has_javathread_osthread);
	assert_int_equal(hs->javathread_osthread, 0x1f0);
	/* sized */
	assert_true(hs->has_nmethod_comp_level);
	assert_int_equal(hs->nmethod_comp_level.off, 216);
	assert_int_equal(hotspot_size(&hs->nmethod_comp_level, 4), 1);
	assert_true(hs->has_heapblock_header_length);
	assert_int_equal(hs->heapblock_header_length.size, 0);
	assert_int_equal(hotspot_size(&hs->heapblock_header_length, 8), 8);
	assert_true(hs->has_constmethod_flags);
	assert_int_equal(hotspot_size(&hs->constmethod_flags, 4), 2);
	/* a static, a size, constants */
	assert_int_equal(hs->codecache_heaps, cc_heaps);
	assert_int_equal(hs->sizeof_heapblock, 16);
	assert_true(hs->has_invocation_entry_bci);
	assert_int_equal(hs->invocation_entry_bci, -1);
	assert_true(hs->has_constmethod_has_linenumber_table);
	assert_int_equal(hs->constmethod_has_linenumber_table, 1);
	assert_true(hs->has_objectmonitor_anonymous_owner);
	assert_int_equal(hs->objectmonitor_anonymous_owner, 1);
	/* wrong kinds read as absent */
	assert_false(hs->has_javathread_anchor);
	assert_int_equal(hs->universe_collectedheap, 0);
	/* absent: flags false, statics and sizes 0 */
	assert_false(hs->has_codeblob_kind);
	assert_false(hs->has_complevel_full_optimization);
	assert_false(hs->has_markword_klass_shift);
	assert_int_equal(hs->sizeof_nmethod, 0);
	assert_int_equal(hs->threadssmrsupport_java_thread_list, 0);
	vmstructs_free(vs);
	free(f);
}

/* Each required entry missing in turn: refused, by name; the next good
 * parse forgets it. */
static void test_required_missing(void **state)
{
	const struct tfield all[] = {
		{ "Klass", "_name", "Symbol*", 0, 24, 0 },
		{ "Symbol", "_length", "u2", 0, 4, 0 },
		{ "Symbol", "_body", "", 0, 6, 0 },
	};
	const char *const want[] = { "Klass::_name", "Symbol::_length", "Symbol::_body" };
	char msg[128];

	for (size_t drop = 0; drop <= MT_ARRAY_SIZE(all); drop++) {
		struct fake *f = new_fake();
		struct tfield fl[MT_ARRAY_SIZE(all)];
		struct mt_vmstructs_syms s;
		struct mt_vmstructs *vs = NULL;
		size_t n = 0;

		for (size_t i = 0; i < MT_ARRAY_SIZE(all); i++)
			if (i != drop)
				fl[n++] = all[i];
		build_exact(f, &s, fl, n, NULL, 0, NULL, 0, NULL, 0);
		if (drop == MT_ARRAY_SIZE(all)) {
			assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
			assert_string_equal(vmstructs_missing(), "");
			assert_string_equal(vmstructs_strerror(-ENOENT), strerror(ENOENT));
			vmstructs_free(vs);
		} else {
			assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), -ENOENT);
			assert_null(vs);
			assert_string_equal(vmstructs_missing(), want[drop]);
			snprintf(msg, sizeof(msg), "no %s in its VMStructs", want[drop]);
			assert_string_equal(vmstructs_strerror(-ENOENT), msg);
			assert_string_equal(vmstructs_strerror(-EPERM), strerror(EPERM));
		}
		free(f);
	}
}

/* build() lays out the required entries a test leaves out: nothing given,
 * a JVM that opens. */
static void test_fixture_adds_required(void **state)
{
	struct fake *f = new_fake();
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs = NULL;

	build(f, &s, NULL, 0, NULL, 0, NULL, 0, NULL, 0);
	assert_int_equal(vmstructs_parse(&s, fake_read, f, &vs), 0);
	assert_int_equal(vmstructs_nfields(vs), 3);
	vmstructs_free(vs);
	free(f);
}

/* The captured image of JDK @jdk (gunzipped into a malloc'd buffer, *@n bytes). */
static uint8_t *load_image(int jdk, size_t *n)
{
	const char *file = __FILE__, *slash = strstr(file, "tests/unit/");
	size_t cap = 64u << 20;
	uint8_t *buf = malloc(cap);
	char path[512];
	gzFile g;
	int got;

	assert_non_null(buf);
	snprintf(path, sizeof(path), "%.*stests/fuzz/seeds/vmstructs/jdk%d.img.gz",
		 slash ? (int)(slash - file) : 0, file, jdk);
	g = gzopen(path, "rb");
	if (!g)
		fail_msg("cannot open %s", path);
	got = gzread(g, buf, (unsigned)cap);
	gzclose(g);
	assert_true(got > 0);
	*n = (size_t)got;
	return buf;
}

/* What each JDK's tables lack of hotspot_table (first spellings), as read
 * from the images (Debian's OpenJDK 17, Temurin 25): 22 and 15 entries. */
static const char *const ABSENT_17[] = {
	"CodeBlob::_kind", "CodeBlobKind::Nmethod", "CodeBlob::_code_offset",
	"CodeBlob::_mutable_data", "CodeBlob::_mutable_data_size", "CodeBlob::_relocation_size",
	"nmethod::_scopes_data_offset", "nmethod::_immutable_data",
	"nmethod::_immutable_data_size", "InstanceKlass::_fieldinfo_stream",
	"FieldInfo::FieldFlags::_ff_initialized", "FieldInfo::FieldFlags::_ff_injected",
	"FieldInfo::FieldFlags::_ff_generic", "FieldInfo::FieldFlags::_ff_stable",
	"FieldInfo::FieldFlags::_ff_contended", "markWord::klass_shift",
	"JavaThread::_monitor_owner_id", "ObjectMonitor::ANONYMOUS_OWNER", "JavaThread::_lock_stack",
	"LockStack::_top", "LockStack::_base[0]", "JavaThread::_vthread", NULL,
};
static const char *const ABSENT_25[] = {
	"CodeBlob::_code_begin", "CodeBlob::_code_end", "CompiledMethod::_scopes_data_begin",
	"nmethod::_dependencies_offset", "nmethod::_metadata_offset", "InstanceKlass::_fields",
	"InstanceKlass::_java_fields_count", "FieldInfo::field_slots",
	"FieldInfo::access_flags_offset", "FieldInfo::name_index_offset",
	"FieldInfo::low_packed_offset", "FieldInfo::high_packed_offset", "FIELDINFO_TAG_SIZE",
	"FIELDINFO_TAG_OFFSET", "JVM_ACC_FIELD_INTERNAL", NULL,
};

/* The spelling @jdk uses of a few renamed entries, checked against the
 * string API (what the module looked up before the table). */
static void check_spellings(const struct mt_vmstructs *vs, const struct mt_hotspot *hs, int jdk)
{
	bool old = jdk == 17;
	uint64_t v;

	assert_int_equal(vmstructs_field_offset(vs, "G1CollectedHeap",
						old ? "_g1mm" : "_monitoring_support", &v), 0);
	assert_int_equal(hs->g1collectedheap_monitoring_support, v);
	assert_int_equal(vmstructs_field_offset(vs, old ? "CompiledMethod" : "nmethod", "_method",
						&v), 0);
	assert_int_equal(hs->nmethod_method, v);
	assert_int_equal(vmstructs_static_addr(vs, "CompressedOops",
					       old ? "_narrow_oop._base" : "_base", &v), 0);
	assert_int_equal(hs->compressedoops_base, v);
	assert_int_equal(vmstructs_field_offset(vs, old ? "HeapRegionManager" :
						"G1HeapRegionManager", "_regions", &v), 0);
	assert_int_equal(hs->g1heapregionmanager_regions, v);
	assert_int_equal(vmstructs_field_offset_inherited(vs, old ? "HeapRegion" : "G1HeapRegion",
							  "_top", &v), 0);
	assert_int_equal(hs->g1heapregion_top, v);
	assert_int_equal(vmstructs_field_offset_inherited(vs, old ? "GenCollectedHeap" :
							  "SerialHeap", "_young_gen", &v), 0);
	assert_int_equal(hs->serialheap_young_gen, v);
	assert_int_equal(vmstructs_field_offset(vs, "ConstMethod", old ? "_flags" : "_flags._flags",
						&v), 0);
	assert_int_equal(hs->constmethod_flags.off, v);
	assert_int_equal(hotspot_size(&hs->constmethod_flags, 0), old ? 2 : 4);
	assert_int_equal(hs->constmethod_has_linenumber_table, 1);
	/* JDK 21+ declares _osthread in Thread */
	assert_int_equal(vmstructs_field_offset(vs, old ? "JavaThread" : "Thread", "_osthread", &v),
			 0);
	assert_int_equal(hs->javathread_osthread, v);
}

static void check_jdk(int jdk, const char *const *absent)
{
	static struct memimage m;
	struct mt_vmstructs *vs = NULL;
	const struct mt_hotspot *hs;
	size_t n, nabsent = 0, want = 0;
	uint8_t *img = load_image(jdk, &n);
	char name[256];

	assert_int_equal(memimage_parse(img, n, &m), 0);
	assert_int_equal(vmstructs_parse(&m.syms, memimage_read, &m, &vs), 0);
	hs = vmstructs_hotspot(vs);
	while (absent[want])
		want++;
	for (size_t i = 0; i < hotspot_nentries; i++) {
		const struct hotspot_entry *e = &hotspot_table[i];
		bool listed = false;

		name_of(&e->name[0], name, sizeof(name));
		for (size_t k = 0; absent[k]; k++)
			listed |= !strcmp(absent[k], name);
		if (present(hs, e) == listed)
			fail_msg("JDK %d: %s is %s", jdk, name, listed ? "there" : "missing");
		nabsent += listed;
	}
	assert_int_equal(nabsent, want);
	check_spellings(vs, hs, jdk);
	vmstructs_free(vs);
	free(img);
}

static void test_jdk17(void **state)
{
	check_jdk(17, ABSENT_17);
}

static void test_jdk25(void **state)
{
	check_jdk(25, ABSENT_25);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_table_shape),
		cmocka_unit_test(test_fill_kinds),
		cmocka_unit_test(test_required_missing),
		cmocka_unit_test(test_fixture_adds_required),
		cmocka_unit_test(test_jdk17),
		cmocka_unit_test(test_jdk25),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
