// SPDX-License-Identifier: GPL-2.0
/*
 * recording_bench.c - the recording writer's and reader's speed on a real
 * event stream: the events of IN (a recording) are loaded into memory, then
 * written ROUNDS times to OUT through recording_write() (recording_tick()
 * every 256 events, as `record`'s loop would call it, when the linked
 * recording.c has it) and read back through recording_next().
 * bench/recording.sh builds it twice - against the current recording.c and
 * against the one before the crash-safe framing - and runs both in turns.
 * Usage: recording_bench IN OUT [ROUNDS]
 * Prints: write_eps=N read_eps=N bytes=N events=N (medians over the rounds).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "monitor/recording.h"
#include "monitor/recording_read.h"
#include "lib/util.h"

/* Present in the framed writer only: called when linked. */
int recording_tick(struct recording_writer *w, uint64_t now_ns) __attribute__((weak));

struct ev {
	struct mt_ev e;
	char *text;
};

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	struct recording_header h;
	struct recording_reader *r;
	struct ev *evs = NULL;
	size_t n = 0, cap = 0;
	int rounds = argc > 3 ? atoi(argv[3]) : 5;
	double wr[64], rd[64];
	uint64_t line, bytes = 0;
	const char *text;
	struct mt_ev e;

	if (argc < 3 || rounds < 1 || rounds > 64) {
		fprintf(stderr, "usage: recording_bench IN OUT [ROUNDS <= 64]\n");
		return 2;
	}
	r = recording_open(argv[1], &h);
	if (!r) {
		fprintf(stderr, "cannot read %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	while (recording_next(r, &e, &text, &line) > 0) {
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			evs = realloc(evs, cap * sizeof(*evs));
			if (!evs)
				return 1;
		}
		evs[n].e = e;
		evs[n].text = e.kind == MT_EV_NAME ? strdup(text) : NULL;
		n++;
	}
	recording_close_read(r);
	for (int k = 0; k < rounds; k++) {
		struct recording_writer *w = recording_create(argv[2], &h);
		uint64_t t0, got = 0;
		struct stat st;

		if (!w) {
			fprintf(stderr, "cannot create %s: %s\n", argv[2], strerror(errno));
			return 1;
		}
		t0 = mono_ns();
		for (size_t i = 0; i < n; i++) {
			if (recording_write(w, &evs[i].e, evs[i].text))
				return 1;
			if (recording_tick && !(i & 255))
				recording_tick(w, mono_ns());
		}
		if (recording_close(w, NULL))
			return 1;
		wr[k] = (double)n / ((double)(mono_ns() - t0) / 1e9);
		if (!stat(argv[2], &st))
			bytes = (uint64_t)st.st_size;
		t0 = mono_ns();
		r = recording_open(argv[2], &h);
		if (!r)
			return 1;
		while (recording_next(r, &e, &text, &line) > 0)
			got++;
		recording_close_read(r);
		rd[k] = (double)got / ((double)(mono_ns() - t0) / 1e9);
		if (got != n) {
			fprintf(stderr, "read back %llu of %zu events\n", (unsigned long long)got, n);
			return 1;
		}
	}
	qsort(wr, (size_t)rounds, sizeof(wr[0]), cmp_d);
	qsort(rd, (size_t)rounds, sizeof(rd[0]), cmp_d);
	printf("write_eps=%.0f read_eps=%.0f bytes=%llu events=%zu\n", wr[rounds / 2],
	       rd[rounds / 2], (unsigned long long)bytes, n);
	unlink(argv[2]);
	return 0;
}
