// SPDX-License-Identifier: GPL-2.0
/*
 * attach.c - HotSpot's dynamic attach protocol (see attach.h for the steps).
 * Every path of the target is opened relative to a directory fd resolved
 * inside /proc/PID/root, never by following a path string from the host.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "jvm/attach.h"
#include "jvm/jvmflags.h"
#include "lib/util.h"

int attach_build_request(char *buf, size_t cap, const char *cmd, const char *a1,
			 const char *a2, const char *a3)
{
	const char *parts[] = { "1", cmd, a1, a2, a3 };
	size_t n = 0;

	for (size_t i = 0; i < MT_ARRAY_SIZE(parts); i++) {
		const char *s = parts[i] ? parts[i] : "";
		size_t l = strlen(s) + 1;

		if (l > cap - n)
			return -ENAMETOOLONG;
		memcpy(buf + n, s, l);
		n += l;
	}
	return (int)n;
}

/* Parse a decimal int at the start of @s (optional '-'); returns 0 or -EINVAL. */
static int parse_int_prefix(const char *s, const char *end, int *out, const char **after)
{
	long v = 0;
	bool neg = false;
	const char *p = s;

	if (p < end && *p == '-') {
		neg = true;
		p++;
	}
	if (p >= end || *p < '0' || *p > '9')
		return -EINVAL;
	while (p < end && *p >= '0' && *p <= '9') {
		v = v * 10 + (*p - '0');
		if (v > INT_MAX)
			return -EINVAL;
		p++;
	}
	*out = (int)(neg ? -v : v);
	*after = p;
	return 0;
}

int attach_parse_reply(const char *buf, size_t n, bool is_load, struct mt_attach_reply *r)
{
	const char *end = buf + n, *p, *line;
	size_t tl;

	r->code = -1;
	r->agent_rc = MT_ATTACH_NO_RC;
	r->text[0] = '\0';
	if (parse_int_prefix(buf, end, &r->code, &p))
		return -EBADMSG;
	if (p < end && *p == '\r')
		p++;
	if (p < end && *p != '\n')
		return -EBADMSG;
	if (p < end)
		p++;
	tl = (size_t)(end - p);
	if (tl >= sizeof(r->text))
		tl = sizeof(r->text) - 1;
	memcpy(r->text, p, tl);
	r->text[tl] = '\0';
	/* NULs from the wire would cut messages short: make them visible. */
	for (size_t i = 0; i < tl; i++)
		if (r->text[i] == '\0')
			r->text[i] = ' ';
	while (tl && (r->text[tl - 1] == '\n' || r->text[tl - 1] == ' '))
		r->text[--tl] = '\0';
	if (!is_load || r->code != 0)
		return 0;
	/* `load`: the second line is the agent's return code. */
	line = p;
	if ((size_t)(end - line) >= 13 && !memcmp(line, "return code: ", 13))
		line += 13;
	if (parse_int_prefix(line, end, &r->agent_rc, &p))
		r->agent_rc = MT_ATTACH_NO_RC;
	return 0;
}

int attach_sigquit_caught(const char *status)
{
	const char *l = strstr(status, "\nSigCgt:");
	unsigned long long mask;

	if (!l || sscanf(l + 8, " %llx", &mask) != 1)
		return -EINVAL;
	return (mask >> (SIGQUIT - 1)) & 1;
}

int attach_open_dir(const struct mt_proc *p, const char *path)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC,
		.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
	};
	int rootfd, fd, err;

	rootfd = open(p->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	while (*path == '/')
		path++;
	if (!*path)
		path = ".";
	fd = (int)syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	err = fd < 0 ? -errno : 0;
	close(rootfd);
	return err ? err : fd;
}

int attach_remove_stale(int dirfd, const char *name)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, err;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode))
		return 0;
	/* through the directory we hold: the JVM's mount namespace may be gone */
	if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/%s", dirfd, name) >=
	    sizeof(a.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = connect(fd, (struct sockaddr *)&a, sizeof(a)) ? -errno : 0;
	close(fd);
	if (err != -ECONNREFUSED)
		return err == 0 ? 0 : err; /* alive, or we cannot tell: leave it */
	return unlinkat(dirfd, name, 0) ? -errno : 1;
}

/* Our saved effective ids while we act as the target. */
struct creds {
	uid_t euid;
	gid_t egid;
	bool switched;
};

// Become the target's euid/egid (root only; a no-op when we already are it).
static int creds_enter(const struct mt_proc *p, struct creds *c)
{
	c->euid = geteuid();
	c->egid = getegid();
	c->switched = false;
	if (c->euid == p->uid && c->egid == p->gid)
		return 0;
	if (c->euid != 0)
		return c->euid == p->uid ? 0 : -EPERM;
	/* raw syscalls: only this thread's ids change (glibc's seteuid() would switch
	 * every thread of a threaded memtrace, e.g. serve's, for the duration) */
	if (syscall(SYS_setresgid, -1, p->gid, -1))
		return -errno;
	if (syscall(SYS_setresuid, -1, p->uid, -1)) {
		int err = -errno;

		if (syscall(SYS_setresgid, -1, c->egid, -1))
			abort(); /* cannot happen as root; never continue with wrong ids */
		return err;
	}
	c->switched = true;
	return 0;
}

// Switch back to the ids saved by creds_enter().
static void creds_leave(const struct creds *c)
{
	if (!c->switched)
		return;
	if (syscall(SYS_setresuid, -1, c->euid, -1) || syscall(SYS_setresgid, -1, c->egid, -1))
		abort(); /* regaining root failed: continuing would be unsafe */
}

int attach_connect_as(const struct mt_proc *p, int dirfd, const char *name)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct creds c;
	int fd, err, n;

	/* /proc/self/fd/N/name: the directory we resolved, however long its host path. */
	n = snprintf(sa.sun_path, sizeof(sa.sun_path), "/proc/self/fd/%d/%s", dirfd, name);
	if (n < 0 || (size_t)n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	err = creds_enter(p, &c);
	if (err) {
		close(fd);
		return err;
	}
	err = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	creds_leave(&c);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

// Check that the listener socket exists and is a socket owned by the target.
static int check_socket(const struct mt_proc *p, int tmpfd, const char *name)
{
	struct stat st;

	if (fstatat(tmpfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISSOCK(st.st_mode))
		return -ENOTSOCK;
	if (st.st_uid != p->uid && st.st_uid != 0)
		return -EACCES;
	return 0;
}

/*
 * Remove /tmp/@name when an earlier process with the target's pid left it:
 * made before the target started and refusing connections (pid numbers wrap,
 * a JVM killed with -9 leaves its socket, and a root-owned one of mode 0600
 * made the connect as the target's uid fail with EACCES). Returns 1 when
 * removed (said), 0 when it is absent or may be live, or -errno.
 */
static int drop_stale_socket(const struct mt_proc *p, int tmpfd, const char *name)
{
	time_t started = proc_start_time(p->pid);
	struct stat st;
	int err;

	if (fstatat(tmpfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (!started || st.st_mtime >= started)
		return 0;
	err = attach_remove_stale(tmpfd, name); /* only if nothing listens on it */
	if (err == 1)
		p_info("removed a stale /tmp/%s made before JVM %d started (a dead process's "
		       "with the same pid; nothing listened on it)", name, p->pid);
	return err;
}

// Refuse to signal a JVM that does not catch SIGQUIT (-Xrs): it would die.
static int check_sigquit(const struct mt_proc *p)
{
	char path[64], *status;
	int caught;

	snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
	status = read_file(path, NULL);
	if (!status) {
		p_err("cannot read %s: %s", path, strerror(errno));
		return -errno;
	}
	caught = attach_sigquit_caught(status);
	free(status);
	if (caught == 0) {
		p_err("JVM %d does not handle SIGQUIT (started with -Xrs?): starting its attach "
		      "listener would kill it; restart it without -Xrs, or load the agent at "
		      "startup with -agentpath", p->pid);
		return -EPERM;
	}
	return 0;
}

// Create the trigger file .attach_pid<nspid> in @dirfd, owned by the target.
static int create_trigger(const struct mt_proc *p, int dirfd, const char *name)
{
	int fd;

	fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) {
		struct stat st;

		/* A leftover regular file (ours or another tool's) is replaced. */
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode))
			return -EEXIST;
		if (unlinkat(dirfd, name, 0))
			return -errno;
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
	}
	if (fd < 0)
		return -errno;
	/* HotSpot only honours a trigger owned by its euid or root. */
	if (fchown(fd, p->uid, p->gid) && geteuid() == 0) {
		int err = -errno;

		close(fd);
		unlinkat(dirfd, name, 0);
		return err;
	}
	close(fd);
	return 0;
}

/*
 * Refuse a JVM whose listener can never start (-XX:+DisableAttachMechanism,
 * read from libjvm's .symtab): signalling it would only print a thread dump
 * on its stdout, and the wait would run out. A flag that cannot be read
 * (stripped libjvm) is no refusal: the bounded wait still ends it.
 */
static int check_attach_enabled(const struct mt_proc *p)
{
	bool disabled = false;

	if (jvmflags_get_bool(p, NULL, "DisableAttachMechanism", &disabled) || !disabled)
		return 0;
	p_err("JVM %d runs with -XX:+DisableAttachMechanism: it never starts its attach "
	      "listener, so the agent cannot be loaded (memtrace sent it nothing); restart it "
	      "without the flag, or load the agent at startup with -agentpath", p->pid);
	return -EPERM;
}

// Force the JVM to start its attach listener: trigger file, SIGQUIT, poll.
static int start_attach_mechanism(const struct mt_proc *p, int tmpfd, const char *sock)
{
	char trig[64];
	int dirfd, err, waited = 0, delay = 10;

	err = check_attach_enabled(p);
	if (err)
		return err;
	err = check_sigquit(p);
	if (err)
		return err;
	snprintf(trig, sizeof(trig), ".attach_pid%d", p->nspid);
	/* HotSpot looks in its cwd first, then in /tmp. */
	dirfd = open(p->cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = dirfd < 0 ? -errno : create_trigger(p, dirfd, trig);
	if (err) {
		if (dirfd >= 0)
			close(dirfd);
		dirfd = fcntl(tmpfd, F_DUPFD_CLOEXEC, 0);
		err = dirfd < 0 ? -errno : create_trigger(p, dirfd, trig);
		if (err) {
			p_err("cannot create the attach trigger %s in the cwd or /tmp of JVM %d: %s",
			      trig, p->pid, strerror(-err));
			if (dirfd >= 0)
				close(dirfd);
			return err;
		}
	}
	if (kill(p->pid, SIGQUIT)) {
		err = -errno;
		p_err("cannot send SIGQUIT to JVM %d: %s", p->pid, strerror(errno));
		goto out;
	}
	/* Poll with a growing delay: usually ready in a few ms, bounded by the timeout. */
	for (;;) {
		struct timespec ts;

		err = check_socket(p, tmpfd, sock);
		if (!err)
			break;
		if (!proc_exists(p->pid)) {
			p_err("JVM %d exited while starting its attach listener", p->pid);
			err = -ESRCH;
			break;
		}
		if (waited >= MT_ATTACH_TIMEOUT_MS) {
			p_err("JVM %d did not start its attach listener (/tmp/%s) within %d s; "
			      "it may run with -XX:+DisableAttachMechanism, or be too busy (a long "
			      "safepoint); SIGQUIT also made it print a thread dump on its stdout",
			      p->pid, sock, MT_ATTACH_TIMEOUT_MS / 1000);
			err = -ETIMEDOUT;
			break;
		}
		ts.tv_sec = 0;
		ts.tv_nsec = (long)delay * 1000000L;
		nanosleep(&ts, NULL);
		waited += delay;
		if (delay < 200)
			delay *= 2;
	}
out:
	unlinkat(dirfd, trig, 0);
	close(dirfd);
	return err;
}

// Send the whole request; the listener reads until it has 5 strings.
static int write_request(int fd, const char *buf, size_t n)
{
	while (n) {
		ssize_t w = write(fd, buf, n);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += w;
		n -= (size_t)w;
	}
	return 0;
}

// Read the reply until the listener closes the connection.
static ssize_t read_reply(int fd, char *buf, size_t cap)
{
	size_t n = 0;
	char drain[4096];

	for (;;) {
		char *dst = n < cap ? buf + n : drain;
		size_t room = n < cap ? cap - n : sizeof(drain);
		ssize_t r = read(fd, dst, room);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			break;
		if (n < cap)
			n += (size_t)r;
	}
	return (ssize_t)n;
}

int attach_command(const struct mt_proc *p, const char *cmd, const char *a1,
		   const char *a2, const char *a3, struct mt_attach_reply *r)
{
	char sock[64], req[PATH_MAX + 4096], *buf = NULL;
	struct timeval tv = { .tv_sec = 60 };
	int tmpfd, fd = -1, err, n;
	ssize_t got;

	n = attach_build_request(req, sizeof(req), cmd, a1, a2, a3);
	if (n < 0) {
		p_err("attach command '%s' is too long", cmd);
		return n;
	}
	tmpfd = attach_open_dir(p, "/tmp");
	if (tmpfd < 0) {
		p_err("cannot open /tmp of JVM %d through %s: %s", p->pid, p->root,
		      strerror(-tmpfd));
		return tmpfd;
	}
	snprintf(sock, sizeof(sock), ".java_pid%d", p->nspid);
	drop_stale_socket(p, tmpfd, sock);
	err = check_socket(p, tmpfd, sock);
	if (err == -ENOTSOCK || err == -EACCES) {
		p_err("/tmp/%s of JVM %d is not a socket owned by uid %u: refusing it "
		      "(remove it if it is stale)", sock, p->pid, (unsigned)p->uid);
		goto out;
	}
	if (err) {
		err = start_attach_mechanism(p, tmpfd, sock);
		if (err)
			goto out;
	}
	fd = attach_connect_as(p, tmpfd, sock);
	if (fd < 0) {
		err = fd;
		if (err == -EPERM)
			p_err("cannot attach to JVM %d owned by uid %u as uid %u: run memtrace as "
			      "root or as that user", p->pid, (unsigned)p->uid, (unsigned)geteuid());
		else if (!proc_exists(p->pid))
			p_err("JVM %d exited while memtrace attached to it", p->pid);
		else
			p_err("cannot connect to the attach listener /tmp/%s of JVM %d: %s%s",
			      sock, p->pid, strerror(-err),
			      err == -ECONNREFUSED ? " (a stale socket of a dead JVM? remove it)" : "");
		goto out;
	}
	/* A stuck listener must not hang memtrace forever. */
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	err = write_request(fd, req, (size_t)n);
	if (err) {
		p_err("cannot send '%s' to the attach listener of JVM %d: %s", cmd, p->pid,
		      strerror(-err));
		goto out;
	}
	buf = malloc(MT_ATTACH_REPLY_MAX);
	if (!buf) {
		err = -ENOMEM;
		p_err("out of memory");
		goto out;
	}
	got = read_reply(fd, buf, MT_ATTACH_REPLY_MAX);
	if (got < 0) {
		err = (int)got;
		if (!proc_exists(p->pid))
			p_err("JVM %d exited while it ran '%s' for memtrace", p->pid, cmd);
		else
			p_err("no reply from the attach listener of JVM %d to '%s': %s", p->pid,
			      cmd, err == -EAGAIN ? "timed out" : strerror(-err));
		goto out;
	}
	err = attach_parse_reply(buf, (size_t)got, !strcmp(cmd, "load"), r);
	if (err && !proc_exists(p->pid))
		p_err("JVM %d exited while it ran '%s' for memtrace", p->pid, cmd);
	else if (err)
		p_err("malformed reply from the attach listener of JVM %d to '%s': \"%.*s\"",
		      p->pid, cmd, (int)(got > 80 ? 80 : got), buf);
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	close(tmpfd);
	return err;
}

int attach_load(const struct mt_proc *p, const char *path, const char *options, int *agent_rc)
{
	struct mt_attach_reply r;
	int err;

	err = attach_command(p, "load", path, "true", options, &r);
	if (err)
		return err;
	if (agent_rc)
		*agent_rc = r.agent_rc;
	/* JDK 17 refuses with a non-zero code, JDK 25 with 0 and no return code. */
	if (r.code != 0 || r.agent_rc == MT_ATTACH_NO_RC) {
		p_err("JVM %d refused to load %s (attach code %d): %s", p->pid, path, r.code,
		      r.text[0] ? r.text : "no message");
		return -ENOEXEC;
	}
	if (r.agent_rc != 0) {
		p_err("the agent's Agent_OnAttach in JVM %d returned %d (see the JVM's stderr "
		      "for the agent's message)", p->pid, r.agent_rc);
		return -ECANCELED;
	}
	return 0;
}
