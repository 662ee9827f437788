// SPDX-License-Identifier: GPL-2.0
/* usdtspec.c - parse x86-64 USDT argument specs; attach per-site uprobes. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "jvm/elfsym.h"
#include "jvm/proc.h"
#include "probe/uprobemulti.h"
#include "probe/usdtspec.h"
#include "lib/util.h"

/* Register names as GNU as writes them: 64/32/16/8-bit views of each. */
static const struct {
	const char *name;
	int reg;
} regs[] = {
	{ "rax", MT_REG_AX }, { "eax", MT_REG_AX }, { "ax", MT_REG_AX }, { "al", MT_REG_AX },
	{ "rbx", MT_REG_BX }, { "ebx", MT_REG_BX }, { "bx", MT_REG_BX }, { "bl", MT_REG_BX },
	{ "rcx", MT_REG_CX }, { "ecx", MT_REG_CX }, { "cx", MT_REG_CX }, { "cl", MT_REG_CX },
	{ "rdx", MT_REG_DX }, { "edx", MT_REG_DX }, { "dx", MT_REG_DX }, { "dl", MT_REG_DX },
	{ "rsi", MT_REG_SI }, { "esi", MT_REG_SI }, { "si", MT_REG_SI }, { "sil", MT_REG_SI },
	{ "rdi", MT_REG_DI }, { "edi", MT_REG_DI }, { "di", MT_REG_DI }, { "dil", MT_REG_DI },
	{ "rbp", MT_REG_BP }, { "ebp", MT_REG_BP }, { "bp", MT_REG_BP }, { "bpl", MT_REG_BP },
	{ "rsp", MT_REG_SP }, { "esp", MT_REG_SP }, { "sp", MT_REG_SP }, { "spl", MT_REG_SP },
	{ "rip", MT_REG_IP },
};

static int parse_reg(const char *s, size_t n)
{
	char name[8];

	if (n == 0 || n >= sizeof(name))
		return -1;
	memcpy(name, s, n);
	name[n] = '\0';
	for (size_t i = 0; i < sizeof(regs) / sizeof(regs[0]); i++)
		if (!strcmp(regs[i].name, name))
			return regs[i].reg;
	/* r8..r15 with optional d/w/b suffix */
	if (name[0] == 'r' && isdigit((unsigned char)name[1])) {
		char *end;
		long k = strtol(name + 1, &end, 10);

		if (k >= 8 && k <= 15 && (!*end || (!end[1] && strchr("dwb", *end))))
			return MT_REG_R8 + (int)(k - 8);
	}
	return -1;
}

int usdtspec_parse_arg(const char *tok, struct mt_usdt_arg *a)
{
	const char *at = strchr(tok, '@'), *loc, *p;
	char *end;
	long size;
	int r;

	memset(a, 0, sizeof(*a));
	if (!at)
		return -EINVAL;
	size = strtol(tok, &end, 10);
	if (end != at || size == 0 || labs(size) > 8 || (labs(size) & (labs(size) - 1)))
		return -EINVAL;
	a->size = (uint8_t)labs(size);
	a->is_signed = size < 0;
	loc = at + 1;
	if (*loc == '$') { /* constant */
		errno = 0;
		a->val = strtoll(loc + 1, &end, 0);
		if (errno || *end || end == loc + 1)
			return -EINVAL;
		a->kind = MT_ARG_CONST;
		return 0;
	}
	if (*loc == '%') { /* register */
		r = parse_reg(loc + 1, strlen(loc + 1));
		if (r < 0)
			return -EINVAL;
		a->kind = MT_ARG_REG;
		a->reg = (uint8_t)r;
		return 0;
	}
	/* [disp](%reg) */
	errno = 0;
	a->val = *loc == '(' ? 0 : strtoll(loc, &end, 0);
	p = *loc == '(' ? loc : end;
	if (errno || p[0] != '(' || p[1] != '%')
		return -EINVAL;
	end = strchr(p, ')');
	if (!end || end[1])
		return -EINVAL;
	r = parse_reg(p + 2, end - (p + 2));
	if (r < 0)
		return -EINVAL;
	a->kind = MT_ARG_REG_DEREF;
	a->reg = (uint8_t)r;
	return 0;
}

int usdtspec_parse(const char *args, struct mt_usdt_spec *s)
{
	char buf[256], *tok, *save = NULL;
	int err;

	memset(s, 0, sizeof(*s));
	if (strlen(args) >= sizeof(buf))
		return -E2BIG;
	strcpy(buf, args);
	for (tok = strtok_r(buf, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (s->nargs == MT_USDT_MAX_ARGS)
			return -E2BIG;
		err = usdtspec_parse_arg(tok, &s->args[s->nargs]);
		if (err)
			return err;
		s->nargs++;
	}
	return 0;
}

int usdt_attach(struct usdt_links *l, struct bpf_program *prog, const struct mt_elf *e,
		const char *path, int pid, const char *provider, const char *name)
{
	struct mt_usdt_note *notes = NULL;
	uint64_t offs[MT_USDT_MAX_SPECS], cookies[MT_USDT_MAX_SPECS];
	int n, attached = 0, first = l->n, err = 0;
	uint32_t first_spec = l->next_spec;

	n = elfsym_usdt_notes(e, provider, &notes);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, opts);
		struct mt_usdt_spec spec;
		uint64_t off;
		uint32_t id;

		if (strcmp(notes[i].name, name))
			continue;
		if (notes[i].semaphore) {
			/* HotSpot's probes have none; supporting them means
			 * incrementing the semaphore in the target. */
			err = -ENOTSUP;
			goto fail;
		}
		if (l->n == MT_USDT_MAX_SPECS || l->next_spec == MT_USDT_MAX_SPECS) {
			err = -E2BIG;
			goto fail;
		}
		err = usdtspec_parse(notes[i].args, &spec);
		if (err)
			goto fail;
		err = elfsym_vaddr_to_offset(e, notes[i].pc, &off);
		if (err)
			goto fail;
		id = l->next_spec;
		if (bpf_map_update_elem(l->spec_map_fd, &id, &spec, BPF_ANY)) {
			err = -errno;
			goto fail;
		}
		if (l->multi) { /* attached below, all sites at once */
			offs[attached] = off;
			cookies[attached] = id;
		} else {
			opts.bpf_cookie = id;
			l->links[l->n] = bpf_program__attach_uprobe_opts(prog, pid, path, off, &opts);
			if (!l->links[l->n]) {
				err = -errno;
				goto fail;
			}
			l->n++;
		}
		l->next_spec++;
		attached++;
	}
	if (l->multi && attached) {
		int fd = uprobemulti_attach_cookies(bpf_program__fd(prog), path, offs, cookies,
						    (uint32_t)attached, pid);

		if (fd < 0) {
			err = fd;
			goto fail;
		}
		l->fds[l->nfds++] = fd;
	}
	free(notes);
	return attached ? attached : -ENOENT;

fail:
	free(notes);
	while (l->n > first)
		bpf_link__destroy(l->links[--l->n]);
	l->next_spec = first_spec;
	return err;
}

void usdt_detach_all(struct usdt_links *l)
{
	while (l->n > 0)
		bpf_link__destroy(l->links[--l->n]);
	while (l->nfds > 0)
		close(l->fds[--l->nfds]);
}

int usdt_attach_hotspot(struct usdt_links *l, struct usdt_probe *probes, size_t n,
			const struct mt_proc *p)
{
	struct mt_elf *e = elfsym_open(p->libjvm_host);
	int err = 0;

	if (!e) {
		err = -errno;
		p_err("cannot read %s: %s", p->libjvm_host, strerror(errno));
		return err;
	}
	for (size_t i = 0; i < n; i++) {
		err = usdt_attach(l, probes[i].prog, e, p->libjvm_host, p->pid, "hotspot",
				  probes[i].name);
		probes[i].sites = err > 0 ? err : 0;
		if (err >= 0) {
			err = 0;
			continue;
		}
		if (!probes[i].optional) {
			p_err("cannot attach to USDT probe hotspot:%s in %s: %s "
			      "(`memtrace doctor -p %d` lists what this JVM offers)",
			      probes[i].name, p->libjvm, strerror(-err), p->pid);
			break;
		}
		p_warn("hotspot:%s not attached (%s): its events will be missing", probes[i].name,
		       strerror(-err));
		err = 0;
	}
	elfsym_free(e);
	return err;
}
