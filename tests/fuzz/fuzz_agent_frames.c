// SPDX-License-Identifier: GPL-2.0
/* fuzz_agent_frames.c - libFuzzer entry for memtrace's reader of the
 * agent's frames: the input is what the agent's end of the socket sends
 * (a socketpair here). memtrace says HELLO and asks SAMPLE_START as
 * agentsock_hello()/agentsock_request() do, then reads frames with
 * agentsock_recv() until the stream ends or breaks; every EVENTS payload
 * goes to both of its consumers: the object stream of `record`
 * (agentctl/objstream.c's feed_records, with a recording's tap: the
 * agent's method names and stacks become lines of a recording) and the
 * sample store of `age`/`leaks` (samples_feed). Seeds: the agent's side of
 * real sessions (capture-seeds.sh). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* the statics of the object stream (feed_records) */
#include "../../user/agentctl/objstream.c"
#include "analysis/samples.h"
#include "monitor/objrec.h"
#include "monitor/recording.h"

static uint64_t next_key;

static void fz_feed(void *ctx, struct mt_ev *e)
{
}

static uint64_t fz_type(void *ctx, const char *name, uint64_t ts)
{
	return ++next_key + strlen(name);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct mt_ap_sample_start req = { .rec_version = MT_AP_REC_VERSION, .max_depth = 16,
					  .interval = 512 * 1024 };
	struct mt_ap_sample_started st;
	struct mt_ap_hello_reply hello;
	struct recording_header rh = { 0 };
	struct recording_writer *w;
	struct objrec_writer *ow = NULL;
	struct objstream o = { 0 };
	struct mt_samples m;
	struct mt_ap_hdr h;
	int sv[2], frames = 0;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv))
		return 0;
	/* the agent's side: everything it says, then it stops talking */
	if (write(sv[1], data, size) != (ssize_t)size) {
		close(sv[0]);
		close(sv[1]);
		return 0;
	}
	shutdown(sv[1], SHUT_WR);
	o.s.fd = sv[0];
	o.s.seq = 1;
	o.feed = fz_feed;
	o.type = fz_type;
	o.buf = malloc(MT_AP_MAX_PAYLOAD);
	w = recording_create("/dev/null", &rh);
	if (w && (ow = objrec_writer_new(w)))
		objrec_writer_tap(ow, &o.tap);
	samples_init(&m, 1, 512 * 1024, 4096);
	if (o.buf && !agentsock_hello(&o.s, &hello) &&
	    !agentsock_request(&o.s, MT_AP_SAMPLE_START, &req, sizeof(req), MT_AP_SAMPLE_STARTED,
			       &st)) {
		if (o.tap.started)
			o.tap.started(o.tap.ctx, &st);
		while (frames++ < 10000 &&
		       agentsock_recv(&o.s, &h, o.buf, MT_AP_MAX_PAYLOAD, 0) > 0) {
			if (h.type != MT_AP_EVENTS)
				continue;
			feed_records(&o, o.buf, h.len);
			samples_feed(&m, o.buf, h.len);
		}
	}
	samples_free(&m);
	objrec_writer_free(ow);
	recording_close(w, NULL);
	for (size_t i = 0; i < o.ncls; i++)
		free(o.names[i]);
	free(o.names);
	free(o.keys);
	free(o.buf);
	close(sv[0]);
	close(sv[1]);
	return 0;
}
