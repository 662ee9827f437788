/* cmdopt.h - what the subcommands (user/cmd_*.c) share: the common options
 * (-p PID, -d S, --top N, --max-pause MS, -j, -h), opening the target JVM,
 * taking a heap snapshot of it, and opening the one recording FILE argument.
 * Every function prints its own error (p_err) once; callers only return.
 * Commands parse with getopt_long() in GNU order: options anywhere among the
 * arguments, `--` ends them; each sets optind = 0 first (glibc's full
 * reinitialisation; 1 keeps the previous scan's state). */
#ifndef MEMTRACE_CMDOPT_H
#define MEMTRACE_CMDOPT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "heap/heapmem.h"
#include "jvm/proc.h"

struct mt_snapshot;
struct recording_header;
struct recording_reader;
struct sink_files;

/* The long options sampling_common_opt() handles (sampling.h: -p, -d,
 * --interval, --depth, --max-samples), for the head of a command's table. */
#define MT_CMDOPT_SAMPLING_LONGOPTS                               \
	{ "pid", required_argument, NULL, 'p' },                  \
	{ "duration", required_argument, NULL, 'd' },             \
	{ "interval", required_argument, NULL, 'i' },             \
	{ "depth", required_argument, NULL, 'D' },                \
	{ "max-samples", required_argument, NULL, 'M' }

/* cmdopt_common()'s answer when option parsing goes on; any other is an exit code. */
#define MT_CMDOPT_MORE (-1)

/*
 * The options most commands share. A command sets usage, terse and its
 * defaults, handles the getopt letters it gives another meaning (vmstructs'
 * -d, record's -t, ...) itself and passes every other one to cmdopt_common().
 */
struct cmdopt {
	void (*usage)(FILE *f); /* prints the command's usage text to f */
	bool terse;             /* "invalid pid 'X'" without ": expected a positive number" */
	int pid;                /* -p/--pid PID; 0 until given */
	double duration;        /* -d/--duration S; 0 until given */
	uint64_t top;           /* -t/--top N (> 0); the command's default until given */
	uint64_t max_pause;     /* -m/--max-pause MS (<= 3600000); 0 until given */
	bool has_max_pause;     /* --max-pause was given */
};

/*
 * cmdopt_common - handle @c, one getopt_long() result with its argument @arg:
 * 'p' pid, 'd' duration, 't' top, 'm' max-pause into @o, 'j' sets
 * mt_opts.json, 'h' prints the usage on stdout; anything else (getopt's '?')
 * prints the usage on stderr.
 * Returns MT_CMDOPT_MORE when parsing goes on, else the exit code the command
 * returns at once: 0 after -h, 2 after a bad value (printed) or a bad option.
 */
int cmdopt_common(int c, const char *arg, struct cmdopt *o);

/*
 * cmdopt_no_args - after a getopt_long() loop (GNU order: options anywhere,
 * `--` ends them): refuse what is left of @argv for a command that takes no
 * argument. Prints "@cmd takes no argument (got 'X')" and the usage on
 * stderr. Returns 0, or 2 (the exit code).
 */
int cmdopt_no_args(int argc, char **argv, const char *cmd, void (*usage)(FILE *f));

/*
 * cmdopt_need_pid - after the options: without -p, print "@cmd needs -p PID
 * (`memtrace ps` lists the JVMs)". Returns 0 when a pid was given, else
 * -EINVAL (the caller adds its usage if it wants and exits 2).
 */
int cmdopt_need_pid(const struct cmdopt *o, const char *cmd);

/*
 * cmdopt_open_jvm - fill *p for host pid @pid (proc_open()), printing
 * proc_explain()'s message on failure. With @bpf_for (e.g. "memtrace gc"),
 * first check the privileges BPF needs (privs_require_bpf(@bpf_for)).
 * Returns 0 or -errno (printed).
 */
int cmdopt_open_jvm(int pid, const char *bpf_for, struct mt_proc *p);

/*
 * cmdopt_snapshot - open JVM o->pid, take a heap snapshot with MT_AP_HEAP_*
 * @flags (plus MT_AP_HEAP_MAXPAUSE and the limit when @o has --max-pause)
 * for @use (heap/heapmem.h: what the command builds from it, its memory
 * bounded) and print the walk's line (snapshot_print_walk()). *s is always
 * initialised: the caller frees it with snapshot_free() either way.
 * Returns 0 or -errno (printed).
 */
int cmdopt_snapshot(const struct cmdopt *o, uint32_t flags, enum heapmem_use use,
		    struct mt_snapshot *s);

/*
 * cmdopt_recording - the command's one FILE argument, argv[@i] with nothing
 * after it, opened as a recording (recording_open()) into *r and *h. Returns 0
 * (the caller closes *r with recording_close_read()), or the exit code after
 * printing why not: 2 when argv[@i] is not the last argument ("@cmd needs one
 * recording file (`memtrace @cmd FILE`)"), 1 when FILE cannot be read.
 */
int cmdopt_recording(int argc, char **argv, int i, const char *cmd, struct recording_reader **r,
		     struct recording_header *h);

/* cmdopt_files - the profile files a command writes on request: --collapsed
 * FILE ('C'), --flamegraph FILE ('F'), --pprof FILE ('P') into @f. true if
 * @opt was one of them. */
bool cmdopt_files(int opt, const char *arg, struct sink_files *f);

/* cmdopt_stack_depth - --stack-depth N into *@depth: Java frames kept per
 * stack, 1..MT_JSTACK_MAX_DEPTH. 0, or 2 (printed) for anything else. */
int cmdopt_stack_depth(const char *arg, uint32_t *depth);

#endif
