// SPDX-License-Identifier: GPL-2.0
/* jframes.c - Java frame naming from outside; see jframes.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "jvm/hotspot.h"
#include "jstack/jframes.h"
#include "jvm/klassname.h"
#include "jvm/vmstructs.h"

int jframes_layout(const struct mt_vmstructs *vs, struct jframes_layout *l)
{
	const struct mt_hotspot *hs = vmstructs_hotspot(vs);
	uint64_t anchor = hs->javathread_anchor, q, buf;
	int32_t lim = 0;

	memset(l, 0, sizeof(*l));
	if (!hs->has_javathread_anchor || !hs->has_javaframeanchor_last_java_sp ||
	    !hs->has_javaframeanchor_last_java_pc)
		return -ENOENT;
	l->anchor_sp = (uint32_t)(anchor + hs->javaframeanchor_last_java_sp);
	l->anchor_pc = (uint32_t)(anchor + hs->javaframeanchor_last_java_pc);
	if (hs->has_javaframeanchor_last_java_fp)
		l->anchor_fp = (uint32_t)(anchor + hs->javaframeanchor_last_java_fp);
	/* AbstractInterpreter::_code is a StubQueue holding the interpreter */
	if (hs->abstractinterpreter_code &&
	    !vmstructs_read_ptr(vs, hs->abstractinterpreter_code, &q) && q &&
	    hs->has_stubqueue_stub_buffer && hs->has_stubqueue_buffer_limit &&
	    !vmstructs_read_ptr(vs, q + hs->stubqueue_stub_buffer, &buf) &&
	    !vmstructs_read(vs, q + hs->stubqueue_buffer_limit, &lim, sizeof(lim)) && lim > 0) {
		l->interp_lo = buf;
		l->interp_hi = buf + (uint64_t)lim;
	}
	if (hs->codecache_low_bound)
		vmstructs_read_ptr(vs, hs->codecache_low_bound, &l->cc_lo);
	if (hs->codecache_high_bound)
		vmstructs_read_ptr(vs, hs->codecache_high_bound, &l->cc_hi);
	if (l->cc_lo >= l->cc_hi)
		l->cc_lo = l->cc_hi = 0;
	l->names_ok = hs->has_method_constmethod && hs->has_constmethod_constants &&
		      hs->has_constmethod_name_index && hs->has_constantpool_pool_holder &&
		      hs->sizeof_constantpool;
	l->method_const = hs->method_constmethod;
	l->const_constants = hs->constmethod_constants;
	l->const_name_index = hs->constmethod_name_index;
	l->cp_holder = hs->constantpool_pool_holder;
	l->cp_size = hs->sizeof_constantpool;
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
