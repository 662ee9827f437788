// SPDX-License-Identifier: GPL-2.0
/*
 * freeze.c - a frozen copy of the JVM for a heap walk (MT_AP_HEAP_FREEZE).
 *
 * Why a copy: a JVMTI walk stops the world for as long as it runs (~250 ns
 * per object and reference). fork() inside the pause gives a copy of the
 * whole process as it is at the safepoint (heap, metadata, thread stacks);
 * the JVM leaves the pause as soon as fork() returns, and HotSpot's own
 * FollowReferences goes on in the copy, calling the agent's callbacks there.
 * The fork happens at the walk's first callback, a root, before any object
 * is visited: on JDK 17 a walk that gets past the roots unmarks the whole
 * heap at its end (ObjectMarker::done, ~250-900 ms on a 2 GB heap here),
 * one that stops among the roots does not. The JVM's cost is the fork (the
 * page tables of its resident memory) and, afterwards, one page fault on the
 * first write to each page it shares with the copy (a copy of the page while
 * the copy lives).
 *
 * The copy never runs Java, but it runs HotSpot code (the rest of the walk,
 * then whatever the VM thread does after a safepoint). So before it goes on
 * it is cut off from everything it shares with the JVM: every fd is closed;
 * writable shared mappings (hsperfdata) are replaced by private copies, so
 * its counters and logs go nowhere (only then is memtrace's own memfd
 * mapped shared, MT_AP_FREEZE_POOL: its records go there for memtrace to
 * read); signals are at their defaults (a crash
 * kills it quietly: no core, no hs_err, whose file it could not open
 * anyway); seccomp refuses new files, sockets, processes (a thread of its
 * own only: heapmark.c's second), and signals or ptrace to others; a CPU
 * limit (for all its threads); oom_score_adj 1000 (the kernel kills it
 * before anything else); PR_SET_PDEATHSIG kills it with the VM thread. The
 * JVM is never blocked by the copy: the agent's thread polls it; memtrace
 * (or, failing that, the agent) reads the walk's records out of it through
 * /proc/PID/mem, then it is killed and reaped.
 * glibc's fork() (not a raw clone) because the copy's walk mallocs: glibc
 * takes its allocator's locks around the fork, so the copy's are free.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "freeze.h"

#define WAIT_POLL_MS   2        /* how often the JVM's thread looks at the copy */
#define LOCK_WAIT_NS   (50 * 1000000ull) /* at most this long for the locks, in the pause */
#define MAX_RUNS       1024     /* unused heap ranges kept out of the copy, at most */
#define MAX_REGIONS    (1u << 20) /* G1 regions read, at most */
#define PAGE           4096ull
#define SAFEPOINT_SYNC 2        /* SafepointSynchronize::_synchronized (JDK 17 and 25) */
#define MAX_SHARED     64       /* writable shared mappings the copy replaces */
#define REAP_WAIT_NS   (30000 * 1000000ull) /* a killed copy's exit waited for, at most */

void freeze_fail(struct freeze *fz, uint32_t stage, int err, const char *fmt, ...)
{
	va_list ap;

	fz->rec.status = err;
	fz->rec.stage = stage;
	va_start(ap, fmt);
	vsnprintf(fz->rec.why, sizeof(fz->rec.why), fmt, ap);
	va_end(ap);
}

/* Read our own memory without risking a fault (an address from memtrace). */
static int self_read(uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The mutex of lock @i (its address, or that of a pointer to it). */
static uint64_t lock_addr(const struct freeze *fz, int i)
{
	uint64_t a = fz->req.locks[i];

	if (a && (fz->req.lock_ptr & (1u << i)) && self_read(a, &a, sizeof(a)))
		return 0;
	return a;
}

/* Does @a look like a plain glibc mutex, held or not? (Its type is the low 7
 * bits of __kind: glibc keeps flags such as no-elision above them.) */
static bool plausible_mutex(uint64_t a)
{
	pthread_mutex_t m;

	if (!a || (a & 3) || self_read(a, &m, sizeof(m)))
		return false;
	return (m.__data.__kind & 127) == PTHREAD_MUTEX_NORMAL && m.__data.__lock >= 0 &&
	       m.__data.__lock <= 2;
}

/* Add [lo, hi) of unused heap (page-aligned inwards) to fz->runs, joining
 * it to the last run when they touch. */
static void add_run(struct freeze *fz, uint64_t lo, uint64_t hi)
{
	lo = (lo + PAGE - 1) & ~(PAGE - 1);
	hi &= ~(PAGE - 1);
	if (hi <= lo || lo < fz->req.heap_lo || hi > fz->req.heap_hi)
		return;
	if (fz->nruns && fz->runs[fz->nruns - 1].hi == lo) {
		fz->runs[fz->nruns - 1].hi = hi;
		return;
	}
	if (fz->nruns == MAX_RUNS)
		return;
	fz->runs[fz->nruns].lo = lo;
	fz->runs[fz->nruns].hi = hi;
	fz->nruns++;
}

/* A space or region whose bottom, top and end are @f: its unused part
 * [top, end). */
static void space_run(struct freeze *fz, const uint64_t f[3])
{
	if (f[0] <= f[1] && f[1] <= f[2])
		add_run(fz, f[1], f[2]);
}

/* Remote iovecs a call of process_vm_readv() takes at most (IOV_MAX):
 * freeze_read_spaces() (freeze.h) reads the spaces this many at a time. */
#define READ_BATCH 1024

int freeze_read_spaces(const uint16_t off[3], const uint64_t *objs, size_t n, uint64_t *f,
		       bool *ok)
{
	uint16_t lo = off[0], hi = off[0];
	struct iovec *rv = NULL, lv;
	size_t *at = NULL, span;
	char *buf = NULL;
	int err = -ENOMEM;

	for (int k = 1; k < 3; k++) {
		if (off[k] < lo)
			lo = off[k];
		if (off[k] > hi)
			hi = off[k];
	}
	span = (size_t)(hi - lo) + 8;
	rv = malloc(READ_BATCH * sizeof(*rv));
	at = malloc(READ_BATCH * sizeof(*at));
	buf = malloc(READ_BATCH * span);
	if (!rv || !at || !buf)
		goto cleanup;
	memset(ok, 0, n * sizeof(*ok));
	for (size_t i = 0; i < n;) {
		size_t k = 0, got;
		ssize_t rd;

		for (; i < n && k < READ_BATCH; i++) {
			if (!objs[i])
				continue;
			rv[k] = (struct iovec){ (void *)(uintptr_t)(objs[i] + lo), span };
			at[k++] = i;
		}
		for (size_t d = 0; d < k; d += got + 1) { /* + 1: past the one it stopped at */
			lv = (struct iovec){ buf, (k - d) * span };
			rd = process_vm_readv(getpid(), &lv, 1, rv + d, k - d, 0);
			got = rd < 0 ? 0 : (size_t)rd / span;
			for (size_t j = 0; j < got; j++) {
				const char *b = buf + j * span;
				uint64_t *g = f + 3 * at[d + j];

				for (int m = 0; m < 3; m++)
					memcpy(&g[m], b + (off[m] - lo), 8);
				ok[at[d + j]] = true;
			}
		}
	}
	err = 0;
cleanup:
	free(buf);
	free(at);
	free(rv);
	return err;
}

/*
 * In the pause: the heap's unused ranges, from the spaces memtrace named
 * (every read checked: a wrong guess only shares more with the copy, or
 * kills the copy if it needed the range; never the JVM).
 */
static void find_unused(struct freeze *fz)
{
	const struct mt_ap_heap_freeze *r = &fz->req;
	const uint16_t off[3] = { r->off_bottom, r->off_top, r->off_end };
	uint64_t base, len, *objs = NULL, *f = NULL;
	bool *ok = NULL;

	fz->nruns = 0;
	if (!fz->runs)
		return;
	if (r->space_kind == MT_AP_FREEZE_SPACES_LIST) {
		len = MT_AP_FREEZE_SPACES;
		objs = calloc(len, sizeof(*objs));
		for (uint64_t i = 0; objs && i < len; i++)
			if (r->spaces[i] && self_read(r->spaces[i], &objs[i], 8))
				objs[i] = 0;
	} else if (r->space_kind == MT_AP_FREEZE_SPACES_G1 &&
		   !self_read(r->spaces[0] + r->spaces[1], &base, 8) &&
		   !self_read(r->spaces[0] + r->spaces[2], &len, 8) && len && len <= MAX_REGIONS) {
		objs = malloc(len * sizeof(*objs));
		if (objs && self_read(base, objs, len * sizeof(*objs))) {
			free(objs);
			objs = NULL;
		}
	}
	if (!objs)
		return;
	f = malloc(3 * len * sizeof(*f));
	ok = malloc(len * sizeof(*ok));
	if (f && ok && !freeze_read_spaces(off, objs, len, f, ok))
		for (uint64_t i = 0; i < len; i++)
			if (ok[i])
				space_run(fz, f + 3 * i);
	free(ok);
	free(f);
	free(objs);
}

/* Keep the unused ranges out of the copy (before the fork), or give them back
 * (after it, in the JVM). A failure (the VMA limit) only shares more. */
static void unshare_free(struct freeze *fz, bool out)
{
	for (uint32_t i = 0; i < fz->nruns; i++) {
		void *a = (void *)(uintptr_t)fz->runs[i].lo;
		size_t n = fz->runs[i].hi - fz->runs[i].lo;

		if (madvise(a, n, out ? MADV_DONTFORK : MADV_DOFORK)) {
			if (out) {
				fz->nruns = i; /* the rest stays shared */
				break;
			}
			continue;
		}
		if (out)
			fz->rec.unshared_bytes += n;
	}
	if (out)
		fz->rec.unshared_runs = fz->nruns;
}

int freeze_begin(struct freeze *fz, const struct mt_ap_heap_freeze *req,
		 const struct mt_ap_heap_zgc *zgc, void (*idle)(void))
{
	char line[512];
	uint32_t st;
	bool lock_rw[MT_AP_FREEZE_LOCKS] = { 0 };
	uint64_t la[MT_AP_FREEZE_LOCKS];
	FILE *f;
	int err = 0;

	free(fz->runs);
	zgcfreeze_end(&fz->zgc);
	freeze_drop_pool(fz);
	memset(fz, 0, sizeof(*fz));
	fz->req = *req;
	fz->mem_fd = fz->pidfd = -1;
	fz->parent = getpid();
	if (req->flags & MT_AP_FREEZE_ZGC) {
		char why[sizeof(fz->rec.why)];

		err = zgc ? zgcfreeze_begin(&fz->zgc, zgc, idle, why,
					    sizeof(why)) : -EINVAL;
		if (err) {
			freeze_fail(fz, MT_AP_FREEZE_CHECK, err, "%s", zgc ? why : "no ZGC description");
			return err;
		}
	}
	if (req->space_kind != MT_AP_FREEZE_SPACES_NONE)
		fz->runs = calloc(MAX_RUNS, sizeof(*fz->runs)); /* none: the whole heap is shared */
	if (self_read(req->state_addr, &st, sizeof(st))) {
		freeze_fail(fz, MT_AP_FREEZE_CHECK, -EFAULT,
			    "SafepointSynchronize::_state is not readable at the given address");
		return -EFAULT;
	}
	if (req->reset_addr) {
		uint8_t b;

		if (self_read(req->reset_addr, &b, 1) || b > 1) {
			freeze_fail(fz, MT_AP_FREEZE_CHECK, -EFAULT,
				    "ObjectMarker::_needs_reset is not a bool at the given address");
			return -EFAULT;
		}
	}
	for (int i = 0; i < MT_AP_FREEZE_LOCKS; i++) {
		la[i] = lock_addr(fz, i);
		if (req->locks[i] && !plausible_mutex(la[i])) {
			freeze_fail(fz, MT_AP_FREEZE_CHECK, -EFAULT,
				    "no glibc mutex at the given arena lock address");
			return -EFAULT;
		}
	}
	/* every mapping of the heap's range: private; the locks: writable */
	f = fopen("/proc/self/maps", "re");
	if (!f) {
		err = -errno;
		freeze_fail(fz, MT_AP_FREEZE_CHECK, err, "cannot read /proc/self/maps");
		return err;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;
		char perms[8], path[256] = "";

		if (sscanf(line, "%lx-%lx %7s %*s %*s %*u %255s", &lo, &hi, perms, path) < 3)
			continue;
		for (int i = 0; i < MT_AP_FREEZE_LOCKS; i++)
			if (la[i] >= lo && la[i] + sizeof(pthread_mutex_t) <= hi && perms[1] == 'w')
				lock_rw[i] = true;
		if (hi <= req->heap_lo || lo >= req->heap_hi)
			continue;
		/* private file mappings (the CDS archive's heap objects) are copied on
		 * write like anonymous memory; hugetlb pages would be copied 2 MiB at a
		 * time, from a pool that may run dry */
		if (perms[3] != 'p' || strstr(path, "hugepage")) {
			freeze_fail(fz, MT_AP_FREEZE_CHECK, -EPERM,
				    "the Java heap is in %s memory (%s)",
				    perms[3] != 'p' ? "shared" : "huge-page", path[0] ? path : perms);
			err = -EPERM;
			break;
		}
	}
	fclose(f);
	for (int i = 0; i < MT_AP_FREEZE_LOCKS && !err; i++)
		if (req->locks[i] && !lock_rw[i]) {
			freeze_fail(fz, MT_AP_FREEZE_CHECK, -EFAULT,
				    "the arena lock's address is not writable memory");
			err = -EFAULT;
		}
	return err;
}

/* In the pause: hold every lock (each is held for microseconds by a JIT
 * thread at most), giving up after LOCK_WAIT_NS. Returns how many are held. */
static int take_locks(struct freeze *fz, pthread_mutex_t **m)
{
	uint64_t until = agent_mono_ns() + LOCK_WAIT_NS;
	struct timespec nap = { 0, 20000 };
	int k = 0;

	for (; k < MT_AP_FREEZE_LOCKS; k++) {
		uint64_t a = lock_addr(fz, k);

		m[k] = NULL;
		if (!fz->req.locks[k])
			continue;
		if (!plausible_mutex(a))
			return k;
		m[k] = (pthread_mutex_t *)(uintptr_t)a;
		while (pthread_mutex_trylock(m[k])) {
			if (agent_mono_ns() > until) {
				m[k] = NULL;
				return k;
			}
			nanosleep(&nap, NULL);
		}
	}
	return k;
}

static void drop_locks(pthread_mutex_t **m, int n)
{
	for (int i = 0; i < n; i++)
		if (m[i])
			pthread_mutex_unlock(m[i]); /* plain mutexes: any thread may */
}

/* --- the copy: everything below runs in the child, in the VM thread --- */

/* The writable shared mappings, found before any is replaced (replacing one
 * changes /proc/self/maps under the reader). */
static struct { uint64_t lo, hi; int prot; } shared[MAX_SHARED];

/* Parse one /proc/self/maps line; keep it if writable and shared. */
static void maps_line(const char *l, size_t *n)
{
	unsigned long lo = 0, hi = 0;
	const char *p = l;
	char perms[4];

	while (*p && *p != '-')
		lo = lo * 16 + (unsigned long)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10), p++;
	if (*p++ != '-')
		return;
	while (*p && *p != ' ')
		hi = hi * 16 + (unsigned long)(*p <= '9' ? *p - '0' : (*p | 0x20) - 'a' + 10), p++;
	if (*p++ != ' ' || strlen(p) < 4)
		return;
	memcpy(perms, p, 4);
	if (perms[1] != 'w' || perms[3] != 's' || *n >= MAX_SHARED)
		return;
	if (strstr(p, "/memfd:" ZGC_COPY_NAME)) /* the copy's own heap file (ZGC) */
		return;
	shared[*n].lo = lo;
	shared[*n].hi = hi;
	shared[*n].prot = (perms[0] == 'r' ? PROT_READ : 0) | PROT_WRITE |
			  (perms[2] == 'x' ? PROT_EXEC : 0);
	(*n)++;
}

/* Replace every writable shared mapping by a private copy of its bytes:
 * HotSpot's counters (hsperfdata) and anything else the copy writes there
 * stay in the copy. Returns 0, or -1 if a mapping could not be replaced. */
static int privatize_shared(void)
{
	static char buf[65536];
	size_t have = 0, n = 0;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	for (;;) {
		ssize_t r = read(fd, buf + have, sizeof(buf) - 1 - have);
		char *s = buf, *nl;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		buf[have] = '\0';
		while ((nl = strchr(s, '\n'))) {
			*nl = '\0';
			maps_line(s, &n);
			s = nl + 1;
		}
		have -= (size_t)(s - buf);
		memmove(buf, s, have);
		if (have == sizeof(buf) - 1) /* a line longer than the buffer: skip it */
			have = 0;
	}
	close(fd);
	for (size_t i = 0; i < n; i++) {
		size_t len = shared[i].hi - shared[i].lo;
		void *tmp = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (tmp == MAP_FAILED)
			return -1;
		if (shared[i].prot & PROT_READ)
			memcpy(tmp, (void *)(uintptr_t)shared[i].lo, len);
		if (mprotect(tmp, len, shared[i].prot) ||
		    mremap(tmp, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   (void *)(uintptr_t)shared[i].lo) == MAP_FAILED)
			return -1;
	}
	return 0;
}

/* What the copy may not do: make files, sockets, processes; signal, trace or
 * write into other processes; attach shared memory; change the system. */
static const int denied[] = {
#ifdef __NR_open
	__NR_open, __NR_creat, __NR_mkdir, __NR_rmdir, __NR_unlink, __NR_rename, __NR_link,
	__NR_symlink, __NR_chmod, __NR_chown, __NR_lchown, __NR_mknod, __NR_utime, __NR_utimes,
	__NR_fork, __NR_vfork, __NR_futimesat,
#endif
#ifdef __NR_renameat
	__NR_renameat,
#endif
	__NR_openat, __NR_openat2, __NR_mkdirat, __NR_unlinkat, __NR_renameat2, __NR_linkat,
	__NR_symlinkat, __NR_fchmodat, __NR_fchownat, __NR_mknodat, __NR_utimensat, __NR_truncate,
	__NR_name_to_handle_at, __NR_open_by_handle_at,
	__NR_socket, __NR_socketpair, __NR_connect, __NR_bind, __NR_listen, __NR_accept4,
	__NR_execve, __NR_execveat,
	__NR_kill, __NR_tkill, __NR_tgkill, __NR_rt_sigqueueinfo, __NR_rt_tgsigqueueinfo,
	__NR_pidfd_open, __NR_pidfd_getfd, __NR_pidfd_send_signal, __NR_ptrace,
	__NR_process_vm_writev, __NR_shmat, __NR_shmget, __NR_msgget, __NR_semget, __NR_mq_open,
	__NR_userfaultfd, __NR_perf_event_open, __NR_bpf, __NR_io_uring_setup, __NR_mount,
	__NR_umount2, __NR_setns, __NR_unshare, __NR_chroot, __NR_pivot_root, __NR_reboot,
	__NR_kexec_load, __NR_init_module, __NR_finit_module, __NR_delete_module, __NR_swapon,
	__NR_swapoff, __NR_acct, __NR_settimeofday, __NR_clock_settime, __NR_adjtimex,
	__NR_sethostname, __NR_setdomainname, __NR_keyctl, __NR_add_key, __NR_request_key,
	__NR_fanotify_init, __NR_quotactl,
};

#if defined(__x86_64__)
#define FREEZE_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define FREEZE_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

/* The seccomp filter: denied syscalls fail with EPERM, anything else runs.
 * clone() only for a thread of the copy's own (CLONE_THREAD: the records'
 * second thread, heapmark.c); clone3(), whose flags a filter cannot read,
 * fails as if the kernel had none (ENOSYS), so glibc falls back to clone(). */
int freeze_seccomp(void)
{
#ifdef FREEZE_AUDIT_ARCH
	enum { N = MT_ARRAY_SIZE(denied) };
	static struct sock_filter prog[N + 16];
	struct sock_fprog fp = { .filter = prog };
	unsigned short k = 0, allow, eperm, over;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	unsigned lo = offsetof(struct seccomp_data, args[0]); /* clone's flags' low word */
#else
	unsigned lo = offsetof(struct seccomp_data, args[0]) + 4;
#endif

	/* the two returns after the list: ALLOW at N + 12, EPERM at N + 13 */
	allow = N + 12;
	eperm = N + 13;
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, arch));
	prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, FREEZE_AUDIT_ARCH, 1, 0);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
						 offsetof(struct seccomp_data, nr));
	/* x32 numbers on x86_64: refused as a whole */
	over = k;
	prog[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u,
					       (unsigned char)(eperm - over - 1), 0);
	k++;
	prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 0, 1);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 0, 4);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, lo);
	prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 0, 1);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	/* k == 12 */
	for (unsigned i = 0; i < N; i++, k++) /* equal: jump to the EPERM return */
		prog[k] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)denied[i],
						       (unsigned char)(eperm - k - 1), 0);
	if (k != allow)
		return -1;
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
	fp.len = k;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp);
#else
	return -1;
#endif
}

int freeze_no_threads(void)
{
#ifdef FREEZE_AUDIT_ARCH
	static struct sock_filter prog[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_clone3, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog fp = { .len = MT_ARRAY_SIZE(prog), .filter = prog };

	return (int)syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &fp) ? -errno : 0;
#else
	return -ENOSYS;
#endif
}

/* In the copy: map memtrace's pool, if one came (its size the file's); no
 * pool when that fails (the records then go where they always went). */
static void map_pool(struct freeze *fz)
{
	struct stat st;
	void *p;

	if (!fz->has_pool_fd || fstat(fz->pool_fd, &st) || st.st_size <= 0)
		return;
	p = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fz->pool_fd, 0);
	if (p == MAP_FAILED)
		return;
	/* no recency for its pages: the copy's exit then unmaps them without
	 * marking each accessed on the LRU (folio_mark_accessed()) */
	madvise(p, (size_t)st.st_size, MADV_RANDOM);
	fz->pool = p;
	fz->pool_bytes = (uint64_t)st.st_size;
}

/* Cut the copy off from everything it shares with the JVM; exit if that
 * fails (the JVM then walks in a pause). The exit code says which step. */
static void sandbox(struct freeze *fz)
{
	struct rlimit core = { 0, 0 };
	struct rlimit cpu;
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	sigset_t all;
	int fd;

	if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != fz->parent)
		_exit(71);
	/* ZGC: the JVM waits in the pause until its heap is the copy's own */
	if (fz->zgc.on && zgcfreeze_child((struct zgc_freeze *)&fz->zgc))
		_exit(76);
	prctl(PR_SET_NAME, MT_AP_COPY_COMM, 0, 0, 0); /* not a JVM for memtrace ps */
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1000", 4) != 4)
			_exit(72);
		close(fd);
	}
	if (privatize_shared())
		_exit(73);
	map_pool(fz); /* after the shared mappings became private, before the fds close */
	cpu.rlim_cur = fz->req.max_ms / 1000 + 10;
	cpu.rlim_max = cpu.rlim_cur + 1;
	if (setrlimit(RLIMIT_CORE, &core) || setrlimit(RLIMIT_CPU, &cpu))
		_exit(74);
	setpriority(PRIO_PROCESS, 0, 10); /* behind the JVM's threads for the CPU */
	for (int sig = 1; sig < NSIG; sig++)
		sigaction(sig, &dfl, NULL); /* glibc's own and SIGKILL/SIGSTOP refuse: fine */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL); /* faults still kill: the kernel forces them */
	if (syscall(__NR_close_range, 0u, ~0u, 0u)) {
		for (fd = 0; fd < 65536; fd++)
			close(fd);
	}
	if (freeze_seccomp())
		_exit(75);
}

void freeze_drop_pool(struct freeze *fz)
{
	if (fz->has_pool_fd)
		close(fz->pool_fd);
	fz->has_pool_fd = false;
	fz->pool_fd = -1;
}

pid_t freeze_fork(struct freeze *fz)
{
	pthread_mutex_t *m[MT_AP_FREEZE_LOCKS];
	uint32_t st = 0;
	int err, held;
	pid_t pid;

	fz->forked = true;
	err = self_read(fz->req.state_addr, &st, sizeof(st));
	if (err || st != SAFEPOINT_SYNC) {
		freeze_fail(fz, MT_AP_FREEZE_FORK, -EPROTO,
			    "SafepointSynchronize::_state reads %u in the pause, not %d", st,
			    SAFEPOINT_SYNC);
		return -EPROTO;
	}
	fz->t_fork = agent_mono_ns();
	if (fz->zgc.on) {
		char why[sizeof(fz->rec.why)];

		err = zgcfreeze_pause(&fz->zgc, why, sizeof(why));
		if (err) {
			freeze_fail(fz, MT_AP_FREEZE_FORK, err, "%s", why);
			return err;
		}
	}
	find_unused(fz);
	unshare_free(fz, true);
	held = take_locks(fz, m);
	if (held < MT_AP_FREEZE_LOCKS) {
		drop_locks(m, held);
		unshare_free(fz, false);
		freeze_fail(fz, MT_AP_FREEZE_FORK, -EBUSY,
			    "a HotSpot thread held the arena lock for %llu ms in the pause",
			    LOCK_WAIT_NS / 1000000);
		return -EBUSY;
	}
	if (fz->req.flags & MT_AP_FREEZE_TEST_NOFORK) {
		pid = -1;
		errno = EAGAIN;
	} else {
		pid = fork();
	}
	err = pid < 0 ? -errno : 0;
	drop_locks(m, held); /* the JVM's and the copy's: both free again */
	if (pid == 0) {
		fz->in_child = true;
		sandbox(fz);
		return 0;
	}
	freeze_drop_pool(fz); /* the JVM keeps no part of memtrace's memory */
	unshare_free(fz, false);
	fz->rec.fork_ns = agent_mono_ns() - fz->t_fork;
	fz->rec.fork_at_ns = fz->t_fork;
	if (pid < 0) {
		freeze_fail(fz, MT_AP_FREEZE_FORK, err, "fork in the pause failed: %s",
			    strerror(-err));
		return err;
	}
	fz->child = pid;
	fz->rec.child_pid = (uint32_t)pid;
	fz->pidfd = (int)syscall(__NR_pidfd_open, pid, 0);
	if (fz->zgc.on) {
		char why[sizeof(fz->rec.why)];

		err = zgcfreeze_wait(&fz->zgc, &fz->rec.heap_copy_ns, why, sizeof(why));
		fz->rec.heap_copy_bytes = fz->zgc.bytes;
		fz->rec.heap_skip_bytes = fz->zgc.skipped;
		zgcfreeze_end(&fz->zgc); /* the file lives on in the copy's mappings */
		if (err) {
			freeze_end(fz);
			fz->rec.child_pid = 0;
			freeze_fail(fz, MT_AP_FREEZE_FORK, err, "%s", why);
			return err;
		}
	}
	return pid;
}

/* --- back in the JVM: the socket thread --- */

int freeze_read(struct freeze *fz, uint64_t addr, void *buf, size_t len)
{
	char path[64];
	size_t off = 0;

	if (fz->mem_fd == -1) {
		/* /proc must be our pid namespace's (a container may see the host's) */
		char self[32];
		ssize_t n = readlink("/proc/self", self, sizeof(self) - 1);

		fz->mem_fd = -2; /* tried */
		if (n > 0 && (self[n] = '\0', atoi(self) == (int)getpid())) {
			snprintf(path, sizeof(path), "/proc/%d/mem", (int)fz->child);
			fz->mem_fd = open(path, O_RDONLY | O_CLOEXEC);
			if (fz->mem_fd < 0)
				fz->mem_fd = -2;
		}
	}
	if (fz->mem_fd < 0) { /* no usable /proc: the same check, another way */
		struct iovec l = { buf, len }, r = { (void *)(uintptr_t)addr, len };
		ssize_t n = process_vm_readv(fz->child, &l, 1, &r, 1, 0);

		return n < 0 ? -errno : (size_t)n == len ? 0 : -EFAULT;
	}
	while (off < len) {
		ssize_t n = pread(fz->mem_fd, (char *)buf + off, len - off, (off_t)(addr + off));

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EFAULT;
		off += (size_t)n;
	}
	return 0;
}

int freeze_readv(struct freeze *fz, const uint64_t *addrs, void *const *bufs,
		 const size_t *lens, size_t n)
{
	enum { BATCH = 512 };
	struct iovec l[BATCH], r[BATCH];

	for (size_t i = 0; i < n;) {
		size_t k = 0, want = 0;
		ssize_t got;

		for (; i < n && k < BATCH; i++, k++) {
			l[k].iov_base = bufs[i];
			l[k].iov_len = lens[i];
			r[k].iov_base = (void *)(uintptr_t)addrs[i];
			r[k].iov_len = lens[i];
			want += lens[i];
		}
		got = process_vm_readv(fz->child, l, k, r, k, 0);
		if (got < 0 || (size_t)got != want) { /* slow way, piece by piece */
			for (size_t j = 0; j < k; j++) {
				int err = freeze_read(fz, (uint64_t)(uintptr_t)r[j].iov_base,
						      l[j].iov_base, l[j].iov_len);

				if (err)
					return err;
			}
		}
	}
	return 0;
}

/* Is the memtrace connection gone? */
static bool client_gone(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN | POLLRDHUP };
	char c;

	if (fd < 0 || poll(&p, 1, 0) <= 0)
		return false;
	if (p.revents & (POLLHUP | POLLERR | POLLRDHUP | POLLNVAL))
		return true;
	return recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) == 0;
}

/* Has the copy ended (exited, killed, reaped by another)? Says how in fz->rec. */
static bool copy_ended(struct freeze *fz, int options)
{
	int status;
	pid_t w = waitpid(fz->child, &status, options);

	if (w != fz->child && !(w < 0 && errno == ECHILD))
		return false;
	if (w == fz->child)
		fz->child = -fz->child; /* reaped: nothing to kill */
	freeze_fail(fz, MT_AP_FREEZE_WALK, -ECHILD, "the frozen copy %s %d",
		    w < 0 ? "was reaped by someone else," :
		    WIFSIGNALED(status) ? "died of signal" : "exited with",
		    w < 0 ? 0 : WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
	return true;
}

int freeze_wait(struct freeze *fz, int watch_fd, const uint64_t *progress, void (*idle)(void))
{
	uint64_t start = agent_mono_ns(), last_change = start, last = 0;
	struct timespec nap = { 0, WAIT_POLL_MS * 1000000L };

	for (;;) {
		uint64_t now = agent_mono_ns(), p = 0;
		uint32_t st = SAFEPOINT_SYNC;
		int err;

		if (client_gone(watch_fd)) {
			freeze_fail(fz, MT_AP_FREEZE_CLIENT, -ECONNRESET,
				    "memtrace went away during the frozen walk");
			return -ECONNRESET;
		}
		if (copy_ended(fz, WNOHANG))
			return -ECHILD;
		err = freeze_read(fz, fz->req.state_addr, &st, sizeof(st));
		if (!err && st != SAFEPOINT_SYNC)
			return 0; /* HotSpot left the safepoint in the copy: the walk is over */
		if (!err)
			err = freeze_read(fz, (uint64_t)(uintptr_t)progress, &p, sizeof(p));
		if (err) { /* a copy that just died cannot be read: say how it died */
			struct timespec t = { 0, 10000000 };

			for (int i = 0; i < 10; i++, nanosleep(&t, NULL))
				if (copy_ended(fz, WNOHANG))
					return -ECHILD;
			freeze_fail(fz, MT_AP_FREEZE_WALK, err, "cannot read the frozen copy: %s",
				    strerror(-err));
			return err;
		}
		if (p != last) {
			last = p;
			last_change = now;
		}
		if (now - last_change > (uint64_t)fz->req.stall_ms * 1000000) {
			freeze_fail(fz, MT_AP_FREEZE_WALK, -ETIMEDOUT,
				    "the frozen copy's walk made no progress for %u ms",
				    fz->req.stall_ms);
			return -ETIMEDOUT;
		}
		if (now - start > (uint64_t)fz->req.max_ms * 1000000) {
			freeze_fail(fz, MT_AP_FREEZE_WALK, -ETIMEDOUT,
				    "the frozen copy's walk took longer than %u ms", fz->req.max_ms);
			return -ETIMEDOUT;
		}
		if (idle)
			idle();
		nanosleep(&nap, NULL);
	}
}

/* Copies killed whose exit was still going on: reaped later (freeze_reap()). */
static pid_t unreaped[16];
static void (*reap_idle)(void);

void freeze_set_idle(void (*idle)(void))
{
	reap_idle = idle;
}

bool freeze_reap(void)
{
	bool left = false;

	for (size_t i = 0; i < MT_ARRAY_SIZE(unreaped); i++) {
		if (unreaped[i] > 0 && waitpid(unreaped[i], NULL, WNOHANG) != 0)
			unreaped[i] = 0; /* reaped, or not ours any more */
		left |= unreaped[i] > 0;
	}
	return left;
}

/* Wait for killed copy @pid, the socket thread's other duties done
 * meanwhile (reap_idle): a copy that owns much memory (ZGC's copy of the
 * used heap) took 2.7-3.3 s to exit, which the thread must not spend blocked
 * (its sampling rings overflowed during `leaks`). After REAP_WAIT_NS it is
 * left to freeze_reap() (at once unless @wait). Returns wait4's. */
static pid_t reap(pid_t pid, struct rusage *ru, bool wait)
{
	uint64_t until = agent_mono_ns() + (wait ? REAP_WAIT_NS : 0);
	struct timespec nap = { 0, 1000000 };
	int status;
	pid_t w;

	for (;;) {
		w = wait4(pid, &status, WNOHANG, ru);
		if (w != 0 && !(w < 0 && errno == EINTR))
			return w;
		if (agent_mono_ns() > until)
			break;
		if (reap_idle)
			reap_idle();
		nanosleep(&nap, NULL);
	}
	for (size_t i = 0; i < MT_ARRAY_SIZE(unreaped); i++)
		if (unreaped[i] <= 0) {
			unreaped[i] = pid;
			return 0;
		}
	do /* no room: wait for it after all */
		w = wait4(pid, &status, 0, ru);
	while (w < 0 && errno == EINTR);
	return w;
}

/* freeze_end(), the copy's exit waited out only if @wait. */
static void end(struct freeze *fz, bool wait)
{
	struct rusage ru;

	zgcfreeze_end(&fz->zgc);
	freeze_drop_pool(fz);
	if (!fz->forked) /* nothing was opened: a zeroed fz's fds (0) are the JVM's */
		return;
	if (fz->mem_fd >= 0)
		close(fz->mem_fd);
	fz->mem_fd = -1;
	if (fz->child > 0) {
		pid_t w;

		if (fz->pidfd < 0 || syscall(__NR_pidfd_send_signal, fz->pidfd, SIGKILL, NULL, 0))
			kill(fz->child, SIGKILL);
		w = reap(fz->child, &ru, wait);
		if (w == fz->child) {
			fz->rec.child_maxrss_kb = (uint64_t)ru.ru_maxrss;
			fz->rec.child_minflt = (uint64_t)ru.ru_minflt;
			fz->rec.child_cpu_ns = ((uint64_t)ru.ru_utime.tv_sec + (uint64_t)ru.ru_stime.tv_sec) *
					       1000000000ull + ((uint64_t)ru.ru_utime.tv_usec +
								(uint64_t)ru.ru_stime.tv_usec) * 1000;
		}
		fz->child = -fz->child;
	}
	if (fz->pidfd >= 0)
		close(fz->pidfd);
	fz->pidfd = -1;
	free(fz->runs);
	fz->runs = NULL;
	fz->nruns = 0;
}

void freeze_end(struct freeze *fz)
{
	end(fz, true);
}

void freeze_end_nowait(struct freeze *fz)
{
	end(fz, false);
}
