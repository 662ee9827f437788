// SPDX-License-Identifier: GPL-2.0
/* util.c - error printer, number parsing, JSON strings, small files, full writes. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "lib/util.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

struct mt_opts mt_opts;

static __thread char *capture_buf;
static __thread size_t capture_len;

void p_err_capture(char *buf, size_t n)
{
	capture_buf = n ? buf : NULL;
	capture_len = n;
	if (capture_buf)
		capture_buf[0] = '\0';
}

static void vprint(const char *tag, const char *fmt, va_list ap)
{
	fprintf(stderr, "memtrace: %s", tag);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void p_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint("error: ", fmt, ap);
	va_end(ap);
	if (capture_buf) {
		va_start(ap, fmt);
		vsnprintf(capture_buf, capture_len, fmt, ap);
		va_end(ap);
	}
	if (mt_opts.json) {
		char buf[1024];

		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
		fputs("{\"event\":\"error\",\"message\":", stdout);
		json_str(stdout, buf);
		fputs("}\n", stdout);
		fflush(stdout);
	}
}

void p_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprint("warning: ", fmt, ap);
	va_end(ap);
}

void p_info(const char *fmt, ...)
{
	va_list ap;

	if (mt_opts.quiet)
		return;
	va_start(ap, fmt);
	vprint("", fmt, ap);
	va_end(ap);
}

int parse_pid(const char *s, int *pid)
{
	char *end;
	long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v <= 0 || v > 0x3fffffff)
		return -EINVAL;
	*pid = (int)v;
	return 0;
}

int parse_seconds(const char *s, double *out)
{
	static const struct {
		const char *unit;
		double secs;
	} units[] = { { "", 1 }, { "ns", 1e-9 }, { "us", 1e-6 }, { "ms", 1e-3 },
		      { "s", 1 },  { "m", 60 },    { "h", 3600 } };
	char *end;
	double v;

	if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || isinf(v))
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].unit)) {
			v *= units[i].secs;
			if (v > 1e7)
				return -EINVAL;
			*out = v;
			return 0;
		}
	return -EINVAL;
}

int parse_u64_prefix(const char *s, uint64_t *out, const char **rest)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	*out = v;
	*rest = end;
	return 0;
}

int parse_bytes(const char *s, uint64_t *out)
{
	static const char units[] = "kmgt";
	const char *rest, *u;
	uint64_t v;
	int shift = 0;

	if (parse_u64_prefix(s, &v, &rest))
		return -EINVAL;
	if (*rest) {
		u = strchr(units, rest[0] | 0x20);
		if (!u || !rest[0])
			return -EINVAL;
		shift = 10 * (int)(u - units + 1);
		rest++;
		/* k, kb, kib (any case) */
		if ((rest[0] | 0x20) == 'i' && (rest[1] | 0x20) == 'b' && !rest[2])
			rest += 2;
		else if ((rest[0] | 0x20) == 'b' && !rest[1])
			rest++;
		if (*rest)
			return -EINVAL;
	}
	if (v > (1ull << 62) >> shift)
		return -EINVAL;
	*out = v << shift;
	return 0;
}

int parse_u64(const char *s, uint64_t *out)
{
	const char *rest;
	uint64_t v;

	if (parse_u64_prefix(s, &v, &rest) || *rest)
		return -EINVAL;
	*out = v;
	return 0;
}

void util_phase(const char *what)
{
	static int on = -1;
	static uint64_t last, last_cpu;
	static long last_flt;
	struct rusage ru;
	uint64_t now, cpu;

	if (on < 0) {
		const char *e = getenv("MEMTRACE_PHASES");

		on = e && *e && strcmp(e, "0");
	}
	if (!on)
		return;
	now = mono_ns();
	getrusage(RUSAGE_SELF, &ru);
	cpu = (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
	      (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
	if (last) {
		char line[256];
		long rss = -1, hwm = -1;
		FILE *f = fopen("/proc/self/status", "r");

		while (f && fgets(line, sizeof(line), f)) {
			sscanf(line, "VmRSS: %ld", &rss);
			sscanf(line, "VmHWM: %ld", &hwm);
		}
		if (f)
			fclose(f);
		/* CPU and page faults of memtrace alone (not of the copy it reads) */
		fprintf(stderr, "phase %s: %.1f ms (cpu %.1f ms, %ld page faults; rss %ld MiB, "
			"peak %ld MiB)\n", what, (double)(now - last) / 1e6,
			(double)(cpu - last_cpu) / 1e6, ru.ru_minflt - last_flt, rss / 1024,
			hwm / 1024);
	}
	last = now;
	last_cpu = cpu;
	last_flt = ru.ru_minflt;
}

#define VIRTIO_BALLOON_F_REPORTING 5
#define BALLOON_DEVS "/sys/bus/virtio/drivers/virtio_balloon"

bool util_balloon_reports(const char *features)
{
	return features && strlen(features) > VIRTIO_BALLOON_F_REPORTING &&
	       features[VIRTIO_BALLOON_F_REPORTING] == '1';
}

/* Does a virtio balloon bound to its driver report free pages to the host? */
static bool balloon_reports_free_pages(void)
{
	bool yes = false;
	DIR *d = opendir(BALLOON_DEVS);
	struct dirent *e;

	while (d && !yes && (e = readdir(d))) {
		char path[512], *buf;

		if (strncmp(e->d_name, "virtio", 6))
			continue;
		snprintf(path, sizeof(path), BALLOON_DEVS "/%s/features", e->d_name);
		buf = read_file(path, NULL);
		yes = util_balloon_reports(buf);
		free(buf);
	}
	if (d)
		closedir(d);
	return yes;
}

bool util_hugepages_pay(bool reports, double fault_us)
{
	return !reports || fault_us >= UTIL_SLOW_FAULT_US;
}

/* The lower of two means of a first write to each of @pages fresh 4 KiB
 * pages, in us (a preemption inflates one, not both); 0 when no memory
 * could be mapped. */
static double fault_mean_us(size_t pages)
{
	size_t n = pages * 4096;
	double best = 0;

	for (int k = 0; k < 2; k++) {
		char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		uint64_t t0;
		double us;

		if (p == MAP_FAILED)
			return best;
		madvise(p, n, MADV_NOHUGEPAGE);
		t0 = mono_ns();
		for (size_t i = 0; i < n; i += 4096)
			((volatile char *)p)[i] = 1;
		us = (double)(mono_ns() - t0) / 1e3 / (double)pages;
		munmap(p, n);
		if (!k || us < best)
			best = us;
	}
	return best;
}

/* What one first write to a fresh 4 KiB page costs here, in us: over 2 x
 * 32 pages, and 2 x 128 where that lands within a factor 2 of
 * UTIL_SLOW_FAULT_US (every command decides once: 2 x 128 faults were ~3
 * ms of each command where they cost 10 us, 2 x 32 are 0.7 ms; where they
 * are cheap, ~0.03 ms). */
static double small_fault_us(void)
{
	double us = fault_mean_us(32);

	if (us > UTIL_SLOW_FAULT_US / 2 && us < UTIL_SLOW_FAULT_US * 2)
		us = fault_mean_us(128);
	return us;
}

static bool hugepages_wanted;
static double hugepages_fault_us = -1;
static char hugepages_why[256];

/* Decide once: the environment, else the balloon and a measured fault. */
static void hugepages_decide(void)
{
	const char *env = getenv("MEMTRACE_HUGEPAGES");
	double us;

	if (env && (!strcmp(env, "0") || !strcmp(env, "1"))) {
		hugepages_wanted = env[0] == '1';
		snprintf(hugepages_why, sizeof(hugepages_why),
			 "MEMTRACE_HUGEPAGES in the environment");
		return;
	}
	if (!balloon_reports_free_pages()) {
		hugepages_wanted = true;
		snprintf(hugepages_why, sizeof(hugepages_why),
			 "no free page reporting to a hypervisor");
		return;
	}
	us = small_fault_us();
	hugepages_fault_us = us;
	hugepages_wanted = util_hugepages_pay(true, us);
	snprintf(hugepages_why, sizeof(hugepages_why),
		 "this machine's virtio balloon reports free pages to its host (a fresh "
		 "2 MiB page is a block the host backs again), and a 4 KiB page fault "
		 "costs %.1f us here (%s %.0f us)", us, hugepages_wanted ? "at least" :
		 "under", UTIL_SLOW_FAULT_US);
}

bool util_hugepages_wanted(const char **why)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, hugepages_decide);
	if (why)
		*why = hugepages_why;
	return hugepages_wanted;
}

double util_page_fault_us(void)
{
	util_hugepages_wanted(NULL);
	return hugepages_fault_us;
}

void util_hugepages(void *p, size_t n)
{
	uintptr_t a = ((uintptr_t)p + (2u << 20) - 1) & ~(uintptr_t)((2u << 20) - 1);
	uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)((2u << 20) - 1);

	if (p && e > a && util_hugepages_wanted(NULL))
		madvise((void *)a, e - a, MADV_HUGEPAGE);
}

int util_cpus(void)
{
	cpu_set_t set;

	return sched_getaffinity(0, sizeof(set), &set) ? 1 : CPU_COUNT(&set);
}

int util_populate(void *p, size_t n)
{
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)4095;

	if (!p || e <= a || !madvise((void *)a, e - a, MADV_POPULATE_WRITE))
		return 0;
	return errno == EINVAL ? 0 : -errno; /* EINVAL: a kernel before 5.14 */
}

int util_populate_read(void *p, size_t n)
{
	uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + n) & ~(uintptr_t)4095;

	if (!p || e <= a || !madvise((void *)a, e - a, MADV_POPULATE_READ))
		return 0;
	return -errno;
}

void util_prefault_read(const void *p, size_t n)
{
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)4095;
	uintptr_t e = ((uintptr_t)p + n + 4095) & ~(uintptr_t)4095;

	if (p && n)
		(void)madvise((void *)a, e - a, MADV_POPULATE_READ);
}

/* Huge pages for an array of @bytes at @p when it is large. */
static void *big(void *p, size_t bytes)
{
	if (p && bytes >= (8u << 20))
		util_hugepages(p, bytes);
	return p;
}

void *util_big_alloc(size_t n, size_t esz)
{
	return big(malloc(n ? n * esz : esz), n * esz);
}

void *util_big_calloc(size_t n, size_t esz)
{
	return big(calloc(n ? n : 1, esz), n * esz);
}

void *util_huge_calloc(size_t n, size_t esz)
{
	const size_t huge = 2u << 20;
	size_t bytes, len;
	void *p = NULL;

	if (esz && n > SIZE_MAX / esz)
		return NULL;
	bytes = n ? n * esz : esz;
	len = (bytes + huge - 1) & ~(huge - 1);
	if (bytes < (1u << 20) || !util_hugepages_wanted(NULL))
		return calloc(n ? n : 1, esz);
	if (posix_memalign(&p, huge, len))
		return NULL;
	madvise(p, len, MADV_HUGEPAGE);
	memset(p, 0, bytes); /* freed memory malloc kept may be dirty */
	return p;
}

uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

double ms_since(uint64_t t0)
{
	return (double)(mono_ns() - t0) / 1e6;
}

uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* JSON's escape for byte @c into @out (NUL-terminated): \" \\ \n \r \t,
 * \u00XX for other control characters, else the byte itself. Its length. */
static size_t json_esc(unsigned char c, char out[8])
{
	static const char hex[] = "0123456789abcdef";

	switch (c) {
	case '"': memcpy(out, "\\\"", 3); return 2;
	case '\\': memcpy(out, "\\\\", 3); return 2;
	case '\n': memcpy(out, "\\n", 3); return 2;
	case '\r': memcpy(out, "\\r", 3); return 2;
	case '\t': memcpy(out, "\\t", 3); return 2;
	}
	if (c >= 0x20) {
		out[0] = (char)c;
		out[1] = '\0';
		return 1;
	}
	memcpy(out, "\\u00", 4);
	out[4] = hex[c >> 4];
	out[5] = hex[c & 15];
	out[6] = '\0';
	return 6;
}

void json_str(FILE *f, const char *s)
{
	char e[8];

	fputc('"', f);
	for (; s && *s; s++) {
		if (json_esc((unsigned char)*s, e) == 1)
			fputc(*s, f);
		else
			fputs(e, f);
	}
	fputc('"', f);
}

size_t json_str_put(char *p, size_t room, const char *s)
{
	size_t n = 0;

	if (room < 8)
		return 0;
	p[n++] = '"';
	for (; s && *s && n + 8 < room; s++)
		n += json_esc((unsigned char)*s, p + n);
	p[n++] = '"';
	return n;
}

int write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n) {
		ssize_t w = write(fd, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

char *read_file(const char *path, size_t *len)
{
	size_t cap = 4096, n = 0;
	char *buf, *tmp;
	ssize_t r;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	buf = malloc(cap + 1);
	if (!buf)
		goto err_close;
	for (;;) {
		r = read(fd, buf + n, cap - n);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			goto err_free;
		}
		if (r == 0)
			break;
		n += r;
		if (n == cap) {
			if (cap >= (64u << 20)) {
				errno = EFBIG;
				goto err_free;
			}
			cap *= 2;
			tmp = realloc(buf, cap + 1);
			if (!tmp)
				goto err_free;
			buf = tmp;
		}
	}
	buf[n] = '\0';
	if (len)
		*len = n;
	close(fd);
	return buf;

err_free:
	r = errno;
	free(buf);
	errno = (int)r;
err_close:
	r = errno;
	close(fd);
	errno = (int)r;
	return NULL;
}

const char *fmt_bytes(uint64_t b, char *buf, size_t n)
{
	static const char *units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	unsigned i = 0;

	while (v >= 1024 && i + 1 < MT_ARRAY_SIZE(units)) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, n, "%llu B", (unsigned long long)b);
	else
		snprintf(buf, n, "%.1f %s", v, units[i]);
	return buf;
}

const char *fmt_ns(uint64_t ns, char *buf, size_t n)
{
	if (ns < 1000000ull)
		snprintf(buf, n, "%.1f us", ns / 1e3);
	else if (ns < 1000000000ull)
		snprintf(buf, n, "%.2f ms", ns / 1e6);
	else
		snprintf(buf, n, "%.3f s", ns / 1e9);
	return buf;
}
