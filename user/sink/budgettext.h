/*
 * budgettext.h - what `memtrace alloc` says its time windows cost the
 * busiest allocating thread (probe/threadctr.h measures it from the thread's
 * own allocation counter: the bytes it fell short of its pace out of the
 * windows). The measure is a difference of paces: where the windows cost
 * less than the thread's pace varies, it reads below zero - never a cost
 * below zero, but one too small to measure, and said so.
 */
#ifndef MEMTRACE_BUDGETTEXT_H
#define MEMTRACE_BUDGETTEXT_H

#include <stdio.h>

/* budgettext_loss - the clause for measured share @loss (of the thread's
 * time; > -1) to @f: "; the windows cost the busiest thread 0.42% of its
 * time, ..." or, at or below 0, that the cost was too small to measure. */
void budgettext_loss(FILE *f, double loss);

#endif
