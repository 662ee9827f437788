// SPDX-License-Identifier: GPL-2.0
/* uprobemulti.c - uprobe_multi links by hand; see uprobemulti.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>

#include "probe/uprobecost.h"
#include "probe/uprobemulti.h"

/* union bpf_attr's link_create as Linux 6.6 lays it out for uprobe_multi. */
struct uprobe_multi_attr {
	uint32_t prog_fd;
	uint32_t target_fd;
	uint32_t attach_type;
	uint32_t flags;
	uint64_t path;
	uint64_t offsets;
	uint64_t ref_ctr_offsets;
	uint64_t cookies;
	uint32_t cnt;
	uint32_t uflags;
	uint32_t pid;
	uint32_t pad;
};

int uprobemulti_attach(int prog_fd, const char *path, const uint64_t *offsets, uint32_t cnt,
		       int pid)
{
	return uprobemulti_attach_cookies(prog_fd, path, offsets, NULL, cnt, pid);
}

int uprobemulti_attach_cookies(int prog_fd, const char *path, const uint64_t *offsets,
			       const uint64_t *cookies, uint32_t cnt, int pid)
{
	struct uprobe_multi_attr a;
	long fd;

	memset(&a, 0, sizeof(a));
	a.prog_fd = (uint32_t)prog_fd;
	a.attach_type = UPROBEMULTI_ATTACH_TYPE;
	a.path = (uint64_t)(uintptr_t)path;
	a.offsets = (uint64_t)(uintptr_t)offsets;
	a.cookies = (uint64_t)(uintptr_t)cookies;
	a.cnt = cnt;
	a.pid = (uint32_t)pid;
	fd = syscall(SYS_bpf, BPF_LINK_CREATE, &a, sizeof(a));
	return fd < 0 ? -errno : (int)fd;
}

int uprobemulti_self_offset(uint64_t addr, uint64_t *off)
{
	char line[512], exe[256], path[256];
	unsigned long lo, hi, fo;
	char perm[8];
	ssize_t n;
	FILE *f;
	int err = -ENOENT;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return -errno;
	exe[n] = 0;
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %255s", &lo, &hi, perm, &fo, path) < 4)
			continue;
		if (addr < lo || addr >= hi || perm[2] != 'x' || strcmp(path, exe))
			continue;
		*off = addr - lo + fo;
		err = 0;
		break;
	}
	fclose(f);
	return err;
}

/* Load "return 0" for uprobe_multi and attach it to our own function
 * (uprobecost_target: the trap's measure probes it too). */
static bool probe(void)
{
	struct bpf_insn insns[2] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, o,
		    .expected_attach_type = (enum bpf_attach_type)UPROBEMULTI_ATTACH_TYPE);
	uint64_t off;
	int prog, link;

	if (uprobemulti_self_offset((uint64_t)(uintptr_t)uprobecost_target, &off))
		return false;
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, "mt_um_probe", "GPL", insns, 2, &o);
	if (prog < 0)
		return false;
	link = uprobemulti_attach(prog, "/proc/self/exe", &off, 1, getpid());
	if (link >= 0)
		close(link);
	close(prog);
	return link >= 0;
}

bool uprobemulti_hidden(void)
{
	const char *e = getenv("MEMTRACE_NO_UPROBE_MULTI");

	return e && *e && strcmp(e, "0");
}

bool uprobemulti_supported(void)
{
	static int known = -1; /* first caller decides; memtrace asks from one thread */

	if (known < 0)
		known = !uprobemulti_hidden() && probe();
	return known;
}
