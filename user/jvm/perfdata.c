// SPDX-License-Identifier: GPL-2.0
/* perfdata.c - a JVM's hsperfdata counters, read-only (see perfdata.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm/perfdata.h"
#include "jvm/proc.h"

#define PD_MAGIC       0xcafec0c0u
#define PD_PROLOGUE    32   /* bytes: magic 4, order/major/minor/accessible 4, used 4, overflow 4, stamp 8, entry offset 4, entries 4 */
#define PD_ENTRY_HDR   20   /* entry length 4, name offset 4, vector length 4, type/flags/units/variability 4, data offset 4 */
#define PD_MAX_BYTES   (16u << 20)

/*
 * The file belongs to the JVM's user, and memtrace often runs as root: what
 * is in it is not trusted after it was checked. So it is not mapped (a
 * mapping of a file its owner rewrites or cuts is an out-of-bounds read or a
 * SIGBUS away): the entry table is copied and checked once, at open, and a
 * counter's 8 bytes are read from the file at the offset that copy gives,
 * each time anew.
 */
struct mt_perfdata {
	int fd;
	unsigned char *map;       /* the file as it was at open (checked) */
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
	ssize_t got;
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
	pd = calloc(1, sizeof(*pd));
	if (pd) {
		pd->fd = -1;
		pd->map = malloc((size_t)st.st_size);
	}
	if (!pd || !pd->map) {
		free(pd);
		close(fd);
		snprintf(why, n, "out of memory");
		errno = ENOMEM;
		return NULL;
	}
	pd->fd = fd;
	got = pread(fd, pd->map, (size_t)st.st_size, 0);
	pd->len = got > 0 ? (size_t)got : 0;
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
	if (pd->fd >= 0)
		close(pd->fd);
	free(pd->map);
	free(pd);
}

/* The 8 bytes at file offset @off as they are now: the JVM updates them in
 * place, so two reads that agree (a copy is not one atomic load). 0 or
 * -ENOENT (the file is shorter now). */
static int read_now(const struct mt_perfdata *pd, uint64_t off, int64_t *v)
{
	int64_t a, b;

	if (pread(pd->fd, &a, 8, (off_t)off) != 8)
		return -ENOENT;
	for (int i = 0; i < 4; i++, a = b) {
		if (pread(pd->fd, &b, 8, (off_t)off) != 8)
			return -ENOENT;
		if (a == b)
			break;
	}
	*v = a;
	return 0;
}

int perfdata_long(const struct mt_perfdata *pd, const char *name, int64_t *v)
{
	uint32_t off = pd->entry_off;

	/* the table as checked at open: every entry inside the copy */
	for (uint32_t i = 0; i < pd->nentries; i++) {
		const unsigned char *e = pd->map + off;
		uint32_t elen = rd32(e), data = rd32(e + 16);

		/* type 'J', a scalar (vector length 0), the 8 bytes inside the entry */
		if (!strcmp((const char *)e + rd32(e + 4), name) && e[12] == 'J' &&
		    rd32(e + 8) == 0 && data >= PD_ENTRY_HDR && data <= elen - 8)
			return read_now(pd, (uint64_t)off + data, v);
		off += elen;
	}
	return -ENOENT;
}

/* @t ticks of a @freq Hz clock in ns: 0 for a negative count, UINT64_MAX
 * past it (a corrupt file's values: the conversion is undefined out of range). */
static uint64_t ticks_ns(int64_t t, int64_t freq)
{
	long double ns;

	if (t <= 0)
		return 0;
	ns = (long double)t * 1e9L / (long double)freq;
	return ns >= 18446744073709551615.0L ? UINT64_MAX : (uint64_t)ns;
}

int perfdata_safepoints(const struct mt_perfdata *pd, struct mt_safepoints *s)
{
	int64_t freq, count, sync, rest;

	if (perfdata_long(pd, "sun.os.hrt.frequency", &freq) || freq <= 0 ||
	    perfdata_long(pd, "sun.rt.safepoints", &count) ||
	    perfdata_long(pd, "sun.rt.safepointSyncTime", &sync) ||
	    perfdata_long(pd, "sun.rt.safepointTime", &rest))
		return -ENOENT;
	s->count = (uint64_t)count;
	s->sync_ns = ticks_ns(sync, freq);
	s->rest_ns = ticks_ns(rest, freq);
	s->time_ns = s->sync_ns > UINT64_MAX - s->rest_ns ? UINT64_MAX : s->sync_ns + s->rest_ns;
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

	for (int waited = 0;; waited++) {
		if (!w->ok || perfdata_safepoints(pd, &now) || now.count < w->at.count ||
		    now.sync_ns < w->at.sync_ns || now.rest_ns < w->at.rest_ns)
			return -1;
		/* counted at its begin, its time added at its end: not ended yet */
		if (now.count == w->at.count || now.rest_ns != w->at.rest_ns)
			break;
		if (waited == PERFDATA_SETTLE_MS)
			return -1;
		usleep(1000);
	}
	*ns = now.time_ns - w->at.time_ns;
	return now.count - w->at.count > 1000000 ? -1 : (int)(now.count - w->at.count);
}
