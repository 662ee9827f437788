// SPDX-License-Identifier: GPL-2.0
/* jobject.c - Java objects read from outside the JVM; see jobject.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jvm/jobject.h"
#include "memtrace/alloc.h"
#include "jvm/jvmflags.h"
#include "jvm/klassname.h"
#include "jvm/vmstructs.h"

/* Longest String read (bytes of its value array). */
#define MAX_STRING 4096

/* A static of either spelling: JDK 17 "_narrow_oop._base", JDK 21+ "_base". */
static int static_either(const struct mt_vmstructs *vs, const char *type, const char *a,
			 const char *b, void *out, size_t size)
{
	uint64_t addr;
	int err;

	if ((err = vmstructs_static_addr(vs, type, a, &addr)) &&
	    (err = vmstructs_static_addr(vs, type, b, &addr)))
		return err;
	return vmstructs_read(vs, addr, out, size);
}

int jobject_layout(const struct mt_proc *p, const struct mt_vmstructs *vs,
		   struct jobject_layout *l)
{
	uint64_t shift;
	int err;

	memset(l, 0, sizeof(*l));
	if (!jvmflags_get_bool(p, vs, "UseCompactObjectHeaders", &l->compact) && l->compact) {
		if (vmstructs_long_constant(vs, "markWord::klass_shift", &shift) || shift >= 64)
			return -ENOENT;
		l->mark_klass_shift = (uint32_t)shift;
	}
	if ((err = jvmflags_get_bool(p, vs, "UseCompressedOops", &l->coops)))
		return err;
	/* JDK 25 still has the flag (deprecated); absent means compressed */
	if (jvmflags_get_bool(p, vs, "UseCompressedClassPointers", &l->ccp))
		l->ccp = true;
	if (l->coops &&
	    ((err = static_either(vs, "CompressedOops", "_narrow_oop._base", "_base", &l->oop_base,
				  8)) ||
	     (err = static_either(vs, "CompressedOops", "_narrow_oop._shift", "_shift",
				  &l->oop_shift, 4))))
		return err;
	if (l->ccp &&
	    ((err = static_either(vs, "CompressedKlassPointers", "_narrow_klass._base", "_base",
				  &l->klass_base, 8)) ||
	     (err = static_either(vs, "CompressedKlassPointers", "_narrow_klass._shift", "_shift",
				  &l->klass_shift, 4))))
		return err;
	if (l->oop_shift < 0 || l->oop_shift > 8 || l->klass_shift < 0 || l->klass_shift > 32)
		return -EINVAL;
	if ((err = vmstructs_field_offset(vs, "oopDesc", "_metadata._klass", &l->klass_off)))
		return err;
	/* the array length follows the klass word; with compact headers, the mark */
	l->arr_len_off = l->compact ? 8 : l->klass_off + (l->ccp ? 4 : 8);
	if (l->compact)
		l->ccp = true;
	if ((err = javafield_layout(vs, &l->jf)) ||
	    (err = jobject_vm_class(vs, "String", &l->string_ik)) ||
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

int jobject_vm_class(const struct mt_vmstructs *vs, const char *name, uint64_t *ik)
{
	char field[128];
	uint64_t addr;
	int err;

	snprintf(field, sizeof(field), "_klasses[static_cast<int>(vmClassID::%s_klass_knum)]", name);
	if ((err = vmstructs_static_addr(vs, "vmClasses", field, &addr)) ||
	    (err = vmstructs_read_ptr(vs, addr, ik)))
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
	int32_t slow, hs, hm, ls, lm;
	uint64_t lh, tc, addr, heap;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = vmstructs_field_offset(vs, "Klass", "_layout_helper", &lh)) ||
	    (err = vmstructs_field_offset(vs, "CollectedHeap", "_total_collections", &tc)) ||
	    (err = vmstructs_static_addr(vs, "Universe", "_collectedHeap", &addr)) ||
	    (err = vmstructs_read_ptr(vs, addr, &heap)) ||
	    (err = vmstructs_int_constant(vs, "Klass::_lh_instance_slow_path_bit", &slow)) ||
	    (err = vmstructs_int_constant(vs, "Klass::_lh_header_size_shift", &hs)) ||
	    (err = vmstructs_int_constant(vs, "Klass::_lh_header_size_mask", &hm)) ||
	    (err = vmstructs_int_constant(vs, "Klass::_lh_log2_element_size_shift", &ls)) ||
	    (err = vmstructs_int_constant(vs, "Klass::_lh_log2_element_size_mask", &lm)))
		return err;
	if (!heap || l->klass_off > 16 || l->arr_len_off > 24)
		return -EINVAL;
	out->gc_count = heap + tc;
	out->klass_base = l->klass_base;
	out->klass_shift = (uint32_t)l->klass_shift;
	out->klass_off = (uint32_t)l->klass_off;
	out->ccp = l->ccp;
	out->mark_klass_shift = l->compact ? l->mark_klass_shift : 0;
	out->arr_len_off = (uint32_t)l->arr_len_off;
	out->lh_off = (uint32_t)lh;
	out->lh_slow_bit = (uint32_t)slow;
	out->lh_hdr_shift = (uint32_t)hs;
	out->lh_hdr_mask = (uint32_t)hm;
	out->lh_log2_shift = (uint32_t)ls;
	out->lh_log2_mask = (uint32_t)lm;
	out->on = 1;
	return 0;
}
