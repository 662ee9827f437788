/*
 * bpfutil.h - the libbpf plumbing every BPF loader in probe/ and monitor/
 * shares: libbpf's log, the one message for a failed load, per-CPU counters.
 * (Prefixed bpfutil_: bpf_ is libbpf's.)
 */
#ifndef MEMTRACE_BPFUTIL_H
#define MEMTRACE_BPFUTIL_H

#include <stdint.h>

/* bpfutil_setup_logging - libbpf's messages: hidden unless MEMTRACE_DEBUG is
 * set (ours say what failed); a verifier's refusal is kept for
 * bpfutil_load_failed() to name. Idempotent. */
void bpfutil_setup_logging(void);
/*
 * bpfutil_refusal_parse - pure: out of one of libbpf's messages @msg, a
 * program's verifier log ("prog 'P': -- BEGIN PROG LOAD LOG --\n...-- END
 * PROG LOAD LOG --"), the program's name into @prog and the verifier's
 * reason into @why: the log's last line that is not its tally ("processed N
 * insns ...", and with BPF_LOG_STATS "verification time ...", "stack depth
 * ..."). Returns 0, or -ENOENT when @msg holds no such log.
 */
int bpfutil_refusal_parse(const char *msg, char *prog, size_t pn, char *why, size_t wn);
/* bpfutil_load_failed - print (p_err) that the @obj BPF programs did not load,
 * naming the privileges needed when @err is -EPERM, the kernel features of
 * @need (KF_*, probe/kfeatures.h) this kernel lacks when it lacks one (a
 * verifier's refusal on an older kernel), else the program the verifier
 * refused and its reason (its -EACCES is not a privilege: a kernel that
 * counts differently, as one whose verifier adds a bpf_loop() callback's
 * stack to its caller's); returns @err. */
int bpfutil_load_failed(const char *obj, int err, unsigned need);
/* bpfutil_check - before loading @obj: -ENOTSUP (said, as a failed load) when
 * MEMTRACE_HIDE_BPF hides a feature of @need (tests: an older kernel's
 * refusal on this one), else 0. */
int bpfutil_check(const char *obj, unsigned need);
/* bpfutil_percpu_sum - a BPF_MAP_TYPE_PERCPU_ARRAY's u64 slot 0 summed over
 * the possible CPUs; 0 when the map cannot be read. */
uint64_t bpfutil_percpu_sum(int map_fd);
/* bpfutil_percpu_sum_at - the same for slot @slot. */
uint64_t bpfutil_percpu_sum_at(int map_fd, uint32_t slot);

struct bpf_object;
/* bpfutil_obj_misses - probe hits the kernel did not run @obj's programs for
 * (each program's recursion_misses: another BPF program was running on that
 * CPU): events lost that no ring buffer counted. */
uint64_t bpfutil_obj_misses(struct bpf_object *obj);
/* bpfutil_loaded - after @obj (named @name) loaded: with MEMTRACE_BPF_STATS
 * set, one line on stderr per program, "bpf: NAME PROG verified N
 * instructions" (the verifier's count, bpf_prog_info.verified_insns: its
 * limit is 1 M, and each 100 k cost ~0.2 s of the kernel's CPU at every
 * load here; tests/e2e/cases/bpf_verifier.sh holds them to a budget). */
void bpfutil_loaded(const char *name, struct bpf_object *obj);

#endif
