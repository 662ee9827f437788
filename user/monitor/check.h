/*
 * check.h - verify rules 1-5 (docs/design.md idea 1) on a reported event stream.
 *
 * The checker keeps the view a consumer of the stream has - which types,
 * objects and threads are alive, each thread's invocation depth, which
 * monitors each thread holds and waits for, which names are defined - and
 * reports each event that contradicts it, with the rule it breaks:
 *  1  a reclamation (or type load, or leave) of an entity not created;
 *  2  an event referring to an entity (or name id) not alive (types: not
 *     loaded) at that point;
 *  3  a creation reusing an identity whose previous entity's reclamation was
 *     not reported; an enter shallower than the open invocations; a thread
 *     destroyed with invocations open;
 *  4  an enter deeper than the open invocations (its parent not reported),
 *     a leave that is not of the innermost invocation;
 *  5  acquire/release/begin-wait/end-wait out of order for a thread and lock
 *     (release not held, end-wait not waiting, acting while waiting, a thread
 *     destroyed or an object reclaimed with monitors held or waited for).
 */
#ifndef MEMTRACE_CHECK_H
#define MEMTRACE_CHECK_H

#include <stdint.h>

#include "memtrace/events.h"

/* Called per violation: @pos is the caller's position of the event (e.g. a
 * line number), @rule 1-5, @msg a one-line explanation. */
typedef void (*check_fn)(void *ctx, uint64_t pos, int rule, const char *msg);

struct mt_check;

/* check_new - an empty view. NULL with errno ENOMEM. */
struct mt_check *check_new(check_fn fn, void *ctx);
/* check_free - NULL is a no-op. */
void check_free(struct mt_check *c);
/* check_feed - the next event of the stream (MT_EV_NAME defines e->id). */
void check_feed(struct mt_check *c, uint64_t pos, const struct mt_ev *e);
/* check_count - violations of @rule (1-5) so far; @rule 0: all rules. */
uint64_t check_count(const struct mt_check *c, int rule);

#endif
