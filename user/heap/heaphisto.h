/* heaphisto.h - live instances and bytes per class of a heap snapshot (what
 * `jmap -histo:live` prints): from the totals the frozen copy's own mark
 * counted (a MT_AP_HEAP_COUNTS walk) or from the snapshot's objects. */
#ifndef MEMTRACE_HEAPHISTO_H
#define MEMTRACE_HEAPHISTO_H

#include <stddef.h>
#include <stdint.h>

#include "heap/snapshot.h"

struct heaphisto_row {
	const char *name;    /* the class's Java name (in the snapshot or the histogram) */
	uint64_t instances, bytes;
};

struct heaphisto {
	struct heaphisto_row *rows; /* most bytes first (ties: instances, then name) */
	size_t n;
	char *names;         /* names the histogram made (from signatures) */
};

/*
 * heaphisto_build - one row per class of @s with instances into @h; names
 * may point into @s, which must outlive @h. Objects of a class the snapshot
 * does not name count under "<unknown class>". Returns 0 or -ENOMEM (@h is
 * then empty).
 */
int heaphisto_build(const struct mt_snapshot *s, struct heaphisto *h);

/* heaphisto_free - release @h. No operation on a zeroed one. */
void heaphisto_free(struct heaphisto *h);

#endif
