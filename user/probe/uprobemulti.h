/*
 * uprobemulti.h - uprobes through a uprobe_multi BPF link (Linux 6.6+),
 * which this libbpf (1.1) does not know.
 *
 * Why: libbpf 1.1 attaches a uprobe through a perf event, and the kernel
 * destroys a perf-event uprobe under its trace-event mutex, waiting for a
 * grace period there (60-90 ms here): the next attach of any uprobe waits
 * behind it. The duty cycle's windows (dutycycle.h) attach and detach many
 * times a second, so a window opened just after another closed had its
 * probes in place only tens of ms late, or not at all (measured: 1-2
 * samples in windows that should have held ~90). A uprobe_multi link
 * attaches in ~0.1 ms whatever detach is in flight, and its breakpoints go
 * 0.05-0.4 ms after its fd is closed (the close then waits 20-40 ms,
 * which probe/detach.h takes off the caller's thread).
 */
#ifndef MEMTRACE_UPROBEMULTI_H
#define MEMTRACE_UPROBEMULTI_H

#include <stdbool.h>
#include <stdint.h>

/* enum bpf_attach_type's BPF_TRACE_UPROBE_MULTI (uapi of Linux 6.6). */
#define UPROBEMULTI_ATTACH_TYPE 48

/*
 * uprobemulti_attach - attach the program @prog_fd (loaded with expected
 * attach type UPROBEMULTI_ATTACH_TYPE) at the @cnt file offsets @offsets of
 * @path, in process @pid only (in our pid namespace). Returns the link's fd
 * (the caller closes it to detach), or -errno.
 */
int uprobemulti_attach(int prog_fd, const char *path, const uint64_t *offsets, uint32_t cnt,
		       int pid);

/* uprobemulti_attach_cookies - uprobemulti_attach() with a BPF cookie per
 * offset (@cookies[i] for @offsets[i]: bpf_get_attach_cookie() returns it
 * at that site). Returns the link's fd or -errno. */
int uprobemulti_attach_cookies(int prog_fd, const char *path, const uint64_t *offsets,
			       const uint64_t *cookies, uint32_t cnt, int pid);

/* uprobemulti_hidden - whether MEMTRACE_NO_UPROBE_MULTI (non-empty, not
 * "0") asks memtrace to use perf-event uprobes as on kernels before 6.6. */
bool uprobemulti_hidden(void);

/*
 * uprobemulti_supported - whether this kernel attaches uprobe_multi links
 * and memtrace may use them (false when uprobemulti_hidden()):
 * a no-op program is loaded and attached to a function of memtrace's own
 * (needs CAP_BPF and CAP_PERFMON; false without them). Probed once, then
 * remembered.
 */
bool uprobemulti_supported(void);

/* uprobemulti_self_offset - the file offset in /proc/self/exe of @addr, a
 * code address of this program, from /proc/self/maps. 0 or -errno. */
int uprobemulti_self_offset(uint64_t addr, uint64_t *off);

#endif
