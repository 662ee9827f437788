/* request.h - the requests memtrace sends the agent (request.c): framing and
 * validation of the bytes the socket thread received, before it acts on them.
 * Pure: no JVMTI, no JNI, no socket, no state (unit-tested on its own). */
#ifndef MEMTRACE_AGENT_REQUEST_H
#define MEMTRACE_AGENT_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/agent_proto.h"

/* Longest reason request_next() writes (the ERROR reply's msg holds 128 bytes). */
#define REQUEST_WHY 128

/* A request that may be acted on: its header and its payload, decoded. */
struct request {
	struct mt_ap_hdr hdr;
	const void *payload;         /* hdr.len bytes inside the caller's buffer */
	union {                      /* by hdr.type (a copy: the payload may be unaligned) */
		struct mt_ap_hello hello;          /* HELLO */
		struct mt_ap_ping ping;            /* PING */
		struct mt_ap_sample_start sample;  /* SAMPLE_START */
		struct mt_ap_heap_request heap;    /* HEAP_REQUEST */
	};
	struct mt_ap_heap_freeze freeze; /* HEAP_REQUEST with MT_AP_HEAP_FREEZE, else zeros */
	struct mt_ap_heap_layout layout; /* with MT_AP_FREEZE_MARK (after the freeze struct),
					  * else zeros */
	struct mt_ap_heap_zgc zgc;       /* with MT_AP_FREEZE_ZGC (after the layout), else zeros */
	const char *names;           /* HEAP_REQUEST: heap.nfields NUL-terminated field */
	size_t names_len;            /* names, in names_len bytes after the struct(s) */
	const void *samples;         /* HEAP_REQUEST with MT_AP_HEAP_SAMPLES: heap.nsamples
				      * sample ids (8 bytes each, unaligned) after the names */
};

/*
 * request_next - the request at the start of @buf, of which @n bytes were
 * received into a buffer of @cap bytes (@cap > MT_AP_HDR_SIZE); @hello_done:
 * the session's HELLO was accepted.
 * Returns the frame's size (> 0) and fills *@req; 0 if the frame is
 * incomplete and fits in @cap (receive more); or -errno, the code of the
 * ERROR reply, with its message in @why (@n bytes, REQUEST_WHY suffice) and
 * in req->hdr.seq the seq to echo (0 before a whole header):
 *   -EBADMSG          bad magic
 *   -EPROTONOSUPPORT  another protocol version (header, or HELLO's range)
 *   -EMSGSIZE         a payload over MT_AP_MAX_PAYLOAD or larger than @cap
 *   -ENOMSG           an unknown frame type
 *   -EPROTO           a payload of the wrong size for its type, a first
 *                     frame other than HELLO, a reply type, a malformed
 *                     HEAP_REQUEST (names, flags, size; with FREEZE: its
 *                     struct missing, unknown freeze flags, a heap range
 *                     that is empty, a zero state address; with MARK: the
 *                     layout missing or of another size)
 *   -EINVAL           SAMPLE_START with a zero interval or a depth out of
 *                     1..MT_AP_MAX_DEPTH
 * (SAMPLE_START with another record version: -EPROTONOSUPPORT.) Checks that
 * depend on the session's state (sampling on, stopping) are the caller's.
 * Never reads past @buf + @n; *@req points into @buf.
 */
long request_next(const void *buf, size_t n, size_t cap, bool hello_done, struct request *req,
		  char *why, size_t why_n);

/*
 * request_freeze_known - the freeze flags request_next() accepts from now on
 * (MT_AP_FREEZE_FLAGS at first): tests make this agent answer as an older
 * one, which refuses a flag it does not know (memtrace then asks without it;
 * the JVM's MEMTRACE_AGENT_TEST_FREEZE_FLAGS, server.c).
 */
void request_freeze_known(uint32_t mask);

#endif
