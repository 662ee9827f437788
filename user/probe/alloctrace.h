/*
 * alloctrace.h - allocation sampling in one JVM: load bpf/alloc.bpf.c, attach
 * it (TLAB uprobes, or hotspot:object__alloc in exact mode), resolve class
 * names as keys appear, and read the in-kernel aggregate. Its parts, each a
 * file of its own: the class names of keys (allocnames.h), the TLAB uprobes
 * and the duty cycle's windows (allocwindows.h), the rows and the factors
 * that weigh them (allocrows.h); alloctrace.c is the tracer that holds them.
 */
#ifndef MEMTRACE_ALLOCTRACE_H
#define MEMTRACE_ALLOCTRACE_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/profile.h"
#include "jvm/proc.h"
#include "memtrace/alloc.h"
#include "probe/allocrows.h"     /* struct alloc_row, struct alloc_class */
#include "probe/allocwindows.h"  /* struct alloctrace_duty */

struct alloctrace;

struct alloctrace_opts {
	bool exact;   /* hotspot:object__alloc (needs -XX:+DTraceAllocProbes) */
	bool stacks;  /* walk the Java stacks (bpf/jstack.bpf.h) */
	bool native;  /* with stacks: also capture the native user stack (libjvm frames) */
	double budget;/* sampling: the share of an allocating thread's time the probe
		       * may cost (duty cycle, probe/dutycycle.h); 0: observe all the time */
	bool windows;   /* with a budget: also detach the uprobes part of the time when
			 * the trap alone exceeds it (coarse estimates: dutycycle.h);
			 * off, samples are only thinned and the trap's cost stays */
	uint32_t stack_depth; /* with stacks: Java frames kept per stack, deeper ones
			       * cut with a mark (1..MT_JSTACK_MAX_DEPTH; 0: the
			       * default, MT_JSTACK_DEFAULT_DEPTH) */
};

/* Default budget: 1 % of the busiest allocating thread's time. */
#define ALLOCTRACE_BUDGET 0.01

/*
 * alloctrace_new - set up sampling in JVM @p. Prints what failed (p_err),
 * including a missing .symtab or a JVM without DTraceAllocProbes in exact
 * mode, and returns NULL with errno set. Free with alloctrace_free().
 */
struct alloctrace *alloctrace_new(const struct mt_proc *p, const struct alloctrace_opts *o);
/* alloctrace_free - detach and unload; NULL is a no-op. */
void alloctrace_free(struct alloctrace *t);
/* alloctrace_poll - handle new-key and unload events for up to @timeout_ms
 * (less when the duty cycle opens or closes a window sooner: call it in a
 * loop); attach and detach the probes as the duty cycle says. */
int alloctrace_poll(struct alloctrace *t, int timeout_ms);
/*
 * alloctrace_rows - snapshot of the aggregate: a malloc'd array of *n rows
 * (caller frees the array, not the names). Returns NULL with *n = 0 when empty.
 * Under a duty cycle the bytes are estimates of everything allocated since
 * the start (the windows' scaled weights, corrected to now); samples are the
 * samples taken.
 */
struct alloc_row *alloctrace_rows(struct alloctrace *t, size_t *n);
/*
 * alloctrace_classes - allocation by class from the TLABs' contents
 * (include/memtrace/alloc.h: the weight of each kept TLAB split among the
 * classes of its objects; immune to a periodic allocation pattern that
 * aliases with the refills). Kept TLABs not parsed yet count for the class
 * that opened them. A malloc'd array of *n (caller frees it, not the names);
 * NULL with *n = 0 when empty or when contents are not read (exact mode, a
 * JVM whose tables lack the layout: then use the rows' classes).
 * @stats, if not NULL, gets the parser's counters (enum mt_content_stat).
 */
struct alloc_class *alloctrace_classes(struct alloctrace *t, size_t *n,
				       uint64_t stats[MT_CONTENT_NSTATS]);
/* alloctrace_duty - the duty cycle so far into *@d (d->on false: none). */
void alloctrace_duty(struct alloctrace *t, struct alloctrace_duty *d);
/* alloctrace_stack - the user stack @id as up to @max addresses, leaf first.
 * Returns the depth, or -ENOENT. */
int alloctrace_stack(struct alloctrace *t, int32_t id, uint64_t *ips, int max);
/* alloctrace_method_name - "pkg.Class.method" (printable UTF-8) of an
 * interpreted frame's Method* (@gen: the row's unload generation; names of
 * methods whose class may have been unloaded since are not read). Pointer
 * owned by @t, or NULL. */
const char *alloctrace_method_name(struct alloctrace *t, uint64_t method, uint32_t gen);

/*
 * alloctrace_java_frames - the Java stack of row @r as frame names, ROOT
 * FIRST (the thread's first Java frame ... the allocating frame), at most
 * @max. Runtime stubs between the frames are left out unless @stubs. A frame
 * that cannot be named (its class unloaded, its nmethod freed, an unreadable
 * or unprintable name) is "[unknown]" and counted (alloctrace_unknown_frames).
 * A walk that stopped early starts with a "[stack cut: REASON]" frame. Names
 * are owned by @t. Returns the count, or -ENOENT when the row has no Java
 * stack.
 */
int alloctrace_java_frames(struct alloctrace *t, const struct alloc_row *r, const char **names,
			   int max, bool stubs);
/* alloctrace_java_frames_full - the same with each frame's kind, file and line
 * (jstackname_frames_full). */
int alloctrace_java_frames_full(struct alloctrace *t, const struct alloc_row *r,
				struct profile_frame *frames, int max, bool stubs);
/* Java frames named "[unknown]" so far. */
uint64_t alloctrace_unknown_frames(struct alloctrace *t);
/* alloctrace_walks - walks by how they ended (enum mt_jstack_stop, MT_JSTOP_NSTOPS
 * slots, summed over CPUs). Returns 0, or -ENOENT when the walker is off. */
int alloctrace_walks(struct alloctrace *t, uint64_t *by_stop);
/* Samples whose Java stack found no room in the stack map. */
uint64_t alloctrace_lost_jstacks(struct alloctrace *t);

/* Losses, all shown to the user: ring events, keys the map could not hold
 * (bytes not counted), stacks not captured (bytes counted without a stack). */
uint64_t alloctrace_lost_events(struct alloctrace *t);
uint64_t alloctrace_lost_keys(struct alloctrace *t);
uint64_t alloctrace_lost_stacks(struct alloctrace *t);
/* Classes unloaded while tracing, and names that could not be read. */
uint64_t alloctrace_unloads(struct alloctrace *t);
uint64_t alloctrace_unnamed(struct alloctrace *t);

#endif
