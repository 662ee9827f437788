/*
 * jwalkmem.h - the Java stack of a thread that waits, walked from outside it
 * through the JVM's memory (/proc/PID/mem), by the frame rules of
 * include/memtrace/jstack.h with the BPF walker's layout (jwalk.h): for the
 * threads `memtrace locks` finds blocked, whose frames do not move while they
 * wait. The BPF walker runs in the walked thread itself, at a probe; this one
 * reads another thread's stack at any moment, so a thread that wakes up
 * during the walk is detected (its frame anchor changed) and the walk
 * discarded. Delivers the same raw frames as the BPF walker, for jstackname.h.
 */
#ifndef MEMTRACE_JWALKMEM_H
#define MEMTRACE_JWALKMEM_H

#include <stdint.h>

#include "memtrace/jstack.h"

struct mt_vmstructs;

/*
 * jwalkmem_walk - walk the Java stack of the JavaThread at @thread, which
 * should be blocked (in the VM or native code, its frame anchor set), with
 * layout @l (jwalk_layout()'s bpf part; nheaps 0 walks nothing). Frames,
 * innermost first, go into @st (st->depth, st->stop as the BPF walker sets
 * them; a walk cut short keeps the frames it found). Returns 0, -ENOENT when
 * the thread has no Java frame (no anchor), -EAGAIN when the thread moved on
 * during the walk (its anchor changed: @st is not its stack), or -errno from
 * reading the target.
 */
int jwalkmem_walk(const struct mt_vmstructs *vs, const struct mt_jwalk_layout *l, uint64_t thread,
		  struct mt_jstack *st);

#endif
