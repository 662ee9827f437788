// SPDX-License-Identifier: GPL-2.0
/* sitecount.c - the sites BPF object's lifecycle and naming of its keys. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "jvm/pidns.h"
#include "probe/alloctrace.h"
#include "jvm/elfsym.h"
#include "probe/bpfutil.h"
#include "probe/kfeatures.h"
#include "jstack/jframes.h"
#include "jstack/jstackname.h"
#include "jstack/jwalk.h"
#include "probe/usdtspec.h"
#include "memtrace/sites.h"
#include "probe/sitecount.h"
#include "analysis/sitevol.h"
#include "sites.skel.h"
#include "jstack/symres.h"
#include "jvm/perfmap.h"
#include "probe/tlabprobe.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

/* the kernel features its BPF object needs (USDT arguments, the stack walker) */
#define SITES_NEEDS (KF_COOKIE | KF_LOOP)

struct sitecount {
	struct sites_bpf *skel;
	struct bpf_link *link[2];
	struct usdt_links usdt;
	struct mt_vmstructs *vs;
	struct jframes_layout jl;
	struct jwalk_layout jw;
	struct jstackname *jn;   /* with the walker: names of the allocating frames */
	uint64_t t0;
	uint64_t last_warm;      /* mono_ns of the last sitecount_warm() pass */
};

void sitecount_free(struct sitecount *c)
{
	if (!c)
		return;
	usdt_detach_all(&c->usdt);
	for (int i = 1; i >= 0; i--)
		bpf_link__destroy(c->link[i]);
	sites_bpf__destroy(c->skel);
	jstackname_free(c->jn);
	vmstructs_free(c->vs);
	free(c);
}

/* Attach both AllocTracer uprobes of @p's libjvm. */
static int attach_probes(struct sitecount *c, const struct mt_proc *p)
{
	struct bpf_program *progs[2] = { c->skel->progs.handle_new_tlab,
					 c->skel->progs.handle_outside_tlab };
	struct mt_elf *e = elfsym_open(p->libjvm_host);
	const char *missing = "";
	int err;

	if (!e) {
		err = -errno;
		p_err("cannot read %s: %s", p->libjvm_host, strerror(errno));
		return err;
	}
	err = tlabprobe_attach(progs, e, p, c->link, &missing);
	if (err == -ENOENT)
		p_err("libjvm.so of pid %d (%s) has no symbol AllocTracer::%s (no .symtab): "
		      "per-site allocation counters are not available; install the JDK's "
		      "debug symbols", p->pid, p->libjvm, missing);
	elfsym_free(e);
	return err;
}

struct sitecount *sitecount_new(const struct mt_proc *p)
{
	struct sitecount *c;
	int err;

	bpfutil_setup_logging();
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	err = vmstructs_open(p, &c->vs);
	if (err) {
		p_err("cannot read the VMStructs tables of pid %d (%s): allocation sites "
		      "cannot be named", p->pid, vmstructs_strerror(err));
		goto fail;
	}
	if (jframes_layout(c->vs, &c->jl)) {
		err = -ENOENT;
		p_err("the VMStructs of pid %d lack the JavaThread frame anchor: allocation "
		      "sites cannot be found", p->pid);
		goto fail;
	}
	/* Open the skeleton, set the read-only filters, load, attach. */
	c->skel = sites_bpf__open();
	if (!c->skel) {
		err = -errno;
		p_err("cannot open the sites BPF object: %s", strerror(errno));
		goto fail;
	}
	c->skel->rodata->targ_tgid = pidns_targ_tgid(p); /* 0 below the host pid ns */
	c->skel->rodata->targ_anchor_sp = c->jl.anchor_sp;
	c->skel->rodata->targ_anchor_pc = c->jl.anchor_pc;
	c->skel->rodata->targ_anchor_fp = c->jl.anchor_fp;
	c->skel->rodata->targ_interp_lo = c->jl.interp_lo;
	c->skel->rodata->targ_interp_hi = c->jl.interp_hi;
	c->skel->rodata->targ_cc_lo = c->jl.cc_lo;
	c->skel->rodata->targ_cc_hi = c->jl.cc_hi;
	/* the allocating frame through the stack walker, named with inlining */
	if (!jwalk_layout(c->vs, &c->jw) && (c->jn = jstackname_new(c->vs, &c->jw)))
		c->skel->rodata->targ_jw = c->jw.bpf;
	err = bpfutil_check("sites", SITES_NEEDS);
	if (err)
		goto fail;
	err = sites_bpf__load(c->skel);
	if (err) {
		bpfutil_load_failed("sites", err, SITES_NEEDS);
		goto fail;
	}
	bpfutil_loaded("sites", c->skel->obj);
	err = attach_probes(c, p);
	if (err)
		goto fail;
	if (c->jn) {
		/* the walker's pc cache needs to hear of code being freed */
		struct usdt_probe unload = { "compiled__method__unload",
					     c->skel->progs.handle_code_unload, true, 0 };

		c->usdt.spec_map_fd = bpf_map__fd(c->skel->maps.usdt_specs);
		if (!usdt_attach_hotspot(&c->usdt, &unload, 1, p) && unload.sites > 0)
			c->skel->bss->cache_on = 1;
	}
	c->t0 = mono_ns();
	return c;
fail:
	sitecount_free(c);
	errno = -err;
	return NULL;
}


/* The per-CPU totals slot @which, summed over CPUs. */
static struct mt_site_val total(struct sitecount *c, uint32_t which)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(c->skel->maps.site_totals);
	struct mt_site_val sum = { 0 }, *per;

	if (ncpu <= 0)
		return sum;
	per = calloc((size_t)ncpu, sizeof(*per));
	if (per && !bpf_map_lookup_elem(fd, &which, per)) {
		for (int i = 0; i < ncpu; i++) {
			sum.bytes += per[i].bytes;
			sum.refills += per[i].refills;
		}
	}
	free(per);
	return sum;
}

/* The name of a walker key's allocating frame (the innermost method of a
 * compiled frame), or NULL; kept by the namer. */
static const char *leaf_name(struct sitecount *c, const struct mt_site_key *k)
{
	return jstackname_innermost(c->jn, &k->leaf, 0);
}

void sitecount_warm(struct sitecount *c)
{
	int fd;
	struct mt_site_key key, next, *prev = NULL;

	if (!c || !c->jn || mono_ns() - c->last_warm < 200000000ull)
		return; /* five passes a second at most: each reads every key */
	c->last_warm = mono_ns();
	fd = bpf_map__fd(c->skel->maps.site_counts);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (key.leaf.a)
			leaf_name(c, &key);
	}
}

int sitecount_read(struct sitecount *c, const struct mt_proc *p, int perfmap,
		   struct mt_site_volumes *out)
{
	int fd = bpf_map__fd(c->skel->maps.site_counts);
	struct mt_site_key key, next, *prev = NULL;
	struct perfmap pm = { .tmpfd = -1 };
	struct symres *sr = NULL;
	struct mt_site_val v, t;
	char name[768];
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->seconds = (double)(mono_ns() - c->t0) / 1e9;
	if (perfmap && !c->jn)
		perfmap_request(p, &pm, "compiled allocation sites");
	if (!c->jn)
		sr = symres_new(p); /* NULL: compiled pcs stay unnamed */
	perfmap_done(&pm); /* read: removed if the JVM wrote it for us */
	while (!err && !bpf_map_get_next_key(fd, prev, &next)) {
		const char *n = NULL;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		out->keys++;
		if (key.leaf.a) {
			n = leaf_name(c, &key);
		} else if (key.method) {
			if (!jframes_method_name(c->vs, &c->jl, key.method, name, sizeof(name)))
				n = name;
		} else if (sr) {
			n = symres_name(sr, key.pc);
			if (n[0] == '[' || !strchr(n, '.') || strstr(n, "::"))
				n = NULL; /* a stub or VM code, not a Java method */
		}
		if (!n) {
			out->unnamed_bytes += v.bytes;
			continue;
		}
		err = sitevol_add(out, n, v.bytes, v.refills);
	}
	symres_free(sr);
	if (err) {
		sitevol_free(out);
		return err;
	}
	sitevol_sort(out);
	out->all_bytes = total(c, MT_SITES_ALL).bytes;
	t = total(c, MT_SITES_OVERFLOW);
	out->overflow_bytes = t.bytes;
	out->overflow_refills = t.refills;
	out->noframe_bytes = total(c, MT_SITES_NOFRAME).bytes;
	return 0;
}
