// SPDX-License-Identifier: GPL-2.0
/* sampling.c - drive one sampling session with the JVMTI agent. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/agent_proto.h"

#include "agentctl/agentsession.h"
#include "agentctl/sampling.h"
#include "lib/stopflag.h"
#include "lib/util.h"

#define RX_CAP (MT_AP_MAX_PAYLOAD)
#define TICK_MS 200
#define STOP_WAIT_MS 10000

int sampling_parse_interval(const char *s, uint32_t *out)
{
	uint64_t v;

	if (parse_bytes(s, &v) || !v || v > (1ull << 30))
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* Read frames until one of type @want (EVENTS are fed meanwhile). */
static int pump(struct mt_agentsock *s, struct mt_samples *m, char *buf, int timeout_ms,
		struct mt_ap_hdr *h)
{
	int rc = agentsock_recv(s, h, buf, RX_CAP, timeout_ms);

	if (rc <= 0)
		return rc;
	if (h->type == MT_AP_EVENTS && samples_feed(m, buf, h->len) == -ENOMEM)
		return -ENOMEM;
	return 1;
}

int sampling_run(const struct mt_sampling_opts *o, struct mt_proc *p, struct mt_samples *m,
		 mt_sampling_tick tick, void *ctx, double *elapsed)
{
	struct mt_ap_sample_start req = { .rec_version = MT_AP_REC_VERSION,
					  .max_depth = (uint16_t)o->depth,
					  .interval = o->interval };
	struct mt_ap_sample_started st;
	struct mt_agentsock s = { .fd = -1 };
	struct mt_ap_hello_reply hello;
	struct stopflag_saved old_handlers;
	struct mt_ap_hdr h;
	uint64_t t0, next_tick, next_walk, end;
	uint32_t walked = 0;
	bool loaded, stopped = false;
	char *buf = NULL;
	int err, ret = -EIO;

	memset(m, 0, sizeof(*m));
	*elapsed = 0;
	err = proc_open(o->pid, p);
	if (err) {
		proc_explain(o->pid, err);
		return err;
	}
	err = agentsession_open(p, &s, &hello, &loaded);
	if (err)
		return err;
	if (loaded && p->jdk_major >= 21)
		p_info("note: JDK %d prints a warning about the dynamically loaded agent on its "
		       "stderr", p->jdk_major);
	buf = malloc(RX_CAP);
	if (!buf) {
		p_err("out of memory");
		goto out;
	}
	err = agentsock_request(&s, MT_AP_SAMPLE_START, &req, sizeof(req),
				MT_AP_SAMPLE_STARTED, &st);
	if (err == -EREMOTEIO && s.last_err.code == ENOMSG) {
		p_err("the agent in JVM %d predates allocation sampling (it answered: %s); it "
		      "cannot be unloaded: restart the JVM to use a newer agent", p->pid,
		      s.last_err.msg);
		goto out;
	}
	if (err) {
		agentsession_explain(p, &s, err);
		goto out;
	}
	if (samples_init(m, st.first_id, st.interval, o->max_samples)) {
		p_err("out of memory for %zu samples", o->max_samples);
		goto out;
	}
	m->on_alloc = o->on_alloc;
	m->on_alloc_ctx = ctx;
	if (o->on_start && o->on_start(ctx, p))
		goto out;
	p_info("sampling JVM %d every %u bytes (mean) for %.0f s ...", p->pid, st.interval,
	       o->duration);
	stopflag_catch(&old_handlers);
	t0 = mono_ns();
	end = t0 + (uint64_t)(o->duration * 1e9);
	next_tick = t0 + TICK_MS * 1000000ull;
	next_walk = o->on_walk && o->walk_every > 0 ? t0 : UINT64_MAX;
	while (!stopflag_raised() && (mono_ns() < end || (o->walks && walked < o->walks))) {
		uint64_t now = mono_ns();
		int wait = (int)((next_tick > now ? next_tick - now : 0) / 1000000);

		/* the caller's walks in the window (the last one is on_last's) */
		if (now >= next_walk && (o->walks ? walked < o->walks :
				now + (uint64_t)(o->walk_every * 5e8) < end)) {
			next_walk += (uint64_t)(o->walk_every * 1e9);
			walked++;
			if (o->on_walk(ctx, p, &s, m, (double)(now - t0) / 1e9)) {
				/* the walk said why (a socket error, a snapshot over
				 * the memory bound, ...) */
				p_warn("JVM %d: the sampling session stops with the heap "
				       "snapshot that failed (above): reporting what arrived",
				       p->pid);
				*elapsed = (double)(mono_ns() - t0) / 1e9;
				ret = 0;
				goto restore;
			}
			continue;
		}
		err = pump(&s, m, buf, wait, &h);
		if (err == -EINTR)
			continue;
		if (err < 0) {
			agentsession_explain(p, &s, err);
			goto restore;
		}
		if (err > 0 && h.type == MT_AP_ERROR) {
			agentsession_explain(p, &s, -EREMOTEIO);
			goto restore;
		}
		if (mono_ns() >= next_tick) {
			next_tick += TICK_MS * 1000000ull;
			if (tick && tick(ctx, m, (double)(mono_ns() - t0) / 1e9))
				goto restore;
		}
	}
	*elapsed = (double)(mono_ns() - t0) / 1e9;
	if (o->on_end)
		o->on_end(ctx, p, *elapsed);
	if (o->on_last && o->on_last(ctx, p, &s, m)) {
		p_warn("JVM %d: the sampling session stops with the last heap snapshot, which "
		       "failed (above): reporting what arrived (no final counters)", p->pid);
		ret = 0;
		goto restore;
	}
	if (stopflag_raised())
		p_info("interrupted after %.1f s: reporting what was sampled", *elapsed);
	/* stop: what the agent still holds arrives before STOPPED */
	err = agentsock_send(&s, MT_AP_SAMPLE_STOP, NULL, 0);
	end = mono_ns() + STOP_WAIT_MS * 1000000ull;
	while (!err && mono_ns() < end) {
		err = pump(&s, m, buf, 200, &h);
		if (err == -EINTR) {
			err = 0;
			continue;
		}
		if (err > 0 && h.type == MT_AP_SAMPLE_STOPPED && h.len == sizeof(m->agent)) {
			memcpy(&m->agent, buf, sizeof(m->agent));
			m->have_agent_stats = true;
			stopped = true;
			break;
		}
		if (err > 0 && h.type == MT_AP_ERROR) {
			err = -EREMOTEIO;
			break;
		}
		err = err < 0 ? err : 0;
	}
	if (!stopped) {
		if (err)
			agentsession_explain(p, &s, err);
		else
			p_err("the agent in JVM %d did not confirm the end of sampling within %d ms",
			      p->pid, STOP_WAIT_MS);
		goto restore;
	}
	agentsock_detach(&s);
	ret = 0;
restore:
	stopflag_restore(&old_handlers);
out:
	/* closing the socket alone makes the agent stop and go dormant */
	agentsock_close(&s);
	free(buf);
	return ret && err < 0 ? err : ret;
}

void sampling_print_losses(const struct mt_samples *m)
{
	const struct mt_ap_sample_stats *a = &m->agent;

	if (a->dropped_allocs)
		p_warn("%llu samples lost in the agent (its ring was full): estimates are low",
		       (unsigned long long)a->dropped_allocs);
	if (a->dropped_frees)
		p_warn("%llu object deaths lost in the agent: some dead samples count as live",
		       (unsigned long long)a->dropped_frees);
	if (a->dropped_gcs)
		p_warn("%llu GC records lost in the agent: ages are too young",
		       (unsigned long long)a->dropped_gcs);
	if (a->tag_errors)
		p_warn("%llu samples skipped by the agent (JVMTI call failed)",
		       (unsigned long long)a->tag_errors);
	if (a->names_dropped)
		p_warn("%llu names past the agent's table bound show as unknown",
		       (unsigned long long)a->names_dropped);
	if (m->evicted)
		p_warn("%llu samples evicted or not kept at the %zu-sample bound (reservoir over "
		       "arrivals; estimates scaled by arrivals/bound)", (unsigned long long)m->evicted,
		       m->max);
	if (m->bad_records)
		p_warn("%llu malformed record batches from the agent were skipped",
		       (unsigned long long)m->bad_records);
	if (!m->have_agent_stats)
		p_warn("no final counters from the agent: losses are unknown");
}

void sampling_json_losses(const struct mt_samples *m)
{
	const struct mt_ap_sample_stats *a = &m->agent;

	printf("\"sampled\":%llu,\"dropped_allocs\":%llu,\"dropped_frees\":%llu,"
	       "\"dropped_gcs\":%llu,\"tag_errors\":%llu,\"names_dropped\":%llu,\"evicted\":%llu,"
	       "\"frees_unknown\":%llu,\"bad_records\":%llu,\"agent_counters\":%s",
	       (unsigned long long)a->sampled, (unsigned long long)a->dropped_allocs,
	       (unsigned long long)a->dropped_frees, (unsigned long long)a->dropped_gcs,
	       (unsigned long long)a->tag_errors, (unsigned long long)a->names_dropped,
	       (unsigned long long)m->evicted, (unsigned long long)m->frees_unknown,
	       (unsigned long long)m->bad_records, m->have_agent_stats ? "true" : "false");
}

int sampling_common_opt(int c, const char *arg, struct mt_sampling_opts *o)
{
	uint64_t v;

	switch (c) {
	case 'p':
		if (parse_pid(arg, &o->pid)) {
			p_err("invalid pid '%s'", arg);
			return 2;
		}
		return 0;
	case 'd':
		if (parse_seconds(arg, &o->duration) || o->duration <= 0) {
			p_err("invalid --duration '%s': expected %s, above 0", arg, MT_DURATION_HELP);
			return 2;
		}
		return 0;
	case 'i':
		if (sampling_parse_interval(arg, &o->interval)) {
			p_err("invalid --interval '%s' (bytes 1..1g, k/m suffixes)", arg);
			return 2;
		}
		return 0;
	case 'D':
		if (parse_u64(arg, &v) || !v || v > MT_AP_MAX_DEPTH) {
			p_err("invalid --depth '%s' (1..%d)", arg, MT_AP_MAX_DEPTH);
			return 2;
		}
		o->depth = (unsigned)v;
		return 0;
	case 'M':
		if (parse_u64(arg, &v) || v < 16 || v > (1u << 24)) {
			p_err("invalid --max-samples '%s' (16..16777216)", arg);
			return 2;
		}
		o->max_samples = (size_t)v;
		return 0;
	case 'j':
		mt_opts.json = true;
		return 0;
	}
	return 1;
}

