/*
 * allocrows.h - the allocation tracer's answers, read from its maps: rows
 * (a class and stack with its bytes and samples) and the by-class view from
 * the TLABs' contents, each weight turned into bytes by the factors of the
 * moment - the duty cycle's correction, or under windows each thread's own
 * counter over its keys' weights (probe/allocwindows.h, probe/threadctr.h).
 */
#ifndef MEMTRACE_ALLOCROWS_H
#define MEMTRACE_ALLOCROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/alloc.h"

struct alloc_bpf;
struct allocnames;
struct allocwindows;
struct jstackstore;
struct jwalk_layout;
struct mt_vmstructs;
struct ring_buffer;

/* One aggregated row: a class (and stack) with its bytes and samples. */
struct alloc_row {
	const char *class_name;  /* Java form; owned by the tracer */
	int32_t stack_id;        /* -1: none */
	uint32_t gen;
	uint64_t java_pc;        /* pc of the allocating Java frame, 0 if unknown */
	uint64_t method;         /* its Method* when interpreted, else 0 */
	uint64_t jstack;         /* key of its whole Java stack, 0 if none */
	uint64_t bytes;
	uint64_t samples;
	bool content_only;       /* bytes of a class the TLABs' contents hold and no
				  * sample opened a TLAB with: no stack
				  * (allocrows_match_classes) */
};

/* One class of the by-class view from the TLABs' contents. */
struct alloc_class {
	const char *class_name;  /* owned by the tracer */
	uint64_t bytes;          /* estimated, like alloc_row's */
	uint64_t tlabs;          /* TLABs it was found in by parsing */
	double share_stderr;     /* standard error of its share of the total
				  * (the kept TLABs as draws: thinning and the
				  * parsed slices' spread; analysis/sharevar.h);
				  * < 0 when time windows make it unknown */
};

/* What the rows are read from: the tracer's parts (none owned). */
struct allocrows_src {
	struct alloc_bpf *skel;
	struct ring_buffer *rb;        /* consumed first: the newest keys' names */
	struct allocnames *names;
	struct allocwindows *win;      /* the duty cycle (win->on) and its factors */
	struct jstackstore *store;     /* the walker's stacks, or NULL */
	const struct mt_vmstructs *vs; /* with jw: a walked stack's allocating frame */
	const struct jwalk_layout *jw;
	bool content;                  /* the TLABs' contents are parsed */
};

/* allocrows_rows - alloctrace_rows() (probe/alloctrace.h) from @s. */
struct alloc_row *allocrows_rows(const struct allocrows_src *s, size_t *n);
/* allocrows_classes - alloctrace_classes() (probe/alloctrace.h) from @s. */
struct alloc_class *allocrows_classes(const struct allocrows_src *s, size_t *n,
				      uint64_t stats[MT_CONTENT_NSTATS]);

/*
 * allocrows_match_classes - make the rows (*@rows, *@n: a malloc'd array,
 * grown here) say what the class view @c[0..nc-1] says of each class: a
 * row's class is the one that opened its TLAB, a sample of the bytes that
 * aliases with a periodic program, while the class view comes from the
 * TLABs' contents. Each class's rows are scaled so that their bytes sum to
 * the class view's bytes of that class (the rows give how they split among
 * stacks); a class of the view without a row gets one without a stack
 * (content_only); a class of rows absent from the view keeps 0 bytes.
 * Samples are left as they are. Returns 0, or -ENOMEM (rows unchanged).
 */
int allocrows_match_classes(struct alloc_row **rows, size_t *n, const struct alloc_class *c,
			    size_t nc);

#endif
