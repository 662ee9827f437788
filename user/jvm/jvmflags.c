// SPDX-License-Identifier: GPL-2.0
/*
 * jvmflags.c - read -XX flags of a live JVM.
 *
 * The JVMFlag table (JVMFlag::flags, numFlags entries of sizeof(JVMFlag)
 * bytes, the last one with a NULL name) is read in one go; then each name is
 * read until the one asked for. Nothing is cached: a lookup costs about one
 * read per flag (~1000 of them, a few ms), and flags are looked up rarely.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/elfsym.h"
#include "jvm/hotspot.h"
#include "jvm/jvmflags.h"
#include "jvm/proc.h"
#include "lib/util.h"
#include "jvm/vmstructs.h"

/* More flags than any JDK has (~1100 in 17): a bound against garbage. */
#define MAX_FLAGS 8192
#define MAX_ENTRY 256

const char *jvmflags_type_name(int type)
{
	static const char *const names[] = { "bool", "int", "uint", "intx", "uintx",
					     "uint64_t", "size_t", "double", "ccstr", "ccstrlist" };

	return type >= 0 && type < MT_FLAG_NTYPES ? names[type] : "unknown";
}

/* Search the JVMFlag table. Returns 0, -ENOENT (no such flag), -ENOTSUP
 * (no table in VMStructs), -errno. */
static int find_in_table(const struct mt_vmstructs *vs, const char *name, struct mt_jvmflag *out)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t base, num, stride = hs->sizeof_jvmflag, off_name = hs->jvmflag_name,
		 off_addr = hs->jvmflag_addr, off_type = hs->jvmflag_type,
		 off_flags = hs->jvmflag_flags_field;
	bool has_type = hs->has_jvmflag_type, has_flags = hs->has_jvmflag_flags_field;
	unsigned char *tab = NULL;
	size_t want = strlen(name);
	int err;

	if (!hs->jvmflag_flags || !hs->jvmflag_numflags || !stride || !hs->has_jvmflag_name ||
	    !hs->has_jvmflag_addr)
		return -ENOTSUP;
	/* offsets compared as stride - size: an offset near 2^64 must not wrap */
	if (stride < 16 || stride > MAX_ENTRY || off_name > stride - 8 || off_addr > stride - 8 ||
	    (has_type && off_type > stride - 4) || (has_flags && off_flags > stride - 4))
		return -EINVAL;
	if ((err = vmstructs_read_ptr(vs, hs->jvmflag_flags, &base)) ||
	    (err = vmstructs_read_ptr(vs, hs->jvmflag_numflags, &num)))
		return err;
	if (!base || !num || num > MAX_FLAGS)
		return -EINVAL;
	tab = malloc(num * stride);
	if (!tab)
		return -ENOMEM;
	if ((err = vmstructs_read(vs, base, tab, num * stride)))
		goto out;
	err = -ENOENT;
	for (uint64_t i = 0; i < num; i++) {
		const unsigned char *e = tab + i * stride;
		char buf[128];
		uint64_t np;
		int n;

		memcpy(&np, e + off_name, 8);
		if (!np)
			break; /* the terminating entry */
		n = vmstructs_read_string(vs, np, buf, sizeof(buf));
		if (n < 0 || (size_t)n != want || memcmp(buf, name, want))
			continue;
		memcpy(&out->addr, e + off_addr, 8);
		out->type = MT_FLAG_UNKNOWN;
		if (has_type) {
			int32_t t;

			memcpy(&t, e + off_type, 4);
			out->type = t >= 0 && t < MT_FLAG_NTYPES ? t : MT_FLAG_UNKNOWN;
		}
		out->flags = 0;
		if (has_flags)
			memcpy(&out->flags, e + off_flags, 4);
		out->via_symtab = false;
		err = out->addr ? 0 : -EINVAL;
		break;
	}
out:
	free(tab);
	return err;
}

/* Look the flag up as a global in libjvm's .symtab (never .dynsym: flags
 * are not exported, and a same-named exported symbol would be a lie). */
static int find_in_symtab(const struct mt_proc *p, const struct mt_vmstructs *vs,
			  const char *name, struct mt_jvmflag *out)
{
	uint64_t addr, size;
	struct mt_elf *e;
	int err;

	if (vs) {
		if (!vmstructs_has_symtab(vs))
			return -ENOENT;
		err = vmstructs_symbol(vs, name, &addr);
	} else {
		if (!p || !p->libjvm_host[0])
			return -ENOENT;
		e = elfsym_open(p->libjvm_host);
		if (!e)
			return -errno;
		err = elfsym_has_symtab(e) ? elfsym_lookup(e, name, &addr, &size) : -ENOENT;
		if (!err)
			addr += elfsym_load_bias(e, p->libjvm_base);
		elfsym_free(e);
	}
	if (err)
		return err;
	out->addr = addr;
	out->type = MT_FLAG_UNKNOWN;
	out->flags = 0;
	out->via_symtab = true;
	return 0;
}

int jvmflags_find(const struct mt_proc *p, const struct mt_vmstructs *vs, const char *name,
		  struct mt_jvmflag *out)
{
	int err = -ENOTSUP;

	if (!name[0] || strlen(name) >= 128)
		return -ENOENT;
	if (vs)
		err = find_in_table(vs, name, out);
	/* The table answers authoritatively when it exists. */
	if (err != -ENOTSUP)
		return err;
	return find_in_symtab(p, vs, name, out);
}

/* Read @len bytes of the flag's value. */
static int read_value(const struct mt_proc *p, const struct mt_vmstructs *vs,
		      const struct mt_jvmflag *f, void *buf, size_t len)
{
	if (vs)
		return vmstructs_read(vs, f->addr, buf, len);
	return proc_read_mem(p->pid, f->addr, buf, len);
}

int jvmflags_get_bool(const struct mt_proc *p, const struct mt_vmstructs *vs, const char *name,
		      bool *val)
{
	struct mt_jvmflag f;
	uint8_t b;
	int err;

	if ((err = jvmflags_find(p, vs, name, &f)))
		return err;
	if (f.type != MT_FLAG_BOOL && f.type != MT_FLAG_UNKNOWN)
		return -EINVAL;
	if ((err = read_value(p, vs, &f, &b, 1)))
		return err;
	*val = b != 0;
	return 0;
}

int jvmflags_get_intx(const struct mt_proc *p, const struct mt_vmstructs *vs, const char *name,
		      int64_t *val)
{
	struct mt_jvmflag f;
	int32_t i32;
	int err;

	if ((err = jvmflags_find(p, vs, name, &f)))
		return err;
	if (f.type == MT_FLAG_INT) {
		if ((err = read_value(p, vs, &f, &i32, 4)))
			return err;
		*val = i32;
		return 0;
	}
	if (f.type != MT_FLAG_INTX && f.type != MT_FLAG_UNKNOWN)
		return -EINVAL;
	return read_value(p, vs, &f, val, 8);
}

int jvmflags_get_uintx(const struct mt_proc *p, const struct mt_vmstructs *vs, const char *name,
		       uint64_t *val)
{
	struct mt_jvmflag f;
	uint32_t v32;
	int err;

	if ((err = jvmflags_find(p, vs, name, &f)))
		return err;
	if (f.type == MT_FLAG_UINT) {
		if ((err = read_value(p, vs, &f, &v32, 4)))
			return err;
		*val = v32;
		return 0;
	}
	if (f.type != MT_FLAG_UINTX && f.type != MT_FLAG_UINT64 && f.type != MT_FLAG_SIZE_T &&
	    f.type != MT_FLAG_UNKNOWN)
		return -EINVAL;
	return read_value(p, vs, &f, val, 8);
}

int jvmflags_get_double(const struct mt_proc *p, const struct mt_vmstructs *vs, const char *name,
			double *val)
{
	struct mt_jvmflag f;
	int err;

	if ((err = jvmflags_find(p, vs, name, &f)))
		return err;
	if (f.type != MT_FLAG_DOUBLE && f.type != MT_FLAG_UNKNOWN)
		return -EINVAL;
	return read_value(p, vs, &f, val, sizeof(*val));
}

const char *jvmflags_collector(const struct mt_proc *p, const struct mt_vmstructs *vs)
{
	static const struct {
		const char *flag, *name;
	} gcs[] = {
		{ "UseSerialGC", "Serial" }, { "UseParallelGC", "Parallel" }, { "UseG1GC", "G1" },
		{ "UseZGC", NULL }, { "UseShenandoahGC", "Shenandoah" }, { "UseEpsilonGC", "Epsilon" },
	};
	bool on = false, gen = false;

	for (size_t i = 0; i < sizeof(gcs) / sizeof(gcs[0]); i++) {
		if (jvmflags_get_bool(p, vs, gcs[i].flag, &on) || !on)
			continue;
		if (gcs[i].name)
			return gcs[i].name;
		if (jvmflags_get_bool(p, vs, "ZGenerational", &gen))
			gen = p && p->jdk_major >= 24;
		return gen ? "ZGC (generational)" : "ZGC (non-generational)";
	}
	return NULL;
}
