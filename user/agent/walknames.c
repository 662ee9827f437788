// SPDX-License-Identifier: GPL-2.0
/* walknames.c - ids for the classes, loaders and threads of a heap walk (walknames.h). */
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "walknames.h"
#include "walkstate.h"

/* Untagged walks: keep a local reference to object o (tag t) for the pause. */
static void name_object(jobject o, uint64_t t)
{
	struct walk_named *nm;
	JNIEnv *jni = agent.jni;

	if (!hw.untagged)
		return;
	nm = walkvec_push(&hw.named);
	if (!nm)
		return;
	*nm = (struct walk_named){ .ref = (*jni)->NewLocalRef(jni, o), .id = t >> 1 };
	if (!nm->ref)
		hw.named.n--;
}

uint64_t walknames_tag(jobject o)
{
	jlong t = 0;

	if (!o)
		return 0;
	if ((*hw.tenv)->GetTag(hw.tenv, o, &t) || !t ||
	    (hw.untagged && ((uint64_t)t >> 1) < hw.first_id)) {
		t = (jlong)walkstate_new_tag();
		if ((*hw.tenv)->SetTag(hw.tenv, o, t))
			return 0;
		name_object(o, (uint64_t)t);
	}
	return (uint64_t)t >> 1;
}

void walknames_threads(JNIEnv *jni)
{
	jint nt = 0;
	jthread *ts = NULL;

	if ((*hw.env)->GetAllThreads(hw.env, &nt, &ts))
		return;
	hw.threads = calloc((size_t)nt + 1, sizeof(*hw.threads));
	for (jint i = 0; i < nt; i++) {
		jvmtiThreadInfo ti;

		if (hw.threads && !(*hw.env)->GetThreadInfo(hw.env, ts[i], &ti)) {
			hw.threads[hw.nthreads].id = walknames_tag(ts[i]);
			hw.threads[hw.nthreads].name = strdup(ti.name ? ti.name : "");
			if (hw.threads[hw.nthreads].name)
				hw.nthreads++;
			(*hw.env)->Deallocate(hw.env, (unsigned char *)ti.name);
			if (ti.thread_group)
				(*jni)->DeleteLocalRef(jni, ti.thread_group);
			if (ti.context_class_loader)
				(*jni)->DeleteLocalRef(jni, ti.context_class_loader);
		}
		(*jni)->DeleteLocalRef(jni, ts[i]);
	}
	(*hw.env)->Deallocate(hw.env, (unsigned char *)ts);
}

void walknames_untag(void)
{
	jint n = 0;
	jobject *objs = NULL;
	JNIEnv *jni = agent.jni;

	if (!hw.given.n || hw.given.n > INT32_MAX)
		goto out;
	if ((*hw.tenv)->GetObjectsWithTags(hw.tenv, (jint)hw.given.n, (const jlong *)hw.given.p, &n,
					   &objs, NULL)) {
		agent_log("could not clear the tags of %zu classes, loaders and threads: they stay "
			  "until the next session's walk reuses them", hw.given.n);
		hs.stale_tags = true;
		goto out;
	}
	for (jint i = 0; i < n; i++) {
		(*hw.tenv)->SetTag(hw.tenv, objs[i], 0);
		(*jni)->DeleteLocalRef(jni, objs[i]);
	}
	(*hw.tenv)->Deallocate(hw.tenv, (unsigned char *)objs);
out:
	walkvec_free(&hw.given);
}
