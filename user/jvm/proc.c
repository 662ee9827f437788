// SPDX-License-Identifier: GPL-2.0
/*
 * proc.c - facts about a target process from /proc, valid across pid and
 * mount namespaces: paths are opened through /proc/PID/root, the in-namespace
 * pid comes from NStgid.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "jvm/proc.h"
#include "lib/util.h"
#include "memtrace/agent_proto.h"

bool proc_exists(int pid)
{
	char path[64], *st, *p;
	bool alive;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	st = read_file(path, NULL);
	if (!st)
		return false;
	/* state is the field after the ")" that closes comm */
	p = strrchr(st, ')');
	alive = p && p[1] == ' ' && p[2] != 'Z' && p[2] != 'X';
	free(st);
	return alive;
}

bool proc_wait_gone(int pid, int ms)
{
	for (int waited = 0; proc_exists(pid); waited += 20) {
		if (waited >= ms)
			return false;
		usleep(20000);
	}
	return true;
}

int proc_parse_starttime(const char *stat, unsigned long long *ticks)
{
	const char *p = strrchr(stat, ')'); /* after comm, which may hold anything */
	char *end;
	int field = 2;

	if (!p)
		return -EINVAL;
	for (p++; *p && field < 22; p++) /* field 3 (state) follows ") " */
		if (*p == ' ')
			field++;
	if (field != 22 || *p < '0' || *p > '9')
		return -EINVAL;
	*ticks = strtoull(p, &end, 10);
	return *end == ' ' || *end == '\n' || !*end ? 0 : -EINVAL;
}

time_t proc_start_time(int pid)
{
	char path[64], *st, *line;
	unsigned long long ticks = 0, btime = 0;
	long hz = sysconf(_SC_CLK_TCK);
	int err;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	st = read_file(path, NULL);
	if (!st)
		return 0;
	err = proc_parse_starttime(st, &ticks);
	free(st);
	if (err || hz <= 0)
		return 0;
	st = read_file("/proc/stat", NULL);
	if (!st)
		return 0;
	line = strstr(st, "\nbtime ");
	if (line)
		btime = strtoull(line + 7, NULL, 10);
	free(st);
	return btime ? (time_t)(btime + ticks / (unsigned long long)hz) : 0;
}

bool proc_parse_kthread(const char *stat)
{
	const char *p = strrchr(stat, ')');
	unsigned long long flags;

	/* after comm: state ppid pgrp session tty_nr tpgid flags */
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %llu", &flags) != 1)
		return false;
	return flags & 0x00200000ull; /* PF_KTHREAD */
}

/* A kernel thread (its stat says so; no ptrace access needed). */
static bool is_kthread(int pid)
{
	char path[64], *st;
	bool k;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	st = read_file(path, NULL);
	if (!st)
		return false;
	k = proc_parse_kthread(st);
	free(st);
	return k;
}

/*
 * Whether @pid runs HotSpot's VM thread, from its threads' names (comm is
 * readable without ptrace access, unlike maps): HotSpot names its threads
 * since JDK 9, "VM Thread" among them once the VM is up. For a process whose
 * memory map we may not read.
 */
static bool has_vm_thread(int pid)
{
	char path[96], name[32];
	struct dirent *d;
	bool found = false;
	DIR *dh;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dh = opendir(path);
	if (!dh)
		return false;
	while (!found && (d = readdir(dh))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/comm", pid, d->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		found = fgets(name, sizeof(name), f) && !strncmp(name, "VM Thread", 9);
		fclose(f);
	}
	closedir(dh);
	return found;
}

int proc_parse_nstgid(const char *status)
{
	const char *line = strstr(status, "\nNStgid:");
	const char *p;
	int last = -1;

	if (!line)
		return -1;
	p = line + 8;
	for (;;) {
		char *end;
		long v;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!isdigit((unsigned char)*p))
			break;
		v = strtol(p, &end, 10);
		last = (int)v;
		p = end;
	}
	return last;
}

static void status_ids(const char *status, const char *key, unsigned *eff)
{
	const char *line = strstr(status, key);
	unsigned real = 0;

	if (line)
		sscanf(line + strlen(key), "%u %u", &real, eff);
}

int proc_parse_release(const char *text, char *version, size_t vlen, char *vendor,
		       size_t nlen)
{
	const char *p;
	int major = 0;

	version[0] = vendor[0] = '\0';
	p = strstr(text, "JAVA_VERSION=\"");
	if (p) {
		p += 14;
		size_t n = strcspn(p, "\"\n");
		snprintf(version, vlen, "%.*s", (int)n, p);
		major = atoi(version);
		if (major == 1) /* 1.8.0_x */
			major = atoi(version + 2);
	}
	p = strstr(text, "IMPLEMENTOR=\"");
	if (p) {
		p += 13;
		size_t n = strcspn(p, "\"\n");
		snprintf(vendor, nlen, "%.*s", (int)n, p);
	}
	return major;
}

/* Options of the java launcher that take the next argument as their value. */
static bool takes_value(const char *a)
{
	static const char *const opts[] = {
		"-cp", "-classpath", "--class-path", "-p", "--module-path",
		"--upgrade-module-path", "--add-modules", "--add-opens", "--add-exports",
		"--add-reads", "--limit-modules", "--patch-module", "--enable-native-access",
	};

	for (size_t i = 0; i < MT_ARRAY_SIZE(opts); i++)
		if (!strcmp(a, opts[i]))
			return true;
	return false;
}

void proc_main_class(const char *args, size_t len, char *out, size_t outlen)
{
	const char *p = args, *end = args + len;
	bool first = true;

	snprintf(out, outlen, "%s", "");
	while (p < end) {
		const char *a = p;

		p += strnlen(p, end - p) + 1;
		if (first) { /* argv[0], the launcher */
			first = false;
			continue;
		}
		if (!strcmp(a, "-jar") || !strcmp(a, "-m") || !strcmp(a, "--module")) {
			if (p < end)
				snprintf(out, outlen, "%s", p);
			return;
		}
		if (!strncmp(a, "--module=", 9)) {
			snprintf(out, outlen, "%s", a + 9);
			return;
		}
		if (a[0] == '-') {
			if (takes_value(a) && p < end)
				p += strnlen(p, end - p) + 1;
			continue;
		}
		snprintf(out, outlen, "%s", a);
		return;
	}
}

/*
 * Find libjvm.so in /proc/PID/maps: its path and the address of offset 0.
 * A JVM maps its code executable; a process that maps the file only to
 * read it (memtrace itself: libelf reads symbols through mmap) is no JVM.
 * Returns 0, -ENOEXEC (none mapped, or none executable) or -errno.
 */
static int find_libjvm(struct mt_proc *p)
{
	char path[64], line[PATH_MAX + 128];
	bool base = false, code = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", p->pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f) && !(base && code)) {
		unsigned long long start, off;
		char *name = strchr(line, '/'), perms[8];
		size_t n;

		if (!name)
			continue;
		name[strcspn(name, "\n")] = '\0';
		n = strlen(name);
		if (n < 9 || strcmp(name + n - 9, "libjvm.so"))
			continue;
		if (sscanf(line, "%llx-%*x %7s %llx", &start, perms, &off) != 3)
			continue;
		if (base && strcmp(name, p->libjvm))
			continue; /* another libjvm.so than the one at offset 0 */
		code |= perms[2] == 'x';
		if (off != 0 || base)
			continue;
		snprintf(p->libjvm, sizeof(p->libjvm), "%s", name);
		p->libjvm_base = start;
		base = true;
	}
	fclose(f);
	return base && code ? 0 : -ENOEXEC;
}

/*
 * Whether host pid @pid is a frozen copy of a JVM that memtrace's agent
 * forked for a heap walk (user/agent/freeze.c): named MT_AP_COPY_COMM, or,
 * made by an older agent, led by a thread named "VM Thread" (the thread that
 * forked it; a JVM's leading thread is the launcher's, never HotSpot's VM
 * thread). It maps libjvm.so as its JVM does, but is no JVM to watch.
 */
static bool is_frozen_copy(int pid)
{
	char path[64], *comm;
	bool copy;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	comm = read_file(path, NULL);
	if (!comm)
		return false;
	comm[strcspn(comm, "\n")] = '\0';
	copy = !strcmp(comm, MT_AP_COPY_COMM) || !strcmp(comm, "VM Thread");
	free(comm);
	return copy;
}

static bool same_ns(int pid, const char *ns)
{
	char a[64], b[64];
	struct stat sa, sb;

	snprintf(a, sizeof(a), "/proc/%d/ns/%s", pid, ns);
	snprintf(b, sizeof(b), "/proc/self/ns/%s", ns);
	if (stat(a, &sa) || stat(b, &sb))
		return true; /* unknown: assume ours */
	return sa.st_ino == sb.st_ino && sa.st_dev == sb.st_dev;
}

static void read_release(struct mt_proc *p)
{
	char path[PATH_MAX * 2 + 64], *text;
	char *slash;

	snprintf(p->java_home, sizeof(p->java_home), "%s", p->libjvm);
	for (int i = 0; i < 3; i++) { /* strip libjvm.so, server, lib */
		slash = strrchr(p->java_home, '/');
		if (slash)
			*slash = '\0';
	}
	snprintf(path, sizeof(path), "%s%s/release", p->root, p->java_home);
	text = read_file(path, NULL);
	if (!text)
		return;
	p->jdk_major = proc_parse_release(text, p->jdk_version, sizeof(p->jdk_version),
					  p->jdk_vendor, sizeof(p->jdk_vendor));
	free(text);
}

int proc_open(int pid, struct mt_proc *p)
{
	char path[64], *status, *cmd;
	size_t len;
	int err;

	memset(p, 0, sizeof(*p));
	p->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	status = read_file(path, NULL);
	if (!status)
		return errno == ENOENT ? -ESRCH : -errno;
	if (!proc_exists(pid)) {
		free(status);
		return -ESRCH;
	}
	p->nspid = proc_parse_nstgid(status);
	if (p->nspid < 0)
		p->nspid = pid;
	status_ids(status, "\nUid:", &p->uid);
	status_ids(status, "\nGid:", &p->gid);
	{
		const char *n = strstr(status, "Name:");

		if (n)
			sscanf(n + 5, " %31[^\n]", p->comm);
	}
	free(status);

	snprintf(p->root, sizeof(p->root), "/proc/%d/root", pid);
	snprintf(p->cwd, sizeof(p->cwd), "/proc/%d/cwd", pid);
	p->other_pidns = !same_ns(pid, "pid");
	p->other_mntns = !same_ns(pid, "mnt");
	jvmid_read(pid, &p->ident);

	if (is_frozen_copy(pid))
		return -ENOEXEC;
	err = find_libjvm(p);
	/* maps denied (even to root, by another user namespace or a security
	 * module): a kernel thread, or a process without HotSpot's VM thread,
	 * is not a JVM whatever the permissions */
	if ((err == -EACCES || err == -EPERM) && (is_kthread(pid) || !has_vm_thread(pid)))
		err = -ENOEXEC;
	if (err)
		return err;
	snprintf(p->libjvm_host, sizeof(p->libjvm_host), "%s%s", p->root, p->libjvm);
	read_release(p);

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	cmd = read_file(path, &len);
	if (cmd) {
		proc_main_class(cmd, len, p->main_class, sizeof(p->main_class));
		free(cmd);
	}
	return 0;
}

/* The parent's host pid of @pid, from /proc/PID/status (0 if unknown). */
static int parent_of(int pid)
{
	char path[64], *st, *line;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	st = read_file(path, NULL);
	if (!st)
		return 0;
	line = strstr(st, "\nPPid:");
	if (!line || sscanf(line + 6, "%d", &ppid) != 1)
		ppid = 0;
	free(st);
	return ppid;
}

/* Whether /proc/@pid/maps opens (ptrace access is checked at open). */
static bool maps_readable(int pid)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno != EACCES && errno != EPERM;
	close(fd);
	return true;
}

void proc_explain(int pid, int err)
{
	char path[64], comm[40] = "", *c;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	c = read_file(path, NULL);
	if (c) {
		snprintf(comm, sizeof(comm), " (%.*s)", (int)strcspn(c, "\n"), c);
		free(c);
	}
	switch (err) {
	case -ESRCH:
		p_err("no process with pid %d (check the pid with `memtrace ps`)", pid);
		break;
	case -ENOEXEC:
		if (is_kthread(pid))
			p_err("process %d%s is a kernel thread, not a JVM (`memtrace ps` lists "
			      "the JVMs on this machine)", pid, comm);
		else if (is_frozen_copy(pid))
			p_err("process %d%s is a frozen copy of JVM %d that memtrace's agent forked "
			      "for a heap walk, not a JVM (it ends with the walk; `memtrace ps` "
			      "lists the JVMs on this machine)", pid, comm, parent_of(pid));
		else if (!maps_readable(pid))
			p_err("process %d%s is not a JVM: none of its threads is HotSpot's "
			      "\"VM Thread\" (its memory map is not readable here either) "
			      "(`memtrace ps` lists the JVMs on this machine)", pid, comm);
		else
			p_err("process %d%s is not a HotSpot JVM: no libjvm.so is mapped to run "
			      "(`memtrace ps` lists the JVMs on this machine)", pid, comm);
		break;
	case -EACCES:
	case -EPERM:
		if (geteuid() == 0)
			p_err("cannot read /proc/%d/maps of JVM %d%s although memtrace runs as root: "
			      "it is protected from this process (another user namespace, or a "
			      "security module); run memtrace in the JVM's namespace or host",
			      pid, pid, comm);
		else
			p_err("cannot read /proc/%d: permission denied (run memtrace as root, "
			      "or as the JVM's user with CAP_SYS_PTRACE)", pid);
		break;
	default:
		p_err("cannot inspect process %d: %s", pid, strerror(-err));
	}
}

int proc_list_jvms(int **pids)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int n = 0, cap = 16, *out;

	if (!d)
		return -errno;
	out = malloc(cap * sizeof(*out));
	if (!out) {
		closedir(d);
		return -ENOMEM;
	}
	while ((de = readdir(d))) {
		struct mt_proc p;
		int pid;

		if (parse_pid(de->d_name, &pid))
			continue;
		if (pid == getpid())
			continue;
		/* cheap pre-filter before reading maps; memtrace's own processes
		 * map libjvm.so to read it, not to run it: find_libjvm skips them */
		memset(&p, 0, sizeof(p));
		p.pid = pid;
		if (find_libjvm(&p) || is_frozen_copy(pid))
			continue;
		if (n == cap) {
			int *tmp = realloc(out, 2 * cap * sizeof(*out));

			if (!tmp) {
				free(out);
				closedir(d);
				return -ENOMEM;
			}
			out = tmp;
			cap *= 2;
		}
		out[n++] = pid;
	}
	closedir(d);
	*pids = out;
	return n;
}

int proc_read_mem(int pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	/* process_vm_readv first (no fd), /proc/PID/mem when it is refused. */
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	{
		char path[64];
		int fd, err;

		snprintf(path, sizeof(path), "/proc/%d/mem", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		n = pread(fd, buf, len, (off_t)addr);
		err = n < 0 ? -errno : (n == (ssize_t)len ? 0 : -EIO);
		close(fd);
		return err;
	}
}

int proc_sched_ns(int pid, uint64_t *run_ns, uint64_t *wait_ns)
{
	char path[96];
	struct dirent *d;
	uint64_t sum = 0, waited = 0;
	int n = 0;
	DIR *dh;

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	dh = opendir(path);
	if (!dh)
		return -errno;
	while ((d = readdir(dh))) {
		unsigned long long run, wait;
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task/%.16s/schedstat", pid, d->d_name);
		f = fopen(path, "re");
		if (!f)
			continue; /* a thread that just ended */
		if (fscanf(f, "%llu %llu", &run, &wait) == 2) {
			sum += run;
			waited += wait;
			n++;
		}
		fclose(f);
	}
	closedir(dh);
	if (!n)
		return -ENOENT;
	*run_ns = sum;
	if (wait_ns)
		*wait_ns = waited;
	return 0;
}
