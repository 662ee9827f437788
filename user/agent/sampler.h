/* sampler.h - allocation sampling (sampler.c): the JVMTI callbacks' rings,
 * which stream.c drains, and the session's start and end (socket thread). */
#ifndef MEMTRACE_AGENT_SAMPLER_H
#define MEMTRACE_AGENT_SAMPLER_H

#include <jvmti.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/agent_proto.h"

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

#endif
