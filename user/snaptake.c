// SPDX-License-Identifier: GPL-2.0
/* snaptake.c - a heap snapshot from the agent: HEAP_REQUEST with the
 * projection, HEAP_DATA frames into a struct mt_snapshot, HEAP_DONE. Kept
 * apart from snapshot.c so the file readers build (and fuzz) without the
 * agent and attach code. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agentsession.h"
#include "snapshot.h"
#include "util.h"

#define WALK_TIMEOUT_MS 600000 /* the longest we wait for the agent's first frame */

/* Write all of buf to fd. */
static int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

static int send_request(struct mt_agentsock *so, uint32_t flags, uint32_t max_pause_ms,
			const char *const *fields, int nfields)
{
	struct mt_ap_heap_request req = { .flags = flags, .max_pause_ms = max_pause_ms };
	size_t len = sizeof(req);
	char *buf;
	long n;
	int err;

	for (int i = 0; i < nfields; i++)
		len += strlen(fields[i]) + 1;
	if (len > MT_AP_HEAP_REQ_MAX) { /* absurdly many names: ask for every field */
		req.flags |= MT_AP_HEAP_ALLFIELDS;
		nfields = 0;
		len = sizeof(req);
	}
	req.nfields = (uint32_t)nfields;
	buf = malloc(MT_AP_HDR_SIZE + len);
	if (!buf)
		return -ENOMEM;
	memcpy(buf + MT_AP_HDR_SIZE, &req, sizeof(req));
	len = sizeof(req);
	for (int i = 0; i < nfields; i++) {
		size_t l = strlen(fields[i]) + 1;

		memcpy(buf + MT_AP_HDR_SIZE + len, fields[i], l);
		len += l;
	}
	n = mt_ap_encode(buf, MT_AP_HDR_SIZE + len, MT_AP_HEAP_REQUEST, so->seq++,
			 buf + MT_AP_HDR_SIZE, len);
	err = n < 0 ? (int)n : write_all(so->fd, buf, (size_t)n);
	free(buf);
	return err;
}

int snapshot_take(const struct mt_proc *p, uint32_t flags, uint32_t max_pause_ms,
		  const char *const *fields, int nfields, struct mt_snapshot *s)
{
	struct mt_ap_hello_reply hello;
	struct mt_agentsock so = { .fd = -1 };
	struct mt_ap_hdr h;
	char why[128];
	bool loaded;
	char *buf;
	int err, rc = 1;

	snapshot_init(s);
	s->pid = p->pid;
	s->source = "live";
	if (agentsession_open(p, &so, &hello, &loaded))
		return 1;
	buf = malloc(MT_AP_MAX_PAYLOAD);
	if (!buf) {
		p_err("out of memory");
		goto out;
	}
	err = send_request(&so, flags, max_pause_ms, fields, nfields);
	if (err) {
		agentsession_explain(p, &so, err);
		goto out;
	}
	for (;;) {
		err = agentsock_recv(&so, &h, buf, MT_AP_MAX_PAYLOAD, WALK_TIMEOUT_MS);
		if (err == -EINTR)
			continue;
		if (err == 0) {
			p_err("the agent in JVM %d sent no heap data within %d s", p->pid,
			      WALK_TIMEOUT_MS / 1000);
			goto out;
		}
		if (err < 0) {
			agentsession_explain(p, &so, err);
			goto out;
		}
		if (h.type == MT_AP_ERROR) {
			agentsession_explain(p, &so, -EREMOTEIO);
			goto out;
		}
		if (h.type == MT_AP_HEAP_DONE) {
			memcpy(&s->info, buf, sizeof(s->info));
			break;
		}
		if (h.type != MT_AP_HEAP_DATA)
			continue; /* e.g. sampling EVENTS of another user of the session: none here */
		err = snapshot_add_records(s, buf, h.len, true, why, sizeof(why));
		if (err) {
			p_err("JVM %d's agent sent a bad heap snapshot: %s",
			      p->pid, err == -ENOMEM ? "out of memory" : why);
			goto out;
		}
	}
	agentsock_detach(&so);
	rc = 0;
out:
	free(buf);
	agentsock_close(&so);
	if (rc)
		snapshot_free(s);
	return rc;
}

