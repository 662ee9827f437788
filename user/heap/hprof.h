/* hprof.h - import of HPROF binary heap dumps (`jcmd PID GC.heap_dump`,
 * format "JAVA PROFILE 1.0.2") into a struct mt_snapshot. Every read is
 * bounds-checked against the buffer; a malformed dump is an error with a
 * reason, never a crash. */
#ifndef MEMTRACE_HPROF_H
#define MEMTRACE_HPROF_H

#include <stdbool.h>
#include <stddef.h>

#include "heap/snapshot.h"

/* hprof_is - do the @n bytes at @buf start like an HPROF dump? */
bool hprof_is(const void *buf, size_t n);

/*
 * hprof_read_mem - import the dump in @buf (@n bytes) into @s. Object ids
 * are the dump's object ids (addresses); shallow sizes are estimated from
 * field and element sizes (HPROF records no sizes). Returns 0, -EINVAL with
 * the reason in @why, or -ENOMEM.
 */
int hprof_read_mem(const void *buf, size_t n, struct mt_snapshot *s, char *why, size_t wn);

#endif
