// SPDX-License-Identifier: GPL-2.0
/*
 * walkfields.c - the class and field tables of a heap walk (walkfields.h),
 * built with the JVM running, before the pause.
 *
 * JVMTI field indices (the spec's FollowReferences "index" for FIELD
 * references and primitive fields): for an instance of class C, the static
 * fields of every superinterface of C and of its superclasses come first
 * (each interface once), then the fields (static and instance) of each class
 * from java.lang.Object down to C, each class's in GetClassFields order.
 * A primitive value whose type disagrees with the table is counted in
 * mt_ap_heap_done.mismatches, never sent under a wrong name.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "walkfields.h"
#include "walknames.h"
#include "walkstate.h"

#define ACC_STATIC    0x0008
#define ACC_INTERFACE 0x0200

/*
 * A field's byte offset from its jfieldID, as HotSpot makes them
 * (jfieldIDWorkaround, the same on JDK 17 and 25): an instance field's id
 * has bit 1 set and its offset from bit 2 up (with -Xcheck:jni, bit 0 set
 * and the offset in 7 bits); a static field's id is a JNIid*, whose offset
 * in the class object follows its holder and next pointers. 0 when the id
 * is none of these. The copy's marker checks every offset against the
 * class's oop maps and its class object's statics before it trusts one.
 */
static uint32_t field_offset(jfieldID id, bool is_static)
{
	uintptr_t v = (uintptr_t)id;

	if (!is_static) {
		if (!(v & 2))
			return 0;
		return (uint32_t)((v & 1) ? (v >> 2) & 0x7f : (v >> 2) & 0xffffffu);
	}
	if (!v || (v & 7))
		return 0;
	return (uint32_t)((const int32_t *)(v + 16))[0];
}

static size_t cls_hash(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k;
}

/* The class table index of class id cid, or UINT32_MAX. */
static uint32_t cls_index(uint64_t cid)
{
	size_t i;

	if (!cid || !hw.clskeys)
		return UINT32_MAX;
	for (i = cls_hash(cid) & hw.clsmask; hw.clskeys[i]; i = (i + 1) & hw.clsmask)
		if (hw.clskeys[i] == cid)
			return hw.clsvals[i];
	return UINT32_MAX;
}

static void cls_put(uint64_t cid, uint32_t idx)
{
	size_t i;

	for (i = cls_hash(cid) & hw.clsmask; hw.clskeys[i]; i = (i + 1) & hw.clsmask)
		if (hw.clskeys[i] == cid)
			return;
	hw.clskeys[i] = cid;
	hw.clsvals[i] = idx;
}

int walkfields_proj_type(uint64_t cid, jint idx)
{
	const struct walk_class *c;
	uint32_t ci = cls_index(cid);

	if (ci == UINT32_MAX)
		return 0;
	c = &hw.cls[ci];
	if (!c->any_proj || idx < 0 || idx >= c->nproj)
		return 0;
	return c->proj[idx];
}

static bool name_projected(const char *name, const char *names, uint32_t n, const char *end)
{
	const char *p = names;

	for (uint32_t i = 0; i < n && p < end; i++) {
		if (!strcmp(p, name))
			return true;
		p += strlen(p) + 1;
	}
	return false;
}

/* Count of the static fields of the superinterfaces of k (recursively);
 * iseen[] de-duplicates interfaces by class id. */
static int iface_fields(JNIEnv *jni, jclass k, uint8_t *iseen)
{
	jint n = 0, total = 0;
	jclass *ifs = NULL;

	if ((*hw.env)->GetImplementedInterfaces(hw.env, k, &n, &ifs))
		return 0;
	for (jint i = 0; i < n; i++) {
		uint32_t ci = cls_index(walknames_tag(ifs[i]));
		jint nf = 0;
		jfieldID *fs = NULL;

		if (ci != UINT32_MAX && !iseen[ci]) {
			iseen[ci] = 1;
			if (!(*hw.env)->GetClassFields(hw.env, ifs[i], &nf, &fs)) {
				total += nf;
				(*hw.env)->Deallocate(hw.env, (unsigned char *)fs);
			}
			total += iface_fields(jni, ifs[i], iseen);
		}
		(*jni)->DeleteLocalRef(jni, ifs[i]);
	}
	(*hw.env)->Deallocate(hw.env, (unsigned char *)ifs);
	return total;
}

/* Append a static reference field to c->statics (names of STATIC_FIELD references). */
static void add_static(struct walk_class *c, uint32_t *cap, const char *name, char type,
		       int32_t idx, uint32_t off)
{
	struct walk_field *f;

	if (c->nstatics == *cap) {
		uint32_t nc = *cap ? *cap * 2 : 4;
		struct walk_field *nfs = realloc(c->statics, nc * sizeof(*nfs));

		if (!nfs)
			return;
		c->statics = nfs;
		*cap = nc;
	}
	f = &c->statics[c->nstatics];
	memset(f, 0, sizeof(*f));
	f->name = strdup(name);
	if (!f->name)
		return;
	f->index = idx;
	f->off = off;
	f->type = type;
	c->nstatics++;
}

/* Append class k's own fields to c, from index *next; static ones are only
 * counted, or, with @scap (k is c's own class), their reference ones kept in
 * c->statics. */
static int add_own_fields(jclass k, struct walk_class *c, int32_t *next, uint32_t *cap,
			  uint32_t *scap, const char *names, uint32_t nnames, const char *end)
{
	jint nf = 0;
	jfieldID *fs = NULL;

	if ((*hw.env)->GetClassFields(hw.env, k, &nf, &fs))
		return 0;
	for (jint i = 0; i < nf; i++) {
		char *name = NULL, *sig = NULL;
		jint mods = 0;
		int32_t idx = (*next)++;

		if ((*hw.env)->GetFieldModifiers(hw.env, k, fs[i], &mods))
			continue;
		if ((mods & ACC_STATIC) && !scap)
			continue;
		if ((*hw.env)->GetFieldName(hw.env, k, fs[i], &name, &sig, NULL))
			continue;
		if (mods & ACC_STATIC) {
			if (sig[0] == 'L' || sig[0] == '[')
				add_static(c, scap, name, sig[0], idx,
					   hw.marking ? field_offset(fs[i], true) : 0);
			goto next;
		}
		if (c->nfields == *cap) {
			uint32_t nc = *cap ? *cap * 2 : 8;
			struct walk_field *nfs = realloc(c->fields, nc * sizeof(*nfs));

			if (!nfs)
				goto next;
			c->fields = nfs;
			*cap = nc;
		}
		{
			struct walk_field *f = &c->fields[c->nfields];

			f->name = strdup(name);
			if (!f->name)
				goto next;
			f->index = idx;
			f->off = field_offset(fs[i], false);
			f->type = sig[0];
			f->string = !strcmp(sig, "Ljava/lang/String;");
			f->projected = (hw.flags & MT_AP_HEAP_ALLFIELDS) ||
				       name_projected(name, names, nnames, end);
			c->nfields++;
		}
next:
		(*hw.env)->Deallocate(hw.env, (unsigned char *)name);
		(*hw.env)->Deallocate(hw.env, (unsigned char *)sig);
	}
	(*hw.env)->Deallocate(hw.env, (unsigned char *)fs);
	return 0;
}

/* Field table of class k into c: superclasses first, JVMTI indices. */
static void build_fields(JNIEnv *jni, jclass k, struct walk_class *c, uint8_t *iseen,
			 const char *names, uint32_t nnames, const char *end)
{
	jclass chain[256];
	int depth = 0, base = 0;
	int32_t next;
	uint32_t cap = 0, scap = 0;
	jint st = 0;

	if ((*hw.env)->GetClassStatus(hw.env, k, &st) || (st & (JVMTI_CLASS_STATUS_ARRAY |
								   JVMTI_CLASS_STATUS_PRIMITIVE)))
		return;
	chain[depth++] = (*jni)->NewLocalRef(jni, k);
	while (depth < (int)MT_ARRAY_SIZE(chain)) {
		jclass s = (*jni)->GetSuperclass(jni, chain[depth - 1]);

		if (!s)
			break;
		chain[depth++] = s;
	}
	memset(iseen, 0, hw.ncls);
	for (int i = 0; i < depth; i++)
		base += iface_fields(jni, chain[i], iseen);
	next = base;
	for (int i = depth - 1; i >= 0; i--)
		add_own_fields(chain[i], c, &next, &cap, i ? NULL : &scap, names, nnames, end);
	for (int i = 0; i < depth; i++)
		(*jni)->DeleteLocalRef(jni, chain[i]);
	for (uint32_t i = 0; i < c->nfields; i++) {
		if (!c->fields[i].projected)
			continue;
		c->any_proj = true;
		if (c->fields[i].index >= c->nproj)
			c->nproj = c->fields[i].index + 1;
	}
	if (c->any_proj) {
		c->proj = calloc((size_t)c->nproj, 1);
		if (!c->proj) {
			c->any_proj = false;
			return;
		}
		for (uint32_t i = 0; i < c->nfields; i++)
			if (c->fields[i].projected)
				c->proj[c->fields[i].index] = c->fields[i].type;
	}
}

/*
 * The direct superinterfaces of a class JVMTI will not list: it lists those
 * of prepared classes only, and a class loaded but not linked yet (no
 * instance, no linked subclass) can still have arrays with instances, whose
 * `is` needs them. Class.getInterfaces() reads what loading recorded,
 * without linking (the JVM's own answer): called through JNI, here, with
 * the JVM running. Returns the count into c->ifaces, or -1.
 */
static int interfaces_by_jni(JNIEnv *jni, jclass k, struct walk_class *c)
{
	static jmethodID get_ifaces;
	jobjectArray a;
	jsize n;

	if (!get_ifaces) {
		jclass cc = (*jni)->FindClass(jni, "java/lang/Class");

		if (cc) {
			get_ifaces = (*jni)->GetMethodID(jni, cc, "getInterfaces",
							 "()[Ljava/lang/Class;");
			(*jni)->DeleteLocalRef(jni, cc);
		}
		if (!get_ifaces) {
			(*jni)->ExceptionClear(jni);
			return -1;
		}
	}
	a = (*jni)->CallObjectMethod(jni, k, get_ifaces);
	if ((*jni)->ExceptionCheck(jni) || !a) {
		(*jni)->ExceptionClear(jni);
		return -1;
	}
	n = (*jni)->GetArrayLength(jni, a);
	c->ifaces = calloc((size_t)n + 1, sizeof(*c->ifaces));
	for (jsize i = 0; i < n && c->ifaces; i++) {
		jobject f = (*jni)->GetObjectArrayElement(jni, a, i);
		uint64_t id = f ? walknames_tag(f) : 0;

		if (id)
			c->ifaces[c->nifaces++] = id;
		if (f)
			(*jni)->DeleteLocalRef(jni, f);
	}
	(*jni)->DeleteLocalRef(jni, a);
	return c->ifaces && c->nifaces == (uint32_t)n ? (int)n : -1;
}

/* Whether class k is an interface, and its direct superinterfaces' ids (for
 * `x is Interface` in memtrace): c->ext if known (c->noifaces: all but the
 * interfaces). */
static void class_kind(JNIEnv *jni, jclass k, struct walk_class *c)
{
	jint mods = 0, n = 0;
	jclass *ifs = NULL;

	if ((*hw.env)->GetClassModifiers(hw.env, k, &mods))
		return;
	c->iface = mods & ACC_INTERFACE;
	c->ext = true;
	if ((*hw.env)->GetImplementedInterfaces(hw.env, k, &n, &ifs)) {
		c->noifaces = interfaces_by_jni(jni, k, c) < 0;
		return;
	}
	c->ifaces = calloc((size_t)n + 1, sizeof(*c->ifaces));
	for (jint i = 0; i < n; i++) {
		if (c->ifaces) {
			uint64_t id = walknames_tag(ifs[i]);

			if (id)
				c->ifaces[c->nifaces++] = id;
		}
		(*jni)->DeleteLocalRef(jni, ifs[i]);
	}
	(*hw.env)->Deallocate(hw.env, (unsigned char *)ifs);
	c->noifaces = !c->ifaces || c->nifaces != (uint32_t)n;
}

int walkfields_prepare(JNIEnv *jni, const char *names, uint32_t nnames, const char *end,
		       char *why, size_t n)
{
	jint nk = 0;
	jclass *ks = NULL;
	uint8_t *iseen = NULL;
	int err = 0;

	if ((*hw.env)->GetLoadedClasses(hw.env, &nk, &ks)) {
		snprintf(why, n, "JVMTI GetLoadedClasses failed");
		return -EIO;
	}
	hw.cls = calloc((size_t)nk + 1, sizeof(*hw.cls));
	iseen = calloc((size_t)nk + 1, 1);
	if (!hw.cls || !iseen) {
		snprintf(why, n, "the agent is out of memory for %d classes", (int)nk);
		err = -ENOMEM;
		goto out;
	}
	hw.ncls = (uint32_t)nk;
	hw.clsmask = 16;
	while (hw.clsmask < 2 * (size_t)nk + 16)
		hw.clsmask *= 2;
	hw.clskeys = calloc(hw.clsmask, sizeof(*hw.clskeys));
	hw.clsvals = calloc(hw.clsmask, sizeof(*hw.clsvals));
	hw.clsmask--;
	if (!hw.clskeys || !hw.clsvals) {
		snprintf(why, n, "the agent is out of memory for %d classes", (int)nk);
		err = -ENOMEM;
		goto out;
	}
	for (jint i = 0; i < nk; i++) { /* a class keeps the id an earlier walk gave it */
		hw.cls[i].id = walknames_tag(ks[i]);
		if (hw.cls[i].id)
			cls_put(hw.cls[i].id, (uint32_t)i);
	}
	for (jint i = 0; i < nk; i++) {
		struct walk_class *c = &hw.cls[i];
		jclass s = (*jni)->GetSuperclass(jni, ks[i]);
		jobject l = NULL;
		char *sig = NULL;

		c->super = walknames_tag(s);
		if (s)
			(*jni)->DeleteLocalRef(jni, s);
		if (!(*hw.env)->GetClassLoader(hw.env, ks[i], &l) && l) {
			c->loader = walknames_tag(l);
			(*jni)->DeleteLocalRef(jni, l);
		}
		if (!(*hw.env)->GetClassSignature(hw.env, ks[i], &sig, NULL)) {
			c->sig = strdup(sig);
			(*hw.env)->Deallocate(hw.env, (unsigned char *)sig);
		}
		class_kind(jni, ks[i], c);
		build_fields(jni, ks[i], c, iseen, names, nnames, end);
	}
out:
	for (jint i = 0; i < nk; i++)
		(*jni)->DeleteLocalRef(jni, ks[i]);
	(*hw.env)->Deallocate(hw.env, (unsigned char *)ks);
	free(iseen);
	return err;
}

int walkfields_projidx(char *why, size_t n)
{
	int32_t max = 0;

	for (uint32_t i = 0; i < hw.ncls; i++)
		if (hw.cls[i].any_proj && hw.cls[i].nproj > max)
			max = hw.cls[i].nproj;
	if (!max)
		return 0;
	hw.projidx = calloc((size_t)max, 1);
	if (!hw.projidx) {
		snprintf(why, n, "the agent is out of memory");
		return -ENOMEM;
	}
	hw.nprojidx = max;
	for (uint32_t i = 0; i < hw.ncls; i++)
		for (int32_t j = 0; hw.cls[i].any_proj && j < hw.cls[i].nproj; j++)
			if (hw.cls[i].proj[j])
				hw.projidx[j] = 1;
	return 0;
}

void walkfields_strings_wanted(void)
{
	bool any = false;

	if (!(hw.flags & MT_AP_HEAP_STRINGS) || (hw.flags & MT_AP_HEAP_ALLFIELDS))
		return;
	for (uint32_t i = 0; i < hw.ncls && !any; i++)
		for (uint32_t j = 0; j < hw.cls[i].nfields && !any; j++)
			any = hw.cls[i].fields[j].projected && hw.cls[i].fields[j].string;
	if (!any)
		hw.flags &= ~MT_AP_HEAP_STRINGS;
}
