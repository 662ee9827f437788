/*
 * serve.h - what the threads of `memtrace serve` share (types only):
 *
 * The main thread owns the watched JVMs (serve_watch.h: one gctrace each,
 * and the allocation and agent sampling switched on per JVM) and keeps their
 * series in the metrics registry (serve_metrics.h). The HTTP thread answers
 * the JSON API (serve_api.h): it reads the JVM list and records wishes
 * (want) that the main thread acts on in its next tick. Queries run in
 * threads of their own (serve_query.h). serve.lock guards the JVM list,
 * the fields below marked so and the query jobs; the registry has its own.
 */
#ifndef MEMTRACE_SERVE_H
#define MEMTRACE_SERVE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "agentctl/agentlive.h"
#include "serve/gcmeters.h"
#include "serve/serve_query.h"
#include "jvm/heapused.h"
#include "jvm/proc.h"
#include "serve/metrics.h"

struct alloctrace;
struct gctrace;

/* Whose names the JVM series carry (--names). */
enum serve_names {
	SERVE_NAMES_MICROMETER, /* jvm_gc_pause_seconds{gc,action,cause}, jvm_memory_used_bytes{area,id} */
	SERVE_NAMES_OTEL,       /* jvm_gc_duration_seconds{jvm_gc_name,...}, jvm_memory_used_bytes{jvm_memory_type,...} */
};

/* The JVM's identity labels (jvm/jvmid.h) that may go on every series
 * (--labels); memtrace_jvm_info always carries them all. */
enum serve_idlabel {
	SERVE_ID_CONTAINER_ID = 1 << 0,   /* container_id */
	SERVE_ID_CONTAINER = 1 << 1,      /* container: its name */
	SERVE_ID_POD = 1 << 2,            /* pod */
	SERVE_ID_NAMESPACE = 1 << 3,      /* namespace */
	SERVE_ID_POD_UID = 1 << 4,        /* pod_uid */
};

/* One GC timer series of a JVM (collector, action, cause) and its window max. */
struct serve_timer {
	char gc[MT_GC_NAME_LEN], action[MT_GC_NAME_LEN], cause[MT_GC_NAME_LEN];
	bool concurrent;       /* Micrometer's jvm.gc.concurrent.phase.time */
	struct winmax max;
};

/* One memory pool of a JVM, as the last collection reported it. */
struct serve_pool {
	char name[MT_GC_NAME_LEN];
	bool heap;
	bool reported;         /* committed/max known (a collection reported the pool) */
	uint64_t committed, max, used_after;
};

#define SERVE_MAX_POOLS MT_GC_MAX_POOLS
#define SERVE_MAX_TIMERS 32

/* What a switchable piece of work is doing (shown by /api/v1/jvms). */
enum serve_work_state {
	SERVE_WORK_OFF,
	SERVE_WORK_STARTING,
	SERVE_WORK_ON,
	SERVE_WORK_STOPPING,
	SERVE_WORK_FAILED,
};

/* A switchable piece of work of one JVM: want is the API's wish, state and
 * error what the main thread made of it (all guarded by serve.lock). */
struct serve_work {
	bool want;
	enum serve_work_state state;
	char error[160];
	uint64_t since_ns;     /* epoch ns when it came on */
};

struct serve_alloc_cls {
	char *name;
	uint64_t bytes;        /* since allocation sampling came on */
};

/* One watched JVM (the main thread's; the HTTP thread reads it under serve.lock). */
struct serve_jvm {
	struct mt_proc p;
	struct gctrace *t;
	struct serve *sv;
	char pid_s[16];
	uint64_t since_ns;     /* epoch ns when serve attached */
	uint64_t collections;  /* records seen (guarded by serve.lock) */
	/* allocation sampling: the tracer is the main thread's */
	struct serve_work alloc;
	struct alloctrace *at;
	struct serve_alloc_cls *cls; /* exported classes (sticky while on), guarded by serve.lock */
	int ncls;
	uint64_t alloc_total;  /* guarded by serve.lock */
	/* agent sampling: the session is the main thread's */
	struct serve_work age;
	uint32_t age_interval; /* bytes; 0: the agent's default */
	struct agentlive *al;  /* never read by the HTTP thread */
	uint32_t age_on_interval;   /* the agent's interval while on, guarded by serve.lock */
	struct agentlive_ages ages; /* last read, guarded by serve.lock */
	/* the JVM series (Micrometer's or OTel's names): the main thread's */
	struct gcmeters gm;
	struct serve_timer timers[SERVE_MAX_TIMERS];
	int ntimers;
	struct serve_pool pools[SERVE_MAX_POOLS];
	int npools;
	struct mt_vmstructs *mvs; /* for the heap pools' used bytes now; NULL: none */
	struct heapused hu;       /* hu.kind HEAPUSED_NONE: no figures (yet) */
	bool hu_hinted;           /* tried again with the pool names of a collection */
	/* java.util.concurrent parks (--locks): the main thread's */
	struct mt_vmstructs *vs;
	struct parktrace *pk;
	/* the JVM's /tmp (-1: not opened), held to remove the sockets it leaves
	 * when it is killed (attach_remove_stale) */
	int tmpfd;
};

/* The profile jobs of one serve (serve_pprof.h), guarded by serve.lock. */
struct serve_pprof_job;
struct serve_pprofs {
	struct serve_pprof_job *list;
	int running;
};

struct serve {
	struct metrics *m;
	pthread_mutex_t lock;  /* guards jvms[] and their counters for the HTTP thread */
	struct serve_jvm **jvms;
	int njvms, cap;
	int *failed;           /* pids we could not watch: not retried while alive */
	int nfailed;
	int only_pid;          /* -p PID, 0 with --all */
	bool alloc_all, age_all; /* --alloc, --age: switched on for every JVM watched */
	bool locks_all;          /* --locks: park counters for every JVM watched */
	uint32_t age_interval;   /* --age-interval */
	int alloc_top;           /* classes exported per JVM (--alloc-top) */
	enum serve_names names;  /* --names */
	unsigned id_labels;      /* --labels: SERVE_ID_* on every series besides pid, main_class */
	uint64_t next_work_ns;   /* next refresh of the allocation and age series */
	struct serve_queries queries; /* its lock is &lock */
	struct serve_pprofs pprofs;   /* guarded by lock */
};

#endif
