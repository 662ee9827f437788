// SPDX-License-Identifier: GPL-2.0
/*
 * hotspot.c - the table of HotSpot entries memtrace reads; see hotspot.h.
 *
 * One row per member of struct mt_hotspot: its spellings (the newest JDK's
 * first; an older one after it, with the JDKs that use each as seen in
 * `memtrace vmstructs --dump` of JDK 17 and 25), its kind, and whether a JVM
 * without it is refused at open. Required: only what every reading of a JVM
 * needs, its class names; every other entry serves some modes of some
 * modules, which refuse in those modes when it is missing.
 */
#include <stddef.h>

#include "jvm/hotspot.h"

/* A required entry (no has_ flag). */
#define REQ(m, k, ...) \
	{ { __VA_ARGS__ }, HOTSPOT_##k, true, offsetof(struct mt_hotspot, m), HOTSPOT_NO_FLAG }
/* An optional entry with its has_ flag. */
#define OPT(m, k, ...) \
	{ { __VA_ARGS__ }, HOTSPOT_##k, false, offsetof(struct mt_hotspot, m), \
	  offsetof(struct mt_hotspot, has_##m) }
/* An optional static or type size: 0 when the JVM lacks it. */
#define OPT0(m, k, ...) \
	{ { __VA_ARGS__ }, HOTSPOT_##k, false, offsetof(struct mt_hotspot, m), HOTSPOT_NO_FLAG }
/* The name of a constant, of a type. */
#define CONST(n) { NULL, n }
#define TYPE(n) { n, NULL }

const struct hotspot_entry hotspot_table[] = {
	/* class names */
	REQ(klass_name, OFFSET, { "Klass", "_name" }),
	REQ(symbol_body, OFFSET, { "Symbol", "_body" }),
	REQ(symbol_length, SIZED, { "Symbol", "_length" }),

	/* the class list */
	OPT0(classloaderdatagraph_head, STATIC, { "ClassLoaderDataGraph", "_head" }),
	OPT(classloaderdata_klasses, OFFSET, { "ClassLoaderData", "_klasses" }),
	OPT(classloaderdata_next, OFFSET, { "ClassLoaderData", "_next" }),
	OPT(klass_next_link, OFFSET, { "Klass", "_next_link" }),

	/* Java frames */
	OPT(javathread_anchor, OFFSET, { "JavaThread", "_anchor" }),
	OPT(javacallwrapper_anchor, OFFSET, { "JavaCallWrapper", "_anchor" }),
	OPT(javaframeanchor_last_java_sp, OFFSET, { "JavaFrameAnchor", "_last_Java_sp" }),
	OPT(javaframeanchor_last_java_pc, OFFSET, { "JavaFrameAnchor", "_last_Java_pc" }),
	OPT(javaframeanchor_last_java_fp, OFFSET, { "JavaFrameAnchor", "_last_Java_fp" }),
	OPT0(abstractinterpreter_code, STATIC, { "AbstractInterpreter", "_code" }),
	OPT(stubqueue_stub_buffer, OFFSET, { "StubQueue", "_stub_buffer" }),
	OPT(stubqueue_buffer_limit, OFFSET, { "StubQueue", "_buffer_limit" }),
	OPT0(codecache_low_bound, STATIC, { "CodeCache", "_low_bound" }),
	OPT0(codecache_high_bound, STATIC, { "CodeCache", "_high_bound" }),
	OPT0(stubroutines_call_stub_return_address, STATIC,
	     { "StubRoutines", "_call_stub_return_address" }),
	OPT(frame_entry_frame_call_wrapper_offset, INT,
	    CONST("frame::entry_frame_call_wrapper_offset")),
	OPT(frame_interpreter_frame_sender_sp_offset, INT,
	    CONST("frame::interpreter_frame_sender_sp_offset")),
	OPT(frame_interpreter_frame_last_sp_offset, INT,
	    CONST("frame::interpreter_frame_last_sp_offset")),

	/* the code heaps */
	OPT0(codecache_heaps, STATIC, { "CodeCache", "_heaps" }),
	OPT(growablearraybase_len, OFFSET, { "GrowableArrayBase", "_len" }),
	OPT(growablearray_int_data, OFFSET, { "GrowableArray<int>", "_data" }),
	OPT(codeheap_memory, OFFSET, { "CodeHeap", "_memory" }),
	OPT(codeheap_segmap, OFFSET, { "CodeHeap", "_segmap" }),
	OPT(codeheap_log2_segment_size, OFFSET, { "CodeHeap", "_log2_segment_size" }),
	OPT(virtualspace_low_boundary, OFFSET, { "VirtualSpace", "_low_boundary" }),
	OPT(virtualspace_high_boundary, OFFSET, { "VirtualSpace", "_high_boundary" }),
	OPT(virtualspace_low, OFFSET, { "VirtualSpace", "_low" }),
	OPT(virtualspace_high, OFFSET, { "VirtualSpace", "_high" }),
	OPT0(sizeof_heapblock, SIZEOF, TYPE("HeapBlock")),
	OPT(heapblock_header, OFFSET, { "HeapBlock", "_header" }),
	OPT(heapblock_header_length, SIZED, { "HeapBlock::Header", "_length" }),
	OPT(heapblock_header_used, OFFSET, { "HeapBlock::Header", "_used" }),

	/* code blobs and nmethods */
	OPT(codeblob_name, OFFSET, { "CodeBlob", "_name" }),
	OPT(codeblob_size, OFFSET, { "CodeBlob", "_size" }),
	OPT(codeblob_frame_size, OFFSET, { "CodeBlob", "_frame_size" }),
	OPT(codeblob_kind, SIZED, { "CodeBlob", "_kind" }),       /* JDK 21+; 17 names its blobs */
	OPT(codeblobkind_nmethod, INT, CONST("CodeBlobKind::Nmethod")),
	OPT(codeblob_code_begin, OFFSET, { "CodeBlob", "_code_begin" }), /* JDK 17-22 */
	OPT(codeblob_code_end, OFFSET, { "CodeBlob", "_code_end" }),
	OPT(codeblob_code_offset, OFFSET, { "CodeBlob", "_code_offset" }), /* JDK 23+ */
	OPT(codeblob_data_offset, OFFSET, { "CodeBlob", "_data_offset" }),
	OPT(codeblob_mutable_data, OFFSET, { "CodeBlob", "_mutable_data" }), /* JDK 25 */
	OPT(codeblob_mutable_data_size, OFFSET, { "CodeBlob", "_mutable_data_size" }),
	OPT(codeblob_relocation_size, OFFSET, { "CodeBlob", "_relocation_size" }),
	OPT0(sizeof_nmethod, SIZEOF, TYPE("nmethod")),
	/* nmethod's own on JDK 25; JDK 17 has it in CompiledMethod, nmethod's base */
	OPT(nmethod_method, OFFSET, { "nmethod", "_method" }, { "CompiledMethod", "_method" }),
	OPT(nmethod_compile_id, OFFSET, { "nmethod", "_compile_id" }),
	OPT(nmethod_entry_bci, OFFSET, { "nmethod", "_entry_bci" }),
	OPT(nmethod_state, OFFSET, { "nmethod", "_state" }),
	OPT(nmethod_comp_level, SIZED, { "nmethod", "_comp_level" }),
	OPT(compiledmethod_scopes_data_begin, OFFSET, { "CompiledMethod", "_scopes_data_begin" }),
	OPT(nmethod_scopes_pcs_offset, SIZED, { "nmethod", "_scopes_pcs_offset" }),
	OPT(nmethod_dependencies_offset, SIZED, { "nmethod", "_dependencies_offset" }),
	OPT(nmethod_metadata_offset, SIZED, { "nmethod", "_metadata_offset" }),
	OPT(nmethod_scopes_data_offset, SIZED, { "nmethod", "_scopes_data_offset" }),
	OPT(nmethod_immutable_data, OFFSET, { "nmethod", "_immutable_data" }),
	OPT(nmethod_immutable_data_size, OFFSET, { "nmethod", "_immutable_data_size" }),
	OPT0(sizeof_pcdesc, SIZEOF, TYPE("PcDesc")),
	OPT(pcdesc_pc_offset, OFFSET, { "PcDesc", "_pc_offset" }),
	OPT(pcdesc_scope_decode_offset, OFFSET, { "PcDesc", "_scope_decode_offset" }),
	OPT(invocation_entry_bci, INT, CONST("InvocationEntryBci")),
	OPT(complevel_full_optimization, INT, CONST("CompLevel_full_optimization")),

	/* methods */
	OPT(method_constmethod, OFFSET, { "Method", "_constMethod" }),
	OPT(constmethod_constants, OFFSET, { "ConstMethod", "_constants" }),
	OPT(constmethod_name_index, OFFSET, { "ConstMethod", "_name_index" }),
	OPT(constmethod_signature_index, OFFSET, { "ConstMethod", "_signature_index" }),
	OPT(constmethod_code_size, OFFSET, { "ConstMethod", "_code_size" }),
	OPT(constmethod_constmethod_size, OFFSET, { "ConstMethod", "_constMethod_size" }),
	/* JDK 21 moved the flags into a ConstMethodFlags member (a u4; a u2 before) */
	OPT(constmethod_flags, SIZED, { "ConstMethod", "_flags._flags" }, { "ConstMethod", "_flags" }),
	OPT(constmethod_has_linenumber_table, INT,
	    CONST("ConstMethodFlags::_misc_has_linenumber_table"),
	    CONST("ConstMethod::_has_linenumber_table")),
	OPT0(sizeof_constmethod, SIZEOF, TYPE("ConstMethod")),
	OPT0(sizeof_constantpool, SIZEOF, TYPE("ConstantPool")),
	OPT(constantpool_pool_holder, OFFSET, { "ConstantPool", "_pool_holder" }),
	OPT(constantpool_length, OFFSET, { "ConstantPool", "_length" }),
	OPT(constantpool_source_file_name_index, OFFSET,
	    { "ConstantPool", "_source_file_name_index" }),
	OPT0(abstract_vm_version_vm_major_version, STATIC,
	     { "Abstract_VM_Version", "_vm_major_version" }),

	/* Java fields of a class */
	OPT(instanceklass_constants, OFFSET, { "InstanceKlass", "_constants" }),
	OPT(klass_super, OFFSET, { "Klass", "_super" }),
	OPT(array_u1_data, OFFSET, { "Array<u1>", "_data" }),
	OPT(array_u2_data, OFFSET, { "Array<u2>", "_data" }),
	/* JDK 21+: the fields as an UNSIGNED5 stream */
	OPT(instanceklass_fieldinfo_stream, OFFSET, { "InstanceKlass", "_fieldinfo_stream" }),
	OPT(ff_initialized, INT, CONST("FieldInfo::FieldFlags::_ff_initialized")),
	OPT(ff_injected, INT, CONST("FieldInfo::FieldFlags::_ff_injected")),
	OPT(ff_generic, INT, CONST("FieldInfo::FieldFlags::_ff_generic")),
	OPT(ff_stable, INT, CONST("FieldInfo::FieldFlags::_ff_stable")),
	OPT(ff_contended, INT, CONST("FieldInfo::FieldFlags::_ff_contended")),
	/* JDK 17-20: an Array<u2> of FieldInfo records */
	OPT(instanceklass_fields, OFFSET, { "InstanceKlass", "_fields" }),
	OPT(instanceklass_java_fields_count, OFFSET, { "InstanceKlass", "_java_fields_count" }),
	OPT(fieldinfo_field_slots, INT, CONST("FieldInfo::field_slots")),
	OPT(fieldinfo_access_flags_offset, INT, CONST("FieldInfo::access_flags_offset")),
	OPT(fieldinfo_name_index_offset, INT, CONST("FieldInfo::name_index_offset")),
	OPT(fieldinfo_low_packed_offset, INT, CONST("FieldInfo::low_packed_offset")),
	OPT(fieldinfo_high_packed_offset, INT, CONST("FieldInfo::high_packed_offset")),
	OPT(fieldinfo_tag_size, INT, CONST("FIELDINFO_TAG_SIZE")),
	OPT(fieldinfo_tag_offset, INT, CONST("FIELDINFO_TAG_OFFSET")),
	OPT(jvm_acc_field_internal, INT, CONST("JVM_ACC_FIELD_INTERNAL")),

	/* Java objects */
	OPT(markword_klass_shift, LONG, CONST("markWord::klass_shift")),
	/* JDK 21+ "_base", "_shift"; JDK 17 "_narrow_oop._base", "_narrow_klass._base" */
	OPT0(compressedoops_base, STATIC, { "CompressedOops", "_base" },
	     { "CompressedOops", "_narrow_oop._base" }),
	OPT0(compressedoops_shift, STATIC, { "CompressedOops", "_shift" },
	     { "CompressedOops", "_narrow_oop._shift" }),
	OPT0(compressedklass_base, STATIC, { "CompressedKlassPointers", "_base" },
	     { "CompressedKlassPointers", "_narrow_klass._base" }),
	OPT0(compressedklass_shift, STATIC, { "CompressedKlassPointers", "_shift" },
	     { "CompressedKlassPointers", "_narrow_klass._shift" }),
	OPT(oopdesc_klass, OFFSET, { "oopDesc", "_metadata._klass" }),
	OPT0(vmclasses_string, STATIC,
	     { "vmClasses", "_klasses[static_cast<int>(vmClassID::String_klass_knum)]" }),
	OPT0(vmclasses_thread, STATIC,
	     { "vmClasses", "_klasses[static_cast<int>(vmClassID::Thread_klass_knum)]" }),
	OPT(klass_layout_helper, OFFSET, { "Klass", "_layout_helper" }),
	OPT(lh_instance_slow_path_bit, INT, CONST("Klass::_lh_instance_slow_path_bit")),
	OPT(lh_header_size_shift, INT, CONST("Klass::_lh_header_size_shift")),
	OPT(lh_header_size_mask, INT, CONST("Klass::_lh_header_size_mask")),
	OPT(lh_log2_element_size_shift, INT, CONST("Klass::_lh_log2_element_size_shift")),
	OPT(lh_log2_element_size_mask, INT, CONST("Klass::_lh_log2_element_size_mask")),

	/* the heap */
	OPT0(universe_collectedheap, STATIC, { "Universe", "_collectedHeap" }),
	OPT(collectedheap_total_collections, OFFSET, { "CollectedHeap", "_total_collections" }),
	OPT(collectedheap_reserved, OFFSET, { "CollectedHeap", "_reserved" }),
	OPT(memregion_start, OFFSET, { "MemRegion", "_start" }),
	OPT(memregion_word_size, OFFSET, { "MemRegion", "_word_size" }),
	/* JDK 25 "_monitoring_support"; JDK 17 "_g1mm" */
	OPT(g1collectedheap_monitoring_support, OFFSET, { "G1CollectedHeap", "_monitoring_support" },
	    { "G1CollectedHeap", "_g1mm" }),
	OPT(g1monitoringsupport_eden_space_used, OFFSET,
	    { "G1MonitoringSupport", "_eden_space_used" }),
	OPT(g1monitoringsupport_survivor_space_used, OFFSET,
	    { "G1MonitoringSupport", "_survivor_space_used" }),
	OPT(g1monitoringsupport_old_gen_used, OFFSET, { "G1MonitoringSupport", "_old_gen_used" }),
	OPT(g1collectedheap_hrm, OFFSET, { "G1CollectedHeap", "_hrm" }),
	/* JDK 25 G1HeapRegionManager, G1HeapRegion; JDK 17 HeapRegionManager, HeapRegion */
	OPT(g1heapregionmanager_regions, OFFSET, { "G1HeapRegionManager", "_regions" },
	    { "HeapRegionManager", "_regions" }),
	OPT(g1heapregiontable_base, OFFSET, { "G1HeapRegionTable", "_base" }),
	OPT(g1heapregiontable_length, OFFSET, { "G1HeapRegionTable", "_length" }),
	OPT(g1heapregion_bottom, INHERITED, { "G1HeapRegion", "_bottom" }, { "HeapRegion", "_bottom" }),
	OPT(g1heapregion_top, INHERITED, { "G1HeapRegion", "_top" }, { "HeapRegion", "_top" }),
	OPT(g1heapregion_end, INHERITED, { "G1HeapRegion", "_end" }, { "HeapRegion", "_end" }),
	OPT0(parallelscavengeheap_young_gen, STATIC, { "ParallelScavengeHeap", "_young_gen" }),
	OPT0(parallelscavengeheap_old_gen, STATIC, { "ParallelScavengeHeap", "_old_gen" }),
	OPT(psyounggen_eden_space, INHERITED, { "PSYoungGen", "_eden_space" }),
	OPT(psyounggen_from_space, INHERITED, { "PSYoungGen", "_from_space" }),
	OPT(psyounggen_to_space, INHERITED, { "PSYoungGen", "_to_space" }),
	OPT(psoldgen_object_space, INHERITED, { "PSOldGen", "_object_space" }),
	OPT(mutablespace_bottom, INHERITED, { "MutableSpace", "_bottom" }),
	OPT(mutablespace_top, INHERITED, { "MutableSpace", "_top" }),
	OPT(mutablespace_end, INHERITED, { "MutableSpace", "_end" }),
	/* JDK 21+ SerialHeap's own; JDK 17 GenCollectedHeap's */
	OPT(serialheap_young_gen, INHERITED, { "SerialHeap", "_young_gen" },
	    { "GenCollectedHeap", "_young_gen" }),
	OPT(serialheap_old_gen, INHERITED, { "SerialHeap", "_old_gen" },
	    { "GenCollectedHeap", "_old_gen" }),
	OPT(defnewgeneration_eden_space, INHERITED, { "DefNewGeneration", "_eden_space" }),
	OPT(defnewgeneration_from_space, INHERITED, { "DefNewGeneration", "_from_space" }),
	OPT(defnewgeneration_to_space, INHERITED, { "DefNewGeneration", "_to_space" }),
	OPT(tenuredgeneration_the_space, INHERITED, { "TenuredGeneration", "_the_space" }),
	OPT(contiguousspace_bottom, INHERITED, { "ContiguousSpace", "_bottom" }),
	OPT(contiguousspace_top, INHERITED, { "ContiguousSpace", "_top" }),
	OPT(contiguousspace_end, INHERITED, { "ContiguousSpace", "_end" }),

	/* threads */
	OPT0(threadssmrsupport_java_thread_list, STATIC,
	     { "ThreadsSMRSupport", "_java_thread_list" }),
	OPT(threadslist_length, OFFSET, { "ThreadsList", "_length" }),
	OPT(threadslist_threads, OFFSET, { "ThreadsList", "_threads" }),
	/* JDK 21+ declares it in Thread */
	OPT(javathread_osthread, INHERITED, { "JavaThread", "_osthread" }),
	OPT(osthread_thread_id, OFFSET, { "OSThread", "_thread_id" }),
	OPT(thread_allocated_bytes, INHERITED, { "Thread", "_allocated_bytes" }),
	OPT(javathread_thread_state, OFFSET, { "JavaThread", "_thread_state" }),
	OPT(javathread_threadobj, OFFSET, { "JavaThread", "_threadObj" }),
	OPT(javathread_current_pending_monitor, OFFSET,
	    { "JavaThread", "_current_pending_monitor" }),
	OPT(javathread_current_waiting_monitor, OFFSET,
	    { "JavaThread", "_current_waiting_monitor" }),
	OPT(thread_blocked, INT, CONST("_thread_blocked")),

	/* monitors and their owners */
	OPT(objectmonitor_owner, OFFSET, { "ObjectMonitor", "_owner" }),
	OPT(objectmonitor_object, OFFSET, { "ObjectMonitor", "_object" }),
	OPT(javathread_stack_base, INHERITED, { "JavaThread", "_stack_base" }),
	OPT(javathread_stack_size, INHERITED, { "JavaThread", "_stack_size" }),
	OPT(javathread_monitor_owner_id, OFFSET, { "JavaThread", "_monitor_owner_id" }), /* 24+ */
	OPT(objectmonitor_anonymous_owner, LONG, CONST("ObjectMonitor::ANONYMOUS_OWNER")),
	OPT(javathread_lock_stack, OFFSET, { "JavaThread", "_lock_stack" }),
	OPT(lockstack_top, OFFSET, { "LockStack", "_top" }),
	OPT(lockstack_base, OFFSET, { "LockStack", "_base[0]" }),

	/* the frozen copy's marker */
	OPT(klass_java_mirror, OFFSET, { "Klass", "_java_mirror" }),
	OPT(klass_class_loader_data, OFFSET, { "Klass", "_class_loader_data" }),
	OPT(klass_vtable_len, OFFSET, { "Klass", "_vtable_len" }),
	OPT(instanceklass_itable_len, OFFSET, { "InstanceKlass", "_itable_len" }),
	OPT(instanceklass_nonstatic_oop_map_size, OFFSET,
	    { "InstanceKlass", "_nonstatic_oop_map_size" }),
	OPT(instanceklass_reference_type, OFFSET, { "InstanceKlass", "_reference_type" }),
	OPT(instanceklass_local_interfaces, OFFSET, { "InstanceKlass", "_local_interfaces" }),
	OPT(constantpool_cache, OFFSET, { "ConstantPool", "_cache" }),
	OPT(constantpoolcache_resolved_references, OFFSET,
	    { "ConstantPoolCache", "_resolved_references" }),
	OPT(classloaderdata_class_loader, OFFSET, { "ClassLoaderData", "_class_loader" }),
	OPT(array_klass_data, OFFSET, { "Array<Klass*>", "_data" }),
	OPT(array_klass_length, OFFSET, { "Array<Klass*>", "_length" }),
	OPT(javathread_vthread, OFFSET, { "JavaThread", "_vthread" }),
	OPT0(sizeof_instanceklass, SIZEOF, TYPE("InstanceKlass")),
	OPT0(java_lang_class_klass_offset, STATIC, { "java_lang_Class", "_klass_offset" }),
	OPT0(java_lang_class_oop_size_offset, STATIC, { "java_lang_Class", "_oop_size_offset" }),
	OPT0(java_lang_class_static_oop_field_count_offset, STATIC,
	     { "java_lang_Class", "_static_oop_field_count_offset" }),
	OPT0(vmclasses_class, STATIC,
	     { "vmClasses", "_klasses[static_cast<int>(vmClassID::Class_klass_knum)]" }),
	OPT0(vmclasses_classloader, STATIC,
	     { "vmClasses", "_klasses[static_cast<int>(vmClassID::ClassLoader_klass_knum)]" }),

	/* -XX flags */
	OPT0(jvmflag_flags, STATIC, { "JVMFlag", "flags" }),
	OPT0(jvmflag_numflags, STATIC, { "JVMFlag", "numFlags" }),
	OPT0(sizeof_jvmflag, SIZEOF, TYPE("JVMFlag")),
	OPT(jvmflag_name, OFFSET, { "JVMFlag", "_name" }),
	OPT(jvmflag_addr, OFFSET, { "JVMFlag", "_addr" }),
	OPT(jvmflag_type, OFFSET, { "JVMFlag", "_type" }),
	OPT(jvmflag_flags_field, OFFSET, { "JVMFlag", "_flags" }),
};

const size_t hotspot_nentries = sizeof(hotspot_table) / sizeof(hotspot_table[0]);
