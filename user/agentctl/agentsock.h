/* agentsock.h - memtrace's client side of the agent socket protocol
 * (include/memtrace/agent_proto.h). The agent listens on
 * /tmp/.memtrace-<nspid>.sock inside the target's mount namespace; we connect
 * through /proc/PID/root with the target's uid/gid (the agent accepts only
 * its own uid and root, checked with SO_PEERCRED).
 * Functions print nothing unless stated: callers choose the message.
 */
#ifndef MEMTRACE_AGENTSOCK_H
#define MEMTRACE_AGENTSOCK_H

#include <stddef.h>
#include <stdint.h>

#include "memtrace/agent_proto.h"
#include "jvm/proc.h"

#define MT_AGENT_REPLY_MS 5000 /* how long we wait for one reply frame */

struct mt_agentsock {
	int fd;                     /* connected socket, -1 when closed */
	uint32_t seq;               /* our next frame's seq */
	struct mt_ap_error last_err;/* the agent's last ERROR frame (code 0 if none) */
	int tmpfd;                  /* the JVM's /tmp while fd >= 0 (its sockets are
				     * removed through it if the JVM died) */
	int pid, nspid;             /* the JVM's host pid and its own */
	bool detached;              /* we asked the agent to end the session */
};

/* agentsock_path - the socket's path inside the target: "/tmp/.memtrace-<nspid>.sock". */
void agentsock_path(int nspid, char *out, size_t n);

/*
 * agentsock_connect - connect to the agent of JVM @p. Returns 0, or -errno:
 * -ENOENT (no socket: agent not loaded), -ECONNREFUSED (stale socket),
 * -EACCES, ... Prints nothing.
 */
int agentsock_connect(const struct mt_proc *p, struct mt_agentsock *s);

/*
 * agentsock_close - close the connection. No operation if already closed.
 * If the JVM is gone (killed with -9: it could not remove them), its agent
 * socket and attach listener's socket are removed from its /tmp
 * (agentsock_remove_leftovers); what cannot be is named in a warning. When
 * the agent hung up unasked (no DETACH, no ERROR frame), the JVM may be
 * dying: waited for up to 2 s.
 */
void agentsock_close(struct mt_agentsock *s);

/*
 * agentsock_remove_leftovers - remove the sockets a JVM that exited without
 * its own cleanup (kill -9) leaves in its /tmp (@tmpfd, opened while it
 * lived): its agent's .memtrace-<nspid>.sock and its attach listener's
 * .java_pid<nspid> (memtrace's attach made it start). A socket someone
 * listens on stays (attach_remove_stale); a killed JVM's threads may hold
 * them a moment after its leader died: retried for up to 2 s. Returns 0 or
 * the first -errno. Prints nothing.
 */
int agentsock_remove_leftovers(int tmpfd, int nspid);

/*
 * agentsock_sweep - remove every agent socket in the /tmp of JVM @p that no
 * one listens on: what JVMs killed with -9 while no memtrace watched them
 * left (their pids are dead, or came round again). @p's own socket is left
 * to the session (a load replaces it; a connection explains it). Returns
 * how many were removed, or -errno. Prints nothing.
 */
int agentsock_sweep(const struct mt_proc *p);

/*
 * agentsock_request - send one frame of @type with @len payload bytes, then
 * wait (<= MT_AGENT_REPLY_MS) for the reply frame of type @want, whose payload
 * (exactly mt_ap_payload_size(@want) bytes) goes to @out.
 * Returns 0; -EREMOTEIO if the agent answered ERROR (see s->last_err);
 * -ETIMEDOUT; -ECONNRESET if it closed; -EPROTO & co for a malformed frame.
 */
int agentsock_request(struct mt_agentsock *s, unsigned type, const void *payload,
		      size_t len, unsigned want, void *out);

/* agentsock_hello - HELLO → HELLO_REPLY. Returns as agentsock_request(). */
int agentsock_hello(struct mt_agentsock *s, struct mt_ap_hello_reply *r);

/* agentsock_ping - PING → PONG with the same cookie. Returns as agentsock_request(). */
int agentsock_ping(struct mt_agentsock *s);

/* agentsock_detach - DETACH → DETACH_ACK; the agent goes dormant, we close. */
int agentsock_detach(struct mt_agentsock *s);

/*
 * agentsock_send - send one frame of @type (no reply awaited). Returns 0 or -errno.
 * The frame's seq is s->seq before the call (replies echo it).
 */
int agentsock_send(struct mt_agentsock *s, unsigned type, const void *payload, size_t len);

/*
 * agentsock_write_fd - write the encoded frame(s) @buf (@n bytes) with @fd
 * passed along on the first byte (SCM_RIGHTS: the agent gets its own
 * descriptor of the same file; ours stays the caller's). Returns 0 or -errno.
 */
int agentsock_write_fd(struct mt_agentsock *s, const void *buf, size_t n, int fd);

/*
 * agentsock_recv - read the next frame of any type, waiting at most
 * @timeout_ms. Its payload (h->len bytes, checked against @cap) goes to @buf.
 * Returns 1 for a frame, 0 on timeout (nothing consumed), -ECONNRESET if the
 * agent closed, -EMSGSIZE if the payload exceeds @cap, -EINTR if a signal
 * interrupted the wait, other -errno. An ERROR frame is returned as any other.
 */
int agentsock_recv(struct mt_agentsock *s, struct mt_ap_hdr *h, void *buf, size_t cap,
		   int timeout_ms);

#endif
