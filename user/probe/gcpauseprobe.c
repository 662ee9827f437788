// SPDX-License-Identifier: GPL-2.0
/* gcpauseprobe.c - the uprobes on the JVM's GC clock, shared by gctrace and
 * the collector (see gcpauseprobe.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "jvm/elfsym.h"
#include "jvm/proc.h"
#include "probe/gcpauseprobe.h"
#include "probe/uprobemulti.h"
#include "lib/util.h"

/* Ticks is TimeInstant<CompositeCounterRepresentation, CompositeElapsedCounterSource>
 * in a JDK built with JFR, TimeInstant<CounterRepresentation, ElapsedCounterSource>
 * without; both begin with os::elapsed_counter()'s value. */
#define TICKS_JFR "RK11TimeInstantI30CompositeCounterRepresentation29CompositeElapsedCounterSourceE"
#define TICKS_NOJFR "RK11TimeInstantI21CounterRepresentation20ElapsedCounterSourceE"

/* Each function's names, the JFR build's first. */
static const char *const syms[GCPAUSEPROBE_N][2] = {
	[GCPAUSEPROBE_PAUSE_BEGIN] = { "_ZN7GCTimer23register_gc_pause_startEPKc" TICKS_JFR,
				       "_ZN7GCTimer23register_gc_pause_startEPKc" TICKS_NOJFR },
	[GCPAUSEPROBE_PAUSE_END] = { "_ZN7GCTimer21register_gc_pause_endE" TICKS_JFR,
				     "_ZN7GCTimer21register_gc_pause_endE" TICKS_NOJFR },
	[GCPAUSEPROBE_TRACE_BEGIN] = { "_ZN8GCTracer15report_gc_startEN7GCCause5CauseE" TICKS_JFR,
				       "_ZN8GCTracer15report_gc_startEN7GCCause5CauseE" TICKS_NOJFR },
	[GCPAUSEPROBE_TRACE_END] = { "_ZN8GCTracer13report_gc_endE" TICKS_JFR "P14TimePartitions",
				     "_ZN8GCTracer13report_gc_endE" TICKS_NOJFR "P14TimePartitions" },
};

/* The file offset of function @i in @e. 0 or -ENOENT. */
static int find_offset(const struct mt_elf *e, int i, uint64_t *off)
{
	uint64_t addr;

	for (size_t k = 0; k < MT_ARRAY_SIZE(syms[i]); k++)
		if (!elfsym_lookup(e, syms[i][k], &addr, NULL))
			return elfsym_vaddr_to_offset(e, addr, off);
	return -ENOENT;
}

bool gcpauseprobe_present(const struct mt_elf *e)
{
	uint64_t off;

	return !find_offset(e, GCPAUSEPROBE_PAUSE_BEGIN, &off) &&
	       !find_offset(e, GCPAUSEPROBE_PAUSE_END, &off);
}

int gcpauseprobe_attach(struct bpf_program *const progs[GCPAUSEPROBE_N], const struct mt_proc *p,
			const struct mt_elf *e, struct bpf_link *links[GCPAUSEPROBE_N],
			int *fds, const char **why)
{
	uint64_t off[GCPAUSEPROBE_N];
	bool have[GCPAUSEPROBE_N];
	int err = 0;

	for (int i = 0; i < GCPAUSEPROBE_N; i++) {
		links[i] = NULL;
		if (fds)
			fds[i] = -1;
	}
	if (!e) {
		*why = "libjvm.so unreadable";
		return -ENOENT;
	}
	for (int i = 0; i < GCPAUSEPROBE_N; i++)
		have[i] = !find_offset(e, i, &off[i]);
	if (!have[GCPAUSEPROBE_PAUSE_BEGIN] || !have[GCPAUSEPROBE_PAUSE_END]) {
		*why = "no GCTimer::register_gc_pause_start/end in libjvm's .symtab";
		return -ENOENT;
	}
	if (!have[GCPAUSEPROBE_TRACE_BEGIN] || !have[GCPAUSEPROBE_TRACE_END])
		have[GCPAUSEPROBE_TRACE_BEGIN] = have[GCPAUSEPROBE_TRACE_END] = false;
	/* ends before begins: a begin is never heard without its end (which
	 * would count as unpaired at the next begin); an end heard first is of
	 * a pause in flight while they attached, counted so (analysis/gcpair) */
	for (int i = 0; i < GCPAUSEPROBE_N && !err; i++) {
		static const int order[GCPAUSEPROBE_N] = { GCPAUSEPROBE_PAUSE_END,
							   GCPAUSEPROBE_TRACE_END,
							   GCPAUSEPROBE_PAUSE_BEGIN,
							   GCPAUSEPROBE_TRACE_BEGIN };
		int k = order[i];

		if (!have[k])
			continue;
		if (fds) {
			fds[k] = uprobemulti_attach(bpf_program__fd(progs[k]), p->libjvm_host,
						    &off[k], 1, p->pid);
			err = fds[k] < 0 ? fds[k] : 0;
			if (err)
				fds[k] = -1;
			continue;
		}
		links[k] = bpf_program__attach_uprobe(progs[k], false, p->pid, p->libjvm_host, off[k]);
		if (!links[k])
			err = -errno;
	}
	if (err) {
		p_err("cannot attach a uprobe to GCTimer's or GCTracer's functions in %s: %s",
		      p->libjvm, strerror(-err));
		for (int i = 0; i < GCPAUSEPROBE_N; i++) {
			bpf_link__destroy(links[i]);
			links[i] = NULL;
			if (fds && fds[i] >= 0)
				close(fds[i]);
			if (fds)
				fds[i] = -1;
		}
	}
	return err;
}
