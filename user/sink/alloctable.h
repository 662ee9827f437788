/*
 * alloctable.h - `memtrace alloc`'s by-class table (TLAB-refill sampling)
 * built from allocation-sample events (events.h MT_EV_ALLOC_SAMPLE) of a
 * recording, printed in the live command's text and JSON forms so the two
 * can be compared line for line.
 */
#ifndef MEMTRACE_ALLOCTABLE_H
#define MEMTRACE_ALLOCTABLE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct alloctable;

/* What the table covers, for its header and summary. */
struct alloctable_info {
	int pid;
	double secs;          /* the window */
	uint64_t lost;        /* events lost in the window */
	uint64_t unloads;     /* classes unloaded meanwhile */
	bool jvm_exited;
	int top;              /* rows printed (live default: 20) */
};

/* alloctable_new - empty; NULL on ENOMEM. */
struct alloctable *alloctable_new(void);
/* alloctable_free - NULL is a no-op. */
void alloctable_free(struct alloctable *t);
/* alloctable_add - one sample of class @name (copied) weighing @bytes.
 * Returns 0 or -ENOMEM (the sample is not counted). */
int alloctable_add(struct alloctable *t, const char *name, uint64_t bytes);
/* alloctable_samples - samples added so far. */
uint64_t alloctable_samples(const struct alloctable *t);
/* alloctable_print - the table to @f, as `memtrace alloc [--json]` prints it
 * (sorts @t's rows). */
void alloctable_print(FILE *f, struct alloctable *t, const struct alloctable_info *i, bool json);

#endif
