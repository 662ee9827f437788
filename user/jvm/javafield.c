// SPDX-License-Identifier: GPL-2.0
/* javafield.c - Java field offsets from a live JVM's class metadata; see javafield.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/hotspot.h"
#include "jvm/javafield.h"
#include "jvm/unsigned5.h"
#include "jvm/vmstructs.h"

#define ACC_STATIC 0x0008
/* Superclasses followed at most (java.lang.Object is a few steps up). */
#define MAX_DEPTH 64
/* Largest field table read (bytes): 65535 fields of a few bytes each. */
#define MAX_TABLE (1u << 20)

int javafield_parse_stream(const uint8_t *buf, size_t len, const struct javafield_ffbits *ff,
			   struct javafield_entry *out, size_t max, size_t *n)
{
	uint32_t java, injected, v[5], flags, known;
	size_t pos = 0;

	*n = 0;
	known = 1u << ff->initialized | 1u << ff->injected | 1u << ff->generic |
		1u << ff->stable | 1u << ff->contended;
	if (unsigned5_read(buf, len, &pos, 1, &java) || unsigned5_read(buf, len, &pos, 1, &injected) ||
	    java > JAVAFIELD_MAX || injected > JAVAFIELD_MAX)
		return -EPROTO;
	for (uint32_t i = 0; i < java + injected; i++) {
		/* name, signature, offset, access flags, field flags */
		for (int k = 0; k < 5; k++)
			if (unsigned5_read(buf, len, &pos, 1, &v[k]))
				return -EPROTO;
		flags = v[4];
		if (flags & ~known)
			return -EPROTO; /* an optional item we would not know to skip */
		/* optional items, in this order: initval, generic signature, contention group */
		for (int k = 0; k < 3; k++) {
			int bit = k == 0 ? ff->initialized : k == 1 ? ff->generic : ff->contended;
			uint32_t skip;

			if ((flags >> bit & 1) && unsigned5_read(buf, len, &pos, 1, &skip))
				return -EPROTO;
		}
		if (v[0] > 0xffff || v[3] > 0xffff)
			return -EPROTO;
		if (*n < max)
			out[(*n)++] = (struct javafield_entry){ .name_index = (uint16_t)v[0],
								.access = (uint16_t)v[3],
								.offset = v[2],
								.injected = flags >> ff->injected & 1 };
	}
	return 0;
}

int javafield_parse_u2(const uint16_t *a, size_t alen, unsigned count,
		       const struct javafield_layout *l, struct javafield_entry *out, size_t max,
		       size_t *n)
{
	uint32_t packed, tag_mask = (1u << l->tag_size) - 1;

	*n = 0;
	if (l->slots <= 0 || (size_t)count * (size_t)l->slots > alen)
		return -EPROTO;
	for (unsigned i = 0; i < count && *n < max; i++) {
		const uint16_t *f = a + (size_t)i * (size_t)l->slots;

		packed = (uint32_t)f[l->high_slot] << 16 | f[l->low_slot];
		if ((packed & tag_mask) != (uint32_t)l->tag_offset)
			return -EPROTO; /* offsets are set once the class is linked */
		out[(*n)++] = (struct javafield_entry){
			.name_index = f[l->name_slot],
			.access = f[l->acc_slot],
			.offset = packed >> l->tag_size,
			.injected = (f[l->acc_slot] & l->acc_internal) != 0,
		};
	}
	return 0;
}

int javafield_layout(const struct mt_vmstructs *vs, struct javafield_layout *l)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	int err;

	memset(l, 0, sizeof(*l));
	if ((err = klassname_layout(vs, &l->kl)))
		return err;
	if (!hs->has_instanceklass_constants || !hs->has_klass_super || !hs->sizeof_constantpool ||
	    !hs->has_array_u1_data)
		return -ENOENT;
	l->ik_constants = hs->instanceklass_constants;
	l->klass_super = hs->klass_super;
	l->cp_size = hs->sizeof_constantpool;
	l->arr_data = hs->array_u1_data;
	if (hs->has_instanceklass_fieldinfo_stream) { /* JDK 21+ */
		l->stream = true;
		l->ik_fields = hs->instanceklass_fieldinfo_stream;
		if (!hs->has_ff_initialized || !hs->has_ff_injected || !hs->has_ff_generic ||
		    !hs->has_ff_stable || !hs->has_ff_contended)
			return -ENOENT;
		l->ff.initialized = hs->ff_initialized;
		l->ff.injected = hs->ff_injected;
		l->ff.generic = hs->ff_generic;
		l->ff.stable = hs->ff_stable;
		l->ff.contended = hs->ff_contended;
		return 0;
	}
	if (!hs->has_instanceklass_fields || !hs->has_instanceklass_java_fields_count ||
	    !hs->has_array_u2_data)
		return -ENOENT;
	l->ik_fields = hs->instanceklass_fields;
	l->ik_java_fields_count = hs->instanceklass_java_fields_count;
	l->arr_data = hs->array_u2_data;
	if (!hs->has_fieldinfo_field_slots || !hs->has_fieldinfo_access_flags_offset ||
	    !hs->has_fieldinfo_name_index_offset || !hs->has_fieldinfo_low_packed_offset ||
	    !hs->has_fieldinfo_high_packed_offset || !hs->has_fieldinfo_tag_size ||
	    !hs->has_fieldinfo_tag_offset || !hs->has_jvm_acc_field_internal)
		return -ENOENT;
	l->slots = hs->fieldinfo_field_slots;
	l->acc_slot = hs->fieldinfo_access_flags_offset;
	l->name_slot = hs->fieldinfo_name_index_offset;
	l->low_slot = hs->fieldinfo_low_packed_offset;
	l->high_slot = hs->fieldinfo_high_packed_offset;
	l->tag_size = hs->fieldinfo_tag_size;
	l->tag_offset = hs->fieldinfo_tag_offset;
	l->acc_internal = hs->jvm_acc_field_internal;
	if (l->slots <= 0 || l->slots > 16 || l->tag_size <= 0 || l->tag_size > 8)
		return -EINVAL;
	return 0;
}

/* The fields of the InstanceKlass at @ik into *@out (malloc'd; *@n entries). */
static int read_fields(const struct mt_vmstructs *vs, const struct javafield_layout *l,
		       uint64_t ik, struct javafield_entry **out, size_t *n)
{
	uint64_t arr;
	int32_t alen = 0;
	uint16_t count = 0;
	size_t bytes, max;
	void *buf = NULL;
	int err;

	*out = NULL;
	*n = 0;
	if ((err = vmstructs_read_ptr(vs, ik + l->ik_fields, &arr)))
		return err;
	if (!arr)
		return 0; /* a class without fields */
	if ((err = vmstructs_read(vs, arr, &alen, sizeof(alen))))
		return err;
	bytes = (size_t)alen * (l->stream ? 1 : 2);
	if (alen < 0 || bytes > MAX_TABLE)
		return -EPROTO;
	if (!l->stream &&
	    (err = vmstructs_read(vs, ik + l->ik_java_fields_count, &count, sizeof(count))))
		return err;
	max = l->stream ? bytes : count;
	buf = malloc(bytes ? bytes : 1);
	*out = calloc(max ? max : 1, sizeof(**out));
	if (!buf || !*out) {
		err = -ENOMEM;
		goto cleanup;
	}
	if (bytes && (err = vmstructs_read(vs, arr + l->arr_data, buf, bytes)))
		goto cleanup;
	err = l->stream ? javafield_parse_stream(buf, bytes, &l->ff, *out, max, n)
			: javafield_parse_u2(buf, (size_t)alen, count, l, *out, max, n);
cleanup:
	free(buf);
	if (err) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return err;
}

/* Does pool slot @index of @cp name @name? 1 yes, 0 no, or -errno. */
static int pool_name_is(const struct mt_vmstructs *vs, const struct javafield_layout *l,
			uint64_t cp, uint16_t index, const char *name, size_t nlen)
{
	uint64_t sym;
	uint32_t slen = 0;
	char buf[256];
	int err;

	if ((err = vmstructs_read_ptr(vs, cp + l->cp_size + (uint64_t)index * 8, &sym)))
		return err;
	if (!sym)
		return 0;
	if ((err = vmstructs_read(vs, sym + l->kl.sym_length, &slen, l->kl.length_size)))
		return err;
	if (slen != nlen || nlen >= sizeof(buf))
		return 0;
	if ((err = vmstructs_read(vs, sym + l->kl.sym_body, buf, nlen)))
		return err;
	return memcmp(buf, name, nlen) == 0;
}

int javafield_offset(const struct mt_vmstructs *vs, const struct javafield_layout *l,
		     uint64_t ik, const char *name, uint32_t *offset)
{
	size_t nlen = strlen(name);

	for (int depth = 0; ik && depth < MAX_DEPTH; depth++) {
		struct javafield_entry *f;
		uint64_t cp, super = 0;
		size_t n;
		int err, hit = 0;

		if ((err = read_fields(vs, l, ik, &f, &n)))
			return err;
		err = vmstructs_read_ptr(vs, ik + l->ik_constants, &cp);
		for (size_t i = 0; !err && i < n && !hit; i++) {
			if (f[i].injected || (f[i].access & ACC_STATIC))
				continue;
			hit = pool_name_is(vs, l, cp, f[i].name_index, name, nlen);
			if (hit < 0)
				err = hit;
			else if (hit)
				*offset = f[i].offset;
		}
		free(f);
		if (err)
			return err;
		if (hit)
			return 0;
		if ((err = vmstructs_read_ptr(vs, ik + l->klass_super, &super)))
			return err;
		ik = super;
	}
	return -ENOENT;
}
