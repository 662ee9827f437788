/*
 * objreport.h - the output of `memtrace age` and `memtrace leaks` (text, or
 * one JSON object per line with --json), shared by the live commands and
 * `memtrace report` on a recording.
 */
#ifndef MEMTRACE_OBJREPORT_H
#define MEMTRACE_OBJREPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/leaks.h"
#include "analysis/samples.h"
#include "analysis/sitevol.h"

/* What the figures come from. */
struct objreport_src {
	int pid;
	double elapsed;          /* the window, seconds */
	bool json;
	/* NULL live; from a recording: a remark printed with the figures
	 * (text: a "note:" line; JSON: "note"), e.g. the recording's filters */
	const char *note;
	/* NULL live; from a recording without BPF per-site volumes: why (text:
	 * a line; JSON: "site_counters":null and "site_counters_missing") */
	const char *no_volumes;
	/* optional: more about suspect @g (ranked @rank from 1), printed inside its
	 * record: JSON members after a comma (`,"path":...`), or text lines */
	void (*suspect_more)(void *ctx, int rank, const struct mt_leak *g, bool json);
	void *more_ctx;
};

/*
 * objreport_age - the live samples of @m by GCs survived, per class (or per
 * site with @by_site), the @top largest groups. Returns 0 or -ENOMEM
 * (printed).
 */
int objreport_age(struct mt_samples *m, const struct objreport_src *src, bool by_site,
		  uint64_t top);

/*
 * objreport_leaks - the ranked groups of @l (after leaks_rank(), and
 * leaks_match_volumes() when @vol is not NULL): @suspects suspects, then up
 * to @top others (JSON) / the @top first suspects (text).
 */
void objreport_leaks(struct mt_samples *m, const struct mt_leaks *l,
		     const struct mt_site_volumes *vol, const struct objreport_src *src,
		     int suspects, uint64_t top);

#endif
