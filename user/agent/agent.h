/* agent.h - memtrace's JVMTI agent, internal interface between agent.c (JVMTI
 * lifecycle: Agent_OnLoad/OnAttach/OnUnload, options) and server.c (the one
 * socket thread). Nothing here is exported: the library is built with
 * -fvisibility=hidden and only the Agent_On* entry points are JNIEXPORT.
 */
#ifndef MEMTRACE_AGENT_H
#define MEMTRACE_AGENT_H

#include <jvmti.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/un.h>

#include "memtrace/agent_proto.h"

/* The Makefile passes MT_VERSION to user/ code; the agent rule may not. */
#ifndef MT_VERSION
#define MT_VERSION "unknown"
#endif

/* Agent_OnAttach return codes: enum mt_agent_rc in agent_proto.h. */
enum {
	AGENT_OK = MT_AGENT_OK,
	AGENT_E_OPTIONS = MT_AGENT_E_OPTIONS,
	AGENT_E_JVMTI = MT_AGENT_E_JVMTI,
	AGENT_E_SOCKET = MT_AGENT_E_SOCKET,
	AGENT_E_THREAD = MT_AGENT_E_THREAD,
	AGENT_E_TWICE = MT_AGENT_E_TWICE,
};

/* Everything the agent keeps; one instance per loaded library, in agent.c. */
struct agent {
	pthread_mutex_t lock;      /* guards the fields below that both threads touch */
	JavaVM *vm;
	JNIEnv *jni;               /* the socket thread's JNIEnv (set when it starts) */
	jvmtiEnv *jvmti;           /* our environment, created once, never disposed */
	bool started;              /* the socket thread runs (never stops) */
	int wake_fd;               /* eventfd: Agent_OnAttach wakes the thread */
	char sock_path[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* where we listen */
	bool sock_changed;         /* sock_path changed since the thread bound it */
	uint32_t attach_count;     /* Agent_OnLoad/OnAttach calls */
	uint64_t sessions;         /* accepted client sessions */
	uint64_t loaded_ns;        /* CLOCK_REALTIME at the first start */
	uint32_t jvmti_version;
	char java_version[MT_AP_STR];
	char vm_name[MT_AP_STR];
};

extern struct agent agent;

#define MT_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* Ring sizes of one sampling session (allocated on START, freed on STOP). */
#define SAMPLER_ALLOC_RING 2048  /* pending samples (~430 B each) */
#define SAMPLER_FREE_RING  65536 /* pending ObjectFree tags */
#define SAMPLER_GC_RING    256   /* pending GC records */

/* A sample as the callback recorded it; names are resolved by the socket thread. */
struct sample_slot {
	_Atomic int ready;          /* set last by the callback (release) */
	unsigned depth;
	uint64_t id;                /* 0: skip (the callback failed) */
	uint64_t size;
	uint64_t ts_ns;
	jmethodID methods[MT_AP_MAX_DEPTH];
	jlocation bcis[MT_AP_MAX_DEPTH];
	char cls[160];              /* JVM class signature, truncated */
};

/* Counters the callbacks bump (atomics); copied into mt_ap_sample_stats. */
struct sampler_counters {
	_Atomic uint64_t sampled, dropped_allocs, dropped_frees, dropped_gcs, frees, gcs,
		tag_errors;
};

/* The sampling session (sampler.c); the rings are drained by stream.c. */
struct sampler {
	pthread_mutex_t lock;       /* guards the alloc and free rings' head/count */
	_Atomic int active;         /* callbacks may record */
	_Atomic int inflight;       /* callbacks inside session state */
	jvmtiEnv *env;              /* this session's environment, NULL when off */
	unsigned max_depth, interval;
	struct sample_slot *allocs; /* MPSC ring: reserved under lock, published by `ready` */
	unsigned a_cap, a_head, a_count;
	uint64_t *frees;
	unsigned f_cap, f_head, f_count;
	struct mt_ap_gc gcs[SAMPLER_GC_RING]; /* SPSC ring: GC callback → socket thread */
	_Atomic unsigned g_w, g_r;
	uint64_t gc_no;             /* GC callback only */
	struct sampler_counters st;
};

extern struct sampler smp;

/* CLOCK_MONOTONIC in ns. */
uint64_t agent_mono_ns(void);

/*
 * sampler_start - new JVMTI env, capabilities, rings, interval, events on.
 * Socket thread only. Returns 0 and fills *@out, or -errno with a reason in @why.
 */
int sampler_start(const struct mt_ap_sample_start *req, struct mt_ap_sample_started *out,
		  char *why, size_t n);
/* sampler_quiesce - events off, default interval back, wait for callbacks to
 * leave. The rings keep what was recorded (drain them next). No-op if off. */
void sampler_quiesce(void);
/* sampler_release - quiesce, free the rings, dispose the env (tags go with it). */
void sampler_release(void);
/* sampler_active - a session is on (START seen, not released). */
bool sampler_active(void);

/*
 * stream_drain - move what the rings hold into EVENTS frames appended with
 * @emit (frame type, payload, len; returns 0 or -1 when it cannot take more).
 * Resolves names (sending CLASS/METHOD records once per session). Returns the
 * number of records emitted, or -1 if @emit refused a frame (the rest stays).
 */
int stream_drain(int (*emit)(unsigned type, const void *payload, size_t len), bool stats);
/* stream_stats - the session's counters. */
void stream_stats(struct mt_ap_sample_stats *st);
/* stream_empty - the rings hold nothing more to send. */
bool stream_empty(void);
/* stream_reset - forget the session's name tables (free their memory). */
void stream_reset(void);

/* agent_log - one line "memtrace-agent: ..." on the JVM's stderr (errors only). */
void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * server_listen - create the listening socket at @path (replacing a stale
 * socket, refusing any other file type), mode 0600. Returns the fd or -errno.
 * *@ino receives the socket file's inode, to notice later removal.
 */
int server_listen(const char *path, ino_t *ino);

/*
 * server_start - start the socket thread (a JVMTI agent thread, daemon) that
 * serves @listen_fd. Called once, with agent.lock held, from a Java thread
 * (@jni). Returns 0 or -1 after logging.
 */
int server_start(JNIEnv *jni, int listen_fd, ino_t ino);

/* server_wake - make the thread re-check its socket (after another OnAttach). */
void server_wake(void);

/* server_shutdown - VM death: remove our socket file if it is still ours. */
void server_shutdown(void);

#endif
