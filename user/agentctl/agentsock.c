// SPDX-License-Identifier: GPL-2.0
/* agentsock.c - talk to memtrace's JVMTI agent over its unix socket. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agentctl/agentsock.h"
#include "jvm/attach.h"
#include "lib/util.h"

void agentsock_path(int nspid, char *out, size_t n)
{
	snprintf(out, n, MT_AP_SOCK_FMT, nspid);
}

int agentsock_connect(const struct mt_proc *p, struct mt_agentsock *s)
{
	char path[64];
	const char *name;
	int dirfd, fd;

	memset(s, 0, sizeof(*s));
	s->fd = s->tmpfd = -1;
	s->seq = 1;
	agentsock_path(p->nspid, path, sizeof(path));
	name = strrchr(path, '/') + 1;
	dirfd = attach_open_dir(p, "/tmp");
	if (dirfd < 0)
		return dirfd;
	fd = attach_connect_as(p, dirfd, name);
	if (fd < 0) {
		close(dirfd);
		return fd;
	}
	s->fd = fd;
	s->tmpfd = dirfd;
	s->pid = p->pid;
	s->nspid = p->nspid;
	return 0;
}

/* Whether the agent closed its end of @fd. */
static bool hung_up(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN | POLLRDHUP };

	return poll(&pfd, 1, 0) == 1 && (pfd.revents & (POLLRDHUP | POLLHUP | POLLERR));
}

void agentsock_close(struct mt_agentsock *s)
{
	bool gone;
	int err;

	if (s->fd < 0)
		return;
	/* an agent hangs up when asked to (DETACH) or after an ERROR frame: a
	 * hang-up otherwise is its JVM going (kill -9 closes the sockets a
	 * moment before the process is gone) */
	if (!s->detached && !s->last_err.code && hung_up(s->fd))
		gone = proc_wait_gone(s->pid, 2000);
	else
		gone = !proc_exists(s->pid);
	close(s->fd);
	s->fd = -1;
	if (gone) {
		err = agentsock_remove_leftovers(s->tmpfd, s->nspid);
		if (err < 0)
			p_warn("JVM %d exited: cannot remove its sockets /tmp/.memtrace-%d.sock and "
			       "/tmp/.java_pid%d (in its mount namespace): %s", s->pid, s->nspid,
			       s->nspid, strerror(-err));
	}
	close(s->tmpfd);
	s->tmpfd = -1;
}

int agentsock_remove_leftovers(int tmpfd, int nspid)
{
	char agent[64], listener[64];
	const char *aname;
	int err = 0;

	agentsock_path(nspid, agent, sizeof(agent));
	aname = strrchr(agent, '/') + 1;
	snprintf(listener, sizeof(listener), ".java_pid%d", nspid);
	/* a killed JVM's leader is a zombie while its other threads still hold
	 * the sockets open (they accept then): retry for up to 2 s */
	for (int i = 0; i < 20 && err >= 0; i++) {
		struct stat st;

		err = attach_remove_stale(tmpfd, aname);
		if (err >= 0)
			err = attach_remove_stale(tmpfd, listener);
		if (err < 0 || (fstatat(tmpfd, aname, &st, AT_SYMLINK_NOFOLLOW) &&
				fstatat(tmpfd, listener, &st, AT_SYMLINK_NOFOLLOW)))
			break;
		usleep(100000);
	}
	return err < 0 ? err : 0;
}

int agentsock_sweep(const struct mt_proc *p)
{
	struct dirent *de;
	int dirfd, n = 0;
	DIR *d;

	dirfd = attach_open_dir(p, "/tmp");
	if (dirfd < 0)
		return dirfd;
	d = fdopendir(dirfd);
	if (!d) {
		close(dirfd);
		return -errno;
	}
	while ((de = readdir(d))) {
		int nspid, used = 0;

		if (sscanf(de->d_name, ".memtrace-%d.sock%n", &nspid, &used) != 1 ||
		    de->d_name[used] || nspid <= 0 || nspid == p->nspid)
			continue;
		if (attach_remove_stale(dirfd, de->d_name) == 1)
			n++;
	}
	closedir(d); /* closes dirfd */
	return n;
}

// Read exactly @n bytes before the deadline (ms of mono_ns()).
static int read_full(int fd, void *buf, size_t n, uint64_t deadline)
{
	char *p = buf;

	while (n) {
		uint64_t now = mono_ns() / 1000000;
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		ssize_t r;
		int pr;

		if (now >= deadline)
			return -ETIMEDOUT;
		pr = poll(&pfd, 1, (int)(deadline - now));
		if (pr < 0 && errno == EINTR)
			continue;
		if (pr < 0)
			return -errno;
		if (pr == 0)
			return -ETIMEDOUT;
		r = read(fd, p, n);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -ECONNRESET;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int agentsock_request(struct mt_agentsock *s, unsigned type, const void *payload,
		      size_t len, unsigned want, void *out)
{
	char frame[MT_AP_HDR_SIZE + 512];
	union {
		struct mt_ap_hello_reply hello;
		struct mt_ap_ping ping;
		struct mt_ap_error error;
	} in;
	uint64_t deadline = mono_ns() / 1000000 + MT_AGENT_REPLY_MS;
	struct mt_ap_hdr h;
	long n;
	int err;

	if (s->fd < 0)
		return -ENOTCONN;
	n = mt_ap_encode(frame, sizeof(frame), type, s->seq++, payload, len);
	if (n < 0)
		return (int)n;
	err = write_all(s->fd, frame, (size_t)n);
	if (err) {
		/* a refusing agent sends ERROR and closes at once: read its reason */
		if (read_full(s->fd, &h, sizeof(h), mono_ns() / 1000000 + 200))
			return err;
	} else {
		err = read_full(s->fd, &h, sizeof(h), deadline);
		if (err)
			return err;
	}
	err = mt_ap_check_hdr(&h);
	if (err)
		return err;
	/* every known payload fits `in`: check_hdr() pinned len to its type's size */
	if (h.len > sizeof(in))
		return -EMSGSIZE;
	err = read_full(s->fd, &in, h.len, deadline);
	if (err)
		return err;
	if (h.type == MT_AP_ERROR) {
		s->last_err = in.error;
		s->last_err.msg[sizeof(s->last_err.msg) - 1] = '\0';
		return -EREMOTEIO;
	}
	if (h.type != want)
		return -EPROTO;
	if (h.len)
		memcpy(out, &in, h.len);
	return 0;
}

int agentsock_hello(struct mt_agentsock *s, struct mt_ap_hello_reply *r)
{
	struct mt_ap_hello h = {
		.min_version = MT_AP_VERSION,
		.max_version = MT_AP_VERSION,
		.client_pid = (uint32_t)getpid(),
	};
	int err;

	err = agentsock_request(s, MT_AP_HELLO, &h, sizeof(h), MT_AP_HELLO_REPLY, r);
	if (err)
		return err;
	r->agent_version[MT_AP_STR - 1] = '\0';
	r->java_version[MT_AP_STR - 1] = '\0';
	r->vm_name[MT_AP_STR - 1] = '\0';
	return 0;
}

int agentsock_ping(struct mt_agentsock *s)
{
	struct mt_ap_ping ping = { .cookie = mono_ns() }, pong;
	int err;

	err = agentsock_request(s, MT_AP_PING, &ping, sizeof(ping), MT_AP_PONG, &pong);
	if (err)
		return err;
	return pong.cookie == ping.cookie ? 0 : -EPROTO;
}

int agentsock_detach(struct mt_agentsock *s)
{
	int err;

	s->detached = true;
	err = agentsock_request(s, MT_AP_DETACH, NULL, 0, MT_AP_DETACH_ACK, NULL);

	agentsock_close(s);
	return err;
}

int agentsock_send(struct mt_agentsock *s, unsigned type, const void *payload, size_t len)
{
	char frame[MT_AP_HDR_SIZE + 512];
	long n;

	if (s->fd < 0)
		return -ENOTCONN;
	n = mt_ap_encode(frame, sizeof(frame), type, s->seq++, payload, len);
	if (n < 0)
		return (int)n;
	return write_all(s->fd, frame, (size_t)n);
}

int agentsock_write_fd(struct mt_agentsock *s, const void *buf, size_t n, int fd)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(sizeof(int))];
	} ctl;
	struct iovec iov = { (void *)buf, n };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	struct cmsghdr *c;
	ssize_t w;

	if (s->fd < 0)
		return -ENOTCONN;
	if (!n)
		return -EINVAL;
	memset(&ctl, 0, sizeof(ctl));
	c = CMSG_FIRSTHDR(&mh);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(fd));
	do
		w = sendmsg(s->fd, &mh, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	if (w <= 0)
		return w < 0 ? -errno : -EIO;
	/* the descriptor went with the first byte: the rest is plain */
	return (size_t)w < n ? write_all(s->fd, (const char *)buf + w, n - (size_t)w) : 0;
}

int agentsock_recv(struct mt_agentsock *s, struct mt_ap_hdr *h, void *buf, size_t cap,
		   int timeout_ms)
{
	struct pollfd pfd = { .fd = s->fd, .events = POLLIN };
	uint64_t deadline;
	int err, pr;

	if (s->fd < 0)
		return -ENOTCONN;
	pr = poll(&pfd, 1, timeout_ms);
	if (pr < 0)
		return -errno;
	if (pr == 0)
		return 0;
	/* a frame has begun: the rest follows within the reply time */
	deadline = mono_ns() / 1000000 + MT_AGENT_REPLY_MS;
	err = read_full(s->fd, h, sizeof(*h), deadline);
	if (err)
		return err;
	err = mt_ap_check_hdr(h);
	if (err)
		return err;
	if (h->len > cap)
		return -EMSGSIZE;
	err = read_full(s->fd, buf, h->len, deadline);
	if (err)
		return err;
	if (h->type == MT_AP_ERROR && h->len == sizeof(s->last_err)) {
		memcpy(&s->last_err, buf, sizeof(s->last_err));
		s->last_err.msg[sizeof(s->last_err.msg) - 1] = '\0';
	}
	return 1;
}
