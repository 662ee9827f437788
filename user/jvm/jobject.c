// SPDX-License-Identifier: GPL-2.0
/* jobject.c - Java objects read from outside the JVM; see jobject.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jvm/hotspot.h"
#include "jvm/jobject.h"
#include "memtrace/alloc.h"
#include "jvm/jvmflags.h"
#include "jvm/klassname.h"
#include "jvm/vmstructs.h"

/* Longest String read (bytes of its value array). */
#define MAX_STRING 4096

/* Read the static at @addr (0: the JVM lacks it). 0, -ENOENT or -errno. */
static int read_static(const struct mt_vmstructs *vs, uint64_t addr, void *out, size_t size)
{
	return addr ? vmstructs_read(vs, addr, out, size) : -ENOENT;
}

int jobject_layout(const struct mt_proc *p, const struct mt_vmstructs *vs,
		   struct jobject_layout *l)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	int err;

	memset(l, 0, sizeof(*l));
	if (!jvmflags_get_bool(p, vs, "UseCompactObjectHeaders", &l->compact) && l->compact) {
		if (!hs->has_markword_klass_shift || hs->markword_klass_shift >= 64)
			return -ENOENT;
		l->mark_klass_shift = (uint32_t)hs->markword_klass_shift;
	}
	if ((err = jvmflags_get_bool(p, vs, "UseCompressedOops", &l->coops)))
		return err;
	/* JDK 25 still has the flag (deprecated); absent means compressed */
	if (jvmflags_get_bool(p, vs, "UseCompressedClassPointers", &l->ccp))
		l->ccp = true;
	if (l->coops &&
	    ((err = read_static(vs, hs->compressedoops_base, &l->oop_base, 8)) ||
	     (err = read_static(vs, hs->compressedoops_shift, &l->oop_shift, 4))))
		return err;
	if (l->ccp &&
	    ((err = read_static(vs, hs->compressedklass_base, &l->klass_base, 8)) ||
	     (err = read_static(vs, hs->compressedklass_shift, &l->klass_shift, 4))))
		return err;
	if (l->oop_shift < 0 || l->oop_shift > 8 || l->klass_shift < 0 || l->klass_shift > 32)
		return -EINVAL;
	if (!hs->has_oopdesc_klass)
		return -ENOENT;
	l->klass_off = hs->oopdesc_klass;
	/* the array length follows the klass word; with compact headers, the mark */
	l->arr_len_off = l->compact ? 8 : l->klass_off + (l->ccp ? 4 : 8);
	if (l->compact)
		l->ccp = true;
	if ((err = javafield_layout(vs, &l->jf)) ||
	    (err = jobject_vm_class(vs, hs->vmclasses_string, &l->string_ik)) ||
	    (err = javafield_offset(vs, &l->jf, l->string_ik, "value", &l->str_value)) ||
	    (err = javafield_offset(vs, &l->jf, l->string_ik, "coder", &l->str_coder)))
		return err;
	return 0;
}

uint64_t jobject_decode(const struct jobject_layout *l, uint64_t ref)
{
	if (!l->coops || !ref)
		return ref;
	return l->oop_base + ((ref & 0xffffffffu) << l->oop_shift);
}

int jobject_ref(const struct mt_vmstructs *vs, const struct jobject_layout *l, uint64_t obj,
		uint32_t off, uint64_t *out)
{
	uint64_t v = 0;
	int err;

	*out = 0;
	if (!obj)
		return -EFAULT;
	if ((err = vmstructs_read(vs, obj + off, &v, l->coops ? 4 : 8)))
		return err;
	*out = jobject_decode(l, v);
	return 0;
}

int jobject_klass(const struct mt_vmstructs *vs, const struct jobject_layout *l, uint64_t obj,
		  uint64_t *klass)
{
	uint64_t v = 0;
	int err;

	if (!obj)
		return -EFAULT;
	if (l->compact) {
		if ((err = vmstructs_read(vs, obj, &v, 8)))
			return err;
		v >>= l->mark_klass_shift;
	} else if ((err = vmstructs_read(vs, obj + l->klass_off, &v, l->ccp ? 4 : 8))) {
		return err;
	}
	*klass = l->ccp ? l->klass_base + (v << l->klass_shift) : v;
	return *klass ? 0 : -EFAULT;
}

int jobject_string(const struct mt_vmstructs *vs, const struct jobject_layout *l, uint64_t str,
		   char *out, size_t len)
{
	unsigned char buf[MAX_STRING];
	uint64_t arr, base;
	int32_t n = 0;
	uint8_t coder = 0;
	size_t w = 0;
	int err;

	if (!len)
		return -EINVAL;
	out[0] = '\0';
	if ((err = jobject_ref(vs, l, str, l->str_value, &arr)))
		return err;
	if (!arr)
		return -EFAULT;
	if ((err = vmstructs_read(vs, str + l->str_coder, &coder, 1)) ||
	    (err = vmstructs_read(vs, arr + l->arr_len_off, &n, 4)))
		return err;
	if (n < 0 || coder > 1)
		return -EPROTO;
	if (n > MAX_STRING)
		n = MAX_STRING;
	/* byte[] elements start after the length, 8-aligned with a 4-byte klass word */
	base = (l->arr_len_off + 4 + 7) & ~7ull;
	if (l->ccp)
		base = l->arr_len_off + 4;
	if (n && (err = vmstructs_read(vs, arr + base, buf, (size_t)n)))
		return err;
	for (int32_t i = 0; i < n && w + 1 < len; i += coder ? 2 : 1) {
		unsigned c = coder ? (unsigned)(buf[i] | buf[i + 1] << 8) : buf[i];

		out[w++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	out[w] = '\0';
	return (int)w;
}

int jobject_vm_class(const struct mt_vmstructs *vs, uint64_t slot, uint64_t *ik)
{
	int err;

	if (!slot)
		return -ENOENT;
	if ((err = vmstructs_read_ptr(vs, slot, ik)))
		return err;
	return *ik ? 0 : -ENOENT;
}

struct find_ctx {
	const struct mt_vmstructs *vs;
	struct mt_klass_layout kl;
	const char *want;
	uint64_t found;
};

static int find_one(void *arg, uint64_t klass)
{
	struct find_ctx *f = arg;
	char name[512];

	if (klassname_read(f->vs, &f->kl, klass, false, name, sizeof(name)) < 0 ||
	    strcmp(name, f->want))
		return 0;
	f->found = klass;
	return 1;
}

int jobject_find_class(const struct mt_vmstructs *vs, const char *internal, uint64_t *ik)
{
	struct find_ctx f = { .vs = vs, .want = internal };
	int err;

	if ((err = klassname_layout(vs, &f.kl)))
		return err;
	err = klassname_walk(vs, find_one, &f, 1000000);
	if (err < 0)
		return err;
	if (!f.found)
		return -ENOENT;
	*ik = f.found;
	return 0;
}

int jobject_super_named(const struct mt_vmstructs *vs, const struct jobject_layout *l, uint64_t k,
			const char *internal, uint64_t *found)
{
	struct mt_klass_layout kl;
	char name[512];
	int err;

	if ((err = klassname_layout(vs, &kl)))
		return err;
	for (int depth = 0; k && depth < 64; depth++) {
		if (klassname_read(vs, &kl, k, false, name, sizeof(name)) >= 0 &&
		    !strcmp(name, internal)) {
			*found = k;
			return 1;
		}
		if ((err = vmstructs_read_ptr(vs, k + l->jf.klass_super, &k)))
			return err;
	}
	return 0;
}

int jobject_is_subclass(const struct mt_vmstructs *vs, const struct jobject_layout *l,
			uint64_t k, uint64_t super)
{
	for (int depth = 0; k && depth < 64; depth++) {
		int err;

		if (k == super)
			return 1;
		if ((err = vmstructs_read_ptr(vs, k + l->jf.klass_super, &k)))
			return err;
	}
	return 0;
}

int jobject_tlab_layout(const struct mt_vmstructs *vs, const struct jobject_layout *l,
			struct mt_tlab_layout *out)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t heap;
	int err;

	memset(out, 0, sizeof(*out));
	if (!hs->has_klass_layout_helper || !hs->has_collectedheap_total_collections ||
	    !hs->universe_collectedheap)
		return -ENOENT;
	if ((err = vmstructs_read_ptr(vs, hs->universe_collectedheap, &heap)))
		return err;
	if (!hs->has_lh_instance_slow_path_bit || !hs->has_lh_header_size_shift ||
	    !hs->has_lh_header_size_mask || !hs->has_lh_log2_element_size_shift ||
	    !hs->has_lh_log2_element_size_mask)
		return -ENOENT;
	if (!heap || l->klass_off > 16 || l->arr_len_off > 24)
		return -EINVAL;
	out->gc_count = heap + hs->collectedheap_total_collections;
	out->klass_base = l->klass_base;
	out->klass_shift = (uint32_t)l->klass_shift;
	out->klass_off = (uint32_t)l->klass_off;
	out->ccp = l->ccp;
	out->mark_klass_shift = l->compact ? l->mark_klass_shift : 0;
	out->arr_len_off = (uint32_t)l->arr_len_off;
	out->lh_off = (uint32_t)hs->klass_layout_helper;
	out->lh_slow_bit = (uint32_t)hs->lh_instance_slow_path_bit;
	out->lh_hdr_shift = (uint32_t)hs->lh_header_size_shift;
	out->lh_hdr_mask = (uint32_t)hs->lh_header_size_mask;
	out->lh_log2_shift = (uint32_t)hs->lh_log2_element_size_shift;
	out->lh_log2_mask = (uint32_t)hs->lh_log2_element_size_mask;
	out->on = 1;
	return 0;
}
