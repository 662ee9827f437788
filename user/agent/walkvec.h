/* walkvec.h - the heap walk's record vectors (walkvec.c): growable arrays of
 * fixed-size entries that the walk's callbacks append to (visits, objects,
 * references, values, strings) and the senders cut into HEAP_DATA records. */
#ifndef MEMTRACE_AGENT_WALKVEC_H
#define MEMTRACE_AGENT_WALKVEC_H

#include <stdbool.h>
#include <stddef.h>

/* A growable array of fixed-size entries. */
struct walkvec {
	char *p;
	size_t n, cap, esz;
	bool oom;   /* an append failed: the walk stops (partial result) */
};

/* walkvec_init - an empty vector of @esz-byte entries (nothing allocated). */
void walkvec_init(struct walkvec *v, size_t esz);
/* walkvec_grow - double the room of a full vector. 0, or -ENOMEM with v->oom set. */
int walkvec_grow(struct walkvec *v);
/* walkvec_reserve - room for @n entries, its pages touched now (not in the
 * pause); on failure nothing changes (walkvec_push() tries again, and says so). */
void walkvec_reserve(struct walkvec *v, size_t n);
/* walkvec_room - room for @n entries without touching them (they are read
 * over). 0 or -ENOMEM. */
int walkvec_room(struct walkvec *v, size_t n);
/* walkvec_free - free the entries and zero *@v (esz too). */
void walkvec_free(struct walkvec *v);

/* walkvec_push - append one entry: its address (uninitialised), or NULL on
 * out-of-memory (v->oom: the walk stops). Inline: the walk's callbacks call
 * it for every reference inside the pause. */
static inline void *walkvec_push(struct walkvec *v)
{
	if (v->n == v->cap && walkvec_grow(v))
		return NULL;
	return v->p + v->esz * v->n++;
}

#endif
