/* SPDX-License-Identifier: GPL-2.0 */
/*
 * agent_proto.h - the wire protocol between memtrace (user/agentctl/agentsock.c) and
 * its JVMTI agent (user/agent/), over a unix stream socket.
 *
 * Every frame is a 16-byte header followed by exactly hdr.len payload bytes:
 *
 *     magic u32 'MTAP' | version u16 | type u16 | len u32 | seq u32
 *
 * Both ends run on the same host, so integers are in native byte order.
 * Fixed-width types only, no pointers; payload structs are packed by layout
 * (every field naturally aligned, sizes asserted below).
 *
 * A session: the client sends HELLO first; the agent answers HELLO_REPLY.
 * Then PING/PONG, DETACH/DETACH_ACK (the agent goes dormant and closes).
 * Sampling (record format MT_AP_REC_VERSION, checked in SAMPLE_START):
 * SAMPLE_START → SAMPLE_STARTED, then the agent streams EVENTS frames (a
 * sequence of records, below) until SAMPLE_STOP → the last EVENTS → SAMPLE_STOPPED.
 * Frames of other types may be interleaved with EVENTS. An agent older than
 * the sampling types answers SAMPLE_START with ERROR (unknown frame type).
 * Heap snapshots (below): HEAP_REQUEST → HEAP_DATA* → HEAP_DONE.
 * A frame with a bad magic, another version, an unknown type, a payload
 * larger than MT_AP_MAX_PAYLOAD, or a payload of the wrong size for its type
 * is answered by ERROR and the connection is closed. Decoding never trusts
 * hdr.len before it is checked against MT_AP_MAX_PAYLOAD and the buffer.
 *
 * The encode/decode helpers are static inline and pure, so both the agent
 * (built without memtrace's user/ code) and the unit tests use them.
 */
#ifndef MEMTRACE_AGENT_PROTO_H
#define MEMTRACE_AGENT_PROTO_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MT_AP_MAGIC        0x5041544du /* "MTAP" read as little-endian bytes */
#define MT_AP_VERSION      1           /* bump on any incompatible change */
#define MT_AP_HDR_SIZE     16
#define MT_AP_MAX_PAYLOAD  (1u << 20)  /* larger frames are refused, not read */
#define MT_AP_STR          64          /* fixed string fields, NUL padded */

/* Socket path inside the target's mount namespace: "/tmp/.memtrace-<nspid>.sock". */
#define MT_AP_SOCK_FMT     "/tmp/.memtrace-%d.sock"

/* Agent_OnAttach's return codes (the JVM reports them as "return code: N"). */
enum mt_agent_rc {
	MT_AGENT_OK        = 0,
	MT_AGENT_E_OPTIONS = 2, /* malformed options string */
	MT_AGENT_E_JVMTI   = 3, /* GetEnv or a JVMTI call failed */
	MT_AGENT_E_SOCKET  = 4, /* the listening socket could not be created */
	MT_AGENT_E_THREAD  = 5, /* the agent thread could not be started */
	MT_AGENT_E_TWICE   = 6, /* another copy (another path) already runs in this JVM */
};

enum mt_ap_type {
	MT_AP_HELLO        = 1, /* client → agent: struct mt_ap_hello */
	MT_AP_HELLO_REPLY  = 2, /* agent → client: struct mt_ap_hello_reply */
	MT_AP_PING         = 3, /* client → agent: struct mt_ap_ping */
	MT_AP_PONG         = 4, /* agent → client: the PING's struct mt_ap_ping */
	MT_AP_DETACH       = 5, /* client → agent: no payload; agent goes dormant */
	MT_AP_DETACH_ACK   = 6, /* agent → client: no payload; then the agent closes */
	MT_AP_ERROR        = 7, /* either way: struct mt_ap_error; then the sender closes */
	MT_AP_SAMPLE_START = 8, /* client → agent: struct mt_ap_sample_start */
	MT_AP_SAMPLE_STARTED = 9, /* agent → client: struct mt_ap_sample_started */
	MT_AP_SAMPLE_STOP  = 10, /* client → agent: no payload; sampling ends */
	MT_AP_SAMPLE_STOPPED = 11, /* agent → client: struct mt_ap_sample_stats, the last word */
	MT_AP_EVENTS       = 12, /* agent → client: records (variable length, see below) */
	MT_AP_HEAP_REQUEST = 13, /* client → agent: struct mt_ap_heap_request + field names */
	MT_AP_HEAP_DATA    = 14, /* agent → client: heap records (variable length, below) */
	MT_AP_HEAP_DONE    = 15, /* agent → client: struct mt_ap_heap_done, the last word */
	MT_AP_HEAP_RELEASE = 16, /* client → agent: no payload, no reply; the frozen copy a
				  * COPY record named (below) has been read: kill it */
	MT_AP_TYPE_MAX     = 16,
};

/* mt_ap_payload_size() of a type whose payload length varies (<= MT_AP_MAX_PAYLOAD). */
#define MT_AP_VARLEN       (-2)

struct mt_ap_hdr {
	uint32_t magic;   /* MT_AP_MAGIC */
	uint16_t version; /* MT_AP_VERSION of the sender */
	uint16_t type;    /* enum mt_ap_type */
	uint32_t len;     /* payload bytes after the header, <= MT_AP_MAX_PAYLOAD */
	uint32_t seq;     /* sender's frame counter; replies echo the request's seq */
};

struct mt_ap_hello {
	uint16_t min_version; /* oldest protocol version the client speaks */
	uint16_t max_version; /* newest protocol version the client speaks */
	uint32_t client_pid;  /* memtrace's pid (as memtrace sees it), for the agent's log */
};

struct mt_ap_hello_reply {
	uint16_t version;        /* protocol version the agent chose */
	uint16_t state;          /* 0: first session since the load; 1: woke from dormant */
	uint32_t pid;            /* the JVM's pid in its own pid namespace */
	uint32_t jvmti_version;  /* GetVersionNumber() */
	uint32_t attach_count;   /* Agent_OnAttach/OnLoad calls so far in this JVM */
	uint64_t sessions;       /* client sessions accepted so far, this one included */
	uint64_t loaded_ns;      /* CLOCK_REALTIME when the agent first started */
	char agent_version[MT_AP_STR]; /* memtrace version the agent was built from */
	char java_version[MT_AP_STR];  /* java.vm.version (JVMTI sees VM properties only) */
	char vm_name[MT_AP_STR];       /* java.vm.name system property */
};

struct mt_ap_ping {
	uint64_t cookie; /* echoed in PONG */
};

struct mt_ap_error {
	int32_t code;              /* positive errno-style code */
	uint32_t reserved;
	char msg[128];             /* NUL-terminated reason */
};

/*
 * Sampling. The agent tags every sampled object with an id from one counter
 * that only grows (ids are handed out in allocation order, across sessions),
 * so a GC record's next_id splits ids into "allocated before" and "after".
 */
#define MT_AP_REC_VERSION  1        /* record format below; bump on any change */
#define MT_AP_MAX_DEPTH    32       /* most stack frames an ALLOC record carries */
#define MT_AP_DEFAULT_INTERVAL (512u * 1024) /* HotSpot's own default, restored on stop */

struct mt_ap_sample_start {
	uint16_t rec_version; /* MT_AP_REC_VERSION the client decodes */
	uint16_t max_depth;   /* frames per sample, 1..MT_AP_MAX_DEPTH */
	uint32_t interval;    /* mean bytes between samples (SetHeapSamplingInterval), > 0 */
};

struct mt_ap_sample_started {
	uint16_t rec_version; /* MT_AP_REC_VERSION the agent encodes */
	uint16_t max_depth;   /* as granted */
	uint32_t interval;    /* as set */
	uint64_t first_id;    /* the first id this session hands out */
	uint64_t start_ns;    /* CLOCK_MONOTONIC in the JVM when sampling began */
};

/* Counters of one session; every loss is counted, never hidden. */
struct mt_ap_sample_stats {
	uint64_t sampled;        /* SampledObjectAlloc callbacks that produced a record */
	uint64_t dropped_allocs; /* samples lost: the agent's ring was full (not tagged) */
	uint64_t dropped_frees;  /* ObjectFree events lost: ring full (the object stays "live") */
	uint64_t dropped_gcs;    /* GC records lost: ring full (ages are then too young) */
	uint64_t frees;          /* ObjectFree events recorded */
	uint64_t gcs;            /* GarbageCollectionFinish events recorded */
	uint64_t tag_errors;     /* SetTag/GetStackTrace failures (sample skipped) */
	uint64_t names_dropped;  /* classes/methods past the agent's name-table bound */
};

/* One record inside an EVENTS payload: 8-byte header, then the body; len
 * (header included) is a multiple of 8 so every body is 8-byte aligned. */
struct mt_ap_rec {
	uint16_t kind; /* enum mt_ap_rec_kind */
	uint16_t len;  /* total record bytes, >= 8, multiple of 8 */
	uint32_t arg;  /* per kind, see below */
};

enum mt_ap_rec_kind {
	MT_AP_REC_CLASS  = 1, /* arg: class id (>0); body: JVM signature "Lpkg/C;", NUL, padding */
	MT_AP_REC_METHOD = 2, /* arg: method id (>0); body: class signature NUL method name NUL */
	MT_AP_REC_ALLOC  = 3, /* arg: class id; body: struct mt_ap_alloc + depth × mt_ap_frame */
	MT_AP_REC_FREE   = 4, /* arg: n; body: n × uint64_t ids of freed tagged objects */
	MT_AP_REC_GC     = 5, /* arg: 0; body: struct mt_ap_gc */
	MT_AP_REC_STATS  = 6, /* arg: 0; body: struct mt_ap_sample_stats so far */
};

struct mt_ap_alloc {
	uint64_t id;    /* the tag: sequential, allocation order */
	uint64_t size;  /* object size in bytes (GetObjectSize) */
	uint64_t ts_ns; /* CLOCK_MONOTONIC at the callback */
	uint32_t depth; /* frames following, innermost first */
	uint32_t reserved;
};

struct mt_ap_frame {
	uint32_t method; /* method id of a METHOD record sent earlier (0: unknown) */
	int32_t line;    /* source line, -1 if unknown (native, no line table) */
};

struct mt_ap_gc {
	uint64_t gc_no;   /* GarbageCollectionFinish events since sampling began, from 1 */
	uint64_t next_id; /* the next id to be handed out when this GC finished */
	uint64_t end_ns;  /* CLOCK_MONOTONIC at GarbageCollectionFinish */
	uint64_t reserved;
};

/*
 * Heap snapshots. HEAP_REQUEST asks the agent to walk the heap once
 * (FollowReferences with tags, in a JVMTI environment of its own; the tags
 * live until the session ends, when the agent clears them in one more pass
 * over the heap: a second, shorter pause). The JVM is paused for the walk;
 * callbacks only append to memory buffers. After the walk the agent
 * streams HEAP_DATA frames (records in the mt_ap_rec layout, kinds
 * MT_AP_HREC_*), then HEAP_DONE. Another request while one is being sent is
 * answered by ERROR (EBUSY). Sampling frames may be interleaved.
 *
 * Identities: every object the walk reaches gets an id (> 0); in one session
 * an object keeps its id from walk to walk and an object first met gets the
 * next id, so each walk's new ids form one contiguous range (the first walk
 * of a session hands out 1, 2, ...). The AGES record lists, for every walk of
 * the session, its first id and the GCs the session had counted by then
 * (JVMTI GarbageCollectionFinish): an object's age is the GCs of this walk
 * minus those of the walk that first tagged it (a lower bound for objects
 * older than the session's first walk). AGES was added without a version
 * bump: an older reader skips it, an older agent does not send it (no ages).
 * Class objects, loaders and threads are tagged before the walk, so an object
 * record's cls is the id of its java.lang.Class object (0: a class loaded
 * after the class table was taken). The payload of HEAP_REQUEST is the struct
 * followed by nfields NUL-terminated field names (the projection: values are
 * sent only for instance fields with these names) and is at most
 * MT_AP_HEAP_REQ_MAX bytes.
 */
#define MT_AP_HEAP_REQ_MAX   65536u
#define MT_AP_HEAP_REFS      (1u << 0) /* send object->object references and heap roots */
#define MT_AP_HEAP_ALLFIELDS (1u << 1) /* values of every instance field (ignore the names) */
#define MT_AP_HEAP_STRINGS   (1u << 2) /* java.lang.String values */
#define MT_AP_HEAP_MAXPAUSE  (1u << 3) /* abort the walk after max_pause_ms (partial result) */
#define MT_AP_HEAP_BARE      (1u << 4) /* benchmark: a no-op-callback walk, no data, only DONE */
#define MT_AP_HEAP_KEEPIDS   (1u << 5) /* objects keep their ids for the session's later walks
					* (ages across walks): JVMTI tags on every object, and
					* clearing them at the session's end is a second pause.
					* Without it the agent identifies objects by address during
					* the pause (no object tags); in DONE's flags the bit says
					* which way the walk went (set: tags). */
#define MT_AP_HEAP_NOUNTAGGED (1u << 6) /* memtrace found an untagged walk of this agent
					 * inconsistent: tags for every walk from now on */
#define MT_AP_HEAP_SAMPLES   (1u << 7) /* find sampled objects in the walk: nsamples ids of the
					* open sampling session's samples follow the names (8
					* bytes each, unaligned); the SAMPLED record says which
					* object of the walk each one is. An older agent refuses
					* the flag. */
#define MT_AP_HEAP_FREEZE    (1u << 8) /* an untagged walk of a frozen copy of the JVM: at the
					* walk's first callback (inside the pause, before
					* any object is visited) the agent forks; the JVM
					* leaves the pause at once and the copy (a child
					* process that never runs Java) does the walk. A
					* struct mt_ap_heap_freeze follows the request
					* struct, before the names; a FREEZE record says
					* how it went (below). An agent without it refuses
					* the flag (ERROR); memtrace then walks as before. */
#define MT_AP_HEAP_COUNTS    (1u << 9) /* with FREEZE and MARK: totals per class only (HISTO
					* records in the copy), no objects; an agent that
					* cannot mark sends objects as without it */
#define MT_AP_HEAP_CLASSES   (1u << 10) /* the class table only (CLASS and THREAD records,
					* DONE), built with the JVM running: no walk, no
					* pause. memtrace compiles a query against it
					* before any pause. An agent without it refuses the
					* flag (ERROR); memtrace then compiles after the walk. */
#define MT_AP_HEAP_FLAGS     0x7ffu    /* every flag above; other bits are refused */
#define MT_AP_HEAP_MAX_SAMPLES 4096u   /* sample ids one request may carry */

struct mt_ap_heap_request {
	uint32_t flags;        /* MT_AP_HEAP_* */
	uint32_t max_pause_ms; /* with MT_AP_HEAP_MAXPAUSE: abort the walk after this */
	uint32_t nfields;      /* NUL-terminated names following the struct */
	uint32_t nsamples;     /* with MT_AP_HEAP_SAMPLES: sample ids after the names */
};

/*
 * A frozen walk (MT_AP_HEAP_FREEZE). The copy is the JVM as it was in the
 * pause: HotSpot's own FollowReferences goes on in it with the agent's
 * callbacks, so it reports what a walk in the pause would have reported.
 * The copy is sandboxed before it goes on (every fd closed, writable shared
 * mappings replaced by private copies, signals at their defaults, no core
 * file, a CPU limit, seccomp refusing new files, sockets, processes and
 * signals to others, oom_score_adj 1000, killed with the JVM's VM thread).
 * Its walk ends when HotSpot leaves the safepoint in the copy: the agent
 * reads SafepointSynchronize::_state there (memtrace finds the symbol).
 * The agent then copies the walk's records out of the copy, kills it and
 * reaps it. memtrace closing the connection kills the copy too. Whatever
 * fails (the fork, the copy, a limit), the agent walks again in a pause and
 * says why in the FREEZE record: a snapshot is never lost to a freeze.
 */
#define MT_AP_FREEZE_LOCKS 2
/* The copy's name (its comm, as ps and /proc show it): memtrace's `ps`,
 * `serve --all` and -p tell it from a JVM by it. An older agent's copy keeps
 * the name of the thread that forked it, HotSpot's "VM Thread" (a JVM's
 * leading thread never has that name). */
#define MT_AP_COPY_COMM "memtrace-copy"
#define MT_AP_FREEZE_SPACES 6

struct mt_ap_heap_freeze {
	uint64_t state_addr;   /* SafepointSynchronize::_state (int; 2: at a safepoint) */
	uint64_t reset_addr;   /* JDK 17: ObjectMarker::_needs_reset (bool), cleared in the
				* copy after the roots so that HotSpot does not visit the
				* whole heap again to unmark it; 0 where there is none */
	uint64_t heap_lo;      /* the Java heap's reserved range: must be private */
	uint64_t heap_hi;      /* memory (not shared with the copy), else no freeze */
	uint64_t locks[MT_AP_FREEZE_LOCKS]; /* pthread mutexes that HotSpot threads still
				* running in a pause (JIT compilers) take, and that the
				* copy's walk needs: the arena chunk pool's (JDK 17's
				* ThreadCritical tc_mutex, JDK 21+'s GlobalChunkPoolMutex).
				* The agent holds them across the fork, so the copy gets
				* them free (a lock held by a thread that does not exist in
				* the copy would stop its walk for good); 0: unused */
	uint32_t lock_ptr;     /* bit i: locks[i] is the address of a pointer to the mutex */
	uint32_t stall_ms;     /* the copy's walk calls back nothing this long: killed */
	uint32_t max_ms;       /* the copy's walk lasts longer: killed */
	uint32_t flags;        /* MT_AP_FREEZE_* */
	/* The heap's unused space (above each space's or region's top), not shared
	 * with the copy (MADV_DONTFORK around the fork): the JVM allocates there
	 * after the pause without a page fault per page, and fork copies fewer
	 * page tables. Read by the agent in the pause, every read checked. */
	uint32_t space_kind;   /* MT_AP_FREEZE_SPACES_* */
	uint16_t off_bottom, off_top, off_end; /* in a space / region object */
	uint16_t reserved16;
	uint32_t gc_wait_ms;   /* first wait up to this long for a GC to end, and freeze
				* right after it: the young generation is then empty,
				* so kept out of the copy, and the JVM's allocations
				* after the pause fault nothing in (0: freeze now) */
	uint64_t spaces[MT_AP_FREEZE_SPACES];  /* _LIST: addresses of pointers to space
				* objects (Serial and Parallel swap their survivor
				* spaces at each GC); _G1: [0] the G1HeapRegionTable,
				* [1] its _base's offset, [2] its _length's offset */
};

#define MT_AP_FREEZE_SPACES_NONE 0 /* share the whole heap */
#define MT_AP_FREEZE_SPACES_LIST 1 /* spaces[]: Serial, Parallel */
#define MT_AP_FREEZE_SPACES_G1   2 /* G1's region table */

#define MT_AP_FREEZE_TEST_FAIL  (1u << 0) /* tests: the copy kills itself after the roots */
#define MT_AP_FREEZE_TEST_HANG  (1u << 1) /* tests: the copy stops calling back after the roots */
#define MT_AP_FREEZE_DIRECT     (1u << 2) /* memtrace reads the walk's records out of the copy
					   * itself: the agent sends a COPY record (where they
					   * are) instead of VISITS, PRIMS and STRING, and keeps
					   * the copy until HEAP_RELEASE, memtrace's leaving or
					   * keep_ms after DONE. Without it the agent reads them
					   * out of the copy and sends them. */
#define MT_AP_FREEZE_TEST_NOFORK (1u << 3) /* tests: the fork fails (EAGAIN) */
#define MT_AP_FREEZE_MARK       (1u << 4) /* the copy marks the live heap itself from the walk's
					   * roots (heapmark.c in the agent) instead of going
					   * on with FollowReferences: a struct
					   * mt_ap_heap_layout follows the freeze struct, a MARK
					   * record says where the results are in the copy
					   * (with MT_AP_FREEZE_DIRECT only) */
#define MT_AP_FREEZE_COMPARE    (1u << 5) /* tests, with _MARK: the copy marks, then walks on
					   * with FollowReferences as without it; both results
					   * are sent (MARK and COPY records) */
#define MT_AP_FREEZE_FORWARDING (1u << 6) /* with _MARK: the copy may hold objects the collector
					   * moved (Shenandoah, forked mid-evacuation or before
					   * its references were updated): the mark follows a
					   * forwarding pointer in a mark word (its low bits 11)
					   * to the object's new copy; without the mark the
					   * copy is not walked (JVMTI's walk would run the
					   * collector's barriers there) */
#define MT_AP_FREEZE_SMALLPAGES (1u << 7) /* with _MARK: the copy's record arrays stay in 4 KiB
					   * pages (memtrace's util_hugepages_wanted() said no:
					   * fresh huge pages are slow on this machine) */
#define MT_AP_FREEZE_LIVE       (1u << 8) /* with _MARK and _DIRECT: memtrace reads the copy's
					   * records while it writes them - the agent sends a
					   * LIVE record (where the copy publishes how far it
					   * is, struct mt_ap_hlive) once the copy is forked */
#define MT_AP_FREEZE_ZGC        (1u << 9) /* with _MARK: the JVM runs ZGC, whose heap is a shared
					   * memfd: a struct mt_ap_heap_zgc follows the layout.
					   * In the pause the agent checks that no page is being
					   * relocated, lists the used pages and forks; the copy
					   * copies them into a file of its own, maps it over
					   * every heap view and only then lets the JVM go on;
					   * the mark decodes coloured pointers and follows
					   * forwarding tables (agent/zgcref.c). Any failure
					   * fails the walk (never a walk in the pause); one
					   * while pages are relocated says so (-EAGAIN) */
#define MT_AP_FREEZE_ZGC_BOUND  (1u << 10) /* with _ZGC: the copy copies at most
					   * mt_ap_heap_zgc.max_copy_mib of used heap in the
					   * pause (the pause memtrace may cause, which it
					   * cannot know before: the used heap changes with each
					   * cycle). The agent measures the used heap from
					   * ZGC's page table after settling, before the pause,
					   * and again in it; over the bound the walk is refused
					   * (-EFBIG, the used heap in the reason), before the
					   * pause when it can be. An agent without the flag
					   * refuses it (ERROR), as one before the struct grew
					   * by aim_copy_mib (its size) */
#define MT_AP_FREEZE_POOL       (1u << 11) /* with _LIVE: the request's frame came with a
					   * file descriptor (SCM_RIGHTS on its first byte): a
					   * memfd of memtrace's, its pages already resident
					   * and charged to memtrace. The copy maps it (its
					   * size the file's) and writes its object and
					   * reference records there when they fit, into
					   * pages that need no zeroing, and says where
					   * (mt_ap_hlive.pool); memtrace reads them from its
					   * own mapping. The agent holds the fd only until the
					   * fork. An agent without the flag refuses it (ERROR) */
#define MT_AP_FREEZE_INPLACE    (1u << 12) /* with _POOL: memtrace keeps the records where
					   * the copy writes them (its view is built over
					   * them, no copy of its own), and fills the pool
					   * ahead of them: the copy counts its mark's
					   * progress in mt_ap_hlive.mark_objs/mark_refs,
					   * writes its object records at the pool's start
					   * (room for 16 bytes more an object after them: a
					   * view's object is 48 bytes, a record 32) and its
					   * reference records at mt_ap_inplace_refs(), both
					   * known before it writes them; it maps the pool's
					   * pages in as it goes (in two threads the second
					   * writes from the end of each array's room down,
					   * its references moved down onto the first's at
					   * the end: memtrace fills from both ends once
					   * cap_objs is known). An agent without the flag
					   * refuses it (ERROR) */
#define MT_AP_FREEZE_ONETHREAD  (1u << 13) /* with _MARK: the copy writes its records in
					   * one thread (tests and comparisons: it may take
					   * two where it can, heapmark.c). An agent
					   * without the flag refuses it (ERROR) */
#define MT_AP_FREEZE_TWOTHREADS (1u << 14) /* with _MARK: tests: two threads for the
					   * records on any heap where they can be (the
					   * pool, objects and references only). An agent
					   * without the flag refuses it (ERROR) */
#define MT_AP_FREEZE_MARKONE    (1u << 15) /* with _MARK: the copy marks in one thread
					   * (side-by-side measures; it takes two on two CPUs
					   * from 256 Ki objects, heapmark.c). An agent without
					   * the flag refuses it (ERROR) */
#define MT_AP_FREEZE_REFPOS     (1u << 16) /* with _INPLACE: the copy writes its reference
					   * records as struct mt_ap_hrefpos (12 bytes:
					   * the target's position, not its id, no
					   * referrer: an object's references follow each
					   * other in the objects' order, each object's
					   * CLASS reference first among them, its count in
					   * its object record's flags) and says so
					   * (mt_ap_hmark.ref_format). An agent without the
					   * flag refuses it (ERROR) */
#define MT_AP_FREEZE_NOCLASS    (1u << 17) /* with _REFPOS: no record for an object's
					   * CLASS reference; its object record's flags
					   * say it is implied (MT_AP_HOBJ_POS_CLASS: to
					   * the object whose id is its cls), ref_format
					   * MT_AP_REFS_POS_NOCLASS. 10 M objects: 120 MB
					   * fewer records. An agent without the flag
					   * refuses it (ERROR) */
#define MT_AP_FREEZE_FLAGS      0x3ffffu

/* ZGC's variants: JDK 17's (non-generational: coloured pointers with the
 * heap mapped three times) and the generational one (JDK 21+: coloured
 * "zpointers" in the heap, plain addresses in registers and stacks). */
#define MT_AP_ZGC_X   1u
#define MT_AP_ZGC_GEN 2u

/*
 * MT_AP_FREEZE_ZGC: where ZGC keeps what the agent reads in the pause (every
 * address in the JVM, found by memtrace from VMStructs and .symtab, read by
 * the agent with checks). Masks are read in the pause: they change only at
 * the collector's own pauses.
 */
struct mt_ap_heap_zgc {
	uint32_t size;          /* sizeof(struct mt_ap_heap_zgc) as the sender knows it */
	uint32_t variant;       /* MT_AP_ZGC_* */
	uint64_t offset_mask;   /* &ZAddressOffsetMask (uintptr_t) */
	uint64_t good_mask;     /* X: &ZAddressGoodMask; GEN: &ZPointerLoadGoodMask */
	uint64_t bad_mask;      /* X: &ZAddressBadMask; GEN: &ZPointerLoadBadMask */
	uint64_t heap_base;     /* GEN: &ZAddressHeapBase (uintptr_t); X: 0 (no base) */
	uint64_t remapped_old;  /* GEN: &ZPointerRemappedOldMask */
	uint64_t remapped_young; /* GEN: &ZPointerRemappedYoungMask */
	uint64_t page_table;    /* the page table's granule map: size_t _size; ZPage **_map */
	uint64_t fwd_tables[2]; /* forwarding granule maps (same shape): X [0]; GEN [0] the
				 * young generation's, [1] the old one's */
	uint32_t page_start, page_top; /* in a ZPage: _virtual._start, _top (heap offsets) */
	uint32_t fw_start;      /* in a ZForwarding: _virtual._start */
	uint32_t fw_shift;      /* _object_alignment_shift (size_t) */
	uint32_t fw_length;     /* _entries._length (size_t: a power of two) */
	uint32_t fw_refcount;   /* _ref_count (int): 0 once the page's relocation is over */
	uint32_t fw_entries;    /* the first uint64_t entry: sizeof(ZForwarding) rounded up to 8 */
	uint32_t max_copy_mib;  /* with MT_AP_FREEZE_ZGC_BOUND: the most used heap (MiB) the
				 * copy may copy in the pause (0 without the flag) */
	uint32_t aim_copy_mib;  /* with it: while the used heap is over this (<= max), wait
				 * for another cycle's end first, a few times at most
				 * (it falls at each); 0: max_copy_mib */
	uint32_t page_type;     /* in a ZPage: _type's offset plus one (uint8_t: 0 small, 1
				 * medium, 2 large); 0 unknown. Known, and the walk reading
				 * no strings (no MT_AP_HEAP_STRINGS), the elements of a
				 * primitive array in a medium or large page are not
				 * copied (the copy's mark reads its header alone): they
				 * read as zeros in the copy */
	uint32_t max_pause_ms;  /* with MT_AP_FREEZE_ZGC_BOUND: the pause memtrace may cause;
				 * the copy of the used heap stops this long after the
				 * fork began when it is not done (memtrace's estimate of
				 * the copy's speed was wrong: a busy machine): the walk
				 * is refused (-ETIMEDOUT, what was copied and when in the
				 * reason), the copy killed, the JVM goes on. 0: no
				 * deadline (an agent before it ignores the field, a
				 * memtrace before it sends 0) */
	uint64_t medium_align;  /* with page_type: &ZObjectAlignmentMedium (int, .symtab): a
				 * medium page's objects start at multiples of it (4 KiB
				 * for a 32 MiB page); 0: no element is left out */
};

struct mt_ap_heap_done {
	uint64_t pause_ns;    /* FollowReferences' duration: the JVM's pause */
	uint64_t prep_ns;     /* class table and tagging before the walk (JVM running) */
	uint64_t objects;     /* object records sent */
	uint64_t refs;        /* reference records sent */
	uint64_t roots;       /* heap-root records sent */
	uint64_t bytes;       /* sum of the objects' shallow sizes */
	uint64_t values;      /* primitive value records sent */
	uint64_t strings;     /* string records sent */
	uint64_t truncated;   /* strings cut to MT_AP_HSTR_MAX bytes, fields past a record */
	uint64_t mismatches;  /* primitive values whose type disagrees with the field table */
	uint32_t partial;     /* 1: the walk was aborted (--max-pause): not every object seen */
	uint32_t flags;       /* the request's flags as served */
	uint32_t nclasses;    /* class records sent */
	uint32_t nthreads;    /* thread records sent */
};

/* Heap record kinds (inside HEAP_DATA; distinct from the sampling kinds). */
enum mt_ap_hrec_kind {
	MT_AP_HREC_OBJS    = 33, /* arg n: n × struct mt_ap_hobj */
	MT_AP_HREC_REFS    = 34, /* arg n: n × struct mt_ap_href */
	MT_AP_HREC_ROOTS   = 35, /* arg n: n × struct mt_ap_hroot */
	MT_AP_HREC_PRIMS   = 36, /* arg n: n × struct mt_ap_hprim */
	MT_AP_HREC_STRING  = 37, /* arg: UTF-8 bytes; body: uint64_t object id, bytes, NUL */
	MT_AP_HREC_CLASS   = 38, /* arg: nfields; body: struct mt_ap_hclass, JVM signature NUL,
				  * then nfields × (int32 index, char type, name NUL) */
	MT_AP_HREC_THREAD  = 39, /* arg 0; body: uint64_t object id, name NUL */
	MT_AP_HREC_DONE    = 40, /* arg 0; body: struct mt_ap_heap_done (snapshot files only) */
	MT_AP_HREC_AGES    = 41, /* arg n: struct mt_ap_hages, n × struct mt_ap_hwalk */
	MT_AP_HREC_NAMED   = 42, /* arg n: struct mt_ap_hnamed_hdr, n × struct mt_ap_hnamed */
	MT_AP_HREC_VISITS  = 43, /* arg n: n × struct mt_ap_hvisit */
	MT_AP_HREC_SAMPLED = 44, /* arg n: n × struct mt_ap_hsampled (MT_AP_HEAP_SAMPLES) */
	MT_AP_HREC_FREEZE  = 45, /* arg 0; body: struct mt_ap_hfreeze (MT_AP_HEAP_FREEZE only) */
	MT_AP_HREC_COPY    = 46, /* arg 0; body: struct mt_ap_hcopy (MT_AP_FREEZE_DIRECT only) */
	MT_AP_HREC_MARK    = 47, /* arg 0; body: struct mt_ap_hmark (MT_AP_FREEZE_MARK only) */
	MT_AP_HREC_LIVE    = 48, /* arg 0; body: struct mt_ap_hlive_at, alone in a HEAP_DATA
				  * frame before DONE (MT_AP_FREEZE_LIVE only; never in a file) */
};

/* A sampled object found in the walk: its id in the walk (untagged walks: a
 * NAMED-range id memtrace keeps as it is) and its sample id (the sampling
 * session's tag, mt_ap_alloc.id). Samples no longer alive are not listed. */
struct mt_ap_hsampled {
	uint64_t id;
	uint64_t sample;
};
#define MT_AP_HSTR_MAX     60000 /* longest string value sent, in UTF-8 bytes */

/* Heap-reference kinds in records: JVMTI's jvmtiHeapReferenceKind values
 * (1..10 between objects, 21..27 heap roots). */
struct mt_ap_hobj {
	uint64_t id;
	uint64_t cls;     /* id of the class object, 0 unknown */
	uint64_t size;    /* shallow bytes */
	int32_t length;   /* array length, -1 for other objects */
	uint32_t flags;   /* MT_AP_HOBJ_* */
};

/* struct mt_ap_hobj.flags: its CLASS reference (to cls) is implied, not sent
 * as a struct mt_ap_href (the frozen copy's own mark: a reference per object
 * fewer, a fifth of its records' bytes); readers add it back. */
#define MT_AP_HOBJ_CLASSREF 1u

struct mt_ap_href {
	uint64_t from;
	uint64_t to;
	int32_t index;    /* FIELD/STATIC_FIELD: JVMTI field index; ARRAY_ELEMENT: slot; else -1 */
	uint32_t kind;    /* jvmtiHeapReferenceKind */
};

/* MT_AP_FREEZE_REFPOS (mt_ap_hmark.ref_format MT_AP_REFS_POS): a reference
 * by position. The object records' flags count each object's references
 * (no MT_AP_HOBJ_CLASSREF: the CLASS reference is a record, its first),
 * which follow each other in the objects' order: the referrer is implied.
 * Half the bytes of a struct mt_ap_href and laid out as a view's reference
 * (struct dsl_href: to, index, then kind in the low byte), which memtrace
 * makes of it where it lies. */
struct mt_ap_hrefpos {
	uint32_t to;      /* the target's position in the object records */
	int32_t index;    /* as struct mt_ap_href's */
	uint32_t kind;    /* jvmtiHeapReferenceKind */
};

#define MT_AP_REFS_IDS 0 /* struct mt_ap_href (an agent before ref_format: 0 too) */
#define MT_AP_REFS_POS 1 /* struct mt_ap_hrefpos */
#define MT_AP_REFS_POS_NOCLASS 2 /* struct mt_ap_hrefpos, CLASS references implied
				  * (MT_AP_FREEZE_NOCLASS) */

/* MT_AP_REFS_POS_NOCLASS: an object record's flags hold its reference
 * records' count in the low bits and this bit when its CLASS reference (to
 * the object whose id is its cls) is implied, not a record - the same for
 * every object of a class: all but class objects, whose class is known. */
#define MT_AP_HOBJ_POS_CLASS (1u << 31)

/* A STACK_LOCAL root the copy's own mark found in a parked virtual thread's
 * stack chunk (JVMTI reports a thread, then its stack; this one has no thread
 * of its own before it). */
#define MT_AP_HROOT_VTHREAD 1u
/* No root: a marker before a virtual thread's locals (a parked one's, the
 * copy's mark; a mounted one's, after JVMTI's OTHER root to it) whose `to` is
 * that thread's java.lang.Thread.tid, not an object (0: not found). The
 * locals up to the next marker or non-local root are that thread's. JVMTI's
 * walks put one before each thread's locals (the tid JVMTI gives them: a
 * virtual thread's own, JDK 21+), platform threads' too. Added without a
 * version bump: a reader that does not know it sees a root of kind 0, which
 * no reader takes for one. */
#define MT_AP_HROOT_TID 2u

struct mt_ap_hroot {
	uint64_t to;
	uint32_t kind;    /* jvmtiHeapReferenceKind 21..27 */
	uint32_t flags;   /* MT_AP_HROOT_* (was reserved, 0) */
};

struct mt_ap_hprim {
	uint64_t obj;
	uint64_t bits;    /* the jvalue's 8 bytes (j for long, d for double, ...) */
	int32_t index;    /* JVMTI field index in obj's class */
	uint32_t type;    /* jvmtiPrimitiveType: 'Z' 'B' 'C' 'S' 'I' 'J' 'F' 'D' */
};

/*
 * Untagged walks (DONE without MT_AP_HEAP_KEEPIDS) send no OBJS, REFS or
 * ROOTS: during the pause the agent only records what JVMTI reports, with
 * objects as keys - MT_AP_HV_ADDR | the object's address during the pause,
 * or an id for an object that has a tag - and memtrace turns the keys into
 * ids and the visits into records (user/heap/walkids.c). NAMED gives the
 * addresses of the classes, loaders and threads, whose ids the CLASS and
 * THREAD records use; the walk's other objects get ids from next_id on, in
 * the order of their first visit. PRIMS and STRING carry keys too.
 */
#define MT_AP_HV_ADDR  (1ull << 63)
#define MT_AP_HV_KEEP  (1u << 31)   /* a reference or root to record */
#define MT_AP_HV_MAYBE (1u << 30)   /* a FIELD reference: recorded if its field is projected */
#define MT_AP_HV_VTHREAD (1u << 29) /* a root: an unmounted virtual thread's local
				      * (MT_AP_HROOT_VTHREAD) */
#define MT_AP_HV_TID (1u << 28)      /* no object: a root marker whose `to` is the tid of
				      * the thread whose locals follow (MT_AP_HROOT_TID) */
#define MT_AP_HV_KIND(k) ((k) & 0xffffu)

struct mt_ap_hnamed_hdr {
	uint64_t next_id;  /* the first id for objects that are not named */
};

struct mt_ap_hnamed {
	uint64_t addr;     /* during the pause */
	uint64_t id;
};

/* One reference JVMTI reported (a heap root when from is 0). */
struct mt_ap_hvisit {
	uint64_t to;       /* key of the referee */
	uint64_t from;     /* key of the referrer (KEEP, MAYBE and CLASS references), else 0 */
	uint32_t size8;    /* the referee's size / 8 */
	int32_t length;    /* its array length, -1 */
	int32_t index;     /* FIELD/STATIC_FIELD: JVMTI field index; ARRAY_ELEMENT: slot; else -1 */
	uint32_t kind;     /* jvmtiHeapReferenceKind | MT_AP_HV_KEEP | MT_AP_HV_MAYBE |
			    * MT_AP_HV_VTHREAD */
};

struct mt_ap_hclass {
	uint64_t id;      /* the class object's id */
	uint64_t super;   /* superclass's id, 0 none */
	uint64_t loader;  /* the loader object's id, 0 for the bootstrap loader */
	uint32_t nfields; /* instance fields, inherited ones included */
	uint32_t flags;   /* MT_AP_HCLASS_* (an older agent sends 0) */
};

/*
 * CLASS records with MT_AP_HCLASS_EXT carry, after the fields, a struct
 * mt_ap_hclass_ext, then nifaces × uint64_t class ids of the direct
 * superinterfaces (GetImplementedInterfaces), then nstatics × (int32 JVMTI
 * index, char type, name NUL): the class's own static fields that hold
 * references (the index FollowReferences gives their STATIC_FIELD
 * references). Added without a version bump: an older reader stops after
 * the fields; a record without the flag says nothing of interfaces.
 */
#define MT_AP_HCLASS_EXT   (1u << 0) /* the extension above follows the fields */
#define MT_AP_HCLASS_IFACE (1u << 1) /* the class is an interface */
#define MT_AP_HCLASS_NOIFACES (1u << 2) /* its interfaces are unknown: JVMTI lists them
					 * only once the class is prepared (linked) */

struct mt_ap_hclass_ext {
	uint32_t nifaces;
	uint32_t nstatics;
};

/* FREEZE: how the frozen walk went. */
struct mt_ap_hfreeze {
	int32_t status;        /* 0: the records come from the frozen copy; else -errno of
				* what failed, and the walk was done in a pause instead */
	uint32_t stage;        /* enum mt_ap_freeze_stage: where it failed */
	uint32_t child_pid;    /* the copy's pid in the JVM's pid namespace (0: no fork) */
	uint32_t reserved;
	uint64_t fork_ns;      /* fork() inside the pause */
	uint64_t walk_ns;      /* from the fork to the end of the copy's walk */
	uint64_t pull_ns;      /* reading the walk's records out of the copy */
	uint64_t child_maxrss_kb; /* the copy's peak resident memory (getrusage) */
	uint64_t child_minflt; /* its page faults (copy-on-write of what it wrote) */
	uint64_t child_cpu_ns; /* its CPU time */
	uint64_t fallback_pause_ns; /* the walk done in a pause after a failure, else 0 */
	uint64_t unshared_bytes; /* the heap's unused space kept out of the copy */
	uint32_t unshared_runs;  /* in that many address ranges */
	uint32_t gc_waited;      /* 1: the freeze followed a GC's end (gc_wait_ms) */
	uint64_t gc_wait_ns;     /* waited for that GC (0: no wait asked) */
	char why[96];          /* what failed, NUL-terminated ("" when status is 0) */
	uint64_t fork_at_ns;   /* CLOCK_MONOTONIC at the fork: the image's instant (added
				* later: an older agent's shorter record leaves it 0) */
	uint64_t heap_copy_bytes; /* MT_AP_FREEZE_ZGC: the used heap the copy copied in the */
	uint64_t heap_copy_ns;    /* pause (ZGC's heap is shared memory), and how long the
				   * JVM waited for it (0 from an older agent) */
	uint64_t heap_skip_bytes; /* of the used heap, the elements of primitive arrays in
				   * medium and large pages, not copied (mt_ap_heap_zgc's
				   * page_type) */
};

/* COPY: where the walk's records are in the frozen copy (MT_AP_FREEZE_DIRECT). */
struct mt_ap_hcopy {
	uint32_t child_pid;    /* the copy's pid in the JVM's pid namespace */
	uint32_t keep_ms;      /* the agent kills it this long after DONE at the latest */
	uint64_t visits;       /* address of nvisits struct mt_ap_hvisit */
	uint64_t nvisits;
	uint64_t prims;        /* address of nprims struct mt_ap_hprim */
	uint64_t nprims;
	uint64_t strs;         /* address of nstrs struct mt_ap_hstrref */
	uint64_t nstrs;
	uint64_t reserved;
};

/*
 * The heap as the frozen copy's own marker reads it (MT_AP_FREEZE_MARK): where
 * HotSpot keeps what a collector's marking needs, from the JVM's VMStructs and
 * libjvm's .symtab (memtrace reads them; user/heap/heaplayout.c). Offsets are
 * bytes; every static int that HotSpot computes at start (java_lang_Class::*,
 * java_lang_ref_Reference::_referent_offset, ...) is sent as its value. A
 * Klass's kind is told as HotSpot tells it (the layout helper's sign and
 * array tag, the reference type, java.lang.Class, ClassLoader's subclasses,
 * the stack chunk class): a C++ vtable would not do, since CDS gives the
 * archived classes vtables of its own. Every Klass is checked against its
 * class object (mirror.klass == Klass) before use; a check that fails stops
 * the mark, with a reason.
 */
enum mt_ap_klass_kind {
	MT_AP_K_INSTANCE = 0,     /* InstanceKlass */
	MT_AP_K_REF = 1,          /* InstanceRefKlass (java.lang.ref.Reference and subclasses) */
	MT_AP_K_MIRROR = 2,       /* InstanceMirrorKlass (java.lang.Class) */
	MT_AP_K_LOADER = 3,       /* InstanceClassLoaderKlass */
	MT_AP_K_STACKCHUNK = 4,   /* InstanceStackChunkKlass (JDK 19+): see sc_iterate */
	MT_AP_K_TYPEARRAY = 5,    /* TypeArrayKlass */
	MT_AP_K_OBJARRAY = 6,     /* ObjArrayKlass */
	MT_AP_K_KINDS = 7,
};

#define MT_AP_LAYOUT_COOPS   (1u << 0) /* compressed oops (narrow_oop_base/shift) */
#define MT_AP_LAYOUT_CKLASS  (1u << 1) /* compressed class pointers (narrow_klass_base/shift) */

struct mt_ap_heap_layout {
	uint32_t size;              /* sizeof(struct mt_ap_heap_layout) as the sender knows it */
	uint32_t flags;             /* MT_AP_LAYOUT_* */
	uint64_t oop_base, klass_base;
	uint32_t oop_shift, klass_shift;
	uint32_t obj_align;         /* ObjectAlignmentInBytes */
	uint32_t klass_off;         /* the klass word in an object (8) */
	uint32_t length_off;        /* an array's length (12 with compressed class pointers, 16) */
	/* Klass, InstanceKlass, ConstantPool(Cache), ClassLoaderData */
	uint32_t k_layout_helper, k_java_mirror, k_cld, k_next_link, k_super, k_vtable_len;
	uint32_t ik_size;           /* sizeof(InstanceKlass): the vtable follows it */
	uint32_t ik_itable_len, ik_oop_map_size, ik_reference_type, ik_constants;
	uint32_t ik_local_interfaces;
	uint32_t cp_cache, cpc_resolved_refs;
	uint32_t cld_loader, cld_klasses;
	uint32_t array_data;        /* Array<T>::_data for 8-byte T (local interfaces) */
	uint32_t array_length;      /* Array<T>::_length */
	/* the classes whose instances are told apart (vmClasses; the agent fills
	 * the stack chunk class, 0 when there is none) */
	uint64_t class_klass, loader_klass, string_klass, stackchunk_klass;
	/* java.lang.Class mirrors (java_lang_Class::_*_offset values) */
	int32_t m_klass, m_oop_size, m_static_count, m_statics; /* _statics: first static field */
	int32_t m_loader, m_pd, m_signers;
	int32_t ref_referent;       /* java.lang.ref.Reference.referent and .discovered (JDK */
	int32_t ref_discovered;     /* 17: in none of Reference's oop maps; JDK 25: in them) */
	uint32_t ref_weak;          /* bit t: InstanceKlass::_reference_type t is a weak or
				     * phantom reference's (JDK 17: 3, 5; JDK 25: 2, 4): the
				     * agent fills it from those classes' own Klasses */
	int32_t str_value, str_coder;
	int32_t loader_data;        /* java.lang.ClassLoader's injected loader_data (its CLD) */
	/* every JavaThread's java.lang.Thread is a root of the collector's; JVMTI
	 * reports none of the threads it hides (compiler threads, ...) */
	uint32_t tl_length, tl_threads; /* ThreadsList::_length, ::_threads */
	uint32_t jt_threadobj;      /* JavaThread::_threadObj (an OopHandle) */
	uint32_t jt_vthread;        /* JavaThread::_vthread (JDK 19+), 0 none */
	uint64_t threads_list;      /* &ThreadsSMRSupport::_java_thread_list */
	/* a virtual thread's stack chunk (jdk.internal.vm.StackChunk, JDK 19+;
	 * all 0 when the JVM has none, or memtrace did not find them): its
	 * references in frames are told by each frame's oop map (compiled) or
	 * bytecode (interpreted), which the copy asks HotSpot for: sc_iterate is
	 * OopOopIterateDispatch<OopIterateClosure>::Table::oop_oop_iterate<
	 * InstanceStackChunkKlass, T> (T narrowOop with compressed oops, else
	 * oop), called in the copy only; sc_size and sc_flags are the values of
	 * jdk_internal_vm_StackChunk::_size_offset and ::_flags_offset (its
	 * stack's words, an int; its flags, a byte) */
	uint64_t sc_iterate;
	int32_t sc_size, sc_flags;
	uint64_t reserved[2];
};

/*
 * MARK: what the copy's marker found, and where its results are in the copy
 * (read like COPY's, with the copy held). Objects and references are records
 * as in tagged walks (ids: a named object's own; every other object
 * next_id + its rank in address order); roots and primitive values likewise;
 * HISTO totals per class; KLASS names each class object the walk met that is
 * not a named class, by its Klass* (memtrace reads its name).
 */
struct mt_ap_hmark {
	int32_t status;        /* 0, or -errno: the mark stopped (why) and sent nothing */
	uint32_t forwarded;    /* MT_AP_FREEZE_FORWARDING: references to a moved object
				* followed to its new copy (saturates) */
	uint64_t truncated;    /* strings cut to MT_AP_HSTR_MAX bytes */
	uint64_t objs, nobjs;      /* struct mt_ap_hobj */
	uint64_t refs, nrefs;      /* struct mt_ap_href */
	uint64_t roots, nroots;    /* struct mt_ap_hroot */
	uint64_t prims, nprims;    /* struct mt_ap_hprim */
	uint64_t strs, nstrs;      /* struct mt_ap_hstrref */
	uint64_t histo, nhisto;    /* struct mt_ap_hhisto */
	uint64_t klasses, nklasses; /* struct mt_ap_hklass */
	uint64_t sampled, nsampled; /* struct mt_ap_hsampled */
	uint64_t addrs;            /* MT_AP_FREEZE_COMPARE: nobjs addresses (uint64_t), the
				    * objects' in the copy, objs' order; else 0 */
	uint64_t marked;           /* live objects */
	uint64_t bytes;            /* their shallow bytes */
	uint64_t edges;            /* references followed */
	uint64_t weak;             /* referents of weak and phantom references not followed */
	uint64_t clds;             /* class loaders' data kept alive */
	uint64_t mark_ns, emit_ns; /* the mark, the records */
	uint64_t next_id;          /* the first id of an object that is not named */
	char why[80];              /* what stopped it ("" when status is 0) */
	uint32_t lead_need;        /* the room a view built over the records in place
				    * needs below the references' (dsl_href entries):
				    * the most CLASS references of the objects up to
				    * one, less the reference records before it, + 1;
				    * 0 none (read when mark_threads is not 0) */
	uint32_t mark_threads;     /* threads that marked: 1 or 2; 0 from an agent before
				    * it (whose why was longer: as emit_threads says) */
	uint32_t emit_threads;     /* threads that wrote the records: 1 or 2; 0 from an
				    * agent before it (whose why was 96 bytes: read it
				    * and the next only when status is 0, when that why
				    * was zeros) */
	uint32_t classrefs;        /* object records with MT_AP_HOBJ_CLASSREF (when
				    * emit_threads is not 0); ref_format MT_AP_REFS_POS:
				    * the CLASS references among nrefs; ref_format
				    * MT_AP_REFS_POS_NOCLASS: those implied, not among
				    * nrefs */
	/* an agent before MT_AP_FREEZE_REFPOS sent the struct up to here
	 * (MT_AP_HMARK_OLD bytes; a reader takes it as zeros after) */
	uint32_t ref_format;       /* MT_AP_REFS_*: the reference records' */
	uint32_t reserved;
};
#define MT_AP_HMARK_OLD 312
_Static_assert(offsetof(struct mt_ap_hmark, ref_format) == MT_AP_HMARK_OLD,
	       "struct mt_ap_hmark grows at its end");

/*
 * MT_AP_FREEZE_LIVE: how far the copy's own mark has written its object and
 * reference records, at a fixed address in the copy. The copy stores a count
 * after the records it counts; it makes gen odd before it moves an array and
 * even again after. A reader takes gen, the addresses and counts, reads the
 * records, and keeps them only if gen was even and is unchanged.
 */
struct mt_ap_hlive {
	uint64_t gen;
	uint64_t objs, nobjs;      /* struct mt_ap_hobj: where, how many written */
	uint64_t refs, nrefs;      /* struct mt_ap_href */
	uint64_t cap_objs;         /* how many each array was sized for */
	uint64_t cap_refs;
	uint64_t pool;             /* MT_AP_FREEZE_POOL: where the copy mapped memtrace's
				    * memfd (0: not mapped); an array at an address in
				    * [pool, pool + pool_bytes) is at that offset in it */
	uint64_t pool_bytes;
	/* MT_AP_FREEZE_INPLACE only (an older agent's struct ends above): the
	 * objects the mark has marked and the references it has pushed so far,
	 * every 64 Ki objects and at its end */
	uint64_t mark_objs, mark_refs;
};

/* MT_AP_FREEZE_INPLACE: the offset in a pool of @pool_bytes where the copy
 * writes its reference records (the middle, on a cache line). */
static inline uint64_t mt_ap_inplace_refs(uint64_t pool_bytes)
{
	return (pool_bytes / 2) & ~63ull;
}

struct mt_ap_hlive_at {
	uint32_t child_pid;        /* the copy's pid in the JVM's pid namespace */
	uint32_t reserved;
	uint64_t live;             /* address of its struct mt_ap_hlive */
};

struct mt_ap_hhisto {
	uint64_t cls;          /* the class object's id */
	uint64_t klass;        /* its Klass* */
	uint64_t count, bytes;
};

struct mt_ap_hklass {
	uint64_t id;           /* the class object's id */
	uint64_t klass;        /* its Klass* (0: a primitive type's class) */
};

/* One string value in the copy. */
struct mt_ap_hstrref {
	uint64_t obj;          /* key of the String (as in VISITS) */
	uint32_t len;          /* UTF-8 bytes, <= MT_AP_HSTR_MAX */
	uint32_t reserved;
	uint64_t utf8;         /* address of len bytes and a NUL */
};

enum mt_ap_freeze_stage {
	MT_AP_FREEZE_OK = 0,
	MT_AP_FREEZE_CHECK = 1,   /* before the walk: the request or the JVM does not allow it */
	MT_AP_FREEZE_FORK = 2,    /* fork() failed in the pause */
	MT_AP_FREEZE_WALK = 3,    /* the copy died, stalled or ran out of time */
	MT_AP_FREEZE_PULL = 4,    /* its records could not be read */
	MT_AP_FREEZE_CLIENT = 5,  /* memtrace went away: the copy was killed */
};

/* AGES: the session's walks so far, this one last; first_id ascending. */
struct mt_ap_hages {
	uint64_t gcs;      /* GCs the session counted by this walk's pause */
	uint32_t nwalks;   /* struct mt_ap_hwalk entries following */
	uint32_t dropped;  /* walks past the agent's bound, not listed (their
			    * objects look as old as the last listed range's) */
};

struct mt_ap_hwalk {
	uint64_t first_id; /* the first id this walk could hand out */
	uint64_t gcs;      /* GCs counted by this walk's pause */
};

_Static_assert(sizeof(struct mt_ap_hages) == 16, "hages layout");
_Static_assert(sizeof(struct mt_ap_hwalk) == 16, "hwalk layout");
_Static_assert(sizeof(struct mt_ap_heap_request) == 16, "heap request layout");
_Static_assert(sizeof(struct mt_ap_heap_done) == 96, "heap done layout");
_Static_assert(sizeof(struct mt_ap_hobj) == 32, "hobj layout");
_Static_assert(sizeof(struct mt_ap_href) == 24, "href layout");
_Static_assert(sizeof(struct mt_ap_hroot) == 16, "hroot layout");
_Static_assert(sizeof(struct mt_ap_hprim) == 24, "hprim layout");
_Static_assert(sizeof(struct mt_ap_hclass) == 32, "hclass layout");
_Static_assert(sizeof(struct mt_ap_hhisto) == 32, "hhisto layout");
_Static_assert(sizeof(struct mt_ap_hklass) == 16, "hklass layout");
_Static_assert(sizeof(struct mt_ap_hclass_ext) == 8, "hclass ext layout");
_Static_assert(sizeof(struct mt_ap_hvisit) == 32, "hvisit layout");
_Static_assert(sizeof(struct mt_ap_hnamed) == 16, "hnamed layout");
_Static_assert(sizeof(struct mt_ap_heap_freeze) == 128, "heap freeze layout");
_Static_assert(sizeof(struct mt_ap_hcopy) == 64, "hcopy layout");
_Static_assert(sizeof(struct mt_ap_hstrref) == 24, "hstrref layout");
_Static_assert(sizeof(struct mt_ap_hfreeze) == 224, "hfreeze layout");
_Static_assert(sizeof(struct mt_ap_heap_zgc) == 136, "heap zgc layout");
_Static_assert(sizeof(struct mt_ap_hsampled) == 16, "hsampled layout");

_Static_assert(sizeof(struct mt_ap_hdr) == MT_AP_HDR_SIZE, "header layout");
_Static_assert(sizeof(struct mt_ap_sample_start) == 8, "sample start layout");
_Static_assert(sizeof(struct mt_ap_sample_started) == 24, "sample started layout");
_Static_assert(sizeof(struct mt_ap_sample_stats) == 64, "sample stats layout");
_Static_assert(sizeof(struct mt_ap_rec) == 8, "record header layout");
_Static_assert(sizeof(struct mt_ap_alloc) == 32, "alloc layout");
_Static_assert(sizeof(struct mt_ap_frame) == 8, "frame layout");
_Static_assert(sizeof(struct mt_ap_gc) == 32, "gc layout");
_Static_assert(sizeof(struct mt_ap_hello) == 8, "hello layout");
_Static_assert(sizeof(struct mt_ap_hello_reply) == 32 + 3 * MT_AP_STR, "hello reply layout");
_Static_assert(sizeof(struct mt_ap_ping) == 8, "ping layout");
_Static_assert(sizeof(struct mt_ap_error) == 136, "error layout");

/* mt_ap_payload_size - the exact payload size of @type, or -1 if unknown. */
static inline long mt_ap_payload_size(unsigned type)
{
	switch (type) {
	case MT_AP_HELLO:       return sizeof(struct mt_ap_hello);
	case MT_AP_HELLO_REPLY: return sizeof(struct mt_ap_hello_reply);
	case MT_AP_PING:
	case MT_AP_PONG:        return sizeof(struct mt_ap_ping);
	case MT_AP_DETACH:
	case MT_AP_DETACH_ACK:  return 0;
	case MT_AP_ERROR:       return sizeof(struct mt_ap_error);
	case MT_AP_SAMPLE_START: return sizeof(struct mt_ap_sample_start);
	case MT_AP_SAMPLE_STARTED: return sizeof(struct mt_ap_sample_started);
	case MT_AP_SAMPLE_STOP: return 0;
	case MT_AP_SAMPLE_STOPPED: return sizeof(struct mt_ap_sample_stats);
	case MT_AP_EVENTS:      return MT_AP_VARLEN;
	case MT_AP_HEAP_REQUEST: return MT_AP_VARLEN;
	case MT_AP_HEAP_DATA:   return MT_AP_VARLEN;
	case MT_AP_HEAP_DONE:   return sizeof(struct mt_ap_heap_done);
	case MT_AP_HEAP_RELEASE: return 0;
	default:                return -1;
	}
}

/*
 * mt_ap_encode - write a frame (header + @len payload bytes) into @buf of
 * @cap bytes. Returns the frame size, -EMSGSIZE if @len exceeds the limit
 * or @cap, -EINVAL for a NULL payload with a non-zero @len.
 */
static inline long mt_ap_encode(void *buf, size_t cap, unsigned type, uint32_t seq,
				const void *payload, size_t len)
{
	struct mt_ap_hdr h = {
		.magic = MT_AP_MAGIC, .version = MT_AP_VERSION,
		.type = (uint16_t)type, .len = (uint32_t)len, .seq = seq,
	};

	if (len > MT_AP_MAX_PAYLOAD || cap < MT_AP_HDR_SIZE || len > cap - MT_AP_HDR_SIZE)
		return -EMSGSIZE;
	if (len && !payload)
		return -EINVAL;
	memcpy(buf, &h, sizeof(h));
	if (len)
		memcpy((char *)buf + MT_AP_HDR_SIZE, payload, len);
	return (long)(MT_AP_HDR_SIZE + len);
}

/*
 * mt_ap_check_hdr - validate a received header.
 * Returns 0; -EBADMSG for a bad magic; -EPROTONOSUPPORT for another version;
 * -EMSGSIZE for a payload over MT_AP_MAX_PAYLOAD; -ENOMSG for an unknown type;
 * -EPROTO for a payload whose size does not match its type.
 */
static inline int mt_ap_check_hdr(const struct mt_ap_hdr *h)
{
	long want;

	if (h->magic != MT_AP_MAGIC)
		return -EBADMSG;
	if (h->version != MT_AP_VERSION)
		return -EPROTONOSUPPORT;
	if (h->len > MT_AP_MAX_PAYLOAD)
		return -EMSGSIZE;
	want = mt_ap_payload_size(h->type);
	if (want == MT_AP_VARLEN)
		return 0;
	if (want < 0)
		return -ENOMSG;
	if ((long)h->len != want)
		return -EPROTO;
	return 0;
}

/*
 * mt_ap_decode - parse one frame at the start of @buf (@n bytes available).
 * On success fills *@h, points *@payload into @buf and returns the frame size.
 * Returns -EAGAIN if @n holds only part of a frame (read more), or the
 * errors of mt_ap_check_hdr(). Never reads past @buf + @n.
 */
static inline long mt_ap_decode(const void *buf, size_t n, struct mt_ap_hdr *h,
				const void **payload)
{
	int err;

	if (n < MT_AP_HDR_SIZE)
		return -EAGAIN;
	memcpy(h, buf, sizeof(*h));
	err = mt_ap_check_hdr(h);
	if (err)
		return err;
	if (n - MT_AP_HDR_SIZE < h->len)
		return -EAGAIN;
	*payload = (const char *)buf + MT_AP_HDR_SIZE;
	return (long)(MT_AP_HDR_SIZE + h->len);
}

/*
 * mt_ap_rec_next - the record at *@off of an EVENTS payload @buf of @n bytes.
 * Fills *@r, points *@body at the body (*@body_len bytes), advances *@off.
 * Returns 1 for a record, 0 at the end, -EBADMSG for a malformed record
 * (length < 8, not a multiple of 8, past the end, or a body too short or
 * inconsistent for its kind). Unknown kinds are returned for the caller to skip.
 */
static inline int mt_ap_rec_next(const void *buf, size_t n, size_t *off, struct mt_ap_rec *r,
				 const void **body, size_t *body_len)
{
	const char *p = (const char *)buf + *off;
	size_t left, blen;

	if (*off >= n)
		return 0;
	left = n - *off;
	if (left < sizeof(*r))
		return -EBADMSG;
	memcpy(r, p, sizeof(*r));
	if (r->len < sizeof(*r) || r->len % 8 || r->len > left)
		return -EBADMSG;
	blen = r->len - sizeof(*r);
	switch (r->kind) {
	case MT_AP_REC_CLASS:
	case MT_AP_REC_METHOD:
		/* a NUL-terminated string (METHOD: two) inside the body */
		if (!blen || !memchr(p + sizeof(*r), '\0', blen))
			return -EBADMSG;
		if (r->kind == MT_AP_REC_METHOD) {
			const char *s2 = (const char *)memchr(p + sizeof(*r), '\0', blen) + 1;

			if (s2 >= p + r->len || !memchr(s2, '\0', (size_t)(p + r->len - s2)))
				return -EBADMSG;
		}
		break;
	case MT_AP_REC_ALLOC: {
		struct mt_ap_alloc a;

		if (blen < sizeof(a))
			return -EBADMSG;
		memcpy(&a, p + sizeof(*r), sizeof(a));
		if (a.depth > MT_AP_MAX_DEPTH ||
		    blen < sizeof(a) + a.depth * sizeof(struct mt_ap_frame))
			return -EBADMSG;
		break;
	}
	case MT_AP_REC_FREE:
		if (blen / 8 < r->arg)
			return -EBADMSG;
		break;
	case MT_AP_REC_GC:
		if (blen < sizeof(struct mt_ap_gc))
			return -EBADMSG;
		break;
	case MT_AP_REC_STATS:
		if (blen < sizeof(struct mt_ap_sample_stats))
			return -EBADMSG;
		break;
	default:
		break;
	}
	*body = p + sizeof(*r);
	*body_len = blen;
	*off += r->len;
	return 1;
}

/*
 * mt_ap_rec_put - append a record of @kind/@arg with a body of @blen bytes
 * (padded with zeros to a multiple of 8) at *@off of @buf (@cap bytes).
 * Returns the record's size, or -ENOSPC (nothing written) if it does not fit
 * or exceeds a record's 65535-byte limit.
 */
static inline long mt_ap_rec_put(void *buf, size_t cap, size_t *off, unsigned kind, uint32_t arg,
				 const void *body, size_t blen)
{
	size_t len = (sizeof(struct mt_ap_rec) + blen + 7) & ~(size_t)7;
	struct mt_ap_rec r = { .kind = (uint16_t)kind, .len = (uint16_t)len, .arg = arg };
	char *p = (char *)buf + *off;

	if (len > 0xfff8 || *off > cap || cap - *off < len)
		return -ENOSPC;
	memcpy(p, &r, sizeof(r));
	if (blen)
		memcpy(p + sizeof(r), body, blen);
	memset(p + sizeof(r) + blen, 0, len - sizeof(r) - blen);
	*off += len;
	return (long)len;
}

#endif
