/* locks_now.h - `memtrace locks --now`: the threads waiting on a lock at this
 * moment, their stacks and their deadlocks, read from the JVM's memory
 * (locks_now.c). */
#ifndef MEMTRACE_LOCKS_NOW_H
#define MEMTRACE_LOCKS_NOW_H

#include <stdbool.h>

struct mt_proc;

/*
 * locks_now_run - read JVM @p's threads twice, 100 ms apart, walk the stacks
 * of those that wait on a lock, print them (text shows the innermost frames
 * of each, every frame with @all_frames; JSON every frame) and the deadlocks
 * both readings agree on. Prints its errors. Returns the exit status (0, or 1).
 */
int locks_now_run(const struct mt_proc *p, bool json, bool all_frames);

#endif
