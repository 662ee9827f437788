/* heaplayout.h - what the frozen copy's own marker needs to read the heap
 * (struct mt_ap_heap_layout, include/memtrace/agent_proto.h): HotSpot's
 * offsets from the JVM's VMStructs, and the values of the static ints it
 * computes at start (java_lang_Class::_klass_offset, ...) and the Klass
 * vtables from libjvm's .symtab. The marker itself runs in the agent
 * (user/agent/heapmark.c). */
#ifndef MEMTRACE_HEAPLAYOUT_H
#define MEMTRACE_HEAPLAYOUT_H

#include <stddef.h>

#include "memtrace/agent_proto.h"

struct mt_proc;
struct mt_vmstructs;

/*
 * heaplayout_fill - the layout of JVM @p (@vs its tables) into @L. Returns
 * 0, or -ENOTSUP / -ENOENT with @why saying what the marker cannot work
 * with (compact object headers, a stripped libjvm, an entry this JDK does
 * not have); prints nothing.
 */
int heaplayout_fill(const struct mt_proc *p, const struct mt_vmstructs *vs,
		    struct mt_ap_heap_layout *L, char *why, size_t n);

#endif
