/*
 * hotspot.h - every HotSpot field, type size and constant memtrace reads, by
 * name: struct mt_hotspot, and hotspot_table, the one table that says where
 * each of its members comes from in the JVM's VMStructs (type, field, the
 * other spellings a JDK used, the kind of entry, required or not).
 *
 * vmstructs_open() and vmstructs_parse() fill the struct once, from the
 * tables they read, and fail when a required entry is missing (naming it:
 * vmstructs_missing()); every other module reads members
 * (vmstructs_hotspot(vs)->javathread_anchor), never names. An optional entry
 * the JVM lacks leaves its has_ flag false; optional statics and type sizes
 * read 0 instead (no static lives at 0, no type has size 0). A module that
 * needs an optional entry in one of its modes refuses in that mode (-ENOENT),
 * as it says in its own header.
 */
#ifndef MEMTRACE_HOTSPOT_H
#define MEMTRACE_HOTSPOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A field's offset and the size of its type as the type table gives it
 * (0: the table does not list the type; use hotspot_size()). */
struct hotspot_sized {
	uint64_t off;
	uint64_t size;
};

/* hotspot_size - @f's size when the type table gives one of 1..8 bytes,
 * else @dflt (the size the module expects of that field). */
static inline unsigned hotspot_size(const struct hotspot_sized *f, unsigned dflt)
{
	return f->size && f->size <= 8 ? (unsigned)f->size : dflt;
}

/* The named entries. Offsets are uint64_t, statics are the static's address
 * in the target, sizes are sizeof(Type), constants are int32_t (int) or
 * uint64_t (long). Grouped by what reads them. */
struct mt_hotspot {
	/* class names (klassname): required */
	uint64_t klass_name;                    /* Klass::_name (Symbol*) */
	uint64_t symbol_body;                   /* Symbol::_body */
	struct hotspot_sized symbol_length;     /* Symbol::_length (u2) */

	/* the class list (klassname_walk) */
	uint64_t classloaderdatagraph_head;     /* static ClassLoaderDataGraph::_head */
	uint64_t classloaderdata_klasses, classloaderdata_next, klass_next_link;
	bool has_classloaderdata_klasses, has_classloaderdata_next, has_klass_next_link;

	/* Java frames: the anchor, the interpreter, the code cache (jframes, jwalk) */
	uint64_t javathread_anchor;             /* JavaThread::_anchor (a JavaFrameAnchor) */
	uint64_t javacallwrapper_anchor;        /* JavaCallWrapper::_anchor */
	uint64_t javaframeanchor_last_java_sp, javaframeanchor_last_java_pc,
		 javaframeanchor_last_java_fp;
	bool has_javathread_anchor, has_javacallwrapper_anchor, has_javaframeanchor_last_java_sp,
	     has_javaframeanchor_last_java_pc, has_javaframeanchor_last_java_fp;
	uint64_t abstractinterpreter_code;      /* static AbstractInterpreter::_code (StubQueue*) */
	uint64_t stubqueue_stub_buffer, stubqueue_buffer_limit;
	bool has_stubqueue_stub_buffer, has_stubqueue_buffer_limit;
	uint64_t codecache_low_bound, codecache_high_bound; /* statics */
	uint64_t stubroutines_call_stub_return_address;     /* static */
	int32_t frame_entry_frame_call_wrapper_offset;      /* frame:: constants, in words */
	int32_t frame_interpreter_frame_sender_sp_offset;
	int32_t frame_interpreter_frame_last_sp_offset;
	bool has_frame_entry_frame_call_wrapper_offset, has_frame_interpreter_frame_sender_sp_offset,
	     has_frame_interpreter_frame_last_sp_offset;

	/* the code heaps (jwalk, nmethod) */
	uint64_t codecache_heaps;               /* static CodeCache::_heaps (GrowableArray<CodeHeap*>*) */
	uint64_t growablearraybase_len, growablearray_int_data;
	uint64_t codeheap_memory, codeheap_segmap, codeheap_log2_segment_size;
	uint64_t virtualspace_low_boundary, virtualspace_high_boundary, virtualspace_low,
		 virtualspace_high;
	bool has_growablearraybase_len, has_growablearray_int_data, has_codeheap_memory,
	     has_codeheap_segmap, has_codeheap_log2_segment_size, has_virtualspace_low_boundary,
	     has_virtualspace_high_boundary, has_virtualspace_low, has_virtualspace_high;
	uint64_t sizeof_heapblock;
	uint64_t heapblock_header;              /* HeapBlock::_header */
	struct hotspot_sized heapblock_header_length; /* HeapBlock::Header::_length */
	uint64_t heapblock_header_used;
	bool has_heapblock_header, has_heapblock_header_length, has_heapblock_header_used;

	/* code blobs and nmethods (jwalk, nmethod) */
	uint64_t codeblob_name, codeblob_size, codeblob_frame_size;
	struct hotspot_sized codeblob_kind;     /* CodeBlob::_kind (JDK 21+) */
	int32_t codeblobkind_nmethod;           /* CodeBlobKind::Nmethod (JDK 21+) */
	uint64_t codeblob_code_begin, codeblob_code_end;    /* JDK 17-22: pointers */
	uint64_t codeblob_code_offset, codeblob_data_offset; /* JDK 23+: offsets */
	uint64_t codeblob_mutable_data, codeblob_mutable_data_size, codeblob_relocation_size;
	bool has_codeblob_name, has_codeblob_size, has_codeblob_frame_size, has_codeblob_kind,
	     has_codeblobkind_nmethod, has_codeblob_code_begin, has_codeblob_code_end,
	     has_codeblob_code_offset, has_codeblob_data_offset, has_codeblob_mutable_data,
	     has_codeblob_mutable_data_size, has_codeblob_relocation_size;
	uint64_t sizeof_nmethod;
	uint64_t nmethod_method;                /* nmethod::_method, CompiledMethod::_method */
	uint64_t nmethod_compile_id, nmethod_entry_bci, nmethod_state;
	struct hotspot_sized nmethod_comp_level;
	bool has_nmethod_method, has_nmethod_compile_id, has_nmethod_entry_bci, has_nmethod_state,
	     has_nmethod_comp_level;
	uint64_t compiledmethod_scopes_data_begin; /* JDK 17-22 */
	struct hotspot_sized nmethod_scopes_pcs_offset, nmethod_dependencies_offset,
			     nmethod_metadata_offset, nmethod_scopes_data_offset;
	uint64_t nmethod_immutable_data, nmethod_immutable_data_size; /* JDK 23+ */
	bool has_compiledmethod_scopes_data_begin, has_nmethod_scopes_pcs_offset,
	     has_nmethod_dependencies_offset, has_nmethod_metadata_offset,
	     has_nmethod_scopes_data_offset, has_nmethod_immutable_data,
	     has_nmethod_immutable_data_size;
	uint64_t sizeof_pcdesc;
	uint64_t pcdesc_pc_offset, pcdesc_scope_decode_offset;
	bool has_pcdesc_pc_offset, has_pcdesc_scope_decode_offset;
	int32_t invocation_entry_bci, complevel_full_optimization;
	bool has_invocation_entry_bci, has_complevel_full_optimization;

	/* methods: names, lines (jframes, methodsym) */
	uint64_t method_constmethod;            /* Method::_constMethod */
	uint64_t constmethod_constants, constmethod_name_index, constmethod_signature_index,
		 constmethod_code_size, constmethod_constmethod_size;
	bool has_method_constmethod, has_constmethod_constants, has_constmethod_name_index,
	     has_constmethod_signature_index, has_constmethod_code_size,
	     has_constmethod_constmethod_size;
	struct hotspot_sized constmethod_flags; /* ConstMethod::_flags._flags (21+), _flags */
	int32_t constmethod_has_linenumber_table; /* that flag's bit */
	bool has_constmethod_flags, has_constmethod_has_linenumber_table;
	uint64_t sizeof_constmethod, sizeof_constantpool;
	uint64_t constantpool_pool_holder, constantpool_length, constantpool_source_file_name_index;
	bool has_constantpool_pool_holder, has_constantpool_length,
	     has_constantpool_source_file_name_index;
	uint64_t abstract_vm_version_vm_major_version; /* static */

	/* Java fields of a class (javafield) */
	uint64_t instanceklass_constants, klass_super, array_u1_data, array_u2_data;
	bool has_instanceklass_constants, has_klass_super, has_array_u1_data, has_array_u2_data;
	uint64_t instanceklass_fieldinfo_stream; /* JDK 21+ */
	int32_t ff_initialized, ff_injected, ff_generic, ff_stable, ff_contended;
	bool has_instanceklass_fieldinfo_stream, has_ff_initialized, has_ff_injected,
	     has_ff_generic, has_ff_stable, has_ff_contended;
	uint64_t instanceklass_fields, instanceklass_java_fields_count; /* JDK 17-20 */
	int32_t fieldinfo_field_slots, fieldinfo_access_flags_offset, fieldinfo_name_index_offset,
		fieldinfo_low_packed_offset, fieldinfo_high_packed_offset, fieldinfo_tag_size,
		fieldinfo_tag_offset, jvm_acc_field_internal;
	bool has_instanceklass_fields, has_instanceklass_java_fields_count,
	     has_fieldinfo_field_slots, has_fieldinfo_access_flags_offset,
	     has_fieldinfo_name_index_offset, has_fieldinfo_low_packed_offset,
	     has_fieldinfo_high_packed_offset, has_fieldinfo_tag_size, has_fieldinfo_tag_offset,
	     has_jvm_acc_field_internal;

	/* Java objects (jobject) */
	uint64_t markword_klass_shift;          /* long */
	bool has_markword_klass_shift;
	uint64_t compressedoops_base, compressedoops_shift;   /* statics */
	uint64_t compressedklass_base, compressedklass_shift; /* statics */
	uint64_t oopdesc_klass;                 /* oopDesc::_metadata._klass */
	bool has_oopdesc_klass;
	uint64_t vmclasses_string, vmclasses_thread; /* statics: vmClasses::_klasses[...] slots */
	uint64_t klass_layout_helper;
	bool has_klass_layout_helper;
	int32_t lh_instance_slow_path_bit, lh_header_size_shift, lh_header_size_mask,
		lh_log2_element_size_shift, lh_log2_element_size_mask;
	bool has_lh_instance_slow_path_bit, has_lh_header_size_shift, has_lh_header_size_mask,
	     has_lh_log2_element_size_shift, has_lh_log2_element_size_mask;

	/* the heap (jobject, heapused, heapfreeze) */
	uint64_t universe_collectedheap;        /* static Universe::_collectedHeap */
	uint64_t collectedheap_total_collections, collectedheap_reserved;
	uint64_t memregion_start, memregion_word_size;
	bool has_collectedheap_total_collections, has_collectedheap_reserved,
	     has_memregion_start, has_memregion_word_size;
	uint64_t g1collectedheap_monitoring_support; /* its G1MonitoringSupport* */
	uint64_t g1monitoringsupport_eden_space_used, g1monitoringsupport_survivor_space_used,
		 g1monitoringsupport_old_gen_used;
	uint64_t g1collectedheap_hrm, g1heapregionmanager_regions;
	uint64_t g1heapregiontable_base, g1heapregiontable_length;
	uint64_t g1heapregion_bottom, g1heapregion_top, g1heapregion_end;
	bool has_g1collectedheap_monitoring_support, has_g1monitoringsupport_eden_space_used,
	     has_g1monitoringsupport_survivor_space_used, has_g1monitoringsupport_old_gen_used,
	     has_g1collectedheap_hrm, has_g1heapregionmanager_regions,
	     has_g1heapregiontable_base, has_g1heapregiontable_length, has_g1heapregion_bottom,
	     has_g1heapregion_top, has_g1heapregion_end;
	uint64_t parallelscavengeheap_young_gen, parallelscavengeheap_old_gen; /* statics */
	uint64_t psyounggen_eden_space, psyounggen_from_space, psyounggen_to_space,
		 psoldgen_object_space;
	uint64_t mutablespace_bottom, mutablespace_top, mutablespace_end;
	bool has_psyounggen_eden_space, has_psyounggen_from_space, has_psyounggen_to_space,
	     has_psoldgen_object_space, has_mutablespace_bottom, has_mutablespace_top,
	     has_mutablespace_end;
	uint64_t serialheap_young_gen, serialheap_old_gen;
	uint64_t defnewgeneration_eden_space, defnewgeneration_from_space,
		 defnewgeneration_to_space, tenuredgeneration_the_space;
	uint64_t contiguousspace_bottom, contiguousspace_top, contiguousspace_end;
	bool has_serialheap_young_gen, has_serialheap_old_gen, has_defnewgeneration_eden_space,
	     has_defnewgeneration_from_space, has_defnewgeneration_to_space,
	     has_tenuredgeneration_the_space, has_contiguousspace_bottom, has_contiguousspace_top,
	     has_contiguousspace_end;

	/* threads (jthreadlist, jthreads, monowner, parktrace, alloctrace) */
	uint64_t threadssmrsupport_java_thread_list; /* static */
	uint64_t threadslist_length, threadslist_threads;
	uint64_t javathread_osthread, osthread_thread_id;
	uint64_t thread_allocated_bytes;
	uint64_t javathread_thread_state, javathread_threadobj, javathread_current_pending_monitor;
	uint64_t javathread_current_waiting_monitor; /* set through an Object.wait() */
	int32_t thread_blocked;                 /* _thread_blocked (a JavaThreadState) */
	bool has_threadslist_length, has_threadslist_threads, has_javathread_osthread,
	     has_osthread_thread_id, has_thread_allocated_bytes, has_javathread_thread_state,
	     has_javathread_threadobj, has_javathread_current_pending_monitor,
	     has_javathread_current_waiting_monitor, has_thread_blocked;

	/* monitors and their owners (monowner, jthreads) */
	uint64_t objectmonitor_owner, objectmonitor_object;
	uint64_t javathread_stack_base, javathread_stack_size;
	uint64_t javathread_monitor_owner_id;   /* JDK 24+ */
	uint64_t objectmonitor_anonymous_owner; /* long */
	uint64_t javathread_lock_stack, lockstack_top, lockstack_base;
	bool has_objectmonitor_owner, has_objectmonitor_object, has_javathread_stack_base,
	     has_javathread_stack_size, has_javathread_monitor_owner_id,
	     has_objectmonitor_anonymous_owner, has_javathread_lock_stack, has_lockstack_top,
	     has_lockstack_base;

	/* what the frozen copy's own marker reads (heaplayout) */
	uint64_t klass_java_mirror, klass_class_loader_data, klass_vtable_len;
	uint64_t instanceklass_itable_len, instanceklass_nonstatic_oop_map_size,
		 instanceklass_reference_type, instanceklass_local_interfaces;
	uint64_t constantpool_cache, constantpoolcache_resolved_references;
	uint64_t classloaderdata_class_loader, array_klass_data, array_klass_length;
	uint64_t javathread_vthread;             /* JDK 19+ */
	bool has_klass_java_mirror, has_klass_class_loader_data, has_klass_vtable_len,
	     has_instanceklass_itable_len, has_instanceklass_nonstatic_oop_map_size,
	     has_instanceklass_reference_type, has_instanceklass_local_interfaces,
	     has_constantpool_cache, has_constantpoolcache_resolved_references,
	     has_classloaderdata_class_loader, has_array_klass_data, has_array_klass_length,
	     has_javathread_vthread;
	uint64_t sizeof_instanceklass;
	uint64_t java_lang_class_klass_offset, java_lang_class_oop_size_offset,
		 java_lang_class_static_oop_field_count_offset; /* statics (int) */
	uint64_t vmclasses_class, vmclasses_classloader; /* statics: vmClasses slots */

	/* -XX flags (jvmflags) */
	uint64_t jvmflag_flags, jvmflag_numflags; /* statics */
	uint64_t sizeof_jvmflag;
	uint64_t jvmflag_name, jvmflag_addr, jvmflag_type, jvmflag_flags_field;
	bool has_jvmflag_name, has_jvmflag_addr, has_jvmflag_type, has_jvmflag_flags_field;
};

/* How an entry is looked up, and what its member holds. */
enum hotspot_kind {
	HOTSPOT_OFFSET,    /* non-static Type::field: its offset (uint64_t) */
	HOTSPOT_INHERITED, /* the same, declared by Type or by one of its supertypes */
	HOTSPOT_SIZED,     /* non-static Type::field: struct hotspot_sized */
	HOTSPOT_STATIC,    /* static Type::field: its address in the target (uint64_t) */
	HOTSPOT_SIZEOF,    /* sizeof(Type) (uint64_t); the name's field is NULL */
	HOTSPOT_INT,       /* an int constant (int32_t); the name's type is NULL */
	HOTSPOT_LONG,      /* a long constant (uint64_t); the name's type is NULL */
};

/* One spelling of an entry. */
struct hotspot_name {
	const char *type, *field;
};

/* Spellings an entry may have: the one the newest JDK uses, then older ones. */
#define HOTSPOT_NAMES 2
/* hotspot_entry.has for an entry without a has_ flag (required; optional
 * statics and sizes, which read 0 when absent). */
#define HOTSPOT_NO_FLAG ((size_t)-1)

/* One row of the table. */
struct hotspot_entry {
	struct hotspot_name name[HOTSPOT_NAMES]; /* the first found is taken; unused: NULL */
	enum hotspot_kind kind;
	bool required;
	size_t at;  /* offsetof(struct mt_hotspot, the member) */
	size_t has; /* offsetof its has_ flag, or HOTSPOT_NO_FLAG */
};

/* The table, and how many rows it has. */
extern const struct hotspot_entry hotspot_table[];
extern const size_t hotspot_nentries;

#endif
