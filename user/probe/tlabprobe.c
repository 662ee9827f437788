// SPDX-License-Identifier: GPL-2.0
/* tlabprobe.c - the AllocTracer uprobes shared by alloc, record and leaks. */
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "jvm/elfsym.h"
#include "jvm/proc.h"
#include "probe/tlabprobe.h"
#include "lib/util.h"

int tlabprobe_attach(struct bpf_program *const progs[2], const struct mt_elf *e,
		     const struct mt_proc *p, struct bpf_link *links[2], const char **missing)
{
	static const char *const syms[2] = { TLABPROBE_SYM_NEW_TLAB, TLABPROBE_SYM_OUTSIDE_TLAB };
	static const char *const names[2] = { "send_allocation_in_new_tlab",
					      "send_allocation_outside_tlab" };
	int err = 0;

	links[0] = links[1] = NULL;
	for (int i = 0; i < 2 && !err; i++) {
		uint64_t addr, off;

		if (elfsym_lookup(e, syms[i], &addr, NULL)) {
			*missing = names[i];
			err = -ENOENT;
			break;
		}
		err = elfsym_vaddr_to_offset(e, addr, &off);
		if (err) {
			p_err("AllocTracer::%s in %s: no file offset for its address", names[i],
			      p->libjvm);
			break;
		}
		links[i] = bpf_program__attach_uprobe(progs[i], false, p->pid, p->libjvm_host, off);
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
