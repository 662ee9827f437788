/* walkmark.h - the frozen copy's own mark wired into a heap walk (walkmark.c):
 * in the copy, the roots JVMTI reports are kept and not followed, and at the
 * first callback past them the marker (heapmark.c) runs and the walk stops. */
#ifndef MEMTRACE_AGENT_WALKMARK_H
#define MEMTRACE_AGENT_WALKMARK_H

#include <jvmti.h>
#include <stdbool.h>
#include <stdint.h>

/* walkmark_active - in the copy of a walk that marks: the callbacks hand
 * over to the functions below. */
bool walkmark_active(void);

/* walkmark_root - a root JVMTI reported in the copy (@addr its object):
 * kept for the marker. Returns the callback's answer: visit it (one object
 * visited brings a callback past the roots), or not. */
jint walkmark_root(jvmtiHeapReferenceKind kind, uint64_t addr);

/* walkmark_run - the first callback past the roots: run the marker on
 * them (its result in hw.mark, hw.mres) once. Returns JVMTI_VISIT_ABORT:
 * the copy's walk is over. */
jint walkmark_run(void);

/* walkmark_broken - in the copy: the callbacks could not read an address
 * (@why): the mark does not run and says why. Returns JVMTI_VISIT_ABORT. */
jint walkmark_broken(const char *why);

#endif
