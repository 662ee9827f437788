/*
 * heapreport.h - who holds the memory, as text or one JSON object per line:
 * the dominator tree's largest retainers (by object and by class) of
 * `memtrace heap --retained`, and paths from GC roots (`memtrace heap
 * --paths`, `memtrace leaks --paths`).
 */
#ifndef MEMTRACE_HEAPREPORT_H
#define MEMTRACE_HEAPREPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "heap/heapview.h"

/* Where the heap came from, for the summary. */
struct heapreport_src {
	const char *source;      /* "live", "snapshot", "hprof" */
	int pid;                 /* 0: a file */
	double pause_ms;         /* the walk's pause (live) */
	bool partial;            /* the walk was cut short */
	bool json;
};

/*
 * heapreport_retained - the @top largest objects at the top of the dominator
 * tree of @hv (heapview_graph() with HEAPVIEW_RETAINED), each with the chain
 * of its largest dominated objects while one holds most of it (MAT's
 * accumulation point), then the @top classes by the bytes their instances
 * retain, then the totals. Returns 0 or -ENOMEM (printed).
 */
int heapreport_retained(const struct mt_heapview *hv, const struct heapreport_src *src,
			uint64_t top);

/*
 * heapreport_path - the shortest path from a heap root to object @o of @hv
 * (heapview_graph() with HEAPVIEW_PATHS), each step on a line of @f after
 * @indent (text), or as the JSON array `"path":[...]` (with @json; no
 * newline, for the caller's record). Steps give the class and the field,
 * array index or reference kind; the first its root kind. "no path" when no
 * root reaches @o.
 */
void heapreport_path(FILE *f, const struct mt_heapview *hv, uint32_t o, bool json,
		     const char *indent);

#endif
