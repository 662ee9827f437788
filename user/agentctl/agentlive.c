// SPDX-License-Identifier: GPL-2.0
/* agentlive.c - a sampling session with the agent that the caller polls. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/agent_proto.h"

#include "agentctl/agentlive.h"
#include "agentctl/agentsession.h"
#include "lib/util.h"

#define STOP_WAIT_MS 1000
#define POLL_FRAMES 64 /* frames applied per poll at most: the caller's loop stays live */

struct agentlive {
	struct mt_proc p;
	struct mt_agentsock s;
	struct mt_samples m;
	char *buf;
	bool dead;
};

struct agentlive *agentlive_start(const struct mt_proc *p, uint32_t interval)
{
	struct mt_ap_sample_start req = { .rec_version = MT_AP_REC_VERSION, .max_depth = 8,
					  .interval = interval ? interval : MT_AP_DEFAULT_INTERVAL };
	struct mt_ap_sample_started st;
	struct mt_ap_hello_reply hello;
	struct agentlive *a = calloc(1, sizeof(*a));
	bool loaded;
	int err;

	if (!a) {
		p_err("out of memory");
		errno = ENOMEM;
		return NULL;
	}
	a->p = *p;
	a->s.fd = -1;
	a->buf = malloc(MT_AP_MAX_PAYLOAD);
	if (!a->buf) {
		p_err("out of memory");
		err = -ENOMEM;
		goto fail;
	}
	if (agentsession_open(p, &a->s, &hello, &loaded)) {
		err = -EIO;
		goto fail;
	}
	err = agentsock_request(&a->s, MT_AP_SAMPLE_START, &req, sizeof(req),
				MT_AP_SAMPLE_STARTED, &st);
	if (err) {
		agentsession_explain(p, &a->s, err);
		goto fail;
	}
	if (samples_init(&a->m, st.first_id, st.interval, 0)) {
		p_err("out of memory for the samples of pid %d", p->pid);
		err = -ENOMEM;
		goto fail;
	}
	p_info("pid %d: agent sampling every %u bytes (mean)%s", p->pid, st.interval,
	       loaded ? "; the agent was loaded now" : "");
	return a;
fail:
	agentsock_close(&a->s); /* the agent stops and goes dormant */
	free(a->buf);
	free(a);
	errno = -err;
	return NULL;
}

int agentlive_poll(struct agentlive *a)
{
	struct mt_ap_hdr h;

	if (a->dead)
		return -ECONNRESET;
	for (int i = 0; i < POLL_FRAMES; i++) {
		int rc = agentsock_recv(&a->s, &h, a->buf, MT_AP_MAX_PAYLOAD, 0);

		if (rc == 0 || rc == -EINTR)
			return 0;
		if (rc > 0 && h.type == MT_AP_ERROR)
			rc = -EREMOTEIO;
		if (rc < 0) {
			agentsession_explain(&a->p, &a->s, rc);
			a->dead = true;
			return rc;
		}
		if (h.type == MT_AP_EVENTS && samples_feed(&a->m, a->buf, h.len) == -ENOMEM) {
			p_err("pid %d: out of memory for agent samples", a->p.pid);
			a->dead = true;
			return -ENOMEM;
		}
	}
	return 0;
}

void agentlive_ages(const struct agentlive *a, struct agentlive_ages *out)
{
	const struct mt_samples *m = &a->m;
	const struct mt_ap_sample_stats *st = &m->agent;

	memset(out, 0, sizeof(*out));
	for (size_t k = 0; k < m->n; k++) {
		int b = ageranges_bucket(samples_age(m, &m->s[k]));

		out->samples[b]++;
		out->bytes[b] += samples_est(m, &m->s[k]);
	}
	out->gcs = m->gcs;
	out->lost = st->dropped_allocs + st->dropped_frees + st->dropped_gcs + m->evicted +
		    m->bad_records;
}

const struct mt_samples *agentlive_samples(const struct agentlive *a)
{
	return &a->m;
}

void agentlive_stop(struct agentlive *a)
{
	struct mt_ap_hdr h;
	uint64_t end;

	if (!a)
		return;
	if (!a->dead && !agentsock_send(&a->s, MT_AP_SAMPLE_STOP, NULL, 0)) {
		end = mono_ns() + STOP_WAIT_MS * 1000000ull;
		while (mono_ns() < end) {
			int rc = agentsock_recv(&a->s, &h, a->buf, MT_AP_MAX_PAYLOAD, 100);

			if (rc < 0 && rc != -EINTR)
				break;
			if (rc > 0 && h.type == MT_AP_SAMPLE_STOPPED) {
				agentsock_detach(&a->s);
				break;
			}
		}
	}
	agentsock_close(&a->s); /* closing alone also makes the agent go dormant */
	samples_free(&a->m);
	free(a->buf);
	free(a);
}
