// SPDX-License-Identifier: GPL-2.0
/* heaplayout.c - the frozen copy's marker's layout from VMStructs and libjvm's
 * .symtab (see heaplayout.h). The stack chunk class is the agent's to find
 * (it knows the loaded classes by name). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "heap/heaplayout.h"
#include "jvm/hotspot.h"
#include "jvm/jobject.h"
#include "jvm/jvmflags.h"
#include "jvm/vmstructs.h"

/* The value of a static int libjvm computed at start: at @addr, its
 * VMStructs entry, if it has one (not 0), else at its .symtab symbol @sym. */
static int static_int(const struct mt_vmstructs *vs, uint64_t addr, const char *sym,
		      int32_t *out)
{
	int err = addr ? 0 : -ENOENT;

	if (err && sym)
		err = vmstructs_symbol(vs, sym, &addr);
	if (err)
		return err;
	return vmstructs_read(vs, addr, out, sizeof(*out));
}

/* A field offset (@has: the JVM has the field) that must fit the layout's 32 bits. */
static int off32(bool has, uint64_t v, uint32_t *out)
{
	if (!has)
		return -ENOENT;
	if (v > UINT32_MAX)
		return -ERANGE;
	*out = (uint32_t)v;
	return 0;
}

/* Virtual threads' stack chunks (JDK 19+): what the copy needs to read their
 * frames' references through HotSpot (see struct mt_ap_heap_layout). All
 * or nothing: without them a chunk stops the copy's mark, as before. */
static void stack_chunks(const struct mt_vmstructs *vs, struct mt_ap_heap_layout *L)
{
	const char *iterate = (L->flags & MT_AP_LAYOUT_COOPS)
		? "_ZN21OopOopIterateDispatchI17OopIterateClosureE5Table15oop_oop_iterateI"
		  "23InstanceStackChunkKlass9narrowOopEEvPS0_P7oopDescP5Klass"
		: "_ZN21OopOopIterateDispatchI17OopIterateClosureE5Table15oop_oop_iterateI"
		  "23InstanceStackChunkKlassP7oopDescEEvPS0_S6_P5Klass";
	uint64_t fn = 0;
	int32_t size = 0, flags = 0;

	if (vmstructs_symbol(vs, iterate, &fn) || !fn ||
	    static_int(vs, 0, "_ZN26jdk_internal_vm_StackChunk12_size_offsetE", &size) ||
	    static_int(vs, 0, "_ZN26jdk_internal_vm_StackChunk13_flags_offsetE", &flags) ||
	    size <= 0 || flags <= 0)
		return;
	L->sc_iterate = fn;
	L->sc_size = size;
	L->sc_flags = flags;
}

int heaplayout_fill(const struct mt_proc *p, const struct mt_vmstructs *vs,
		    struct mt_ap_heap_layout *L, char *why, size_t n)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	const struct {
		bool has;
		uint64_t val;
		const char *name; /* for the message */
		size_t at;        /* offsetof in struct mt_ap_heap_layout */
	} offs[] = {
#define OFF(m, name, f) { hs->has_##m, hs->m, name, offsetof(struct mt_ap_heap_layout, f) }
		OFF(klass_layout_helper, "Klass::_layout_helper", k_layout_helper),
		OFF(klass_java_mirror, "Klass::_java_mirror", k_java_mirror),
		OFF(klass_class_loader_data, "Klass::_class_loader_data", k_cld),
		OFF(klass_next_link, "Klass::_next_link", k_next_link),
		OFF(klass_super, "Klass::_super", k_super),
		OFF(klass_vtable_len, "Klass::_vtable_len", k_vtable_len),
		OFF(instanceklass_itable_len, "InstanceKlass::_itable_len", ik_itable_len),
		OFF(instanceklass_nonstatic_oop_map_size, "InstanceKlass::_nonstatic_oop_map_size",
		    ik_oop_map_size),
		OFF(instanceklass_reference_type, "InstanceKlass::_reference_type",
		    ik_reference_type),
		OFF(instanceklass_constants, "InstanceKlass::_constants", ik_constants),
		OFF(instanceklass_local_interfaces, "InstanceKlass::_local_interfaces",
		    ik_local_interfaces),
		OFF(constantpool_cache, "ConstantPool::_cache", cp_cache),
		OFF(constantpoolcache_resolved_references, "ConstantPoolCache::_resolved_references",
		    cpc_resolved_refs),
		OFF(classloaderdata_class_loader, "ClassLoaderData::_class_loader", cld_loader),
		OFF(classloaderdata_klasses, "ClassLoaderData::_klasses", cld_klasses),
		OFF(array_klass_data, "Array<Klass*>::_data", array_data),
		OFF(array_klass_length, "Array<Klass*>::_length", array_length),
		OFF(threadslist_length, "ThreadsList::_length", tl_length),
		OFF(threadslist_threads, "ThreadsList::_threads", tl_threads),
		OFF(javathread_threadobj, "JavaThread::_threadObj", jt_threadobj),
#undef OFF
	};
	const struct {
		uint64_t addr; /* the VMStructs static, 0: none */
		const char *sym;
		size_t at;
	} ints[] = {
		{ hs->java_lang_class_klass_offset, "_ZN15java_lang_Class13_klass_offsetE",
		  offsetof(struct mt_ap_heap_layout, m_klass) },
		{ hs->java_lang_class_oop_size_offset, "_ZN15java_lang_Class16_oop_size_offsetE",
		  offsetof(struct mt_ap_heap_layout, m_oop_size) },
		{ hs->java_lang_class_static_oop_field_count_offset,
		  "_ZN15java_lang_Class30_static_oop_field_count_offsetE",
		  offsetof(struct mt_ap_heap_layout, m_static_count) },
		{ 0, "_ZN19InstanceMirrorKlass24_offset_of_static_fieldsE",
		  offsetof(struct mt_ap_heap_layout, m_statics) },
		{ 0, "_ZN15java_lang_Class20_class_loader_offsetE",
		  offsetof(struct mt_ap_heap_layout, m_loader) },
		{ 0, "_ZN15java_lang_Class25_protection_domain_offsetE",
		  offsetof(struct mt_ap_heap_layout, m_pd) },
		{ 0, "_ZN15java_lang_Class15_signers_offsetE",
		  offsetof(struct mt_ap_heap_layout, m_signers) },
		{ 0, "_ZN23java_lang_ref_Reference16_referent_offsetE",
		  offsetof(struct mt_ap_heap_layout, ref_referent) },
		{ 0, "_ZN23java_lang_ref_Reference18_discovered_offsetE",
		  offsetof(struct mt_ap_heap_layout, ref_discovered) },
		{ 0, "_ZN21java_lang_ClassLoader19_loader_data_offsetE",
		  offsetof(struct mt_ap_heap_layout, loader_data) },
	};
	struct jobject_layout jl;
	uint64_t ik_size;
	int64_t align = 8;
	int err;

	memset(L, 0, sizeof(*L));
	L->size = sizeof(*L);
	if (!vmstructs_has_symtab(vs)) {
		snprintf(why, n, "libjvm has no .symtab (the Klass vtables and java.lang.Class's "
			 "field offsets are read from it)");
		return -ENOTSUP;
	}
	err = jobject_layout(p, vs, &jl);
	if (err) {
		snprintf(why, n, "the object layout cannot be read from VMStructs (%s)",
			 strerror(-err));
		return err;
	}
	if (jl.compact) {
		snprintf(why, n, "compact object headers (-XX:+UseCompactObjectHeaders)");
		return -ENOTSUP;
	}
	L->flags = (jl.coops ? MT_AP_LAYOUT_COOPS : 0) | (jl.ccp ? MT_AP_LAYOUT_CKLASS : 0);
	L->oop_base = jl.oop_base;
	L->oop_shift = (uint32_t)jl.oop_shift;
	L->klass_base = jl.klass_base;
	L->klass_shift = (uint32_t)jl.klass_shift;
	L->klass_off = (uint32_t)jl.klass_off;
	L->length_off = (uint32_t)jl.arr_len_off;
	L->str_value = (int32_t)jl.str_value;
	L->str_coder = (int32_t)jl.str_coder;
	L->string_klass = jl.string_ik;
	if (!jvmflags_get_intx(p, vs, "ObjectAlignmentInBytes", &align) &&
	    (align < 8 || align > 256 || (align & (align - 1)))) {
		snprintf(why, n, "ObjectAlignmentInBytes is %lld", (long long)align);
		return -ENOTSUP;
	}
	L->obj_align = (uint32_t)align;
	for (size_t i = 0; i < sizeof(offs) / sizeof(offs[0]); i++) {
		err = off32(offs[i].has, offs[i].val, (uint32_t *)((char *)L + offs[i].at));
		if (err) {
			snprintf(why, n, "VMStructs has no %s", offs[i].name);
			return -ENOENT;
		}
	}
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		err = static_int(vs, ints[i].addr, ints[i].sym, (int32_t *)((char *)L + ints[i].at));
		if (err || *(int32_t *)((char *)L + ints[i].at) <= 0) {
			snprintf(why, n, "libjvm has no usable %s", ints[i].sym);
			return -ENOENT;
		}
	}
	ik_size = hs->sizeof_instanceklass;
	if (!ik_size || ik_size > UINT32_MAX) {
		snprintf(why, n, "VMStructs has no size of InstanceKlass");
		return -ENOENT;
	}
	L->ik_size = (uint32_t)((ik_size + 7) & ~7ull);
	L->threads_list = hs->threadssmrsupport_java_thread_list;
	if (!L->threads_list) {
		snprintf(why, n, "VMStructs has no ThreadsSMRSupport::_java_thread_list");
		return -ENOENT;
	}
	off32(hs->has_javathread_vthread, hs->javathread_vthread, &L->jt_vthread); /* JDK 19+ */
	stack_chunks(vs, L);
	if (jobject_vm_class(vs, hs->vmclasses_class, &L->class_klass) ||
	    jobject_vm_class(vs, hs->vmclasses_classloader, &L->loader_klass)) {
		snprintf(why, n, "VMStructs has no vmClasses::Class_klass or ClassLoader_klass");
		return -ENOENT;
	}
	return 0;
}
