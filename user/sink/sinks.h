/*
 * sinks.h - writers of a struct profile (profile.h): collapsed stacks,
 * a self-contained HTML flame graph, and pprof. Each returns 0 or -errno and
 * prints nothing: the caller says which file failed (p_err) and why.
 */
#ifndef MEMTRACE_SINKS_H
#define MEMTRACE_SINKS_H

#include <stdio.h>

#include "analysis/profile.h"

/*
 * sink_collapsed_write - one line per distinct stack that weighs something
 * (a stack of 0 bytes is left out), "root;...;leaf BYTES",
 * the input format of Brendan Gregg's flamegraph.pl and of speedscope,
 * heaviest stack first. Java frames carry async-profiler's kind suffix
 * ("_[j]" C2, "_[1]" C1, "_[0]" interpreted, "_[i]" inlined), which
 * flamegraph.pl --color=java colours by; stacks that differ only by line
 * numbers are one line. In frame names ';' becomes ':' and control
 * characters become '?' (they would break the format); spaces are kept
 * (readers split at the last space). Returns 0, or -EIO if writing failed.
 */
int sink_collapsed_write(const struct profile *p, FILE *f);

/*
 * sink_flamegraph_write - one self-contained HTML page (inline CSS and JS,
 * no network access) drawing the profile as a flame graph: root at the
 * bottom, widths proportional to bytes; hovering a frame shows its name, its
 * bytes and its share of the total, clicking zooms into it, a search box
 * highlights matching frames. @title (NULL: "memtrace allocation profile")
 * is HTML-escaped; frame names are written as escaped JS string literals.
 * Returns 0, -ENOMEM, or -EIO if writing failed.
 */
int sink_flamegraph_write(const struct profile *p, FILE *f, const char *title);

/*
 * sink_pprof_write - a gzip'd profile.proto (what `go tool pprof`, Pyroscope
 * and Grafana read) at @path, with two sample types: alloc_space/bytes
 * (the default) and alloc_objects/count. One function per frame name and
 * kind (system_name: the name with its collapsed-stack suffix, filename: the
 * source file), one location per frame and line, frames inlined into a
 * compiled frame as further lines of its location. The file is written to @path.tmp and renamed, so a
 * reader never sees half a profile. Returns 0 or -errno.
 */
int sink_pprof_write(const struct profile *p, const char *path);

/*
 * sink_stacks_json - the @top heaviest stacks of @p as one JSON array:
 * [{"bytes","samples","leaf","frames":[{"name","kind","file","line"}...]}],
 * frames root first without the leaf (the allocated class), "kind" one of
 * interpreted, c1, c2, inlined, native, other; "file" and "line" only when
 * known. Returns 0, -ENOMEM or -EIO.
 */
int sink_stacks_json(const struct profile *p, FILE *f, size_t top);

/* The files a command writes a profile to; NULL: not asked for. */
struct sink_files {
	const char *collapsed, *flamegraph, *pprof;
};

/*
 * sink_write_files - @p to each file of @files (the flame graph titled
 * @title). Unlike the sinks above it prints what failed (p_err), once per
 * file, and goes on with the others. Returns 0 or -EIO.
 */
int sink_write_files(const struct profile *p, const struct sink_files *files, const char *title);

#endif
