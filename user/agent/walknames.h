/* walknames.h - ids for the classes, loaders and threads of a heap walk
 * (walknames.c): tags in the walk's naming env, and in an untagged walk a
 * JNI local reference each, kept over the pause. Socket thread, the JVM
 * running. */
#ifndef MEMTRACE_AGENT_WALKNAMES_H
#define MEMTRACE_AGENT_WALKNAMES_H

#include <jvmti.h>
#include <stdint.h>

/* walknames_tag - the id of class, loader or thread @o (0 for NULL or a
 * failed SetTag), tagging it in hw.tenv with a new id if it has none (or, in
 * an untagged walk, one from before this walk, left by a failed clear); an
 * untagged walk also keeps a local reference to it for the pause (hw.named). */
uint64_t walknames_tag(jobject o);
/* walknames_threads - every live thread into hw.threads (id, name). */
void walknames_threads(JNIEnv *jni);
/* walknames_untag - clear the tags an untagged walk gave (classes, loaders,
 * threads): no safepoint, the tag map is searched under its lock. Logs and
 * sets hs.stale_tags if JVMTI cannot. */
void walknames_untag(void);

#endif
