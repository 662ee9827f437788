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
