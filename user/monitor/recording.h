/*
 * recording.h - memtrace's recording file: the sequencer's reported stream,
 * JSON lines (one JSON object per line), gzip-compressed (zlib).
 *
 * Framing (what survives the writer): the file is a series of gzip members
 * (RFC 1952; `zcat` and Python's gzip read it as one stream). The header line
 * is a member of its own; then each member holds whole lines and is finished
 * (deflate's end, CRC-32 and length) when it reaches REC_MEMBER_BYTES of
 * JSON or when recording_tick() finds it older than REC_MEMBER_NS, and its
 * bytes are handed to the kernel at once (write(2), then writeback started
 * with sync_file_range). So a writer killed with -9 loses at most the last
 * second; on a write error (ENOSPC, EIO) the writer cuts the file back to its
 * last complete member, then tries to append the trailer with the error.
 * The reader takes the members one by one and hands out lines of a member
 * only once its CRC checked (a member over REC_VERIFY_BYTES, which this
 * writer never makes - a recording written before the framing is one member
 * - is handed out as it is decoded). Where the file ends before its trailer
 * recording_cut() says what is there and where it stops:
 *   torn     the last member ends inside (the writer was killed, the disk
 *            filled up, the file was cut, the host crashed): the complete
 *            lines decoded from its start are read (a prefix of what was
 *            written); zeros at the end of the file (REC_ZERO_TAIL) are
 *            not taken for its data
 *   corrupt  a member fails deflate or its CRC: nothing of it is read, nor
 *            anything after it
 *   garbage  bytes after the last member that are not a gzip member (zeros:
 *            a host that crashed before its file system wrote the data)
 *   no_trailer  the file ends after a complete member but has no trailer
 *            (killed between two members, or a trailer that did not fit)
 *   writer_error  the trailer says the writer failed ("error": its reason)
 * Every complete event before the cut is read; rules 1-5 hold on any prefix
 * of a valid stream, so `check` judges what is there.
 *
 * Line 1, the header:
 *   {"memtrace_recording":1,"pid":P,"nspid":P,"jdk":"17.0.9","libjvm":"...",
 *    "start_mono_ns":T0,"mono_to_real_ns":D,"filter":"--categories ... (as typed)"}
 *   start_mono_ns is CLOCK_MONOTONIC when recording began; add mono_to_real_ns
 *   to any monotonic time to get Unix epoch ns.
 * Then one line per reported event, in stream order:
 *   {"k":"name","id":N,"s":"text"}     the id service: defines name id N once,
 *                                      before its first use
 *   {"k":KIND,"t":TS,...}              an event (include/memtrace/events.h),
 *                                      KIND one of type_create, type_load,
 *                                      type_reclaim, obj_create, obj_reclaim,
 *                                      thread_create, thread_rename,
 *                                      thread_destroy, enter, leave, pool,
 *                                      alloc, acquire, release, wait_begin,
 *                                      wait_end, ref, lost, gc_cause
 *   with these members, each omitted when 0: "f" flags (1 lazy, 2 inferred,
 *   4 resync), "a" aux (depth, pool phase 0 before/1 after, wait kind 0
 *   enter/1 Object.wait/2 park/3 sleep, lost source), "th" thread tid, "id" scoped id,
 *   "ref" second entity, "n" and "n2" name ids, "v" [v0,v1,v2,v3] values,
 *   "u" monitoring identity (uid) of a created entity.
 *   An "alloc" line is one TLAB refill or allocation outside a TLAB
 *   (`memtrace alloc`'s sampling): "th" the allocating thread, "ref" its
 *   class's type key (created earlier in the stream), "v" [weight bytes,
 *   object size, 1 if outside a TLAB, 0]. Resynchronisation after lost
 *   events (flag 4) re-creates threads from /proc and classes from the
 *   JVM's class list.
 *   A "gc_cause" line names the cause of the collection whose "pool" lines
 *   (phase 1, after) follow on the same thread: "n" the cause ("G1
 *   Evacuation Pause"), "n2" the action ("end of minor GC"), "v"
 *   [GCCause::Cause number, 0, 0, 0]. A memtrace before it stops at the
 *   first such line with "unknown event kind".
 *   A wait_begin of kind 2 is a java.util.concurrent park: "id" the blocker
 *   object (an obj_create typed by its class precedes it), "v" [time: ns, or
 *   epoch ms when v1=1 (0,0: untimed), v1, the owner's tid when the blocker
 *   is an owned lock (0: none), 1 when the blocker could not be read];
 *   kind 3 a Thread.sleep, "v" [millis,0,0,0].
 *   A park without a blocker and a sleep wait on the thread's own untyped
 *   object, id 2^63 + tid (include/memtrace/events.h: MT_WAIT_SELF).
 * Object-sampling lines (`record --categories object`: what `report` needs
 * for the age and leaks analyses). They are not events: `check` skips them,
 * and the obj_create/obj_reclaim events of the agent's samples stay the
 * events (filters and pauses apply to those; a sample whose creation was
 * not reported does not count). Written straight from the agent's records:
 *   {"k":"osession","t":TS,"v":[first_id,interval,depth]}  sampling began
 *                      (TS: the JVM's CLOCK_MONOTONIC), the first sample
 *                      id, mean bytes between samples, frames per stack
 *   {"k":"method","id":M,"s":"pkg.C.m"}   the agent's method id M
 *   {"k":"stack","id":K,"fr":[m0,l0,m1,l1,...]}  stack K: (method id, source
 *                      line; -1 unknown) pairs, innermost first
 *   {"k":"ostack","id":OBJ,"st":K}        sample OBJ (the obj_create with
 *                      that id, which follows) was allocated at stack K
 *   {"k":"ogc","t":TS,"v":[gc_no,next_id]}  the agent saw a GC finish when
 *                      next_id was the next sample id (the age boundary)
 *   {"k":"ostats","v":[sampled,dropped_allocs,dropped_frees,dropped_gcs,
 *                      frees,gcs,tag_errors,names_dropped]}  the agent's
 *                      counters (the last line holds the final ones)
 *   {"k":"sitevol","s":"pkg.C.m","v":[bytes,refills]}  BPF per-site
 *                      allocation volume (TLAB refills) of one method
 *                      over the recording, then one summary:
 *   {"k":"sitevols","sec":S,"v":[keys,all_bytes,overflow_bytes,
 *                      overflow_refills,noframe_bytes,unnamed_bytes]}
 * A recording without them (no object category, or written by a memtrace
 * before them) is still read; `report` then says age and leaks are
 * unavailable. A memtrace before them stops at the first such line with
 * "unknown event kind".
 * Last line, the trailer (absent if memtrace was killed):
 *   {"k":"end","t":TS,"lost":N,"duration_s":S,"jvm_exited":false,
 *    "events_in":N,"events_out":N,"dropped":N}
 *   events_in: events observed; events_out: lines written (events, names,
 *   markers); dropped: observed events that end what began before the
 *   recording or in a gap (monitor/sequencer.h: struct sequencer_stats);
 *   duration_s: from the recording's start (the probes attached: after the
 *   header's start_mono_ns by the setup's time) to its end.
 *   plus "error":"why" when the writer stopped on a write error (the events
 *   before it are all there; the recording ends early).
 * Numbers are unsigned decimal integers unless stated. `memtrace check FILE`
 * verifies rules 1-5 on the events; `memtrace report FILE` analyses them.
 *
 * This header: the format's structs and the writer (recording.c);
 * recording_read.h: the reader (recording_read.c).
 */
#ifndef MEMTRACE_RECORDING_H
#define MEMTRACE_RECORDING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/agent_proto.h"
#include "memtrace/events.h"

struct recording_header {
	int pid, nspid;
	char jdk[64];
	char libjvm[4096];
	char filter[512];
	uint64_t start_mono_ns;
	uint64_t mono_to_real_ns;
};

struct recording_trailer {
	bool present;
	uint64_t ts, lost, events_in, events_out, dropped;
	/* CLOCK_MONOTONIC when the probes were attached: events are observed
	 * from here, not from the header's start (0: not said, a recording of
	 * stop 57 or before) */
	uint64_t attached_ns;
	double duration_s;
	bool jvm_exited;
	char error[128];          /* "" unless the writer stopped on a write error */
};

/* Members end at this much JSON, or when recording_tick() finds them older. */
#define REC_MEMBER_BYTES (1u << 20)
#define REC_MEMBER_NS 1000000000ull
/* The reader checks a member's CRC before handing out its lines up to this size. */
#define REC_VERIFY_BYTES (16u << 20)
/* A file that ends in this many zero bytes or more ends before them: no gzip
 * member ends so (its last 4 bytes are its length, never 0 here, so at most
 * 3 zeros), and a torn member read on into them would decode made-up lines. */
#define REC_ZERO_TAIL 8

/* A line's longest (the writer's line buffer, the reader's text). */
#define REC_LINE_MAX 65536

struct recording_writer;

/* recording_create - create @path (truncating) and write the header (its own
 * member). NULL with errno set; prints nothing. */
struct recording_writer *recording_create(const char *path, const struct recording_header *h);
/* recording_write - append one event (@text: the name of an MT_EV_NAME).
 * 0, or the -errno of the first write error (every later call returns it;
 * the file is cut back to its last complete member). */
int recording_write(struct recording_writer *w, const struct mt_ev *e, const char *text);
/* recording_tick - finish the current member if it began REC_MEMBER_NS or
 * more before @now_ns (CLOCK_MONOTONIC); call it about every 100 ms. 0 or
 * the -errno of the first write error. */
int recording_tick(struct recording_writer *w, uint64_t now_ns);
/* recording_close - finish the member, write @t (if not NULL; with the write
 * error in "error" if there was one) as the last member, and close. 0 or the
 * -errno of the first write error. NULL is a no-op. */
int recording_close(struct recording_writer *w, const struct recording_trailer *t);
/* recording_written - bytes of the file in complete members so far. */
uint64_t recording_written(const struct recording_writer *w);
/* recording_members - members finished so far (the header's included). */
uint64_t recording_members(const struct recording_writer *w);

/* The object-sampling lines above, one struct for all kinds. */
enum recording_side_kind {
	REC_SIDE_NONE,
	REC_SIDE_OSESSION, /* ts, v[0..2] */
	REC_SIDE_METHOD,   /* id, s */
	REC_SIDE_STACK,    /* id, fr[nfr] */
	REC_SIDE_OSTACK,   /* id (object), st */
	REC_SIDE_OGC,      /* ts, v[0..1] */
	REC_SIDE_OSTATS,   /* v[0..7] */
	REC_SIDE_SITEVOL,  /* s, v[0..1] */
	REC_SIDE_SITEVOLS, /* sec, v[0..5] */
};
#define REC_SIDE_MAXV 8

struct recording_side {
	enum recording_side_kind kind;
	uint64_t ts, id, st;
	const char *s;                            /* valid until the next read; "" if absent */
	uint64_t v[REC_SIDE_MAXV];
	unsigned nv;                              /* values read (writer: to write) */
	struct mt_ap_frame fr[MT_AP_MAX_DEPTH];
	unsigned nfr;
	double sec;
};

/* recording_write_side - append one object-sampling line. 0, -EINVAL (no such
 * kind) or -EIO. */
int recording_write_side(struct recording_writer *w, const struct recording_side *s);

/* recording_side_name - "osession", "method", ... ("" for none). */
const char *recording_side_name(enum recording_side_kind k);
/* recording_side_kind - the kind a side line's "k" names, or REC_SIDE_NONE. */
enum recording_side_kind recording_side_kind(const char *k);

#endif
