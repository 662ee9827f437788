/* recpool.h - memory memtrace keeps for the frozen copy's records across
 * the snapshots of a series (MT_AP_FREEZE_POOL).
 *
 * Each heap snapshot forks a fresh copy of the JVM, and the copy writes its
 * object and reference records into fresh pages: 280 MiB at 5 M objects,
 * whose zeroing and page faults were ~120 ms of the copy's ~300 ms of
 * records on this machine (a VM whose freed pages go back to its host).
 * A pool is a file (on memtrace's own tmpfs of 2 MiB pages where huge pages
 * are wanted, util_hugepages_wanted(); else a memfd) memtrace fills once (its pages resident and charged to
 * memtrace's memory cgroup, not to the JVM's) and passes with every walk
 * request; the copy maps it and writes its records there, and memtrace
 * reads them from its own mapping instead of out of the copy's memory. */
#ifndef MEMTRACE_RECPOOL_H
#define MEMTRACE_RECPOOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RECPOOL_RANGES 3

struct recpool {
	int fd;          /* the file: tmpfs of 2 MiB pages, or a memfd (close-on-exec) */
	char *map;       /* memtrace's shared mapping of all of it */
	uint64_t bytes;
	bool huge;       /* on memtrace's own tmpfs with huge=always (its pages 2 MiB
			  * where the kernel has them): recpool.c huge_file() */
	/* recpool_map_behind()'s thread and what it maps, in order */
	pthread_t mapper;
	bool mapping;
	int stop;        /* set (atomically) to end it early */
	uint64_t range[RECPOOL_RANGES][2];
	uint64_t mapped; /* bytes it mapped (read after recpool_map_wait()) */
};

/* recpool_bytes_for - a pool for the records of @objs objects and @refs
 * references (struct mt_ap_hobj, mt_ap_href), with room for a heap an
 * eighth larger. Pure. */
uint64_t recpool_bytes_for(uint64_t objs, uint64_t refs);

/*
 * recpool_new - a pool of @bytes (rounded up to pages), every page resident
 * (MADV_POPULATE_WRITE). Returns the pool (the caller's: recpool_free()) or
 * NULL with errno set.
 */
struct recpool *recpool_new(uint64_t bytes);
/*
 * recpool_grow - make @p @bytes long (rounded up to pages; no operation when
 * it is that long already), the new pages resident; its mapping may move.
 * Returns 0 or -errno (then @p is as it was).
 */
int recpool_grow(struct recpool *p, uint64_t bytes);
/*
 * recpool_new_sparse - a pool of @bytes (rounded up to pages) with no page
 * resident yet, for one take's records (MT_AP_FREEZE_INPLACE): its size a
 * bound the records cannot pass, address space only; recpool_alloc_range()
 * and recpool_fill_range() give and map its pages as the copy's mark says how
 * many it will need. Returns
 * the pool (the caller's: recpool_free()) or NULL with errno set.
 */
struct recpool *recpool_new_sparse(uint64_t bytes);
/*
 * recpool_fill_range - make @p's pages in [*@at, @end) resident, at most
 * @step bytes of them; *@at advances (rounded to pages). Returns 0 or -errno.
 */
int recpool_fill_range(struct recpool *p, uint64_t *at, uint64_t end, uint64_t step);
/*
 * recpool_map_range - map @p's pages in [*@at, @end) into memtrace's mapping,
 * at most @step bytes of them, by read faults: pages another process wrote
 * (the copy's records) come 16 to a fault (the kernel's fault-around), where
 * write faults map one each - 256 MiB the copy wrote: 21-26 ms against 62-68
 * here. A page the file does not have is made (zeroed), as a fault would.
 * *@at advances. Returns 0 or -errno.
 */
int recpool_map_range(struct recpool *p, uint64_t *at, uint64_t end, uint64_t step);
/*
 * recpool_alloc_range - give @p's file pages in [*@at, @end), at most @step
 * bytes of them (fallocate: zeroed pages in memtrace's memory cgroup, mapped
 * in no process yet - 3-4 times as fast as making them through a mapping,
 * which recpool_fill_range() then only maps); *@at advances. Returns 0 or
 * -errno (then use recpool_fill_range()).
 */
int recpool_alloc_range(struct recpool *p, uint64_t *at, uint64_t end, uint64_t step);
/*
 * recpool_map_behind - map @p's pages in @n (<= RECPOOL_RANGES) byte ranges
 * [@r[i][0], @r[i][1]) into memtrace's mapping, in that order, in a thread of
 * its own: after a take (MT_AP_FREEZE_INPLACE), so that the view reads the
 * records where its pages are mapped already while the copy's walk kept both
 * CPUs (snapmark.c fill()). A page the file does not have yet is made, as a
 * fault would; past the pool's end nothing is. Nothing for the caller to do but
 * recpool_map_wait() before the mapping moves or goes (recpool_grow() and
 * recpool_free() wait). Returns 0, or -errno (no thread: nothing mapped).
 */
int recpool_map_behind(struct recpool *p, const uint64_t r[][2], int n);
/* recpool_map_wait - end recpool_map_behind()'s thread (at once if @stop,
 * else when it has mapped all) and join it. No operation without one. */
void recpool_map_wait(struct recpool *p, bool stop);
/* recpool_contains - does [@addr, @addr + @len) lie in @p's mapping? */
bool recpool_contains(const struct recpool *p, const void *addr, size_t len);
/* recpool_free - unmap and close @p (after recpool_defer_frees(), leave it
 * to the process's end). No operation on NULL. */
void recpool_free(struct recpool *p);
/*
 * recpool_defer_frees - from now on, recpool_free() leaves pools mapped for
 * the process's end to free (lib/fastexit.h: after memtrace has ended):
 * for a command whose answer is out, or about to be. Unmapping a take's pool
 * and freeing its pages took 70 ms at 5 M objects (352 MiB of shared memory)
 * - as long as the view and its graph took to build.
 */
void recpool_defer_frees(void);

/*
 * recpool_read - @len bytes at @addr in the copy, which mapped @p at
 * @copy_at (@copy_bytes of it, as the copy says), into @buf from memtrace's
 * own mapping. Returns false (nothing read) when the range is not wholly in
 * the pool; the caller then reads the copy's memory.
 */
bool recpool_read(const struct recpool *p, uint64_t copy_at, uint64_t copy_bytes, uint64_t addr,
		  void *buf, size_t len);

#endif
