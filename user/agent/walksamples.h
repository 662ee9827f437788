/* walksamples.h - the sampled objects a heap walk reports by id
 * (walksamples.c). Socket thread, the JVM running. */
#ifndef MEMTRACE_AGENT_WALKSAMPLES_H
#define MEMTRACE_AGENT_WALKSAMPLES_H

#include <jvmti.h>
#include <stdint.h>

/*
 * walksamples_find - the sampled objects memtrace asks for
 * (MT_AP_HEAP_SAMPLES: @n sample ids at @ids, unaligned), found by the
 * sampling session's tags (GetObjectsWithTags in its env) and tagged in the
 * walking env with an id of the NAMED range, so the walk reports each by its
 * id (hw.sampled). No reference to them is kept over the pause: a JNI local
 * reference would make each a heap root, with a path one step long.
 */
void walksamples_find(JNIEnv *jni, const void *ids, uint32_t n);
/* walksamples_untag - an untagged walk's env holds no tag after it: clear the
 * sampled objects'. 0, or -EIO (logged) when JVMTI could not: later walks
 * must use tags. */
int walksamples_untag(void);

#endif
