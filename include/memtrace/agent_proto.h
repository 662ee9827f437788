/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agent_proto.h - the wire protocol between memtrace (user/agentsock.c) and
 * its JVMTI agent (user/agent/), over a unix stream socket.
 *
 * Every frame is a 16-byte header followed by exactly hdr.len payload bytes:
 *
 *     magic u32 'MTAP' | version u16 | type u16 | len u32 | seq u32
 *
 * Both ends run on the same host, so integers are in native byte order.
 * Fixed-width types only, no pointers; payload structs are packed by layout
 * (every field naturally aligned, sizes asserted below).
 *
 * A session: the client sends HELLO first; the agent answers HELLO_REPLY.
 * Then PING/PONG, DETACH/DETACH_ACK (the agent goes dormant and closes).
 * A frame with a bad magic, another version, an unknown type, a payload
 * larger than MT_AP_MAX_PAYLOAD, or a payload of the wrong size for its type
 * is answered by ERROR and the connection is closed. Decoding never trusts
 * hdr.len before it is checked against MT_AP_MAX_PAYLOAD and the buffer.
 *
 * The encode/decode helpers are static inline and pure, so both the agent
 * (built without memtrace's user/ code) and the unit tests use them.
 */
#ifndef MEMTRACE_AGENT_PROTO_H
#define MEMTRACE_AGENT_PROTO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MT_AP_MAGIC        0x5041544du /* "MTAP" read as little-endian bytes */
#define MT_AP_VERSION      1           /* bump on any incompatible change */
#define MT_AP_HDR_SIZE     16
#define MT_AP_MAX_PAYLOAD  (1u << 20)  /* larger frames are refused, not read */
#define MT_AP_STR          64          /* fixed string fields, NUL padded */

/* Socket path inside the target's mount namespace: "/tmp/.memtrace-<nspid>.sock". */
#define MT_AP_SOCK_FMT     "/tmp/.memtrace-%d.sock"

/* Agent_OnAttach's return codes (the JVM reports them as "return code: N"). */
enum mt_agent_rc {
	MT_AGENT_OK        = 0,
	MT_AGENT_E_OPTIONS = 2, /* malformed options string */
	MT_AGENT_E_JVMTI   = 3, /* GetEnv or a JVMTI call failed */
	MT_AGENT_E_SOCKET  = 4, /* the listening socket could not be created */
	MT_AGENT_E_THREAD  = 5, /* the agent thread could not be started */
	MT_AGENT_E_TWICE   = 6, /* another copy (another path) already runs in this JVM */
};

enum mt_ap_type {
	MT_AP_HELLO        = 1, /* client → agent: struct mt_ap_hello */
	MT_AP_HELLO_REPLY  = 2, /* agent → client: struct mt_ap_hello_reply */
	MT_AP_PING         = 3, /* client → agent: struct mt_ap_ping */
	MT_AP_PONG         = 4, /* agent → client: the PING's struct mt_ap_ping */
	MT_AP_DETACH       = 5, /* client → agent: no payload; agent goes dormant */
	MT_AP_DETACH_ACK   = 6, /* agent → client: no payload; then the agent closes */
	MT_AP_ERROR        = 7, /* either way: struct mt_ap_error; then the sender closes */
	MT_AP_TYPE_MAX     = 7,
};

struct mt_ap_hdr {
	uint32_t magic;   /* MT_AP_MAGIC */
	uint16_t version; /* MT_AP_VERSION of the sender */
	uint16_t type;    /* enum mt_ap_type */
	uint32_t len;     /* payload bytes after the header, <= MT_AP_MAX_PAYLOAD */
	uint32_t seq;     /* sender's frame counter; replies echo the request's seq */
};

struct mt_ap_hello {
	uint16_t min_version; /* oldest protocol version the client speaks */
	uint16_t max_version; /* newest protocol version the client speaks */
	uint32_t client_pid;  /* memtrace's pid (as memtrace sees it), for the agent's log */
};

struct mt_ap_hello_reply {
	uint16_t version;        /* protocol version the agent chose */
	uint16_t state;          /* 0: first session since the load; 1: woke from dormant */
	uint32_t pid;            /* the JVM's pid in its own pid namespace */
	uint32_t jvmti_version;  /* GetVersionNumber() */
	uint32_t attach_count;   /* Agent_OnAttach/OnLoad calls so far in this JVM */
	uint64_t sessions;       /* client sessions accepted so far, this one included */
	uint64_t loaded_ns;      /* CLOCK_REALTIME when the agent first started */
	char agent_version[MT_AP_STR]; /* memtrace version the agent was built from */
	char java_version[MT_AP_STR];  /* java.vm.version (JVMTI sees VM properties only) */
	char vm_name[MT_AP_STR];       /* java.vm.name system property */
};

struct mt_ap_ping {
	uint64_t cookie; /* echoed in PONG */
};

struct mt_ap_error {
	int32_t code;              /* positive errno-style code */
	uint32_t reserved;
	char msg[128];             /* NUL-terminated reason */
};

_Static_assert(sizeof(struct mt_ap_hdr) == MT_AP_HDR_SIZE, "header layout");
_Static_assert(sizeof(struct mt_ap_hello) == 8, "hello layout");
_Static_assert(sizeof(struct mt_ap_hello_reply) == 32 + 3 * MT_AP_STR, "hello reply layout");
_Static_assert(sizeof(struct mt_ap_ping) == 8, "ping layout");
_Static_assert(sizeof(struct mt_ap_error) == 136, "error layout");

/* mt_ap_payload_size - the exact payload size of @type, or -1 if unknown. */
static inline long mt_ap_payload_size(unsigned type)
{
	switch (type) {
	case MT_AP_HELLO:       return sizeof(struct mt_ap_hello);
	case MT_AP_HELLO_REPLY: return sizeof(struct mt_ap_hello_reply);
	case MT_AP_PING:
	case MT_AP_PONG:        return sizeof(struct mt_ap_ping);
	case MT_AP_DETACH:
	case MT_AP_DETACH_ACK:  return 0;
	case MT_AP_ERROR:       return sizeof(struct mt_ap_error);
	default:                return -1;
	}
}

/*
 * mt_ap_encode - write a frame (header + @len payload bytes) into @buf of
 * @cap bytes. Returns the frame size, -EMSGSIZE if @len exceeds the limit
 * or @cap, -EINVAL for a NULL payload with a non-zero @len.
 */
static inline long mt_ap_encode(void *buf, size_t cap, unsigned type, uint32_t seq,
				const void *payload, size_t len)
{
	struct mt_ap_hdr h = {
		.magic = MT_AP_MAGIC, .version = MT_AP_VERSION,
		.type = (uint16_t)type, .len = (uint32_t)len, .seq = seq,
	};

	if (len > MT_AP_MAX_PAYLOAD || cap < MT_AP_HDR_SIZE || len > cap - MT_AP_HDR_SIZE)
		return -EMSGSIZE;
	if (len && !payload)
		return -EINVAL;
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy((char *)buf + MT_AP_HDR_SIZE, payload, len);
	return (long)(MT_AP_HDR_SIZE + len);
}

/*
 * mt_ap_check_hdr - validate a received header.
 * Returns 0; -EBADMSG for a bad magic; -EPROTONOSUPPORT for another version;
 * -EMSGSIZE for a payload over MT_AP_MAX_PAYLOAD; -ENOMSG for an unknown type;
 * -EPROTO for a payload whose size does not match its type.
 */
static inline int mt_ap_check_hdr(const struct mt_ap_hdr *h)
{
	long want;

	if (h->magic != MT_AP_MAGIC)
		return -EBADMSG;
	if (h->version != MT_AP_VERSION)
		return -EPROTONOSUPPORT;
	if (h->len > MT_AP_MAX_PAYLOAD)
		return -EMSGSIZE;
	want = mt_ap_payload_size(h->type);
	if (want < 0)
		return -ENOMSG;
	if ((long)h->len != want)
		return -EPROTO;
	return 0;
}

/*
 * mt_ap_decode - parse one frame at the start of @buf (@n bytes available).
 * On success fills *@h, points *@payload into @buf and returns the frame size.
 * Returns -EAGAIN if @n holds only part of a frame (read more), or the
 * errors of mt_ap_check_hdr(). Never reads past @buf + @n.
 */
static inline long mt_ap_decode(const void *buf, size_t n, struct mt_ap_hdr *h,
				const void **payload)
{
	int err;

	if (n < MT_AP_HDR_SIZE)
		return -EAGAIN;
	memcpy(h, buf, sizeof(*h));
	err = mt_ap_check_hdr(h);
	if (err)
		return err;
	if (n - MT_AP_HDR_SIZE < h->len)
		return -EAGAIN;
	*payload = (const char *)buf + MT_AP_HDR_SIZE;
	return (long)(MT_AP_HDR_SIZE + h->len);
}

#endif
