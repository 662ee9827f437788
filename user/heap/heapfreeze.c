// SPDX-License-Identifier: GPL-2.0
/*
 * heapfreeze.c - what memtrace checks and hands the agent for a frozen heap
 * walk (see heapfreeze.h and MT_AP_HEAP_FREEZE in agent_proto.h).
 *
 * The agent needs two HotSpot addresses that VMStructs does not publish, so
 * they come from libjvm's .symtab: SafepointSynchronize::_state, which tells
 * it when the copy's walk is over (HotSpot leaves the safepoint in the copy
 * after FollowReferences returns), and on JDK 17 ObjectMarker::_needs_reset
 * (that JDK unmarks the whole heap after a walk that got past its roots;
 * the copy skips it). The heap's reserved range (CollectedHeap::_reserved)
 * lets the agent check that the heap is private memory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heap/heapfreeze.h"
#include "heap/snapshot.h"
#include "jvm/hotspot.h"
#include "jvm/jvmflags.h"
#include "jvm/proc.h"
#include "jvm/vmstructs.h"
#include "lib/util.h"

#define SYM_STATE "_ZN20SafepointSynchronize6_stateE"
#define SYM_RESET "_ZN12ObjectMarker12_needs_resetE"
#define SYM_TC_MUTEX "_ZL8tc_mutex"               /* JDK 17: ThreadCritical's pthread mutex */
#define SYM_CHUNK_MUTEX "_ZL20GlobalChunkPoolMutex" /* JDK 21+: a pointer to the chunk pool's */

int heapfreeze_mode_parse(const char *s, int *mode)
{
	if (!strcmp(s, "auto"))
		*mode = HEAPFREEZE_AUTO;
	else if (!strcmp(s, "frozen"))
		*mode = HEAPFREEZE_FROZEN;
	else if (!strcmp(s, "paused"))
		*mode = HEAPFREEZE_PAUSED;
	else
		return -EINVAL;
	return 0;
}

enum gc { GC_G1, GC_PARALLEL, GC_SERIAL, GC_EPSILON, GC_SHENANDOAH, GC_ZGC };

/*
 * The collector: 0 and *@gc when its heap can be frozen, else -ENOTSUP.
 * Shenandoah's can: its workers stop at safepoints (they join the
 * suspendible thread set: on by default from JDK 17.0.x, always in 25) and
 * its heap is private memory, so the copy forked in a pause is that
 * instant's heap; what it may hold of a cycle in flight is objects moved and
 * references not yet updated to them, which the copy's own mark follows
 * (MT_AP_FREEZE_FORWARDING). ZGC's can too, differently: its heap is a
 * shared memfd, which the copy copies in the pause (MT_AP_FREEZE_ZGC).
 */
static int check_gc(const struct mt_proc *p, const struct mt_vmstructs *vs, enum gc *gc,
		    char *why, size_t n)
{
	static const char *const ok[] = { "UseG1GC", "UseParallelGC", "UseSerialGC",
					  "UseEpsilonGC", "UseShenandoahGC", "UseZGC" };
	bool on = false;

	for (size_t i = 0; i < MT_ARRAY_SIZE(ok); i++)
		if (!jvmflags_get_bool(p, vs, ok[i], &on) && on) {
			*gc = (enum gc)i;
			return 0;
		}
	snprintf(why, n, "its collector is not one memtrace knows (G1, Parallel, Serial, "
		 "Shenandoah, ZGC)");
	return -ENOTSUP;
}

/* *@off = @val, an offset the JVM has (@has), as a u16. 0, -ENOENT or -ERANGE. */
static int off16(bool has, uint64_t val, uint16_t *off)
{
	if (!has)
		return -ENOENT;
	if (val > UINT16_MAX)
		return -ERANGE;
	*off = (uint16_t)val;
	return 0;
}

/* spaces[i] = the address of the pointer field at offset @off (@has: the
 * JVM has it) of the object at @owner (a space object's pointer, read by
 * the agent in the pause). */
static int space_field(struct mt_ap_heap_freeze *f, int i, uint64_t owner, bool has,
		       uint64_t off)
{
	if (!has)
		return -ENOENT;
	if (!owner)
		return -EFAULT;
	f->spaces[i] = owner + off;
	return 0;
}

/* G1's region table, or -ENOENT. */
static int g1_spaces(const struct mt_hotspot *hs, uint64_t heap, struct mt_ap_heap_freeze *f)
{
	int err;

	if (!hs->has_g1collectedheap_hrm || !hs->has_g1heapregionmanager_regions ||
	    !hs->has_g1heapregiontable_base || !hs->has_g1heapregiontable_length)
		return -ENOENT;
	if ((err = off16(hs->has_g1heapregion_bottom, hs->g1heapregion_bottom, &f->off_bottom)) ||
	    (err = off16(hs->has_g1heapregion_top, hs->g1heapregion_top, &f->off_top)) ||
	    (err = off16(hs->has_g1heapregion_end, hs->g1heapregion_end, &f->off_end)))
		return err;
	f->spaces[0] = heap + hs->g1collectedheap_hrm + hs->g1heapregionmanager_regions;
	f->spaces[1] = hs->g1heapregiontable_base;
	f->spaces[2] = hs->g1heapregiontable_length;
	f->space_kind = MT_AP_FREEZE_SPACES_G1;
	return 0;
}

/* Parallel's young (eden, from, to) and old spaces. */
static int parallel_spaces(const struct mt_vmstructs *vs, struct mt_ap_heap_freeze *f)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t young = 0, old = 0;
	int err;

	if (!hs->parallelscavengeheap_young_gen || !hs->parallelscavengeheap_old_gen)
		return -ENOENT;
	if ((err = vmstructs_read_ptr(vs, hs->parallelscavengeheap_young_gen, &young)) ||
	    (err = vmstructs_read_ptr(vs, hs->parallelscavengeheap_old_gen, &old)))
		return err;
	return space_field(f, 0, young, hs->has_psyounggen_eden_space, hs->psyounggen_eden_space) ?:
	       space_field(f, 1, young, hs->has_psyounggen_from_space, hs->psyounggen_from_space) ?:
	       space_field(f, 2, young, hs->has_psyounggen_to_space, hs->psyounggen_to_space) ?:
	       space_field(f, 3, old, hs->has_psoldgen_object_space, hs->psoldgen_object_space) ?:
	       off16(hs->has_mutablespace_bottom, hs->mutablespace_bottom, &f->off_bottom) ?:
	       off16(hs->has_mutablespace_top, hs->mutablespace_top, &f->off_top) ?:
	       off16(hs->has_mutablespace_end, hs->mutablespace_end, &f->off_end);
}

/* Serial's young (eden, from, to) and old spaces. */
static int serial_spaces(const struct mt_vmstructs *vs, uint64_t heap,
			 struct mt_ap_heap_freeze *f)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t young = 0, old = 0;
	int err;

	if (!hs->has_serialheap_young_gen || !hs->has_serialheap_old_gen)
		return -ENOENT;
	if ((err = vmstructs_read_ptr(vs, heap + hs->serialheap_young_gen, &young)) ||
	    (err = vmstructs_read_ptr(vs, heap + hs->serialheap_old_gen, &old)))
		return err;
	return space_field(f, 0, young, hs->has_defnewgeneration_eden_space,
			   hs->defnewgeneration_eden_space) ?:
	       space_field(f, 1, young, hs->has_defnewgeneration_from_space,
			   hs->defnewgeneration_from_space) ?:
	       space_field(f, 2, young, hs->has_defnewgeneration_to_space,
			   hs->defnewgeneration_to_space) ?:
	       space_field(f, 3, old, hs->has_tenuredgeneration_the_space,
			   hs->tenuredgeneration_the_space) ?:
	       off16(hs->has_contiguousspace_bottom, hs->contiguousspace_bottom, &f->off_bottom) ?:
	       off16(hs->has_contiguousspace_top, hs->contiguousspace_top, &f->off_top) ?:
	       off16(hs->has_contiguousspace_end, hs->contiguousspace_end, &f->off_end);
}

/*
 * Where the heap's unused space is, for the agent to keep it out of the copy:
 * G1's region table; the young and old spaces of Parallel and Serial. Any
 * entry missing: the whole heap is shared (a slower fork, more page faults
 * afterwards, the same snapshot). Never fails.
 */
static void find_spaces(const struct mt_vmstructs *vs, enum gc gc, uint64_t heap,
			struct mt_ap_heap_freeze *f)
{
	int err;

	if (gc == GC_G1) {
		g1_spaces(vmstructs_hotspot(vs), heap, f);
		return;
	}
	/* Shenandoah's regions are not kept out: a copy died reading one (SIGSEGV,
	 * JDK 25, once in a make check) with [top, end) of every region unshared;
	 * the whole heap shared, no copy died in the runs here */
	if (gc == GC_PARALLEL)
		err = parallel_spaces(vs, f);
	else if (gc == GC_SERIAL)
		err = serial_spaces(vs, heap, f);
	else
		return;
	if (err)
		memset(f->spaces, 0, sizeof(f->spaces));
	else
		f->space_kind = MT_AP_FREEZE_SPACES_LIST;
}

#define SYM_ZBASE  "ZAddressHeapBase"
#define SYM_ZMEDALIGN "ZObjectAlignmentMedium"
#define SYM_ZROLD  "ZPointerRemappedOldMask"
#define SYM_ZRYOUNG "ZPointerRemappedYoungMask"
#define SYM_ZYOUNG "_ZN11ZGeneration6_youngE"
#define SYM_ZOLD   "_ZN11ZGeneration4_oldE"
#define ZGEN_FWD_TABLE 32 /* ZGeneration: vptr, _id, _page_allocator*, _page_table*, then
			   * _forwarding_table (not in VMStructs; checked below) */

/* The address of the variable ZGlobalsForVMStructs' pointer field @field
 * points at. */
static int zglobal(const struct mt_vmstructs *vs, uint64_t inst, const char *field, uint64_t *at)
{
	uint64_t off;

	if (vmstructs_field_offset(vs, "ZGlobalsForVMStructs", field, &off))
		return -ENOENT;
	return vmstructs_read_ptr(vs, inst + off, at) ?: (*at ? 0 : -EFAULT);
}

/* JDK 21+: generation @sym's forwarding table, its layout checked against
 * the heap's (@zheap: the ZHeap in ZCollectedHeap). */
static int zgen_table(const struct mt_vmstructs *vs, const char *sym, uint64_t zheap,
		      uint64_t page_table_off, uint64_t *table)
{
	uint64_t at, gen, id, pa, pt, size;

	if (vmstructs_symbol(vs, sym, &at) || vmstructs_read_ptr(vs, at, &gen) || !gen ||
	    vmstructs_read_ptr(vs, gen + 8, &id) || vmstructs_read_ptr(vs, gen + 16, &pa) ||
	    vmstructs_read_ptr(vs, gen + 24, &pt) ||
	    vmstructs_read_ptr(vs, gen + ZGEN_FWD_TABLE, &size))
		return -ENOENT;
	if ((uint32_t)id > 1 || pa != zheap || pt != zheap + page_table_off || !size ||
	    size > (1ull << 24))
		return -EPROTO;
	*table = gen + ZGEN_FWD_TABLE;
	return 0;
}

/*
 * ZGC: where the agent finds, in the pause, what a frozen copy of its heap
 * needs (docs/zgc-frozen-design.md): the masks through ZGlobalsForVMStructs'
 * pointers (its constants read 0: VMStructs is filled before ZGC sets them),
 * the page table and forwarding tables, the layouts of ZPage and ZForwarding;
 * the generational collector's heap base, remapped masks and per-generation
 * forwarding tables from .symtab.
 */
static int zgc_prepare(const struct mt_vmstructs *vs, uint64_t heap, struct mt_ap_heap_zgc *z,
		       char *why, size_t n)
{
	uint64_t at, inst, zheap_off, pt_off, pt_map_off, vstart, top, fws, fwv, fwsh, fwe, fwrc,
		 fwt = 0, fwt_map = 0, size;

	memset(z, 0, sizeof(*z));
	z->size = sizeof(*z);
	if (vmstructs_static_addr(vs, "ZGlobalsForVMStructs", "_instance_p", &at) ||
	    vmstructs_read_ptr(vs, at, &inst) || !inst ||
	    vmstructs_field_offset(vs, "ZCollectedHeap", "_heap", &zheap_off) ||
	    vmstructs_field_offset(vs, "ZHeap", "_page_table", &pt_off) ||
	    vmstructs_field_offset(vs, "ZPageTable", "_map", &pt_map_off) ||
	    vmstructs_field_offset(vs, "ZPage", "_virtual", &vstart) ||
	    vmstructs_field_offset(vs, "ZPage", "_top", &top) ||
	    vmstructs_field_offset(vs, "ZForwarding", "_virtual", &fwv) ||
	    vmstructs_field_offset(vs, "ZForwarding", "_object_alignment_shift", &fwsh) ||
	    vmstructs_field_offset(vs, "ZForwarding", "_entries", &fwe) ||
	    vmstructs_field_offset(vs, "ZForwarding", "_ref_count", &fwrc) ||
	    vmstructs_type_size(vs, "ZForwarding", &fws) ||
	    zglobal(vs, inst, "_ZAddressOffsetMask", &z->offset_mask)) {
		snprintf(why, n, "its ZGC is not one memtrace can copy (VMStructs lacks its "
			 "page table or forwarding layout)");
		return -ENOTSUP;
	}
	z->page_table = heap + zheap_off + pt_off + pt_map_off;
	z->page_start = (uint32_t)vstart; /* ZVirtualMemory's _start comes first */
	z->page_top = (uint32_t)top;
	z->fw_start = (uint32_t)fwv;
	z->fw_shift = (uint32_t)fwsh;
	z->fw_length = (uint32_t)fwe; /* ZAttachedArray: its _length alone */
	z->fw_refcount = (uint32_t)fwrc;
	z->fw_entries = (uint32_t)((fws + 7) & ~7ull);
	/* a page's type (a byte: small, medium, large): medium and large pages'
	 * primitive arrays are copied without their elements where no walk
	 * reads them; unknown (0), every page is copied whole */
	{
		uint64_t toff;
		unsigned tsz;

		const char *env = getenv("MEMTRACE_ZGC_SKIP"); /* "0": copy every page whole */

		if (!(env && !strcmp(env, "0")) &&
		    !vmstructs_field_sized(vs, "ZPage", "_type", &toff, &tsz, 1) && tsz == 1 &&
		    toff < 4096 && !vmstructs_symbol(vs, SYM_ZMEDALIGN, &z->medium_align))
			z->page_type = (uint32_t)toff + 1;
	}
	if (!zglobal(vs, inst, "_ZGlobalPhase", &at)) { /* JDK 17's */
		z->variant = MT_AP_ZGC_X;
		if (zglobal(vs, inst, "_ZAddressGoodMask", &z->good_mask) ||
		    zglobal(vs, inst, "_ZAddressBadMask", &z->bad_mask) ||
		    vmstructs_field_offset(vs, "ZHeap", "_forwarding_table", &fwt) ||
		    vmstructs_field_offset(vs, "ZForwardingTable", "_map", &fwt_map)) {
			snprintf(why, n, "its ZGC's masks or forwarding table are not in VMStructs");
			return -ENOTSUP;
		}
		z->fwd_tables[0] = heap + zheap_off + fwt + fwt_map;
		return 0;
	}
	if (zglobal(vs, inst, "_ZPointerLoadGoodMask", &z->good_mask) ||
	    zglobal(vs, inst, "_ZPointerLoadBadMask", &z->bad_mask)) {
		snprintf(why, n, "its ZGC is neither JDK 17's nor the generational one memtrace "
			 "knows (JDK 21's non-generational ZGC cannot be frozen)");
		return -ENOTSUP;
	}
	z->variant = MT_AP_ZGC_GEN;
	if (vmstructs_symbol(vs, SYM_ZBASE, &z->heap_base) ||
	    vmstructs_symbol(vs, SYM_ZROLD, &z->remapped_old) ||
	    vmstructs_symbol(vs, SYM_ZRYOUNG, &z->remapped_young) ||
	    zgen_table(vs, SYM_ZYOUNG, heap + zheap_off, pt_off, &z->fwd_tables[0]) ||
	    zgen_table(vs, SYM_ZOLD, heap + zheap_off, pt_off, &z->fwd_tables[1]) ||
	    vmstructs_read_ptr(vs, z->page_table, &size) || !size || size > (1ull << 24)) {
		snprintf(why, n, "its generational ZGC's heap base, masks or generations are not "
			 "in libjvm's .symtab as memtrace knows them");
		return -ENOTSUP;
	}
	return 0;
}

/* e2e tests (walk_frozen): MEMTRACE_TEST_FREEZE=fail makes the copy die after
 * the roots, =hang makes it stop calling back (given up after 1.5 s here),
 * =pull makes the agent read the records out of the copy and send them,
 * =nofork makes the fork fail (the walk goes on in the pause). */
static void test_hooks(struct mt_ap_heap_freeze *f)
{
	const char *t = getenv("MEMTRACE_TEST_FREEZE");

	if (t && !strcmp(t, "pull"))
		f->flags &= ~MT_AP_FREEZE_DIRECT;
	if (t && !strcmp(t, "compare")) /* with the mark: it and the JVMTI walk, one image */
		f->flags |= MT_AP_FREEZE_COMPARE;
	if (t && !strcmp(t, "nofork"))
		f->flags |= MT_AP_FREEZE_TEST_NOFORK;
	if (t && !strcmp(t, "fail"))
		f->flags |= MT_AP_FREEZE_TEST_FAIL;
	if (t && !strcmp(t, "hang")) {
		f->flags |= MT_AP_FREEZE_TEST_HANG;
		f->stall_ms = 1500;
	}
}

int heapfreeze_prepare(const struct mt_proc *p, const struct mt_vmstructs *vs,
		       struct mt_ap_heap_freeze *f, struct mt_ap_heap_zgc *z, char *why, size_t n)
{
	const struct mt_hotspot *hs;
	uint64_t heap, start = 0, words = 0;
	enum gc gc = GC_G1;
	int err;

	memset(f, 0, sizeof(*f));
	if (!vs) {
		snprintf(why, n, "its VMStructs tables cannot be read");
		return -ENOENT;
	}
	err = check_gc(p, vs, &gc, why, n);
	if (err)
		goto out;
	if (vmstructs_symbol(vs, SYM_STATE, &f->state_addr)) {
		snprintf(why, n, "libjvm has no .symtab (SafepointSynchronize::_state unknown)");
		err = -ENOENT;
		goto out;
	}
	if (vmstructs_symbol(vs, SYM_RESET, &f->reset_addr))
		f->reset_addr = 0; /* JDK 21+: a bitmap marks, nothing to unmark */
	/* the arena chunk pool's lock: JIT compiler threads take it during pauses
	 * and the copy's walk needs it (a deadlock in the copy, seen on JDK 17) */
	if (!vmstructs_symbol(vs, SYM_CHUNK_MUTEX, &f->locks[0])) {
		f->lock_ptr = 1;
	} else if (vmstructs_symbol(vs, SYM_TC_MUTEX, &f->locks[0])) {
		snprintf(why, n, "libjvm's arena lock is unknown (neither %s nor %s in .symtab)",
			 SYM_CHUNK_MUTEX, SYM_TC_MUTEX);
		err = -ENOENT;
		goto out;
	}
	hs = vmstructs_hotspot(vs);
	if (gc == GC_ZGC) { /* its _reserved is empty: the agent reads its pages */
		err = hs->universe_collectedheap ? 0 : -ENOENT;
		if (!err)
			err = vmstructs_read_ptr(vs, hs->universe_collectedheap, &heap);
		if (err || !heap) {
			snprintf(why, n, "the Java heap cannot be found in VMStructs");
			err = err ? err : -EPROTO;
			goto out;
		}
		err = zgc_prepare(vs, heap, z, why, n);
		if (err)
			goto out;
		f->stall_ms = HEAPFREEZE_STALL_MS;
		f->max_ms = HEAPFREEZE_MAX_MS;
		f->flags = MT_AP_FREEZE_DIRECT | MT_AP_FREEZE_ZGC;
		if (!util_hugepages_wanted(NULL))
			f->flags |= MT_AP_FREEZE_SMALLPAGES;
		test_hooks(f);
		goto out;
	}
	err = hs->universe_collectedheap && hs->has_collectedheap_reserved &&
	      hs->has_memregion_start && hs->has_memregion_word_size ? 0 : -ENOENT;
	if (!err)
		err = vmstructs_read_ptr(vs, hs->universe_collectedheap, &heap);
	if (!err)
		err = vmstructs_read_ptr(vs, heap + hs->collectedheap_reserved + hs->memregion_start,
					 &start);
	if (!err)
		err = vmstructs_read_ptr(vs, heap + hs->collectedheap_reserved +
					 hs->memregion_word_size, &words);
	if (err || !start || !words || words > (1ull << 50)) {
		snprintf(why, n, "the Java heap's range cannot be read from VMStructs");
		err = err ? err : -EPROTO;
		goto out;
	}
	f->heap_lo = start;
	f->heap_hi = start + words * 8;
	find_spaces(vs, gc, heap, f);
	f->stall_ms = HEAPFREEZE_STALL_MS;
	f->max_ms = HEAPFREEZE_MAX_MS;
	f->flags = MT_AP_FREEZE_DIRECT; /* memtrace reads the copy: the JVM copies nothing */
	if (gc == GC_SHENANDOAH) /* moved objects: only the copy's own mark walks it */
		f->flags |= MT_AP_FREEZE_FORWARDING;
	if (!util_hugepages_wanted(NULL)) /* the copy's records as memtrace's arrays */
		f->flags |= MT_AP_FREEZE_SMALLPAGES;
	test_hooks(f);
out:
	return err;
}

uint64_t heapfreeze_meminfo_kb(const char *text, const char *key)
{
	size_t kl = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (!strncmp(l, key, kl) && l[kl] == ':')
			return strtoull(l + kl + 1, NULL, 10);
	}
	return UINT64_MAX;
}

uint64_t heapfreeze_cgroup_left(const char *limit, const char *usage)
{
	uint64_t lim, use;
	char *end;

	if (!limit || !usage || !strncmp(limit, "max", 3))
		return UINT64_MAX;
	lim = strtoull(limit, &end, 10);
	if (end == limit || lim >= (1ull << 62)) /* v1's "unlimited" is 2^63 - a page */
		return UINT64_MAX;
	use = strtoull(usage, &end, 10);
	if (end == usage)
		return UINT64_MAX;
	return use >= lim ? 0 : lim - use;
}

/* The least left under the limits of the cgroup at @dir and its ancestors
 * up to @top (v2: memory.max/current, v1: memory.limit_in_bytes/usage_in_bytes). */
static uint64_t cgroup_left(char *dir, size_t top, bool v2)
{
	uint64_t least = UINT64_MAX;

	for (;;) {
		char lp[PATH_MAX + 32], up[PATH_MAX + 32];
		char *l, *u, *slash;
		uint64_t left;

		snprintf(lp, sizeof(lp), "%s/%s", dir, v2 ? "memory.max" : "memory.limit_in_bytes");
		snprintf(up, sizeof(up), "%s/%s", dir, v2 ? "memory.current" : "memory.usage_in_bytes");
		l = read_file(lp, NULL);
		u = read_file(up, NULL);
		left = heapfreeze_cgroup_left(l, u);
		free(l);
		free(u);
		if (left < least)
			least = left;
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < top)
			break;
		*slash = '\0';
	}
	return least;
}

uint64_t heapfreeze_mem_left(int pid, bool *by_cgroup)
{
	char path[64], *text;
	uint64_t kb, left = UINT64_MAX;

	if (by_cgroup)
		*by_cgroup = false;
	text = read_file("/proc/meminfo", NULL);
	kb = text ? heapfreeze_meminfo_kb(text, "MemAvailable") : UINT64_MAX;
	free(text);
	if (kb != UINT64_MAX)
		left = kb * 1024;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	text = read_file(path, NULL);
	for (char *l = text; l && *l;) {
		char *nl = strchr(l, '\n'), dir[PATH_MAX];
		const char *rel = NULL;
		bool v2 = false;
		uint64_t c;

		if (nl)
			*nl = '\0';
		if (!strncmp(l, "0::", 3)) {
			rel = l + 3;
			v2 = true;
		} else if (strstr(l, ":memory:")) {
			rel = strstr(l, ":memory:") + 8;
		}
		if (rel) {
			int base = snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s", v2 ? "" : "/memory");

			if (base > 0 && strlen(rel) + (size_t)base < sizeof(dir) && !strstr(rel, "..")) {
				snprintf(dir + base, sizeof(dir) - (size_t)base, "%s",
					 strcmp(rel, "/") ? rel : "");
				c = cgroup_left(dir, (size_t)base, v2);
				if (c < left) {
					left = c;
					if (by_cgroup)
						*by_cgroup = true;
				}
			}
		}
		l = nl ? nl + 1 : NULL;
	}
	free(text);
	return left;
}

int heapfreeze_headroom(const struct mt_proc *p, uint64_t *need, uint64_t *have)
{
	char path[64], *text;
	uint64_t kb;

	snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
	text = read_file(path, NULL);
	if (!text)
		return -errno;
	kb = heapfreeze_meminfo_kb(text, "RssAnon");
	free(text);
	if (kb == UINT64_MAX)
		return -EPROTO;
	*need = kb * 1024;
	*have = heapfreeze_mem_left(p->pid, NULL);
	return 0;
}

uint64_t heapfreeze_fork_estimate_ns(const struct mt_proc *p)
{
	char path[64], *text;
	uint64_t kb, shm;

	snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
	text = read_file(path, NULL);
	kb = text ? heapfreeze_meminfo_kb(text, "VmRSS") : UINT64_MAX;
	shm = text ? heapfreeze_meminfo_kb(text, "RssShmem") : UINT64_MAX;
	free(text);
	if (kb == UINT64_MAX)
		return 0;
	/* shared memory (ZGC's heap, mapped three times on JDK 17): its page
	 * tables are not copied by fork */
	if (shm != UINT64_MAX && shm < kb)
		kb -= shm;
	return kb / 1024 * HEAPFREEZE_FORK_NS_PER_MB;
}

uint64_t heapfreeze_zgc_copy_estimate_ns(uint64_t used, uint64_t ns_per_mib)
{
	return (used >> 20) * (ns_per_mib ? ns_per_mib : HEAPFREEZE_ZGC_COPY_NS_PER_MB);
}

uint64_t heapfreeze_zgc_copy_max_mib(uint64_t fork_ns, uint32_t bound_ms, uint64_t ns_per_mib)
{
	uint64_t bound = (uint64_t)bound_ms * 1000000;

	if (!ns_per_mib)
		ns_per_mib = HEAPFREEZE_ZGC_COPY_NS_PER_MB;
	return fork_ns < bound ? (bound - fork_ns) / ns_per_mib : 0;
}

uint64_t heapfreeze_zgc_learn(uint64_t ns_per_mib, uint64_t bytes, uint64_t ns)
{
	uint64_t now;

	if (!ns_per_mib)
		ns_per_mib = HEAPFREEZE_ZGC_COPY_NS_PER_MB;
	if (bytes < HEAPFREEZE_ZGC_LEARN_MIN || !ns)
		return ns_per_mib;
	now = (uint64_t)((double)ns * (double)(1ull << 20) / (double)bytes);
	return now > ns_per_mib ? now : ns_per_mib;
}

/* Is process @c a child of JVM @jvm whose innermost pid is @nspid? */
static bool copy_is(int jvm, int c, uint32_t nspid)
{
	char sp[64], *st, *ns, *eol, *last;
	bool is = false;

	snprintf(sp, sizeof(sp), "/proc/%d/status", c);
	st = c > 0 ? read_file(sp, NULL) : NULL;
	ns = st ? strstr(st, "\nNSpid:") : NULL;
	if (ns && heapfreeze_meminfo_kb(st, "PPid") == (uint64_t)jvm) {
		eol = strchr(ns + 1, '\n');
		if (eol)
			*eol = '\0';
		last = strrchr(ns, '\t');
		is = last && strtoul(last + 1, NULL, 10) == nspid;
	}
	free(st);
	return is;
}

/* One scan of the children of each of @jvm's threads for the copy, or 0. */
static int copy_scan(int jvm, uint32_t nspid)
{
	char path[64], *text;
	DIR *d;
	struct dirent *e;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", jvm);
	d = opendir(path);
	while (d && !found && (e = readdir(d))) {
		char cp[320];

		if (e->d_name[0] == '.')
			continue;
		snprintf(cp, sizeof(cp), "/proc/%d/task/%s/children", jvm, e->d_name);
		text = read_file(cp, NULL);
		for (char *t = text ? strtok(text, " \n") : NULL; t && !found; t = strtok(NULL, " \n"))
			found = copy_is(jvm, atoi(t), nspid) ? atoi(t) : 0;
		free(text);
	}
	if (d)
		closedir(d);
	return found;
}

/* The host pid of JVM @jvm's child whose innermost pid is @nspid, or 0: in
 * memtrace's own pid namespace that pid itself; else from the threads'
 * children, scanned twice at most (a readdir of a task list whose threads
 * come and go may skip one: the JVM's take then once went out of place). */
int heapfreeze_copy_pid(int jvm, uint32_t nspid)
{
	int found;

	if (nspid && nspid <= INT32_MAX && copy_is(jvm, (int)nspid, nspid))
		return (int)nspid;
	found = copy_scan(jvm, nspid);
	return found ? found : copy_scan(jvm, nspid);
}

static int pread_all(int fd, void *buf, size_t len, uint64_t addr)
{
	size_t off = 0;

	while (off < len) {
		ssize_t r = pread(fd, (char *)buf + off, len - off, (off_t)(addr + off));

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		off += (size_t)r;
	}
	return 0;
}

/* Append @k entries of @esz bytes at @src to s->raw as records of @kind. */
static int raw_records(struct mt_snapshot *s, unsigned kind, const void *src, size_t k, size_t esz)
{
	size_t per = (0xfff0 - 8) / esz;

	for (size_t i = 0; i < k; i += per) {
		size_t m = k - i < per ? k - i : per;
		size_t len = 8 + m * esz;

		if (snapshot_grow(&s->raw, &s->raw_cap, s->raw_len, len, 1))
			return -ENOMEM;
		if (mt_ap_rec_put(s->raw, s->raw_cap, &s->raw_len, kind, (uint32_t)m,
				  (const char *)src + i * esz, m * esz) < 0)
			return -ENOMEM;
	}
	return 0;
}

int heapfreeze_read_copy(const struct mt_proc *p, struct mt_snapshot *s, char *why, size_t n)
{
	const struct mt_ap_hcopy *c = &s->copy;
	struct mt_ap_hstrref *refs = NULL;
	char path[64];
	int pid, fd = -1, err = 0;

	if (c->nvisits > (1ull << 34) || c->nprims > (1ull << 34) || c->nstrs > (1ull << 30)) {
		snprintf(why, n, "the frozen copy's record counts make no sense");
		return -EPROTO;
	}
	pid = heapfreeze_copy_pid(p->pid, c->child_pid);
	if (!pid) {
		snprintf(why, n, "the frozen copy (pid %u in the JVM) is not among the JVM's "
			 "children", c->child_pid);
		return -ESRCH;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, n, "cannot open %s: %s", path, strerror(errno));
		return err;
	}
	err = snapshot_grow(&s->visits, &s->cap_visits, s->nvisits, c->nvisits, sizeof(*s->visits));
	if (!err && c->nvisits)
		err = pread_all(fd, s->visits + s->nvisits, c->nvisits * sizeof(*s->visits), c->visits);
	if (!err) {
		err = raw_records(s, MT_AP_HREC_VISITS, s->visits + s->nvisits, c->nvisits,
				  sizeof(*s->visits));
		s->nvisits += c->nvisits;
	}
	if (!err)
		err = snapshot_grow(&s->prims, &s->cap_prims, s->nprims, c->nprims, sizeof(*s->prims));
	if (!err && c->nprims)
		err = pread_all(fd, s->prims + s->nprims, c->nprims * sizeof(*s->prims), c->prims);
	if (!err) {
		err = raw_records(s, MT_AP_HREC_PRIMS, s->prims + s->nprims, c->nprims,
				  sizeof(*s->prims));
		s->nprims += c->nprims;
	}
	if (!err && c->nstrs) {
		refs = calloc(c->nstrs, sizeof(*refs));
		err = refs ? pread_all(fd, refs, c->nstrs * sizeof(*refs), c->strs) : -ENOMEM;
	}
	for (uint64_t i = 0; i < c->nstrs && !err; i++) {
		char buf[8 + MT_AP_HSTR_MAX + 1];
		struct mt_snap_string st = { .obj = refs[i].obj };

		if (refs[i].len > MT_AP_HSTR_MAX) {
			err = -EPROTO;
			break;
		}
		memcpy(buf, &refs[i].obj, 8);
		err = pread_all(fd, buf + 8, refs[i].len + 1, refs[i].utf8);
		if (err)
			break;
		buf[8 + refs[i].len] = '\0';
		st.s = snapshot_strdup(s, buf + 8, refs[i].len);
		if (!st.s || snapshot_grow(&s->strings, &s->cap_strings, s->nstrings, 1,
					   sizeof(*s->strings)) ||
		    snapshot_grow(&s->raw, &s->raw_cap, s->raw_len, 8 + 8 + refs[i].len + 8, 1)) {
			err = -ENOMEM;
			break;
		}
		s->strings[s->nstrings++] = st;
		if (mt_ap_rec_put(s->raw, s->raw_cap, &s->raw_len, MT_AP_HREC_STRING, refs[i].len,
				  buf, 8 + refs[i].len + 1) < 0)
			err = -ENOMEM;
	}
	free(refs);
	close(fd);
	if (err == -ENOMEM)
		snprintf(why, n, "out of memory for the frozen copy's records");
	else if (err == -EPROTO)
		snprintf(why, n, "a string in the frozen copy is longer than the agent sends");
	else if (err)
		snprintf(why, n, "cannot read the frozen copy (pid %d): %s", pid, strerror(-err));
	return err;
}
