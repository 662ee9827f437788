/* snaprec.h - the agent's heap records (agent_proto.h: struct mt_ap_rec,
 * kinds MT_AP_HREC_*) parsed into a struct mt_snapshot. They come live in
 * HEAP_DATA frames (snaptake.h) or from a snapshot file (snapfile.h), which
 * holds them exactly as the agent sent them. */
#ifndef MEMTRACE_SNAPREC_H
#define MEMTRACE_SNAPREC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "heap/snapshot.h"

/*
 * snaprec_add - parse @n bytes of heap records into @s (keeping a copy in
 * s->raw if @keep_raw, for snapfile_write()). A newer agent's unknown record
 * kinds are skipped. Returns 0, -EBADMSG for a malformed record (with a
 * reason in @why), -ENOMEM. On error @s holds what was parsed before.
 */
int snaprec_add(struct mt_snapshot *s, const void *buf, size_t n, bool keep_raw, char *why,
		size_t wn);

/*
 * snaprec_ages - the age ranges of an AGES record body (@n bytes, @nwalks
 * from the record's arg): validated (first ids ascending, GC counts not
 * decreasing and not above the walk's) into @s, replacing earlier ones.
 * Returns 0, -EBADMSG (reason in @why; @s keeps its ages), -ENOMEM.
 */
int snaprec_ages(struct mt_snapshot *s, const void *body, size_t n, uint32_t nwalks,
		 char *why, size_t wn);

#endif
