// SPDX-License-Identifier: GPL-2.0
/*
 * onload.c - memtrace's JVMTI agent: its entry points (Agent_OnLoad,
 * Agent_OnAttach, Agent_OnUnload, the only exported symbols), options and the
 * first start (JVMTI environment, listening socket, socket thread).
 *
 * Loaded at startup (-agentpath:lib=sock=PATH) or on demand by `memtrace
 * attach` (Agent_OnAttach). JVMTI agents cannot unload, so the first call
 * creates the JVMTI environment, the listening socket and one agent thread;
 * every later Agent_OnAttach in the same JVM (same library instance) only
 * updates the socket path and wakes that thread: no second thread, no new fd.
 *
 * Options: comma-separated key=value pairs.
 *   sock=/abs/path   the unix socket to listen on (default /tmp/.memtrace-<pid>.sock)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "agent.h"
#include "server.h"

/* Agent_OnAttach return codes: enum mt_agent_rc in agent_proto.h. */
enum {
	AGENT_OK = MT_AGENT_OK,
	AGENT_E_OPTIONS = MT_AGENT_E_OPTIONS,
	AGENT_E_JVMTI = MT_AGENT_E_JVMTI,
	AGENT_E_SOCKET = MT_AGENT_E_SOCKET,
	AGENT_E_THREAD = MT_AGENT_E_THREAD,
	AGENT_E_TWICE = MT_AGENT_E_TWICE,
};

/* Parse @opts into @sock (size @n). Returns 0 or -EINVAL after logging. */
static int parse_options(const char *opts, char *sock, size_t n)
{
	const char *p = opts ? opts : "";

	snprintf(sock, n, MT_AP_SOCK_FMT, (int)getpid());
	while (*p) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len > 5 && !strncmp(p, "sock=", 5)) {
			if (p[5] != '/' || len - 5 >= n) {
				agent_log("option sock= needs an absolute path shorter than %zu bytes", n);
				return -EINVAL;
			}
			memcpy(sock, p + 5, len - 5);
			sock[len - 5] = '\0';
		} else if (len) {
			agent_log("unknown option '%.*s' (known: sock=PATH)", (int)len, p);
			return -EINVAL;
		}
		p += len;
		if (*p == ',')
			p++;
	}
	return 0;
}

/* Copy system property @key into @out (best effort: "" if unavailable). */
static void get_property(const char *key, char *out, size_t n)
{
	char *v = NULL;

	out[0] = '\0';
	if ((*agent.jvmti)->GetSystemProperty(agent.jvmti, key, &v) == JVMTI_ERROR_NONE && v) {
		snprintf(out, n, "%s", v);
		(*agent.jvmti)->Deallocate(agent.jvmti, (unsigned char *)v);
	}
}

/*
 * Is another copy of this agent (loaded from another path, so another
 * library instance with its own statics) mapped in this process? Two copies
 * would mean two threads fighting over one socket: the newcomer stays inactive.
 */
static bool other_copy_mapped(char *other, size_t n)
{
	uintptr_t self = (uintptr_t)&other_copy_mapped;
	char line[4096], mine[4096] = "";
	bool found = false;
	FILE *f;

	/* pass 1: our own path; pass 2: any other libmemtrace-agent path */
	for (int pass = 0; pass < 2 && !found; pass++) {
		f = fopen("/proc/self/maps", "re");
		if (!f)
			return false;
		while (fgets(line, sizeof(line), f)) {
			unsigned long lo, hi;
			char *path = strchr(line, '/');

			if (!path || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
				continue;
			path[strcspn(path, "\n")] = '\0';
			if (pass == 0 && self >= lo && self < hi) {
				snprintf(mine, sizeof(mine), "%s", path);
				break;
			}
			if (pass == 1 && mine[0] && strstr(path, "libmemtrace-agent") &&
			    strcmp(path, mine)) {
				snprintf(other, n, "%s", path);
				found = true;
				break;
			}
		}
		fclose(f);
	}
	return found;
}

/* First start in this JVM: environment facts, socket, thread. Lock held. */
static int first_start(JavaVM *vm, JNIEnv *jni)
{
	struct timespec ts;
	jint ver = 0;
	ino_t ino;
	int fd;

	char other[512];

	if (other_copy_mapped(other, sizeof(other))) {
		agent_log("another memtrace agent (%s) already runs in this JVM; this copy stays "
			  "inactive", other);
		return AGENT_E_TWICE;
	}
	if (!agent.jvmti &&
	    (*vm)->GetEnv(vm, (void **)&agent.jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		agent_log("cannot get a JVMTI environment");
		return AGENT_E_JVMTI;
	}
	agent.vm = vm;
	if ((*agent.jvmti)->GetVersionNumber(agent.jvmti, &ver) == JVMTI_ERROR_NONE)
		agent.jvmti_version = (uint32_t)ver;
	/* JVMTI sees the VM's properties only: java.vm.version, not java.version. */
	get_property("java.vm.version", agent.java_version, sizeof(agent.java_version));
	get_property("java.vm.name", agent.vm_name, sizeof(agent.vm_name));
	clock_gettime(CLOCK_REALTIME, &ts);
	agent.loaded_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;

	if (agent.wake_fd < 0) {
		agent.wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
		if (agent.wake_fd < 0) {
			agent_log("eventfd: %s", strerror(errno));
			return AGENT_E_SOCKET;
		}
	}
	fd = server_listen(agent.sock_path, &ino);
	if (fd < 0)
		return AGENT_E_SOCKET;
	if (server_start(jni, fd, ino)) {
		close(fd);
		return AGENT_E_THREAD;
	}
	agent.started = true;
	return AGENT_OK;
}

/* Common to OnAttach and VMInit: start once, or update and wake. */
static int start_or_wake(JavaVM *vm, JNIEnv *jni, const char *sock)
{
	int rc = AGENT_OK;

	pthread_mutex_lock(&agent.lock);
	if (strcmp(agent.sock_path, sock)) {
		snprintf(agent.sock_path, sizeof(agent.sock_path), "%s", sock);
		agent.sock_changed = agent.started;
	}
	if (!agent.started)
		rc = first_start(vm, jni);
	pthread_mutex_unlock(&agent.lock);
	if (rc == AGENT_OK)
		agent_wake();
	return rc;
}

JNIEXPORT jint JNICALL Agent_OnAttach(JavaVM *vm, char *options, void *reserved)
{
	char sock[sizeof(agent.sock_path)];
	JNIEnv *jni = NULL;

	pthread_mutex_lock(&agent.lock);
	agent.attach_count++;
	pthread_mutex_unlock(&agent.lock);
	if (parse_options(options, sock, sizeof(sock)))
		return AGENT_E_OPTIONS;
	/* The attach listener is a Java thread: it has a JNIEnv. */
	if ((*vm)->GetEnv(vm, (void **)&jni, JNI_VERSION_1_6) != JNI_OK) {
		agent_log("Agent_OnAttach: no JNIEnv on this thread");
		return AGENT_E_JVMTI;
	}
	return start_or_wake(vm, jni, sock);
}

/* -agentpath at startup: JNI is usable only from VMInit on. */
static char startup_sock[sizeof(agent.sock_path)];

static void JNICALL on_vm_init(jvmtiEnv *jvmti, JNIEnv *jni, jthread thread)
{
	if (start_or_wake(agent.vm, jni, startup_sock))
		agent_log("not started: memtrace cannot connect to this JVM");
}

JNIEXPORT jint JNICALL Agent_OnLoad(JavaVM *vm, char *options, void *reserved)
{
	jvmtiEventCallbacks cb = { .VMInit = on_vm_init };
	int rc = AGENT_OK;

	pthread_mutex_lock(&agent.lock);
	agent.attach_count++;
	agent.vm = vm;
	if (parse_options(options, startup_sock, sizeof(startup_sock))) {
		rc = AGENT_E_OPTIONS;
	} else if ((*vm)->GetEnv(vm, (void **)&agent.jvmti, JVMTI_VERSION_1_2) != JNI_OK) {
		agent_log("cannot get a JVMTI environment");
		rc = AGENT_E_JVMTI;
	} else if ((*agent.jvmti)->SetEventCallbacks(agent.jvmti, &cb, sizeof(cb)) ||
		   (*agent.jvmti)->SetEventNotificationMode(agent.jvmti, JVMTI_ENABLE,
							    JVMTI_EVENT_VM_INIT, NULL)) {
		agent_log("cannot enable the VMInit event");
		rc = AGENT_E_JVMTI;
	}
	pthread_mutex_unlock(&agent.lock);
	return rc;
}

JNIEXPORT void JNICALL Agent_OnUnload(JavaVM *vm)
{
	server_shutdown();
}
