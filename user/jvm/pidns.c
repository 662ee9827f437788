// SPDX-License-Identifier: GPL-2.0
/* pidns.c - is memtrace in the host's pid namespace? */
#include <sys/stat.h>

#include "jvm/pidns.h"

bool pidns_self_is_init(void)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st))
		return true;
	return st.st_ino == MT_PIDNS_INIT_INO;
}

uint32_t pidns_targ_tgid(const struct mt_proc *p)
{
	return pidns_self_is_init() ? (uint32_t)p->pid : 0;
}
