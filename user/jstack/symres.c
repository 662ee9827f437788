// SPDX-License-Identifier: GPL-2.0
/* symres.c - frame names for JVM stacks; see symres.h. */
#include <ctype.h>
#include <stdbool.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/elfsym.h"
#include "jstack/jframes.h"
#include "jstack/symres.h"
#include "jvm/vmstructs.h"
#include "lib/hash.h"

struct mapping {
	uint64_t start, end, off;
	char *path;          /* as the target sees it; NULL for anonymous */
	struct mt_elf *elf;  /* opened on first use */
	int elf_failed;
};

struct jit {
	uint64_t start, end;
	char *name;
};

#define NAME_CACHE 4096
struct symres {
	char root[64];
	struct mapping *maps;
	size_t nmaps;
	struct jit *jit;
	size_t njit;
	uint64_t interp_start, interp_end;
	uint64_t resolved, unresolved;
	/* ip -> name, direct-mapped */
	uint64_t cache_ip[NAME_CACHE];
	char *cache_name[NAME_CACHE];
};

void symres_demangle(const char *m, char *out, size_t len)
{
	const char *p = m;
	size_t o = 0;

	bool nested;

	if (strncmp(m, "_Z", 2)) {
		snprintf(out, len, "%s", m);
		return;
	}
	p = m + 2;
	if (*p == 'L') /* internal linkage */
		p++;
	nested = *p == 'N';
	if (nested)
		p++;
	else if (!isdigit((unsigned char)*p)) {
		snprintf(out, len, "%s", m);
		return;
	}
	while (*p == 'K' || *p == 'V' || *p == 'r') /* cv-qualifiers of a member */
		p++;
	while (isdigit((unsigned char)*p)) {
		char *end;
		long n = strtol(p, &end, 10);

		if (n <= 0 || (size_t)n > strlen(end))
			break;
		if (o && o + 2 < len) {
			out[o++] = ':';
			out[o++] = ':';
		}
		for (long i = 0; i < n && o + 1 < len; i++)
			out[o++] = end[i];
		p = end + n;
		if (!nested)
			break; /* _Z<len>name: a single name */
	}
	if (!o) {
		snprintf(out, len, "%s", m);
		return;
	}
	out[o] = '\0';
}

void symres_java_name(const char *s, char *out, size_t len)
{
	const char *paren = strchr(s, '(');
	const char *start = s;

	/* "ret pkg.Class.method(args)": a method; anything else (stubs such as
	 * "StubRoutines (1)" or "Interpreter") is kept whole */
	if (!paren || paren == s || paren[-1] == ' ') {
		snprintf(out, len, "%s", s);
		return;
	}
	for (const char *q = s; q < paren; q++)
		if (*q == ' ')
			start = q + 1;
	snprintf(out, len, "%.*s", (int)(paren - start), start);
}

static int load_maps(struct symres *s, int pid)
{
	char path[64], line[4096 + 128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, b, off;
		char perms[8];
		char *name = strchr(line, '/');
		struct mapping *tmp;

		if (sscanf(line, "%llx-%llx %7s %llx", &a, &b, perms, &off) != 4 || perms[2] != 'x')
			continue;
		tmp = realloc(s->maps, (s->nmaps + 1) * sizeof(*tmp));
		if (!tmp)
			break;
		s->maps = tmp;
		if (name)
			name[strcspn(name, "\n")] = '\0';
		s->maps[s->nmaps++] = (struct mapping){ a, b, off, name ? strdup(name) : NULL, NULL, 0 };
	}
	fclose(f);
	return 0;
}

static int jit_cmp(const void *a, const void *b)
{
	const struct jit *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* /tmp/perf-<nspid>.map inside the target's mount namespace. */
static void load_perfmap(struct symres *s, const struct mt_proc *p)
{
	char path[128], line[2048];
	FILE *f;

	snprintf(path, sizeof(path), "%s/tmp/perf-%d.map", p->root, p->nspid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a, n;
		int used = 0;
		struct jit *tmp;
		char name[1024];

		if (sscanf(line, "%llx %llx %n", &a, &n, &used) != 2 || !used)
			continue;
		line[strcspn(line, "\n")] = '\0';
		symres_java_name(line + used, name, sizeof(name));
		tmp = realloc(s->jit, (s->njit + 1) * sizeof(*tmp));
		if (!tmp)
			break;
		s->jit = tmp;
		s->jit[s->njit++] = (struct jit){ a, a + n, strdup(name) };
	}
	fclose(f);
	qsort(s->jit, s->njit, sizeof(*s->jit), jit_cmp);
}

/* The interpreter's code range, from VMStructs. */
static void find_interpreter(struct symres *s, const struct mt_proc *p)
{
	struct mt_vmstructs *vs = NULL;
	struct jframes_layout l;

	if (vmstructs_open(p, &vs))
		return;
	if (!jframes_layout(vs, &l)) {
		s->interp_start = l.interp_lo;
		s->interp_end = l.interp_hi;
	}
	vmstructs_free(vs);
}

struct symres *symres_new(const struct mt_proc *p)
{
	struct symres *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	snprintf(s->root, sizeof(s->root), "%s", p->root);
	if (load_maps(s, p->pid)) {
		free(s);
		errno = ESRCH;
		return NULL;
	}
	load_perfmap(s, p);
	find_interpreter(s, p);
	return s;
}

void symres_free(struct symres *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmaps; i++) {
		free(s->maps[i].path);
		elfsym_free(s->maps[i].elf);
	}
	for (size_t i = 0; i < s->njit; i++)
		free(s->jit[i].name);
	for (size_t i = 0; i < NAME_CACHE; i++)
		free(s->cache_name[i]);
	free(s->maps);
	free(s->jit);
	free(s);
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');

	return b ? b + 1 : path;
}

static int resolve(struct symres *s, uint64_t ip, char *out, size_t len)
{
	size_t lo = 0, hi = s->njit;

	if (ip >= s->interp_start && ip < s->interp_end) {
		snprintf(out, len, "[interpreted Java]");
		return 0;
	}
	while (lo < hi) { /* JIT code from the perf map */
		size_t mid = lo + (hi - lo) / 2;

		if (s->jit[mid].start <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && ip < s->jit[lo - 1].end) {
		snprintf(out, len, "%s", s->jit[lo - 1].name);
		return 0;
	}
	for (size_t i = 0; i < s->nmaps; i++) {
		struct mapping *m = &s->maps[i];
		const char *name;
		char path[4200], dm[512];
		uint64_t start;

		if (ip < m->start || ip >= m->end)
			continue;
		if (!m->path)
			break;
		if (!m->elf && !m->elf_failed) {
			snprintf(path, sizeof(path), "%s%s", s->root, m->path);
			m->elf = elfsym_open(path);
			m->elf_failed = !m->elf;
		}
		if (m->elf) {
			/* where the file's offset 0 would be mapped gives the bias */
			uint64_t vaddr = ip - elfsym_load_bias(m->elf, m->start - m->off);

			if (!elfsym_addr_name(m->elf, vaddr, &name, &start)) {
				symres_demangle(name, dm, sizeof(dm));
				snprintf(out, len, "%s", dm);
				return 0;
			}
		}
		snprintf(out, len, "[%s]", base_name(m->path));
		return -ENOENT;
	}
	snprintf(out, len, "[unknown]");
	return -ENOENT;
}

const char *symres_name(struct symres *s, uint64_t ip)
{
	size_t k = (size_t)(hash_fib64(ip) >> 52) & (NAME_CACHE - 1);
	char buf[1024];
	int err;

	if (s->cache_name[k] && s->cache_ip[k] == ip) {
		if (s->cache_name[k][0] == '[' && strcmp(s->cache_name[k], "[interpreted Java]"))
			s->unresolved++;
		else
			s->resolved++;
		return s->cache_name[k];
	}
	err = resolve(s, ip, buf, sizeof(buf));
	if (err)
		s->unresolved++;
	else
		s->resolved++;
	free(s->cache_name[k]);
	s->cache_name[k] = strdup(buf);
	s->cache_ip[k] = ip;
	return s->cache_name[k] ? s->cache_name[k] : "[unknown]";
}

void symres_stats(const struct symres *s, uint64_t *resolved, uint64_t *unresolved)
{
	*resolved = s->resolved;
	*unresolved = s->unresolved;
}

int symres_has_perfmap(const struct symres *s)
{
	return s->njit > 0;
}
