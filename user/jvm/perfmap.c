// SPDX-License-Identifier: GPL-2.0
/* perfmap.c - ask a JVM for its perf map, and remove it once read if it is ours. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm/attach.h"
#include "jvm/perfmap.h"
#include "lib/util.h"

/* The map's name in the JVM's /tmp. */
static void map_name(int nspid, char *out, size_t n)
{
	snprintf(out, n, "perf-%d.map", nspid);
}

int perfmap_request(const struct mt_proc *p, struct perfmap *m, const char *unnamed)
{
	struct mt_attach_reply r;
	char name[32];
	struct stat st;
	int err;

	*m = (struct perfmap){ .tmpfd = -1, .pid = p->pid, .nspid = p->nspid };
	if (p->jdk_major && p->jdk_major < 17) {
		p_warn("JDK %d has no Compiler.perfmap: %s stay unnamed", p->jdk_major, unnamed);
		return -ENOTSUP;
	}
	m->tmpfd = attach_open_dir(p, "/tmp");
	map_name(p->nspid, name, sizeof(name));
	m->made = m->tmpfd >= 0 && fstatat(m->tmpfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
		  errno == ENOENT;
	err = attach_command(p, "jcmd", "Compiler.perfmap", NULL, NULL, &r);
	if (err)
		return err; /* attach_command said why; a map it may have left is removed */
	if (r.code) {
		p_warn("Compiler.perfmap failed (%d): %s; %s stay unnamed", r.code, r.text,
		       unnamed);
		return -EIO;
	}
	return 0;
}

void perfmap_done(struct perfmap *m)
{
	char name[32];

	if (m->tmpfd < 0)
		return;
	map_name(m->nspid, name, sizeof(name));
	if (m->made && unlinkat(m->tmpfd, name, 0) && errno != ENOENT)
		p_warn("cannot remove /tmp/%s, the perf map JVM %d wrote for memtrace (in its "
		       "mount namespace): %s", name, m->pid, strerror(errno));
	close(m->tmpfd);
	m->tmpfd = -1;
}
