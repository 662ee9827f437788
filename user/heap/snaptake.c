// SPDX-License-Identifier: GPL-2.0
/* snaptake.c - a heap snapshot from the agent: HEAP_REQUEST with the
 * projection, HEAP_DATA frames into a struct mt_snapshot, HEAP_DONE (see
 * snaptake.h). Kept apart from the file readers so they build (and fuzz)
 * without the agent and attach code. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agentctl/agentsession.h"
#include "heap/snaprec.h"
#include "heap/snaptake.h"
#include "heap/walkids.h"
#include "jvm/perfdata.h"
#include "lib/util.h"

#define WALK_TIMEOUT_MS 600000 /* the longest we wait for the agent's first frame */

static int send_request(struct mt_agentsock *so, uint32_t flags, uint32_t max_pause_ms,
			const char *const *fields, int nfields, const uint64_t *samples,
			uint32_t nsamples)
{
	struct mt_ap_heap_request req = { .flags = flags, .max_pause_ms = max_pause_ms };
	size_t len = sizeof(req), ids = (size_t)nsamples * 8;
	char *buf;
	long n;
	int err;

	for (int i = 0; i < nfields; i++)
		len += strlen(fields[i]) + 1;
	if (len + ids > MT_AP_HEAP_REQ_MAX) { /* absurdly many names: ask for every field */
		req.flags |= MT_AP_HEAP_ALLFIELDS;
		nfields = 0;
		len = sizeof(req);
	}
	req.nfields = (uint32_t)nfields;
	if (nsamples) {
		req.flags |= MT_AP_HEAP_SAMPLES;
		req.nsamples = nsamples;
	}
	buf = malloc(MT_AP_HDR_SIZE + len + ids);
	if (!buf)
		return -ENOMEM;
	memcpy(buf + MT_AP_HDR_SIZE, &req, sizeof(req));
	len = sizeof(req);
	for (int i = 0; i < nfields; i++) {
		size_t l = strlen(fields[i]) + 1;

		memcpy(buf + MT_AP_HDR_SIZE + len, fields[i], l);
		len += l;
	}
	if (ids) {
		memcpy(buf + MT_AP_HDR_SIZE + len, samples, ids);
		len += ids;
	}
	n = mt_ap_encode(buf, MT_AP_HDR_SIZE + len, MT_AP_HEAP_REQUEST, so->seq++,
			 buf + MT_AP_HDR_SIZE, len);
	err = n < 0 ? (int)n : write_all(so->fd, buf, (size_t)n);
	free(buf);
	return err;
}

int snaptake_open(const struct mt_proc *p, struct mt_snapsession *ss)
{
	struct mt_ap_hello_reply hello;
	char why[256];
	bool loaded;
	int err;

	memset(ss, 0, sizeof(*ss));
	ss->so.fd = -1;
	ss->buf = malloc(MT_AP_MAX_PAYLOAD);
	if (!ss->buf) {
		p_err("out of memory");
		return -ENOMEM;
	}
	err = agentsession_open(p, &ss->so, &hello, &loaded);
	if (err) {
		free(ss->buf);
		ss->buf = NULL;
		return err < 0 ? err : -EIO; /* agentsession_open() printed why */
	}
	ss->p = p;
	/* the JVM's own safepoint counters give the walk's pause (none: the agent's timing) */
	ss->pd = perfdata_open(p, why, sizeof(why));
	return 0;
}

int snaptake_take(struct mt_snapsession *ss, uint32_t flags, uint32_t max_pause_ms,
		  const char *const *fields, int nfields, struct mt_snapshot *s)
{
	const struct mt_proc *p = ss->p;
	struct mt_sp_window spw;
	struct mt_ap_hdr h;
	char why[128];
	uint64_t ns;
	int err;

	snapshot_init(s);
	s->pid = p->pid;
	s->source = "live";
	perfdata_window_begin(ss->pd, &spw);
	ss->walks++;
	err = send_request(&ss->so, flags, max_pause_ms, fields, nfields, ss->samples,
			   ss->nsamples > MT_AP_HEAP_MAX_SAMPLES ? MT_AP_HEAP_MAX_SAMPLES
								 : ss->nsamples);
	if (err) {
		agentsession_explain(p, &ss->so, err);
		goto fail;
	}
	for (;;) {
		err = agentsock_recv(&ss->so, &h, ss->buf, MT_AP_MAX_PAYLOAD, WALK_TIMEOUT_MS);
		if (err == -EINTR)
			continue;
		if (err == 0) {
			p_err("the agent in JVM %d sent no heap data within %d s", p->pid,
			      WALK_TIMEOUT_MS / 1000);
			err = -ETIMEDOUT;
			goto fail;
		}
		if (err < 0) {
			agentsession_explain(p, &ss->so, err);
			goto fail;
		}
		if (h.type == MT_AP_ERROR) {
			err = -EREMOTEIO;
			agentsession_explain(p, &ss->so, err);
			goto fail;
		}
		if (h.type == MT_AP_HEAP_DONE) {
			memcpy(&s->info, ss->buf, sizeof(s->info));
			if (s->info.flags & MT_AP_HEAP_KEEPIDS)
				ss->tagged = true;
			s->agent_pause_ns = s->info.pause_ns;
			/* exactly one safepoint since the request: the walk's */
			s->pause_from_jvm = perfdata_window_end(ss->pd, &spw, &ns) == 1;
			if (s->pause_from_jvm)
				s->info.pause_ns = ns;
			/* an untagged walk: its objects get their ids here */
			err = walkids_resolve(s, fields, nfields, why, sizeof(why));
			if (err == -EPROTO && !(flags & MT_AP_HEAP_NOUNTAGGED)) {
				char f[32];

				p_warn("JVM %d: the heap walk without object tags did not check out "
				       "(%s); walking again with tags (that walk paused the JVM for %s)",
				       p->pid, why, fmt_ns(s->info.pause_ns, f, sizeof(f)));
				snapshot_free(s);
				return snaptake_take(ss, flags | MT_AP_HEAP_NOUNTAGGED,
						     max_pause_ms, fields, nfields, s);
			}
			if (err) {
				p_err("JVM %d's agent sent a bad heap snapshot: %s", p->pid, why);
				goto fail;
			}
			return 0;
		}
		if (h.type != MT_AP_HEAP_DATA) { /* e.g. a sampling session's EVENTS */
			if (ss->on_frame && (err = ss->on_frame(ss->frame_ctx, &h, ss->buf)))
				goto fail;
			continue;
		}
		err = snaprec_add(s, ss->buf, h.len, true, why, sizeof(why));
		if (err) {
			p_err("JVM %d's agent sent a bad heap snapshot: %s",
			      p->pid, err == -ENOMEM ? "out of memory" : why);
			goto fail;
		}
	}
fail:
	ss->broken = true;
	snapshot_free(s);
	return err;
}

int snaptake_attach(const struct mt_proc *p, struct mt_agentsock *so, struct mt_snapsession *ss)
{
	memset(ss, 0, sizeof(*ss));
	ss->so = *so;
	ss->borrowed = so;
	ss->buf = malloc(MT_AP_MAX_PAYLOAD);
	if (!ss->buf) {
		p_err("out of memory");
		return -ENOMEM;
	}
	ss->p = p;
	{
		char why[256];

		ss->pd = perfdata_open(p, why, sizeof(why));
	}
	return 0;
}

void snaptake_close(struct mt_snapsession *ss)
{
	if (!ss->p)
		return;
	if (ss->borrowed) { /* the caller's socket: back to it, still open */
		*ss->borrowed = ss->so;
		perfdata_free(ss->pd);
		free(ss->buf);
		memset(ss, 0, sizeof(*ss));
		ss->so.fd = -1;
		return;
	}
	if (ss->so.fd >= 0 && !ss->broken) {
		/* after walks with object tags the agent clears them before it ACKs:
		 * a pause, printed (single walks tag no object: no pause) */
		struct mt_sp_window spw;
		uint64_t t0 = mono_ns(), ns;

		perfdata_window_begin(ss->pd, &spw);
		if (!agentsock_detach(&ss->so) && ss->tagged) {
			uint64_t dt = mono_ns() - t0;
			int n = perfdata_window_end(ss->pd, &spw, &ns);
			char f[32];

			if (n == 1)
				p_info("releasing the walk's tags paused JVM %d for %s (the JVM's "
				       "safepoint time)", ss->p->pid, fmt_ns(ns, f, sizeof(f)));
			else if (n != 0) /* 0: no safepoint, nothing was tagged */
				p_info("releasing the walk's tags paused JVM %d for at most %s "
				       "(timed by memtrace)", ss->p->pid, fmt_ns(dt, f, sizeof(f)));
		}
	}
	agentsock_close(&ss->so);
	perfdata_free(ss->pd);
	free(ss->buf);
	memset(ss, 0, sizeof(*ss));
	ss->so.fd = -1;
}

int snaptake_once(const struct mt_proc *p, uint32_t flags, uint32_t max_pause_ms,
		  const char *const *fields, int nfields, struct mt_snapshot *s)
{
	struct mt_snapsession ss;
	int err;

	snapshot_init(s);
	err = snaptake_open(p, &ss);
	if (err)
		return err;
	err = snaptake_take(&ss, flags, max_pause_ms, fields, nfields, s);
	snaptake_close(&ss);
	return err;
}
