/* agent.h - memtrace's JVMTI agent: the state every part of the agent shares
 * (agent.c) and its small helpers, at the bottom of the agent's files:
 *   onload.c (Agent_On*) -> server.c (the socket thread) -> heapwalk.c
 *   (the heap walk's driver, over its walk*.c parts; README.md), stream.c
 *   -> sampler.c -> agent.c; walkcopy.c, walkvisit.c -> freeze.c (the
 *   frozen copy of a walk: fork, sandbox, wait, read, kill); server.c ->
 *   request.c (requests parsed and checked, no JVMTI, no state).
 * Nothing here is exported: the library is built with -fvisibility=hidden and
 * only the Agent_On* entry points (onload.c) are JNIEXPORT.
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

/* Everything the agent keeps; one instance per loaded library, in agent.c. */
struct agent {
	pthread_mutex_t lock;      /* guards the fields below that both threads touch */
	JavaVM *vm;
	JNIEnv *jni;               /* the socket thread's JNIEnv (set when it starts) */
	jvmtiEnv *jvmti;           /* our environment, created once, never disposed */
	bool started;              /* the socket thread runs (never stops) */
	int wake_fd;               /* eventfd: agent_wake() wakes the thread */
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

/* agent_mono_ns - CLOCK_MONOTONIC in ns. */
uint64_t agent_mono_ns(void);

/*
 * agent_wake - make the socket thread leave poll(2) and look around (its
 * socket after another OnAttach, the rings after a GC): one write(2) to
 * agent.wake_fd, no lock, so restricted JVMTI callbacks may call it.
 * No-op before the eventfd exists.
 */
void agent_wake(void);

/* agent_log - one line "memtrace-agent: ..." on the JVM's stderr (errors only). */
void agent_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
