// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_doctor.c - `memtrace doctor -p PID`: what this JVM offers, and so what
 * memtrace will use. Every "no" says its consequence and the remedy.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "heap/heapfreeze.h"
#include "heap/heaplayout.h"
#include "heap/heapmem.h"
#include "heap/walkestimate.h"
#include "jvm/elfsym.h"
#include "jvm/jvmflags.h"
#include "jvm/perfdata.h"
#include "jvm/privs.h"
#include "probe/gcendprobe.h"
#include "probe/gcpauseprobe.h"
#include "probe/tlabprobe.h"
#include "jvm/jvmid.h"
#include "probe/kfeatures.h"
#include "jvm/proc.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"


/* The flags doctor reports, with what each one switches on in memtrace. */
static const struct {
	const char *name;
	const char *gives;
} dflags[] = {
	{ "DTraceAllocProbes", "hotspot:object__alloc for `memtrace alloc --exact` (costs throughput)" },
	{ "DTraceMonitorProbes", "hotspot:monitor__* probes for `memtrace locks`" },
	{ "DTraceMethodProbes", "hotspot:method__entry/return (Java invocations as events)" },
	{ "ExtendedDTraceProbes", "all of the above at once (removed in recent JDKs)" },
	{ "DisableAttachMechanism", "when true, the JVMTI agent cannot be loaded" },
	{ "EnableDynamicAgentLoading", "JDK 21+ warns on dynamic agent loading unless set on the command line" },
};

/* The probes memtrace's commands use, and which command needs each. */
static const struct {
	const char *name;
	const char *user;
} dprobes[] = {
	{ "gc__begin", "memtrace gc" },
	{ "gc__end", "memtrace gc" },
	{ "mem__pool__gc__begin", "memtrace gc" },
	{ "mem__pool__gc__end", "memtrace gc" },
	{ "class__loaded", "class names for alloc" },
	{ "class__unloaded", "class unloading (stale Klass*)" },
	{ "thread__start", "thread names" },
	{ "thread__stop", "thread names" },
	{ "object__alloc", "memtrace alloc --exact" },
	{ "monitor__contended__enter", "memtrace locks" },
	{ "monitor__wait", "memtrace locks" },
};

struct report {
	struct mt_proc p;
	int nprobes;
	bool probe[MT_ARRAY_SIZE(dprobes)];
	bool symtab, sym_tlab, vmstructs;
	bool sym_gcend;           /* GCMemoryManager::gc_end (the cause uprobe) */
	bool sym_gcpause;         /* GCTimer's pause registration (the pauses' uprobes) */
	const char *collector;    /* "G1", "ZGC (generational)", ...; NULL unknown */
	int ncauses;              /* GCCause names read from to_string; <= 0: none */
	int flag_err[MT_ARRAY_SIZE(dflags)];
	bool flag[MT_ARRAY_SIZE(dflags)];
	bool thp;                 /* -XX:+UseTransparentHugePages: the heap in 2 MiB pages */
	int thp_err;              /* its flag unreadable: -errno */
	bool attach_socket;       /* /tmp/.java_pid<nspid> exists already */
	bool agent_warning;       /* JDK 21+ without an explicit EnableDynamicAgentLoading */
	bool root, cap_bpf, cap_perfmon, cap_ptrace, cap_admin;
	struct kfeatures kf;      /* the kernel's BPF features */
	bool freeze;              /* heap snapshots can be frozen walks */
	char freeze_why[192];     /* else why not */
	uint64_t fork_ns;         /* a frozen walk's pause (the fork), estimated; 0 unknown */
	bool zgc;                 /* ZGC: a frozen walk's pause copies its used heap too */
	bool moving;              /* ZGC or Shenandoah: its collector moves objects concurrently */
	bool vthreads;            /* JDK 19+: the JVM may have parked virtual threads */
	bool vthread_stacks;      /* and the copy reads their stack chunks (heaplayout.h) */
	uint64_t copy_ns;         /* that copy, estimated (0 unknown) */
	bool est_ok;              /* a walk in a pause could be estimated: */
	struct walkestimate est;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace doctor -p PID [--json]\n"
		   "  What this JVM offers (JDK, USDT probes, symbols, flags, attach,\n"
		   "  namespaces) and memtrace's own privileges; every \"no\" comes with\n"
		   "  its consequence and the remedy.\n");
}

static void inspect(struct report *r)
{
	struct mt_ap_heap_freeze fz;
	struct mt_ap_heap_zgc zgc;
	struct mt_vmstructs *vs = NULL;
	struct mt_usdt_note *notes = NULL;
	struct mt_elf *e;
	char path[PATH_MAX + 128];
	struct stat st;
	uint64_t eff;
	int n;

	e = elfsym_open(r->p.libjvm_host);
	if (e) {
		r->symtab = elfsym_has_symtab(e);
		r->sym_tlab = !elfsym_lookup(e, TLABPROBE_SYM_NEW_TLAB, NULL, NULL) &&
			      !elfsym_lookup(e, TLABPROBE_SYM_OUTSIDE_TLAB, NULL, NULL);
		r->sym_gcend = !elfsym_lookup(e, GCENDPROBE_SYM, NULL, NULL);
		r->sym_gcpause = gcpauseprobe_present(e);
		{
			struct gccause_table *t = malloc(sizeof(*t));

			r->ncauses = t && !gccause_read(e, t) ? t->n : 0;
			free(t);
		}
		n = elfsym_usdt_notes(e, "hotspot", &notes);
		r->nprobes = n > 0 ? n : 0;
		for (int i = 0; i < n; i++)
			for (size_t j = 0; j < MT_ARRAY_SIZE(dprobes); j++)
				if (!strcmp(notes[i].name, dprobes[j].name))
					r->probe[j] = true;
		free(notes);
		elfsym_free(e);
	}
	r->vmstructs = !vmstructs_open(&r->p, &vs);
	for (size_t i = 0; i < MT_ARRAY_SIZE(dflags); i++)
		r->flag_err[i] = jvmflags_get_bool(&r->p, vs, dflags[i].name, &r->flag[i]);
	r->thp_err = jvmflags_get_bool(&r->p, vs, "UseTransparentHugePages", &r->thp);
	/* JEP 451: the warning is printed unless the flag was given explicitly
	 * (its value origin is not DEFAULT, the low 4 bits of JVMFlag::_flags). */
	if (r->p.jdk_major >= 21) {
		struct mt_jvmflag f;

		r->agent_warning = jvmflags_find(&r->p, vs, "EnableDynamicAgentLoading", &f) ||
				   f.via_symtab || (f.flags & 0xf) == 0;
	}
	r->collector = jvmflags_collector(&r->p, vs);
	r->freeze = !heapfreeze_prepare(&r->p, vs, &fz, &zgc, r->freeze_why,
					sizeof(r->freeze_why));
	/* parked virtual threads' stacks: read in the copy through HotSpot's own
	 * iteration of a stack chunk, when the layout has it */
	r->vthreads = r->p.jdk_major >= 19;
	if (r->vthreads && r->freeze && vs) {
		struct mt_ap_heap_layout L;
		char why[192];

		r->vthread_stacks = !heaplayout_fill(&r->p, vs, &L, why, sizeof(why)) &&
				    L.sc_iterate;
	}
	vmstructs_free(vs);
	/* what a heap walk will cost: the fork, or a walk in a pause */
	r->fork_ns = heapfreeze_fork_estimate_ns(&r->p);
	{
		char why[128];
		struct mt_perfdata *pd = perfdata_open(&r->p, why, sizeof(why));

		r->est_ok = !walkestimate_read(pd, false, &r->est);
		perfdata_free(pd);
	}
	r->zgc = r->freeze && (fz.flags & MT_AP_FREEZE_ZGC);
	r->moving = r->freeze && (fz.flags & (MT_AP_FREEZE_ZGC | MT_AP_FREEZE_FORWARDING));
	if (r->zgc && r->est_ok)
		r->copy_ns = heapfreeze_zgc_copy_estimate_ns(r->est.used, 0);

	snprintf(path, sizeof(path), "%s/tmp/.java_pid%d", r->p.root, r->p.nspid);
	r->attach_socket = !stat(path, &st) && S_ISSOCK(st.st_mode);

	eff = privs_effective();
	r->root = geteuid() == 0;
	r->cap_admin = (eff >> MT_CAP_SYS_ADMIN) & 1;
	r->cap_bpf = (eff >> MT_CAP_BPF) & 1;
	r->cap_perfmon = (eff >> MT_CAP_PERFMON) & 1;
	r->cap_ptrace = (eff >> MT_CAP_SYS_PTRACE) & 1;
}

static bool flag_is(const struct report *r, const char *name, bool *val)
{
	for (size_t i = 0; i < MT_ARRAY_SIZE(dflags); i++)
		if (!strcmp(dflags[i].name, name)) {
			*val = r->flag[i];
			return r->flag_err[i] == 0;
		}
	return false;
}

static bool gc_ok(const struct report *r)
{
	return r->probe[0] && r->probe[1] && r->probe[2] && r->probe[3];
}

/* ZGC: the most used heap its copy copies within the default bound. */
static uint64_t zgc_copy_max(const struct report *r)
{
	return heapfreeze_zgc_copy_max_mib(r->fork_ns, WALKEST_DEFAULT_BOUND_MS, 0) << 20;
}

static bool attach_ok(const struct report *r)
{
	bool disabled = false;

	return !(flag_is(r, "DisableAttachMechanism", &disabled) && disabled);
}

static bool bpf_ok(const struct report *r)
{
	return r->cap_admin || (r->cap_bpf && r->cap_perfmon);
}

static void print_json(const struct report *r)
{
	const struct mt_proc *p = &r->p;

	printf("{\"event\":\"doctor\",\"pid\":%d,\"nspid\":%d,\"uid\":%u,\"jdk_version\":", p->pid,
	       p->nspid, p->uid);
	json_str(stdout, p->jdk_version);
	printf(",\"jdk_major\":%d,\"jdk_vendor\":", p->jdk_major);
	json_str(stdout, p->jdk_vendor);
	printf(",\"libjvm\":");
	json_str(stdout, p->libjvm);
	printf(",\"libjvm_host\":");
	json_str(stdout, p->libjvm_host);
	printf(",\"usdt_probes\":%d,\"probes\":{", r->nprobes);
	for (size_t j = 0; j < MT_ARRAY_SIZE(dprobes); j++)
		printf("%s\"%s\":%s", j ? "," : "", dprobes[j].name, r->probe[j] ? "true" : "false");
	printf("},\"symtab\":%s,\"alloc_symbols\":%s,\"vmstructs\":%s,\"gc_causes\":%d",
	       r->symtab ? "true" : "false", r->sym_tlab ? "true" : "false",
	       r->vmstructs ? "true" : "false", r->sym_gcend ? r->ncauses : 0);
	/* one key per flag by its HotSpot name, boolean; absent flags listed */
	for (size_t i = 0; i < MT_ARRAY_SIZE(dflags); i++)
		printf(",\"%s\":%s", dflags[i].name,
		       (!r->flag_err[i] && r->flag[i]) ? "true" : "false");
	printf(",\"flags_absent\":[");
	for (size_t i = 0, k = 0; i < MT_ARRAY_SIZE(dflags); i++)
		if (r->flag_err[i])
			printf("%s\"%s\"", k++ ? "," : "", dflags[i].name);
	printf("],\"gc_pause_timer\":%s,\"collector\":", r->sym_gcpause ? "true" : "false");
	json_str(stdout, r->collector ? r->collector : "");
	printf(",\"heap_walk\":\"%s\",\"snapshot_hugepages\":%s", r->freeze ? "frozen" : "paused",
	       util_hugepages_wanted(NULL) ? "true" : "false");
	if (util_page_fault_us() >= 0)
		printf(",\"snapshot_page_fault_us\":%.2f", util_page_fault_us());
	printf(",\"heap_thp\":%s", r->thp_err ? "null" : r->thp ? "true" : "false");
	if (!r->freeze) {
		printf(",\"heap_walk_why\":");
		json_str(stdout, r->freeze_why);
	}
	if (r->vthreads && r->freeze)
		printf(",\"heap_walk_vthread_stacks\":%s", r->vthread_stacks ? "true" : "false");
	/* the pause a walk will cost, estimated (0: unknown) */
	printf(",\"heap_walk_pause_ns\":%llu,\"heap_walk_needs_max_pause\":%s",
	       (unsigned long long)(r->freeze ? r->fork_ns + r->copy_ns :
				    r->est_ok ? r->est.pause_ns : 0),
	       (!r->freeze && (!r->est_ok ||
			       r->est.pause_ns > (uint64_t)WALKEST_DEFAULT_BOUND_MS * 1000000)) ||
	       (r->zgc && r->fork_ns + r->copy_ns > (uint64_t)WALKEST_DEFAULT_BOUND_MS * 1000000) ?
	       "true" : "false");
	if (r->zgc)
		printf(",\"heap_walk_copy_ns\":%llu,\"heap_used\":%llu,\"heap_walk_copy_max\":%llu",
		       (unsigned long long)r->copy_ns,
		       (unsigned long long)(r->est_ok ? r->est.used : 0),
		       (unsigned long long)zgc_copy_max(r));
	if (!r->freeze && r->est_ok)
		printf(",\"heap_walk_objects\":%llu,\"heap_used\":%llu",
		       (unsigned long long)r->est.objects, (unsigned long long)r->est.used);
	{
		struct heapmem_room m;

		heapmem_room_now(&m); /* what memtrace may hold for a heap answer (0: unbounded) */
		printf(",\"heap_answer_memory_max\":%llu",
		       (unsigned long long)(m.free == UINT64_MAX && !m.max ? 0 : heapmem_limit(&m)));
	}
	printf(",\"attach_possible\":%s,\"attach_listener_running\":%s,"
	       "\"dynamic_agent_warning\":%s,\"other_pidns\":%s,\"other_mntns\":%s",
	       attach_ok(r) ? "true" : "false", r->attach_socket ? "true" : "false",
	       r->agent_warning ? "true" : "false",
	       p->other_pidns ? "true" : "false", p->other_mntns ? "true" : "false");
	jvmid_json(stdout, &p->ident);
	printf(",\"kernel\":{\"release\":");
	json_str(stdout, r->kf.release);
	printf(",\"ringbuf\":%s,\"attach_cookie\":%s,\"bpf_loop\":%s,\"uprobe_multi\":%s,"
	       "\"uprobe_multi_hidden\":%s}", r->kf.ringbuf ? "true" : "false",
	       r->kf.cookie ? "true" : "false", r->kf.loop ? "true" : "false",
	       r->kf.uprobe_multi ? "true" : "false", r->kf.uprobe_multi_hidden ? "true" : "false");
	printf(",\"privileges\":{\"root\":%s,\"CAP_BPF\":%s,\"CAP_PERFMON\":%s,"
	       "\"CAP_SYS_PTRACE\":%s,\"CAP_SYS_ADMIN\":%s},\"can_trace\":%s,\"gc_source\":\"%s\"}\n",
	       r->root ? "true" : "false", r->cap_bpf ? "true" : "false",
	       r->cap_perfmon ? "true" : "false", r->cap_ptrace ? "true" : "false",
	       r->cap_admin ? "true" : "false", bpf_ok(r) ? "true" : "false",
	       gc_ok(r) ? "usdt" : "none");
}

#define YES(c) ((c) ? "yes" : "NO ")

/* What memtrace may hold for a heap answer here (heap/heapmem.h). */
static void print_heap_memory(void)
{
	struct heapmem_room m;
	char a[32], b[96];

	heapmem_room_now(&m);
	if (m.free == UINT64_MAX && !m.max) {
		printf("  memory for heap answers: not bounded (MemAvailable unread)\n");
		return;
	}
	if (m.max && m.max <= heapmem_limit(&m))
		snprintf(b, sizeof(b), "--max-memory");
	else
		snprintf(b, sizeof(b), "%s, less %s",
			 m.by_cgroup ? "what its memory cgroup has left" : "MemAvailable",
			 fmt_bytes(HEAPFREEZE_MARGIN, a, sizeof(a)));
	printf("  memory for heap answers: memtrace may hold up to %s (%s), at %llu bytes an "
	       "object and %llu a reference for heap --retained, %llu and %llu for leaks; "
	       "histo a few MiB whatever the heap\n",
	       fmt_bytes(heapmem_limit(&m), a, sizeof(a)), b,
	       /* a frozen copy's references by position, CLASS ones implied (this agent's) */
	       (unsigned long long)(heapmem_need(HEAPMEM_RETAINED_IMPLIED, 1, 0) - HEAPMEM_BASE),
	       (unsigned long long)(heapmem_need(HEAPMEM_RETAINED_IMPLIED, 0, 1) - HEAPMEM_BASE),
	       (unsigned long long)(heapmem_need(HEAPMEM_SERIES_IMPLIED, 1, 0) - HEAPMEM_BASE),
	       (unsigned long long)(heapmem_need(HEAPMEM_SERIES_IMPLIED, 0, 1) - HEAPMEM_BASE));
}

/* Can a JVM's heap be in transparent huge pages here (THP not "never")? */
static bool thp_possible(void)
{
	char *t = read_file("/sys/kernel/mm/transparent_hugepage/enabled", NULL);
	bool yes = t && !strstr(t, "[never]");

	free(t);
	return yes;
}

/* The collector, whether heap walks can be frozen, and what one will cost. */
static void print_heap(const struct report *r)
{
	char a[32], t[192];
	const char *why;
	bool huge = util_hugepages_wanted(&why);

	printf("\ncollector and heap walks\n");
	printf("  collector  %s\n", r->collector ? r->collector : "unknown (no Use*GC flag read)");
	printf("  snapshot arrays in %s pages: %s\n", huge ? "huge (2 MiB)" : "small (4 KiB)", why);
	/* the copy's first read of each heap page is a fault where faults are
	 * slow (a PVM guest: 4.5 us a page, 0.4 s of a 10 M-object answer); not
	 * for ZGC (its heap is shared memory, which the copy copies) nor where
	 * the kernel's THP is off */
	if (r->freeze && !r->zgc && !r->thp_err && !r->thp && thp_possible() &&
	    util_page_fault_us() >= UTIL_SLOW_FAULT_US)
		printf("  hint: a page fault costs %.1f us on this machine, and a frozen copy's "
		       "first read of each\n        4 KiB page of the heap is one: this JVM "
		       "started with -XX:+UseTransparentHugePages\n        would have its heap "
		       "in 2 MiB pages, and a snapshot's mark take about a third of the time\n",
		       util_page_fault_us());
	print_heap_memory();
	if (r->freeze) {
		printf("  [yes] frozen heap walks: the JVM pauses only to fork a copy");
		if (r->fork_ns)
			printf(", about %s (its resident memory at %d us a MiB, an upper "
			       "estimate)", fmt_ns(r->fork_ns, a, sizeof(a)),
			       HEAPFREEZE_FORK_NS_PER_MB / 1000);
		if (r->zgc) {
			char b[32];

			printf(",\n        and (ZGC: its heap is shared memory) while the copy copies "
			       "the used heap, taken at a cycle's end");
			if (r->copy_ns)
				printf(": about %s if it is the %s hsperfdata reads now (%.1f GB/s)",
				       fmt_ns(r->copy_ns, a, sizeof(a)),
				       fmt_bytes(r->est.used, b, sizeof(b)),
				       1e9 / HEAPFREEZE_ZGC_COPY_NS_PER_MB / 1024);
			printf(";\n        a copy over %s (%d ms with the fork) is refused before "
			       "any pause unless --max-pause MS allows it, and one still going at "
			       "%d x the bound (a machine slower than estimated) is cut there, the "
			       "JVM let go",
			       fmt_bytes(zgc_copy_max(r), b, sizeof(b)), WALKEST_DEFAULT_BOUND_MS,
			       HEAPFREEZE_ZGC_CUT);
			if (r->fork_ns + r->copy_ns > (uint64_t)WALKEST_DEFAULT_BOUND_MS * 1000000)
				printf(": histo, heap, query, snapshot and leaks may need it");
		}
		printf("\n");
		if (r->vthreads && r->vthread_stacks)
			printf("  [yes] parked virtual threads' stacks: read in the copy, through "
			       "HotSpot's own iteration of their stack chunks\n");
		else if (r->vthreads)
			printf("  [NO ] parked virtual threads' stacks: this libjvm's iteration of "
			       "stack chunks was not found; %s\n",
			       r->moving ? "a snapshot with any needs --max-pause (a walk in a pause)"
				       : "a snapshot with any is walked with JVMTI in the copy (slower)");
		return;
	}
	printf("  [NO ] frozen heap walks: %s\n", r->freeze_why);
	if (!r->est_ok) {
		printf("        a walk in a pause cannot be estimated (no hsperfdata counters): "
		       "memtrace does not walk without --max-pause MS\n");
		return;
	}
	printf("        a walk in a pause: %s\n", walkestimate_text(&r->est, t, sizeof(t)));
	if (r->est.pause_ns > (uint64_t)WALKEST_DEFAULT_BOUND_MS * 1000000)
		printf("        over %d ms: histo, heap, query, snapshot and leaks walk only with "
		       "--max-pause MS (a pause of up to MS, the walk cut short there)\n",
		       WALKEST_DEFAULT_BOUND_MS);
}

static void print_text(const struct report *r)
{
	const struct mt_proc *p = &r->p;

	printf("JVM %d", p->pid);
	if (p->nspid != p->pid)
		printf(" (pid %d in its own namespace)", p->nspid);
	printf(": %s %s, uid %u, main %s\n", p->jdk_vendor[0] ? p->jdk_vendor : "unknown vendor",
	       p->jdk_version[0] ? p->jdk_version : "(version unknown)", p->uid,
	       p->main_class[0] ? p->main_class : "?");
	printf("  libjvm        %s\n", p->libjvm);
	if (strcmp(p->libjvm, p->libjvm_host + strlen(p->root)) || p->other_mntns)
		printf("  seen from here %s\n", p->libjvm_host);
	printf("  namespaces    pid: %s, mount: %s%s%s\n", p->other_pidns ? "own" : "host's",
	       p->other_mntns ? "own" : "host's", p->ident.container_id[0] ? ", container " : "",
	       p->ident.container_id[0] ? p->ident.container_id : "");
	if (p->ident.container_name[0] || p->ident.pod_uid[0])
		printf("  identity      %s%s%s%s%s%s%s%s\n",
		       p->ident.container_name[0] ? "container " : "", p->ident.container_name,
		       p->ident.pod[0] ? (p->ident.container_name[0] ? ", pod " : "pod ") : "",
		       p->ident.pod, p->ident.pod_namespace[0] ? ", namespace " : "",
		       p->ident.pod_namespace, p->ident.pod_uid[0] ? ", pod uid " : "",
		       p->ident.pod_uid);

	printf("\nprobes and symbols\n");
	printf("  [%s] hotspot USDT probes (%d)%s\n", YES(r->nprobes > 0), r->nprobes,
	       r->nprobes ? "" :
	       ": this libjvm was built without DTrace probes; memtrace gc cannot trace "
	       "collections (use a JDK built with --enable-dtrace; jstat -gc shows counts)");
	for (size_t j = 0; j < MT_ARRAY_SIZE(dprobes); j++)
		if (!r->probe[j] && r->nprobes)
			printf("  [NO ] probe %s missing: %s unavailable\n", dprobes[j].name,
			       dprobes[j].user);
	printf("  [%s] .symtab%s\n", YES(r->symtab),
	       r->symtab ? "" : ": libjvm is stripped; allocation sampling by uprobes is "
				"unavailable (install the JDK's debug symbols, or use the agent)");
	printf("  [%s] AllocTracer::send_allocation_{in_new,outside}_tlab%s\n", YES(r->sym_tlab),
	       r->sym_tlab ? " (allocation sampling without flags)" :
			     ": memtrace alloc cannot sample by uprobes");
	printf("  [%s] GCMemoryManager::gc_end + GCCause::to_string%s\n",
	       YES(r->sym_gcend && r->ncauses > 0),
	       !r->sym_gcend ? ": collections will have no cause (the symbol is missing)" :
	       r->ncauses <= 0 ? ": collections will have no cause (GCCause::to_string unreadable)" :
				 " (the cause of each collection, no flags)");
	printf("  [%s] GCTimer::register_gc_pause_start/end%s\n", YES(r->sym_gcpause),
	       r->sym_gcpause ? " + GCTracer::report_gc_start/end (the pauses of concurrent "
				"cycles - G1 remark and cleanup, ZGC, Shenandoah - named, and "
				"every duration as JFR's)" :
	       ": those pauses are bracketed by gc__begin/gc__end instead, unnamed and "
	       "shorter than the JVM's own");
	printf("  [%s] VMStructs tables (class names, flags)\n", YES(r->vmstructs));

	printf("\nflags\n");
	for (size_t i = 0; i < MT_ARRAY_SIZE(dflags); i++) {
		if (r->flag_err[i] == -ENOENT)
			printf("  %-26s absent in this JDK\n", dflags[i].name);
		else if (r->flag_err[i])
			printf("  %-26s unreadable (%s)\n", dflags[i].name, strerror(-r->flag_err[i]));
		else
			printf("  %-26s %-5s  %s\n", dflags[i].name, r->flag[i] ? "true" : "false",
			       dflags[i].gives);
	}

	print_heap(r);

	printf("\nattach (JVMTI agent)\n");
	printf("  [%s] dynamic attach%s\n", YES(attach_ok(r)),
	       attach_ok(r) ? "" : ": -XX:+DisableAttachMechanism is set; the agent-based "
				   "commands (age, leaks, query) are unavailable");
	printf("        attach listener %s\n", r->attach_socket ?
	       "already running" : "not started yet (memtrace starts it with SIGQUIT on first attach)");
	if (r->agent_warning)
		printf("        JDK %d prints \"WARNING: A JVMTI agent has been loaded dynamically\" "
		       "on the JVM's stderr at the first attach; start the JVM with "
		       "-XX:+EnableDynamicAgentLoading to silence it\n", p->jdk_major);

	printf("\nmemtrace's privileges\n");
	printf("  [%s] root\n", YES(r->root));
	printf("  [%s] CAP_BPF + CAP_PERFMON (or CAP_SYS_ADMIN)%s\n", YES(bpf_ok(r)),
	       bpf_ok(r) ? "" : ": cannot load BPF or attach probes: run with sudo or "
				"setcap cap_bpf,cap_perfmon+ep");
	printf("  [%s] CAP_SYS_PTRACE%s\n", YES(r->cap_ptrace || r->root),
	       (r->cap_ptrace || r->root) ? "" : ": only JVMs of your own uid can be read");

	printf("\nkernel %s (BPF features, probed)\n", r->kf.release);
	printf("  [%s] ring buffers (5.8)%s%s\n", YES(r->kf.ringbuf),
	       r->kf.ringbuf ? "" : ": memtrace's programs cannot load on this kernel",
	       (r->kf.hidden & KF_RINGBUF) ? " (hidden by MEMTRACE_HIDE_BPF)" : "");
	printf("  [%s] BPF cookies (5.15)%s%s\n", YES(r->kf.cookie),
	       r->kf.cookie ? "" : ": USDT probes cannot load: no collections, parks or records",
	       (r->kf.hidden & KF_COOKIE) ? " (hidden by MEMTRACE_HIDE_BPF)" : "");
	printf("  [%s] bpf_loop (5.17)%s%s\n", YES(r->kf.loop),
	       r->kf.loop ? "" : ": the Java stack walker cannot load: no alloc, top, "
				 "locks stacks or records",
	       (r->kf.hidden & KF_LOOP) ? " (hidden by MEMTRACE_HIDE_BPF)" : "");
	printf("  [%s] uprobe_multi links (6.6)%s\n", YES(r->kf.uprobe_multi),
	       r->kf.uprobe_multi ? "" : r->kf.uprobe_multi_hidden ?
	       ": hidden by MEMTRACE_NO_UPROBE_MULTI; perf-event uprobes instead" :
	       ": perf-event uprobes instead: the cost budget's windows open late and thin");

	printf("\nmemtrace will use\n");
	printf("  gc      %s%s%s\n", gc_ok(r) ? "USDT gc__begin/end + mem__pool__gc__begin/end" :
						    "nothing: no GC probes in this libjvm",
	       gc_ok(r) && r->sym_gcend && r->ncauses > 0 ? ", uprobe GCMemoryManager::gc_end (causes)" : "",
	       gc_ok(r) && r->sym_gcpause ? ", uprobes on GCTimer (concurrent cycles' pauses)" : "");
	printf("  alloc   %s\n", r->sym_tlab ? "uprobes on AllocTracer (TLAB-refill sampling, no flags)" :
					       "nothing without symbols");
	printf("  agent   %s\n", attach_ok(r) ? "dynamic attach" : "unavailable");
	if (r->freeze)
		printf("  heap    snapshots from a frozen copy of the JVM (its pause: a fork)\n");
	else
		printf("  heap    snapshots walked in a pause (%s)\n",
		       !r->est_ok ? "length unknown: --max-pause needed" :
		       r->est.pause_ns > (uint64_t)WALKEST_DEFAULT_BOUND_MS * 1000000 ?
		       "over 100 ms: --max-pause needed" : "under 100 ms");
}

int do_doctor(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cmdopt o = { .usage = usage };
	struct report r;
	int opt, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "p:jh", longopts, NULL)) != -1) {
		rc = cmdopt_common(opt, optarg, &o);
		if (rc != MT_CMDOPT_MORE)
			return rc;
	}
	if (cmdopt_no_args(argc, argv, "doctor", usage))
		return 2;
	if (cmdopt_need_pid(&o, "doctor"))
		return 2;
	memset(&r, 0, sizeof(r));
	if (cmdopt_open_jvm(o.pid, NULL, &r.p))
		return 1;
	inspect(&r);
	kfeatures_probe(&r.kf);
	if (mt_opts.json)
		print_json(&r);
	else
		print_text(&r);
	return 0;
}
