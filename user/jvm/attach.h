/* attach.h - HotSpot's dynamic attach protocol, across pid and mount namespaces.
 *
 * The protocol (the jattach way, one step per function in attach.c):
 *   1. the JVM's own pid is the last NStgid (struct mt_proc.nspid);
 *   2. its listener is the unix socket /tmp/.java_pid<nspid> in its mount
 *      namespace, reached through /proc/PID/root;
 *   3. if absent: create .attach_pid<nspid> in its cwd (or its /tmp), send
 *      SIGQUIT, poll for the socket;
 *   4. connect with the target's euid/egid (HotSpot checks the peer's
 *      credentials);
 *   5. send "1\0<cmd>\0<arg1>\0<arg2>\0<arg3>\0";
 *   6. read the reply until EOF: "<code>\n<output>".
 */
#ifndef MEMTRACE_ATTACH_H
#define MEMTRACE_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "jvm/proc.h"

#define MT_ATTACH_TIMEOUT_MS 10000  /* how long we wait for the listener to start */
#define MT_ATTACH_REPLY_MAX  65536  /* reply bytes kept; the rest is drained */
#define MT_ATTACH_NO_RC      (-100000) /* agent_rc when the reply carries none */

/* A parsed reply of the attach listener. */
struct mt_attach_reply {
	int code;        /* first line: 0 when the command was executed */
	int agent_rc;    /* `load` only: the agent's Agent_OnAttach return, or MT_ATTACH_NO_RC */
	char text[1024]; /* everything after the first line, truncated, for messages */
};

/*
 * attach_parse_reply - parse @n bytes of a listener's reply. The first line
 * is the listener's result code. For @is_load (measured on JDK 17 and 25):
 *   loaded, Agent_OnAttach ran:  "0\nreturn code: N\n"  (both; JDK 8 sent "0\nN\n")
 *   library not loadable:        JDK 17 "-1\n<message>", JDK 25 "0\n<message>"
 * so a `load` reply of code 0 without a return-code line is a refusal too
 * (agent_rc stays MT_ATTACH_NO_RC, text holds the JVM's message). Pure.
 * Returns 0, or -EBADMSG if the first line is not a decimal integer.
 */
int attach_parse_reply(const char *buf, size_t n, bool is_load, struct mt_attach_reply *r);

/*
 * attach_build_request - encode "1\0cmd\0a1\0a2\0a3\0" (NULL args become "")
 * into @buf of @cap bytes. Returns the byte count or -ENAMETOOLONG. Pure.
 */
int attach_build_request(char *buf, size_t cap, const char *cmd, const char *a1,
			 const char *a2, const char *a3);

/*
 * attach_sigquit_caught - does the "SigCgt:" line of a /proc/PID/status text
 * say that SIGQUIT has a handler? Returns 1 yes, 0 no, -EINVAL if absent. Pure.
 * (A JVM run with -Xrs does not catch SIGQUIT: the signal would kill it.)
 */
int attach_sigquit_caught(const char *status);

/*
 * attach_open_dir - open directory @path (absolute, as the target sees it)
 * inside the target's root, resolving symlinks inside that root only
 * (openat2 RESOLVE_IN_ROOT), so a container cannot point us at host files.
 * Returns an O_RDONLY|O_DIRECTORY|O_CLOEXEC fd or -errno. Prints nothing.
 */
int attach_open_dir(const struct mt_proc *p, const char *path);

/*
 * attach_remove_stale - remove the unix socket @name of directory @dirfd
 * (a JVM's /tmp, opened while it lived) if no one listens on it any more:
 * what a JVM killed with -9 leaves (its attach listener's .java_pid<N>, the
 * agent's .memtrace-<N>.sock). A socket someone still listens on (a new
 * process that got the pid) stays. Returns 1 removed, 0 nothing to remove,
 * or -errno. Prints nothing.
 */
int attach_remove_stale(int dirfd, const char *name);

/*
 * attach_connect_as - connect to the unix socket @name in directory @dirfd
 * with the target's effective uid/gid (switched with setegid/seteuid around
 * connect() when we are root, then switched back). Returns the socket fd or
 * -errno (-EPERM if we are neither root nor the target's uid). Prints nothing.
 */
int attach_connect_as(const struct mt_proc *p, int dirfd, const char *name);

/*
 * attach_command - run one attach-listener command (steps 2-6) in the JVM
 * described by @p and parse the reply into *@r. Starts the listener if needed.
 * Returns 0 when a reply was read (check r->code), or -errno after printing
 * what failed and what to do (p_err).
 */
int attach_command(const struct mt_proc *p, const char *cmd, const char *a1,
		   const char *a2, const char *a3, struct mt_attach_reply *r);

/*
 * attach_load - `load` the agent library at @path (absolute, as the target
 * sees it) with @options. Returns 0 when Agent_OnAttach returned 0; otherwise
 * prints why (p_err) and returns -errno (-ENOEXEC: the JVM refused the library,
 * -ECANCELED: Agent_OnAttach returned *@agent_rc != 0). @agent_rc may be NULL.
 */
int attach_load(const struct mt_proc *p, const char *path, const char *options, int *agent_rc);

#endif
