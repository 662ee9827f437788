/* test_recpool - user/heap/recpool.c: the memory memtrace keeps for the
 * frozen copy's records. A real memfd, mapped in a forked child as the copy
 * maps it (its size the file's, MAP_SHARED): what the child writes memtrace
 * reads from its own mapping, at the child's addresses; reads outside the
 * part the child mapped are refused (the caller then reads the copy's own
 * memory); growing keeps what was written; what the child wrote is mapped
 * into memtrace by a thread beside the view (recpool_map_behind()). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "heap/recpool.h"
#include "memtrace/agent_proto.h"

static void test_bytes_for(void **state)
{
	uint64_t b = recpool_bytes_for(5000000, 5000000);
	uint64_t rec = 5000000ull * sizeof(struct mt_ap_hobj) + 5000000ull * sizeof(struct mt_ap_href);

	(void)state;
	/* the records, an eighth more, the copy's extra sixteenth of references */
	assert_true(b >= rec + rec / 8 + 5000000ull / 16 * sizeof(struct mt_ap_href));
	assert_true(b < rec + rec / 4);
	assert_int_equal(b % 4096, 0);
	assert_true(recpool_bytes_for(0, 0) > 0); /* the alignment's room, a page */
	assert_true(recpool_bytes_for(10, 0) < recpool_bytes_for(11, 0) + 1);
}

/* In a child, as the copy does: map @p's fd (its size the file's) and write
 * @n bytes of @v at @off; exit 0, or 1 when something failed. */
static pid_t child_writes(const struct recpool *p, uint64_t off, int v, size_t n, uint64_t *at)
{
	int fds[2];
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct stat st;
		char *m;
		uint64_t a;

		if (fstat(p->fd, &st))
			_exit(1);
		m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
		if (m == MAP_FAILED)
			_exit(1);
		memset(m + off, v, n);
		a = (uint64_t)(uintptr_t)m;
		if (write(fds[1], &a, sizeof(a)) != sizeof(a))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], at, sizeof(*at)), sizeof(*at));
	close(fds[0]);
	return pid;
}

static void wait_ok(pid_t pid)
{
	int st = 0;

	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

static void test_child_writes(void **state)
{
	struct recpool *p = recpool_new(3 * 4096 + 100);
	char buf[300], want[300];
	uint64_t at;

	(void)state;
	assert_non_null(p);
	assert_int_equal(p->bytes, 4 * 4096); /* whole pages */
	assert_true(p->fd >= 0);
	wait_ok(child_writes(p, 5000, 0x5c, 300, &at));
	/* the child's address, read from memtrace's mapping */
	memset(want, 0x5c, sizeof(want));
	assert_true(recpool_read(p, at, p->bytes, at + 5000, buf, sizeof(buf)));
	assert_memory_equal(buf, want, sizeof(want));
	/* the edges: the last byte in, one past refused */
	assert_true(recpool_read(p, at, p->bytes, at + p->bytes - 1, buf, 1));
	assert_false(recpool_read(p, at, p->bytes, at + p->bytes - 1, buf, 2));
	assert_false(recpool_read(p, at, p->bytes, at + p->bytes, buf, 1));
	assert_false(recpool_read(p, at, p->bytes, at - 1, buf, 1));
	/* the copy says it mapped less: only that much is the pool's */
	assert_false(recpool_read(p, at, 4096, at + 4000, buf, 200));
	assert_true(recpool_read(p, at, 4096, at + 3896, buf, 200));
	/* no pool, or not mapped in the copy: the copy's memory instead */
	assert_false(recpool_read(NULL, at, p->bytes, at, buf, 1));
	assert_false(recpool_read(p, 0, p->bytes, 16, buf, 1));
	assert_false(recpool_read(p, at, p->bytes, UINT64_MAX - 8, buf, 100));
	recpool_free(p);
}

static void test_grow(void **state)
{
	struct recpool *p = recpool_new(8192);
	char buf[64], want[64];
	uint64_t at;

	(void)state;
	assert_non_null(p);
	memset(p->map + 100, 0x11, 64);
	assert_int_equal(recpool_grow(p, 4096), 0); /* smaller: as it is */
	assert_int_equal(p->bytes, 8192);
	assert_int_equal(recpool_grow(p, 40000), 0);
	assert_int_equal(p->bytes, 40960);
	memset(want, 0x11, sizeof(want));
	assert_memory_equal(p->map + 100, want, sizeof(want)); /* kept */
	/* the next child maps all of it */
	wait_ok(child_writes(p, 40960 - 64, 0x22, 64, &at));
	memset(want, 0x22, sizeof(want));
	assert_true(recpool_read(p, at, p->bytes, at + 40960 - 64, buf, sizeof(buf)));
	assert_memory_equal(buf, want, sizeof(want));
	recpool_free(p);
	recpool_free(NULL);
}

static void test_refused(void **state)
{
	(void)state;
	errno = 0;
	assert_null(recpool_new(0));
	assert_int_equal(errno, EINVAL);
}

/* Bytes of @fd's file that have pages (its size may be far larger). */
static uint64_t resident(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return (uint64_t)st.st_blocks * 512;
}

/* A take's own pool (MT_AP_FREEZE_INPLACE): 1 GiB of address space and no
 * page until filled; filled as a prefix and as a range further on (where the
 * copy writes its references: mt_ap_inplace_refs()), a step at a time; what
 * a child writes there memtrace reads from its own mapping. */
static void test_sparse(void **state)
{
	struct recpool *p;
	uint64_t half, at = 0, refs;

	(void)state;
	setenv("MEMTRACE_POOL_PAGES", "4k", 1); /* a memfd: pages of 4 KiB */
	p = recpool_new_sparse(1ull << 30);
	unsetenv("MEMTRACE_POOL_PAGES");
	assert_non_null(p);
	assert_false(p->huge);
	assert_int_equal(p->bytes, 1ull << 30);
	assert_int_equal(resident(p->fd), 0);
	/* from the start, a step at a time (rounded to pages) */
	at = 0;
	assert_int_equal(recpool_fill_range(p, &at, 8u << 20, 4u << 20), 0);
	assert_int_equal(at, 4u << 20);
	assert_int_equal(resident(p->fd), 4u << 20);
	assert_int_equal(recpool_fill_range(p, &at, 6000000, 4u << 20), 0);
	assert_int_equal(at, (6000000 + 4095) & ~4095ull);
	assert_int_equal(recpool_fill_range(p, &at, 4096, 4u << 20), 0); /* behind: nothing */
	assert_int_equal(at, (6000000 + 4095) & ~4095ull);
	half = mt_ap_inplace_refs(p->bytes);
	assert_int_equal(half, 1ull << 29);
	refs = half;
	assert_int_equal(recpool_fill_range(p, &refs, half + (6u << 20), 4u << 20), 0);
	assert_int_equal(refs, half + (4u << 20));
	assert_int_equal(recpool_fill_range(p, &refs, half + (6u << 20), 4u << 20), 0);
	assert_int_equal(refs, half + (6u << 20));
	assert_int_equal(resident(p->fd), ((6000000 + 4095) & ~4095ull) + (6u << 20));
	/* pages given, not mapped (fallocate), a step at a time */
	at = half + (8u << 20);
	assert_int_equal(recpool_alloc_range(p, &at, half + (8u << 20) + 5000000, 4u << 20), 0);
	assert_int_equal(at, half + (12u << 20));
	assert_int_equal(recpool_alloc_range(p, &at, half + (8u << 20) + 5000000, 4u << 20), 0);
	assert_int_equal(at, half + (8u << 20) + ((5000000 + 4095) & ~4095ull));
	assert_int_equal(resident(p->fd), ((6000000 + 4095) & ~4095ull) + (6u << 20) +
					  ((5000000 + 4095) & ~4095ull));
	assert_int_equal(p->map[half + (9u << 20)], 0); /* zeroed, mapped on first touch */
	/* the child writes where memtrace filled, and past it (its own pages) */
	wait_ok(child_writes(p, half + 100, 0x33, 64, &at));
	wait_ok(child_writes(p, half + (100u << 20), 0x44, 64, &at));
	assert_int_equal(p->map[half + 100], 0x33);
	assert_int_equal(p->map[half + (100u << 20) + 63], 0x44);
	assert_true(recpool_contains(p, p->map + half, 64));
	assert_true(recpool_contains(p, p->map + p->bytes - 8, 8));
	assert_false(recpool_contains(p, p->map + p->bytes - 8, 9));
	assert_false(recpool_contains(p, p->map - 1, 1));
	assert_false(recpool_contains(NULL, p->map, 1));
	recpool_free(p);
	(void)at;
}

/* Minor faults this process took so far. */
static long minor_faults(void)
{
	struct rusage r;

	assert_int_equal(getrusage(RUSAGE_SELF, &r), 0);
	return r.ru_minflt;
}

/* Read a byte of every page of [@off, @off + @n) in @p's mapping; their sum.
 * Not instrumented: ASan's checks would fault in shadow pages. */
__attribute__((no_sanitize_address)) static unsigned touch(const struct recpool *p, uint64_t off, uint64_t n)
{
	unsigned sum = 0;

	for (uint64_t a = off; a < off + n; a += 4096)
		sum += (unsigned char)((volatile char *)p->map)[a];
	return sum;
}

/* Write @v to a byte of every page of [@off, @off + @n) in @p's mapping. Not
 * instrumented, as touch(). */
__attribute__((no_sanitize_address)) static void scribble(const struct recpool *p, uint64_t off,
							  uint64_t n, char v)
{
	for (uint64_t a = off; a < off + n; a += 4096)
		((volatile char *)p->map)[a] = v;
}

/* The byte at @off of @p's file, read through the file, not the mapping. */
static int file_byte(const struct recpool *p, uint64_t off)
{
	unsigned char c = 0;

	assert_int_equal(pread(p->fd, &c, 1, (off_t)off), 1);
	return c;
}

/* recpool_map_range(): the pages a child wrote come into memtrace's mapping
 * by read faults, several to a fault (the kernel's fault-around: 16 with
 * its default 64 KiB), where write faults took one each; holes are made. */
static void test_map_range(void **state)
{
	struct recpool *p;
	uint64_t at;
	long f0, f;

	(void)state;
	setenv("MEMTRACE_POOL_PAGES", "4k", 1);
	p = recpool_new_sparse(64u << 20);
	unsetenv("MEMTRACE_POOL_PAGES");
	assert_non_null(p);
	wait_ok(child_writes(p, 0, 0x11, 8u << 20, &at));
	f0 = minor_faults();
	at = 0;
	assert_int_equal(recpool_map_range(p, &at, 8u << 20, 16u << 20), 0);
	assert_int_equal(at, 8u << 20);
	f = minor_faults() - f0;
	print_message("  8 MiB the child wrote (2048 pages): %ld faults to map\n", f);
	assert_true(f <= 2048 / 4);
	f0 = minor_faults();
	assert_int_equal(touch(p, 0, 8u << 20), 0x11 * (8u << 20) / 4096);
	scribble(p, 0, 8u << 20, 0x12);
	assert_int_equal(minor_faults(), f0);
	assert_int_equal(file_byte(p, 5u << 20), 0x12);
	/* a hole: made and zeroed, a step at a time */
	at = 32u << 20;
	assert_int_equal(recpool_map_range(p, &at, (32u << 20) + 5000, 4096), 0);
	assert_int_equal(at, (32u << 20) + 4096);
	assert_int_equal(recpool_map_range(p, &at, (32u << 20) + 5000, 4096), 0);
	assert_int_equal(at, (32u << 20) + 8192);
	assert_int_equal(recpool_map_range(p, &at, 4096, 4096), 0); /* behind: nothing */
	assert_int_equal(at, (32u << 20) + 8192);
	f0 = minor_faults();
	assert_int_equal(touch(p, 32u << 20, 8192), 0);
	assert_int_equal(minor_faults(), f0);
	recpool_free(p);
}

/* recpool_map_behind(): what a child wrote, mapped into memtrace's mapping by
 * a thread of its own, range by range - read then without a fault; ranges
 * past the pool's end clipped; a stop ends the thread early; a pool freed
 * while one maps waits for it. */
static void test_map_behind(void **state)
{
	struct recpool *p;
	uint64_t at, half;
	long f0;

	(void)state;
	setenv("MEMTRACE_POOL_PAGES", "4k", 1);
	p = recpool_new_sparse(64u << 20);
	unsetenv("MEMTRACE_POOL_PAGES");
	assert_non_null(p);
	half = mt_ap_inplace_refs(p->bytes);
	/* the copy's records: objects from the start, references from the middle */
	wait_ok(child_writes(p, 0, 0x11, 3u << 20, &at));
	wait_ok(child_writes(p, half, 0x22, (5u << 20) + 100, &at));
	{
		const uint64_t r[][2] = { { half - 8192, half }, { half, half + (5u << 20) + 100 },
					  { 100, 3u << 20 } };

		assert_int_equal(recpool_map_behind(p, r, 3), 0);
		assert_int_equal(recpool_map_behind(p, r, 3), -EINVAL); /* one at a time */
		recpool_map_wait(p, false);
	}
	/* every page of the three ranges, each rounded out to pages */
	assert_int_equal(p->mapped, 8192 + (5u << 20) + 4096 + (3u << 20));
	f0 = minor_faults();
	assert_int_equal(touch(p, 0, 3u << 20), 0x11 * (3u << 20) / 4096);
	assert_int_equal(touch(p, half, (5u << 20) + 100), 0x22 * ((5u << 20) / 4096 + 1));
	assert_int_equal(touch(p, half - 8192, 8192), 0); /* made, zeroed */
	assert_int_equal(minor_faults(), f0);
	/* mapped by read faults, yet writable: the view writes there, into
	 * the file, without a fault */
	scribble(p, 0, 3u << 20, 0x55);
	scribble(p, half - 8192, 8192, 0x66);
	assert_int_equal(minor_faults(), f0);
	assert_int_equal(file_byte(p, 3u << 20 >> 1), 0x55);
	assert_int_equal(file_byte(p, half - 4096), 0x66);
	recpool_map_wait(p, false); /* none running: nothing */
	/* past the end: clipped to the pool */
	{
		const uint64_t r[][2] = { { p->bytes - 4096, p->bytes + (1u << 20) } };

		assert_int_equal(recpool_map_behind(p, r, 1), 0);
		recpool_map_wait(p, false);
		assert_int_equal(p->mapped, 4096);
	}
	/* stopped at once: at most what it mapped before it saw the stop */
	{
		const uint64_t r[][2] = { { 0, p->bytes } };

		assert_int_equal(recpool_map_behind(p, r, 1), 0);
		recpool_map_wait(p, true);
		assert_false(p->mapping);
		assert_true(p->mapped <= p->bytes);
		assert_int_equal(p->mapped % 4096, 0);
		assert_int_equal(recpool_map_behind(p, r, 1), 0); /* and again; freed while it maps */
	}
	recpool_free(p);
	recpool_map_wait(NULL, true);
	assert_int_equal(recpool_map_behind(NULL, NULL, 0), -EINVAL);
}

/* The pool's kB mapped by page-middle-directory entries (2 MiB pages) in
 * this process, from /proc/self/smaps_rollup. */
static uint64_t pmd_mapped_kb(void)
{
	char line[256];
	uint64_t kb = 0;
	FILE *f = fopen("/proc/self/smaps_rollup", "r");

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "ShmemPmdMapped: %" SCNu64, &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/* As root (CAP_SYS_ADMIN): the pool is a file on memtrace's own tmpfs with
 * huge=always. Its pages are given 2 MiB at a time, a child writes into it
 * as the copy does and memtrace reads that, and memtrace's mapping of it
 * takes 2 MiB entries where the kernel had 2 MiB pages free. */
static void test_huge(void **state)
{
	struct recpool *p;
	uint64_t at = 0, child_at = 0, before;

	(void)state;
	setenv("MEMTRACE_POOL_PAGES", "2m", 1); /* whatever this machine would take */
	p = recpool_new_sparse(64u << 20);
	unsetenv("MEMTRACE_POOL_PAGES");
	assert_non_null(p);
	if (!p->huge) {
		recpool_free(p);
		skip(); /* no CAP_SYS_ADMIN here (fsopen refused): a memfd, test_sparse's */
	}
	before = pmd_mapped_kb();
	assert_int_equal(recpool_alloc_range(p, &at, 5u << 20, 8u << 20), 0);
	assert_int_equal(at, 5u << 20);
	/* 5 MiB given: three pages of 2 MiB (or 4 KiB ones where none was free) */
	assert_true(resident(p->fd) >= (5u << 20) && resident(p->fd) <= (6u << 20));
	at = 0;
	assert_int_equal(recpool_fill_range(p, &at, 4u << 20, 8u << 20), 0);
	assert_int_equal(p->map[(3u << 20) + 5], 0);
	wait_ok(child_writes(p, (3u << 20) + 5, 0x5a, 100, &child_at));
	assert_int_equal(p->map[(3u << 20) + 5], 0x5a);
	assert_int_equal(p->map[(3u << 20) + 104], 0x5a);
	if (pmd_mapped_kb() == before)
		print_message("no 2 MiB page was free: 4 KiB pages (shmem_enabled \"deny\"?)\n");
	else
		assert_true(pmd_mapped_kb() >= before + 2048);
	recpool_free(p);
}

/* After recpool_defer_frees() a freed pool stays mapped for the process's
 * end (the last test: the switch is for the rest of the process). */
static void test_defer(void **state)
{
	struct recpool *p = recpool_new_sparse(1u << 20);
	char *m;

	(void)state;
	assert_non_null(p);
	m = p->map;
	m[100] = 7;
	recpool_defer_frees();
	recpool_free(p);
	assert_int_equal(m[100], 7); /* still mapped */
	recpool_free(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_bytes_for),
		cmocka_unit_test(test_child_writes),
		cmocka_unit_test(test_grow),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_sparse),
		cmocka_unit_test(test_huge),
		cmocka_unit_test(test_map_behind),
		cmocka_unit_test(test_map_range),
		cmocka_unit_test(test_defer), /* last: for the rest of the process */
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
