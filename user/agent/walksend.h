/* walksend.h - a walked snapshot cut into HEAP_DATA records (walksend.c):
 * classes, threads, objects, references, roots, values, strings, age ranges,
 * named addresses, visits, sampled objects, the frozen walk's FREEZE and
 * COPY records. Socket thread only. */
#ifndef MEMTRACE_AGENT_WALKSEND_H
#define MEMTRACE_AGENT_WALKSEND_H

#include <stdbool.h>
#include <stddef.h>

#include "memtrace/agent_proto.h"

/* walksend_begin - the walk is over: its snapshot is pending, from the start. */
void walksend_begin(void);
/* walksend_pending - a snapshot is buffered and not yet released. */
bool walksend_pending(void);
/* walksend_chunk - the next records (at most @cap bytes) into @buf; returns
 * the bytes written (0 when nothing more fits or everything is out). */
long walksend_chunk(void *buf, size_t cap);
/* walksend_all_sent - every record of the pending snapshot was handed out. */
bool walksend_all_sent(void);
/* walksend_done_info - the pending snapshot's DONE payload. */
void walksend_done_info(struct mt_ap_heap_done *d);

#endif
