// SPDX-License-Identifier: GPL-2.0
/* snaprec.c - the agent's heap records (agent_proto.h, MT_AP_HREC_*) into a
 * struct mt_snapshot: every record checked against its kind before use. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heap/snaprec.h"

int snaprec_ages(struct mt_snapshot *s, const void *body, size_t n, uint32_t nwalks,
		 char *why, size_t wn)
{
	const char *b = body;
	struct mt_ap_hages h;
	struct mt_agerange *r;

	if (n < sizeof(h))
		goto bad;
	memcpy(&h, b, sizeof(h));
	if (h.nwalks != nwalks || !nwalks || (n - sizeof(h)) / sizeof(struct mt_ap_hwalk) < nwalks)
		goto bad;
	r = calloc(nwalks, sizeof(*r));
	if (!r)
		return -ENOMEM;
	for (uint32_t i = 0; i < nwalks; i++) {
		struct mt_ap_hwalk w;

		memcpy(&w, b + sizeof(h) + i * sizeof(w), sizeof(w));
		if (w.gcs > h.gcs || (i && (w.first_id <= r[i - 1].start || w.gcs < r[i - 1].epoch))) {
			free(r);
			goto bad;
		}
		r[i].start = w.first_id;
		r[i].epoch = w.gcs;
	}
	ageranges_free(&s->ages);
	s->ages.r = r;
	s->ages.n = s->ages.cap = nwalks;
	s->ages.epoch = h.gcs;
	s->ages_walks_dropped = h.dropped;
	s->has_ages = true;
	return 0;
bad:
	snprintf(why, wn, "malformed age record");
	return -EBADMSG;
}

/* Append @k entries of @esz bytes from @src (records are 8-byte aligned). */
#define APPEND(s, arr, src, k)                                                     \
	(!(k) ? 0 :                                                                \
	 snapshot_grow(&(s)->arr, &(s)->cap_##arr, (s)->n##arr, (k),              \
		       sizeof(*(s)->arr)) ? -ENOMEM :                              \
	 (memcpy((s)->arr + (s)->n##arr, (src), (k) * sizeof(*(s)->arr)),          \
	  (s)->n##arr += (k), 0))

static int parse_class(struct mt_snapshot *s, const struct mt_ap_rec *r, const char *b, size_t bl,
		       char *why, size_t wn)
{
	struct mt_ap_hclass h;
	struct mt_snap_class *c;
	const char *p, *end = b + bl, *z;

	if (bl < sizeof(h) + 1)
		goto bad;
	memcpy(&h, b, sizeof(h));
	if (h.nfields != r->arg || h.nfields > bl)
		goto bad;
	p = b + sizeof(h);
	z = memchr(p, '\0', (size_t)(end - p));
	if (!z)
		goto bad;
	if (snapshot_grow(&s->classes, &s->cap_classes, s->nclasses, 1, sizeof(*s->classes)))
		return -ENOMEM;
	c = &s->classes[s->nclasses];
	memset(c, 0, sizeof(*c));
	c->id = h.id;
	c->super = h.super;
	c->loader = h.loader;
	c->sig = snapshot_strdup(s, p, (size_t)(z - p));
	if (!c->sig)
		return -ENOMEM;
	p = z + 1;
	if (h.nfields) {
		c->fields = calloc(h.nfields, sizeof(*c->fields));
		if (!c->fields)
			return -ENOMEM;
	}
	s->nclasses++;
	for (uint32_t i = 0; i < h.nfields; i++) {
		struct mt_snap_field *f = &c->fields[i];

		if (end - p < 6)
			goto bad;
		memcpy(&f->index, p, 4);
		f->type = p[4];
		p += 5;
		z = memchr(p, '\0', (size_t)(end - p));
		if (!z || f->index < 0 || !strchr("BCSIJFDZTL[", f->type) || !f->type)
			goto bad;
		f->name = snapshot_strdup(s, p, (size_t)(z - p));
		if (!f->name)
			return -ENOMEM;
		p = z + 1;
		c->nfields++;
	}
	if (!(h.flags & MT_AP_HCLASS_EXT))
		return 0; /* an older agent: the class's kind is not known */
	{
		struct mt_ap_hclass_ext x;

		if ((size_t)(end - p) < sizeof(x))
			goto bad;
		memcpy(&x, p, sizeof(x));
		p += sizeof(x);
		if (x.nifaces > (size_t)(end - p) / 8 || x.nstatics > (size_t)(end - p))
			goto bad;
		if (x.nifaces) {
			c->ifaces = malloc((size_t)x.nifaces * 8);
			if (!c->ifaces)
				return -ENOMEM;
			memcpy(c->ifaces, p, (size_t)x.nifaces * 8);
			c->nifaces = x.nifaces;
			p += (size_t)x.nifaces * 8;
		}
		if (x.nstatics) {
			c->statics = calloc(x.nstatics, sizeof(*c->statics));
			if (!c->statics)
				return -ENOMEM;
		}
		for (uint32_t i = 0; i < x.nstatics; i++) {
			struct mt_snap_field *f = &c->statics[i];

			if (end - p < 6)
				goto bad;
			memcpy(&f->index, p, 4);
			f->type = p[4];
			p += 5;
			z = memchr(p, '\0', (size_t)(end - p));
			if (!z || f->index < 0 || (f->type != 'L' && f->type != '['))
				goto bad;
			f->name = snapshot_strdup(s, p, (size_t)(z - p));
			if (!f->name)
				return -ENOMEM;
			p = z + 1;
			c->nstatics++;
		}
		c->kind = (h.flags & MT_AP_HCLASS_IFACE) ? MT_SNAP_INTERFACE : MT_SNAP_CLASS;
		c->ifaces_unknown = h.flags & MT_AP_HCLASS_NOIFACES;
	}
	return 0;
bad:
	snprintf(why, wn, "malformed class record");
	return -EBADMSG;
}

int snaprec_add(struct mt_snapshot *s, const void *buf, size_t n, bool keep_raw, char *why,
		size_t wn)
{
	size_t off = 0;
	int rc;

	if (keep_raw) {
		if (snapshot_grow(&s->raw, &s->raw_cap, s->raw_len, n, 1))
			return -ENOMEM;
		memcpy(s->raw + s->raw_len, buf, n);
		s->raw_len += n;
	}
	for (;;) {
		struct mt_ap_rec r;
		const void *body;
		const char *b;
		size_t bl;
		int err = 0;

		rc = mt_ap_rec_next(buf, n, &off, &r, &body, &bl);
		if (rc == 0)
			return 0;
		if (rc < 0) {
			snprintf(why, wn, "malformed record at byte %zu", off);
			return -EBADMSG;
		}
		b = body;
		switch (r.kind) {
		case MT_AP_HREC_OBJS:
			if (bl / sizeof(struct mt_ap_hobj) < r.arg)
				goto bad;
			err = APPEND(s, objs, b, r.arg);
			break;
		case MT_AP_HREC_REFS:
			if (bl / sizeof(struct mt_ap_href) < r.arg)
				goto bad;
			err = APPEND(s, refs, b, r.arg);
			break;
		case MT_AP_HREC_ROOTS:
			if (bl / sizeof(struct mt_ap_hroot) < r.arg)
				goto bad;
			err = APPEND(s, roots, b, r.arg);
			break;
		case MT_AP_HREC_PRIMS:
			if (bl / sizeof(struct mt_ap_hprim) < r.arg)
				goto bad;
			err = APPEND(s, prims, b, r.arg);
			break;
		case MT_AP_HREC_STRING: {
			struct mt_snap_string st;

			if (bl < 9 || r.arg > bl - 9 || b[8 + r.arg] != '\0')
				goto bad;
			memcpy(&st.obj, b, 8);
			st.s = snapshot_strdup(s, b + 8, r.arg);
			if (!st.s)
				return -ENOMEM;
			err = APPEND(s, strings, &st, 1);
			break;
		}
		case MT_AP_HREC_THREAD: {
			struct mt_snap_thread t;
			const char *z = bl > 8 ? memchr(b + 8, '\0', bl - 8) : NULL;

			if (!z)
				goto bad;
			memcpy(&t.id, b, 8);
			t.name = snapshot_strdup(s, b + 8, (size_t)(z - (b + 8)));
			if (!t.name)
				return -ENOMEM;
			err = APPEND(s, threads, &t, 1);
			break;
		}
		case MT_AP_HREC_CLASS:
			err = parse_class(s, &r, b, bl, why, wn);
			break;
		case MT_AP_HREC_DONE:
			if (bl < sizeof(s->info))
				goto bad;
			memcpy(&s->info, b, sizeof(s->info));
			break;
		case MT_AP_HREC_AGES:
			err = snaprec_ages(s, b, bl, r.arg, why, wn);
			break;
		case MT_AP_HREC_SAMPLED:
			if (bl / sizeof(struct mt_ap_hsampled) < r.arg)
				goto bad;
			err = APPEND(s, sampled, b, r.arg);
			break;
		case MT_AP_HREC_VISITS:
			if (bl / sizeof(struct mt_ap_hvisit) < r.arg)
				goto bad;
			err = APPEND(s, visits, b, r.arg);
			break;
		case MT_AP_HREC_FREEZE: /* an older agent's lacks the last member */
			if (bl < offsetof(struct mt_ap_hfreeze, fork_at_ns))
				goto bad;
			memset(&s->freeze, 0, sizeof(s->freeze));
			memcpy(&s->freeze, b, bl < sizeof(s->freeze) ? bl : sizeof(s->freeze));
			s->freeze.why[sizeof(s->freeze.why) - 1] = '\0';
			s->has_freeze = true;
			s->frozen = s->freeze.status == 0 && s->freeze.child_pid;
			break;
		case MT_AP_HREC_COPY:
			if (bl < sizeof(s->copy))
				goto bad;
			memcpy(&s->copy, b, sizeof(s->copy));
			s->has_copy = true;
			break;
		case MT_AP_HREC_MARK: /* an older agent's ends before ref_format */
			if (bl < MT_AP_HMARK_OLD)
				goto bad;
			memset(&s->mark, 0, sizeof(s->mark));
			memcpy(&s->mark, b, bl < sizeof(s->mark) ? bl : sizeof(s->mark));
			s->mark.why[sizeof(s->mark.why) - 1] = '\0';
			s->has_mark = true;
			break;
		case MT_AP_HREC_NAMED: {
			struct mt_ap_hnamed_hdr h;

			if (bl < sizeof(h) || (bl - sizeof(h)) / sizeof(struct mt_ap_hnamed) < r.arg)
				goto bad;
			memcpy(&h, b, sizeof(h));
			if (s->nnamed && h.next_id != s->named_next)
				goto bad;
			s->named_next = h.next_id;
			err = APPEND(s, named, b + sizeof(h), r.arg);
			break;
		}
		default:
			break; /* a newer agent's record: skipped */
		}
		if (err)
			return err;
		continue;
bad:
		snprintf(why, wn, "malformed record of kind %u", (unsigned)r.kind);
		return -EBADMSG;
	}
}
