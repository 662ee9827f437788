/*
 * detach.h - let a probe's detach wait elsewhere.
 *
 * Destroying a uprobe link removes its breakpoints at once, then waits for
 * a grace period before it returns (60-90 ms here, up to half a second on a
 * busy machine: measured with a probe hit in a loop, the last hit came
 * 0.02 ms after the call began). The duty cycle's windows (dutycycle.h)
 * open and close many times a second, so the wait must not hold up the
 * next window, nor queue behind the previous detach: each destroy runs on a
 * thread of its own, started at once. Generic over what is destroyed (the
 * unit test uses a function of its own), with no BPF of its own.
 */
#ifndef MEMTRACE_DETACH_H
#define MEMTRACE_DETACH_H

#include <stddef.h>

/* More in flight than this: the caller's thread does the next one itself. */
#define DETACH_MAX_INFLIGHT 32

struct detacher;

/* detach_new - a detacher calling @fn(obj) for each object handed to it.
 * NULL on no memory (errno set). */
struct detacher *detach_new(void (*fn)(void *obj));

/*
 * detach_later - call fn(@obj) on a new thread and return at once; @obj is
 * the detacher's from here. When a thread cannot be started, or
 * DETACH_MAX_INFLIGHT calls are running, it is called here. NULL: no-op.
 */
void detach_later(struct detacher *d, void *obj);

/* detach_inflight - calls begun and not yet returned. */
size_t detach_inflight(struct detacher *d);

/* detach_free - wait for every call in flight, then free @d. NULL: no-op. */
void detach_free(struct detacher *d);

#endif
