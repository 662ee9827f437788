// SPDX-License-Identifier: GPL-2.0
/* agentsession.c - load, connect and greet memtrace's agent in a JVM. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "agentctl/agentfile.h"
#include "agentctl/agentsession.h"
#include "jvm/attach.h"
#include "jvm/proc.h"
#include "lib/util.h"

/* Whether the agent socket @path of JVM @p was made before the JVM started:
 * left by an earlier process that had its pid (a JVM killed before its agent
 * could remove it; pids come round again). */
static bool socket_predates(const struct mt_proc *p, const char *path)
{
	char host[PATH_MAX];
	struct stat st;
	time_t started = proc_start_time(p->pid);

	snprintf(host, sizeof(host), "%s%s", p->root, path);
	if (!started || stat(host, &st))
		return false;
	return st.st_mtime + 1 < started;
}

/* Explain an agent socket error once. */
void agentsession_explain(const struct mt_proc *p, const struct mt_agentsock *s, int err)
{
	char path[64];

	agentsock_path(p->nspid, path, sizeof(path));
	/* a hang-up may be the JVM dying (kill -9 closes its sockets first) */
	if (err == -ESRCH || (err == -ECONNRESET && !s->last_err.code ?
			      proc_wait_gone(p->pid, 2000) : !proc_exists(p->pid))) {
		/* whatever the socket said, the cause is that the JVM is gone */
		p_err("JVM %d exited while memtrace talked to its agent", p->pid);
		return;
	}
	switch (err) {
	case -ENOENT:
		p_err("no memtrace agent listens in JVM %d (%s is absent): run `memtrace attach "
		      "-p %d` first", p->pid, path, p->pid);
		break;
	case -ECONNREFUSED:
		if (socket_predates(p, path))
			p_err("no memtrace agent listens in JVM %d: %s is older than the JVM, "
			      "left by an earlier process with its pid; `memtrace attach -p %d` "
			      "loads an agent (which replaces it)", p->pid, path, p->pid);
		else
			p_err("%s in JVM %d is a stale socket (no agent listens); `memtrace attach "
			      "-p %d --load` starts one", path, p->pid, p->pid);
		break;
	case -EPERM:
	case -EACCES:
		p_err("not allowed to connect to %s in JVM %d (uid %u): run memtrace as root or "
		      "as the JVM's user", path, p->pid, (unsigned)p->uid);
		break;
	case -EREMOTEIO:
		p_err("the agent in JVM %d refused: %s", p->pid, s->last_err.msg);
		break;
	case -ECONNRESET:
		p_err("the agent in JVM %d closed the connection (another uid? a protocol "
		      "mismatch?)", p->pid);
		break;
	case -ETIMEDOUT:
		p_err("the agent in JVM %d did not answer within %d ms", p->pid,
		      MT_AGENT_REPLY_MS);
		break;
	default:
		p_err("talking to the agent in JVM %d (%s): %s", p->pid, path, strerror(-err));
	}
}

#define MT_BUSY_WAIT_MS 10000 /* how long to wait for another session to end */

/* Connect and say HELLO, retrying while a loaded agent (re)creates its socket
 * and, for up to MT_BUSY_WAIT_MS, while another memtrace session holds it. */
int agentsession_connect(const struct mt_proc *p, struct mt_agentsock *s,
			 struct mt_ap_hello_reply *r, int retry_ms)
{
	uint64_t t0 = mono_ns();
	int err;

	bool told = false;

	agentsock_sweep(p); /* other JVMs' leftovers; best effort */
	for (;;) {
		for (;;) {
			err = agentsock_connect(p, s);
			if (!err)
				break;
			if ((err != -ENOENT && err != -ECONNREFUSED) || ms_since(t0) >= retry_ms)
				return err;
			if (!proc_exists(p->pid))
				return -ESRCH; /* no agent will come: do not wait for it */
			usleep(50000);
		}
		err = agentsock_hello(s, r);
		if (!err)
			return 0;
		/* The agent serves one memtrace at a time: wait (bounded) for the
		 * other session to end rather than fail at once. */
		if (err != -EREMOTEIO || s->last_err.code != EBUSY ||
		    ms_since(t0) >= (retry_ms > MT_BUSY_WAIT_MS ? retry_ms : MT_BUSY_WAIT_MS)) {
			agentsock_close(s);
			return err;
		}
		if (!proc_exists(p->pid)) {
			agentsock_close(s);
			return -ESRCH;
		}
		if (!told) {
			p_info("JVM %d: another memtrace session is using the agent; waiting up to "
			       "%d s", p->pid, MT_BUSY_WAIT_MS / 1000);
			told = true;
		}
		agentsock_close(s);
		usleep(100000);
	}
}

/* Remove a dead socket at the agent's path @sock before loading: an earlier
 * process with this pid killed with -9 left it, and the agent of a JVM of
 * another uid could not replace it (/tmp is sticky), so it would never
 * listen. A socket someone listens on stays (attach_remove_stale). */
static void clear_stale_socket(const struct mt_proc *p, const char *sock)
{
	int dirfd = attach_open_dir(p, "/tmp");

	if (dirfd < 0)
		return;
	if (attach_remove_stale(dirfd, strrchr(sock, '/') + 1) == 1)
		p_info("removed a stale %s that an earlier process with pid %d left", sock,
		       p->nspid);
	close(dirfd);
}

/* Place the agent in the target, `load` it, remove the copy. */
int agentsession_load(const struct mt_proc *p, char *shown, size_t n)
{
	struct mt_agentfile af;
	char src[PATH_MAX], opts[128], sock[64];
	int err, rc = 0;

	err = agentfile_find(src, sizeof(src));
	if (err)
		return err;
	err = agentfile_place(p, src, &af);
	if (err)
		return err;
	agentsock_path(p->nspid, sock, sizeof(sock));
	snprintf(opts, sizeof(opts), "sock=%s", sock);
	clear_stale_socket(p, sock);
	err = attach_load(p, af.path, opts, &rc);
	if (err == -ECANCELED && rc == MT_AGENT_E_TWICE)
		p_info("hint: another copy of the agent (another memtrace version or place) "
		       "already runs in JVM %d; `memtrace attach -p %d` without --load talks to it",
		       p->pid, p->pid);
	snprintf(shown, n, "%s", af.path);
	/* The JVM keeps its mapping; the file is no longer needed. */
	agentfile_remove(&af);
	return err;
}

int agentsession_open(const struct mt_proc *p, struct mt_agentsock *s,
		      struct mt_ap_hello_reply *r, bool *loaded)
{
	char path[PATH_MAX] = "";
	int mapped, err;

	*loaded = false;
	mapped = agentfile_mapped(p->pid, path, sizeof(path));
	if (mapped < 0) {
		if (!proc_exists(p->pid))
			p_err("JVM %d exited before memtrace could load its agent", p->pid);
		else
			p_err("cannot read /proc/%d/maps: %s", p->pid, strerror(-mapped));
		return mapped;
	}
	if (!mapped) {
		err = agentsession_load(p, path, sizeof(path));
		if (err)
			return err;
		*loaded = true;
	}
	err = agentsession_connect(p, s, r, RECONNECT_MS);
	if (err)
		agentsession_explain(p, s, err);
	return err;
}
