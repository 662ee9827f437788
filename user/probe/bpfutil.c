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

/* The last verifier refusal libbpf logged: the program and the reason. */
static char refused_prog[64], refused_why[256];

#define LOG_BEGIN "-- BEGIN PROG LOAD LOG --"
#define LOG_END "-- END PROG LOAD LOG --"

int bpfutil_refusal_parse(const char *msg, char *prog, size_t pn, char *why, size_t wn)
{
	const char *b = strstr(msg, LOG_BEGIN), *e, *p, *q, *line = NULL;
	size_t len = 0;

	if (!b || !(e = strstr(b, LOG_END)))
		return -ENOENT;
	/* the program: "prog 'NAME': " before the log's beginning */
	prog[0] = '\0';
	if ((p = strstr(msg, "prog '")) && p < b && (q = strchr(p + 6, '\'')) && q < b)
		snprintf(prog, pn, "%.*s", (int)(q - p - 6), p + 6);
	/* the reason: the last line of the log that is not its tally */
	for (p = b + strlen(LOG_BEGIN); p < e; p = q + 1) {
		while (p < e && *p == '\n')
			p++;
		if (p >= e)
			break;
		q = memchr(p, '\n', (size_t)(e - p));
		if (!q)
			q = e;
		if (strncmp(p, "processed ", 10) && strncmp(p, "verification time", 17) &&
		    strncmp(p, "stack depth", 11)) {
			line = p;
			len = (size_t)(q - p);
		}
		if (q >= e)
			break;
	}
	if (!line)
		return -ENOENT;
	snprintf(why, wn, "%.*s", (int)len, line);
	return 0;
}

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	char *msg = NULL;
	va_list aq;
	int n;

	if (getenv("MEMTRACE_DEBUG"))
		return vfprintf(stderr, fmt, ap);
	if (level != LIBBPF_WARN || !strstr(fmt, LOG_BEGIN))
		return 0;
	/* a verifier log (it can be megabytes): only its reason is kept */
	va_copy(aq, ap);
	n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	if (n < 0 || !(msg = malloc((size_t)n + 1)))
		return 0;
	vsnprintf(msg, (size_t)n + 1, fmt, ap);
	bpfutil_refusal_parse(msg, refused_prog, sizeof(refused_prog), refused_why,
			      sizeof(refused_why));
	free(msg);
	return 0;
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
	if (err != -EPERM && refused_why[0]) {
		p_err("cannot load the %s BPF programs into the kernel: its verifier refused "
		      "program '%s': %s (not a matter of privileges: this kernel's verifier "
		      "judges the program differently from the kernels memtrace was tested on; "
		      "`MEMTRACE_DEBUG=1` prints the verifier's whole log - please report it)",
		      obj, refused_prog, refused_why);
		refused_why[0] = '\0';
		return err;
	}
	refused_why[0] = '\0'; /* not left for a later load's error */
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

/* Fetches PROG's info into *INFO; returns 0 or -errno (the program not loaded). */
static int prog_info(struct bpf_program *prog, struct bpf_prog_info *info)
{
	uint32_t len = sizeof(*info);
	int fd = bpf_program__fd(prog);

	memset(info, 0, sizeof(*info));
	if (fd < 0)
		return -EBADF;
	return bpf_obj_get_info_by_fd(fd, info, &len) ? -errno : 0;
}

uint64_t bpfutil_obj_misses(struct bpf_object *obj)
{
	struct bpf_program *prog;
	struct bpf_prog_info info;
	uint64_t sum = 0;

	bpf_object__for_each_program(prog, obj)
		if (!prog_info(prog, &info))
			sum += info.recursion_misses;
	return sum;
}

void bpfutil_loaded(const char *name, struct bpf_object *obj)
{
	struct bpf_program *prog;
	struct bpf_prog_info info;

	if (!getenv("MEMTRACE_BPF_STATS"))
		return;
	bpf_object__for_each_program(prog, obj)
		if (!prog_info(prog, &info))
			fprintf(stderr, "bpf: %s %s verified %u instructions\n", name,
				bpf_program__name(prog), info.verified_insns);
}
