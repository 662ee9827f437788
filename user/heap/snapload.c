// SPDX-License-Identifier: GPL-2.0
/* snapload.c - a heap file into a snapshot: mapped, then read by the reader
 * its magic names (see snapload.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heap/hprof.h"
#include "heap/snapfile.h"
#include "heap/snapload.h"

int snapload_file(const char *path, struct mt_snapshot *s, char *why, size_t wn)
{
	char reason[160];
	struct stat st;
	void *map;
	int fd, err;

	snapshot_init(s);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		snprintf(why, wn, "cannot open %s: %s", path, strerror(-err));
		return err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, wn, "%s is not a regular file", path);
		err = -EINVAL;
		goto cleanup;
	}
	if (st.st_size == 0) {
		snprintf(why, wn, "%s is empty: not a memtrace snapshot or an HPROF dump", path);
		err = -EINVAL;
		goto cleanup;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		err = -errno;
		snprintf(why, wn, "cannot map %s: %s", path, strerror(-err));
		goto cleanup;
	}
	if (hprof_is(map, (size_t)st.st_size))
		err = hprof_read_mem(map, (size_t)st.st_size, s, reason, sizeof(reason));
	else
		err = snapfile_read_mem(map, (size_t)st.st_size, s, reason, sizeof(reason));
	munmap(map, (size_t)st.st_size);
	if (err)
		snprintf(why, wn, "%s: %s", path, reason);
cleanup:
	close(fd);
	return err;
}
