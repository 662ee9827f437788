// SPDX-License-Identifier: GPL-2.0
/* capture_vmstructs.c - a seed for fuzz_vmstructs from a live JVM: every
 * read the VMStructs reader and vmexercise.h make of the target's memory
 * (through /proc/PID/mem), merged into segments, written as a memimage.h
 * image. Usage: capture_vmstructs PID OUT (tests/fuzz/capture-seeds.sh). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/proc.h"
#include "memimage.h"
#include "vmexercise.h"

struct rd {
	uint64_t addr;
	size_t len;
	uint8_t *data;
};

static struct rd *reads;
static size_t nreads, cap;
static int target;

static int log_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	int err = proc_read_mem(target, addr, buf, len);

	if (err)
		return err;
	if (nreads == cap) {
		cap = cap ? 2 * cap : 1024;
		reads = realloc(reads, cap * sizeof(*reads));
		if (!reads)
			exit(1);
	}
	reads[nreads].addr = addr;
	reads[nreads].len = len;
	reads[nreads].data = malloc(len);
	memcpy(reads[nreads].data, buf, len);
	nreads++;
	return 0;
}

static int by_addr(const void *a, const void *b)
{
	const struct rd *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

int main(int argc, char **argv)
{
	struct mt_vmstructs_syms s;
	struct mt_vmstructs *vs;
	struct mt_proc p;
	size_t total = 0, nseg = 0;
	unsigned ok;
	FILE *f;
	int err;

	if (argc != 3) {
		fprintf(stderr, "usage: capture_vmstructs PID OUT\n");
		return 2;
	}
	target = atoi(argv[1]);
	if ((err = proc_open(target, &p)) || (err = vmstructs_syms(&p, &s)) ||
	    (err = vmstructs_parse(&s, log_read, NULL, &vs))) {
		fprintf(stderr, "capture_vmstructs: pid %d: %s\n", target, strerror(-err));
		return 1;
	}
	ok = vmex_run(vs);
	vmstructs_free(vs);
	qsort(reads, nreads, sizeof(*reads), by_addr);
	f = fopen(argv[2], "wb");
	if (!f)
		return 1;
	fwrite(MEMIMAGE_MAGIC, 1, 8, f);
	fwrite(&s, sizeof(s), 1, f);
	/* merge overlapping and touching reads into segments */
	for (size_t i = 0; i < nreads;) {
		uint64_t start = reads[i].addr, end = start + reads[i].len;
		size_t j = i + 1;
		uint8_t *seg;
		uint32_t len;

		while (j < nreads && reads[j].addr <= end) {
			if (reads[j].addr + reads[j].len > end)
				end = reads[j].addr + reads[j].len;
			j++;
		}
		len = (uint32_t)(end - start);
		seg = calloc(1, len);
		for (size_t k = i; k < j; k++)
			memcpy(seg + (reads[k].addr - start), reads[k].data, reads[k].len);
		fwrite(&start, 8, 1, f);
		fwrite(&len, 4, 1, f);
		fwrite(seg, 1, len, f);
		free(seg);
		total += len;
		nseg++;
		i = j;
	}
	fclose(f);
	fprintf(stderr, "pid %d: %zu reads, %zu segments, %zu bytes, %u lookups answered\n", target,
		nreads, nseg, total, ok);
	return 0;
}
