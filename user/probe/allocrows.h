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
};

/* One class of the by-class view from the TLABs' contents. */
struct alloc_class {
	const char *class_name;  /* owned by the tracer */
	uint64_t bytes;          /* estimated, like alloc_row's */
	uint64_t tlabs;          /* TLABs it was found in by parsing */
	double share_stderr;     /* standard error of its share of the total
				  * (the kept TLABs as draws: thinning and the
				  * parsed slices' spread); < 0 when time windows
				  * make it unknown */
	double sq_kib2, cross_kib2; /* its sums for that (mt_content_val) */
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

#endif
