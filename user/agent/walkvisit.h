/* walkvisit.h - the heap walk's JVMTI callbacks (walkvisit.c): what the VM
 * thread runs for every reference, value and string inside the pause (or in
 * the frozen copy); they append records to hw's vectors and nothing else. */
#ifndef MEMTRACE_AGENT_WALKVISIT_H
#define MEMTRACE_AGENT_WALKVISIT_H

#include <jvmti.h>

#include "memtrace/agent_proto.h"

/*
 * walkvisit_callbacks - the callbacks FollowReferences runs for @req: a no-op
 * walk (MT_AP_HEAP_BARE, the benchmark's baseline), else the untagged or the
 * tagged reference callback (hw.untagged), the primitive field callback when
 * fields are asked for, the string callback when hw.flags keeps
 * MT_AP_HEAP_STRINGS. Call after the tables are built (hw is set up).
 */
void walkvisit_callbacks(jvmtiHeapCallbacks *cb, const struct mt_ap_heap_request *req);

#endif
