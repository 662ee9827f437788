// SPDX-License-Identifier: GPL-2.0
/* gcpauseprobe.c - the GCTimer pause uprobes shared by gctrace and the collector. */
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "jvm/elfsym.h"
#include "jvm/proc.h"
#include "probe/gcpauseprobe.h"
#include "lib/util.h"

/* Ticks is TimeInstant<CompositeCounterRepresentation, CompositeElapsedCounterSource>
 * in a JDK built with JFR, TimeInstant<CounterRepresentation, ElapsedCounterSource>
 * without; both begin with os::elapsed_counter()'s value. */
#define TICKS_JFR "RK11TimeInstantI30CompositeCounterRepresentation29CompositeElapsedCounterSourceE"
#define TICKS_NOJFR "RK11TimeInstantI21CounterRepresentation20ElapsedCounterSourceE"

static const char *const begin_syms[] = {
	"_ZN7GCTimer23register_gc_pause_startEPKc" TICKS_JFR,
	"_ZN7GCTimer23register_gc_pause_startEPKc" TICKS_NOJFR,
};
static const char *const end_syms[] = {
	"_ZN7GCTimer21register_gc_pause_endE" TICKS_JFR,
	"_ZN7GCTimer21register_gc_pause_endE" TICKS_NOJFR,
};

/* The file offset of the first of @syms (@n names) that @e has. 0 or -ENOENT. */
static int find_offset(const struct mt_elf *e, const char *const *syms, size_t n, uint64_t *off)
{
	uint64_t addr;

	for (size_t i = 0; i < n; i++)
		if (!elfsym_lookup(e, syms[i], &addr, NULL))
			return elfsym_vaddr_to_offset(e, addr, off);
	return -ENOENT;
}

bool gcpauseprobe_present(const struct mt_elf *e)
{
	uint64_t off;

	return !find_offset(e, begin_syms, MT_ARRAY_SIZE(begin_syms), &off) &&
	       !find_offset(e, end_syms, MT_ARRAY_SIZE(end_syms), &off);
}

int gcpauseprobe_attach(struct bpf_program *begin, struct bpf_program *end,
			const struct mt_proc *p, struct bpf_link *links[2], const char **why)
{
	uint64_t off[2];
	struct mt_elf *e;
	int err;

	links[0] = links[1] = NULL;
	e = elfsym_open(p->libjvm_host);
	if (!e) {
		*why = "libjvm.so unreadable";
		return -ENOENT;
	}
	if (find_offset(e, begin_syms, MT_ARRAY_SIZE(begin_syms), &off[0]) ||
	    find_offset(e, end_syms, MT_ARRAY_SIZE(end_syms), &off[1])) {
		*why = "no GCTimer::register_gc_pause_start/end in libjvm's .symtab";
		err = -ENOENT;
		goto out;
	}
	err = 0;
	links[0] = bpf_program__attach_uprobe(begin, false, p->pid, p->libjvm_host, off[0]);
	if (links[0])
		links[1] = bpf_program__attach_uprobe(end, false, p->pid, p->libjvm_host, off[1]);
	if (!links[0] || !links[1]) {
		err = -errno;
		p_err("cannot attach a uprobe to GCTimer's pause registration in %s: %s",
		      p->libjvm, strerror(errno));
		bpf_link__destroy(links[0]);
		links[0] = NULL;
	}
out:
	elfsym_free(e);
	return err;
}
