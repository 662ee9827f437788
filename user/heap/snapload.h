/* snapload.h - read a heap file of either format into a struct mt_snapshot:
 * a memtrace snapshot (snapfile.h) or an HPROF dump (hprof.h), told apart by
 * their magic. */
#ifndef MEMTRACE_SNAPLOAD_H
#define MEMTRACE_SNAPLOAD_H

#include <stddef.h>

#include "heap/snapshot.h"

/*
 * snapload_file - read @path into @s (initialised here; the caller frees it
 * with snapshot_free() either way). Returns 0, or -errno with the message,
 * naming @path, in @why: -ENOENT & co ("cannot open PATH: ..."), -EINVAL
 * (not a regular file, empty, or the reader's reason: "PATH: REASON"),
 * -ENOMEM.
 */
int snapload_file(const char *path, struct mt_snapshot *s, char *why, size_t wn);

#endif
