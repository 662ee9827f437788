/* walkenv.h - the JVMTI environments of the heap walks (walkenv.c): the
 * session's env (tags, GC events), names_env and plain_env of untagged
 * walks. Socket thread only. */
#ifndef MEMTRACE_AGENT_WALKENV_H
#define MEMTRACE_AGENT_WALKENV_H

#include <jvmti.h>
#include <stddef.h>

/* walkenv_session - hs.env for a session: created by the agent's first walk,
 * reused by later sessions (GC events on and hs_gcs at 0 while a session is
 * open; ids from 1, or on from where a failed clear left them). 0 if there
 * is one, or -errno with @why (@n bytes). */
int walkenv_session(char *why, size_t n);
/* walkenv_names - the env whose tags name an untagged walk's classes,
 * loaders and threads (created once, kept); NULL: none (walk with tags). */
jvmtiEnv *walkenv_names(void);
/* walkenv_plain - the env that runs untagged and bare walks and never holds
 * a tag (created once, kept); NULL: none. */
jvmtiEnv *walkenv_plain(void);
/* walkenv_end - the session is over: GC events off and, if a walk tagged
 * objects (MT_AP_HEAP_KEEPIDS), every tag of the session cleared (a heap
 * iteration: a pause about as long as a bare walk's; untagged walks cleared
 * theirs already, without a pause); the env stays for the next session;
 * hs is zeroed. */
void walkenv_end(void);

#endif
