/* heapwalk.h - heap snapshots (heapwalk.c), socket thread only. */
#ifndef MEMTRACE_AGENT_HEAPWALK_H
#define MEMTRACE_AGENT_HEAPWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/agent_proto.h"

/*
 * heap_walk - name the classes, walk (the pause) and buffer a snapshot as
 * @req asks (objects identified by address, or by tags with KEEPIDS);
 * @names holds req->nfields NUL-terminated field names in @names_len bytes;
 * @samples req->nsamples sample ids (MT_AP_HEAP_SAMPLES; unaligned).
 * With @freeze (MT_AP_HEAP_FREEZE) the walk is done by a frozen copy of the
 * JVM forked in the pause (freeze.h), while @watch_fd (the memtrace
 * connection) stays open; whatever fails there, the walk is done in a pause.
 * Returns 0 and fills *@done (then send heap_next_chunk() until
 * heap_sent_all(), then DONE, then heap_release()), or -errno with @why
 * (-ECONNRESET: memtrace left during a frozen walk).
 */
int heap_walk(const struct mt_ap_heap_request *req, const struct mt_ap_heap_freeze *freeze,
	      const char *names, size_t names_len, const void *samples, int watch_fd,
	      struct mt_ap_heap_done *done, char *why, size_t n);
/* heap_next_chunk - the next records (at most @cap bytes) into @buf; returns
 * the bytes written (0 when nothing more fits or everything is out). */
long heap_next_chunk(void *buf, size_t cap);
/* heap_sent_all - every record of the pending snapshot was handed out. */
bool heap_sent_all(void);
/* heap_pending - a snapshot is buffered and not yet released. */
bool heap_pending(void);
/* heap_done_info - the pending snapshot's DONE payload. */
void heap_done_info(struct mt_ap_heap_done *d);
/* heap_release - free the snapshot's data; the session's env and its tags
 * stay for the next walk (ages). No-op if none. */
void heap_release(void);
/* heap_copy_held - a frozen copy is kept for memtrace to read (COPY record). */
bool heap_copy_held(void);
/* heap_copy_release - kill and reap that copy (HEAP_RELEASE, a new walk, the
 * session's end). No-op without one. */
void heap_copy_release(void);
/* heap_copy_expire - release it if memtrace has not within its keep_ms after
 * DONE (@now_ns: agent_mono_ns()). */
void heap_copy_expire(uint64_t now_ns);
/* heap_session_end - the session is over: free the snapshot, switch the GC
 * events off and, if a walk tagged objects (MT_AP_HEAP_KEEPIDS), clear every
 * tag of the session (a heap iteration: a pause about as long as a bare
 * walk's; untagged walks cleared theirs already, without a pause); the env
 * stays for the next session. */
void heap_session_end(void);

#endif
