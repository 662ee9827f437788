// SPDX-License-Identifier: GPL-2.0
/*
 * cmd_attach.c - `memtrace attach -p PID` loads the JVMTI agent (or finds it
 * already loaded), says HELLO, prints what the agent reports and leaves it
 * dormant; `memtrace detach -p PID` tells a connected agent to go dormant.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agentctl/agentfile.h"
#include "agentctl/agentsession.h"
#include "agentctl/agentsock.h"
#include "jvm/attach.h"
#include "cmd/cmds.h"
#include "jvm/proc.h"
#include "lib/util.h"


struct attach_opts {
	int pid;
	bool force_load; /* --load: run the attach `load` even if the agent is mapped */
	double hold_s;   /* --hold S: keep the session S seconds, PING every second */
};

static int parse_opts(const char *cmd, int argc, char **argv, struct attach_opts *o,
		      bool allow_load)
{
	static const struct option longopts[] = {
		{ "pid", required_argument, NULL, 'p' },
		{ "load", no_argument, NULL, 'l' },
		{ "hold", required_argument, NULL, 'H' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	optind = 0;
	while ((c = getopt_long(argc, argv, "p:jh", longopts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (parse_pid(optarg, &o->pid)) {
				p_err("invalid pid '%s'", optarg);
				return 2;
			}
			break;
		case 'l':
			if (!allow_load)
				goto usage;
			o->force_load = true;
			break;
		case 'H':
			if (!allow_load || parse_seconds(optarg, &o->hold_s)) {
				p_err("invalid --hold '%s': expected %s", optarg, MT_DURATION_HELP);
				return 2;
			}
			break;
		case 'j':
			mt_opts.json = true;
			break;
		case 'h':
			printf("usage: memtrace %s -p PID%s [--json]\n", cmd,
			       allow_load ? " [--load] [--hold S]" : "");
			if (allow_load)
				printf("  Load memtrace's JVMTI agent into JVM PID (or find it loaded), "
				       "say HELLO, leave it dormant.\n"
				       "  --load    run the JVM's `load` command even if the agent is "
				       "already mapped\n"
				       "  --hold S  keep the session open S seconds (PING each second) "
				       "before leaving the agent dormant\n"
				       "  The agent library is $MEMTRACE_AGENT, else %s next to the "
				       "memtrace binary, else in ../lib/memtrace/ from it (make "
				       "install), else ./build/%s.\n", MT_AGENT_SO, MT_AGENT_SO);
			else
				printf("  Tell memtrace's agent in JVM PID to stop its work and go "
				       "dormant.\n");
			exit(0);
		default:
			goto usage;
		}
	}
	if (optind < argc || !o->pid) {
usage:
		p_err("usage: memtrace %s -p PID%s [--json]", cmd,
		      allow_load ? " [--load] [--hold S]" : "");
		return 2;
	}
	return 0;
}

static void print_hello(const struct mt_proc *p, const struct mt_ap_hello_reply *r,
			bool loaded, const char *path, double load_ms, double total_ms)
{
	if (mt_opts.json) {
		printf("{\"event\":\"attach\",\"pid\":%d,\"nspid\":%u,\"loaded_now\":%s,"
		       "\"agent_path\":", p->pid, r->pid, loaded ? "true" : "false");
		json_str(stdout, path);
		printf(",\"agent_version\":");
		json_str(stdout, r->agent_version);
		printf(",\"protocol\":%u,\"java_version\":", r->version);
		json_str(stdout, r->java_version);
		printf(",\"vm_name\":");
		json_str(stdout, r->vm_name);
		printf(",\"jvmti_version\":\"0x%08x\",\"attach_count\":%u,\"sessions\":%llu,"
		       "\"state\":\"%s\",\"load_ms\":%.2f,\"total_ms\":%.2f,"
		       "\"dynamic_load_warning\":%s}\n",
		       r->jvmti_version, r->attach_count, (unsigned long long)r->sessions,
		       r->state ? "woke" : "fresh", load_ms, total_ms,
		       loaded && p->jdk_major >= 21 ? "true" : "false");
		return;
	}
	printf("attached to JVM %d (pid %u in its namespace): %s\n", p->pid, r->pid,
	       loaded ? "agent loaded now" : "agent was already loaded");
	printf("  agent      %s, protocol %u, %s\n", r->agent_version, r->version, path);
	printf("  java       %s (%s), JVMTI 0x%08x\n", r->java_version, r->vm_name,
	       r->jvmti_version);
	printf("  sessions   %llu (this one %s), loads %u\n", (unsigned long long)r->sessions,
	       r->state ? "woke it from dormant" : "is the first", r->attach_count);
	printf("  time       %.1f ms (load %.1f ms)\n", total_ms, load_ms);
	if (loaded && p->jdk_major >= 21)
		printf("  note       JDK %d prints \"WARNING: A JVMTI agent has been loaded "
		       "dynamically\" on its stderr; -XX:+EnableDynamicAgentLoading silences "
		       "it\n", p->jdk_major);
	printf("  the agent is dormant until the next memtrace session\n");
}

/* Keep the session alive for @secs, checking the agent with PING each second. */
static int hold(const struct mt_proc *p, struct mt_agentsock *s, double secs)
{
	uint64_t end = mono_ns() + (uint64_t)(secs * 1e9);
	int err;

	while (mono_ns() < end) {
		uint64_t left = end - mono_ns();

		usleep(left > 1000000000ull ? 1000000 : (useconds_t)(left / 1000));
		err = agentsock_ping(s);
		if (err) {
			agentsession_explain(p, s, err);
			return err;
		}
	}
	return 0;
}

int do_attach(int argc, char **argv)
{
	struct attach_opts o;
	struct mt_proc p;
	struct mt_agentsock s = { .fd = -1 };
	struct mt_ap_hello_reply r;
	char path[PATH_MAX] = "";
	uint64_t t0 = mono_ns();
	double load_ms = 0;
	bool loaded = false;
	int err, mapped;

	err = parse_opts("attach", argc, argv, &o, true);
	if (err)
		return err;
	err = proc_open(o.pid, &p);
	if (err) {
		proc_explain(o.pid, err);
		return 1;
	}
	/* An agent is never unloaded: if it is mapped, wake it instead of loading again. */
	mapped = agentfile_mapped(p.pid, path, sizeof(path));
	if (mapped < 0) {
		p_err("cannot read /proc/%d/maps: %s", p.pid, strerror(-mapped));
		return 1;
	}
	if (mapped && !o.force_load) {
		err = agentsession_connect(&p, &s, &r, RECONNECT_MS);
		if (err) {
			agentsession_explain(&p, &s, err);
			return 1;
		}
	} else {
		uint64_t tl = mono_ns();

		err = agentsession_load(&p, path, sizeof(path));
		if (err)
			return 1;
		load_ms = ms_since(tl);
		loaded = true;
		err = agentsession_connect(&p, &s, &r, RECONNECT_MS);
		if (err) {
			agentsession_explain(&p, &s, err);
			return 1;
		}
	}
	print_hello(&p, &r, loaded, path, load_ms, ms_since(t0));
	err = hold(&p, &s, o.hold_s);
	/* Closing the session leaves the agent dormant, listening for the next one. */
	agentsock_close(&s);
	return err ? 1 : 0;
}

int do_detach(int argc, char **argv)
{
	struct attach_opts o;
	struct mt_proc p;
	struct mt_agentsock s = { .fd = -1 };
	struct mt_ap_hello_reply r;
	int err;

	err = parse_opts("detach", argc, argv, &o, false);
	if (err)
		return err;
	err = proc_open(o.pid, &p);
	if (err) {
		proc_explain(o.pid, err);
		return 1;
	}
	err = agentsession_connect(&p, &s, &r, 0);
	if (!err)
		err = agentsock_detach(&s);
	if (err) {
		agentsession_explain(&p, &s, err);
		agentsock_close(&s);
		return 1;
	}
	if (mt_opts.json)
		printf("{\"event\":\"detach\",\"pid\":%d,\"sessions\":%llu,\"dormant\":true}\n",
		       p.pid, (unsigned long long)r.sessions);
	else
		printf("detached from JVM %d: the agent is dormant (its events are off; it "
		       "wakes on the next `memtrace attach`)\n", p.pid);
	return 0;
}
