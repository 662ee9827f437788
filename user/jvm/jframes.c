// SPDX-License-Identifier: GPL-2.0
/* jframes.c - Java frame naming from outside; see jframes.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jvm/jframes.h"
#include "jvm/klassname.h"
#include "jvm/vmstructs.h"

int jframes_layout(const struct mt_vmstructs *vs, struct jframes_layout *l)
{
	uint64_t anchor, sp, pc, fp, addr, q, off_buf, off_lim, buf;
	int32_t lim = 0;

	memset(l, 0, sizeof(*l));
	if (vmstructs_field_offset(vs, "JavaThread", "_anchor", &anchor) ||
	    vmstructs_field_offset(vs, "JavaFrameAnchor", "_last_Java_sp", &sp) ||
	    vmstructs_field_offset(vs, "JavaFrameAnchor", "_last_Java_pc", &pc))
		return -ENOENT;
	l->anchor_sp = (uint32_t)(anchor + sp);
	l->anchor_pc = (uint32_t)(anchor + pc);
	if (!vmstructs_field_offset(vs, "JavaFrameAnchor", "_last_Java_fp", &fp))
		l->anchor_fp = (uint32_t)(anchor + fp);
	/* AbstractInterpreter::_code is a StubQueue holding the interpreter */
	if (!vmstructs_static_addr(vs, "AbstractInterpreter", "_code", &addr) &&
	    !vmstructs_read_ptr(vs, addr, &q) && q &&
	    !vmstructs_field_offset(vs, "StubQueue", "_stub_buffer", &off_buf) &&
	    !vmstructs_field_offset(vs, "StubQueue", "_buffer_limit", &off_lim) &&
	    !vmstructs_read_ptr(vs, q + off_buf, &buf) &&
	    !vmstructs_read(vs, q + off_lim, &lim, sizeof(lim)) && lim > 0) {
		l->interp_lo = buf;
		l->interp_hi = buf + (uint64_t)lim;
	}
	if (!vmstructs_static_addr(vs, "CodeCache", "_low_bound", &addr))
		vmstructs_read_ptr(vs, addr, &l->cc_lo);
	if (!vmstructs_static_addr(vs, "CodeCache", "_high_bound", &addr))
		vmstructs_read_ptr(vs, addr, &l->cc_hi);
	if (l->cc_lo >= l->cc_hi)
		l->cc_lo = l->cc_hi = 0;
	l->names_ok = !vmstructs_field_offset(vs, "Method", "_constMethod", &l->method_const) &&
		      !vmstructs_field_offset(vs, "ConstMethod", "_constants", &l->const_constants) &&
		      !vmstructs_field_offset(vs, "ConstMethod", "_name_index", &l->const_name_index) &&
		      !vmstructs_field_offset(vs, "ConstantPool", "_pool_holder", &l->cp_holder) &&
		      !vmstructs_type_size(vs, "ConstantPool", &l->cp_size);
	return 0;
}

int jframes_method_name(const struct mt_vmstructs *vs, const struct jframes_layout *l,
			uint64_t method, char *out, size_t len)
{
	struct mt_klass_layout kl;
	uint64_t cm, cp, holder, sym;
	uint16_t idx = 0;
	char cls[512], name[256];
	uint32_t slen = 0;
	int err;

	if (!l->names_ok || !method)
		return -ENOENT;
	if ((err = vmstructs_read_ptr(vs, method + l->method_const, &cm)) ||
	    (err = vmstructs_read_ptr(vs, cm + l->const_constants, &cp)) ||
	    (err = vmstructs_read(vs, cm + l->const_name_index, &idx, sizeof(idx))) ||
	    (err = vmstructs_read_ptr(vs, cp + l->cp_holder, &holder)))
		return err;
	/* the pool's slots follow the ConstantPool header; a name slot holds a Symbol* */
	if ((err = vmstructs_read_ptr(vs, cp + l->cp_size + (uint64_t)idx * 8, &sym)) || !sym)
		return err ? err : -ENOENT;
	if ((err = klassname_layout(vs, &kl)))
		return err;
	if ((err = klassname_read(vs, &kl, holder, true, cls, sizeof(cls))) < 0)
		return err;
	/* Symbol: u2 _length, then the bytes (offsets from klassname's layout) */
	if ((err = vmstructs_read(vs, sym + kl.sym_length, &slen,
				  kl.length_size == 4 ? 4 : 2))) /* little-endian */
		return err;
	if (slen >= sizeof(name))
		slen = sizeof(name) - 1;
	if ((err = vmstructs_read(vs, sym + kl.sym_body, name, slen)))
		return err;
	name[slen] = '\0';
	snprintf(out, len, "%s.%s", cls, name);
	return 0;
}
