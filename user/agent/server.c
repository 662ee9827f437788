// SPDX-License-Identifier: GPL-2.0
/*
 * server.c - the agent's one thread: listens on a unix socket, serves one
 * memtrace client at a time with the protocol of agent_proto.h, and goes
 * dormant when the client detaches or disappears.
 *
 * Safety rules: the thread only blocks in poll(2) (in native state, so it
 * never holds up a safepoint); every socket is non-blocking and every send
 * uses MSG_NOSIGNAL; peers other than the JVM's euid and root are refused
 * (SO_PEERCRED); a malformed, unknown, oversized or stalled frame gets an
 * ERROR reply and the connection is closed (request.c checks every frame
 * before the thread acts on it). No JNI is used here.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "heapwalk.h"
#include "request.h"
#include "sampler.h"
#include "server.h"
#include "stream.h"
#include "walkcopy.h"
#include "freeze.h"
#include "walksend.h"
#include "zgcfreeze.h"

#define POLL_MS          1000  /* how often the thread re-checks its socket file */
#define FRAME_TIMEOUT_MS 5000  /* a started frame must complete within this */
#define REBIND_LOG_MS    60000 /* repeat a rebind failure in the log at most this often */
#define DRAIN_MS         20    /* while sampling: how often the rings are drained */
#define REAP_POLL_MS     10    /* while a killed copy exits: how often it is looked for */
#define STATS_MS         1000  /* while sampling: a STATS record this often */
#define TX_CAP           (1u << 20) /* bytes queued for a slow client before it is dropped */
#define TX_DRAIN_ROOM    (512u * 1024) /* drain the rings only with this much room */
#define HEAP_CHUNK       (256u * 1024) /* heap records per HEAP_DATA frame, at most */

/* Thread-owned state (only the socket thread touches it after start). */
static int listen_fd = -1;
static int client_fd = -1;
static bool hello_done;
/* every payload is < 512 bytes but HEAP_REQUEST's (<= MT_AP_HEAP_REQ_MAX) */
static char rx[MT_AP_HDR_SIZE + MT_AP_HEAP_REQ_MAX];
static size_t rx_len;
static uint64_t rx_since_ms;
static char *tx;        /* frames queued for the client (TX_CAP bytes, malloc'd per session) */
static size_t tx_len;
static bool stopping;   /* SAMPLE_STOP seen: drain the rest, then SAMPLE_STOPPED */
static uint32_t stop_seq;
static uint64_t last_stats_ms;
static uint32_t heap_seq; /* the HEAP_REQUEST being walked or answered */
static pid_t client_pid;    /* the client's pid (SO_PEERCRED, in our pid namespace) */
static uint64_t client_since_ms;

/* The fd that came with the client's last frames (SCM_RIGHTS: a heap
 * request's MT_AP_FREEZE_POOL memfd), -1; one at a time, any other closed. */
static int rx_fd = -1;

static int take_fd(void)
{
	int fd = rx_fd;

	rx_fd = -1;
	return fd;
}

/* Keep the fds a control message brought: the first, at most, as rx_fd. */
static void keep_fds(struct msghdr *mh)
{
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t n;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < n; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (rx_fd >= 0)
				close(rx_fd);
			rx_fd = fd;
		}
	}
}

/* Shared with Agent_OnUnload: the socket file we bound (under agent.lock),
 * and whether the JVM is going (its file removed: never bound again). */
static char bound_path[sizeof(agent.sock_path)];
static ino_t bound_ino;
static bool shut_down;

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int server_listen(const char *path, ino_t *ino)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct stat st;
	int fd, err;

	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (!lstat(path, &st)) {
		if (!S_ISSOCK(st.st_mode)) {
			agent_log("%s exists and is not a socket: refusing to replace it", path);
			return -EEXIST;
		}
		unlink(path); /* stale socket of an earlier run */
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0) {
		err = -errno;
		agent_log("socket: %s", strerror(errno));
		return err;
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || chmod(path, 0600) ||
	    listen(fd, 4) || lstat(path, &st)) {
		err = -errno;
		agent_log("cannot listen on %s: %s", path, strerror(errno));
		close(fd);
		return err;
	}
	*ino = st.st_ino;
	snprintf(bound_path, sizeof(bound_path), "%s", path);
	bound_ino = st.st_ino;
	return fd;
}

/* Is our socket file still in place (not removed by a /tmp cleaner)? Lock held. */
static bool listener_ok(void)
{
	struct stat st;

	return !strcmp(bound_path, agent.sock_path) && !lstat(bound_path, &st) &&
	       S_ISSOCK(st.st_mode) && st.st_ino == bound_ino;
}

/* Recreate the listening socket if its file vanished or the path changed. */
static void check_listener(void)
{
	static uint64_t last_log;
	char old[sizeof(bound_path)];
	ino_t ino, old_ino;
	int fd;

	pthread_mutex_lock(&agent.lock);
	/* after server_shutdown the file is gone on purpose: this thread runs on
	 * while the JVM exits, and a session's short poll would bind it again
	 * (a JVM ended with SIGTERM during a session left its socket) */
	if (shut_down || (listener_ok() && !agent.sock_changed)) {
		pthread_mutex_unlock(&agent.lock);
		return;
	}
	memcpy(old, bound_path, sizeof(old));
	old_ino = bound_ino;
	fd = server_listen(agent.sock_path, &ino);
	if (fd >= 0) {
		struct stat st;

		/* the old file goes only if it is still the one we bound */
		if (strcmp(old, bound_path) && !lstat(old, &st) && st.st_ino == old_ino)
			unlink(old);
		close(listen_fd);
		listen_fd = fd;
		agent.sock_changed = false;
	} else if (now_ms() - last_log > REBIND_LOG_MS) {
		last_log = now_ms();
		agent_log("cannot recreate %s; retrying", agent.sock_path);
	}
	pthread_mutex_unlock(&agent.lock);
}

/* Write queued frames without blocking. Returns 0, or -1 if the client is gone. */
static int flush_tx(void)
{
	while (tx_len) {
		ssize_t w = send(client_fd, tx, tx_len, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (w <= 0)
			return -1;
		memmove(tx, tx + w, tx_len - (size_t)w);
		tx_len -= (size_t)w;
	}
	return 0;
}

/*
 * Queue one frame and write what the socket takes now. A client that lets
 * TX_CAP bytes pile up is dropped. Returns 0 or -1.
 */
static int send_frame(int fd, unsigned type, uint32_t seq, const void *payload, size_t len)
{
	char small[MT_AP_HDR_SIZE + 512];
	long n;

	if (fd != client_fd || !tx) { /* a refused peer: one best-effort write */
		n = mt_ap_encode(small, sizeof(small), type, seq, payload, len);
		if (n < 0)
			return -1;
		return send(fd, small, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) == n ? 0 : -1;
	}
	n = mt_ap_encode(tx + tx_len, TX_CAP - tx_len, type, seq, payload, len);
	if (n < 0)
		return -1;
	tx_len += (size_t)n;
	return flush_tx();
}

/* stream_drain()'s sink: EVENTS frames into the queue. */
static int emit_events(unsigned type, const void *payload, size_t len)
{
	static uint32_t ev_seq;

	return send_frame(client_fd, type, ++ev_seq, payload, len);
}

static void send_error(int fd, uint32_t seq, int code, const char *msg)
{
	struct mt_ap_error e = { .code = code };

	snprintf(e.msg, sizeof(e.msg), "%s", msg);
	send_frame(fd, MT_AP_ERROR, seq, &e, sizeof(e));
}

/*
 * End the session and go dormant: events off, memory released, client
 * closed; the listening socket stays for the next memtrace.
 */
static void session_end(void)
{
	/* sampling off, rings freed, the session's env (and its tags) disposed */
	sampler_release();
	stream_reset();
	heap_session_end(); /* the walk's env, its tags and its GC count */
	stopping = false;
	if (client_fd >= 0) {
		flush_tx(); /* a last ERROR or ACK, if the socket takes it */
		close(client_fd);
	}
	client_fd = -1;
	if (rx_fd >= 0) /* a pool the walk never took */
		close(rx_fd);
	rx_fd = -1;
	hello_done = false;
	rx_len = 0;
	free(tx);
	tx = NULL;
	tx_len = 0;
}

/* Accept a connection: our uid or root only, one client at a time. */
static void accept_client(void)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	int fd;

	fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
	if (fd < 0)
		return;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) ||
	    (cred.uid != geteuid() && cred.uid != 0)) {
		/* no reply: an unauthorized peer learns nothing */
		close(fd);
		return;
	}
	if (client_fd >= 0) {
		struct pollfd q = { .fd = client_fd, .events = POLLRDHUP };

		/* the current client may have gone since poll(): check before
		 * refusing - hung up, with or without frames left unread */
		if (poll(&q, 1, 0) == 1 && (q.revents & (POLLRDHUP | POLLHUP | POLLERR)))
			session_end();
	}
	if (client_fd >= 0) {
		char msg[96];

		snprintf(msg, sizeof(msg), "another memtrace is connected to this JVM (pid %d, "
			 "for %llu s)", (int)client_pid,
			 (unsigned long long)((now_ms() - client_since_ms) / 1000));
		send_error(fd, 0, EBUSY, msg);
		close(fd);
		return;
	}
	tx = malloc(TX_CAP);
	if (!tx) {
		send_error(fd, 0, ENOMEM, "the agent is out of memory");
		close(fd);
		return;
	}
	tx_len = 0;
	client_fd = fd;
	client_pid = cred.pid;
	client_since_ms = now_ms();
	hello_done = false;
	rx_len = 0;
}

/* HELLO (its versions checked by request_next()). */
static void handle_hello(const struct mt_ap_hdr *h)
{
	struct mt_ap_hello_reply r = { .version = MT_AP_VERSION };

	pthread_mutex_lock(&agent.lock);
	r.state = agent.sessions > 0;
	agent.sessions++;
	r.sessions = agent.sessions;
	r.attach_count = agent.attach_count;
	r.jvmti_version = agent.jvmti_version;
	r.loaded_ns = agent.loaded_ns;
	memcpy(r.java_version, agent.java_version, sizeof(r.java_version));
	memcpy(r.vm_name, agent.vm_name, sizeof(r.vm_name));
	pthread_mutex_unlock(&agent.lock);
	r.pid = (uint32_t)getpid();
	snprintf(r.agent_version, sizeof(r.agent_version), "%s", MT_VERSION);
	hello_done = true;
	if (send_frame(client_fd, MT_AP_HELLO_REPLY, h->seq, &r, sizeof(r)))
		session_end();
}

/* SAMPLE_START (versions and parameters checked by request_next()): a
 * sampling session on this connection. */
static void handle_sample_start(const struct mt_ap_hdr *h, const struct mt_ap_sample_start *in)
{
	struct mt_ap_sample_started out = { 0 };
	char why[128];
	int err;

	if (stopping) {
		snprintf(why, sizeof(why), "the previous sampling session is still stopping");
		err = -EBUSY;
	} else {
		err = sampler_start(in, &out, why, sizeof(why));
	}
	if (err) {
		send_error(client_fd, h->seq, -err, why);
		session_end();
		return;
	}
	last_stats_ms = now_ms();
	if (send_frame(client_fd, MT_AP_SAMPLE_STARTED, h->seq, &out, sizeof(out)))
		session_end();
}

/* The rings into EVENTS frames while the queue has room for them: 0 (also
 * when it has none, or nothing samples), or -1 when a frame could not be
 * queued. */
static int drain_rings(bool stats)
{
	if (client_fd < 0 || !sampler_active() || TX_CAP - tx_len < TX_DRAIN_ROOM)
		return 0;
	return stream_drain(emit_events, stats) < 0 ? -1 : 0;
}

/* While sampling: move the rings into EVENTS frames; finish a STOP. */
static void pump_samples(void)
{
	bool stats;

	if (client_fd < 0 || !sampler_active() || TX_CAP - tx_len < TX_DRAIN_ROOM)
		return;
	stats = now_ms() - last_stats_ms >= STATS_MS;
	if (stats)
		last_stats_ms = now_ms();
	if (drain_rings(stats || stopping)) {
		session_end();
		return;
	}
	if (stopping && stream_empty()) {
		struct mt_ap_sample_stats st;

		stream_stats(&st);
		stopping = false;
		sampler_release();
		stream_reset();
		if (send_frame(client_fd, MT_AP_SAMPLE_STOPPED, stop_seq, &st, sizeof(st)))
			session_end();
	}
}

/* While a frozen copy walks (seconds on a big heap): the sampling rings
 * still drain into EVENTS frames, or the allocation ring (2048 samples)
 * overflowed - 7763 samples lost in a `leaks` run on 10 M objects. Ending
 * the session is left to the loop after the walk. */
static void walk_idle(void)
{
	struct mt_ap_hlive_at at;

	/* the copy is forked: where memtrace can follow its records (LIVE) */
	if (client_fd >= 0 && !stopping && heap_walk_live(&at)) {
		char rec[64];
		size_t off = 0;

		if (mt_ap_rec_put(rec, sizeof(rec), &off, MT_AP_HREC_LIVE, 0, &at, sizeof(at)) > 0 &&
		    send_frame(client_fd, MT_AP_HEAP_DATA, heap_seq, rec, off))
			return; /* the loop after the walk sees the socket's end */
	}
	if (client_fd < 0 || !sampler_active() || stopping)
		return;
	if (tx_len && flush_tx())
		return;
	drain_rings(false);
}

/* HEAP_REQUEST (checked by request_next()): walk the heap now (the pause),
 * send it as the socket takes it. */
static void handle_heap_request(const struct request *req)
{
	struct mt_ap_heap_done done;
	char why[128];
	int err;

	heap_seq = req->hdr.seq; /* LIVE goes out during the walk */
	heap_walk_pool(take_fd()); /* the request's pool, if it brought one */
	err = heap_walk(&req->heap, (req->heap.flags & MT_AP_HEAP_FREEZE) ? &req->freeze : NULL,
			(req->freeze.flags & MT_AP_FREEZE_MARK) ? &req->layout : NULL,
			(req->freeze.flags & MT_AP_FREEZE_ZGC) ? &req->zgc : NULL,
			req->names, req->names_len, req->samples, client_fd, walk_idle, &done,
			why, sizeof(why));
	if (err) {
		send_error(client_fd, req->hdr.seq, -err, why);
		/* ZGC was relocating, or its used heap was over memtrace's bound,
		 * or its copy was cut at the bound's deadline, or a copy of ZGC's
		 * or Shenandoah's heap held a virtual thread's stack: nothing was
		 * walked (the walk undone), memtrace asks again (or walks in a
		 * pause) on this connection (a `leaks` run's sampling session
		 * goes on) */
		if (err != -EAGAIN && err != -EFBIG && err != -ETIME && err != -ENOTSUP)
			session_end();
		return;
	}
}

/* While a snapshot is pending: HEAP_DATA frames as the socket takes them, then DONE. */
static void pump_heap(void)
{
	static char *chunk;

	if (client_fd < 0 || !walksend_pending())
		return;
	if (!chunk)
		chunk = malloc(HEAP_CHUNK);
	if (!chunk) {
		send_error(client_fd, heap_seq, ENOMEM, "the agent is out of memory");
		session_end();
		return;
	}
	while (client_fd >= 0 && walksend_pending() && TX_CAP - tx_len >= HEAP_CHUNK + MT_AP_HDR_SIZE) {
		long n = walksend_chunk(chunk, HEAP_CHUNK);

		if (n > 0) {
			if (send_frame(client_fd, MT_AP_HEAP_DATA, heap_seq, chunk, (size_t)n)) {
				session_end();
				return;
			}
			continue;
		}
		if (walksend_all_sent()) {
			struct mt_ap_heap_done d;

			walksend_done_info(&d);
			heap_release();
			if (send_frame(client_fd, MT_AP_HEAP_DONE, heap_seq, &d, sizeof(d)))
				session_end();
		}
		return;
	}
}

/* Act on one request that request_next() accepted. */
static void handle_request(const struct request *req)
{
	const struct mt_ap_hdr *h = &req->hdr;

	switch (h->type) {
	case MT_AP_HELLO:
		handle_hello(h);
		break;
	case MT_AP_PING:
		if (send_frame(client_fd, MT_AP_PONG, h->seq, &req->ping, sizeof(req->ping)))
			session_end();
		break;
	case MT_AP_DETACH:
		/* tags of tagged walks (KEEPIDS) are cleared before the ACK (a
		 * pause of its own): memtrace waits for the ACK and prints it */
		heap_session_end();
		send_frame(client_fd, MT_AP_DETACH_ACK, h->seq, NULL, 0);
		session_end();
		break;
	case MT_AP_SAMPLE_START:
		handle_sample_start(h, &req->sample);
		break;
	case MT_AP_HEAP_REQUEST:
		handle_heap_request(req);
		break;
	case MT_AP_HEAP_RELEASE: /* memtrace has read the frozen copy */
		walkcopy_release();
		break;
	case MT_AP_SAMPLE_STOP:
		if (!sampler_active() || stopping) {
			send_error(client_fd, h->seq, EINVAL, "sampling is not on");
			session_end();
			break;
		}
		/* no new samples; what the rings hold is still sent, then STOPPED */
		sampler_quiesce();
		stopping = true;
		stop_seq = h->seq;
		pump_samples();
		break;
	default: /* request_next() lets no other type through */
		break;
	}
}

/* Read what the client sent and handle every complete frame. */
static void read_client(void)
{
	union {
		struct cmsghdr align;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} ctl;
	struct iovec iov = { rx + rx_len, sizeof(rx) - rx_len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	ssize_t r = recvmsg(client_fd, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

	if (r > 0)
		keep_fds(&mh);

	if (r < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (r <= 0) { /* EOF or reset: the client is gone (maybe killed) */
		session_end();
		return;
	}
	if (rx_len == 0)
		rx_since_ms = now_ms();
	rx_len += (size_t)r;
	while (client_fd >= 0 && rx_len) {
		struct request req;
		char why[REQUEST_WHY];
		long n = request_next(rx, rx_len, sizeof(rx), hello_done, &req, why, sizeof(why));

		if (n == 0)
			return;
		if (n < 0) {
			send_error(client_fd, req.hdr.seq, (int)-n, why);
			session_end();
			return;
		}
		handle_request(&req);
		if (client_fd < 0)
			return;
		rx_len -= (size_t)n;
		memmove(rx, rx + n, rx_len);
		rx_since_ms = now_ms();
	}
}

static void drain_wake(void)
{
	uint64_t v;

	if (read(agent.wake_fd, &v, sizeof(v)) < 0)
		return;
}

static void JNICALL server_main(jvmtiEnv *jvmti, JNIEnv *jni, void *arg)
{
	agent.jni = jni;
	bool reaping = false; /* killed copies still exiting (freeze_end_nowait()) */
	const char *older = getenv("MEMTRACE_AGENT_TEST_FREEZE_FLAGS");

	if (older) /* tests: answer as an agent that knows only these */
		request_freeze_known((uint32_t)strtoul(older, NULL, 0));

	freeze_set_idle(walk_idle); /* while a killed copy exits: the rings drained */
	for (;;) {
		bool sampling = client_fd >= 0 && (sampler_active() || walksend_pending());
		struct pollfd pfd[3] = {
			{ .fd = agent.wake_fd, .events = POLLIN },
			{ .fd = listen_fd, .events = POLLIN },
			/* fd -1 is ignored by poll */
			{ .fd = client_fd, .events = POLLIN | (tx_len ? POLLOUT : 0) },
		};
		int n = poll(pfd, 3, sampling ? DRAIN_MS : reaping ? REAP_POLL_MS : POLL_MS);

		if (n < 0 && errno != EINTR) {
			agent_log("poll: %s; the agent thread stops", strerror(errno));
			return;
		}
		if (n > 0 && (pfd[0].revents & POLLIN))
			drain_wake();
		check_listener();
		if (n > 0 && client_fd >= 0 && pfd[2].fd == client_fd &&
		    (pfd[2].revents & POLLOUT) && flush_tx())
			session_end();
		/* the client first: a session that just ended must not make the next busy */
		if (n > 0 && client_fd >= 0 && pfd[2].fd == client_fd &&
		    (pfd[2].revents & ~POLLOUT))
			read_client();
		if (n > 0 && (pfd[1].revents & POLLIN))
			accept_client();
		if (client_fd >= 0 && rx_len && now_ms() - rx_since_ms > FRAME_TIMEOUT_MS) {
			send_error(client_fd, 0, ETIMEDOUT, "incomplete frame timed out");
			session_end();
		}
		pump_samples();
		pump_heap();
		walkcopy_expire(agent_mono_ns());
		zgcfreeze_spare_expire(agent_mono_ns());
		reaping = freeze_reap();
	}
}

int server_start(JNIEnv *jni, int fd, ino_t ino)
{
	jclass cls;
	jmethodID ctor;
	jstring name;
	jobject thread;
	jvmtiError err;

	listen_fd = fd;
	(void)ino;
	cls = (*jni)->FindClass(jni, "java/lang/Thread");
	ctor = cls ? (*jni)->GetMethodID(jni, cls, "<init>", "(Ljava/lang/String;)V") : NULL;
	name = ctor ? (*jni)->NewStringUTF(jni, "memtrace-agent") : NULL;
	thread = name ? (*jni)->NewObject(jni, cls, ctor, name) : NULL;
	if (!thread) {
		if ((*jni)->ExceptionCheck(jni))
			(*jni)->ExceptionClear(jni);
		agent_log("cannot create the agent's java.lang.Thread");
		listen_fd = -1;
		return -1;
	}
	err = (*agent.jvmti)->RunAgentThread(agent.jvmti, thread, server_main, NULL,
					     JVMTI_THREAD_MIN_PRIORITY);
	(*jni)->DeleteLocalRef(jni, thread);
	(*jni)->DeleteLocalRef(jni, name);
	(*jni)->DeleteLocalRef(jni, cls);
	if (err != JVMTI_ERROR_NONE) {
		agent_log("RunAgentThread failed: JVMTI error %d", (int)err);
		listen_fd = -1;
		return -1;
	}
	return 0;
}

void server_shutdown(void)
{
	struct stat st;

	pthread_mutex_lock(&agent.lock);
	shut_down = true;
	if (bound_path[0] && !lstat(bound_path, &st) && st.st_ino == bound_ino)
		unlink(bound_path);
	pthread_mutex_unlock(&agent.lock);
}
