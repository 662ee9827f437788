/* stream.h - the socket thread's side of sampling (stream.c): the rings of
 * sampler.c into EVENTS frames. Socket thread only. */
#ifndef MEMTRACE_AGENT_STREAM_H
#define MEMTRACE_AGENT_STREAM_H

#include <stdbool.h>
#include <stddef.h>

#include "memtrace/agent_proto.h"

/*
 * stream_drain - move what the rings hold into EVENTS frames appended with
 * @emit (frame type, payload, len; returns 0 or -1 when it cannot take more).
 * Resolves names (sending CLASS/METHOD records once per session). Returns the
 * number of records emitted, or -1 if @emit refused a frame (the rest stays).
 */
int stream_drain(int (*emit)(unsigned type, const void *payload, size_t len), bool stats);
/* stream_stats - the session's counters. */
void stream_stats(struct mt_ap_sample_stats *st);
/* stream_empty - the rings hold nothing more to send. */
bool stream_empty(void);
/* stream_reset - forget the session's name tables (free their memory). */
void stream_reset(void);

#endif
