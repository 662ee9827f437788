/* agentfile.h - put memtrace's JVMTI agent library where the target JVM can
 * dlopen it: inside the target's mount namespace, safely.
 *
 * The copy lives in /tmp/.memtrace-<uid>/ (or /dev/shm/.memtrace-<uid>/ when
 * the target's /tmp is read-only or noexec), as the target sees it:
 *  - /tmp is resolved inside /proc/PID/root (a container's symlinks stay in
 *    the container);
 *  - the directory is created 0700 and chowned to the target uid, opened
 *    with O_NOFOLLOW|O_DIRECTORY, and refused if it is not a directory owned
 *    by the target uid (a planted symlink or a foreign directory);
 *  - the file is created with O_EXCL|O_NOFOLLOW relative to that directory fd
 *    and fchown'ed to the target uid; a symlink at its name is refused.
 * The name is stable (libmemtrace-agent-<version>.so): loading the same path
 * again makes the JVM's dlopen() return the library it already has, so
 * Agent_OnAttach runs again in the same instance instead of a second copy.
 * After the load the file is removed (the JVM keeps its mapping).
 */
#ifndef MEMTRACE_AGENTFILE_H
#define MEMTRACE_AGENTFILE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "jvm/proc.h"

#define MT_AGENT_SO "libmemtrace-agent.so"  /* the build's file name */

struct mt_agentfile {
	char path[PATH_MAX];   /* the copy's path as the target sees it */
	char name[96];         /* its name inside dirfd */
	char dir[32];          /* ".memtrace-<uid>" inside the base directory */
	int basefd;            /* the target's /tmp or /dev/shm, -1 when not placed */
	int dirfd;             /* the verified .memtrace-<uid> directory, -1 when not placed */
	bool created_dir;      /* we created dir: remove it again when empty */
};

/*
 * agentfile_find - locate the agent library on this host: $MEMTRACE_AGENT if
 * set, else libmemtrace-agent.so next to the memtrace binary (/proc/self/exe),
 * else in ../lib/memtrace/ from it (where `make install` puts it), else
 * ./build/libmemtrace-agent.so. Writes the path to @out.
 * Returns 0, or -ENOENT after printing where it looked.
 */
int agentfile_find(char *out, size_t n);

/*
 * agentfile_place - copy @src into the target's namespace (see above) and
 * fill *@af. Returns 0, or -errno after printing what failed (p_err).
 * On failure *@af holds nothing to release.
 */
int agentfile_place(const struct mt_proc *p, const char *src, struct mt_agentfile *af);

/*
 * agentfile_remove - unlink the copy, remove the directory if we created it
 * and it is empty, close the fds. No operation when nothing is placed.
 */
void agentfile_remove(struct mt_agentfile *af);

/*
 * agentfile_mapped - is a memtrace agent library mapped in host pid @pid?
 * Returns 1 (its path, as the target sees it, in @path), 0 if not, or -errno.
 */
int agentfile_mapped(int pid, char *path, size_t n);

/* agentfile_name - the copy's stable file name for this memtrace version. Pure. */
void agentfile_name(char *out, size_t n);

#endif
