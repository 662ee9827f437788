// SPDX-License-Identifier: GPL-2.0
/* objstream.c - the agent's sampled objects as object create/reclaim events. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "memtrace/agent_proto.h"

#include "agentctl/agentsession.h"
#include "jvm/klassname.h"
#include "agentctl/objstream.h"
#include "analysis/samples.h"
#include "lib/util.h"

#define STOP_WAIT_MS 5000
#define MAX_CLASS_ID (1u << 22)

struct objstream {
	struct mt_agentsock s;
	const struct mt_proc *p;
	objstream_feed_fn feed;
	objstream_type_fn type;
	void *ctx;
	char *buf;
	uint64_t *keys;        /* agent class id -> type key (0: not yet) */
	char **names;          /* agent class id -> Java name */
	size_t ncls;
	struct objstream_stats st;
	struct mt_ap_sample_started started;
	struct objstream_tap tap;
};

/* A CLASS record: "Lpkg/C;" or "[I" -> the Java name. */
static void define_class(struct objstream *o, uint32_t id, const char *sig)
{
	char java[1024];
	size_t n = strlen(sig);
	int k;

	if (id >= MAX_CLASS_ID)
		return;
	if (id >= o->ncls) {
		size_t cap = id + 256;
		uint64_t *keys = realloc(o->keys, cap * sizeof(*keys));
		char **names;

		if (!keys)
			return;
		o->keys = keys;
		names = realloc(o->names, cap * sizeof(*names));
		if (!names)
			return;
		o->names = names;
		memset(o->keys + o->ncls, 0, (cap - o->ncls) * sizeof(*keys));
		memset(o->names + o->ncls, 0, (cap - o->ncls) * sizeof(*names));
		o->ncls = cap;
	}
	if (sig[0] == 'L' && n > 2 && sig[n - 1] == ';') { /* plain class: strip L...; */
		sig++;
		n -= 2;
	}
	k = klassname_to_java(sig, n, java, sizeof(java));
	free(o->names[id]);
	o->names[id] = strdup(k > 0 ? java : sig);
	o->keys[id] = 0;
}

static void feed_records(struct objstream *o, const void *payload, size_t len)
{
	struct mt_ap_rec r;
	const void *body;
	size_t off = 0, blen;

	while (mt_ap_rec_next(payload, len, &off, &r, &body, &blen) > 0) {
		struct mt_ev e;

		memset(&e, 0, sizeof(e));
		switch (r.kind) {
		case MT_AP_REC_CLASS:
			define_class(o, r.arg, body);
			break;
		case MT_AP_REC_METHOD:
			if (o->tap.method) {
				char name[512];

				samples_method_display(body, (const char *)body + strlen(body) + 1,
						       name, sizeof(name));
				o->tap.method(o->tap.ctx, r.arg, name);
			}
			break;
		case MT_AP_REC_GC:
			if (o->tap.gc) {
				struct mt_ap_gc g;

				memcpy(&g, body, sizeof(g));
				o->tap.gc(o->tap.ctx, &g);
			}
			break;
		case MT_AP_REC_ALLOC: {
			struct mt_ap_alloc a;

			memcpy(&a, body, sizeof(a));
			if (o->tap.alloc && a.depth <= MT_AP_MAX_DEPTH &&
			    sizeof(a) + a.depth * sizeof(struct mt_ap_frame) <= blen) {
				struct mt_ap_frame f[MT_AP_MAX_DEPTH];

				memcpy(f, (const char *)body + sizeof(a), a.depth * sizeof(f[0]));
				o->tap.alloc(o->tap.ctx, &a, f);
			}
			e.ts = a.ts_ns;
			e.kind = MT_EV_OBJ_CREATE;
			e.id = a.id;
			e.v[0] = a.size;
			if (r.arg < o->ncls && o->names[r.arg]) {
				if (!o->keys[r.arg])
					o->keys[r.arg] = o->type(o->ctx, o->names[r.arg], e.ts);
				e.ref = o->keys[r.arg];
			}
			o->feed(o->ctx, &e);
			o->st.created++;
			break;
		}
		case MT_AP_REC_FREE:
			e.ts = mono_ns();
			e.kind = MT_EV_OBJ_RECLAIM;
			for (uint32_t k = 0; k < r.arg && 8 * (k + 1) <= blen; k++) {
				memcpy(&e.id, (const char *)body + 8 * k, 8);
				o->feed(o->ctx, &e);
				o->st.reclaimed++;
			}
			break;
		case MT_AP_REC_STATS: {
			struct mt_ap_sample_stats s;

			memcpy(&s, body, sizeof(s));
			o->st.dropped_allocs = s.dropped_allocs;
			o->st.dropped_frees = s.dropped_frees;
			if (o->tap.stats)
				o->tap.stats(o->tap.ctx, &s);
			break;
		}
		default: /* newer kinds: not events here */
			break;
		}
	}
}

struct objstream *objstream_new(const struct mt_proc *p, uint32_t interval,
				objstream_feed_fn feed, objstream_type_fn type, void *ctx)
{
	struct mt_ap_sample_start req = { .rec_version = MT_AP_REC_VERSION,
					  .max_depth = MT_OBJSTREAM_DEPTH,
					  .interval = interval };
	struct mt_ap_sample_started st;
	struct mt_ap_hello_reply hello;
	struct objstream *o = calloc(1, sizeof(*o));
	bool loaded;
	int err;

	if (!o)
		return NULL;
	o->s.fd = -1;
	o->p = p;
	o->feed = feed;
	o->type = type;
	o->ctx = ctx;
	o->buf = malloc(MT_AP_MAX_PAYLOAD);
	if (!o->buf) {
		p_err("out of memory");
		goto err;
	}
	if (agentsession_open(p, &o->s, &hello, &loaded))
		goto err;
	err = agentsock_request(&o->s, MT_AP_SAMPLE_START, &req, sizeof(req),
				MT_AP_SAMPLE_STARTED, &st);
	if (err) {
		agentsession_explain(p, &o->s, err);
		goto err;
	}
	o->started = st;
	p_info("objects: the agent in JVM %d samples an allocation every %u bytes (mean)",
	       p->pid, st.interval);
	return o;
err:
	agentsock_close(&o->s);
	free(o->buf);
	free(o);
	return NULL;
}

int objstream_poll(struct objstream *o, int timeout_ms)
{
	struct mt_ap_hdr h;
	int n = 0, rc;

	while ((rc = agentsock_recv(&o->s, &h, o->buf, MT_AP_MAX_PAYLOAD, n ? 0 : timeout_ms)) > 0) {
		n++;
		if (h.type == MT_AP_EVENTS)
			feed_records(o, o->buf, h.len);
		else if (h.type == MT_AP_ERROR)
			rc = -EREMOTEIO;
		if (rc < 0)
			break;
	}
	if (rc == -EINTR)
		rc = 0;
	/* the JVM exited (its agent's hang-up comes a moment before the process
	 * is gone): the end of the stream, for the caller to say */
	if (rc == -ESRCH || (rc == -ECONNRESET && !o->s.last_err.code &&
			     proc_wait_gone(o->p->pid, 2000)))
		return -ESRCH;
	if (rc < 0) {
		agentsession_explain(o->p, &o->s, rc);
		return rc;
	}
	return n;
}

void objstream_free(struct objstream *o, struct objstream_stats *final)
{
	uint64_t end;
	struct mt_ap_hdr h;
	int err;

	if (!o)
		return;
	/* stop: what the agent still holds arrives before STOPPED */
	err = agentsock_send(&o->s, MT_AP_SAMPLE_STOP, NULL, 0);
	end = mono_ns() + STOP_WAIT_MS * 1000000ull;
	while (!err && mono_ns() < end) {
		err = agentsock_recv(&o->s, &h, o->buf, MT_AP_MAX_PAYLOAD, 200);
		if (err == -EINTR || err == 0) {
			err = 0;
			continue;
		}
		if (err < 0)
			break;
		err = 0;
		if (h.type == MT_AP_EVENTS) {
			feed_records(o, o->buf, h.len);
		} else if (h.type == MT_AP_SAMPLE_STOPPED) {
			struct mt_ap_sample_stats s;

			if (h.len == sizeof(s)) {
				memcpy(&s, o->buf, sizeof(s));
				o->st.dropped_allocs = s.dropped_allocs;
				o->st.dropped_frees = s.dropped_frees;
				if (o->tap.stats)
					o->tap.stats(o->tap.ctx, &s);
			}
			agentsock_detach(&o->s);
			break;
		} else if (h.type == MT_AP_ERROR) {
			break;
		}
	}
	/* closing the socket alone makes the agent stop and go dormant */
	agentsock_close(&o->s);
	if (final)
		*final = o->st;
	for (size_t i = 0; i < o->ncls; i++)
		free(o->names[i]);
	free(o->names);
	free(o->keys);
	free(o->buf);
	free(o);
}

void objstream_set_tap(struct objstream *o, const struct objstream_tap *t)
{
	memset(&o->tap, 0, sizeof(o->tap));
	if (!t)
		return;
	o->tap = *t;
	if (o->tap.started)
		o->tap.started(o->tap.ctx, &o->started);
}

const struct objstream_stats *objstream_stats(const struct objstream *o)
{
	return &o->st;
}
