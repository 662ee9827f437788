// SPDX-License-Identifier: GPL-2.0
/* bpfutil.c - libbpf plumbing shared by the BPF loaders (bpfutil.h). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "probe/bpfutil.h"
#include "lib/util.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (!getenv("MEMTRACE_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void bpfutil_setup_logging(void)
{
	libbpf_set_print(libbpf_print);
}

int bpfutil_load_failed(const char *obj, int err)
{
	p_err("cannot load the %s BPF programs into the kernel: %s%s", obj, strerror(-err),
	      err == -EPERM ? " (run as root, or with CAP_BPF and CAP_PERFMON)" : "");
	return err;
}

uint64_t bpfutil_percpu_sum(int map_fd)
{
	return bpfutil_percpu_sum_at(map_fd, 0);
}

uint64_t bpfutil_percpu_sum_at(int map_fd, uint32_t slot)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0, *vals;

	if (ncpu <= 0)
		return 0;
	vals = calloc(ncpu, sizeof(*vals));
	if (!vals)
		return 0;
	if (!bpf_map_lookup_elem(map_fd, &slot, vals))
		for (int i = 0; i < ncpu; i++)
			sum += vals[i];
	free(vals);
	return sum;
}
