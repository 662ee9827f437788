// SPDX-License-Identifier: GPL-2.0
/* cmdopt.c - what the subcommands share: common options, the target JVM, a
 * heap snapshot of it, the recording FILE argument (see cmdopt.h). */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "memtrace/jstack.h"
#include "jvm/privs.h"
#include "monitor/recording_read.h"
#include "heap/snapshot.h"
#include "heap/snaptake.h"
#include "sink/sinks.h"
#include "lib/util.h"

#define MAX_PAUSE_MS 3600000 /* the longest --max-pause: one hour */

int cmdopt_common(int c, const char *arg, struct cmdopt *o)
{
	switch (c) {
	case 'p':
		if (parse_pid(arg, &o->pid)) {
			if (o->terse)
				p_err("invalid pid '%s'", arg);
			else
				p_err("invalid pid '%s': expected a positive number", arg);
			return 2;
		}
		return MT_CMDOPT_MORE;
	case 'd':
		if (parse_seconds(arg, &o->duration)) {
			p_err("invalid --duration '%s': expected %s", arg, MT_DURATION_HELP);
			return 2;
		}
		return MT_CMDOPT_MORE;
	case 't':
		if (parse_u64(arg, &o->top) || !o->top) {
			p_err("invalid --top '%s'", arg);
			return 2;
		}
		return MT_CMDOPT_MORE;
	case 'm':
		if (parse_u64(arg, &o->max_pause) || o->max_pause > MAX_PAUSE_MS) {
			p_err("invalid --max-pause '%s' (milliseconds)", arg);
			return 2;
		}
		o->has_max_pause = true;
		return MT_CMDOPT_MORE;
	case 'j':
		mt_opts.json = true;
		return MT_CMDOPT_MORE;
	case 'h':
		o->usage(stdout);
		return 0;
	default:
		o->usage(stderr);
		return 2;
	}
}

int cmdopt_no_args(int argc, char **argv, const char *cmd, void (*usage)(FILE *f))
{
	if (optind >= argc)
		return 0;
	p_err("%s takes no argument (got '%s')", cmd, argv[optind]);
	usage(stderr);
	return 2;
}

int cmdopt_need_pid(const struct cmdopt *o, const char *cmd)
{
	if (o->pid)
		return 0;
	p_err("%s needs -p PID (`memtrace ps` lists the JVMs)", cmd);
	return -EINVAL;
}

int cmdopt_open_jvm(int pid, const char *bpf_for, struct mt_proc *p)
{
	int err;

	if (bpf_for) {
		err = privs_require_bpf(bpf_for);
		if (err)
			return err;
	}
	err = proc_open(pid, p);
	if (err)
		proc_explain(pid, err);
	return err;
}

int cmdopt_snapshot(const struct cmdopt *o, uint32_t flags, enum heapmem_use use,
		    struct mt_snapshot *s)
{
	struct mt_proc p;
	int err;

	snapshot_init(s);
	err = cmdopt_open_jvm(o->pid, NULL, &p);
	if (err)
		return err;
	if (o->has_max_pause)
		flags |= MT_AP_HEAP_MAXPAUSE;
	err = snaptake_once(&p, flags, (uint32_t)o->max_pause, NULL, 0, use, s);
	if (err)
		return err;
	snapshot_print_walk(s);
	return 0;
}

int cmdopt_recording(int argc, char **argv, int i, const char *cmd, struct recording_reader **r,
		     struct recording_header *h)
{
	if (i != argc - 1) {
		p_err("%s needs one recording file (`memtrace %s FILE`)", cmd, cmd);
		return 2;
	}
	*r = recording_open(argv[i], h);
	if (!*r) {
		p_err("cannot read %s: %s", argv[i],
		      errno == EINVAL ? "not a memtrace recording" :
		      errno == ENODATA ? "the file was cut before the end of its header line "
					 "(nothing of the recording is there)" : strerror(errno));
		return 1;
	}
	return 0;
}

int cmdopt_stack_depth(const char *arg, uint32_t *depth)
{
	uint64_t v;

	if (parse_u64(arg, &v) || v < 1 || v > MT_JSTACK_MAX_DEPTH) {
		p_err("invalid --stack-depth '%s': expected a number of frames from 1 to %d",
		      arg, MT_JSTACK_MAX_DEPTH);
		return 2;
	}
	*depth = (uint32_t)v;
	return 0;
}

bool cmdopt_files(int opt, const char *arg, struct sink_files *f)
{
	switch (opt) {
	case 'C':
		f->collapsed = arg;
		return true;
	case 'F':
		f->flamegraph = arg;
		return true;
	case 'P':
		f->pprof = arg;
		return true;
	}
	return false;
}
