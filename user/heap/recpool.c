// SPDX-License-Identifier: GPL-2.0
/* recpool.c - memory kept for the frozen copy's records (see recpool.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/mount.h>

#include "heap/recpool.h"
#include "lib/util.h"
#include "memtrace/agent_proto.h"

#define PAGE 4096ull
#define ALIGN 64ull /* the copy starts each array on a cache line (heapmark.c) */

uint64_t recpool_bytes_for(uint64_t objs, uint64_t refs)
{
	uint64_t o = objs + objs / 8, r = refs + refs / 8 + refs / 16; /* the copy reserves
					* an extra sixteenth of references */

	return (o * sizeof(struct mt_ap_hobj) + r * sizeof(struct mt_ap_href) + 2 * ALIGN + PAGE -
		1) & ~(PAGE - 1);
}

/* A file on a tmpfs of memtrace's own whose pages are 2 MiB where the
 * kernel can (huge=always): a mount attached nowhere (fsopen, fsmount), gone
 * with the file's last fd, and a file with no name (O_TMPFILE). One fault, one
 * page-table entry and one TLB entry per 2 MiB: 600 MiB given and mapped
 * twice took 20-30 ms instead of 420-450 ms with a memfd's 4 KiB pages, on
 * this VM when the 2 MiB blocks were still backed by its host, 0.3-1.2 s
 * when the host had taken them back (pool_file()). Needs CAP_SYS_ADMIN (a
 * container without it, seccomp's default profile) and a kernel of 5.2 or
 * later: -errno, and the caller takes a memfd. The knob shmem_enabled
 * ("never" here) is for the kernel's own mount and not this one, "deny"
 * turns it off. */
static int huge_file(void)
{
	int fs = -1, mnt = -1, fd = -1, err;

	fs = (int)syscall(SYS_fsopen, "tmpfs", FSOPEN_CLOEXEC);
	if (fs < 0)
		return -errno;
	/* no block limit (memfd has none either: memtrace's memory cgroup and
	 * its own bound, heapmem.h, limit it) */
	if (syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "huge", "always", NULL, 0) ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "size", "0", NULL, 0) ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_SET_STRING, "mode", "0700", NULL, 0) ||
	    syscall(SYS_fsconfig, fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0))
		goto fail;
	mnt = (int)syscall(SYS_fsmount, fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOEXEC |
			   MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (mnt < 0)
		goto fail;
	fd = openat(mnt, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		goto fail;
	close(mnt);
	close(fs);
	return fd;

fail:
	err = -errno;
	if (mnt >= 0)
		close(mnt);
	close(fs);
	return err;
}

/* The pool's file: a huge-page tmpfs file where huge pages are wanted
 * (util_hugepages_wanted(): not on a VM whose balloon reports free pages,
 * where a fresh 2 MiB page is a host fault - a cold `heap --retained` on
 * Tomcat's 3.9 M objects walked in 634-656 ms against 417-440 in 4 KiB
 * pages, 8 s between runs; back to back, the huge pages still backed, 10 M
 * objects took 0.99 s against 1.08), else a memfd. MEMTRACE_POOL_PAGES=4k
 * or =2m decides instead (tests, side-by-side measures). -errno with none. */
static int pool_file(bool *huge)
{
	const char *env = getenv("MEMTRACE_POOL_PAGES");
	int fd = -1;

	*huge = false;
	if (env ? !strcmp(env, "2m") : util_hugepages_wanted(NULL))
		fd = huge_file();
	if (fd >= 0) {
		*huge = true;
		return fd;
	}
	fd = memfd_create("memtrace-records", MFD_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

struct recpool *recpool_new(uint64_t bytes)
{
	struct recpool *p;
	int err;

	bytes = (bytes + PAGE - 1) & ~(PAGE - 1);
	if (!bytes)
		return errno = EINVAL, NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->fd = pool_file(&p->huge);
	if (p->fd < 0) {
		errno = -p->fd;
		goto fail_free;
	}
	if (ftruncate(p->fd, (off_t)bytes))
		goto fail_close;
	p->map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	if (p->map == MAP_FAILED)
		goto fail_close;
	p->bytes = bytes;
	/* resident now, in memtrace's cgroup: the copy's writes then fault in
	 * no fresh page. A kernel without POPULATE_WRITE: the pages come with
	 * memtrace's first reads and the copy's writes, as without a pool. */
	err = util_populate(p->map, bytes);
	if (err) { /* ENOMEM: no room for it */
		munmap(p->map, bytes);
		close(p->fd);
		free(p);
		errno = -err;
		return NULL;
	}
	return p;

fail_close:
	err = errno;
	close(p->fd);
	errno = err;
fail_free:
	err = errno;
	free(p);
	errno = err;
	return NULL;
}

struct recpool *recpool_new_sparse(uint64_t bytes)
{
	struct recpool *p;
	int err;

	bytes = (bytes + PAGE - 1) & ~(PAGE - 1);
	if (!bytes)
		return errno = EINVAL, NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->fd = pool_file(&p->huge);
	if (p->fd < 0) {
		errno = -p->fd;
		goto fail;
	}
	/* a memfd (or tmpfs file) reserves no memory for its size (VM_NORESERVE): this is
	 * address space, in memtrace and in the copy that maps it */
	if (ftruncate(p->fd, (off_t)bytes))
		goto fail;
	p->map = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, p->fd, 0);
	if (p->map == MAP_FAILED)
		goto fail;
	p->bytes = bytes;
	return p;

fail:
	err = errno;
	if (p->fd >= 0)
		close(p->fd);
	free(p);
	errno = err;
	return NULL;
}

int recpool_fill_range(struct recpool *p, uint64_t *at, uint64_t end, uint64_t step)
{
	uint64_t a = *at & ~(PAGE - 1), e;
	int err;

	if (end > p->bytes)
		end = p->bytes;
	if (a >= end)
		return 0;
	e = a + step < end ? a + step : end;
	e = (e + PAGE - 1) & ~(PAGE - 1);
	if (e > p->bytes)
		e = p->bytes;
	err = util_populate(p->map + a, e - a);
	if (err)
		return err;
	*at = e;
	return 0;
}

int recpool_map_range(struct recpool *p, uint64_t *at, uint64_t end, uint64_t step)
{
	uint64_t a = *at & ~(PAGE - 1), e;

	if (end > p->bytes)
		end = p->bytes;
	if (a >= end)
		return 0;
	e = a + step < end ? a + step : end;
	e = (e + PAGE - 1) & ~(PAGE - 1);
	if (e > p->bytes)
		e = p->bytes;
	/* read faults: the kernel maps a written page's neighbours in the file
	 * with it (fault-around, 16 pages a fault), writable in this shared
	 * mapping; a write fault maps one page */
	if (util_populate_read(p->map + a, e - a))
		return recpool_fill_range(p, at, end, step);
	*at = e;
	return 0;
}

int recpool_alloc_range(struct recpool *p, uint64_t *at, uint64_t end, uint64_t step)
{
	uint64_t a = *at & ~(PAGE - 1), e;

	if (end > p->bytes)
		end = p->bytes;
	if (a >= end)
		return 0;
	e = a + step < end ? a + step : end;
	e = (e + PAGE - 1) & ~(PAGE - 1);
	if (e > p->bytes)
		e = p->bytes;
	if (fallocate(p->fd, 0, (off_t)a, (off_t)(e - a)))
		return -errno;
	*at = e;
	return 0;
}

#define MAP_CHUNK (4ull << 20) /* mapped per call: a stop is seen within ~1 ms */

/* The thread of recpool_map_behind(): each range in 4 MiB calls. */
static void *map_thread(void *arg)
{
	struct recpool *p = arg;
	uint64_t done = 0;

	for (int i = 0; i < RECPOOL_RANGES; i++) {
		uint64_t at = p->range[i][0], end = p->range[i][1];

		while (at < end && !__atomic_load_n(&p->stop, __ATOMIC_RELAXED)) {
			uint64_t was = at;

			if (recpool_map_range(p, &at, end, MAP_CHUNK))
				break; /* no memory: the view faults in what it reads */
			done += at - was;
		}
	}
	p->mapped = done;
	return NULL;
}

int recpool_map_behind(struct recpool *p, const uint64_t r[][2], int n)
{
	int err;

	if (!p || p->mapping || n > RECPOOL_RANGES)
		return -EINVAL;
	memset(p->range, 0, sizeof(p->range));
	for (int i = 0; i < n; i++) {
		p->range[i][0] = r[i][0] & ~(PAGE - 1);
		p->range[i][1] = r[i][1] < p->bytes ? r[i][1] : p->bytes;
	}
	p->stop = 0;
	p->mapped = 0;
	err = pthread_create(&p->mapper, NULL, map_thread, p);
	if (err)
		return -err;
	p->mapping = true;
	return 0;
}

void recpool_map_wait(struct recpool *p, bool stop)
{
	if (!p || !p->mapping)
		return;
	if (stop)
		__atomic_store_n(&p->stop, 1, __ATOMIC_RELAXED);
	pthread_join(p->mapper, NULL);
	p->mapping = false;
}

bool recpool_contains(const struct recpool *p, const void *addr, size_t len)
{
	uintptr_t a = (uintptr_t)addr, m;

	if (!p)
		return false;
	m = (uintptr_t)p->map;
	return a >= m && a - m <= p->bytes && len <= p->bytes - (a - m);
}

int recpool_grow(struct recpool *p, uint64_t bytes)
{
	void *m;
	int err;

	bytes = (bytes + PAGE - 1) & ~(PAGE - 1);
	if (bytes <= p->bytes)
		return 0;
	recpool_map_wait(p, true); /* the mapping may move */
	if (ftruncate(p->fd, (off_t)bytes))
		return -errno;
	m = mremap(p->map, p->bytes, bytes, MREMAP_MAYMOVE);
	if (m == MAP_FAILED) {
		err = -errno;
		goto shrink;
	}
	p->map = m;
	err = util_populate(p->map + p->bytes, bytes - p->bytes);
	if (!err) {
		p->bytes = bytes;
		return 0;
	}
	m = mremap(p->map, bytes, p->bytes, 0); /* ENOMEM: a shrink, in place */
	if (m != MAP_FAILED)
		p->map = m;
shrink:
	if (ftruncate(p->fd, (off_t)p->bytes)) /* frees the pages past it */
		err = -errno;
	return err;
}

#define DEFERRED 8 /* pools left to the process's end at most */

static bool defer;
static struct recpool *deferred[DEFERRED]; /* reachable: no leak */

void recpool_defer_frees(void)
{
	defer = true;
}

void recpool_free(struct recpool *p)
{
	if (!p)
		return;
	recpool_map_wait(p, true);
	for (size_t i = 0; defer && i < DEFERRED; i++)
		if (!deferred[i]) {
			deferred[i] = p;
			return;
		}
	munmap(p->map, p->bytes);
	close(p->fd);
	free(p);
}

bool recpool_read(const struct recpool *p, uint64_t copy_at, uint64_t copy_bytes, uint64_t addr,
		  void *buf, size_t len)
{
	uint64_t size;

	if (!p || !copy_at || addr < copy_at)
		return false;
	size = copy_bytes < p->bytes ? copy_bytes : p->bytes;
	if (addr - copy_at > size || len > size - (addr - copy_at))
		return false;
	memcpy(buf, p->map + (addr - copy_at), len);
	return true;
}
