/*
 * perfmap.h - the JVM's perf map, /tmp/perf-<nspid>.map in its mount
 * namespace: the names of its compiled code, which memtrace asks the JVM to
 * write (`jcmd Compiler.perfmap`, JDK 17+) and reads at once (symres). A map
 * the JVM wrote because memtrace asked is memtrace's to remove once read; one
 * that was there before (the user's, -XX:+DumpPerfMapAtExit's) stays.
 */
#ifndef MEMTRACE_PERFMAP_H
#define MEMTRACE_PERFMAP_H

#include <stdbool.h>

#include "jvm/proc.h"

struct perfmap {
	int tmpfd;   /* the JVM's /tmp (-1: none opened) */
	int pid, nspid;
	bool made;   /* the map was absent before the request: ours to remove */
};

/*
 * perfmap_request - ask JVM @p to write its perf map, noting in *@m whether
 * it was there before. When the JVM cannot (JDK 16 or older, a failed
 * command), warns once (p_warn) that @unnamed ("JIT frames", ...) stay
 * unnamed. Returns 0 or -errno; *@m is valid for perfmap_done either way.
 */
int perfmap_request(const struct mt_proc *p, struct perfmap *m, const char *unnamed);

/*
 * perfmap_done - the map has been read: remove it if memtrace made the JVM
 * write it; one that cannot be removed is named in a warning, with its path.
 * Closes what perfmap_request opened; a second call is a no-op.
 */
void perfmap_done(struct perfmap *m);

#endif
