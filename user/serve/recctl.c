// SPDX-License-Identifier: GPL-2.0
/* recctl.c - pause/resume `memtrace record` processes (see recctl.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve/recctl.h"
#include "lib/util.h"

/* The next NUL-terminated argument of cmdline[*pos..len), or NULL. */
static const char *next_arg(const char *cmdline, size_t len, size_t *pos)
{
	const char *a;
	size_t n;

	if (*pos >= len)
		return NULL;
	a = cmdline + *pos;
	n = strnlen(a, len - *pos);
	if (*pos + n >= len) /* not NUL-terminated: malformed */
		return NULL;
	*pos += n + 1;
	return a;
}

int recctl_cmdline_pid(const char *cmdline, size_t len)
{
	const char *a, *base, *v = NULL;
	size_t pos = 0;
	int pid;

	a = next_arg(cmdline, len, &pos);
	if (!a)
		return 0;
	base = strrchr(a, '/');
	base = base ? base + 1 : a;
	if (strcmp(base, "memtrace"))
		return 0;
	/* global options, then the command */
	while ((a = next_arg(cmdline, len, &pos)) && a[0] == '-')
		if (strcmp(a, "--json") && strcmp(a, "-j") && strcmp(a, "-q") &&
		    strcmp(a, "--quiet"))
			return 0;
	if (!a || strcmp(a, "record"))
		return 0;
	while (!v && (a = next_arg(cmdline, len, &pos))) {
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "-p") || !strcmp(a, "--pid"))
			v = next_arg(cmdline, len, &pos);
		else if (!strncmp(a, "--pid=", 6))
			v = a + 6;
		else if (!strncmp(a, "-p", 2) && a[2])
			v = a + 2;
	}
	return v && !parse_pid(v, &pid) ? pid : 0;
}

bool recctl_catches(const char *status, int sig)
{
	const char *l = strstr(status, "\nSigCgt:");
	unsigned long long mask;

	if (!l && !strncmp(status, "SigCgt:", 7))
		l = status - 1;
	if (!l || sig < 1 || sig > 64 || sscanf(l + 8, " %llx", &mask) != 1)
		return false;
	return (mask >> (sig - 1)) & 1;
}

/* Read /proc/@pid/@what into @buf (NUL-terminated); bytes read or -1. */
static ssize_t read_proc(int pid, const char *what, char *buf, size_t n)
{
	char path[64];
	ssize_t got, total = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, what);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	while ((size_t)total < n - 1 && (got = read(fd, buf + total, n - 1 - (size_t)total)) > 0)
		total += got;
	close(fd);
	buf[total] = '\0';
	return total;
}

int recctl_signal(int jvm_pid, bool pause, struct recctl_result *r)
{
	char ns_self[64] = "", ns[64], path[64], buf[4096];
	struct dirent *de;
	int self = getpid();
	DIR *d;

	memset(r, 0, sizeof(*r));
	if (readlink("/proc/self/ns/pid", ns_self, sizeof(ns_self) - 1) < 0)
		ns_self[0] = '\0';
	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		ssize_t n;
		int pid;

		if (parse_pid(de->d_name, &pid) || pid == self)
			continue;
		n = read_proc(pid, "cmdline", buf, sizeof(buf));
		if (n <= 0 || recctl_cmdline_pid(buf, (size_t)n) != jvm_pid)
			continue;
		/* -p means a pid of the record's own namespace: only ours match ours */
		snprintf(path, sizeof(path), "/proc/%d/ns/pid", pid);
		memset(ns, 0, sizeof(ns));
		if (readlink(path, ns, sizeof(ns) - 1) < 0 || strcmp(ns, ns_self))
			continue;
		if (read_proc(pid, "status", buf, sizeof(buf)) <= 0 ||
		    !recctl_catches(buf, SIGUSR1) || !recctl_catches(buf, SIGUSR2)) {
			r->nstarting++;
			continue;
		}
		if (kill(pid, pause ? SIGUSR1 : SIGUSR2))
			continue; /* gone meanwhile */
		if (r->nsignalled < (int)MT_ARRAY_SIZE(r->pids))
			r->pids[r->nsignalled] = pid;
		r->nsignalled++;
	}
	closedir(d);
	return 0;
}
