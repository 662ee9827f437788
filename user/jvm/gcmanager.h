/*
 * gcmanager.h - the name of a HotSpot GCMemoryManager ("ZGC Minor Pauses",
 * "Shenandoah Pauses") from the object's address, which the GC cause uprobe
 * (GCMemoryManager::gc_end's `this`) hands over. The name is the manager's
 * first field that points at a C string (MemoryManager::_name: HotSpot's
 * vtable pointer, its pools and their count come before it, GCMemoryManager's
 * fields after it), so no layout is assumed beyond that order.
 */
#ifndef MEMTRACE_GCMANAGER_H
#define MEMTRACE_GCMANAGER_H

#include <stddef.h>
#include <stdint.h>

/*
 * gcmanager_name - the name of the GCMemoryManager at @obj in JVM @pid into
 * @out (@len bytes): the first word among the object's first 256 bytes that
 * points at a NUL-terminated printable string of 2 to @len - 1 bytes, other
 * than the word @skip (its end message, "end of GC pause", which comes later
 * in the object). Returns 0; -ENOENT when no word qualifies (@out empty);
 * -errno when the object cannot be read. Prints nothing.
 */
int gcmanager_name(int pid, uint64_t obj, uint64_t skip, char *out, size_t len);

#endif
