/*
 * sitevol.h - allocation volume per allocating Java method ("pkg.Class.method"),
 * the plain container that the kernel's site counters (probe/sitecount.c) fill,
 * recordings carry (monitor/objrec.c) and the leak ranking reads (leaks.c).
 */
#ifndef MEMTRACE_SITEVOL_H
#define MEMTRACE_SITEVOL_H

#include <stddef.h>
#include <stdint.h>

/* Allocation volume of one method (all its BPF keys merged). */
struct mt_site_volume {
	char *method;        /* "pkg.Class.method"; owned by the volumes */
	uint64_t bytes;      /* TLAB refill + outside-TLAB bytes */
	uint64_t refills;
};

struct mt_site_volumes {
	struct mt_site_volume *v;   /* sorted by bytes, descending (after sitecount_read) */
	size_t n, cap;
	double seconds;             /* how long the counters ran */
	size_t keys;                /* BPF keys in use (of MT_SITES_MAX_KEYS) */
	uint64_t all_bytes;         /* every refill the probes saw */
	uint64_t overflow_bytes, overflow_refills; /* no room in the fixed map */
	uint64_t noframe_bytes;     /* no Java frame known (VM-internal, or no anchor) */
	uint64_t unnamed_bytes;     /* a key whose method could not be named */
};

/* sitevol_free - release *@v's arrays and zero it (a zeroed struct is fine,
 * twice is fine). */
void sitevol_free(struct mt_site_volumes *v);
/* sitevol_add - add @bytes/@refills of @method to @v (merging by name; the
 * name is copied). Returns 0 or -ENOMEM. */
int sitevol_add(struct mt_site_volumes *v, const char *method, uint64_t bytes,
		uint64_t refills);
/* sitevol_find - the volume of @method (whole names only), or NULL; owned by @v. */
const struct mt_site_volume *sitevol_find(const struct mt_site_volumes *v, const char *method);
/* sitevol_sort - by bytes, descending, then by name. */
void sitevol_sort(struct mt_site_volumes *v);

#endif
