// SPDX-License-Identifier: GPL-2.0
/*
 * jvmid.c - a JVM's container and pod from /proc and its own container's
 * files (the sources and their order: jvmid.h).
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jvm/jvmid.h"
#include "lib/util.h"

/* Whether @s[0..n) are all lowercase hex digits. */
static bool all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* A pod UID as the kubelet makes them: a UUID (8-4-4-4-12; @sep its
 * separator, '-' or the systemd driver's '_'), or a static pod's 32 hex
 * digits (an md5 of its manifest). Copied into @out with '-'. */
static bool pod_uid(const char *s, size_t n, char sep, char *out, size_t outlen)
{
	if (n == 32 && all_hex(s, 32)) {
		snprintf(out, outlen, "%.32s", s);
		return true;
	}
	if (n != 36 || outlen < 37)
		return false;
	for (size_t i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? s[i] != sep : !all_hex(s + i, 1))
			return false;
		out[i] = dash ? '-' : s[i];
	}
	out[36] = '\0';
	return true;
}

/* The runtimes' prefixes of a container's cgroup segment. */
static const struct {
	const char *prefix, *runtime;
} prefixes[] = {
	{ "docker-", "docker" },             /* docker's systemd driver: docker-ID.scope */
	{ "libpod-", "podman" },             /* podman: libpod-ID.scope (systemd), libpod-ID (cgroupfs) */
	{ "cri-containerd-", "containerd" }, /* containerd's CRI, systemd driver */
	{ "crio-", "cri-o" },                /* CRI-O: crio-ID.scope, crio-ID */
};

/*
 * The container id in one cgroup path segment @s (@n bytes) into @id, its
 * runtime from the prefix or, for a bare id, from the parent segment @parent
 * (@pn bytes): "docker" for docker's cgroupfs driver (/docker/ID). The
 * monitors' own cgroups (libpod-conmon-ID, crio-conmon-ID) are not the
 * container's.
 */
static bool segment_id(const char *s, size_t n, const char *parent, size_t pn,
		       struct jvmid *id)
{
	const char *rt = "";

	if (n > 6 && !memcmp(s + n - 6, ".scope", 6))
		n -= 6;
	if (n > 64) {
		size_t i;

		for (i = 0; i < MT_ARRAY_SIZE(prefixes); i++) {
			size_t pl = strlen(prefixes[i].prefix);

			if (n == pl + 64 && !memcmp(s, prefixes[i].prefix, pl)) {
				rt = prefixes[i].runtime;
				s += pl;
				n -= pl;
				break;
			}
		}
		if (i == MT_ARRAY_SIZE(prefixes))
			return false;
	} else if (pn == 6 && !memcmp(parent, "docker", 6)) {
		rt = "docker";
	}
	if (n != 64 || !all_hex(s, 64))
		return false;
	snprintf(id->container_id, sizeof(id->container_id), "%.64s", s);
	snprintf(id->runtime, sizeof(id->runtime), "%s", rt);
	return true;
}

/*
 * The pod UID in segment @s (@n bytes) of a path below the kubelet's
 * kubepods cgroup: cgroupfs driver "podUID", systemd driver
 * "kubepods-[QOS-]podUID.slice" (also under a --cgroup-root, as
 * "kubelet-kubepods-...").
 */
static bool segment_pod(const char *s, size_t n, struct jvmid *id)
{
	const char *p;

	if (n > 3 && !memcmp(s, "pod", 3))
		return pod_uid(s + 3, n - 3, '-', id->pod_uid, sizeof(id->pod_uid));
	if (n > 6 + 4 && !memcmp(s + n - 6, ".slice", 6)) {
		for (p = s + n - 6 - 4; p > s; p--)
			if (!memcmp(p, "-pod", 4))
				return pod_uid(p + 4, (size_t)(s + n - 6 - (p + 4)), '_', id->pod_uid,
					       sizeof(id->pod_uid));
	}
	return false;
}

/* One cgroup path @path (@len bytes): the deepest container segment, and
 * the pod segment below a kubepods one. Returns whether a container was found. */
static bool parse_path(const char *path, size_t len, struct jvmid *id)
{
	const char *seg[64];
	size_t segn[64], nseg = 0;
	bool kube = false, found = false;

	for (size_t i = 0; i < len && nseg < 64;) {
		size_t n;

		while (i < len && path[i] == '/')
			i++;
		n = 0;
		while (i + n < len && path[i + n] != '/')
			n++;
		if (n) {
			seg[nseg] = path + i;
			segn[nseg++] = n;
		}
		i += n;
	}
	for (size_t k = nseg; k-- > 0 && !found;)
		found = segment_id(seg[k], segn[k], k ? seg[k - 1] : "", k ? segn[k - 1] : 0, id);
	for (size_t k = 0; k < nseg; k++) {
		if (kube && segment_pod(seg[k], segn[k], id))
			break;
		if (memmem(seg[k], segn[k], "kubepods", 8))
			kube = true;
	}
	return found;
}

int jvmid_parse_cgroup(const char *text, struct jvmid *id)
{
	const char *line = text;
	struct jvmid any = { 0 };

	id->container_id[0] = id->runtime[0] = id->pod_uid[0] = '\0';
	while (line && *line) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		const char *c1 = memchr(line, ':', len), *c2;

		c2 = c1 ? memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line)) : NULL;
		if (c2) {
			struct jvmid one = { 0 };
			const char *path = c2 + 1;
			bool found = parse_path(path, len - (size_t)(path - line), &one);

			if (found) {
				memcpy(id->container_id, one.container_id, sizeof(id->container_id));
				memcpy(id->runtime, one.runtime, sizeof(id->runtime));
				memcpy(id->pod_uid, one.pod_uid, sizeof(id->pod_uid));
				return 0;
			}
			if (one.pod_uid[0] && !any.pod_uid[0])
				memcpy(any.pod_uid, one.pod_uid, sizeof(any.pod_uid));
		}
		line = end ? end + 1 : NULL;
	}
	memcpy(id->pod_uid, any.pod_uid, sizeof(id->pod_uid));
	/* no runtime's shape: a 64-hex-digit run anywhere (e.g. /ecs/TASK/ID) */
	for (const char *s = text; *s; s++) {
		size_t n = 0;

		while (isxdigit((unsigned char)s[n]) && !isupper((unsigned char)s[n]))
			n++;
		if (n == 64) {
			snprintf(id->container_id, sizeof(id->container_id), "%.64s", s);
			return 0;
		}
		s += n ? n - 1 : 0;
	}
	return -ENOENT;
}

/* The value of KEY="..." at a line's start in @text into @out ("" if none). */
static void quoted_value(const char *text, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);

	out[0] = '\0';
	for (const char *l = text; l && *l; l = strchr(l, '\n'), l = l ? l + 1 : NULL) {
		if (strncmp(l, key, kl) || l[kl] != '=' || l[kl + 1] != '"')
			continue;
		snprintf(out, outlen, "%.*s", (int)strcspn(l + kl + 2, "\"\n"), l + kl + 2);
		return;
	}
}

void jvmid_parse_containerenv(const char *text, char *name, size_t nlen, char *cid,
			      size_t clen)
{
	quoted_value(text, "name", name, nlen);
	quoted_value(text, "id", cid, clen);
}

/* CRI-O's container names, k8s_CONTAINER_POD_NAMESPACE_UID_ATTEMPT (Kubernetes
 * names hold no '_'): the parts into @id. Returns whether @name had that shape. */
static bool crio_name(const char *name, struct jvmid *id)
{
	const char *part[6];
	size_t plen[6];
	int n = 0;

	if (strncmp(name, "k8s_", 4))
		return false;
	for (const char *p = name + 4; n < 6; n++) {
		part[n] = p;
		plen[n] = strcspn(p, "_");
		p += plen[n];
		if (!*p) {
			n++;
			break;
		}
		p++;
	}
	if (n != 5 || !plen[0] || !plen[1] || !plen[2])
		return false;
	snprintf(id->container_name, sizeof(id->container_name), "%.*s", (int)plen[0], part[0]);
	snprintf(id->pod, sizeof(id->pod), "%.*s", (int)plen[1], part[1]);
	snprintf(id->pod_namespace, sizeof(id->pod_namespace), "%.*s", (int)plen[2], part[2]);
	if (!id->pod_uid[0])
		pod_uid(part[3], plen[3], '-', id->pod_uid, sizeof(id->pod_uid));
	return true;
}

int jvmid_parse_conmon(const char *args, size_t len, struct jvmid *id)
{
	const char *p = args, *end = args + len, *name = NULL, *cid = NULL;

	while (p < end) {
		const char *a = p;

		p += strnlen(p, (size_t)(end - p)) + 1;
		if ((!strcmp(a, "-n") || !strcmp(a, "--name")) && p < end)
			name = p;
		else if ((!strcmp(a, "-c") || !strcmp(a, "--cid")) && p < end)
			cid = p;
		else if (!strncmp(a, "--name=", 7))
			name = a + 7;
		else if (!strncmp(a, "--cid=", 6))
			cid = a + 6;
	}
	if (!name || !cid || !id->container_id[0] || strcmp(cid, id->container_id))
		return -ENOENT;
	if (!crio_name(name, id))
		snprintf(id->container_name, sizeof(id->container_name), "%s", name);
	snprintf(id->name_from, sizeof(id->name_from), "conmon");
	return 0;
}

int jvmid_env(const char *env, size_t len, const char *key, char *out, size_t outlen)
{
	size_t kl = strlen(key);

	for (const char *p = env, *end = env + len; p < end; p += strnlen(p, (size_t)(end - p)) + 1)
		if ((size_t)(end - p) > kl && !strncmp(p, key, kl) && p[kl] == '=') {
			snprintf(out, outlen, "%.*s", (int)strnlen(p + kl + 1, (size_t)(end - p - kl - 1)),
				 p + kl + 1);
			return 0;
		}
	out[0] = '\0';
	return -ENOENT;
}

/* The parent pid of @pid from its stat, or -1. */
static int parent_of(int pid)
{
	char path[64], *st, *p;
	int ppid = -1;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	st = read_file(path, NULL);
	if (!st)
		return -1;
	p = strrchr(st, ')');
	if (!p || sscanf(p + 1, " %*c %d", &ppid) != 1)
		ppid = -1;
	free(st);
	return ppid;
}

/* The name from conmon's command line, conmon being an ancestor of @pid
 * (the container's first process's parent; a JVM started by a shell in the
 * container is a few levels below). */
static void name_from_conmon(int pid, struct jvmid *id)
{
	for (int depth = 0, p = parent_of(pid); depth < 16 && p > 1; depth++, p = parent_of(p)) {
		char path[64], *comm, *cmd;
		size_t len;
		bool conmon;

		snprintf(path, sizeof(path), "/proc/%d/comm", p);
		comm = read_file(path, NULL);
		if (!comm)
			return;
		conmon = !strcmp(comm, "conmon\n");
		free(comm);
		if (!conmon)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", p);
		cmd = read_file(path, &len);
		if (cmd) {
			jvmid_parse_conmon(cmd, len, id);
			free(cmd);
		}
		return;
	}
}

/* The text of /proc/@who/ns/uts (uts:[INODE], naming the namespace) into
 * @buf; its length, or -1. */
static ssize_t uts_of(const char *who, char *buf, size_t n)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%s/ns/uts", who);
	return readlink(path, buf, n);
}

/*
 * Whether @pid shares the host's uts namespace (a hostNetwork pod, whose
 * HOSTNAME is the node's name). The host's is pid 1's when it is not a pod's
 * own (a sidecar's pid 1 is the pod's pause process); where pid 1 is closed
 * to us, our own when we are in no pod.
 */
static bool host_uts(int pid)
{
	char self[32], ref[64], mine[64], path[64], *cg;
	const char *who = "1";
	struct jvmid refid = { 0 };
	ssize_t lm, lr;

	snprintf(self, sizeof(self), "%d", pid);
	lm = uts_of(self, mine, sizeof(mine));
	lr = uts_of(who, ref, sizeof(ref));
	if (lr <= 0) {
		who = "self";
		lr = uts_of(who, ref, sizeof(ref));
	}
	if (lm <= 0 || lm != lr || memcmp(mine, ref, (size_t)lm))
		return false;
	snprintf(path, sizeof(path), "/proc/%s/cgroup", who);
	cg = read_file(path, NULL);
	if (!cg)
		return false;
	jvmid_parse_cgroup(cg, &refid);
	free(cg);
	return !refid.pod_uid[0];
}

/*
 * The file @rel (relative to the JVM's root, below var/run/) read through
 * /proc/PID/root. /var/run is a symlink to /run in most images, and an
 * absolute symlink met under /proc/PID/root resolves against *our* root: so
 * run/... is read when var/run is a symlink, var/run/... only when it is a
 * directory of the JVM's own. Returns the malloc'd text or NULL.
 */
static char *read_in_root(int pid, const char *rel)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d/root/var/run", pid);
	if (lstat(path, &st))
		return NULL;
	if (S_ISLNK(st.st_mode))
		snprintf(path, sizeof(path), "/proc/%d/root/%s", pid, rel + 4); /* "var/" off */
	else
		snprintf(path, sizeof(path), "/proc/%d/root/%s", pid, rel);
	return read_file(path, NULL);
}

/* The pod's name (HOSTNAME) and namespace (the service-account file). */
static void pod_from_container(int pid, struct jvmid *id)
{
	char path[64], *text;
	size_t len;

	if (!id->pod[0] && !host_uts(pid)) {
		snprintf(path, sizeof(path), "/proc/%d/environ", pid);
		text = read_file(path, &len);
		if (text) {
			jvmid_env(text, len, "HOSTNAME", id->pod, sizeof(id->pod));
			free(text);
		}
	}
	if (!id->pod_namespace[0]) {
		text = read_in_root(pid, "var/run/secrets/kubernetes.io/serviceaccount/namespace");
		if (text) {
			snprintf(id->pod_namespace, sizeof(id->pod_namespace), "%.*s",
				 (int)strcspn(text, " \t\r\n"), text);
			free(text);
		}
	}
}

void jvmid_read(int pid, struct jvmid *id)
{
	char path[96], *text;

	memset(id, 0, sizeof(*id));
	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	text = read_file(path, NULL);
	if (!text)
		return;
	jvmid_parse_cgroup(text, id);
	free(text);
	if (id->container_id[0]) {
		snprintf(path, sizeof(path), "/proc/%d/root/run/.containerenv", pid);
		text = read_file(path, NULL);
		if (text) {
			char name[sizeof(id->container_name)], cid[80];

			jvmid_parse_containerenv(text, name, sizeof(name), cid, sizeof(cid));
			if (name[0] && !strcmp(cid, id->container_id)) {
				memcpy(id->container_name, name, sizeof(name));
				snprintf(id->name_from, sizeof(id->name_from), ".containerenv");
			}
			free(text);
		}
		if (!id->container_name[0])
			name_from_conmon(pid, id);
	}
	if (id->pod_uid[0])
		pod_from_container(pid, id);
}

void jvmid_json(FILE *f, const struct jvmid *id)
{
	fputs(",\"container_id\":", f);
	json_str(f, id->container_id);
	fputs(",\"container_runtime\":", f);
	json_str(f, id->runtime);
	fputs(",\"container_name\":", f);
	json_str(f, id->container_name);
	fputs(",\"container_name_from\":", f);
	json_str(f, id->name_from);
	fputs(",\"pod\":", f);
	json_str(f, id->pod);
	fputs(",\"namespace\":", f);
	json_str(f, id->pod_namespace);
	fputs(",\"pod_uid\":", f);
	json_str(f, id->pod_uid);
}
