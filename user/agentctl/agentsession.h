/* agentsession.h - open a session with memtrace's agent in a JVM: load the
 * agent if it is not mapped yet, connect, say HELLO; explain failures once.
 * Shared by `attach`, `detach`, `age` and `leaks`. */
#ifndef MEMTRACE_AGENTSESSION_H
#define MEMTRACE_AGENTSESSION_H

#include <stdbool.h>
#include <stddef.h>

#include "agentctl/agentsock.h"
#include "jvm/proc.h"

#define RECONNECT_MS 3000 /* a loaded agent recreates a removed socket within ~1 s */

/* agentsession_explain - print the one p_err() for agent socket error @err. */
void agentsession_explain(const struct mt_proc *p, const struct mt_agentsock *s, int err);

/*
 * agentsession_connect - connect and say HELLO, retrying for @retry_ms while a
 * loaded agent (re)creates its socket. Returns 0 or -errno (nothing printed;
 * -ESRCH at once when the JVM exits meanwhile). First sweeps the agent sockets
 * of dead JVMs from the JVM's /tmp (agentsock_sweep).
 */
int agentsession_connect(const struct mt_proc *p, struct mt_agentsock *s,
			 struct mt_ap_hello_reply *r, int retry_ms);

/*
 * agentsession_load - place the agent library in the target, run the JVM's
 * `load`, remove the copy; @shown receives the path the JVM saw. Returns 0 or
 * -errno after printing the reason.
 */
int agentsession_load(const struct mt_proc *p, char *shown, size_t n);

/*
 * agentsession_open - load the agent if it is not mapped in @p yet (*@loaded
 * says so), then connect and HELLO. Returns 0, or -errno after printing the
 * reason once (the caller does not print again).
 */
int agentsession_open(const struct mt_proc *p, struct mt_agentsock *s,
		      struct mt_ap_hello_reply *r, bool *loaded);

#endif
