// SPDX-License-Identifier: GPL-2.0
/* methodsym.c - Method* -> names and bci -> line from outside; see methodsym.h. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "jvm/hotspot.h"
#include "jstack/methodsym.h"
#include "jvm/unsigned5.h"
#include "jvm/vmstructs.h"

/* UNSIGNED5: a byte below L ends a number; each byte carries lg_H more bits. */
#define U5_LG_H 6
#define U5_MAX_BYTES 5
/* Longest line table we read: ConstMethod's size bounds it, this bounds that. */
#define LINE_TABLE_MAX (64u << 10)

int methodsym_layout(const struct mt_vmstructs *vs, struct mt_methodsym_layout *l)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	int32_t major = 0;
	int err;

	memset(l, 0, sizeof(*l));
	if ((err = klassname_layout(vs, &l->kl)))
		return err;
	if (!hs->has_method_constmethod || !hs->has_constmethod_constants ||
	    !hs->has_constmethod_name_index || !hs->has_constmethod_signature_index ||
	    !hs->has_constmethod_code_size || !hs->has_constmethod_constmethod_size ||
	    !hs->sizeof_constmethod || !hs->has_constantpool_pool_holder ||
	    !hs->sizeof_constantpool)
		return -ENOENT;
	l->method_const = hs->method_constmethod;
	l->cm_constants = hs->constmethod_constants;
	l->cm_name_index = hs->constmethod_name_index;
	l->cm_sig_index = hs->constmethod_signature_index;
	l->cm_code_size = hs->constmethod_code_size;
	l->cm_size_words = hs->constmethod_constmethod_size;
	l->cm_sizeof = hs->sizeof_constmethod;
	l->cp_holder = hs->constantpool_pool_holder;
	l->cp_sizeof = hs->sizeof_constantpool;
	l->cp_has_length = hs->has_constantpool_length;
	l->cp_length = hs->constantpool_length;
	l->cp_has_source = hs->has_constantpool_source_file_name_index;
	l->cp_source_file = hs->constantpool_source_file_name_index;
	/* the flags: a u4 in a ConstMethodFlags member since JDK 21, a u2 before */
	if (hs->has_constmethod_flags && hs->has_constmethod_has_linenumber_table) {
		l->cm_flags = hs->constmethod_flags.off;
		l->cm_flags_size = hotspot_size(&hs->constmethod_flags, 4);
		l->has_linenumbers = (uint32_t)hs->constmethod_has_linenumber_table;
	}
	if (hs->abstract_vm_version_vm_major_version &&
	    !vmstructs_read(vs, hs->abstract_vm_version_vm_major_version, &major, sizeof(major)))
		l->vm_major = major;
	/* the one thing VMStructs does not tell: UNSIGNED5 without the 0 byte
	 * since JDK 20; an unknown version is taken as a new one */
	l->u5_excl = l->vm_major && l->vm_major < 20 ? 0 : 1;
	return 0;
}

int methodsym_line_lookup(const uint8_t *tab, size_t len, unsigned excl, int bci, int *line)
{
	int32_t cur_bci = 0, cur_line = 0, best_bci = 0, best_line = -1;
	size_t p = 0;

	for (;;) {
		uint8_t b;

		if (p >= len)
			return -ERANGE;
		b = tab[p++];
		if (b == 0)
			break;
		if (b == 0xff) { /* escape: two signed numbers */
			uint32_t db, dl;
			int err;

			if ((err = unsigned5_read(tab, len, &p, excl, &db)) ||
			    (err = unsigned5_read(tab, len, &p, excl, &dl)))
				return err;
			cur_bci += unsigned5_signed(db);
			cur_line += unsigned5_signed(dl);
		} else { /* 5 bits of bci delta, 3 of line delta */
			cur_bci += b >> 3;
			cur_line += b & 7;
		}
		if (cur_bci == bci) {
			*line = cur_line;
			return 0;
		}
		if (cur_bci < bci && cur_bci >= best_bci) {
			best_bci = cur_bci;
			best_line = cur_line;
		}
	}
	if (best_line < 0)
		return -ENOENT;
	*line = best_line;
	return 0;
}

/* The Symbol* in constant pool slot @idx (bounds-checked when _length is known). */
static int cp_symbol(const struct mt_vmstructs *vs, const struct mt_methodsym_layout *l,
		     uint64_t cp, uint16_t idx, uint64_t *sym)
{
	int32_t n = 0;
	int err;

	if (l->cp_has_length) {
		if ((err = vmstructs_read(vs, cp + l->cp_length, &n, sizeof(n))))
			return err;
		if (idx == 0 || idx >= n)
			return -EINVAL;
	}
	if ((err = vmstructs_read_ptr(vs, cp + l->cp_sizeof + (uint64_t)idx * 8, sym)))
		return err;
	return *sym ? 0 : -EFAULT;
}

/* Symbol @sym's bytes as a C string in @out; one longer than @outlen - 1 is
 * cut to its first bytes and "..." when @cut (a signature: Derby's
 * B2I.openScan's is 562 bytes), else -EINVAL. */
static int symbol_text(const struct mt_vmstructs *vs, const struct mt_methodsym_layout *l,
		       uint64_t sym, char *out, size_t outlen, bool cut)
{
	uint32_t n = 0, take;
	int err;

	if ((err = vmstructs_read(vs, sym + l->kl.sym_length, &n,
				  l->kl.length_size == 4 ? 4 : 2))) /* little-endian */
		return err;
	if (n >= outlen && (!cut || outlen < 8))
		return -EINVAL;
	take = n < outlen ? n : (uint32_t)outlen - 4;
	if ((err = vmstructs_read(vs, sym + l->kl.sym_body, out, take)))
		return err;
	out[take] = '\0';
	if (memchr(out, '\0', take))
		return -EINVAL;
	if (take < n)
		memcpy(out + take, "...", 4);
	return 0;
}

/* ConstMethod* and ConstantPool* of @method. */
static int method_parts(const struct mt_vmstructs *vs, const struct mt_methodsym_layout *l,
			uint64_t method, uint64_t *cm, uint64_t *cp)
{
	int err;

	if (!method)
		return -EFAULT;
	if ((err = vmstructs_read_ptr(vs, method + l->method_const, cm)))
		return err;
	if (!*cm)
		return -EFAULT;
	if (!cp)
		return 0;
	if ((err = vmstructs_read_ptr(vs, *cm + l->cm_constants, cp)))
		return err;
	return *cp ? 0 : -EFAULT;
}

int methodsym_names(const struct mt_vmstructs *vs, const struct mt_methodsym_layout *l,
		    uint64_t method, struct mt_methodsym *out)
{
	uint64_t cm, cp, holder, sym;
	uint16_t name_idx = 0, sig_idx = 0, file_idx = 0;
	int err;

	memset(out, 0, sizeof(*out));
	if ((err = method_parts(vs, l, method, &cm, &cp)) ||
	    (err = vmstructs_read(vs, cm + l->cm_name_index, &name_idx, sizeof(name_idx))) ||
	    (err = vmstructs_read(vs, cm + l->cm_sig_index, &sig_idx, sizeof(sig_idx))) ||
	    (err = vmstructs_read_ptr(vs, cp + l->cp_holder, &holder)))
		return err;
	if (!holder)
		return -EFAULT;
	if ((err = cp_symbol(vs, l, cp, name_idx, &sym)) ||
	    (err = symbol_text(vs, l, sym, out->name, sizeof(out->name), false)) ||
	    (err = cp_symbol(vs, l, cp, sig_idx, &sym)) ||
	    (err = symbol_text(vs, l, sym, out->sig, sizeof(out->sig), true)))
		return err;
	err = klassname_read(vs, &l->kl, holder, true, out->klass, sizeof(out->klass));
	if (err < 0)
		return err;
	/* the source file is optional: a class may lack it, a JDK may not export it */
	if (l->cp_has_source &&
	    !vmstructs_read(vs, cp + l->cp_source_file, &file_idx, sizeof(file_idx)) && file_idx &&
	    (cp_symbol(vs, l, cp, file_idx, &sym) ||
	     symbol_text(vs, l, sym, out->file, sizeof(out->file), false)))
		out->file[0] = '\0';
	return 0;
}

/* Where @method's bytecodes are (@base) and how many (@size). */
static int method_code(const struct mt_vmstructs *vs, const struct mt_methodsym_layout *l,
		       uint64_t method, uint64_t *cm, uint64_t *base, uint16_t *size)
{
	int err;

	*size = 0;
	if ((err = method_parts(vs, l, method, cm, NULL)) ||
	    (err = vmstructs_read(vs, *cm + l->cm_code_size, size, sizeof(*size))))
		return err;
	*base = *cm + l->cm_sizeof; /* the bytecodes follow the ConstMethod */
	return 0;
}

int methodsym_bci(const struct mt_vmstructs *vs, const struct mt_methodsym_layout *l,
		  uint64_t method, uint64_t bcp, int *bci)
{
	uint64_t cm, base;
	uint16_t size;
	int err;

	if ((err = method_code(vs, l, method, &cm, &base, &size)))
		return err;
	if (bcp < base || bcp >= base + size)
		return -ERANGE;
	*bci = (int)(bcp - base);
	return 0;
}

int methodsym_line(const struct mt_vmstructs *vs, const struct mt_methodsym_layout *l,
		   uint64_t method, int bci, int *line)
{
	uint64_t cm, base, end, len;
	uint32_t flags = 0;
	int32_t words = 0;
	uint16_t size;
	uint8_t *tab;
	int err;

	if (!l->has_linenumbers)
		return -ENOENT;
	if ((err = method_code(vs, l, method, &cm, &base, &size)) ||
	    (err = vmstructs_read(vs, cm + l->cm_flags, &flags, l->cm_flags_size)) ||
	    (err = vmstructs_read(vs, cm + l->cm_size_words, &words, sizeof(words))))
		return err;
	if (bci < 0) /* method entry (InvocationEntryBci) */
		bci = 0;
	if (bci >= size)
		return -ERANGE;
	if (!(flags & l->has_linenumbers))
		return -ENOENT;
	/* the table follows the bytecodes, inside the ConstMethod */
	end = cm + (uint64_t)(words > 0 ? words : 0) * 8;
	if (end <= base + size)
		return -EBADMSG;
	len = end - (base + size);
	if (len > LINE_TABLE_MAX)
		len = LINE_TABLE_MAX;
	if (!(tab = malloc(len)))
		return -ENOMEM;
	err = vmstructs_read(vs, base + size, tab, len);
	if (!err)
		err = methodsym_line_lookup(tab, len, l->u5_excl, bci, line);
	free(tab);
	return err;
}
