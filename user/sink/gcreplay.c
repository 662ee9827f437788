// SPDX-License-Identifier: GPL-2.0
/* gcreplay.c - `memtrace gc`'s records and summary; see gcreplay.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sink/gcreplay.h"
#include "lib/util.h"

#define MAX_CAUSES 32 /* distinct causes counted in the summary (HotSpot has < 40) */

struct cause_count {
	char cause[MT_GC_NAME_LEN];
	uint64_t n;
};

struct gcreplay {
	FILE *f;
	struct cause_count causes[MAX_CAUSES];
	int ncauses;
	bool json;
	uint64_t count, young, full, pauses, cycles;
	uint64_t pause_total, pause_max; /* every stop-the-world record */
	uint64_t cycle_total;            /* the concurrent cycles' time (not a pause) */
	uint64_t mono_to_real; /* add to a monotonic ns to get epoch ns */
	uint64_t t0;           /* monotonic ns when tracing started */
	uint64_t observed;     /* monotonic ns events are observed from (0: t0) */
	struct gcpair gp;      /* the pairing of gcreplay_feed() */
};

struct gcreplay *gcreplay_new(FILE *f, bool json, uint64_t t0, uint64_t mono_to_real)
{
	struct gcreplay *r = calloc(1, sizeof(*r));

	if (!r) {
		errno = ENOMEM;
		return NULL;
	}
	r->f = f;
	r->json = json;
	r->t0 = t0;
	r->mono_to_real = mono_to_real;
	gcpair_init(&r->gp, gcreplay_record, r);
	return r;
}

void gcreplay_free(struct gcreplay *r)
{
	free(r);
}

static void print_json(const struct gcreplay *r, const struct gc_record *rec)
{
	FILE *f = r->f;

	fprintf(f, "{\"event\":\"gc\",\"seq\":%llu,\"start_ns\":%llu,\"start_mono_ns\":%llu,"
		"\"duration_ns\":%llu,\"full\":%s,\"kind\":\"%s\",\"collector\":",
		(unsigned long long)rec->seq, (unsigned long long)(rec->start_ns + r->mono_to_real),
		(unsigned long long)rec->start_ns, (unsigned long long)(rec->end_ns - rec->start_ns),
		rec->full ? "true" : "false", gcpair_kind_name(rec->kind));
	json_str(f, rec->manager);
	if (rec->kind == GC_KIND_PAUSE || rec->pause[0]) {
		fprintf(f, ",\"pause\":");
		json_str(f, rec->pause);
	}
	fprintf(f, ",\"timed\":%s", rec->timed ? "true" : "false");
	fprintf(f, ",\"cause\":");
	json_str(f, rec->cause);
	fprintf(f, ",\"action\":");
	json_str(f, rec->action);
	fprintf(f, ",\"pools\":[");
	for (int i = 0; i < rec->npools; i++) {
		const struct gc_pool *p = &rec->pools[i];

		fprintf(f, "%s{\"name\":", i ? "," : "");
		json_str(f, p->name);
		fprintf(f, ",\"heap\":%s,\"used_before\":%llu,\"used_after\":%llu,"
			"\"committed\":%llu,\"max\":%lld}",
			p->heap ? "true" : "false", (unsigned long long)p->used_before,
			(unsigned long long)p->used_after, (unsigned long long)p->committed,
			p->max == UINT64_MAX ? -1LL : (long long)p->max);
	}
	fprintf(f, "]}\n");
}

static void print_text(const struct gcreplay *r, const struct gc_record *rec)
{
	uint64_t before = 0, after = 0, committed = 0;
	char b1[32], b2[32], b3[32], d[32];
	FILE *f = r->f;

	for (int i = 0; i < rec->npools; i++)
		if (rec->pools[i].heap) {
			before += rec->pools[i].used_before;
			after += rec->pools[i].used_after;
			committed += rec->pools[i].committed;
		}
	fprintf(f, "#%-4llu %8.3fs  %-22s %-10s %10s",
		(unsigned long long)rec->seq, (double)(rec->start_ns - r->t0) / 1e9,
		rec->manager[0] ? rec->manager : "(no memory manager)",
		gcpair_kind_name(rec->kind), fmt_ns(rec->end_ns - rec->start_ns, d, sizeof(d)));
	if (rec->pause[0])
		fprintf(f, "  %s", rec->pause);
	/* a pause's pools (G1 Concurrent GC's) are not a collection's before and after */
	if (rec->npools && rec->kind != GC_KIND_PAUSE)
		fprintf(f, "  heap %s -> %s (committed %s)", fmt_bytes(before, b1, sizeof(b1)),
			fmt_bytes(after, b2, sizeof(b2)), fmt_bytes(committed, b3, sizeof(b3)));
	if (rec->cause[0])
		fprintf(f, "  cause: %s", rec->cause);
	fprintf(f, "\n");
	for (int i = 0; i < rec->npools && rec->kind != GC_KIND_PAUSE; i++) {
		const struct gc_pool *p = &rec->pools[i];
		char m[32];

		if (!p->heap)
			continue;
		fprintf(f, "        %-26s %10s -> %-10s committed %-10s max %s\n", p->name,
			fmt_bytes(p->used_before, b1, sizeof(b1)),
			fmt_bytes(p->used_after, b2, sizeof(b2)),
			fmt_bytes(p->committed, b3, sizeof(b3)),
			p->max == UINT64_MAX ? "-" : fmt_bytes(p->max, m, sizeof(m)));
	}
}

void gcreplay_record(const struct gc_record *rec, void *ctx)
{
	struct gcreplay *r = ctx;
	uint64_t d = rec->end_ns - rec->start_ns;

	r->count++;
	switch (rec->kind) {
	case GC_KIND_YOUNG:
		r->young++;
		break;
	case GC_KIND_FULL:
		r->full++;
		break;
	case GC_KIND_PAUSE:
		r->pauses++;
		break;
	case GC_KIND_CYCLE:
		r->cycles++;
		break;
	}
	if (gcpair_is_pause(rec)) { /* stop-the-world: the whole record is a pause */
		r->pause_total += d;
		if (d > r->pause_max)
			r->pause_max = d;
	} else {
		r->cycle_total += d;
	}
	if (rec->cause[0]) {
		int i;

		for (i = 0; i < r->ncauses && strcmp(r->causes[i].cause, rec->cause); i++)
			;
		if (i == r->ncauses && i < MAX_CAUSES)
			memcpy(r->causes[r->ncauses++].cause, rec->cause, MT_GC_NAME_LEN);
		if (i < r->ncauses)
			r->causes[i].n++;
	}
	if (r->json)
		print_json(r, rec);
	else
		print_text(r, rec);
}

void gcreplay_summary(struct gcreplay *r, const struct gcpair *gp, uint64_t lost, double secs,
		      bool jvm_exited)
{
	uint64_t stw = r->young + r->full + r->pauses;
	uint64_t mean = stw ? r->pause_total / stw : 0;
	uint64_t unpaired = gp->unpaired_begin + gp->unpaired_end + gp->overflow;
	char a[32], b[32], c[32];
	FILE *f = r->f;

	if (r->json) {
		fprintf(f, "{\"event\":\"summary\",\"gc_count\":%llu,\"young\":%llu,\"full\":%llu,"
			"\"pauses\":%llu,\"cycles\":%llu,\"pause_count\":%llu,"
			"\"pause_total_ns\":%llu,\"pause_max_ns\":%llu,\"pause_mean_ns\":%llu,"
			"\"cycle_total_ns\":%llu,\"lost_events\":%llu,"
			"\"unpaired_events\":%llu,\"in_flight_events\":%llu,"
			"\"duration_s\":%.3f,\"jvm_exited\":%s,",
			(unsigned long long)r->count, (unsigned long long)r->young,
			(unsigned long long)r->full, (unsigned long long)r->pauses,
			(unsigned long long)r->cycles, (unsigned long long)stw,
			(unsigned long long)r->pause_total, (unsigned long long)r->pause_max,
			(unsigned long long)mean, (unsigned long long)r->cycle_total,
			(unsigned long long)lost, (unsigned long long)unpaired,
			(unsigned long long)gp->in_flight, secs,
			jvm_exited ? "true" : "false");
		if (r->observed > r->t0)
			fprintf(f, "\"observed_from_ns\":%llu,",
				(unsigned long long)(r->observed + r->mono_to_real));
		fprintf(f, "\"causes\":{");
		for (int i = 0; i < r->ncauses; i++) {
			fprintf(f, "%s", i ? "," : "");
			json_str(f, r->causes[i].cause);
			fprintf(f, ":%llu", (unsigned long long)r->causes[i].n);
		}
		fprintf(f, "}}\n");
		return;
	}
	fprintf(f, "\nsummary: %llu young, %llu full", (unsigned long long)r->young,
		(unsigned long long)r->full);
	if (r->pauses)
		fprintf(f, ", %llu pause%s of concurrent cycles", (unsigned long long)r->pauses,
			r->pauses == 1 ? "" : "s");
	if (r->cycles)
		fprintf(f, ", %llu concurrent cycle%s", (unsigned long long)r->cycles,
			r->cycles == 1 ? "" : "s");
	fprintf(f, " in %.1f s%s\n", secs, jvm_exited ? " (the JVM exited)" : "");
	if (r->observed > r->t0)
		fprintf(f, "         observed from %.3f s on (its probes all attached then: a "
			"collection before may be missing)\n", (double)(r->observed - r->t0) / 1e9);
	fprintf(f, "         %llu pause%s: total %s, max %s, mean %s\n", (unsigned long long)stw,
		stw == 1 ? "" : "s", fmt_ns(r->pause_total, a, sizeof(a)),
		fmt_ns(r->pause_max, b, sizeof(b)), fmt_ns(mean, c, sizeof(c)));
	if (r->cycles)
		fprintf(f, "         concurrent cycles: total %s (beside the application, not "
			"pauses)\n", fmt_ns(r->cycle_total, a, sizeof(a)));
	if (r->ncauses) {
		fprintf(f, "         causes:");
		for (int i = 0; i < r->ncauses; i++)
			fprintf(f, "%s %llu %s", i ? "," : "", (unsigned long long)r->causes[i].n,
				r->causes[i].cause);
		fprintf(f, "\n");
	}
	/* all three always: one shape for readers of the text */
	fprintf(f, "         lost events: %llu, unpaired: %llu, in flight at attach or exit: %llu\n",
		(unsigned long long)lost, (unsigned long long)unpaired,
		(unsigned long long)gp->in_flight);
}

void gcreplay_feed(struct gcreplay *r, const struct mt_gc_event *e)
{
	gcpair_feed(&r->gp, e);
}

void gcreplay_observed_from(struct gcreplay *r, uint64_t mono_ns)
{
	r->observed = mono_ns;
}

void gcreplay_finish(struct gcreplay *r, uint64_t lost, double secs, bool jvm_exited)
{
	gcpair_finish(&r->gp);
	gcreplay_summary(r, &r->gp, lost, secs, jvm_exited);
}
