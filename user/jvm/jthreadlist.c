// SPDX-License-Identifier: GPL-2.0
/* jthreadlist.c - the Java threads and their allocation counters; see jthreadlist.h. */
#include <errno.h>
#include <stdlib.h>

#include "jvm/hotspot.h"
#include "jvm/jthreadlist.h"
#include "jvm/vmstructs.h"

int jthreadlist_layout(const struct mt_vmstructs *vs, struct jthreadlist *l)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);

	l->vs = vs;
	if (!hs->threadssmrsupport_java_thread_list || !hs->has_threadslist_length ||
	    !hs->has_threadslist_threads || !hs->has_thread_allocated_bytes)
		return -ENOENT;
	l->list_addr = hs->threadssmrsupport_java_thread_list;
	l->tl_length = hs->threadslist_length;
	l->tl_threads = hs->threadslist_threads;
	l->allocated = hs->thread_allocated_bytes;
	return 0;
}

int jthreadlist_read(const struct jthreadlist *l, uint64_t **jts, uint64_t **ctr, bool **ok,
		     size_t *n)
{
	uint64_t list = 0, arr = 0, again = 0, *j = NULL, *c = NULL;
	uint32_t len = 0;
	bool *o = NULL;
	int err;

	*jts = *ctr = NULL;
	*ok = NULL;
	*n = 0;
	/* the list object, its length and its array */
	if ((err = vmstructs_read_ptr(l->vs, l->list_addr, &list)))
		return err;
	if (!list)
		return -ENOENT;
	if ((err = vmstructs_read(l->vs, list + l->tl_length, &len, sizeof(len))) ||
	    (err = vmstructs_read_ptr(l->vs, list + l->tl_threads, &arr)))
		return err;
	if (len > JTHREADLIST_MAX)
		return -EPROTO;
	if (!len)
		return 0;
	j = malloc(len * sizeof(*j));
	c = malloc(len * sizeof(*c));
	o = malloc(len * sizeof(*o));
	if (!j || !c || !o) {
		err = -ENOMEM;
		goto cleanup;
	}
	if ((err = vmstructs_read(l->vs, arr, j, len * sizeof(*j))))
		goto cleanup;
	/* each thread's counter */
	for (uint32_t i = 0; i < len; i++)
		o[i] = j[i] && !vmstructs_read(l->vs, j[i] + l->allocated, &c[i], sizeof(c[i]));
	/* a list replaced meanwhile (copy on write) may hold freed threads */
	if ((err = vmstructs_read_ptr(l->vs, l->list_addr, &again)))
		goto cleanup;
	if (again != list) {
		err = -EAGAIN;
		goto cleanup;
	}
	*jts = j;
	*ctr = c;
	*ok = o;
	*n = len;
	return 0;
cleanup:
	free(j);
	free(c);
	free(o);
	return err;
}
