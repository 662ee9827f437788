// SPDX-License-Identifier: GPL-2.0
/* agentfile.c - place the agent library inside the target's mount namespace. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "agentctl/agentfile.h"
#include "jvm/attach.h"
#include "lib/util.h"

void agentfile_name(char *out, size_t n)
{
	snprintf(out, n, "libmemtrace-agent-%s.so", MT_VERSION);
}

int agentfile_find(char *out, size_t n)
{
	const char *env = getenv("MEMTRACE_AGENT");
	char exe[PATH_MAX];
	ssize_t l;

	if (env && *env) {
		if (access(env, R_OK)) {
			p_err("MEMTRACE_AGENT=%s: %s", env, strerror(errno));
			return -ENOENT;
		}
		snprintf(out, n, "%s", env);
		return 0;
	}
	l = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (l > 0) {
		char *slash;

		exe[l] = '\0';
		slash = strrchr(exe, '/');
		if (slash) {
			*slash = '\0';
			snprintf(out, n, "%s/%s", exe, MT_AGENT_SO);
			if (!access(out, R_OK))
				return 0;
			/* `make install`: PREFIX/bin/memtrace, PREFIX/lib/memtrace/ */
			snprintf(out, n, "%s/../lib/memtrace/%s", exe, MT_AGENT_SO);
			if (!access(out, R_OK))
				return 0;
		}
	}
	snprintf(out, n, "build/%s", MT_AGENT_SO);
	if (!access(out, R_OK))
		return 0;
	p_err("cannot find %s next to the memtrace binary (%s), in ../lib/memtrace/ from it, "
	      "nor in ./build; build it with `make` (or `make install`) or set "
	      "MEMTRACE_AGENT=/path/to/%s", MT_AGENT_SO, l > 0 ? exe : "?", MT_AGENT_SO);
	return -ENOENT;
}

// Open (creating if absent) the private directory .memtrace-<uid> in @basefd.
static int open_private_dir(const struct mt_proc *p, int basefd, const char *dir,
			    const char *where, bool *created)
{
	struct stat st;
	int fd;

	*created = false;
	if (!mkdirat(basefd, dir, 0700))
		*created = true;
	else if (errno != EEXIST)
		return -errno;
	fd = openat(basefd, dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		if (err == -ELOOP || err == -ENOTDIR)
			p_err("%s/%s of JVM %d is not a directory (a planted symlink?): refusing "
			      "it; remove it after checking who created it", where, dir, p->pid);
		return err;
	}
	if (*created && fchown(fd, p->uid, p->gid) && geteuid() == 0) {
		int err = -errno;

		/* without CAP_CHOWN: say so, and leave no root-owned directory
		 * behind that every later attach would refuse */
		p_err("cannot give %s/%s in JVM %d's namespace to its uid %u: %s (memtrace needs "
		      "CAP_CHOWN to place the agent for another uid)", where, dir, p->pid,
		      (unsigned)p->uid, strerror(-err));
		close(fd);
		unlinkat(basefd, dir, AT_REMOVEDIR);
		return err;
	}
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (st.st_uid != p->uid) {
		p_err("%s/%s of JVM %d is owned by uid %u, not by the JVM's uid %u: refusing "
		      "it; remove it after checking who created it", where, dir, p->pid,
		      (unsigned)st.st_uid, (unsigned)p->uid);
		close(fd);
		return -EPERM;
	}
	if ((st.st_mode & 077) && fchmod(fd, 0700)) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

// Lock the agent directory (bounded wait). -ESTALE: it was removed meanwhile.
static int lock_dir(int dirfd)
{
	struct stat st;

	for (int i = 0; i < 300; i++) { /* 15 s */
		if (!flock(dirfd, LOCK_EX | LOCK_NB)) {
			if (fstat(dirfd, &st))
				return -errno;
			return st.st_nlink == 0 ? -ESTALE : 0;
		}
		if (errno != EWOULDBLOCK)
			return -errno;
		usleep(50000);
	}
	return -ETIMEDOUT;
}

// Copy @src into a new file @name in @dirfd (O_EXCL|O_NOFOLLOW), owned by the target.
static int copy_file(const struct mt_proc *p, const char *src, int dirfd, const char *name,
		     const char *where)
{
	char buf[65536];
	int in, out, err = 0;
	struct stat st;

	out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0500);
	if (out < 0 && errno == EEXIST) {
		if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
			return -errno;
		if (!S_ISREG(st.st_mode)) {
			p_err("%s/%s in JVM %d's namespace exists and is not a regular file (a "
			      "planted symlink?): refusing it without following it; remove it after "
			      "checking who created it", where, name, p->pid);
			return -EEXIST;
		}
		/* A copy left by an interrupted memtrace: replace it. */
		if (unlinkat(dirfd, name, 0))
			return -errno;
		out = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			     0500);
	}
	if (out < 0)
		return -errno;
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		err = -errno;
		goto fail;
	}
	for (;;) {
		ssize_t r = read(in, buf, sizeof(buf)), w = 0;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		if (r == 0)
			break;
		while (w < r) {
			ssize_t k = write(out, buf + w, (size_t)(r - w));

			if (k < 0 && errno == EINTR)
				continue;
			if (k < 0) {
				err = -errno;
				break;
			}
			w += k;
		}
		if (err)
			break;
	}
	close(in);
	if (!err && fchown(out, p->uid, p->gid) && geteuid() == 0)
		err = -errno;
fail:
	close(out);
	if (err)
		unlinkat(dirfd, name, 0);
	return err;
}

int agentfile_place(const struct mt_proc *p, const char *src, struct mt_agentfile *af)
{
	static const char *const bases[] = { "/tmp", "/dev/shm" };
	int err = -ENOENT;

	int retries = 0;

	memset(af, 0, sizeof(*af));
	af->basefd = af->dirfd = -1;
	agentfile_name(af->name, sizeof(af->name));
	snprintf(af->dir, sizeof(af->dir), ".memtrace-%u", (unsigned)p->uid);
	for (size_t i = 0; i < MT_ARRAY_SIZE(bases); i++) {
		const char *base = bases[i];
		struct statvfs vfs;
		int basefd, dirfd;
		bool created;

		basefd = attach_open_dir(p, base);
		if (basefd < 0) {
			err = basefd;
			p_warn("JVM %d: cannot open its %s: %s", p->pid, base, strerror(-err));
			continue;
		}
		if (!fstatvfs(basefd, &vfs) && (vfs.f_flag & (ST_RDONLY | ST_NOEXEC))) {
			p_warn("JVM %d: its %s is mounted %s; trying the next place for the agent",
			       p->pid, base, (vfs.f_flag & ST_RDONLY) ? "read-only" : "noexec");
			close(basefd);
			err = -EROFS;
			continue;
		}
		dirfd = open_private_dir(p, basefd, af->dir, base, &created);
		if (dirfd >= 0) {
			/* Two memtrace processes loading into one JVM at once (serve and a
			 * command) would remove each other's copy: the directory's lock is
			 * held from placing to removing. A directory removed by the
			 * previous holder meanwhile is made again. */
			int lerr = lock_dir(dirfd);

			if (lerr == -ESTALE && retries++ < 50) {
				close(dirfd);
				close(basefd);
				i--;
				continue;
			}
			if (lerr) {
				p_err("JVM %d: %s/%s stays locked by another memtrace (%s); try again "
				      "when it has finished", p->pid, base, af->dir, strerror(-lerr));
				close(dirfd);
				close(basefd);
				return lerr;
			}
		}
		if (dirfd < 0) {
			err = dirfd;
			close(basefd);
			if (err == -ELOOP || err == -ENOTDIR || err == -EPERM)
				return err; /* a planted object: stop, do not look elsewhere */
			p_warn("JVM %d: cannot create %s/%s: %s", p->pid, base, af->dir,
			       strerror(-err));
			continue;
		}
		err = copy_file(p, src, dirfd, af->name, base);
		if (err) {
			if (err != -EEXIST)
				p_err("cannot copy %s into JVM %d's %s/%s: %s", src, p->pid, base,
				      af->dir, strerror(-err));
			if (created)
				unlinkat(basefd, af->dir, AT_REMOVEDIR);
			close(dirfd);
			close(basefd);
			return err;
		}
		if (i > 0)
			p_info("JVM %d: placed the agent in %s (its /tmp was not usable)", p->pid,
			       base);
		af->basefd = basefd;
		af->dirfd = dirfd;
		af->created_dir = created;
		snprintf(af->path, sizeof(af->path), "%s/%s/%s", base, af->dir, af->name);
		return 0;
	}
	p_err("JVM %d has no writable, executable /tmp or /dev/shm to place the agent in "
	      "(last error: %s); mount one, or start the JVM with -agentpath", p->pid,
	      strerror(-err));
	return err;
}

void agentfile_remove(struct mt_agentfile *af)
{
	if (af->dirfd < 0)
		return;
	unlinkat(af->dirfd, af->name, 0);
	/* Only an empty directory goes; ENOTEMPTY means someone else uses it.
	 * Still under the lock: a waiter sees the removal and makes it again. */
	if (af->created_dir)
		unlinkat(af->basefd, af->dir, AT_REMOVEDIR);
	close(af->dirfd); /* releases the lock */
	close(af->basefd);
	af->dirfd = af->basefd = -1;
}

int agentfile_mapped(int pid, char *path, size_t n)
{
	char mpath[64], line[PATH_MAX + 128];
	FILE *f;
	int found = 0;

	snprintf(mpath, sizeof(mpath), "/proc/%d/maps", pid);
	f = fopen(mpath, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *name = strchr(line, '/');

		if (!name || !strstr(name, "/libmemtrace-agent"))
			continue;
		name[strcspn(name, "\n")] = '\0';
		/* the copy is removed after the load: the kernel says so */
		if (strlen(name) > 10 && !strcmp(name + strlen(name) - 10, " (deleted)"))
			name[strlen(name) - 10] = '\0';
		snprintf(path, n, "%s", name);
		found = 1;
		break;
	}
	fclose(f);
	return found;
}
