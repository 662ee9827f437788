// SPDX-License-Identifier: GPL-2.0
/* kfeatures.c - the kernel's BPF features, probed (see kfeatures.h). */
#include <errno.h>
#include <stdlib.h>
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
	kf->hidden = kfeatures_hidden();
	kf->ringbuf &= !(kf->hidden & KF_RINGBUF);
	kf->cookie &= !(kf->hidden & KF_COOKIE);
	kf->loop &= !(kf->hidden & KF_LOOP);
	kf->uprobe_multi_hidden = uprobemulti_hidden();
	kf->uprobe_multi = uprobemulti_supported();
	return rb < 0 && rb != -EOPNOTSUPP ? -EPERM : 0;
}

unsigned kfeatures_hidden(void)
{
	const char *e = getenv("MEMTRACE_HIDE_BPF");
	unsigned h = 0;

	if (!e)
		return 0;
	h |= strstr(e, "ringbuf") ? KF_RINGBUF : 0;
	h |= strstr(e, "cookie") ? KF_COOKIE : 0;
	h |= strstr(e, "loop") ? KF_LOOP : 0;
	return h;
}

unsigned kfeatures_missing(const struct kfeatures *kf, unsigned need)
{
	unsigned m = 0;

	m |= (need & KF_RINGBUF) && !kf->ringbuf ? KF_RINGBUF : 0;
	m |= (need & KF_COOKIE) && !kf->cookie ? KF_COOKIE : 0;
	m |= (need & KF_LOOP) && !kf->loop ? KF_LOOP : 0;
	return m;
}

void kfeatures_describe(unsigned missing, char *buf, size_t n)
{
	static const struct {
		unsigned bit;
		const char *what;
	} f[] = {
		{ KF_RINGBUF, "BPF ring buffers (Linux 5.8)" },
		{ KF_COOKIE, "bpf_get_attach_cookie (Linux 5.15; USDT arguments)" },
		{ KF_LOOP, "bpf_loop (Linux 5.17; the Java stack walker, the TLAB parser)" },
	};
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		if (!(missing & f[i].bit) || len >= n)
			continue;
		len += (size_t)snprintf(buf + len, n - len, "%s%s", len ? " and " : "", f[i].what);
	}
}
