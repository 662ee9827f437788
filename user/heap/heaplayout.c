// SPDX-License-Identifier: GPL-2.0
/* heaplayout.c - the frozen copy's marker's layout from VMStructs and libjvm's
 * .symtab (see heaplayout.h). The stack chunk class is the agent's to find
 * (it knows the loaded classes by name). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "heap/heaplayout.h"
#include "jvm/jobject.h"
#include "jvm/jvmflags.h"
#include "jvm/vmstructs.h"

/* The value of a static int libjvm computed at start: its VMStructs entry
 * (@type, @field) if it has one, else its .symtab symbol @sym. */
static int static_int(const struct mt_vmstructs *vs, const char *type, const char *field,
		      const char *sym, int32_t *out)
{
	uint64_t addr;
	int err = -ENOENT;

	if (type)
		err = vmstructs_static_addr(vs, type, field, &addr);
	if (err && sym)
		err = vmstructs_symbol(vs, sym, &addr);
	if (err)
		return err;
	return vmstructs_read(vs, addr, out, sizeof(*out));
}

/* A field offset that must fit the layout's 32 bits. */
static int off32(const struct mt_vmstructs *vs, const char *type, const char *field, uint32_t *out)
{
	uint64_t v;
	int err = vmstructs_field_offset(vs, type, field, &v);

	if (!err && v > UINT32_MAX)
		err = -ERANGE;
	if (!err)
		*out = (uint32_t)v;
	return err;
}

int heaplayout_fill(const struct mt_proc *p, const struct mt_vmstructs *vs,
		    struct mt_ap_heap_layout *L, char *why, size_t n)
{
	static const struct {
		const char *type, *field;
		size_t at; /* offsetof in struct mt_ap_heap_layout */
	} offs[] = {
		{ "Klass", "_layout_helper", offsetof(struct mt_ap_heap_layout, k_layout_helper) },
		{ "Klass", "_java_mirror", offsetof(struct mt_ap_heap_layout, k_java_mirror) },
		{ "Klass", "_class_loader_data", offsetof(struct mt_ap_heap_layout, k_cld) },
		{ "Klass", "_next_link", offsetof(struct mt_ap_heap_layout, k_next_link) },
		{ "Klass", "_super", offsetof(struct mt_ap_heap_layout, k_super) },
		{ "Klass", "_vtable_len", offsetof(struct mt_ap_heap_layout, k_vtable_len) },
		{ "InstanceKlass", "_itable_len", offsetof(struct mt_ap_heap_layout, ik_itable_len) },
		{ "InstanceKlass", "_nonstatic_oop_map_size",
		  offsetof(struct mt_ap_heap_layout, ik_oop_map_size) },
		{ "InstanceKlass", "_reference_type",
		  offsetof(struct mt_ap_heap_layout, ik_reference_type) },
		{ "InstanceKlass", "_constants", offsetof(struct mt_ap_heap_layout, ik_constants) },
		{ "InstanceKlass", "_local_interfaces",
		  offsetof(struct mt_ap_heap_layout, ik_local_interfaces) },
		{ "ConstantPool", "_cache", offsetof(struct mt_ap_heap_layout, cp_cache) },
		{ "ConstantPoolCache", "_resolved_references",
		  offsetof(struct mt_ap_heap_layout, cpc_resolved_refs) },
		{ "ClassLoaderData", "_class_loader", offsetof(struct mt_ap_heap_layout, cld_loader) },
		{ "ClassLoaderData", "_klasses", offsetof(struct mt_ap_heap_layout, cld_klasses) },
		{ "Array<Klass*>", "_data", offsetof(struct mt_ap_heap_layout, array_data) },
		{ "Array<Klass*>", "_length", offsetof(struct mt_ap_heap_layout, array_length) },
		{ "ThreadsList", "_length", offsetof(struct mt_ap_heap_layout, tl_length) },
		{ "ThreadsList", "_threads", offsetof(struct mt_ap_heap_layout, tl_threads) },
		{ "JavaThread", "_threadObj", offsetof(struct mt_ap_heap_layout, jt_threadobj) },
	};
	static const struct {
		const char *type, *field, *sym;
		size_t at;
	} ints[] = {
		{ "java_lang_Class", "_klass_offset", "_ZN15java_lang_Class13_klass_offsetE",
		  offsetof(struct mt_ap_heap_layout, m_klass) },
		{ "java_lang_Class", "_oop_size_offset", "_ZN15java_lang_Class16_oop_size_offsetE",
		  offsetof(struct mt_ap_heap_layout, m_oop_size) },
		{ "java_lang_Class", "_static_oop_field_count_offset",
		  "_ZN15java_lang_Class30_static_oop_field_count_offsetE",
		  offsetof(struct mt_ap_heap_layout, m_static_count) },
		{ NULL, NULL, "_ZN19InstanceMirrorKlass24_offset_of_static_fieldsE",
		  offsetof(struct mt_ap_heap_layout, m_statics) },
		{ NULL, NULL, "_ZN15java_lang_Class20_class_loader_offsetE",
		  offsetof(struct mt_ap_heap_layout, m_loader) },
		{ NULL, NULL, "_ZN15java_lang_Class25_protection_domain_offsetE",
		  offsetof(struct mt_ap_heap_layout, m_pd) },
		{ NULL, NULL, "_ZN15java_lang_Class15_signers_offsetE",
		  offsetof(struct mt_ap_heap_layout, m_signers) },
		{ NULL, NULL, "_ZN23java_lang_ref_Reference16_referent_offsetE",
		  offsetof(struct mt_ap_heap_layout, ref_referent) },
		{ NULL, NULL, "_ZN23java_lang_ref_Reference18_discovered_offsetE",
		  offsetof(struct mt_ap_heap_layout, ref_discovered) },
		{ NULL, NULL, "_ZN21java_lang_ClassLoader19_loader_data_offsetE",
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
		err = off32(vs, offs[i].type, offs[i].field, (uint32_t *)((char *)L + offs[i].at));
		if (err) {
			snprintf(why, n, "VMStructs has no %s::%s", offs[i].type, offs[i].field);
			return -ENOENT;
		}
	}
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++) {
		err = static_int(vs, ints[i].type, ints[i].field, ints[i].sym,
				 (int32_t *)((char *)L + ints[i].at));
		if (err || *(int32_t *)((char *)L + ints[i].at) <= 0) {
			snprintf(why, n, "libjvm has no usable %s", ints[i].sym);
			return -ENOENT;
		}
	}
	if (vmstructs_type_size(vs, "InstanceKlass", &ik_size) || ik_size > UINT32_MAX) {
		snprintf(why, n, "VMStructs has no size of InstanceKlass");
		return -ENOENT;
	}
	L->ik_size = (uint32_t)((ik_size + 7) & ~7ull);
	if (vmstructs_static_addr(vs, "ThreadsSMRSupport", "_java_thread_list", &L->threads_list)) {
		snprintf(why, n, "VMStructs has no ThreadsSMRSupport::_java_thread_list");
		return -ENOENT;
	}
	off32(vs, "JavaThread", "_vthread", &L->jt_vthread); /* JDK 19+ */
	if (jobject_vm_class(vs, "Class", &L->class_klass) ||
	    jobject_vm_class(vs, "ClassLoader", &L->loader_klass)) {
		snprintf(why, n, "VMStructs has no vmClasses::Class_klass or ClassLoader_klass");
		return -ENOENT;
	}
	return 0;
}
