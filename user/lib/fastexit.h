/* fastexit.h - memtrace's exit without waiting for the kernel to free what
 * it holds.
 *
 * A command that built the view of millions of objects holds hundreds of
 * MiB; freeing them is part of exit(2) and took 31 ms at 480 MiB (5 M
 * objects, `heap --retained`) on this VM, which whoever waits for memtrace -
 * a shell, a script, a test - waited out after the answer was printed. So,
 * as the linker mold does, memtrace leaves that to a helper: a process that
 * shares memtrace's memory (clone(CLONE_VM)), closes its copies of
 * memtrace's files, waits for memtrace to end and then ends itself, freeing
 * the memory as the last one using it. Its parent is then init (or the
 * nearest subreaper), which reaps it. It never touches a JVM. */
#ifndef MEMTRACE_FASTEXIT_H
#define MEMTRACE_FASTEXIT_H

#include <stdint.h>
#include <sys/types.h>

/* Below this much resident memory an exit is quick enough as it is. */
#define FASTEXIT_MIN_RSS (64ull << 20)

/*
 * fastexit_helper - start the helper that frees this process's memory
 * after it ends, when it holds at least @min_rss bytes (resident). Call it
 * right before exiting, the output flushed: from then on the process must
 * only exit. Returns the helper's pid, 0 when none was needed, or -errno
 * (none started: the exit frees the memory as usual).
 */
pid_t fastexit_helper(uint64_t min_rss);

/* fastexit - flush stdio, fastexit_helper(FASTEXIT_MIN_RSS), exit(@rc). */
void fastexit(int rc) __attribute__((noreturn));

#endif
