/*
 * perfdata.h - a JVM's hsperfdata file (the shared-memory counters jstat and
 * `jcmd PerfCounter.print` read), opened read-only from outside.
 *
 * HotSpot keeps /tmp/hsperfdata_<user>/<pid> (pid and /tmp as the JVM sees
 * them, so it is reached through /proc/PID/root) mapped and updates it in
 * place: a prologue (magic 0xcafec0c0, byte order, version 2.x, the entry
 * table's offset and count) and entries (length, name offset, vector length,
 * type 'J' for a 64-bit long, units, variability, data offset). memtrace uses
 * it for the JVM's own account of its stops -- sun.rt.safepoints (count),
 * sun.rt.safepointSyncTime and sun.rt.safepointTime (ticks of
 * sun.os.hrt.frequency; their sum is the whole stop: struct mt_safepoints) --
 * so the pause it prints for a heap walk is the JVM's figure, not a timing
 * taken around it. -XX:-UsePerfData (or
 * -XX:+PerfDisableSharedMem) leaves no file: callers fall back.
 */
#ifndef MEMTRACE_PERFDATA_H
#define MEMTRACE_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mt_proc;
struct mt_perfdata;

/*
 * perfdata_open_file - open @path read-only, copy and check its prologue and
 * entry table (counters are then read from the file itself, each time: the
 * file's owner may rewrite or cut it, so nothing of it is mapped). Returns the handle (the caller frees it with perfdata_free), or NULL
 * with errno set and a reason in @why: ENOENT (no file), EINVAL (not an
 * hsperfdata file, another byte order, version or a table out of bounds).
 */
struct mt_perfdata *perfdata_open_file(const char *path, char *why, size_t n);
/*
 * perfdata_open - the hsperfdata file of the JVM @p (found under
 * p->root/tmp/hsperfdata_* as p->nspid, owned by the JVM's uid). As above.
 */
struct mt_perfdata *perfdata_open(const struct mt_proc *p, char *why, size_t n);
/* perfdata_free - close; NULL is a no-op. */
void perfdata_free(struct mt_perfdata *pd);

/* perfdata_long - the current value of the long counter @name: 0 or -ENOENT. */
int perfdata_long(const struct mt_perfdata *pd, const char *name, int64_t *v);

/* The JVM's safepoints so far. HotSpot adds to sun.rt.safepointSyncTime the
 * time to reach each safepoint (its log's "Reaching safepoint"), at its
 * synchronisation, and to sun.rt.safepointTime the rest, up to its end
 * (JDK 17: "Cleanup" + "At safepoint", JDK 25: "At safepoint" + "Leaving
 * safepoint"), at its very end; their sum is -Xlog:safepoint's "Total" to
 * the tick (checked on both JDKs: e2e walk_pause). */
struct mt_safepoints {
	uint64_t count;          /* sun.rt.safepoints: counted at each one's begin */
	uint64_t sync_ns;        /* reaching them */
	uint64_t rest_ns;        /* from synchronised to the end */
	uint64_t time_ns;        /* sync_ns + rest_ns: the whole stops */
};

/* perfdata_safepoints - read them (and the tick frequency): 0 or -ENOENT. */
int perfdata_safepoints(const struct mt_perfdata *pd, struct mt_safepoints *s);

/* The counters at the start of something memtrace asked the JVM to do. */
struct mt_sp_window {
	bool ok;                 /* counters read (a JVM with hsperfdata) */
	struct mt_safepoints at;
};

/* perfdata_window_begin - read the counters into *@w; @pd may be NULL (no file). */
void perfdata_window_begin(const struct mt_perfdata *pd, struct mt_sp_window *w);
/*
 * perfdata_window_end - the safepoints since perfdata_window_begin(@w): their
 * number (0, 1, ...) with their total time in *@ns, or -1 when unknown (no
 * counters). With exactly 1, *@ns is the pause of what memtrace asked for.
 * A safepoint that has begun but not ended (counted, its time not yet added:
 * the thread that asked for it can run before the VM thread has finished
 * restarting the others) is waited for, up to PERFDATA_SETTLE_MS; -1 if it
 * does not end by then.
 */
int perfdata_window_end(const struct mt_perfdata *pd, const struct mt_sp_window *w,
			uint64_t *ns);
#define PERFDATA_SETTLE_MS 200

#endif
