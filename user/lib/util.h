/* util.h - the one error printer, option parsing helpers, time. */
#ifndef MEMTRACE_UTIL_H
#define MEMTRACE_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Userspace code never uses kernel-style integer typedefs. */
#pragma GCC poison u8 u16 u32 u64

#define MT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Global options every subcommand honours. */
struct mt_opts {
	bool json;   /* --json: JSON lines on stdout */
	bool quiet;  /* -q: no progress lines on stderr */
	int walk;    /* --walk: how heap snapshots are taken (enum heapfreeze_mode in
		      * heap/heapfreeze.h: 0 auto, 1 frozen, 2 paused) */
	uint64_t max_memory; /* --max-memory: the most memtrace holds for a heap
			      * answer, in bytes (heap/heapmem.h); 0: what is free */
};
extern struct mt_opts mt_opts;

/*
 * p_err - print "memtrace: error: ..." once, where the failure is found.
 * Callers return the error code upward without printing again. With --json
 * the message also goes to stdout as {"event":"error","message":...}.
 */
void p_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * p_err_capture - on the calling thread only, also keep the text of the last
 * p_err() in @buf (@n bytes; "" until one comes); NULL stops. For a worker
 * thread that must hand the reason on (memtrace serve's API) as well as log it.
 */
void p_err_capture(char *buf, size_t n);
/* p_warn - "memtrace: warning: ..." on stderr. */
void p_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* p_info - a progress line on stderr unless -q. */
void p_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse a decimal pid > 0. Returns 0 or -EINVAL. */
int parse_pid(const char *s, int *pid);
/* Parse a duration into seconds: a non-negative decimal number of seconds
 * (fractions allowed), or one with a unit: ns, us, ms, s, m, h ("500ms",
 * "5s", "2m", "1.5h"); at most 1e7 s. Returns 0 or -EINVAL. */
int parse_seconds(const char *s, double *out);
/* The usage text's word for what parse_seconds() takes. */
#define MT_DURATION_HELP "a duration: 20 (seconds), 500ms, 5s, 2m, 1h"
/* Parse an unsigned decimal integer. Returns 0 or -EINVAL. */
int parse_u64(const char *s, uint64_t *out);
/* parse_u64_prefix - the unsigned decimal integer @s begins with into *@out,
 * and where the rest (a unit, say) begins into *@rest. 0, or -EINVAL (no
 * digits, a minus sign, out of range). */
int parse_u64_prefix(const char *s, uint64_t *out, const char **rest);
/* Parse a byte count with an optional unit: 512, 64k, 300M, 2G, 1T (also
 * kb/KiB, mb/MiB, ...; powers of 1024). Returns 0 or -EINVAL (no digits, an
 * unknown unit, or over 2^62). */
int parse_bytes(const char *s, uint64_t *out);

/* CLOCK_MONOTONIC in ns: the clock bpf_ktime_get_ns() uses. */
uint64_t mono_ns(void);
/* util_phase - with MEMTRACE_PHASES=1 in the environment, print "phase
 * @what: N ms (rss R MiB, peak P MiB)" (since the previous call, or the
 * first; the process's resident memory now and at most so far) to stderr:
 * where a command's time and memory go, for benchmarks and the curious.
 * Otherwise nothing. */
void util_phase(const char *what);
/* util_hugepages - ask the kernel for transparent huge pages behind the
 * 2 MiB-aligned part of [@p, @p + @n) (a big array about to be written
 * through: one fault per 2 MiB instead of per 4 KiB), when
 * util_hugepages_wanted(). No effect where THP is off; never fails. */
void util_hugepages(void *p, size_t n);
/* util_populate - fault in the pages wholly inside @p .. @p + @n now
 * (MADV_POPULATE_WRITE; their contents unchanged), not at their first
 * writes. Returns 0 (also on a kernel without it, and for @p NULL), or
 * -errno when the kernel could not (-ENOMEM: no memory for them). */
int util_populate(void *p, size_t n);
/* util_prefault_read - map the pages under @p .. @p + @n (a mapped file's
 * bytes about to be read through) in one call (MADV_POPULATE_READ), not a
 * fault at each page's first read. A hint: never fails, no effect on a
 * kernel before 5.14 or for @p NULL. */
void util_prefault_read(const void *p, size_t n);
/* util_populate_read - as util_prefault_read() for the page-aligned part of
 * @p .. @p + @n, but says how it went: 0, or -errno (-EINVAL on a kernel
 * before 5.14: nothing done). */
int util_populate_read(void *p, size_t n);
/* util_cpus - the CPUs this process may run on (its affinity; 1 when it
 * cannot be read). */
int util_cpus(void);

/*
 * util_hugepages_wanted - do huge pages pay off for fresh big arrays here?
 * Yes where the machine keeps its free memory. Where it hands its free
 * 2 MiB blocks back to its hypervisor (a virtio balloon with free page
 * reporting) a huge page is a block the host must back again: 5.6 ms per
 * 2 MiB (~11 us per 4 KiB of it) on one VM of this project's, where 4 KiB
 * pages came from the smaller free blocks the kernel keeps, at 0.3-0.5 us
 * a fault. On another (a PVM guest, whose page tables the host shadows) a
 * 4 KiB fault itself cost ~10 us, huge pages 3-8 us per 4 KiB, and huge
 * pages took a 10 M-object `heap --retained` from 2.7 to 2.2 s. So there the
 * first write to fresh small pages is timed (~3 ms where faults are slow,
 * ~0.1 ms where not; util_hugepages_pay() decides). MEMTRACE_HUGEPAGES=1
 * or 0 in the environment overrides. Decided once per process; *@why (may
 * be NULL) gets the reason and the figure, for doctor.
 */
bool util_hugepages_wanted(const char **why);
/* util_hugepages_pay - the decision util_hugepages_wanted() makes from
 * whether a balloon @reports free pages and what a 4 KiB page fault costs,
 * @fault_us: huge pages unless it reports and a fault costs less than
 * UTIL_SLOW_FAULT_US (under ~half a fresh huge page's cost per 4 KiB of it,
 * 5.6-11 us measured). Pure. */
#define UTIL_SLOW_FAULT_US 4.0
/* util_page_fault_us - the 4 KiB fault util_hugepages_wanted() timed, in
 * us, or -1 where it decided without timing one. */
double util_page_fault_us(void);
bool util_hugepages_pay(bool reports, double fault_us);
/* util_balloon_reports - does a virtio device's sysfs "features" text (one
 * '0'/'1' per feature bit) have VIRTIO_BALLOON_F_REPORTING (bit 5)? Pure. */
bool util_balloon_reports(const char *features);
/* util_big_alloc - malloc() of @n entries of @esz bytes (room for one when
 * @n is 0), util_hugepages() when 8 MiB or more: the per-object arrays of a
 * heap of millions (every such array: a 4 KiB page costs a host fault at its
 * first use on a VM whose host shadows the page tables, populated or not -
 * 40 MiB 68 ms against 2 ms, see snaptake.c's prewarm()). NULL on ENOMEM;
 * the caller frees it. */
void *util_big_alloc(size_t n, size_t esz);
/* util_big_calloc - util_big_alloc() zeroed (calloc(): the kernel's zero
 * pages, untouched ones cost nothing). */
void *util_big_calloc(size_t n, size_t esz);
/* util_huge_calloc - @n zeroed entries of @esz bytes for an array touched
 * all over (a bitmap set at random): from 1 MiB on, where huge pages are
 * wanted, on a 2 MiB boundary and rounded up to one, in 2 MiB pages (a 2
 * MiB bitmap in 4 KiB pages is 512 faults at its first touches, ~5 ms on a
 * VM whose faults cost 10 us; util_big_calloc() takes huge pages only from
 * 8 MiB on and only for the 2 MiB blocks inside). Else calloc(). NULL on
 * ENOMEM; the caller frees it. */
void *util_huge_calloc(size_t n, size_t esz);
/* Milliseconds since @t0, a mono_ns() value. */
double ms_since(uint64_t t0);
/* CLOCK_REALTIME in ns. */
uint64_t real_ns(void);

/* Write s as a JSON string literal (with quotes) to f ("" for NULL). */
void json_str(FILE *f, const char *s);
/* json_str_put - the JSON string literal of @s (with quotes; "" for NULL)
 * into @p, at most @room bytes (its end cut off to fit; not NUL-terminated;
 * nothing when @room < 8). Returns the bytes written. */
size_t json_str_put(char *p, size_t room, const char *s);

/* write_all - write all @n bytes of @buf to @fd, again after EINTR and short
 * writes. Returns 0 or -errno. */
int write_all(int fd, const void *buf, size_t n);

/* Read a whole small file into a malloc'd NUL-terminated buffer (caller frees). */
char *read_file(const char *path, size_t *len);

/* Format a byte count as "12.3 MiB" into buf; returns buf. */
const char *fmt_bytes(uint64_t b, char *buf, size_t n);
/* Format nanoseconds as "1.234 ms" into buf; returns buf. */
const char *fmt_ns(uint64_t ns, char *buf, size_t n);

#endif
