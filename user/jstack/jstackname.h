/*
 * jstackname.h - names for the raw Java stacks the BPF walker delivers
 * (include/memtrace/jstack.h, bpf/jstack.bpf.h): interpreted frames by their
 * Method*, compiled frames expanded into their inlined methods from the
 * nmethods' debug info (nmethod.h), stubs by their blob's name. Names are read
 * from the live JVM once and kept (printable UTF-8 only); what cannot be named
 * is "[unknown]" and counted. Shared by `alloc` (probe/alloctrace) and the
 * waiters' stacks of `locks` (probe/parktrace).
 */
#ifndef MEMTRACE_JSTACKNAME_H
#define MEMTRACE_JSTACKNAME_H

#include <stdbool.h>
#include <stdint.h>

#include "analysis/profile.h"
#include "memtrace/jstack.h"

struct mt_vmstructs;
struct jwalk_layout;
struct jstackname;

/*
 * jstackname_new - a namer for JVM @vs (which must outlive it) whose walker
 * uses @jw. Inlined frames are expanded when the JVM's nmethod layout is known
 * (jstackname_inlining()). NULL with errno ENOMEM, or ENOENT when @vs lacks
 * what Method* names need.
 */
struct jstackname *jstackname_new(const struct mt_vmstructs *vs, const struct jwalk_layout *jw);
/* jstackname_free - NULL is a no-op. */
void jstackname_free(struct jstackname *t);
/* jstackname_inlining - compiled frames are expanded into their inlined methods. */
bool jstackname_inlining(const struct jstackname *t);
/* jstackname_set_depth - stacks keep at most @depth Java frames (compiled
 * frames expanded; 1..MT_JSTACK_MAX_DEPTH, else ignored), the innermost
 * ones, and a stack cut here says so as one the walker cut does. Default
 * MT_JSTACK_DEFAULT_DEPTH. */
void jstackname_set_depth(struct jstackname *t, uint32_t depth);
/* jstackname_seen_gen - class unloads: Method*s of samples of an older
 * unload generation than @gen are not read any more (their class may be gone). */
void jstackname_seen_gen(struct jstackname *t, uint32_t gen);

/*
 * jstackname_frames - the names of @stack (a walk, innermost frame first) ROOT
 * FIRST, at most @max: a "[stack cut: REASON]" frame first for a walk that
 * stopped early or a stack cut here (more Java frames than the depth bound,
 * or than @max has room for: REASON "depth"; the innermost frames are the
 * ones kept), then the thread's first Java frame kept ... the innermost one.
 * Stubs are left out unless @stubs. @gen: the sample's unload generation.
 * Names are owned by @t. Returns the count (0 when out of memory).
 */
int jstackname_frames(struct jstackname *t, const struct mt_jstack *stack, uint32_t gen,
		      const char **names, int max, bool stubs);
/*
 * jstackname_frames_full - jstackname_frames() with each frame's kind
 * (interpreted, C1, C2, inlined into the frame towards the root, native),
 * source file and line (from the method's line number table at the frame's
 * bytecode index: an interpreted frame's bcp, a compiled frame's scope).
 * Markers, stubs and unknown frames are PROFILE_OTHER without file or line.
 * Strings are owned by @t.
 */
int jstackname_frames_full(struct jstackname *t, const struct mt_jstack *stack, uint32_t gen,
			   struct profile_frame *frames, int max, bool stubs);
/* jstackname_cut - the stop (enum mt_jstack_stop, > 0) a "[stack cut: REASON]"
 * frame name says, or -1 for any other name (NULL too). Pure. */
int jstackname_cut(const char *name);
/*
 * jstackname_warm - name the frames of @stack now, without output: compiled
 * code is freed and reused as the JIT recompiles (a short program's nmethods
 * may be gone within a second), so callers name each new stack soon after
 * the walker stored it; jstackname_frames() then finds the names kept.
 */
void jstackname_warm(struct jstackname *t, const struct mt_jstack *stack, uint32_t gen);
/*
 * jstackname_innermost - the innermost Java method of raw frame @f (an
 * interpreted frame's method; the method at the frame's pc in a compiled
 * frame, inlined or not), "pkg.Class.method", or NULL for a stub or a frame
 * that cannot be named (not counted as unknown). Owned by @t; compiled frames
 * are kept by pc, so name them while their code lives.
 */
const char *jstackname_innermost(struct jstackname *t, const struct mt_jframe *f, uint32_t gen);
/* jstackname_method - "pkg.Class.method" (printable) of Method* @method, or NULL. */
const char *jstackname_method(struct jstackname *t, uint64_t method, uint32_t gen);
/* jstackname_unknown - frames named "[unknown]" so far. */
uint64_t jstackname_unknown(const struct jstackname *t);

#endif
