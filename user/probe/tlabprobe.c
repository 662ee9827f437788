// SPDX-License-Identifier: GPL-2.0
/* tlabprobe.c - the AllocTracer uprobes shared by alloc, record and leaks. */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "jvm/elfsym.h"
#include "jvm/proc.h"
#include "probe/tlabprobe.h"
#include "probe/uprobemulti.h"
#include "lib/util.h"

static const char *const names[2] = { "send_allocation_in_new_tlab",
				      "send_allocation_outside_tlab" };

int tlabprobe_offsets(const struct mt_elf *e, const struct mt_proc *p, uint64_t off[2],
		      const char **missing)
{
	static const char *const syms[2] = { TLABPROBE_SYM_NEW_TLAB, TLABPROBE_SYM_OUTSIDE_TLAB };

	for (int i = 0; i < 2; i++) {
		uint64_t addr;

		if (elfsym_lookup(e, syms[i], &addr, NULL)) {
			*missing = names[i];
			return -ENOENT;
		}
		if (elfsym_vaddr_to_offset(e, addr, &off[i])) {
			p_err("AllocTracer::%s in %s: no file offset for its address", names[i],
			      p->libjvm);
			return -ENOEXEC;
		}
	}
	return 0;
}

int tlabprobe_attach(struct bpf_program *const progs[2], const struct mt_elf *e,
		     const struct mt_proc *p, struct bpf_link *links[2], const char **missing)
{
	uint64_t off[2];
	int err;

	links[0] = links[1] = NULL;
	err = tlabprobe_offsets(e, p, off, missing);
	for (int i = 0; i < 2 && !err; i++) {
		links[i] = bpf_program__attach_uprobe(progs[i], false, p->pid, p->libjvm_host, off[i]);
		if (!links[i]) {
			err = -errno;
			p_err("cannot attach a uprobe to AllocTracer::%s in %s: %s", names[i],
			      p->libjvm, strerror(errno));
		}
	}
	if (err)
		for (int i = 0; i < 2; i++) {
			bpf_link__destroy(links[i]);
			links[i] = NULL;
		}
	return err;
}

int tlabprobe_attach_multi(struct bpf_program *const progs[2], const struct mt_proc *p,
			   const uint64_t off[2], int fds[2])
{
	int err = 0;

	fds[0] = fds[1] = -1;
	for (int i = 0; i < 2 && !err; i++) {
		fds[i] = uprobemulti_attach(bpf_program__fd(progs[i]), p->libjvm_host, &off[i], 1,
					    p->pid);
		if (fds[i] < 0) {
			err = fds[i];
			fds[i] = -1;
			p_err("cannot attach a uprobe to AllocTracer::%s in %s: %s", names[i],
			      p->libjvm, strerror(-err));
		}
	}
	if (err)
		for (int i = 0; i < 2; i++) {
			if (fds[i] >= 0)
				close(fds[i]);
			fds[i] = -1;
		}
	return err;
}
