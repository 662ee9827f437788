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
#include "probe/kfeatures.h"
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

int bpfutil_load_failed(const char *obj, int err, unsigned need)
{
	struct kfeatures kf;
	unsigned missing = 0;
	char what[256];

	if (err != -EPERM && need && !kfeatures_probe(&kf))
		missing = kfeatures_missing(&kf, need);
	if (missing) {
		kfeatures_describe(missing, what, sizeof(what));
		p_err("cannot load the %s BPF programs into the kernel: kernel %s lacks %s%s "
		      "(`memtrace doctor` lists the BPF features it found; docs/limitations.md "
		      "says which kernel each command needs)", obj, kf.release, what,
		      kf.hidden ? ", hidden by MEMTRACE_HIDE_BPF" : "");
		return err;
	}
	p_err("cannot load the %s BPF programs into the kernel: %s%s", obj, strerror(-err),
	      err == -EPERM ? " (run as root, or with CAP_BPF and CAP_PERFMON)" : "");
	return err;
}

int bpfutil_check(const char *obj, unsigned need)
{
	if (!(kfeatures_hidden() & need))
		return 0;
	return bpfutil_load_failed(obj, -ENOTSUP, need);
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

uint64_t bpfutil_obj_misses(struct bpf_object *obj)
{
	struct bpf_program *prog;
	uint64_t sum = 0;

	bpf_object__for_each_program(prog, obj) {
		struct bpf_prog_info info;
		uint32_t len = sizeof(info);
		int fd = bpf_program__fd(prog);

		memset(&info, 0, sizeof(info));
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			sum += info.recursion_misses;
	}
	return sum;
}
