// SPDX-License-Identifier: GPL-2.0
/*
 * sequencer_bench.c - sequencer throughput on a synthetic stream (events/s
 * on one core) without and with filters, and recording size per million
 * events. Usage: sequencer_bench [MILLION_EVENTS]
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitor/recording.h"
#include "monitor/sequencer.h"
#include "lib/util.h"

static uint64_t emitted;

static void count(void *ctx, const struct mt_ev *e, const char *t, size_t l)
{
	emitted++;
}

static void write_ev(void *ctx, const struct mt_ev *e, const char *t, size_t l)
{
	recording_write(ctx, e, t);
}

/* A plausible stream: 16 threads doing invocations, monitors, objects, pools. */
static void run(struct mt_seq *s, uint64_t n)
{
	uint64_t names[4] = { sequencer_name(s, "worker", 6), sequencer_name(s, "GC", 2),
			      sequencer_name(s, "G1 Eden Space", 13), sequencer_name(s, "com.example.Foo", 15) };
	struct mt_ev e;
	uint64_t i = 0, x = 88172645463325252ULL;

	memset(&e, 0, sizeof(e));
	for (uint64_t t = 1; t <= 16; t++) {
		e.kind = MT_EV_THREAD_CREATE;
		e.thread = e.id = t;
		e.name = names[0];
		sequencer_feed(s, &e);
	}
	e.kind = MT_EV_TYPE_CREATE;
	e.id = 7;
	e.name = names[3];
	sequencer_feed(s, &e);
	while (i < n) {
		uint64_t t, o;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		t = 1 + (x & 15);
		o = 0x1000 + ((x >> 8) & 1023) * 16;
		memset(&e, 0, sizeof(e));
		e.ts = i;
		e.thread = t;
		switch ((x >> 4) % 5) {
		case 0: /* enter, pool, leave */
			e.kind = MT_EV_INV_ENTER, e.name = names[1], e.v[0] = MT_INV_GC;
			sequencer_feed(s, &e);
			e.kind = MT_EV_POOL_USAGE, e.name = names[2], e.v[1] = x & 0xffff;
			sequencer_feed(s, &e);
			e.kind = MT_EV_INV_LEAVE, e.name = 0;
			sequencer_feed(s, &e);
			i += 3;
			break;
		case 1: /* contended entry */
			e.id = o;
			e.kind = MT_EV_MON_WAIT_BEGIN;
			sequencer_feed(s, &e);
			e.kind = MT_EV_MON_WAIT_END;
			sequencer_feed(s, &e);
			e.kind = MT_EV_MON_ACQUIRE;
			sequencer_feed(s, &e);
			e.kind = MT_EV_MON_RELEASE;
			sequencer_feed(s, &e);
			i += 4;
			break;
		default: /* an object's life */
			e.thread = 0;
			e.id = o;
			e.ref = 7;
			e.kind = MT_EV_OBJ_CREATE;
			sequencer_feed(s, &e);
			e.kind = MT_EV_OBJ_RECLAIM;
			sequencer_feed(s, &e);
			i += 2;
			break;
		}
	}
}

static double bench(const char *label, const struct mt_seq_filter *f, uint64_t n)
{
	struct mt_seq *s = sequencer_new(f, count, NULL);
	uint64_t t0;
	double secs;

	emitted = 0;
	t0 = mono_ns();
	run(s, n);
	secs = (double)(mono_ns() - t0) / 1e9;
	printf("  %-44s %6.2f M events/s  (%llu of %llu reported)\n", label, (double)n / secs / 1e6,
	       (unsigned long long)emitted, (unsigned long long)n);
	sequencer_free(s);
	return (double)n / secs;
}

int main(int argc, char **argv)
{
	uint64_t n = (argc > 1 ? strtoull(argv[1], NULL, 10) : 5) * 1000000ULL;
	struct mt_seq_filter f1 = { .cats = MT_CAT_SYNC | MT_CAT_THREAD };
	uint64_t tids[2] = { 3, 5 };
	struct mt_seq_filter f2 = { .tids = tids, .ntids = 2, .class_glob = "com.example.*" };
	struct mt_seq_filter f3 = { .sample = 16 };
	struct recording_header h = { 0 };
	struct recording_writer *w;
	struct mt_seq *s;
	struct stat st;
	const char *path = "/tmp/memtrace-bench.rec.gz";

	printf("sequencer throughput, one core, %llu synthetic events:\n", (unsigned long long)n);
	bench("no filter", NULL, n);
	bench("--categories sync,thread", &f1, n);
	bench("--tid 3 --tid 5 --class 'com.example.*'", &f2, n);
	bench("--sample 16", &f3, n);
	/* recording size per million reported events */
	w = recording_create(path, &h);
	s = sequencer_new(NULL, write_ev, w);
	run(s, 1000000);
	emitted = sequencer_stats(s)->out;
	sequencer_free(s);
	recording_close(w, NULL);
	if (!stat(path, &st))
		printf("recording: %.2f MB per million events (%.1f bytes/event, gzip'd JSON lines)\n",
		       (double)st.st_size / 1e6 * 1e6 / (double)emitted,
		       (double)st.st_size / (double)emitted);
	unlink(path);
	return 0;
}
