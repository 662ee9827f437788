// SPDX-License-Identifier: GPL-2.0
/* walksamples.c - the sampled objects a heap walk reports by id (walksamples.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "agent.h"
#include "sampler.h"
#include "walksamples.h"
#include "walkstate.h"

void walksamples_find(JNIEnv *jni, const void *ids, uint32_t n)
{
	jint count = 0;
	jobject *objs = NULL;
	jlong *tags, *found = NULL;

	if (!n || !sampler_active() || !smp.env)
		return;
	tags = malloc((size_t)n * sizeof(*tags));
	if (!tags)
		return;
	memcpy(tags, ids, (size_t)n * sizeof(*tags));
	if ((*smp.env)->GetObjectsWithTags(smp.env, (jint)n, tags, &count, &objs, &found)) {
		free(tags);
		return;
	}
	for (jint i = 0; i < count; i++) {
		struct mt_ap_hsampled *sm;
		jlong t = 0;

		if (hw.marking) { /* the copy's marker finds it by its address */
			struct walk_named *nm = walkvec_push(&hw.named);

			if (nm) {
				*nm = (struct walk_named){ .ref = (*jni)->NewLocalRef(jni, objs[i]),
							   .sample = (uint64_t)found[i] };
				if (!nm->ref)
					hw.named.n--;
			}
			goto next;
		}
		if (hw.untagged || (*hw.env)->GetTag(hw.env, objs[i], &t) || !t) {
			t = (jlong)((hs.next_id++) << 1);
			if ((*hw.env)->SetTag(hw.env, objs[i], t))
				goto next;
			if (hw.untagged) {
				uint64_t *g = walkvec_push(&hw.stags);
				struct walk_named *nm = walkvec_push(&hw.named);

				if (g)
					*g = (uint64_t)t;
				if (nm) /* counted among the named ids memtrace checks */
					*nm = (struct walk_named){ .ref = NULL, .id = (uint64_t)t >> 1 };
			}
		}
		sm = walkvec_push(&hw.sampled);
		if (sm)
			*sm = (struct mt_ap_hsampled){ .id = (uint64_t)t >> 1, .sample = (uint64_t)found[i] };
next:
		(*jni)->DeleteLocalRef(jni, objs[i]);
	}
	(*smp.env)->Deallocate(smp.env, (unsigned char *)objs);
	(*smp.env)->Deallocate(smp.env, (unsigned char *)found);
	free(tags);
}

int walksamples_untag(void)
{
	jint n = 0;
	jobject *objs = NULL;
	JNIEnv *jni = agent.jni;

	if (!hw.stags.n)
		return 0;
	if ((*hw.env)->GetObjectsWithTags(hw.env, (jint)hw.stags.n, (const jlong *)hw.stags.p, &n,
					  &objs, NULL)) {
		agent_log("could not clear the tags of %zu sampled objects: later walks use tags",
			  hw.stags.n);
		return -EIO;
	}
	for (jint i = 0; i < n; i++) {
		(*hw.env)->SetTag(hw.env, objs[i], 0);
		(*jni)->DeleteLocalRef(jni, objs[i]);
	}
	(*hw.env)->Deallocate(hw.env, (unsigned char *)objs);
	hw.stags.n = 0;
	return 0;
}
