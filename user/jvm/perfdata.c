// SPDX-License-Identifier: GPL-2.0
/* perfdata.c - a JVM's hsperfdata counters, read-only (see perfdata.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm/perfdata.h"
#include "jvm/proc.h"

#define PD_MAGIC       0xcafec0c0u
#define PD_PROLOGUE    32   /* bytes: magic 4, order/major/minor/accessible 4, used 4, overflow 4, stamp 8, entry offset 4, entries 4 */
#define PD_ENTRY_HDR   20   /* entry length 4, name offset 4, vector length 4, type/flags/units/variability 4, data offset 4 */
#define PD_MAX_BYTES   (16u << 20)

struct mt_perfdata {
	const unsigned char *map;
	size_t len;
	uint32_t entry_off, nentries;
};

static uint32_t rd32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Check the prologue and that every entry lies inside the file. 0 or -EINVAL. */
static int check_layout(struct mt_perfdata *pd, char *why, size_t n)
{
	const unsigned char *m = pd->map;
	uint32_t off;

	if (pd->len < PD_PROLOGUE || ((uint32_t)m[0] << 24 | (uint32_t)m[1] << 16 |
				      (uint32_t)m[2] << 8 | m[3]) != PD_MAGIC) {
		snprintf(why, n, "not an hsperfdata file (bad magic)");
		return -EINVAL;
	}
	if (m[4] != 1) { /* 1: little endian, what this build reads */
		snprintf(why, n, "hsperfdata in big-endian byte order");
		return -EINVAL;
	}
	if (m[5] != 2) {
		snprintf(why, n, "hsperfdata version %u.%u (2.x expected)", m[5], m[6]);
		return -EINVAL;
	}
	pd->entry_off = rd32(m + 24);
	pd->nentries = rd32(m + 28);
	off = pd->entry_off;
	for (uint32_t i = 0; i < pd->nentries; i++) {
		uint32_t elen, name;

		if (off > pd->len || pd->len - off < PD_ENTRY_HDR)
			goto bad;
		elen = rd32(m + off);
		name = rd32(m + off + 4);
		if (elen < PD_ENTRY_HDR || elen > pd->len - off || name >= elen ||
		    !memchr(m + off + name, '\0', elen - name))
			goto bad;
		off += elen;
	}
	return 0;
bad:
	snprintf(why, n, "hsperfdata entry table out of bounds");
	return -EINVAL;
}

struct mt_perfdata *perfdata_open_file(const char *path, char *why, size_t n)
{
	struct mt_perfdata *pd;
	struct stat st;
	void *map;
	int fd, err;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		err = errno;
		snprintf(why, n, "cannot open %s: %s", path, strerror(err));
		errno = err;
		return NULL;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size < PD_PROLOGUE ||
	    (uint64_t)st.st_size > PD_MAX_BYTES) {
		close(fd);
		snprintf(why, n, "%s is not an hsperfdata file (size)", path);
		errno = EINVAL;
		return NULL;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	err = errno;
	close(fd);
	if (map == MAP_FAILED) {
		snprintf(why, n, "cannot map %s: %s", path, strerror(err));
		errno = err;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		munmap(map, (size_t)st.st_size);
		errno = ENOMEM;
		return NULL;
	}
	pd->map = map;
	pd->len = (size_t)st.st_size;
	if (check_layout(pd, why, n)) {
		perfdata_free(pd);
		errno = EINVAL;
		return NULL;
	}
	return pd;
}

struct mt_perfdata *perfdata_open(const struct mt_proc *p, char *why, size_t n)
{
	char dir[128], path[512];
	struct dirent *d;
	struct stat st;
	DIR *dh;

	snprintf(dir, sizeof(dir), "%s/tmp", p->root);
	dh = opendir(dir);
	if (!dh) {
		int err = errno;

		snprintf(why, n, "cannot read %s: %s", dir, strerror(err));
		errno = err;
		return NULL;
	}
	/* /tmp/hsperfdata_<user>/<nspid>, the file owned by the JVM's uid */
	while ((d = readdir(dh))) {
		if (strncmp(d->d_name, "hsperfdata_", 11))
			continue;
		snprintf(path, sizeof(path), "%s/%s/%d", dir, d->d_name, p->nspid);
		if (lstat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == p->uid) {
			closedir(dh);
			return perfdata_open_file(path, why, n);
		}
	}
	closedir(dh);
	snprintf(why, n, "no hsperfdata file for JVM %d (run with -XX:-UsePerfData?)", p->pid);
	errno = ENOENT;
	return NULL;
}

void perfdata_free(struct mt_perfdata *pd)
{
	if (!pd)
		return;
	if (pd->map)
		munmap((void *)pd->map, pd->len);
	free(pd);
}

int perfdata_long(const struct mt_perfdata *pd, const char *name, int64_t *v)
{
	uint32_t off = pd->entry_off;

	for (uint32_t i = 0; i < pd->nentries; i++) {
		const unsigned char *e = pd->map + off;
		uint32_t elen = rd32(e), data = rd32(e + 16);

		/* type 'J', a scalar (vector length 0), the 8 bytes inside the entry */
		if (!strcmp((const char *)e + rd32(e + 4), name) && e[12] == 'J' &&
		    rd32(e + 8) == 0 && data >= PD_ENTRY_HDR && data <= elen - 8) {
			/* the JVM updates it in place: one aligned 8-byte load */
			if (((uintptr_t)(e + data) & 7) == 0)
				*v = __atomic_load_n((const int64_t *)(const void *)(e + data),
						     __ATOMIC_RELAXED);
			else
				memcpy(v, e + data, 8);
			return 0;
		}
		off += elen;
	}
	return -ENOENT;
}

int perfdata_safepoints(const struct mt_perfdata *pd, struct mt_safepoints *s)
{
	int64_t freq, count, ticks;

	if (perfdata_long(pd, "sun.os.hrt.frequency", &freq) || freq <= 0 ||
	    perfdata_long(pd, "sun.rt.safepoints", &count) ||
	    perfdata_long(pd, "sun.rt.safepointTime", &ticks))
		return -ENOENT;
	s->count = (uint64_t)count;
	s->time_ns = (uint64_t)((long double)ticks * 1e9L / (long double)freq);
	return 0;
}

void perfdata_window_begin(const struct mt_perfdata *pd, struct mt_sp_window *w)
{
	w->ok = pd && !perfdata_safepoints(pd, &w->at);
}

int perfdata_window_end(const struct mt_perfdata *pd, const struct mt_sp_window *w,
			uint64_t *ns)
{
	struct mt_safepoints now;

	if (!w->ok || perfdata_safepoints(pd, &now) || now.count < w->at.count ||
	    now.time_ns < w->at.time_ns)
		return -1;
	*ns = now.time_ns - w->at.time_ns;
	return now.count - w->at.count > 1000000 ? -1 : (int)(now.count - w->at.count);
}
