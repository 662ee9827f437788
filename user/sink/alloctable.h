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

struct alloc_table;

/* What the table covers, for its header and summary. */
struct alloc_table_info {
	int pid;
	double secs;          /* the window */
	uint64_t lost;        /* events lost in the window */
	uint64_t unloads;     /* classes unloaded meanwhile */
	bool jvm_exited;
	int top;              /* rows printed (live default: 20) */
};

/* alloc_table_new - empty; NULL on ENOMEM. */
struct alloc_table *alloc_table_new(void);
/* alloc_table_free - NULL is a no-op. */
void alloc_table_free(struct alloc_table *t);
/* alloc_table_add - one sample of class @name (copied) weighing @bytes. */
void alloc_table_add(struct alloc_table *t, const char *name, uint64_t bytes);
/* alloc_table_samples - samples added so far. */
uint64_t alloc_table_samples(const struct alloc_table *t);
/* alloc_table_print - the table, as `memtrace alloc [--json]` prints it. */
void alloc_table_print(struct alloc_table *t, const struct alloc_table_info *i, bool json);

#endif
