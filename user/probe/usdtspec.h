/*
 * usdtspec.h - USDT argument specs ("8@%r14", "-4@$5", "8@-16(%rbp)") parsed
 * into include/memtrace/usdt.h's form, and attaching a BPF program at every
 * site of a probe with a cookie that names the site's spec.
 */
#ifndef MEMTRACE_USDTSPEC_H
#define MEMTRACE_USDTSPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memtrace/usdt.h"

struct bpf_program;
struct bpf_link;
struct mt_elf;
struct mt_proc;

/* usdtspec_parse_arg - one "SIZE@LOCATION" token. Returns 0 or -EINVAL. */
int usdtspec_parse_arg(const char *tok, struct mt_usdt_arg *a);
/* usdtspec_parse - a whole space-separated argument string. 0 or -EINVAL/-E2BIG. */
int usdtspec_parse(const char *args, struct mt_usdt_spec *s);

/* The sites attached so far, and where their specs go. */
struct usdt_links {
	int spec_map_fd;          /* the BPF object's usdt_specs map */
	uint32_t next_spec;       /* next free index in that map */
	bool multi;               /* one uprobe_multi link per probe (probe/uprobemulti.h;
				   * its programs loaded for it) instead of a perf-event
				   * link per site; set before the first attach */
	int n;
	struct bpf_link *links[MT_USDT_MAX_SPECS];
	int nfds;
	int fds[MT_USDT_MAX_SPECS]; /* the uprobe_multi links (multi) */
};

/*
 * usdt_attach - attach @prog as a uprobe at every site of @provider:@name in
 * the ELF @e (opened from @path) for process @pid, each with its spec (the
 * site's cookie is its spec's index): a perf-event link per site, or with
 * l->multi one uprobe_multi link for all of them.
 * Returns the number of sites attached (> 0), -ENOENT when the probe is
 * absent, or -errno (nothing of this call stays attached then).
 */
int usdt_attach(struct usdt_links *l, struct bpf_program *prog, const struct mt_elf *e,
		const char *path, int pid, const char *provider, const char *name);
/* One hotspot probe for usdt_attach_hotspot(). */
struct usdt_probe {
	const char *name;          /* e.g. "gc__begin" */
	struct bpf_program *prog;
	bool optional;             /* absent or failing: warned about, not an error */
	int sites;                 /* out: sites attached (0 for a missing optional one) */
};

/*
 * usdt_attach_hotspot - usdt_attach() of each of the @n probes (provider
 * "hotspot") in the libjvm of @p, which it reads from p->libjvm_host.
 * Returns 0, or -errno after saying what failed (the file, or the required
 * probe, pointing at `memtrace doctor`); what did attach stays in @l (the
 * caller's usdt_detach_all() releases it).
 */
int usdt_attach_hotspot(struct usdt_links *l, struct usdt_probe *probes, size_t n,
			const struct mt_proc *p);
/* usdt_detach_all - destroy every link in @l (and close its uprobe_multi links). */
void usdt_detach_all(struct usdt_links *l);

#endif
