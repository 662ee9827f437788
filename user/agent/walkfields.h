/* walkfields.h - the class and field tables of a heap walk (walkfields.c):
 * every loaded class with its loader, superclass, interfaces and fields under
 * their JVMTI indices, and which fields are projected (their values sent).
 * Socket thread, the JVM running; walkfields_proj_type() also in the pause. */
#ifndef MEMTRACE_AGENT_WALKFIELDS_H
#define MEMTRACE_AGENT_WALKFIELDS_H

#include <jvmti.h>
#include <stddef.h>
#include <stdint.h>

/*
 * walkfields_prepare - name every loaded class and its loader (walknames.h)
 * into hw.cls, with its field table: @nnames NUL-terminated field names at
 * @names (up to @end) are projected (every field with MT_AP_HEAP_ALLFIELDS).
 * Returns 0, or -errno with @why (@n bytes); hw.cls is freed by
 * walkstate_free() either way.
 */
int walkfields_prepare(JNIEnv *jni, const char *names, uint32_t nnames, const char *end,
		       char *why, size_t n);
/* walkfields_projidx - hw.projidx: the JVMTI indices projected in some class
 * (the untagged walk's in-pause prefilter). 0 or -ENOMEM with @why. */
int walkfields_projidx(char *why, size_t n);
/* walkfields_strings_wanted - keep MT_AP_HEAP_STRINGS in hw.flags only when
 * a projected field is declared java.lang.String (or every field is). */
void walkfields_strings_wanted(void);
/* walkfields_proj_type - is JVMTI index @idx of class id @cid a projected
 * field? Its type char, or 0. */
int walkfields_proj_type(uint64_t cid, jint idx);

#endif
