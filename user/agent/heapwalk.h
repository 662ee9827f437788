/* heapwalk.h - heap snapshots (heapwalk.c, the walk's driver), socket thread
 * only; the records go out through walksend.h, a held frozen copy is
 * walkcopy.h's. */
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
 * connection) stays open, calling @idle (NULL: none) while the copy walks;
 * whatever fails there, the walk is done in a pause.
 * With @zgc (MT_AP_FREEZE_ZGC) the heap is ZGC's: the copy copies it in the
 * pause (zgcfreeze.h) and a failed fork fails the walk (no pause walk).
 * With @layout too (MT_AP_FREEZE_MARK) the copy marks the heap itself
 * (walkmark.c); if the mark fails, the copy of a second fork walks with
 * JVMTI, and a MARK record says why.
 * Returns 0 and fills *@done (then send walksend_chunk() until
 * walksend_all_sent(), then DONE, then heap_release()), or -errno with @why
 * (-ECONNRESET: memtrace left during a frozen walk).
 */
int heap_walk(const struct mt_ap_heap_request *req, const struct mt_ap_heap_freeze *freeze,
	      const struct mt_ap_heap_layout *layout, const struct mt_ap_heap_zgc *zgc,
	      const char *names, size_t names_len, const void *samples, int watch_fd,
	      void (*idle)(void), struct mt_ap_heap_done *done, char *why, size_t n);
/* heap_walk_pool - the next heap_walk()'s MT_AP_FREEZE_POOL memfd (-1:
 * none); heapwalk.c owns it from now on (an unused one is closed). */
void heap_walk_pool(int fd);

/* heap_walk_live - while a frozen copy marks with MT_AP_FREEZE_LIVE asked:
 * true once per walk, with where the copy publishes its records' progress in
 * *@at (the caller sends it as a LIVE record); false otherwise. */
bool heap_walk_live(struct mt_ap_hlive_at *at);
/* heap_release - free the snapshot's data (DONE is out: a held frozen copy
 * now lives at most its keep_ms); the session's env and its tags stay for
 * the next walk (ages). No-op if none. */
void heap_release(void);
/* heap_session_end - the session is over: release a held frozen copy, free
 * the snapshot, switch the GC events off and, if a walk tagged objects
 * (MT_AP_HEAP_KEEPIDS), clear every tag of the session (walkenv_end()). */
void heap_session_end(void);

#endif
