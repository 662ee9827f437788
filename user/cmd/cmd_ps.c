// SPDX-License-Identifier: GPL-2.0
/* cmd_ps.c - `memtrace ps`: the JVMs on this machine. */
#include <getopt.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmdopt.h"
#include "cmd/cmds.h"
#include "jvm/jvmid.h"
#include "jvm/proc.h"
#include "lib/util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: memtrace ps [--json]\n"
		   "  Every process that runs libjvm.so: host pid, pid inside its own\n"
		   "  namespace, uid, JDK version, main class or jar, container or not.\n"
		   "  memtrace's own processes and its agent's frozen copies are left out.\n");
}

int do_ps(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct cmdopt o = { .usage = usage };
	int *pids = NULL, n, opt, rc;

	optind = 0;
	while ((opt = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
		rc = cmdopt_common(opt, optarg, &o);
		if (rc != MT_CMDOPT_MORE)
			return rc;
	}
	if (cmdopt_no_args(argc, argv, "ps", usage))
		return 2;
	n = proc_list_jvms(&pids);
	if (n < 0) {
		p_err("cannot list /proc: %s", strerror(-n));
		return 1;
	}
	if (!mt_opts.json)
		printf("%-8s %-8s %-10s %-10s %-10s %s\n", "PID", "NSPID", "USER", "JDK",
		       "CONTAINER", "MAIN");
	for (int i = 0; i < n; i++) {
		struct mt_proc p;
		struct passwd *pw;
		char user[32];

		if (proc_open(pids[i], &p))
			continue; /* exited meanwhile */
		pw = getpwuid(p.uid);
		snprintf(user, sizeof(user), "%s", pw ? pw->pw_name : "?");
		if (!pw)
			snprintf(user, sizeof(user), "%u", p.uid);
		if (mt_opts.json) {
			printf("{\"event\":\"jvm\",\"pid\":%d,\"nspid\":%d,\"uid\":%u,\"user\":",
			       p.pid, p.nspid, p.uid);
			json_str(stdout, user);
			printf(",\"jdk_version\":");
			json_str(stdout, p.jdk_version);
			printf(",\"jdk_vendor\":");
			json_str(stdout, p.jdk_vendor);
			printf(",\"main\":");
			json_str(stdout, p.main_class);
			printf(",\"container\":%s",
			       (p.other_pidns || p.other_mntns || p.ident.container_id[0]) ? "true" : "false");
			jvmid_json(stdout, &p.ident);
			printf(",\"other_pidns\":%s,\"other_mntns\":%s,\"libjvm\":",
			       p.other_pidns ? "true" : "false", p.other_mntns ? "true" : "false");
			json_str(stdout, p.libjvm);
			printf("}\n");
		} else {
			char cont[16];

			if (p.ident.container_id[0])
				snprintf(cont, sizeof(cont), "%.12s", p.ident.container_id);
			else
				snprintf(cont, sizeof(cont), "%s",
					 (p.other_pidns || p.other_mntns) ? "ns" : "-");
			printf("%-8d %-8d %-10s %-10s %-10s %s\n", p.pid, p.nspid, user,
			       p.jdk_version[0] ? p.jdk_version : "?", cont,
			       p.main_class[0] ? p.main_class : "?");
		}
	}
	if (!mt_opts.json && n == 0)
		printf("(no JVMs found; memtrace sees only processes in its own pid namespace "
		       "and below)\n");
	free(pids);
	return 0;
}
