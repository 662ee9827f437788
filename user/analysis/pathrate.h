/*
 * pathrate.h - allocation paths over the intervals of a live view: bytes per
 * (Java stack, class) since start and in the last interval, from successive
 * snapshots of a sampling aggregate whose totals only grow (what `top
 * --stacks` shows). A path is its frames' names: the kernel keeps one stack
 * per distinct set of pcs, so one named path (the same methods, at another
 * bytecode or in another tier) can come as several rows; they are summed.
 * Pure logic: the caller names the stacks.
 */
#ifndef MEMTRACE_PATHRATE_H
#define MEMTRACE_PATHRATE_H

#include <stddef.h>
#include <stdint.h>

/* One path: a Java stack's frame names and the allocated class. */
struct pathrate_path {
	const char *frames;    /* "root;...;leaf" ("" none); owned by the table */
	const char *class_name;/* owned by the caller's source, which outlives @pr */
	uint64_t total;        /* bytes since start */
	uint64_t interval;     /* bytes since the previous pathrate_end */
	uint64_t samples;      /* samples since start */
};

struct pathrate {
	struct pathrate_path *cur;  /* after pathrate_end: by interval bytes, descending */
	size_t ncur, capcur;
	struct pathrate_path *prev; /* the previous round, by (frames, class) */
	size_t nprev, capprev;
	uint64_t interval_bytes;    /* all paths' bytes in the last interval */
	uint64_t total_bytes;
	/* the frame strings, each kept once (until pathrate_fini) */
	char **strs;
	size_t nstrs, capstrs;
	size_t *slots;              /* open addressing: index + 1, 0 empty */
	size_t nslots;
};

/* pathrate_init - an empty table (no allocation). */
void pathrate_init(struct pathrate *pr);
/* pathrate_fini - release the arrays; a zeroed or finished table is fine. */
void pathrate_fini(struct pathrate *pr);
/* pathrate_begin - start a round: the snapshot's rows follow (pathrate_add). */
void pathrate_begin(struct pathrate *pr);
/* pathrate_add - one row of the snapshot: @bytes and @samples since start of
 * the path @frames ("root;...;leaf", "" or NULL for none; copied once) to
 * @class_name (kept, not copied). Rows of one path are summed. Returns 0 or
 * -ENOMEM. */
int pathrate_add(struct pathrate *pr, const char *frames, const char *class_name,
		 uint64_t bytes, uint64_t samples);
/* pathrate_end - close the round: each path's interval bytes are its total
 * less the previous round's (0 for a total that went down, which an
 * estimate corrected to now can do); pr->cur sorted by interval bytes, then
 * total, descending. Returns 0 or -ENOMEM. */
int pathrate_end(struct pathrate *pr);

#endif
