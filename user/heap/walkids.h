/* walkids.h - ids for an untagged heap walk's objects (walkids.c). */
#ifndef MEMTRACE_WALKIDS_H
#define MEMTRACE_WALKIDS_H

#include <stddef.h>

struct mt_snapshot;

/*
 * walkids_resolve - turn the NAMED and VISITS records an untagged walk sent
 * (agent_proto.h) into the snapshot's objects, references and roots; give
 * the values and strings the ids of their owners; fill s->info's counts. Ids
 * in the order objects were first met, from the NAMED records' next_id; an
 * object's class is where its CLASS reference leads (a class object's is
 * java.lang.Class); a MAYBE reference is kept if its field is projected:
 * named in @fields (@nfields names) or every field under
 * MT_AP_HEAP_ALLFIELDS, as are values (whose type must match the field's,
 * else counted in info.mismatches). Frees the visits. No visits and no
 * names: nothing to do, 0. Returns 0, -EPROTO with @why (a referrer, owner
 * or class that is no object of the walk: the agent's view of HotSpot's
 * frames was wrong, walk again with tags) or -ENOMEM.
 */
int walkids_resolve(struct mt_snapshot *s, const char *const *fields, int nfields,
		    char *why, size_t wn);

#endif
