// SPDX-License-Identifier: GPL-2.0
/* monflag.c - DTraceMonitorProbes on and off through /proc/PID/mem. */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "jvm/jvmflags.h"
#include "jvm/monflag.h"
#include "jvm/proc.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

#define FLAG "DTraceMonitorProbes"

int monflag_get(const struct mt_proc *p, struct monflag *m, bool *on)
{
	struct mt_vmstructs *vs = NULL;
	struct mt_jvmflag f;
	unsigned char v;
	int err;

	memset(m, 0, sizeof(*m));
	m->pid = p->pid;
	err = vmstructs_open(p, &vs);
	if (err && err != -ENOENT) {
		p_err("cannot read the VMStructs of pid %d: %s", p->pid, vmstructs_strerror(err));
		return err;
	}
	err = jvmflags_find(p, vs, FLAG, &f);
	vmstructs_free(vs);
	if (err) {
		p_err("cannot find the %s flag in pid %d: %s", FLAG, p->pid, strerror(-err));
		return err;
	}
	if (f.type != MT_FLAG_BOOL && f.type != MT_FLAG_UNKNOWN) {
		p_err("%s in pid %d is a %s, not a bool: not touching it", FLAG, p->pid,
		      jvmflags_type_name(f.type));
		return -EINVAL;
	}
	err = proc_read_mem(p->pid, f.addr, &v, 1);
	if (err) {
		p_err("cannot read %s at 0x%llx in pid %d: %s", FLAG, (unsigned long long)f.addr,
		      p->pid, strerror(-err));
		return err;
	}
	m->addr = f.addr;
	m->was = v != 0;
	*on = m->was;
	return 0;
}

static int write_byte(int pid, uint64_t addr, unsigned char v)
{
	char path[64];
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/mem", pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (pwrite(fd, &v, 1, (off_t)addr) != 1)
		err = errno ? -errno : -EIO;
	close(fd);
	return err;
}

int monflag_enable(const struct mt_proc *p, struct monflag *m)
{
	bool on;
	int err = monflag_get(p, m, &on);

	if (err)
		return err;
	if (on) {
		p_info("%s is already on in pid %d: nothing changed", FLAG, p->pid);
		return 0;
	}
	p_info("--enable-monitor-probes: writing 1 (true) into -XX:%s (bool at 0x%llx) of pid "
	       "%d through /proc/%d/mem; memtrace writes 0 back when it exits",
	       FLAG, (unsigned long long)m->addr, p->pid, p->pid);
	err = write_byte(p->pid, m->addr, 1);
	if (err) {
		p_err("cannot write %s in pid %d: %s", FLAG, p->pid, strerror(-err));
		return err;
	}
	m->changed = true;
	return 0;
}

void monflag_restore(struct monflag *m)
{
	int err;

	if (!m->changed)
		return;
	err = write_byte(m->pid, m->addr, m->was);
	if (err && !proc_exists(m->pid)) /* the flag went with its JVM */
		p_info("JVM %d exited: -XX:%s needs no restoring", m->pid, FLAG);
	else if (err)
		p_warn("cannot restore %s in pid %d (%s): it stays on until the JVM exits", FLAG,
		       m->pid, strerror(-err));
	else
		p_info("restored -XX:%s=%s in pid %d", FLAG, m->was ? "true" : "false", m->pid);
	m->changed = false;
}
