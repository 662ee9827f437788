/* test_jvmid.c - a JVM's container and pod from /proc/PID/cgroup text, podman's
 * .containerenv, conmon's command line and the environment: one fixture per
 * runtime's path shape, each named by where its shape comes from. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <unistd.h>
#include <cmocka.h>

#include "jvm/jvmid.h"

#define ID  "3726184226f5d3147c25fdeab5b60097e378e8a720503a5e19ecfdf29f869860"
#define ID2 "9ec39b91f3d70e1beff50a308f77067065ea6be0d91a3378375056cd4422cf3d"
#define UID "3d274242-8ee0-11e9-a8a6-1e68d864ef1a"
#define UID_ "3d274242_8ee0_11e9_a8a6_1e68d864ef1a"

struct fixture {
	const char *source; /* where the shape comes from */
	const char *text;   /* /proc/PID/cgroup */
	const char *id, *runtime, *pod_uid;
};

static const struct fixture fixtures[] = {
	/* --- outside containers --- */
	{ "a login shell on a cgroup v2 host (systemd-logind's session scope)",
	  "0::/user.slice/user-0.slice/session-1.scope\n", "", "", "" },
	{ "this VM's own processes: cgroup v1 controllers and the v2 root (hybrid)",
	  "9:name=systemd:/\n8:pids:/\n4:memory:/process_api/c9995af92a4389992bae4231168074e6\n"
	  "1:cpu:/\n0::/\n", "", "", "" },
	/* --- docker --- */
	{ "docker, cgroupfs driver, cgroup v1 (dockerd's default cgroup parent /docker)",
	  "12:pids:/docker/" ID "\n11:memory:/docker/" ID "\n1:name=systemd:/docker/" ID "\n",
	  ID, "docker", "" },
	{ "docker, systemd driver, cgroup v1 (unit docker-ID.scope in system.slice)",
	  "10:devices:/system.slice/docker-" ID ".scope\n"
	  "1:name=systemd:/system.slice/docker-" ID ".scope\n", ID, "docker", "" },
	{ "docker, systemd driver, cgroup v2",
	  "0::/system.slice/docker-" ID ".scope\n", ID, "docker", "" },
	{ "docker, cgroup v2, read from inside another cgroup namespace (the kernel "
	  "writes the path relative to the reader's root, with ..)",
	  "0::/../../system.slice/docker-" ID ".scope\n", ID, "docker", "" },
	/* --- podman --- */
	{ "podman, cgroupfs manager, cgroup v1+v2 hybrid: captured on this VM (podman "
	  "4.3.1, runc), the container's first process",
	  "9:name=systemd:/libpod_parent/libpod-" ID "\n8:pids:/libpod_parent/libpod-" ID "\n"
	  "7:blkio:/libpod_parent/libpod-" ID "\n6:freezer:/libpod_parent/libpod-" ID "\n"
	  "5:devices:/libpod_parent/libpod-" ID "\n4:memory:/libpod_parent/libpod-" ID "\n"
	  "3:cpuset:/libpod_parent/libpod-" ID "\n2:cpuacct:/libpod_parent/libpod-" ID "\n"
	  "1:cpu:/libpod_parent/libpod-" ID "\n0::/libpod_parent/libpod-" ID "\n",
	  ID, "podman", "" },
	{ "podman, systemd manager, cgroup v2 (libpod-ID.scope in machine.slice)",
	  "0::/machine.slice/libpod-" ID ".scope\n", ID, "podman", "" },
	{ "podman with crun, systemd manager, cgroup v2: crun's default subgroup "
	  "'container' below the scope",
	  "0::/machine.slice/libpod-" ID ".scope/container\n", ID, "podman", "" },
	{ "podman, a container of a pod (machine-libpod_pod_PODID.slice)",
	  "0::/machine.slice/machine-libpod_pod_" ID2 ".slice/libpod-" ID ".scope\n",
	  ID, "podman", "" },
	{ "rootless podman, cgroup v2 (the user's systemd instance)",
	  "0::/user.slice/user-1000.slice/user@1000.service/user.slice/libpod-" ID ".scope\n",
	  ID, "podman", "" },
	{ "podman's conmon (libpod-conmon-ID.scope) is no runtime's container shape: the fallback finds its id",
	  "0::/machine.slice/libpod-conmon-" ID ".scope\n", ID, "", "" },
	/* --- Kubernetes: kubelet's pod cgroups, each runtime's container cgroup --- */
	{ "kubelet cgroupfs driver, besteffort pod, containerd (bare id), cgroup v1",
	  "11:perf_event:/kubepods/besteffort/pod" UID "/" ID "\n"
	  "1:name=systemd:/kubepods/besteffort/pod" UID "/" ID "\n", ID, "", UID },
	{ "kubelet cgroupfs driver, guaranteed pod (no QoS level), cgroup v2",
	  "0::/kubepods/pod" UID "/" ID "\n", ID, "", UID },
	{ "kubelet systemd driver, burstable pod, containerd's CRI (cri-containerd-ID.scope), v2",
	  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_
	  ".slice/cri-containerd-" ID ".scope\n", ID, "containerd", UID },
	{ "kubelet systemd driver, besteffort pod, CRI-O (crio-ID.scope), v1",
	  "7:memory:/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod" UID_
	  ".slice/crio-" ID ".scope\n", ID, "cri-o", UID },
	{ "kubelet systemd driver, guaranteed pod, docker through dockershim, v1",
	  "5:cpu,cpuacct:/kubepods.slice/kubepods-pod" UID_ ".slice/docker-" ID ".scope\n",
	  ID, "docker", UID },
	{ "a static pod: its UID is the md5 of its manifest, 32 hex digits",
	  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod"
	  "0123456789abcdef0123456789abcdef.slice/cri-containerd-" ID ".scope\n",
	  ID, "containerd", "0123456789abcdef0123456789abcdef" },
	{ "kind: a node that is itself a docker container, the kubelet's --cgroup-root "
	  "/kubelet (kubelet.slice/kubelet-kubepods...); the innermost container is the JVM's",
	  "0::/system.slice/docker-" ID2 ".scope/kubelet.slice/kubelet-kubepods.slice/"
	  "kubelet-kubepods-besteffort.slice/kubelet-kubepods-besteffort-pod" UID_
	  ".slice/cri-containerd-" ID ".scope\n", ID, "containerd", UID },
	{ "a pod's own cgroup (the JVM not yet in a container cgroup): pod UID only",
	  "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" UID_ ".slice\n",
	  "", "", UID },
	{ "a 'pod...' segment outside kubepods is not a pod",
	  "0::/system.slice/pod" UID ".service\n", "", "", "" },
	/* --- no runtime shape: any 64-hex run (today's rule, kept as the fallback) --- */
	{ "Amazon ECS (/ecs/TASK/ID)",
	  "9:perf_event:/ecs/haissam-ecs-classic/5a0d5ceddf6c44c1928d367a815d890f/" ID "\n",
	  ID, "", "" },
};

static void test_cgroup_shapes(void **state)
{
	for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
		const struct fixture *f = &fixtures[i];
		struct jvmid id;
		int err;

		memset(&id, 0x55, sizeof(id));
		err = jvmid_parse_cgroup(f->text, &id);
		print_message("  %s\n", f->source);
		assert_int_equal(err, f->id[0] ? 0 : -ENOENT);
		assert_string_equal(id.container_id, f->id);
		assert_string_equal(id.runtime, f->runtime);
		assert_string_equal(id.pod_uid, f->pod_uid);
	}
}

/* podman's /run/.containerenv with the fields podman writes into it for a
 * --privileged container (for others, as on this VM, it is empty). */
static void test_containerenv(void **state)
{
	char name[64], cid[80];

	jvmid_parse_containerenv("engine=\"podman-4.3.1\"\nname=\"shop-jvm\"\nid=\"" ID "\"\n"
				 "image=\"localhost/memtrace-e2e:jdk\"\nimageid=\"abc\"\nrootless=0\n",
				 name, sizeof(name), cid, sizeof(cid));
	assert_string_equal(name, "shop-jvm");
	assert_string_equal(cid, ID);
	jvmid_parse_containerenv("", name, sizeof(name), cid, sizeof(cid));
	assert_string_equal(name, "");
	assert_string_equal(cid, "");
	/* "imageid=" and "image=" do not pass for "id=" */
	jvmid_parse_containerenv("imageid=\"x\"\n", name, sizeof(name), cid, sizeof(cid));
	assert_string_equal(cid, "");
}

#define CONMON_PODMAN \
	"/usr/bin/conmon\0--api-version\0""1\0-c\0" ID "\0-u\0" ID "\0-r\0/usr/sbin/runc\0" \
	"-b\0/var/lib/containers/storage/overlay-containers/" ID "/userdata\0-n\0shop-jvm\0" \
	"--exit-dir\0/run/libpod/exits"
#define CONMON_CRIO \
	"/usr/bin/conmon\0-c\0" ID "\0-n\0k8s_app_shop-7d4b9c_payments_" UID "_0\0-r\0/usr/bin/runc"

static void test_conmon(void **state)
{
	struct jvmid id = { .container_id = ID };

	assert_int_equal(jvmid_parse_conmon(CONMON_PODMAN, sizeof(CONMON_PODMAN), &id), 0);
	assert_string_equal(id.container_name, "shop-jvm");
	assert_string_equal(id.name_from, "conmon");
	assert_string_equal(id.pod, "");

	/* CRI-O's name: container, pod, namespace, pod UID, attempt */
	memset(&id, 0, sizeof(id));
	strcpy(id.container_id, ID);
	assert_int_equal(jvmid_parse_conmon(CONMON_CRIO, sizeof(CONMON_CRIO), &id), 0);
	assert_string_equal(id.container_name, "app");
	assert_string_equal(id.pod, "shop-7d4b9c");
	assert_string_equal(id.pod_namespace, "payments");
	assert_string_equal(id.pod_uid, UID);

	/* another container's conmon */
	memset(&id, 0, sizeof(id));
	strcpy(id.container_id, ID2);
	assert_int_equal(jvmid_parse_conmon(CONMON_PODMAN, sizeof(CONMON_PODMAN), &id), -ENOENT);
	assert_string_equal(id.container_name, "");
}

static void test_env(void **state)
{
	static const char env[] = "PATH=/usr/bin\0HOSTNAME=shop-7d4b9c-x2x\0HOSTNAMEX=no\0"
				  "KUBERNETES_SERVICE_HOST=10.96.0.1";
	char v[64];

	assert_int_equal(jvmid_env(env, sizeof(env), "HOSTNAME", v, sizeof(v)), 0);
	assert_string_equal(v, "shop-7d4b9c-x2x");
	assert_int_equal(jvmid_env(env, sizeof(env), "KUBERNETES_SERVICE_HOST", v, sizeof(v)), 0);
	assert_string_equal(v, "10.96.0.1");
	assert_int_equal(jvmid_env(env, sizeof(env), "HOST", v, sizeof(v)), -ENOENT);
	assert_string_equal(v, "");
}

/* Our own process: whatever its cgroup, the read does not fail or invent a pod. */
static void test_live(void **state)
{
	struct jvmid id;

	jvmid_read(getpid(), &id);
	assert_string_equal(id.pod, "");
	jvmid_read(0x3ffffff0, &id);
	assert_string_equal(id.container_id, "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cgroup_shapes),
		cmocka_unit_test(test_containerenv),
		cmocka_unit_test(test_conmon),
		cmocka_unit_test(test_env),
		cmocka_unit_test(test_live),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
