// SPDX-License-Identifier: GPL-2.0
/*
 * locks_now.c - `memtrace locks --now`: no probe, no flag, no agent; the
 * threads and their blockers from the JVM's memory (jvm/jthreads.h), their
 * stacks walked from outside (jstack/waitstacks.h), the deadlocks among them
 * (analysis/waitgraph.h), printed by sink/blocked.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/locks_now.h"
#include "analysis/waitgraph.h"
#include "jstack/waitstacks.h"
#include "jvm/jthreads.h"
#include "jvm/proc.h"
#include "jvm/vmstructs.h"
#include "sink/blocked.h"
#include "lib/util.h"

/* Frames of each thread's stack text shows without --stacks. */
#define NOW_FRAMES 8

int locks_now_run(const struct mt_proc *p, bool json, bool all_frames)
{
	struct mt_vmstructs *vs = NULL;
	struct jthreads *jt = NULL;
	struct waitstacks *ws = NULL;
	struct jthread *th = NULL;
	struct waitgraph_node *g = NULL;
	uint32_t *cycle = NULL;
	size_t n = 0;
	int err, ncycles, rc = 1;

	err = vmstructs_open(p, &vs);
	if (err) {
		p_err("can't read VMStructs of pid %d (%s): %s", p->pid, p->libjvm,
		      vmstructs_strerror(err));
		return 1;
	}
	jt = jthreads_new(p, vs);
	if (!jt) {
		p_err("can't read pid %d's threads from its memory: %s", p->pid, strerror(errno));
		goto cleanup;
	}
	/* the stacks, walked as the reading finds each thread waiting */
	ws = waitstacks_new(vs, jt);
	if (!ws)
		p_warn("the waiting threads' stacks cannot be read in pid %d: %s", p->pid,
		       strerror(errno));
	err = jthreads_read_stable(jt, 100 * 1000, ws ? waitstacks_visit : NULL, ws, &th, &n);
	if (err) {
		p_err("can't read pid %d's threads: %s", p->pid, strerror(-err));
		goto cleanup;
	}
	if (waitstacks_error(ws)) {
		p_err("out of memory");
		goto cleanup;
	}
	g = calloc(n ? n : 1, sizeof(*g));
	cycle = calloc(n ? n : 1, sizeof(*cycle));
	if (!g || !cycle) {
		p_err("out of memory");
		goto cleanup;
	}
	/* deadlocks: only waits both readings saw */
	for (size_t i = 0; i < n; i++)
		g[i] = (struct waitgraph_node){ th[i].tid, th[i].stable ? th[i].owner_tid : 0 };
	ncycles = waitgraph_cycles(g, n, cycle);
	if (ncycles < 0) {
		p_err("out of memory");
		goto cleanup;
	}
	if (blocked_print(stdout, p->pid, th, ws, n, cycle, ncycles, json,
			  all_frames ? 0 : NOW_FRAMES))
		goto cleanup;
	rc = 0;
cleanup:
	waitstacks_free(ws);
	free(cycle);
	free(g);
	free(th);
	jthreads_free(jt);
	vmstructs_free(vs);
	return rc;
}
