// SPDX-License-Identifier: GPL-2.0
/* kfeatures.c - the kernel's BPF features, probed (see kfeatures.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <bpf/libbpf.h>

#include "probe/kfeatures.h"
#include "probe/uprobemulti.h"

int kfeatures_probe(struct kfeatures *kf)
{
	struct utsname u;
	int rb;

	memset(kf, 0, sizeof(*kf));
	if (!uname(&u))
		snprintf(kf->release, sizeof(kf->release), "%s", u.release);
	/* libbpf's probes: 1 supported, 0 not, < 0 could not tell */
	rb = libbpf_probe_bpf_map_type(BPF_MAP_TYPE_RINGBUF, NULL);
	kf->ringbuf = rb == 1;
	kf->cookie = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_get_attach_cookie,
					     NULL) == 1;
	kf->loop = libbpf_probe_bpf_helper(BPF_PROG_TYPE_KPROBE, BPF_FUNC_loop, NULL) == 1;
	kf->uprobe_multi_hidden = uprobemulti_hidden();
	kf->uprobe_multi = uprobemulti_supported();
	return rb < 0 && rb != -EOPNOTSUPP ? -EPERM : 0;
}
