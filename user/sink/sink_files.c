// SPDX-License-Identifier: GPL-2.0
/* sink_files.c - a profile written to the files a command was asked for. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sink/sinks.h"
#include "lib/util.h"

/* Write @p to @path with @write (a text sink); 0 or -errno, printed. */
static int write_one(const struct profile *p, const char *path, const char *what,
		     int (*write)(const struct profile *, FILE *, const char *), const char *title)
{
	FILE *f = fopen(path, "we");
	int err = f ? write(p, f, title) : -errno;

	if (f && fclose(f) && !err)
		err = -errno;
	if (err)
		p_err("cannot write %s to %s: %s", what, path, strerror(-err));
	return err;
}

static int collapsed(const struct profile *p, FILE *f, const char *title)
{
	(void)title;
	return sink_collapsed_write(p, f);
}

int sink_write_files(const struct profile *p, const struct sink_files *files, const char *title)
{
	int err = 0, e;

	if (files->collapsed &&
	    write_one(p, files->collapsed, "collapsed stacks", collapsed, title))
		err = -EIO;
	if (files->flamegraph &&
	    write_one(p, files->flamegraph, "the flame graph", sink_flamegraph_write, title))
		err = -EIO;
	if (files->pprof && (e = sink_pprof_write(p, files->pprof))) {
		p_err("cannot write pprof to %s: %s", files->pprof, strerror(-e));
		err = -EIO;
	}
	return err;
}
