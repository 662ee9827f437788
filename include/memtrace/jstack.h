/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jstack.h - whole Java stacks walked in BPF on a stock JVM (no
 * -XX:+PreserveFramePointer), shared by bpf/jstack.bpf.h and user space
 * (user/jstack/jwalk.c sets the layout, user/probe/alloctrace.c reads stacks).
 *
 * The walk starts at the thread's frame anchor (JavaThread::_anchor: last
 * Java sp, fp, pc; the thread is in the VM at the allocation probes) and
 * goes frame by frame towards the thread's entry:
 *  - a pc in the interpreter: an interpreted frame; Method* and bcp are read
 *    at fp + frame::interpreter_frame_method_offset / _bcp_offset words, the
 *    caller's pc at fp + 1 word, its fp at fp, its (unextended) sp at
 *    fp + frame::interpreter_frame_sender_sp_offset words;
 *  - a pc in the code cache: the CodeBlob holding it is found through its
 *    CodeHeap's segment map; its frame size (CodeBlob::_frame_size, words,
 *    return address and saved rbp included) gives the caller's sp, the
 *    return address is the word below it and the saved rbp the one below
 *    that (x86_64 compiled frames, runtime stubs and adapters alike);
 *  - the call stub's return address (StubRoutines::_call_stub_return_address):
 *    an entry frame; its JavaCallWrapper (at fp +
 *    frame::entry_frame_call_wrapper_offset words) holds the anchor of the
 *    Java frames below the VM call, if any; none means the walk is complete.
 *
 * Frames are delivered raw; user space names them.
 */
#ifndef MEMTRACE_JSTACK_H
#define MEMTRACE_JSTACK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Frames a walk can keep: the most --stack-depth allows (a power of two;
 * the walker's per-CPU scratch stack must stay under the kernel's 32 KiB
 * per-CPU value). A session's own bound, targ_jdepth, is set before load. */
#define MT_JSTACK_MAX_DEPTH 1024
/* The default bound, in frames: frameworks run 150-300 Java frames deep
 * (JFR's own default is 64; users raise it to 512-2048 for such programs).
 * Java frames, compiled frames expanded into their inlined methods, are cut
 * to the same bound in user space (jstack/jstackname.h). */
#define MT_JSTACK_DEFAULT_DEPTH 512
/* The walker's bound for a bound of @d Java frames: a few more, for the
 * stubs and adapters between Java frames, which are walked and not named. */
#define MT_JSTACK_WALK_FRAMES(d) \
	((d) + 8u < MT_JSTACK_MAX_DEPTH ? (d) + 8u : (unsigned)MT_JSTACK_MAX_DEPTH)
#define MT_JSTACK_MAX_KEYS 16384  /* distinct stacks kept (a map that grows) */
/* Bytes of a stored stack of at most @d frames: the map's value size. */
#define MT_JSTACK_BYTES(d) (8u + 24u * (unsigned)(d))
/* Where user space drains the map (user/jstack/jstackstore.h), it is
 * preallocated with as many stacks as this many bytes hold (12.6 MiB: 4096
 * stacks of 128 frames, 1025 of 512): a new stack's store is then a copy
 * into a free element, not an allocation in the allocating thread's time.
 * Drained five times a second, it holds 5 k new stacks a second at 512
 * frames (javac makes 40-75). Never fewer than MT_JSTACK_DRAINED_MIN. */
#define MT_JSTACK_DRAINED_BYTES (4096u * MT_JSTACK_BYTES(128))
#define MT_JSTACK_DRAINED_MIN 512
#define MT_JSTACK_MAX_HEAPS 4     /* CodeHeaps (non-nmethods, profiled, non-profiled) */

/* mt_jframe.b of a compiled frame carries this bit (no user address has it). */
#define MT_JFRAME_COMPILED (1ull << 63)

struct mt_jframe {
	__u64 a;   /* interpreted: Method*; compiled: the pc (a return address) */
	__u64 b;   /* interpreted: bcp; compiled: CodeBlob* holding a | MT_JFRAME_COMPILED */
	__u64 m;   /* compiled: the word at CodeBlob + nmethod::_method when the blob
		    * was first seen (its Method* if it is an nmethod: user space
		    * names the frame only if the blob still says so); interpreted: 0 */
};

/* A stored stack is the first MT_JSTACK_BYTES(depth bound) bytes of this. */
struct mt_jstack {
	__u32 depth;   /* frames in f[], the innermost (allocating) first */
	__u32 stop;    /* enum mt_jstack_stop */
	struct mt_jframe f[MT_JSTACK_MAX_DEPTH];
};

/* Why a walk ended; slots of the per-CPU array `jstack_stops`. */
enum mt_jstack_stop {
	MT_JSTOP_END = 0,        /* reached the thread's entry: the stack is complete */
	MT_JSTOP_NO_ANCHOR = 1,  /* the thread has no last Java frame (not called from Java) */
	MT_JSTOP_DEPTH = 2,      /* deeper than the session's bound (targ_jdepth): cut */
	MT_JSTOP_READ = 3,       /* a read of the stack or of the code cache failed */
	MT_JSTOP_PC = 4,         /* a pc neither in the interpreter nor in the code cache */
	MT_JSTOP_NO_BLOB = 5,    /* the segment map names no live CodeBlob for the pc */
	MT_JSTOP_FRAME_SIZE = 6, /* a CodeBlob without a plausible frame size */
	MT_JSTOP_SP = 7,         /* the caller's sp is not above the frame's: broken frame */
	MT_JSTOP_LOOP = 8,       /* more steps than the loop bound (entry frames) */
	MT_JSTOP_NSTOPS = 9,
};

/* Layout of the JVM, set by user space from VMStructs before load. */
struct mt_jwalk_layout {
	__u32 thread_anchor;       /* JavaThread::_anchor */
	__u32 wrapper_anchor;      /* JavaCallWrapper::_anchor */
	__u32 fa_sp, fa_pc, fa_fp; /* JavaFrameAnchor::_last_Java_sp/_pc/_fp */
	__s32 entry_wrapper;       /* frame::entry_frame_call_wrapper_offset, bytes */
	__s32 if_sender_sp;        /* frame::interpreter_frame_sender_sp_offset, bytes */
	__s32 if_method;           /* ..._method_offset, bytes */
	__s32 if_bcp;              /* ..._bcp_offset, bytes */
	__u32 blob_frame_size;     /* CodeBlob::_frame_size */
	__u32 blob_name;           /* CodeBlob::_name (char *): "nmethod", "native nmethod"
				    * for nmethods on JDK 17-20 (jstack_leaf) */
	__u32 blob_kind;           /* CodeBlob::_kind (JDK 21+), 0 if none */
	__s32 kind_nmethod;        /* CodeBlobKind::Nmethod (with blob_kind) */
	__u32 nm_method;           /* nmethod::_method (CompiledMethod:: before JDK 21) */
	__u32 block_used;          /* HeapBlock::_header + HeapBlock::Header::_used */
	__u32 block_size;          /* sizeof(HeapBlock): the CodeBlob follows it */
	__u64 interp_lo, interp_hi;
	__u64 call_stub_ret;       /* StubRoutines::_call_stub_return_address */
	__u32 nheaps;
	__u64 heap_lo[MT_JSTACK_MAX_HEAPS];     /* CodeHeap::_memory._low_boundary */
	__u64 heap_hi[MT_JSTACK_MAX_HEAPS];     /* CodeHeap::_memory._high_boundary */
	__u64 heap_segmap[MT_JSTACK_MAX_HEAPS]; /* CodeHeap::_segmap._low_boundary */
	__u32 heap_log2seg[MT_JSTACK_MAX_HEAPS]; /* CodeHeap::_log2_segment_size */
};

#endif
