/* freeze.h - a frozen copy of the JVM for a heap walk (freeze.c): checked
 * before the walk, forked at its first callback (inside the pause),
 * sandboxed in the copy, waited for, read and killed by the socket thread.
 * See MT_AP_HEAP_FREEZE in agent_proto.h for the protocol. */
#ifndef MEMTRACE_AGENT_FREEZE_H
#define MEMTRACE_AGENT_FREEZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "memtrace/agent_proto.h"
#include "zgcfreeze.h"

/* One frozen walk; zeroed by freeze_begin(). */
struct freeze {
	struct mt_ap_heap_freeze req;
	pid_t parent;            /* the JVM's pid (getpid() before the fork) */
	pid_t child;             /* the copy, > 0 in the JVM after the fork */
	bool in_child;           /* this process is the copy */
	bool forked;             /* the fork was tried (at the walk's first callback) */
	int mem_fd;              /* the copy's /proc/PID/mem, -1 */
	int pidfd;               /* the copy's pidfd (kill without a pid race), -1 */
	uint64_t t_fork;         /* CLOCK_MONOTONIC just before the fork */
	struct mt_ap_hfreeze rec; /* what the FREEZE record will say */
	/* the heap's unused ranges kept out of the copy (MADV_DONTFORK) */
	struct { uint64_t lo, hi; } *runs;
	uint32_t nruns;
	struct zgc_freeze zgc;   /* MT_AP_FREEZE_ZGC: the heap's copy (zgc.on) */
	/* MT_AP_FREEZE_POOL: memtrace's memfd, held by the JVM until the fork
	 * (has_pool_fd); in the copy, mapped shared at pool (NULL: none) */
	bool has_pool_fd;
	int pool_fd;
	void *pool;
	uint64_t pool_bytes;
};

/*
 * freeze_read_spaces - the bottom, top and end (at @off[0..2] in each) of
 * the @n spaces or regions at @objs into @f (3 a space; @ok[i]: space i's
 * were read), @objs[i] == 0 not read; this process's memory, read without
 * risking a fault (an address may be wrong: memtrace's guess). One
 * process_vm_readv() per 1024 spaces, each space's fields one span, not a
 * call a field: at ~2 us a call here, reading the 1700 G1 regions of a 1.7
 * GiB heap field by field took 14-15 ms of a 17-20 ms pause, 2.2 ms so.
 * The kernel reads whole iovec elements in order and stops at the first it
 * cannot: that space is left unread and the reads go on after it. Returns
 * 0 or -ENOMEM; the caller owns every array.
 */
int freeze_read_spaces(const uint16_t off[3], const uint64_t *objs, size_t n, uint64_t *f,
		       bool *ok);

/* freeze_drop_pool - close the MT_AP_FREEZE_POOL fd @fz holds, if any. */
void freeze_drop_pool(struct freeze *fz);

/*
 * freeze_begin - before the walk (the JVM running): keep @req in *@fz and
 * check that a copy can be taken: the Java heap is private anonymous memory
 * (a shared or file-backed heap would let the copy write into the JVM's),
 * the addresses memtrace gave are readable. With @zgc (MT_AP_FREEZE_ZGC) the
 * heap is ZGC's shared file instead: zgcfreeze_begin() prepares its copy,
 * calling @idle (NULL: none) while it does.
 * Returns 0, or -errno with the reason in fz->rec (stage MT_AP_FREEZE_CHECK):
 * then walk in the pause.
 */
int freeze_begin(struct freeze *fz, const struct mt_ap_heap_freeze *req,
		 const struct mt_ap_heap_zgc *zgc, void (*idle)(void));

/*
 * freeze_fork - in the walk's first callback (the VM thread, inside the
 * pause): check that this is a safepoint (_state is 2), fork (ZGC: after
 * zgcfreeze_pause(), and the JVM waits for the copy to copy the heap: a
 * relocation in flight is -EAGAIN). Returns the
 * copy's pid in the JVM, 0 in the copy (sandboxed: every fd closed, see
 * agent_proto.h), or -errno with the reason in fz->rec (then the walk goes
 * on in the pause). Only async-signal-safe work after the fork in the copy.
 */
pid_t freeze_fork(struct freeze *fz);

/*
 * freeze_wait - in the JVM after the pause: wait until the copy's walk is
 * over (HotSpot left the safepoint in the copy), watching @watch_fd (the
 * memtrace connection: gone means give up) and *@progress in the copy (a
 * counter its callbacks bump: still for req.stall_ms means stuck), calling
 * @idle (NULL: none) between looks - the socket thread's other duties, as
 * draining the sampling rings (a copy of a big heap on a busy machine
 * walks for seconds: 10 M objects 8-19 s). Returns
 * 0, or -errno with the reason in fz->rec (the copy is still there: call
 * freeze_end()).
 */
int freeze_wait(struct freeze *fz, int watch_fd, const uint64_t *progress, void (*idle)(void));

/* freeze_read - @len bytes at @addr of the copy into @buf. 0 or -errno. */
int freeze_read(struct freeze *fz, uint64_t addr, void *buf, size_t len);

/*
 * freeze_readv - the copy's memory into many buffers: @n pieces, piece i
 * from @addrs[i] (@lens[i] bytes) into @bufs[i]. 0 or -errno.
 */
int freeze_readv(struct freeze *fz, const uint64_t *addrs, void *const *bufs,
		 const size_t *lens, size_t n);

/*
 * freeze_end - kill the copy (if any) and reap it (calling the idle function
 * of freeze_set_idle() while it exits; after 30 s freeze_reap() reaps it
 * later, and its rusage is not known); its rusage goes into fz->rec; close
 * the fds freeze_fork() and freeze_read() opened. No-op
 * unless freeze_fork() ran on @fz; safe to call twice. (A zeroed struct
 * freeze has fds 0: the JVM's stdin, never to be closed.)
 */
void freeze_end(struct freeze *fz);
/*
 * freeze_end_nowait - freeze_end() for a copy whose rusage nobody reads any
 * more (memtrace has read its records): killed, its exit not waited for
 * (reaped by freeze_reap()). A copy that wrote 280 MiB of records and
 * dirtied heap pages took 20-26 ms to exit (5 M objects), which memtrace
 * spent waiting for the ACK of its DETACH behind the RELEASE.
 */
void freeze_end_nowait(struct freeze *fz);

/* freeze_reap - reap the killed copies whose exit freeze_end() did not wait
 * out (the socket thread calls it now and then: every REAP_POLL_MS while it
 * says some are left). */
bool freeze_reap(void);

/* freeze_set_idle - what freeze_end() calls while a killed copy exits (the
 * socket thread's other duties; NULL: none). */
void freeze_set_idle(void (*idle)(void));

/* freeze_seccomp - in the copy: its seccomp filter (no new files, sockets,
 * processes - a thread of its own only -, signals or ptrace to others,
 * shared memory, changes to the system: EPERM). Sets no_new_privs. 0, or
 * -1 with errno. */
int freeze_seccomp(void);

/* freeze_no_threads - in the copy, once its records are written: no more
 * threads either (a second seccomp filter: clone and clone3 fail with
 * EPERM; the first let a thread of its own through for heapmark.c's second
 * records thread). Returns 0 or -errno. */
int freeze_no_threads(void);

/* freeze_fail - note that @stage failed with @err (-errno) and why (printf). */
void freeze_fail(struct freeze *fz, uint32_t stage, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

#endif
