// SPDX-License-Identifier: GPL-2.0
/* gcendprobe.c - the GC cause uprobe shared by gctrace and the collector. */
#include <errno.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "jvm/elfsym.h"
#include "jvm/proc.h"
#include "probe/gcendprobe.h"
#include "probe/uprobemulti.h"
#include "lib/util.h"

int gcendprobe_attach(struct bpf_program *prog, const struct mt_proc *p, const struct mt_elf *e,
		      struct bpf_link **link, int *fd, struct gccause_table *t, const char **why)
{
	uint64_t addr, off;
	int err;

	*link = NULL;
	if (fd)
		*fd = -1;
	if (!e) {
		*why = "libjvm.so unreadable";
		return -ENOENT;
	}
	if (elfsym_lookup(e, GCENDPROBE_SYM, &addr, NULL)) {
		*why = "no GCMemoryManager::gc_end(bool, bool, bool, bool, GCCause::Cause, bool, "
		       "const char*) in libjvm's .symtab";
		return -ENOENT;
	}
	err = gccause_read(e, t);
	if (err) {
		*why = err == -ENOENT ? "no GCCause::to_string in libjvm's .symtab"
				      : "GCCause::to_string has a shape memtrace does not know";
		return err == -ENOENT ? -ENOENT : -ENOTSUP;
	}
	err = elfsym_vaddr_to_offset(e, addr, &off);
	if (err) {
		*why = "GCMemoryManager::gc_end has no file offset";
		return err;
	}
	if (fd) {
		err = uprobemulti_attach(bpf_program__fd(prog), p->libjvm_host, &off, 1, p->pid);
		*fd = err < 0 ? -1 : err;
		err = err < 0 ? err : 0;
	} else {
		*link = bpf_program__attach_uprobe(prog, false, p->pid, p->libjvm_host, off);
		err = *link ? 0 : -errno;
	}
	if (err) {
		p_err("cannot attach a uprobe to GCMemoryManager::gc_end in %s: %s", p->libjvm,
		      strerror(-err));
	}
	return err;
}
