/* memimage.h - a target's memory as a fuzz input: what the VMStructs reader
 * (user/jvm/vmstructs.h) and the readers behind it (JVMFlag table, class
 * names) read, as the bytes at their addresses.
 *
 *   "MTVMIMG1"                                    8 bytes
 *   struct mt_vmstructs_syms                      24 x u64, little endian
 *   then segments to the end: u64 addr, u32 len, len bytes
 *
 * A read is served when it lies inside one segment; anything else is
 * -EFAULT, as reading an unmapped address of a live JVM is. Header only:
 * the fuzzer (fuzz_vmstructs.c) and the tool that captures an image from a
 * live JVM (capture_vmstructs.c) both include it. */
#ifndef MEMTRACE_FUZZ_MEMIMAGE_H
#define MEMTRACE_FUZZ_MEMIMAGE_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/vmstructs.h"

#define MEMIMAGE_MAGIC "MTVMIMG1"
#define MEMIMAGE_MAX_SEGS 4096

struct memimage_seg {
	uint64_t addr;
	uint32_t len;
	const uint8_t *data;
};

struct memimage {
	struct mt_vmstructs_syms syms;
	struct memimage_seg seg[MEMIMAGE_MAX_SEGS];
	size_t nseg;
};

static inline int memimage_seg_cmp(const void *a, const void *b)
{
	const struct memimage_seg *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* memimage_parse - @data (@n bytes) into @m (pointing into @data), the
 * segments sorted by address. 0 or -EINVAL. */
static inline int memimage_parse(const uint8_t *data, size_t n, struct memimage *m)
{
	size_t off = 8 + sizeof(m->syms);

	if (n < off || memcmp(data, MEMIMAGE_MAGIC, 8))
		return -EINVAL;
	memcpy(&m->syms, data + 8, sizeof(m->syms));
	m->nseg = 0;
	while (n - off >= 12 && m->nseg < MEMIMAGE_MAX_SEGS) {
		struct memimage_seg *s = &m->seg[m->nseg];

		memcpy(&s->addr, data + off, 8);
		memcpy(&s->len, data + off + 8, 4);
		off += 12;
		if (s->len > n - off)
			s->len = (uint32_t)(n - off); /* a cut image: what is there */
		s->data = data + off;
		off += s->len;
		m->nseg++;
	}
	qsort(m->seg, m->nseg, sizeof(m->seg[0]), memimage_seg_cmp);
	return 0;
}

/* memimage_read - an mt_read_fn over a struct memimage (@ctx): the read
 * must lie inside the segment with the greatest start at or below @addr. */
static inline int memimage_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct memimage *m = ctx;
	const struct memimage_seg *s;
	size_t lo = 0, hi = m->nseg;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->seg[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return -EFAULT;
	s = &m->seg[lo - 1];
	if (addr - s->addr > s->len || len > s->len - (addr - s->addr))
		return -EFAULT;
	memcpy(buf, s->data + (addr - s->addr), len);
	return 0;
}

#endif
