/*
 * querylive.h - the evaluation half of `memtrace query`, shared by the
 * command and `memtrace serve`'s POST /api/v1/jvms/PID/query: the MT_AP_HEAP_*
 * flags a compiled program needs, and running it on a snapshot (build the
 * heap, compile again against it, run) into a JSON buffer.
 */
#ifndef MEMTRACE_QUERYLIVE_H
#define MEMTRACE_QUERYLIVE_H

#include <stddef.h>
#include <stdint.h>

#include "dsl/dsl.h"
#include "heap/snapshot.h"

/* querylive_heap_flags - the MT_AP_HEAP_* flags a program with needs @n asks
 * for (snaptake_take()). */
uint32_t querylive_heap_flags(const struct dsl_needs *n);

/* Where querylive_eval() stopped. */
enum querylive_status {
	QUERY_OK,
	QUERY_HEAP,     /* the heap could not be built: querylive_out.why */
	QUERY_FIT,      /* the program does not fit this heap: the diagnostics */
	QUERY_RUN,      /* the program failed on this heap: the diagnostics */
	QUERY_NOMEM,
};

struct querylive_out {
	char *json;        /* the program's JSON document (malloc'd, ends with '\n') */
	size_t len;
	uint32_t objects;  /* objects of the heap it ran on */
	uint64_t eval_ns;  /* time dsl_run took */
	char why[160];     /* QUERY_HEAP's reason */
};

/*
 * querylive_eval - run the program @src (@len bytes, @filename for messages),
 * compiled without a heap into *@prog, on snapshot @s: build the heap (values
 * for the fields of @needs, all fields if NULL - a file), compile again
 * against its schema (*@prog is replaced), run. @drop: the caller is done
 * with @s's records - the heap is built over them and they are dropped
 * (heapview_build_take()); else @s is left as it is. Diagnostics go to
 * @diags. Prints nothing. On QUERY_OK, @o->json is the caller's to free.
 */
enum querylive_status querylive_eval(struct dsl_program **prog, const char *src, size_t len,
			     const char *filename, struct mt_snapshot *s, bool drop,
			     const struct dsl_needs *needs, struct dsl_diags *diags,
			     struct querylive_out *o);

/*
 * querylive_fit - compile the program @src (@len bytes, @filename) against
 * the classes of @classes (a class table, snaptake_classes(): no objects),
 * before any walk: unknown classes and fields, and the type errors only
 * their types reveal, are reported with no pause. *@prog is replaced by the
 * program compiled so. Returns QUERY_OK, QUERY_FIT (the diagnostics in
 * @diags), or QUERY_HEAP (@o->why). Prints nothing.
 */
enum querylive_status querylive_fit(struct dsl_program **prog, const char *src, size_t len,
			    const char *filename, const struct mt_snapshot *classes,
			    struct dsl_diags *diags, struct querylive_out *o);

#endif
