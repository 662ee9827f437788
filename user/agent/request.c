// SPDX-License-Identifier: GPL-2.0
/*
 * request.c - what the agent's socket thread accepts from memtrace: one frame
 * cut from the received bytes (agent_proto.h's header checks, and a payload
 * that fits the receive buffer), then the request it carries checked against
 * the session's first rule (HELLO first) and its type's rules (versions,
 * sampling parameters, the HEAP_REQUEST's field names and flags).
 *
 * Everything here runs inside the production JVM on bytes from a socket, so
 * it trusts no length before checking it against what was received, and it
 * is pure (no JVMTI, no I/O) to be unit-tested (tests/unit/test_agent_request.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "request.h"

/* The freeze flags this agent knows (request_freeze_known()). */
static uint32_t freeze_known = MT_AP_FREEZE_FLAGS;

void request_freeze_known(uint32_t mask)
{
	freeze_known = mask & MT_AP_FREEZE_FLAGS;
}

/* The reason of an mt_ap_decode() error, as the ERROR reply words it. */
static const char *decode_why(long err)
{
	switch (err) {
	case -EMSGSIZE:        return "frame too large";
	case -ENOMSG:          return "unknown frame type";
	case -EPROTONOSUPPORT: return "unsupported protocol version";
	case -EBADMSG:         return "bad magic";
	default:               return "payload size does not match type";
	}
}

/* HEAP_REQUEST: the struct, with FREEZE its struct, then nfields
 * NUL-terminated names, all inside. */
static int check_heap(struct request *req, char *why, size_t why_n)
{
	const char *p, *end;
	size_t len = req->hdr.len, head = sizeof(req->heap);

	if (len < sizeof(req->heap) || len > MT_AP_HEAP_REQ_MAX)
		goto bad;
	memcpy(&req->heap, req->payload, sizeof(req->heap));
	if (req->heap.flags & MT_AP_HEAP_FREEZE) {
		const struct mt_ap_heap_freeze *f = &req->freeze;

		if (len < head + sizeof(*f))
			goto bad;
		memcpy(&req->freeze, (const char *)req->payload + head, sizeof(*f));
		head += sizeof(*f);
		/* ZGC: the heap's range is read in the pause (its _reserved is empty) */
		if ((f->flags & ~freeze_known) || !f->state_addr ||
		    (f->heap_lo >= f->heap_hi && !(f->flags & MT_AP_FREEZE_ZGC)) ||
		    ((f->flags & MT_AP_FREEZE_ZGC) && !(f->flags & MT_AP_FREEZE_MARK)) ||
		    ((f->flags & MT_AP_FREEZE_ZGC_BOUND) && !(f->flags & MT_AP_FREEZE_ZGC)) ||
		    ((f->flags & MT_AP_FREEZE_INPLACE) && !(f->flags & MT_AP_FREEZE_POOL)) ||
		    ((f->flags & MT_AP_FREEZE_REFPOS) && !(f->flags & MT_AP_FREEZE_INPLACE)) ||
		    ((f->flags & MT_AP_FREEZE_NOCLASS) && !(f->flags & MT_AP_FREEZE_REFPOS)))
			goto bad;
		if (f->flags & MT_AP_FREEZE_MARK) {
			if (len < head + sizeof(req->layout))
				goto bad;
			memcpy(&req->layout, (const char *)req->payload + head, sizeof(req->layout));
			head += sizeof(req->layout);
			if (req->layout.size != sizeof(req->layout))
				goto bad;
		}
		if (f->flags & MT_AP_FREEZE_ZGC) {
			if (len < head + sizeof(req->zgc))
				goto bad;
			memcpy(&req->zgc, (const char *)req->payload + head, sizeof(req->zgc));
			head += sizeof(req->zgc);
			if (req->zgc.size != sizeof(req->zgc) ||
			    (req->zgc.variant != MT_AP_ZGC_X && req->zgc.variant != MT_AP_ZGC_GEN) ||
			    ((f->flags & MT_AP_FREEZE_ZGC_BOUND) && !req->zgc.max_copy_mib))
				goto bad;
			if (!(f->flags & MT_AP_FREEZE_ZGC_BOUND))
				req->zgc.max_copy_mib = req->zgc.aim_copy_mib = req->zgc.max_pause_ms = 0;
			if (req->zgc.aim_copy_mib > req->zgc.max_copy_mib || !req->zgc.aim_copy_mib)
				req->zgc.aim_copy_mib = req->zgc.max_copy_mib;
		}
	}
	req->names = (const char *)req->payload + head;
	req->names_len = len - head;
	end = req->names + req->names_len;
	p = req->names;
	for (uint32_t i = 0; i < req->heap.nfields && p; i++) {
		const char *z = memchr(p, '\0', (size_t)(end - p));

		p = z ? z + 1 : NULL;
	}
	if (!p || (req->heap.flags & ~MT_AP_HEAP_FLAGS))
		goto bad;
	req->samples = NULL;
	if (req->heap.flags & MT_AP_HEAP_SAMPLES) {
		if (req->heap.nsamples > MT_AP_HEAP_MAX_SAMPLES ||
		    (size_t)(end - p) < (size_t)req->heap.nsamples * 8)
			goto bad;
		req->samples = p;
		req->names_len = (size_t)(p - req->names);
	} else {
		req->heap.nsamples = 0;
	}
	return 0;
bad:
	snprintf(why, why_n, "malformed heap request");
	return -EPROTO;
}

/* The rules of a decoded frame's type. Returns 0 or -errno with @why. */
static int check_request(struct request *req, bool hello_done, char *why, size_t why_n)
{
	const struct mt_ap_hdr *h = &req->hdr;

	if (!hello_done && h->type != MT_AP_HELLO) {
		snprintf(why, why_n, "the first frame must be HELLO");
		return -EPROTO;
	}
	switch (h->type) {
	case MT_AP_HELLO:
		memcpy(&req->hello, req->payload, sizeof(req->hello));
		if (req->hello.min_version > MT_AP_VERSION ||
		    req->hello.max_version < MT_AP_VERSION) {
			snprintf(why, why_n, "this agent speaks protocol version %d", MT_AP_VERSION);
			return -EPROTONOSUPPORT;
		}
		return 0;
	case MT_AP_PING:
		memcpy(&req->ping, req->payload, sizeof(req->ping));
		return 0;
	case MT_AP_DETACH:
	case MT_AP_SAMPLE_STOP:
	case MT_AP_HEAP_RELEASE:
		return 0;
	case MT_AP_SAMPLE_START:
		memcpy(&req->sample, req->payload, sizeof(req->sample));
		if (req->sample.rec_version != MT_AP_REC_VERSION) {
			snprintf(why, why_n, "this agent encodes sample records version %d",
				 MT_AP_REC_VERSION);
			return -EPROTONOSUPPORT;
		}
		if (!req->sample.interval || req->sample.max_depth < 1 ||
		    req->sample.max_depth > MT_AP_MAX_DEPTH) {
			snprintf(why, why_n, "interval must be > 0 and depth 1..%d",
				 MT_AP_MAX_DEPTH);
			return -EINVAL;
		}
		return 0;
	case MT_AP_HEAP_REQUEST:
		return check_heap(req, why, why_n);
	default: /* a reply type sent to us */
		snprintf(why, why_n, "unexpected frame type");
		return -EPROTO;
	}
}

long request_next(const void *buf, size_t n, size_t cap, bool hello_done, struct request *req,
		  char *why, size_t why_n)
{
	long size;
	int err;

	memset(req, 0, sizeof(*req));
	size = mt_ap_decode(buf, n, &req->hdr, &req->payload);
	if (size == -EAGAIN) {
		/* a valid header whose frame cannot fit: refuse it now */
		if (n >= MT_AP_HDR_SIZE && req->hdr.len > cap - MT_AP_HDR_SIZE) {
			snprintf(why, why_n, "%s", decode_why(-EMSGSIZE));
			return -EMSGSIZE;
		}
		return 0;
	}
	if (size < 0) {
		snprintf(why, why_n, "%s", decode_why(size));
		return size;
	}
	err = check_request(req, hello_done, why, why_n);
	return err ? err : size;
}
