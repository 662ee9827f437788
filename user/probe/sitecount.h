/*
 * sitecount.h - allocation volume per allocating Java method, counted in the
 * kernel in fixed space (bpf/sites.bpf.c): load and attach the TLAB uprobes
 * for one JVM, then read the counters named by method ("pkg.Class.method":
 * interpreted frames by Method* through VMStructs, compiled ones by pc
 * through the JVM's perf map). See include/memtrace/sites.h.
 */
#ifndef MEMTRACE_SITECOUNT_H
#define MEMTRACE_SITECOUNT_H

#include <stddef.h>
#include <stdint.h>

#include "jvm/proc.h"

struct sitecount;

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

/*
 * sitecount_new - count allocations per site in JVM @p from now on. Prints
 * what failed (p_err: stripped libjvm, no VMStructs anchor, BPF load) and
 * returns NULL with errno set. Free with sitecount_free().
 */
struct sitecount *sitecount_new(const struct mt_proc *p);
/* sitecount_free - detach and unload; NULL is a no-op. */
void sitecount_free(struct sitecount *c);

/*
 * sitecount_read - the counters so far into *@out (freed with
 * sitecount_volumes_free). @perfmap: ask the JVM to write its perf map first
 * (jcmd Compiler.perfmap) so compiled pcs get names. Returns 0 or -ENOMEM.
 */
int sitecount_read(struct sitecount *c, const struct mt_proc *p, int perfmap,
		   struct mt_site_volumes *out);
/* sitecount_volumes_free - release *@v's arrays (a zeroed struct is fine). */
void sitecount_volumes_free(struct mt_site_volumes *v);

/* sitecount_add - add @bytes/@refills of @method to @v (merging by name).
 * Pure; sitecount_read and tests use it. Returns 0 or -ENOMEM. */
int sitecount_add(struct mt_site_volumes *v, const char *method, uint64_t bytes,
		  uint64_t refills);
/* sitecount_find - the volume of @method, or NULL. */
const struct mt_site_volume *sitecount_find(const struct mt_site_volumes *v, const char *method);

#endif
