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
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/heapfreeze.h"
#include "jvm/jvmflags.h"
#include "jvm/proc.h"
#include "jvm/vmstructs.h"
#include "lib/util.h"

#define SYM_STATE "_ZN20SafepointSynchronize6_stateE"
#define SYM_RESET "_ZN12ObjectMarker12_needs_resetE"

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

/* The collector: 0 when its heap can be frozen, else -ENOTSUP and its name. */
static int check_gc(const struct mt_proc *p, const struct mt_vmstructs *vs, char *why, size_t n)
{
	static const char *const ok[] = { "UseG1GC", "UseParallelGC", "UseSerialGC",
					  "UseEpsilonGC" };
	static const char *const no[] = { "UseZGC", "UseShenandoahGC" };
	bool on = false;

	for (size_t i = 0; i < MT_ARRAY_SIZE(no); i++)
		if (!jvmflags_get_bool(p, vs, no[i], &on) && on) {
			snprintf(why, n, "its collector (%s) changes the heap outside pauses and "
				 "would write into a copy", no[i] + 3);
			return -ENOTSUP;
		}
	for (size_t i = 0; i < MT_ARRAY_SIZE(ok); i++)
		if (!jvmflags_get_bool(p, vs, ok[i], &on) && on)
			return 0;
	snprintf(why, n, "its collector is not one memtrace knows (G1, Parallel, Serial)");
	return -ENOTSUP;
}

int heapfreeze_prepare(const struct mt_proc *p, struct mt_ap_heap_freeze *f, char *why, size_t n)
{
	struct mt_vmstructs *vs = NULL;
	uint64_t heap, start = 0, words = 0, a_heap, off_res, off_start, off_words;
	int err;

	memset(f, 0, sizeof(*f));
	err = vmstructs_open(p, &vs);
	if (err) {
		snprintf(why, n, "its VMStructs tables cannot be read (%s)", strerror(-err));
		return err;
	}
	err = check_gc(p, vs, why, n);
	if (err)
		goto out;
	if (vmstructs_symbol(vs, SYM_STATE, &f->state_addr)) {
		snprintf(why, n, "libjvm has no .symtab (SafepointSynchronize::_state unknown)");
		err = -ENOENT;
		goto out;
	}
	if (vmstructs_symbol(vs, SYM_RESET, &f->reset_addr))
		f->reset_addr = 0; /* JDK 21+: a bitmap marks, nothing to unmark */
	err = vmstructs_static_addr(vs, "Universe", "_collectedHeap", &a_heap);
	if (!err)
		err = vmstructs_field_offset(vs, "CollectedHeap", "_reserved", &off_res);
	if (!err)
		err = vmstructs_field_offset(vs, "MemRegion", "_start", &off_start);
	if (!err)
		err = vmstructs_field_offset(vs, "MemRegion", "_word_size", &off_words);
	if (!err)
		err = vmstructs_read_ptr(vs, a_heap, &heap);
	if (!err)
		err = vmstructs_read_ptr(vs, heap + off_res + off_start, &start);
	if (!err)
		err = vmstructs_read_ptr(vs, heap + off_res + off_words, &words);
	if (err || !start || !words || words > (1ull << 50)) {
		snprintf(why, n, "the Java heap's range cannot be read from VMStructs");
		err = err ? err : -EPROTO;
		goto out;
	}
	f->heap_lo = start;
	f->heap_hi = start + words * 8;
	f->stall_ms = HEAPFREEZE_STALL_MS;
	f->max_ms = HEAPFREEZE_MAX_MS;
out:
	vmstructs_free(vs);
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

int heapfreeze_headroom(const struct mt_proc *p, uint64_t *need, uint64_t *have)
{
	char path[64], *text;
	uint64_t kb, left = UINT64_MAX;

	snprintf(path, sizeof(path), "/proc/%d/status", p->pid);
	text = read_file(path, NULL);
	if (!text)
		return -errno;
	kb = heapfreeze_meminfo_kb(text, "RssAnon");
	free(text);
	if (kb == UINT64_MAX)
		return -EPROTO;
	*need = kb * 1024;
	text = read_file("/proc/meminfo", NULL);
	kb = text ? heapfreeze_meminfo_kb(text, "MemAvailable") : UINT64_MAX;
	free(text);
	if (kb != UINT64_MAX)
		left = kb * 1024;
	snprintf(path, sizeof(path), "/proc/%d/cgroup", p->pid);
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
				if (c < left)
					left = c;
			}
		}
		l = nl ? nl + 1 : NULL;
	}
	free(text);
	*have = left;
	return 0;
}
