/*
 * waitgraph.h - deadlocks in a snapshot of who waits for whom: each thread
 * waits for at most one lock, each lock has at most one owner, so the graph
 * "thread -> owner of the lock it waits for" has at most one edge out of each
 * thread and its cycles are the deadlocks (what jstack's deadlock detection
 * reports, over monitors and ownable synchronizers alike). Pure.
 */
#ifndef MEMTRACE_WAITGRAPH_H
#define MEMTRACE_WAITGRAPH_H

#include <stddef.h>
#include <stdint.h>

/* One thread: its id and the id of the thread it waits for (0: none). */
struct waitgraph_node {
	uint64_t tid;
	uint64_t waits_for;
};

/*
 * waitgraph_cycles - mark the threads on a cycle: @cycle[i] gets the cycle's
 * number (1, 2, ... in the order of each cycle's first thread in @nodes) or 0
 * for a thread on no cycle (it may wait for a deadlocked thread without being
 * part of the deadlock). Threads are matched by tid; a tid that appears twice
 * keeps its first entry. Returns the number of cycles, or -ENOMEM.
 */
int waitgraph_cycles(const struct waitgraph_node *nodes, size_t n, uint32_t *cycle);

#endif
