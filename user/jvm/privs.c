// SPDX-License-Identifier: GPL-2.0
/* privs.c - capability checks with messages that name the remedy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/privs.h"
#include "lib/util.h"

uint64_t privs_effective(void)
{
	char *status = read_file("/proc/self/status", NULL);
	unsigned long long cap = 0;
	const char *p;

	if (!status)
		return 0;
	p = strstr(status, "\nCapEff:");
	if (p)
		cap = strtoull(p + 8, NULL, 16);
	free(status);
	return cap;
}

bool privs_has(int cap)
{
	return (privs_effective() >> cap) & 1;
}

int privs_require_bpf(const char *what)
{
	uint64_t eff = privs_effective();
	bool admin = (eff >> MT_CAP_SYS_ADMIN) & 1;
	bool bpf = admin || ((eff >> MT_CAP_BPF) & 1);
	bool perfmon = admin || ((eff >> MT_CAP_PERFMON) & 1);

	if (bpf && perfmon)
		return 0;
	p_err("%s needs root, or the capabilities CAP_BPF and CAP_PERFMON (missing:%s%s); "
	      "run it with sudo, or grant them: sudo setcap cap_bpf,cap_perfmon,cap_sys_ptrace+ep memtrace",
	      what, bpf ? "" : " CAP_BPF", perfmon ? "" : " CAP_PERFMON");
	return -EPERM;
}
