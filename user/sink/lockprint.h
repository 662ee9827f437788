/*
 * lockprint.h - `memtrace locks`'s report (live or replayed by `memtrace
 * report`) from the figures of analysis/locks.h, as text or JSON lines.
 */
#ifndef MEMTRACE_LOCKPRINT_H
#define MEMTRACE_LOCKPRINT_H

#include <stdbool.h>
#include <stdio.h>

#include "analysis/locks.h"

/*
 * lockprint_report - write @r to @f: contended monitors by class, parks and
 * sleeps by blocker class (a recording's; none live), the wait
 * graph, then one block (text) or line (JSON) per deadlock.
 */
void lockprint_report(FILE *f, const struct locks_report *r, bool json);

#endif
