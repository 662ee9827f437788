/*
 * jvmid.h - who a JVM is beyond its pid: its container (id, runtime, name)
 * and, under Kubernetes, its pod (UID, name, namespace), read from what the
 * kernel and the JVM's own container hold - no container runtime or API
 * server is asked.
 *
 * Sources, in the order they are read:
 * - /proc/PID/cgroup: the container id and runtime from the cgroup path's
 *   deepest container segment (docker: /docker/ID, docker-ID.scope; podman:
 *   libpod-ID[.scope]; containerd's CRI: cri-containerd-ID.scope or a bare
 *   ID under a pod; CRI-O: crio-ID.scope), cgroup v1 or v2; the pod UID from
 *   the kubelet's pod cgroup (cgroupfs driver: .../kubepods/[QOS/]podUID/...;
 *   systemd driver: kubepods-[QOS-]podUID.slice, '-' written '_').
 * - the container's name: podman's /run/.containerenv inside the JVM's root
 *   (name="..." when podman filled it, id checked against the cgroup's), or
 *   the command line of conmon, the monitor podman and CRI-O start above the
 *   container (-n NAME -c ID; visible from the host's pid namespace). CRI-O's
 *   names read k8s_CONTAINER_POD_NAMESPACE_UID_ATTEMPT and give the pod too.
 * - in a pod: the pod name from the JVM's environment HOSTNAME (the runtime
 *   sets it to the pod's hostname, which is the pod's name unless the pod
 *   sets spec.hostname; left out when the JVM shares the host's uts namespace:
 *   hostNetwork pods carry the node's name there), the namespace from the
 *   service-account file the kubelet mounts
 *   (/var/run/secrets/kubernetes.io/serviceaccount/namespace, absent with
 *   automountServiceAccountToken: false; read under /run when the image's
 *   /var/run is a symlink, which would resolve against memtrace's own root).
 */
#ifndef MEMTRACE_JVMID_H
#define MEMTRACE_JVMID_H

#include <stddef.h>
#include <stdio.h>

struct jvmid {
	char container_id[72];    /* 64 hex digits, "" outside a container */
	char runtime[16];         /* "docker", "podman", "containerd", "cri-o"; "" unknown */
	char container_name[128]; /* "" unless the runtime left it readable */
	char name_from[16];       /* ".containerenv", "conmon", "" */
	char pod_uid[40];         /* Kubernetes pod UID, "" outside a pod */
	char pod[254];            /* pod name, "" if unknown */
	char pod_namespace[64];   /* namespace, "" if unknown */
};

/* jvmid_read - fill *@id for host pid @pid (fields it cannot learn stay "").
 * Reads /proc/PID/cgroup, /proc/PID/environ, files under /proc/PID/root and
 * the command lines of @pid's ancestors. Prints nothing. */
void jvmid_read(int pid, struct jvmid *id);

/* jvmid_json - @id as JSON members, each with its leading comma:
 * ,"container_id":..,"container_runtime":..,"container_name":..,
 * "container_name_from":..,"pod":..,"namespace":..,"pod_uid":.. ("" unknown). */
void jvmid_json(FILE *f, const struct jvmid *id);

/* jvmid_parse_cgroup - the container id, runtime and pod UID in the text of a
 * /proc/PID/cgroup file (@text). The first line that names a container
 * decides (the deepest container segment of its path: a container inside a
 * container is the inner one); failing any, a 64-hex-digit run anywhere.
 * Returns 0 or -ENOENT (no container; the pod UID may still be set). Pure. */
int jvmid_parse_cgroup(const char *text, struct jvmid *id);

/* jvmid_parse_containerenv - podman's /run/.containerenv text: its name="..."
 * and id="..." into @name and @cid (each "" when absent). Pure. */
void jvmid_parse_containerenv(const char *text, char *name, size_t nlen, char *cid,
			      size_t clen);

/* jvmid_parse_conmon - conmon's NUL-separated command line (@args, @len
 * bytes): if its container id (-c/--cid) is @id->container_id, the name
 * (-n/--name) into @id, and for CRI-O's k8s_C_POD_NS_UID_N names the
 * container, pod, namespace and pod UID. Returns 0, or -ENOENT when the
 * line is not conmon's of that container. Pure. */
int jvmid_parse_conmon(const char *args, size_t len, struct jvmid *id);

/* jvmid_env - the value of @key in a NUL-separated environment (@env, @len
 * bytes) into @out; returns 0 or -ENOENT. Pure. */
int jvmid_env(const char *env, size_t len, const char *key, char *out, size_t outlen);

#endif
