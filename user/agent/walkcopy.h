/* walkcopy.h - a frozen walk's copy after the pause (walkcopy.c): wait for its
 * walk, take its records (or hand memtrace their addresses and keep the copy
 * for it to read), kill it. Socket thread only. */
#ifndef MEMTRACE_AGENT_WALKCOPY_H
#define MEMTRACE_AGENT_WALKCOPY_H

#include <stdbool.h>
#include <stdint.h>

/* walkcopy_wait_for_gc - before a frozen walk of an allocating JVM: wait (up
 * to @ms) for the next GC to end (the session env counts
 * GarbageCollectionFinish), so that the fork comes when the young generation
 * is empty; how long it waited goes into hw.fz.rec. */
void walkcopy_wait_for_gc(uint32_t ms);
/*
 * walkcopy_finish - after the pause: wait for the copy's walk (watching
 * @watch_fd, the memtrace connection), take its records, kill it - or, with
 * MT_AP_FREEZE_DIRECT, keep it as the held copy (hw.copy says where memtrace
 * reads them). Returns 0, or -errno with the reason in hw.fz.rec (the copy
 * is gone either way; the caller walks in a pause instead, unless memtrace
 * left).
 */
int walkcopy_finish(int watch_fd, void (*idle)(void));
/* walkcopy_held - a frozen copy is kept for memtrace to read (COPY record). */
bool walkcopy_held(void);
/* walkcopy_release - kill and reap that copy (HEAP_RELEASE, a new walk, the
 * session's end). No-op without one. */
void walkcopy_release(void);
/* walkcopy_done_sent - DONE is out: the held copy (if any) lives at most
 * COPY_KEEP_MS more. */
void walkcopy_done_sent(void);
/* walkcopy_expire - release it if memtrace has not within its keep_ms after
 * DONE (@now_ns: agent_mono_ns()). */
void walkcopy_expire(uint64_t now_ns);

#endif
