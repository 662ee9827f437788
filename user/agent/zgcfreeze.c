// SPDX-License-Identifier: GPL-2.0
/*
 * zgcfreeze.c - a frozen copy of a ZGC heap (zgcfreeze.h).
 *
 * Every read of the JVM's memory here goes through process_vm_readv on the
 * JVM itself (a bad address fails the freeze, never the JVM), but for the
 * granule maps' slots, read in place once their ends were read that way.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "zgcfreeze.h"

#define HEAP_FILE      "/memfd:java_heap"
#define MAX_SLOTS      (1ull << 24)   /* granule map slots (JDK 17: 2^21) */
#define MAX_PAGES      (1u << 22)
#define RELOC_WAIT_NS  (50 * 1000000ull) /* JDK 17: wait this long for relocation to end */
#define MARGIN         (64ull << 20)  /* the copy's files: used heap + 1/4 + this */
#define PG             4096ull
#define POPULATE_STEP  (32ull << 20)
#define COPY_STEP      (4u << 20)     /* the copy looks at its deadline this often */
#define IDLE_LOOK_NS   (200 * 1000000ull) /* settle(): the used heap grew less than */
#define IDLE_GROWTH    (1ull << 20)       /* this in that time: an idle JVM */

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static int self_read(uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t got = process_vm_readv(getpid(), &l, 1, &r, 1, 0);

	if (got < 0)
		return -errno;
	return (size_t)got == len ? 0 : -EFAULT;
}

static int read_u64(uint64_t addr, uint64_t *v)
{
	return addr ? self_read(addr, v, sizeof(*v)) : -EFAULT;
}

/* A granule map {size, slots} at @at, its first and last slots readable. */
static int read_map(uint64_t at, struct zgc_map *m)
{
	uint64_t size, map, v;

	if (read_u64(at, &size) || read_u64(at + 8, &map) || !size || size > MAX_SLOTS || !map ||
	    read_u64(map, &v) || read_u64(map + (size - 1) * 8, &v))
		return -EFAULT;
	m->size = size;
	m->map = (const uint64_t *)(uintptr_t)map;
	return 0;
}

/* The JVM's heap file: the fd whose link names it. */
static int find_heap_fd(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int fd = -1;

	while (d && fd < 0 && (e = readdir(d))) {
		char p[300], l[128];
		ssize_t k;

		if (e->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "/proc/self/fd/%s", e->d_name);
		k = readlink(p, l, sizeof(l) - 1);
		if (k > 0) {
			l[k] = '\0';
			if (!strncmp(l, HEAP_FILE, strlen(HEAP_FILE)))
				fd = atoi(e->d_name);
		}
	}
	if (d)
		closedir(d);
	return fd;
}

/* Each distinct page of the page table (a page of n granules fills n slots)
 * as [start, top); *@used their bytes. With @keep (in the pause) the pages
 * are kept and one that does not read fails; without (the JVM running, its
 * pages come and go) such a page is left out of the sum. */
static int scan_pages(struct zgc_freeze *zf, bool keep, uint64_t *used)
{
	struct zgc_map pt;
	uint64_t prev = 0, lo = UINT64_MAX, hi = 0, sum = 0;
	size_t cap = 0;

	if (read_map(zf->req.page_table, &pt))
		return -EFAULT;
	zf->npages = 0;
	for (uint64_t i = 0; i < pt.size; i++) {
		uint64_t p = pt.map[i], start, top;

		if (!p || p == prev)
			continue;
		prev = p;
		if (read_u64(p + zf->req.page_start, &start) || read_u64(p + zf->req.page_top, &top) ||
		    top < start || top - start > (1ull << 40) || (start & (PG - 1))) {
			if (!keep)
				continue;
			return -EPROTO;
		}
		if (top == start)
			continue;
		sum += top - start;
		lo = start < lo ? start : lo;
		hi = top > hi ? top : hi;
		if (!keep)
			continue;
		if (zf->npages == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			struct zgc_page *np = nc <= MAX_PAGES ?
					      realloc(zf->pages, nc * sizeof(*np)) : NULL;

			if (!np)
				return -ENOMEM;
			zf->pages = np;
			cap = nc;
		}
		zf->pages[zf->npages] = (struct zgc_page){ start, top, 0 };
		if (zf->req.page_type &&
		    self_read(p + zf->req.page_type - 1, &zf->pages[zf->npages].type, 1))
			return -EPROTO;
		zf->npages++;
	}
	zf->lo = lo == UINT64_MAX ? 0 : lo;
	zf->hi = hi;
	*used = sum;
	return 0;
}

/* The heap file's mappings (every view) from /proc/self/maps; the views'
 * bases (an address's bits above the offset). */
static int read_maps(struct zgc_freeze *zf)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	size_t cap = 0;

	if (!f)
		return -errno;
	zf->nmaps = 0;
	zf->nviews = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, pgoff;
		char perms[8], path[256] = "";
		uint64_t base;
		int v;

		if (sscanf(line, "%lx-%lx %7s %lx %*s %*u %255s", &lo, &hi, perms, &pgoff, path) < 5 ||
		    strncmp(path, HEAP_FILE, strlen(HEAP_FILE)))
			continue;
		if (zf->nmaps == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct zgc_heapmap *nm = realloc(zf->maps, nc * sizeof(*nm));

			if (!nm) {
				fclose(f);
				return -ENOMEM;
			}
			zf->maps = nm;
			cap = nc;
		}
		zf->maps[zf->nmaps++] = (struct zgc_heapmap){ lo, hi, pgoff };
		base = lo & ~zf->refs.offset_mask;
		for (v = 0; v < zf->nviews && zf->views[v] != base; v++)
			;
		if (v == zf->nviews) {
			if (zf->nviews == (int)(sizeof(zf->views) / sizeof(zf->views[0]))) {
				fclose(f);
				return -EPROTO;
			}
			zf->views[zf->nviews++] = base;
		}
	}
	fclose(f);
	return zf->nmaps ? 0 : -ENOENT;
}

/* The heap's committed bytes: its file's mappings in one view (JDK 17 maps
 * the same memory three times). 0 if unknown. */
static uint64_t committed(struct zgc_freeze *zf)
{
	uint64_t sum = 0;

	if (read_u64(zf->req.offset_mask, &zf->refs.offset_mask) || read_maps(zf))
		return 0;
	for (size_t i = 0; i < zf->nmaps; i++)
		if ((zf->maps[i].lo & ~zf->refs.offset_mask) == zf->views[0])
			sum += zf->maps[i].hi - zf->maps[i].lo;
	return sum;
}

/*
 * Touch every page of the copy's file (@len bytes), the JVM running: a
 * fallocated shmem page is zeroed at its first touch, and on a VM whose
 * balloon took free memory back (free page reporting) that touch is a host
 * fault - 560 ms instead of 64 ms for 220 MiB when it came inside the pause.
 */
static int populate(const struct zgc_freeze *zf, int fd, uint64_t off, uint64_t len)
{
	void *m;
	int err = 0;

	/* allocated 32 MiB at a time too (fallocate took 0.16-0.32 s for 262 MiB) */
	for (uint64_t at = 0; at < len; at += POPULATE_STEP) {
		uint64_t k = len - at < POPULATE_STEP ? len - at : POPULATE_STEP;

		if (fallocate(fd, 0, (off_t)(off + at), (off_t)k))
			return -1;
		if (zf->idle)
			zf->idle();
	}
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (m == MAP_FAILED)
		return -1;
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif
	/* 32 MiB at a time, the socket thread's duties in between: the sampling
	 * rings fill in ~0.5 s (a `leaks` run lost 3.8 k samples to one go) */
	for (uint64_t at = 0; at < len && !err; at += POPULATE_STEP) {
		uint64_t k = len - at < POPULATE_STEP ? len - at : POPULATE_STEP;

		if (madvise((char *)m + at, k, MADV_POPULATE_WRITE)) {
			if (errno != EINVAL)
				err = -1;
			else
				for (uint64_t o = 0; o < k; o += PG) /* kernels before 5.14 */
					((volatile char *)m)[at + o] = 0;
		}
		if (zf->idle)
			zf->idle();
	}
	munmap(m, len);
	return err;
}

/* A freeze's copy files that no copy used (the pause refused it: ZGC was
 * relocating), kept for the retry memtrace sends next: populating them cost
 * the agent's thread ~0.6 ms a MiB (5.7 s of system time for the 4.8 M-object
 * bench's snapshot on JDK 25, whose young collections made it retry). */
static struct {
	int fd[2];
	uint64_t cap[2];
	uint64_t until;     /* freed after this (zgcfreeze_spare_expire()) */
} spare = { { -1, -1 }, { 0, 0 }, 0 };

#define SPARE_NS (3000 * 1000000ull)

static void spare_free(void)
{
	for (int i = 0; i < 2; i++) {
		if (spare.fd[i] >= 0)
			close(spare.fd[i]);
		spare.fd[i] = -1;
	}
}

void zgcfreeze_spare_expire(uint64_t now_ns)
{
	if (spare.fd[0] >= 0 && now_ns > spare.until)
		spare_free();
}

/* The spare files as this freeze's, while they are still there (else they
 * are freed): their room as it is, the caller grows it. */
static bool take_spare(struct zgc_freeze *zf, uint64_t *have)
{
	if (spare.fd[0] < 0 || mono_ns() > spare.until) {
		spare_free();
		return false;
	}
	for (int i = 0; i < 2; i++) {
		zf->copy_fd[i] = spare.fd[i];
		have[i] = spare.cap[i];
		spare.fd[i] = -1;
	}
	return true;
}

int zgcfreeze_begin(struct zgc_freeze *zf, const struct mt_ap_heap_zgc *req, void (*idle)(void),
		    char *why, size_t n)
{
	const struct mt_ap_heap_zgc *r = req;
	uint64_t v, c, used = 0, have[2] = { 0, 0 };
	int err;

	memset(zf, 0, sizeof(*zf));
	zf->on = true;
	zf->req = *req;
	zf->idle = idle;
	zf->heap_fd = zf->copy_fd[0] = zf->copy_fd[1] = -1;
	zf->up[0] = zf->up[1] = zf->down[0] = zf->down[1] = -1;
	if (read_u64(r->offset_mask, &v) || read_u64(r->good_mask, &v) ||
	    read_u64(r->bad_mask, &v) ||
	    (r->variant == MT_AP_ZGC_GEN && (read_u64(r->heap_base, &v) ||
					     read_u64(r->remapped_old, &v) ||
					     read_u64(r->remapped_young, &v)))) {
		snprintf(why, n, "ZGC's masks are not readable at the addresses memtrace gave");
		return -EFAULT;
	}
	if (!r->fw_entries || (r->fw_entries & 7) || r->fw_entries > 4096) {
		snprintf(why, n, "ZGC's forwarding layout memtrace gave makes no sense");
		return -EINVAL;
	}
	err = scan_pages(zf, false, &used);
	if (err) {
		snprintf(why, n, "ZGC's page table does not read as memtrace describes it");
		return err;
	}
	zf->heap_fd = find_heap_fd();
	if (zf->heap_fd < 0) {
		snprintf(why, n, "the JVM has no open %s file", HEAP_FILE);
		return -ENOENT;
	}
	/* the pause should not wait for fresh memory: room for the used heap and
	 * a quarter again (it grows between now and the pause), at most all the
	 * heap has committed; what the copy does not use it gives back, and what
	 * does not fit goes into fresh pages (a slower copy). Touching the room
	 * costs the agent's thread 0.6-3 ms of system time a MiB on this VM,
	 * whose balloon takes free memory back (0.8-4 s for 1.4 GiB), the JVM
	 * running: fresh memory is dear here, in the pause or out of it. */
	v = used + used / 4 + MARGIN;
	c = committed(zf);
	if (c && v > c)
		v = c;
	/* a bound: no room past it (the copy of more is refused) */
	c = ((uint64_t)req->max_copy_mib << 20) + MARGIN;
	if (req->max_copy_mib && v > c)
		v = c;
	for (int i = 0; i < 2; i++) /* half each, and some */
		zf->copy_cap[i] = (v / 2 + MARGIN / 2 + (2ull << 20) - 1) & ~((2ull << 20) - 1);
	if (!take_spare(zf, have))
		for (int i = 0; i < 2; i++)
			zf->copy_fd[i] = memfd_create(ZGC_COPY_NAME, MFD_CLOEXEC);
	for (int i = 0; i < 2; i++) {
		if (have[i] > zf->copy_cap[i]) /* a spare with more room: keep it */
			zf->copy_cap[i] = have[i];
		if (zf->copy_fd[i] < 0 ||
		    (have[i] < zf->copy_cap[i] &&
		     populate(zf, zf->copy_fd[i], have[i], zf->copy_cap[i] - have[i]))) {
			err = -errno;
			snprintf(why, n, "no memory for a copy of the used heap (2 x %llu MiB): %s",
				 (unsigned long long)(zf->copy_cap[i] >> 20), strerror(errno));
			zgcfreeze_end(zf);
			return err;
		}
	}
	return 0;
}

/* The masks and tables as the mark decodes with them. */
static int read_refs(struct zgc_freeze *zf)
{
	const struct mt_ap_heap_zgc *r = &zf->req;
	struct zgc_refs *z = &zf->refs;
	uint64_t base = 0;

	memset(z, 0, sizeof(*z));
	z->variant = r->variant;
	z->fw_start = r->fw_start;
	z->fw_shift = r->fw_shift;
	z->fw_length = r->fw_length;
	z->fw_entries = r->fw_entries;
	if (read_u64(r->offset_mask, &z->offset_mask) || !z->offset_mask ||
	    (z->offset_mask & (z->offset_mask + 1)))
		return -EPROTO; /* not 2^k - 1 */
	if (r->variant == MT_AP_ZGC_X) {
		if (read_u64(r->good_mask, &z->good))
			return -EFAULT;
		z->remapped = 1ull << (__builtin_popcountll(z->offset_mask) + 2);
		z->base = z->remapped;
	} else {
		if (read_u64(r->bad_mask, &z->load_bad) || read_u64(r->heap_base, &base) ||
		    read_u64(r->remapped_old, &z->rem_old) ||
		    read_u64(r->remapped_young, &z->rem_young) || !base || (base & z->offset_mask))
			return -EFAULT;
		z->base = base;
	}
	for (int i = 0; i < (r->variant == MT_AP_ZGC_X ? 1 : 2); i++)
		if (read_map(r->fwd_tables[i], &z->fwd[i]))
			return -EFAULT;
	return 0;
}

/* ZForwardings whose page is not relocated yet (or is being relocated), in
 * the first @slots granules of zf->refs' tables (their slots read in place:
 * the maps are arrays ZGC never frees); *@bad: those whose entries cannot be
 * read to the last (zgcref.c then reads them in place, in the JVM too:
 * zgc_root() on the named objects). */
static uint64_t relocating(const struct zgc_freeze *zf, uint64_t slots, uint64_t *bad)
{
	uint64_t busy = 0;

	*bad = 0;
	for (int t = 0; t < 2; t++) {
		const struct zgc_map *m = &zf->refs.fwd[t];
		uint64_t prev = 0;

		for (uint64_t i = 0; m->map && i < m->size && i < slots; i++) {
			uint64_t fw = m->map[i], len = 0, e;
			int32_t rc;

			if (!fw || fw == prev)
				continue;
			prev = fw;
			if (self_read(fw + zf->req.fw_refcount, &rc, sizeof(rc)) ||
			    read_u64(fw + zf->req.fw_length, &len) || !len || (len & (len - 1)) ||
			    len > (1ull << 32) || read_u64(fw + zf->req.fw_entries + (len - 1) * 8, &e))
				(*bad)++;
			else if (rc != 0)
				busy++;
		}
	}
	return busy;
}

/* A skip of [@lo, @hi) (whole 4 KiB pages) after the others. 0 or -ENOMEM. */
static int add_skip(struct zgc_freeze *zf, size_t *cap, uint64_t lo, uint64_t hi)
{
	if (zf->nskips == *cap) {
		size_t nc = *cap ? *cap * 2 : 256;
		struct zgc_skip *ns = realloc(zf->skips, nc * sizeof(*ns));

		if (!ns)
			return -ENOMEM;
		zf->skips = ns;
		*cap = nc;
	}
	zf->skips[zf->nskips++] = (struct zgc_skip){ lo, hi };
	zf->skipped += hi - lo;
	return 0;
}

/*
 * The elements of the primitive arrays in medium and large page @pg (ZGC
 * keeps objects over 256 KiB there, a few to a page: read one after another
 * from the page's start), as skips. The walk of a page stops at anything that
 * does not read as an object (the rest is copied): a klass word that does not
 * lead to a layout helper, a helper that is no array's or a plain instance's,
 * a size past the page's top. In a pause with no relocation in flight every
 * object below top is whole (an allocation writes its header before the
 * thread can reach a safepoint; a relocation's lost race leaves a whole copy).
 */
static int find_bodies(struct zgc_freeze *zf, const struct zgc_page *pg, size_t *cap)
{
	const struct mt_ap_heap_layout *L = zf->bodies;
	uint64_t at = pg->start, al = L->obj_align ? L->obj_align : 8, mal = al;
	int32_t m = 0;

	/* a medium page's objects are aligned to ZObjectAlignmentMedium */
	if (pg->type == 1 && (self_read(zf->req.medium_align, &m, sizeof(m)) || m < (int32_t)al ||
			      (m & (m - 1)) || m > (1 << 20)))
		return 0;
	if (pg->type == 1)
		mal = (uint64_t)m;

	while (at + 16 <= pg->top) {
		uint64_t a = zf->refs.base | at, k, size;
		uint32_t nk, lh;
		int32_t len;

		if (L->flags & MT_AP_LAYOUT_CKLASS) {
			if (self_read(a + L->klass_off, &nk, sizeof(nk)))
				return 0;
			k = L->klass_base + ((uint64_t)nk << L->klass_shift);
		} else if (read_u64(a + L->klass_off, &k)) {
			return 0;
		}
		if (!k || self_read(k + L->k_layout_helper, &lh, sizeof(lh)) || !lh)
			return 0;
		if ((int32_t)lh > 0) { /* an instance: its size, unless a special one */
			if (lh & 1)
				return 0;
			size = lh & ~7u;
		} else {
			uint32_t tag = lh >> 30, hdr = (lh >> 16) & 0xff, et = (lh >> 8) & 0xff;
			uint32_t esz = lh & 0xff;

			if ((tag != 2 && tag != 3) || esz > 3 || hdr < 12 || hdr > 32 ||
			    (tag == 3 && (et < 4 || et > 11)) ||
			    self_read(a + L->length_off, &len, sizeof(len)) || len < 0)
				return 0;
			size = (hdr + ((uint64_t)(uint32_t)len << esz) + al - 1) & ~(al - 1);
			if (tag == 3 && at + size <= pg->top) {
				uint64_t lo = (at + hdr + PG - 1) & ~(PG - 1);
				uint64_t hi = (at + size) & ~(PG - 1);

				if (hi > lo && add_skip(zf, cap, lo, hi))
					return -ENOMEM;
			}
		}
		if (size < 16 || at + size > pg->top)
			return 0;
		at = (at + size + mal - 1) & ~(mal - 1);
	}
	return 0;
}

/* Chunks for heap offsets [@at, @end), cut where the canonical view's
 * mappings end, packed from *@dst on. 0, -EPROTO or -ENOMEM. */
static int add_chunks(struct zgc_freeze *zf, size_t *cap, uint64_t at, uint64_t end,
		      uint64_t *dst)
{
	while (at < end) {
		const struct zgc_heapmap *m = NULL;
		uint64_t mlo = 0, len;

		for (size_t j = 0; j < zf->nmaps && !m; j++) {
			mlo = zf->maps[j].lo & zf->refs.offset_mask;
			if ((zf->maps[j].lo & ~zf->refs.offset_mask) == zf->refs.base &&
			    at >= mlo && at < mlo + (zf->maps[j].hi - zf->maps[j].lo))
				m = &zf->maps[j];
		}
		if (!m)
			return -EPROTO; /* a used page the heap file does not hold */
		len = mlo + (m->hi - m->lo) - at;
		if (len > end - at)
			len = end - at;
		if (zf->nchunks == *cap) {
			struct zgc_chunk *nc = realloc(zf->chunks, *cap * 2 * sizeof(*nc));

			if (!nc)
				return -ENOMEM;
			zf->chunks = nc;
			*cap *= 2;
		}
		zf->chunks[zf->nchunks++] = (struct zgc_chunk){ .off = at, .len = len,
								.src = m->pgoff + (at - mlo),
								.dst = *dst };
		*dst += len;
		at += len;
	}
	return 0;
}

/*
 * The copy's chunks: each page's [start, top rounded to 4 KiB) but its skips
 * (those stay the private zeros the copy maps first: a skip is one more
 * mapping per view, not fresh memory the copy's files would need), cut where
 * the canonical view's mappings end, packed one after another in the copy's
 * files.
 */
static int plan_chunks(struct zgc_freeze *zf)
{
	size_t cap = zf->npages + zf->nmaps + zf->nskips + 16, s = 0;
	uint64_t dst = 0;
	int err;

	free(zf->chunks);
	zf->nchunks = 0;
	zf->chunks = malloc(cap * sizeof(*zf->chunks));
	if (!zf->chunks)
		return -ENOMEM;
	for (size_t i = 0; i < zf->npages; i++) {
		uint64_t at = zf->pages[i].start;
		uint64_t end = (zf->pages[i].top + PG - 1) & ~(PG - 1);

		while (at < end) {
			uint64_t stop = end;

			while (s < zf->nskips && zf->skips[s].hi <= at)
				s++;
			if (s < zf->nskips && zf->skips[s].lo <= at) { /* in a skip */
				at = zf->skips[s].hi < end ? zf->skips[s].hi : end;
				continue;
			}
			if (s < zf->nskips && zf->skips[s].lo < end)
				stop = zf->skips[s].lo;
			err = add_chunks(zf, &cap, at, stop, &dst);
			if (err)
				return err;
			at = stop;
		}
	}
	zf->bytes = dst;
	/* the JVM copies the first half into its file, the copy the rest into
	 * the other (two cores, when the machine has them: the JVM's own threads
	 * are stopped) */
	for (zf->split = 0; zf->split < zf->nchunks && zf->chunks[zf->split].dst < dst / 2;
	     zf->split++)
		zf->chunks[zf->split].file = 0;
	zf->need[0] = zf->split < zf->nchunks ? zf->chunks[zf->split].dst : dst;
	zf->need[1] = dst - zf->need[0];
	for (size_t i = zf->split; i < zf->nchunks; i++) {
		zf->chunks[i].file = 1;
		zf->chunks[i].dst -= zf->need[0];
	}
	for (int i = 0; i < 2; i++) /* the heap grew since: fresh pages (slower) */
		if (zf->need[i] > zf->copy_cap[i] && ftruncate(zf->copy_fd[i], (off_t)zf->need[i]))
			return -errno;
	return 0;
}

bool zgcfreeze_settle(struct zgc_freeze *zf, uint32_t ms, uint64_t *ns)
{
	/* the granules up to the heap's top at begin (and some): JDK 17's map
	 * has 2^21 slots, too many to read every millisecond */
	uint64_t t0 = mono_ns(), top = (zf->hi >> ZGC_GRANULE_SHIFT) + 64, bad, u0 = 0, u1 = 0;
	struct timespec nap = { 0, 1000000 };
	bool busy_seen = false, ended = false, looked = false;

	/* an idle JVM (its used heap does not grow) starts no cycle: no wait */
	if (scan_pages(zf, false, &u0))
		u0 = UINT64_MAX;

	for (int t = 0; t < 2; t++) /* read_refs() reads them again in the pause */
		if (t >= (zf->req.variant == MT_AP_ZGC_X ? 1 : 2) ||
		    read_map(zf->req.fwd_tables[t], &zf->refs.fwd[t]))
			zf->refs.fwd[t] = (struct zgc_map){ 0 };
	while (mono_ns() - t0 < (uint64_t)ms * 1000000) {
		if (relocating(zf, top, &bad))
			busy_seen = true;
		else if (busy_seen) {
			ended = true;
			break;
		}
		if (!busy_seen && !looked && mono_ns() - t0 >= IDLE_LOOK_NS) {
			looked = true;
			if (u0 != UINT64_MAX && !scan_pages(zf, false, &u1) && u1 < u0 + IDLE_GROWTH)
				break;
		}
		if (zf->idle)
			zf->idle();
		nanosleep(&nap, NULL);
	}
	*ns = mono_ns() - t0;
	return ended;
}

/* Over the request's bound? -EFBIG with @why, else 0. */
static int over_bound(const struct zgc_freeze *zf, uint64_t used, const char *when, char *why,
		      size_t n)
{
	if (!zf->req.max_copy_mib || used <= (uint64_t)zf->req.max_copy_mib << 20)
		return 0;
	snprintf(why, n, "ZGC's used heap was %llu MiB %s, over the %u MiB its copy may take in "
		 "the pause", (unsigned long long)((used + (1u << 20) - 1) >> 20), when,
		 zf->req.max_copy_mib);
	return -EFBIG;
}

/* The skips of the pages listed (find_bodies()), when zf->bodies. 0 or -ENOMEM. */
static int plan_skips(struct zgc_freeze *zf)
{
	size_t cap = 0;
	int err = 0;

	zf->nskips = 0;
	zf->skipped = 0;
	free(zf->skips);
	zf->skips = NULL;
	for (size_t i = 0; !err && zf->bodies && zf->req.medium_align && i < zf->npages; i++)
		if (zf->pages[i].type == 1 || zf->pages[i].type == 2)
			err = find_bodies(zf, &zf->pages[i], &cap);
	return err;
}

int zgcfreeze_fits(struct zgc_freeze *zf, uint64_t *used, char *why, size_t n)
{
	uint64_t u = 0;

	/* the JVM running, pages come and go: one that does not read leaves
	 * the listing for the sum alone (no skips); the masks as now (read
	 * again in the pause) */
	if (read_refs(zf) || scan_pages(zf, true, &u) || plan_skips(zf)) {
		zf->nskips = 0;
		zf->skipped = 0;
		if (scan_pages(zf, false, &u)) {
			snprintf(why, n, "ZGC's page table does not read as memtrace describes it");
			return -EPROTO;
		}
	}
	u -= zf->skipped;
	if (used)
		*used = u;
	return over_bound(zf, u, "before the pause", why, n);
}

int zgcfreeze_pause(struct zgc_freeze *zf, char *why, size_t n)
{
	uint64_t t0 = mono_ns(), until = t0 + RELOC_WAIT_NS, used = 0, bad = 0;
	struct timespec nap = { 0, 1000000 };
	int err;

	zf->deadline = zf->req.max_pause_ms ? t0 + (uint64_t)zf->req.max_pause_ms * 1000000 : 0;
	zf->copied = 0;
	err = read_refs(zf);
	if (err) {
		snprintf(why, n, "ZGC's masks or forwarding tables do not read as memtrace "
			 "describes them");
		return err;
	}
	/* JDK 17's workers relocate during pauses: wait a little for them */
	while ((zf->busy = relocating(zf, UINT64_MAX, &bad)) && !bad && zf->req.variant == MT_AP_ZGC_X &&
	       mono_ns() < until)
		nanosleep(&nap, NULL);
	if (bad) {
		snprintf(why, n, "%llu of ZGC's forwardings do not read as memtrace describes them",
			 (unsigned long long)bad);
		return -EPROTO;
	}
	if (zf->busy) {
		snprintf(why, n, "ZGC was relocating objects (%llu pages not done)",
			 (unsigned long long)zf->busy);
		return -EAGAIN;
	}
	err = scan_pages(zf, true, &used);
	/* the elements of primitive arrays in medium and large pages: not
	 * copied when the walk reads none (the bound counts what is copied) */
	if (!err)
		err = plan_skips(zf);
	if (!err && (err = over_bound(zf, used - zf->skipped, "in the pause", why, n)))
		return err;
	if (!err)
		err = read_maps(zf);
	if (!err)
		err = plan_chunks(zf);
	for (int i = 0; i < 2; i++) { /* a pause before (tests): its pipes */
		if (zf->up[i] >= 0)
			close(zf->up[i]);
		if (zf->down[i] >= 0)
			close(zf->down[i]);
		zf->up[i] = zf->down[i] = -1;
	}
	if (!err && (pipe2(zf->up, O_CLOEXEC) || pipe2(zf->down, O_CLOEXEC)))
		err = -errno;
	if (err)
		snprintf(why, n, "ZGC's heap could not be planned for a copy (%s)", strerror(-err));
	return err;
}

/* Past the copy's deadline (zf->deadline, 0 none)? */
static bool late(const struct zgc_freeze *zf)
{
	return zf->deadline && mono_ns() >= zf->deadline;
}

/* @len bytes at @src of the JVM's heap file to @dst of the copy's, COPY_STEP
 * at a time (the deadline looked at between), adding each step to *@done;
 * through the heap's mapping at @addr where the kernel cannot copy file to
 * file. 0, -ETIME (the deadline passed) or -EIO. */
static int copy_range(const struct zgc_freeze *zf, int fd, uint64_t src, uint64_t dst,
		      uint64_t len, uint64_t addr, uint64_t *done)
{
	loff_t in = (loff_t)src, out = (loff_t)dst;
	bool kernel = true;

	while (len) {
		size_t step = len < COPY_STEP ? (size_t)len : COPY_STEP;
		ssize_t k = -1;

		if (late(zf))
			return -ETIME;
		if (kernel)
			k = copy_file_range(zf->heap_fd, &in, fd, &out, step, 0);
		if (k <= 0) {
			kernel = false;
			k = pwrite(fd, (const void *)(uintptr_t)addr, step, out);
			if (k <= 0)
				return -EIO;
			out += k;
			in += k;
		}
		len -= (uint64_t)k;
		addr += (uint64_t)k;
		*done += (uint64_t)k;
	}
	return 0;
}

/* Chunks [@from, @to) of the plan into the copy's file, adding what is
 * copied to *@done. 0, -ETIME or -EIO. */
static int copy_chunks(const struct zgc_freeze *zf, size_t from, size_t to, uint64_t *done)
{
	for (size_t i = from; i < to; i++) {
		const struct zgc_chunk *c = &zf->chunks[i];
		int err = copy_range(zf, zf->copy_fd[c->file], c->src, c->dst, c->len,
				     zf->refs.base | c->off, done);

		if (err)
			return err;
	}
	return 0;
}

int zgcfreeze_child(struct zgc_freeze *zf)
{
	const int prot = PROT_READ | PROT_WRITE;
	char go = 0;
	uint64_t done = 0;

	close(zf->up[0]);
	close(zf->down[1]);
	if (copy_chunks(zf, zf->split, zf->nchunks, &done)) /* the deadline: the JVM gave up */
		return -1;
	/* every view: private zeros, then the copy's pages where the heap's were */
	for (size_t i = 0; i < zf->nmaps; i++)
		if (mmap((void *)(uintptr_t)zf->maps[i].lo, zf->maps[i].hi - zf->maps[i].lo, prot,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0) == MAP_FAILED)
			return -1;
	for (size_t i = 0; i < zf->nchunks; i++)
		for (int v = 0; v < zf->nviews; v++) {
			const struct zgc_chunk *c = &zf->chunks[i];

			if (mmap((void *)(uintptr_t)(zf->views[v] | c->off), c->len, prot,
				 MAP_SHARED | MAP_FIXED, zf->copy_fd[c->file], (off_t)c->dst) == MAP_FAILED)
				return -1;
		}
	close(zf->heap_fd);
	if (write(zf->up[1], "z", 1) != 1)
		return -1;
	close(zf->up[1]);
	/* the JVM's half: done before anything here reads the heap */
	while (read(zf->down[0], &go, 1) < 0 && errno == EINTR)
		;
	close(zf->down[0]);
	/* what the files had in reserve goes back (it never held data); the JVM
	 * is out of its pause by now (freeing is not quick: ~50 ms for 300 MiB) */
	for (int i = 0; i < 2; i++) {
		if (zf->need[i] < zf->copy_cap[i])
			fallocate(zf->copy_fd[i], FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				  (off_t)zf->need[i], (off_t)(zf->copy_cap[i] - zf->need[i]));
		close(zf->copy_fd[i]);
	}
	return go == 'g' ? 0 : -1;
}

int zgcfreeze_wait(struct zgc_freeze *zf, uint64_t *ns, char *why, size_t n)
{
	/* a generous bound: 2 s and 10 ms per MiB (~2 GB/s is usual here) */
	int ms = 2000 + (int)((zf->bytes >> 20) * 10 > 60000 ? 60000 : (zf->bytes >> 20) * 10);
	uint64_t t0 = mono_ns(), t_mine;
	struct pollfd p = { .fd = zf->up[0], .events = POLLIN };
	int r = 0, mine;
	char c = 0;

	zf->consumed = true; /* the files are the copy's now */
	close(zf->up[1]);
	close(zf->down[0]);
	zf->up[1] = zf->down[0] = -1;
	mine = copy_chunks(zf, 0, zf->split, &zf->copied);
	t_mine = mono_ns() - t0;
	if (!mine) {
		if (zf->deadline) { /* no later than the deadline */
			uint64_t now = mono_ns();
			int left = now < zf->deadline ? (int)((zf->deadline - now + 999999) / 1000000) : 0;

			if (left < ms)
				ms = left;
		}
		do {
			r = poll(&p, 1, ms);
		} while (r < 0 && errno == EINTR);
	}
	if (!mine && r > 0 && read(zf->up[0], &c, 1) == 1 && c == 'z' &&
	    write(zf->down[1], "g", 1) == 1) {
		*ns = mono_ns() - t0;
		return 0;
	}
	*ns = mono_ns() - t0;
	/* the copy's half cut at the deadline too (it looks at it as well),
	 * or not done by then */
	if (mine == -ETIME || (!mine && r >= 0 && zf->deadline && late(zf))) {
		/* the whole copy at the speed seen: the JVM's half scaled when
		 * it was cut short (both halves go at about one speed), else
		 * longer than the wait (the copy's half was not done); 0 when
		 * nothing was copied (the fork took the time) */
		uint64_t whole = mine ? (zf->copied ? t_mine / zf->copied * zf->need[0] +
						      t_mine % zf->copied * zf->need[0] / zf->copied : 0)
				      : *ns + *ns / 4;

		/* short: 96 bytes go back (memtrace reads the MiB and the whole) */
		snprintf(why, n, "ZGC's copy of %llu MiB cut at %u ms (JVM's half: %llu/%llu MiB in "
			 "%.0f ms; all: ~%llu ms)", (unsigned long long)(zf->bytes >> 20),
			 zf->req.max_pause_ms, (unsigned long long)(zf->copied >> 20),
			 (unsigned long long)(zf->need[0] >> 20), (double)t_mine / 1e6,
			 (unsigned long long)(whole / 1000000));
		/* the copy maps nothing before its half is done: the files, their
		 * pages resident, are kept for the retry, not freed in the pause
		 * (~0.2 ms a MiB) */
		zf->consumed = false;
		return -ETIME;
	}
	if (mine) {
		snprintf(why, n, "the JVM's half of the used heap (%llu MiB) could not be copied",
			 (unsigned long long)(zf->bytes >> 20));
		return -EIO;
	}
	if (r == 0) {
		snprintf(why, n, "the copy did not copy the used heap (%llu MiB) within %d ms",
			 (unsigned long long)(zf->bytes >> 20), ms);
		return -ETIMEDOUT;
	}
	snprintf(why, n, "the copy failed to copy the used heap (%llu MiB)",
		 (unsigned long long)(zf->bytes >> 20));
	return -EIO;
}

void zgcfreeze_end(struct zgc_freeze *zf)
{
	if (!zf->on)
		return;
	for (int i = 0; i < 2; i++) {
		if (zf->up[i] >= 0)
			close(zf->up[i]);
		if (zf->down[i] >= 0)
			close(zf->down[i]);
	}
	zf->up[0] = zf->up[1] = zf->down[0] = zf->down[1] = -1;
	if (!zf->consumed && zf->copy_fd[0] >= 0 && zf->copy_fd[1] >= 0) {
		spare_free(); /* no copy used them: kept for a retry */
		for (int i = 0; i < 2; i++) {
			spare.fd[i] = zf->copy_fd[i];
			spare.cap[i] = zf->copy_cap[i];
			zf->copy_fd[i] = -1;
		}
		spare.until = mono_ns() + SPARE_NS;
	}
	for (int i = 0; i < 2; i++) {
		if (zf->copy_fd[i] >= 0)
			close(zf->copy_fd[i]);
		zf->copy_fd[i] = -1;
	}
	zf->heap_fd = -1; /* the JVM's own: never closed here */
	free(zf->pages);
	free(zf->maps);
	free(zf->chunks);
	free(zf->skips);
	zf->skips = NULL;
	zf->nskips = 0;
	zf->pages = NULL;
	zf->maps = NULL;
	zf->chunks = NULL;
	zf->npages = zf->nmaps = zf->nchunks = 0;
	zf->on = false;
}
