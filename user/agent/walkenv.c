// SPDX-License-Identifier: GPL-2.0
/*
 * walkenv.c - the JVMTI environments of the heap walks (walkenv.h).
 *
 * The first walk creates an environment of its own (can_tag_objects, GC
 * events), so the walk's tags never mix with the sampler's; it is kept for
 * the agent's life (GC events only while a session is open). Its
 * GarbageCollectionFinish events count GCs in hs_gcs (an atomic; the
 * sampler's env has its own callbacks and counter).
 *
 * The two extra envs of untagged walks, each created once and kept:
 * names_env, whose tags name classes, loaders and threads (cleared after
 * each walk), and plain_env, which runs the untagged (and the benchmark's
 * bare) walks and never holds a tag. JVMTI looks tags up in the walking
 * env's table for every reference: plain_env's stays empty and small, where
 * the session env's, once grown by a tagged session, stays large when
 * emptied (after such a session an untagged walk in it paused 233-273 ms
 * instead of 140-170 ms on 625 k objects: every look-up missed the cache).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "walkenv.h"
#include "walkstate.h"

/* The walk's env once created, kept for the agent's life (see walkenv_end),
 * and the first id of the next session: 1, unless clearing the tags failed
 * (then ids go on from there, so no stale tag can alias a new id). */
static jvmtiEnv *kept_env;
static uint64_t kept_next_id = 1;
static jvmtiEnv *names_env, *plain_env;

/* GarbageCollectionFinish (a VM thread, no JVMTI/JNI allowed): count it. */
static void JNICALL on_gc_finish(jvmtiEnv *e)
{
	atomic_fetch_add(&hs_gcs, 1);
}

int walkenv_session(char *why, size_t n)
{
	jvmtiCapabilities caps = { .can_tag_objects = 1,
				   .can_generate_garbage_collection_events = 1 };
	jvmtiEventCallbacks cb = { .GarbageCollectionFinish = on_gc_finish };
	jvmtiError e;

	if (hs.env)
		return 0;
	if (kept_env) {
		hs.env = kept_env;
		atomic_store(&hs_gcs, 0);
		(*hs.env)->SetEventNotificationMode(hs.env, JVMTI_ENABLE,
						    JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
		hs.next_id = hs.start_id = kept_next_id;
		return 0;
	}
	if ((*agent.vm)->GetEnv(agent.vm, (void **)&hs.env, JVMTI_VERSION_1_2) != JNI_OK) {
		hs.env = NULL;
		snprintf(why, n, "no JVMTI environment for the heap walk");
		return -ENOTSUP;
	}
	e = (*hs.env)->AddCapabilities(hs.env, &caps);
	if (!e)
		e = (*hs.env)->SetEventCallbacks(hs.env, &cb, sizeof(cb));
	atomic_store(&hs_gcs, 0);
	if (!e)
		e = (*hs.env)->SetEventNotificationMode(hs.env, JVMTI_ENABLE,
							JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
	if (e) {
		snprintf(why, n, "JVMTI refused tagging or GC events for the heap walk (error %d)",
			 (int)e);
		(*hs.env)->DisposeEnvironment(hs.env);
		hs.env = NULL;
		return -EIO;
	}
	hs.next_id = hs.start_id = 1;
	return 0;
}

/* *@env, created with can_tag_objects the first time; false: no env. */
static bool tag_env_get(jvmtiEnv **env)
{
	jvmtiCapabilities caps = { .can_tag_objects = 1 };

	if (*env)
		return true;
	if ((*agent.vm)->GetEnv(agent.vm, (void **)env, JVMTI_VERSION_1_2) != JNI_OK) {
		*env = NULL;
		return false;
	}
	if ((**env)->AddCapabilities(*env, &caps)) {
		(**env)->DisposeEnvironment(*env);
		*env = NULL;
		return false;
	}
	return true;
}

jvmtiEnv *walkenv_names(void)
{
	return tag_env_get(&names_env) ? names_env : NULL;
}

jvmtiEnv *walkenv_plain(void)
{
	return tag_env_get(&plain_env) ? plain_env : NULL;
}

/* Untag one object (IterateThroughHeap over the tagged objects only). */
static jint JNICALL on_untag(jlong class_tag, jlong size, jlong *tag_ptr, jint length,
			     void *user_data)
{
	*tag_ptr = 0;
	return 0;
}

/*
 * The session's tags are cleared, not disposed with the env: HotSpot keeps
 * ~15 bytes per tagged object of every disposed environment (measured on JDK
 * 17 and 25: the JVM's RSS grew 9.6 MB per query session on a 625 k-object
 * heap, linearly, and stays flat this way). So the env lives on (GC events
 * off) and the next session reuses it, from id 1 again.
 */
void walkenv_end(void)
{
	if (hs.env) {
		jvmtiHeapCallbacks cb = { .heap_iteration_callback = on_untag };

		(*hs.env)->SetEventNotificationMode(hs.env, JVMTI_DISABLE,
						    JVMTI_EVENT_GARBAGE_COLLECTION_FINISH, NULL);
		/* a pause about as long as a bare walk's (JVMTI_HEAP_FILTER_UNTAGGED
		 * leaves the untagged objects out of the callbacks, not of the scan) */
		kept_next_id = 1;
		if (!hs.tagged_objects) {
			/* untagged walks cleared their tags: no pass, no pause */
			if (hs.stale_tags)
				kept_next_id = hs.next_id;
		} else if ((*hs.env)->IterateThroughHeap(hs.env, JVMTI_HEAP_FILTER_UNTAGGED, NULL,
							 &cb, NULL)) {
			agent_log("could not clear the heap walk's tags: they stay until the "
				  "next session's walk reuses them");
			kept_next_id = hs.next_id;
		}
		kept_env = hs.env;
	}
	free(hs.bits);
	memset(&hs, 0, sizeof(hs));
	atomic_store(&hs_gcs, 0);
}
