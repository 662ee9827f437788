// SPDX-License-Identifier: GPL-2.0
/*
 * walksend.c - a walked snapshot cut into HEAP_DATA records (walksend.h), as
 * the socket takes them: one section after the other (the table below), each
 * from where the last chunk stopped (hw.sec, hw.pos).
 */
#include <string.h>

#include "agent.h"
#include "walksend.h"
#include "walkstate.h"

/* Put one CLASS record. Returns its size, or 0 if it does not fit in what is left. */
static long put_class(char *buf, size_t cap, size_t *off, const struct walk_class *c)
{
	char body[0xff00];
	struct mt_ap_hclass h = { .id = c->id, .super = c->super, .loader = c->loader };
	size_t b = sizeof(h), sl = c->sig ? strlen(c->sig) : 0;
	long r;

	if (sl > 4096)
		sl = 4096;
	memcpy(body + b, c->sig ? c->sig : "", sl);
	b += sl;
	body[b++] = '\0';
	for (uint32_t i = 0; i < c->nfields; i++) {
		const struct walk_field *f = &c->fields[i];
		size_t nl = strlen(f->name);
		char type = f->string ? 'T' : f->type;

		if (b + 5 + nl + 1 + 8 > sizeof(body) - 16) {
			hw.done.truncated++;
			break;
		}
		memcpy(body + b, &f->index, 4);
		body[b + 4] = type;
		memcpy(body + b + 5, f->name, nl + 1);
		b += 5 + nl + 1;
		h.nfields++;
	}
	/* the extension: interfaces, reference statics (whole, or not at all) */
	if (c->ext && h.nfields == c->nfields) {
		struct mt_ap_hclass_ext x = { .nifaces = c->noifaces ? 0 : c->nifaces };
		size_t need = sizeof(x) + (size_t)x.nifaces * 8, x_at = b;

		for (uint32_t i = 0; i < c->nstatics; i++)
			need += 5 + strlen(c->statics[i].name) + 1;
		if (b + need + 8 <= sizeof(body) - 16) {
			b += sizeof(x);
			if (x.nifaces)
				memcpy(body + b, c->ifaces, (size_t)x.nifaces * 8);
			b += (size_t)x.nifaces * 8;
			for (uint32_t i = 0; i < c->nstatics; i++) {
				const struct walk_field *f = &c->statics[i];
				size_t nl = strlen(f->name);

				memcpy(body + b, &f->index, 4);
				body[b + 4] = f->type;
				memcpy(body + b + 5, f->name, nl + 1);
				b += 5 + nl + 1;
				x.nstatics++;
			}
			memcpy(body + x_at, &x, sizeof(x));
			h.flags = MT_AP_HCLASS_EXT | (c->iface ? MT_AP_HCLASS_IFACE : 0) |
				  (c->noifaces ? MT_AP_HCLASS_NOIFACES : 0);
		}
	}
	memcpy(body, &h, sizeof(h));
	r = mt_ap_rec_put(buf, cap, off, MT_AP_HREC_CLASS, h.nfields, body, b);
	return r < 0 ? 0 : r;
}

/* Put a batch of fixed-size entries from v starting at hw.pos. */
static long put_batch(char *buf, size_t cap, size_t *off, unsigned kind, struct walkvec *v)
{
	size_t room = cap - *off, k;
	long r;

	if (room < 8 + v->esz)
		return 0;
	k = (room - 8) / v->esz;
	if (k > (0xfff0 - 8) / v->esz)
		k = (0xfff0 - 8) / v->esz;
	if (k > v->n - hw.pos)
		k = v->n - hw.pos;
	r = mt_ap_rec_put(buf, cap, off, kind, (uint32_t)k, v->p + hw.pos * v->esz, k * v->esz);
	if (r < 0)
		return 0;
	hw.pos += k;
	return r;
}

/* Put one NAMED record: next_id, then as many (address, id) as fit. */
static long put_named(char *buf, size_t cap, size_t *off)
{
	char body[0xff00];
	struct mt_ap_hnamed_hdr h = { .next_id = hw.named_next };
	size_t room = cap - *off, k = 0, b = sizeof(h);
	long r;

	if (room < 8 + sizeof(h) + sizeof(struct mt_ap_hnamed))
		return 0;
	memcpy(body, &h, sizeof(h));
	while (hw.pos + k < hw.named.n && b + sizeof(struct mt_ap_hnamed) <= sizeof(body) &&
	       8 + b + sizeof(struct mt_ap_hnamed) <= room) {
		const struct walk_named *nm = &((const struct walk_named *)hw.named.p)[hw.pos + k];
		struct mt_ap_hnamed e = { .addr = nm->addr, .id = nm->id };

		memcpy(body + b, &e, sizeof(e));
		b += sizeof(e);
		k++;
	}
	r = mt_ap_rec_put(buf, cap, off, MT_AP_HREC_NAMED, (uint32_t)k, body, b);
	if (r < 0)
		return 0;
	hw.pos += k;
	return r;
}

/* Put the CLASS records from hw.pos on; a class that cannot fit even alone
 * in a chunk is skipped. Returns the size of the one put, or 0. */
static long put_classes(char *buf, size_t cap, size_t *off)
{
	while (hw.pos < hw.ncls) {
		long r = put_class(buf, cap, off, &hw.cls[hw.pos]);

		if (r) {
			hw.pos++;
			return r;
		}
		if (*off)
			return 0; /* full */
		hw.pos++; /* cannot fit even alone: skip it */
	}
	return 0;
}

/* Put one record of @len body bytes from hw.pos (advanced if it fits). */
static long put_one(char *buf, size_t cap, size_t *off, unsigned kind, uint32_t arg,
		    const void *body, size_t len)
{
	long r = mt_ap_rec_put(buf, cap, off, kind, arg, body, len);

	if (r <= 0)
		return 0;
	hw.pos++;
	return r;
}

/* One THREAD record: its id, its name. */
static long put_thread(char *buf, size_t cap, size_t *off)
{
	char body[8 + 4096];
	size_t nl = strnlen(hw.threads[hw.pos].name, 4095);

	memcpy(body, &hw.threads[hw.pos].id, 8);
	memcpy(body + 8, hw.threads[hw.pos].name, nl);
	body[8 + nl] = '\0';
	return put_one(buf, cap, off, MT_AP_HREC_THREAD, 0, body, 8 + nl + 1);
}

/* One STRING record: its object, its UTF-8 bytes. */
static long put_string(char *buf, size_t cap, size_t *off)
{
	const struct walk_str *s = &((struct walk_str *)hw.strs.p)[hw.pos];
	char body[8 + MT_AP_HSTR_MAX + 1];

	memcpy(body, &s->obj, 8);
	memcpy(body + 8, s->utf8, s->len + 1);
	return put_one(buf, cap, off, MT_AP_HREC_STRING, s->len, body, 8 + s->len + 1);
}

/* The session's age ranges (one AGES record). */
static long put_ages(char *buf, size_t cap, size_t *off)
{
	static char body[sizeof(struct mt_ap_hages) + sizeof(hs.walks)];
	struct mt_ap_hages a = { .gcs = hw.gcs, .nwalks = hs.nwalks, .dropped = hs.dropped_walks };

	memcpy(body, &a, sizeof(a));
	memcpy(body + sizeof(a), hs.walks, hs.nwalks * sizeof(hs.walks[0]));
	return put_one(buf, cap, off, MT_AP_HREC_AGES, hs.nwalks, body,
		       sizeof(a) + hs.nwalks * sizeof(hs.walks[0]));
}

/* How a frozen walk went (one FREEZE record). */
static long put_freeze(char *buf, size_t cap, size_t *off)
{
	return put_one(buf, cap, off, MT_AP_HREC_FREEZE, 0, &hw.fz.rec, sizeof(hw.fz.rec));
}

/* Where memtrace reads the frozen copy's records (one COPY record). */
static long put_copy(char *buf, size_t cap, size_t *off)
{
	return put_one(buf, cap, off, MT_AP_HREC_COPY, 0, &hw.copy, sizeof(hw.copy));
}

static size_t n_classes(void) { return hw.ncls; }
static size_t n_threads(void) { return hw.nthreads; }
static size_t n_strings(void) { return hw.strs.n; }
/* (the class table alone: no walk, no ages) */
static size_t n_ages(void) { return !(hw.flags & MT_AP_HEAP_CLASSES); }
/* (a marked walk's ids are the marker's: memtrace needs no addresses; the
 * class table alone has none) */
static size_t n_named(void)
{
	return (hw.want_mark && !hw.mark.status && !hw.comparing) ||
	       (hw.flags & MT_AP_HEAP_CLASSES) ? 0 : hw.named.n;
}
static size_t n_freeze(void) { return hw.want_freeze; }
static size_t n_copy(void) { return hw.want_copy; }
static size_t n_mark(void) { return hw.want_mark; }

/* How the copy's own mark went, and where its records are (one MARK record). */
static long put_mark(char *buf, size_t cap, size_t *off)
{
	return put_one(buf, cap, off, MT_AP_HREC_MARK, 0, &hw.mark, sizeof(hw.mark));
}

/* The sections of a snapshot, in the order they are sent: a batch section's
 * entries go out as they are (@vec, @kind), the others' through @put, one
 * record at a time; @len says how many a section has. */
static const struct section {
	struct walkvec *vec;                               /* a batch of fixed-size entries */
	unsigned kind;                                     /* its MT_AP_HREC_* */
	size_t (*len)(void);                               /* the others: records to put */
	long (*put)(char *buf, size_t cap, size_t *off);   /* one at hw.pos; 0: no room */
	bool not_bare;                                     /* none for an MT_AP_HEAP_BARE walk */
} sections[] = {
	{ .len = n_classes, .put = put_classes, .not_bare = true },
	{ .len = n_threads, .put = put_thread, .not_bare = true },
	{ .vec = &hw.objs, .kind = MT_AP_HREC_OBJS },
	{ .vec = &hw.refs, .kind = MT_AP_HREC_REFS },
	{ .vec = &hw.roots, .kind = MT_AP_HREC_ROOTS },
	{ .vec = &hw.prims, .kind = MT_AP_HREC_PRIMS },
	{ .len = n_strings, .put = put_string },
	{ .len = n_ages, .put = put_ages, .not_bare = true },   /* the session's age ranges */
	{ .len = n_named, .put = put_named },                   /* untagged walks: addresses */
	{ .vec = &hw.visits, .kind = MT_AP_HREC_VISITS },
	{ .vec = &hw.sampled, .kind = MT_AP_HREC_SAMPLED },
	{ .len = n_freeze, .put = put_freeze },                 /* how a frozen walk went */
	{ .len = n_copy, .put = put_copy },                     /* where memtrace reads the copy */
	{ .len = n_mark, .put = put_mark },                     /* the copy's own mark */
};

void walksend_begin(void)
{
	hw.pending = true;
	hw.sec = 0;
	hw.pos = 0;
}

bool walksend_pending(void)
{
	return hw.pending;
}

long walksend_chunk(void *vbuf, size_t cap)
{
	char *buf = vbuf;
	size_t off = 0;
	bool bare = hw.done.flags & MT_AP_HEAP_BARE;

	while (hw.pending && hw.sec < (int)MT_ARRAY_SIZE(sections)) {
		const struct section *s = &sections[hw.sec];
		size_t len = s->vec ? s->vec->n : s->len();
		long r = 0;

		if (hw.pos < len && !(bare && s->not_bare))
			r = s->vec ? put_batch(buf, cap, &off, s->kind, s->vec) : s->put(buf, cap, &off);
		if (r > 0)
			continue;
		/* nothing put: either the section is done or the buffer is full */
		if (bare || hw.pos >= len) {
			hw.sec++;
			hw.pos = 0;
			continue;
		}
		return (long)off; /* full */
	}
	return (long)off; /* everything is out: the caller sends DONE */
}

bool walksend_all_sent(void)
{
	return hw.pending && hw.sec >= (int)MT_ARRAY_SIZE(sections);
}

void walksend_done_info(struct mt_ap_heap_done *d)
{
	*d = hw.done;
}
