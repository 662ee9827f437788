// SPDX-License-Identifier: GPL-2.0
/* snapmark.c - a snapshot from the frozen copy's own mark (see snapmark.h). */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "dsl/dsl.h"
#include "heap/heapfreeze.h"
#include "heap/heapmem.h"
#include "heap/recpool.h"
#include "heap/snapmark.h"
#include "jvm/klassname.h"
#include "jvm/proc.h"
#include "jvm/vmstructs.h"
#include "lib/util.h"

#define PIECE      (256u << 20) /* bytes per process_vm_readv */
#define STR_BATCH  512          /* strings per process_vm_readv */
#define MAX_RECS   (1ull << 34) /* records of one kind that make sense */
#define SYNTH_ID   (1ull << 62) /* ids of classes only a histogram names */

int snapmark_readv(int pid, void *buf, size_t len, uint64_t addr)
{
	size_t off = 0;

	while (off < len) {
		size_t k = len - off < PIECE ? len - off : PIECE;
		struct iovec l = { (char *)buf + off, k };
		struct iovec r = { (void *)(uintptr_t)(addr + off), k };
		ssize_t got = process_vm_readv(pid, &l, 1, &r, 1, 0);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return got < 0 ? -errno : -EIO;
		off += (size_t)got;
	}
	return 0;
}

/* @len bytes at @addr in the copy into @buf: from memtrace's pool when they
 * lie there (MT_AP_FREEZE_POOL), else out of the copy's memory. */
static int read_copy(struct mt_snapshot *s, int pid, void *buf, size_t len, uint64_t addr)
{
	if (recpool_read(s->pool, s->pool_at, s->pool_bytes, addr, buf, len)) {
		s->pool_read += len;
		return 0;
	}
	return snapmark_readv(pid, buf, len, addr);
}

/* Append @n records of @esz bytes at @addr in the copy to the array *@pp. */
static int read_array(struct mt_snapshot *s, int pid, void *pp, size_t *n, size_t *cap,
		      uint64_t addr, uint64_t k, size_t esz)
{
	char **p = pp;
	int err;

	if (!k)
		return 0;
	err = snapshot_grow(pp, cap, *n, (size_t)k, esz);
	if (err)
		return err;
	err = read_copy(s, pid, *p + *n * esz, (size_t)k * esz, addr);
	if (!err)
		*n += (size_t)k;
	return err;
}

/* Read records [*@n, @upto) of @esz bytes from the copy's array at @addr
 * into *@pp (room made up to @cap_want entries at the first). */
static int pull_array(struct mt_snapshot *s, int pid, void *pp, size_t *n, size_t *cap,
		      uint64_t addr, uint64_t upto, uint64_t cap_want, size_t esz)
{
	char **p = pp;
	int err;

	if (upto <= *n)
		return 0;
	if (upto > MAX_RECS || cap_want > MAX_RECS || upto > cap_want)
		return -EPROTO;
	err = snapshot_grow(pp, cap, *n, (size_t)(cap_want - *n), esz);
	if (err)
		return err;
	return read_copy(s, pid, *p + *n * esz, (size_t)(upto - *n) * esz, addr + *n * esz);
}

#define ALLOC_STEP (32ull << 20) /* pool bytes given per pull (fallocate, ~8 ms) */
#define LEAD_FILL  (1ull << 20)  /* of the view's lead below the references (fill()) */
#define LEAD_SLACK 4096          /* entries of lead past what the copy says it needs */
#define MAP_STEP   (8ull << 20)  /* pool bytes made through a mapping per pull */

/* One step of the pool's pages [*@at, @end): given (fallocate), or made by
 * mapping them where that is not supported. 0 or -errno. */
static int alloc_step(struct mt_snapshot *s, uint64_t *at, uint64_t end)
{
	int err = s->fill_noalloc ? -EOPNOTSUPP :
		  recpool_alloc_range(s->own_pool, at, end, ALLOC_STEP);

	if (err == -EOPNOTSUPP || err == -ENOSYS) {
		s->fill_noalloc = true;
		err = recpool_fill_range(s->own_pool, at, end, MAP_STEP);
	}
	return err;
}

/* One step of the pool's pages below *@back, down to @front at most (the
 * step's start on a page): *@back moves down. 0 or -errno. */
static int alloc_back(struct mt_snapshot *s, uint64_t front, uint64_t *back)
{
	uint64_t step = s->fill_noalloc ? MAP_STEP : ALLOC_STEP;
	uint64_t a = (*back > front + step ? *back - step : front) & ~4095ull, at = a;
	int err;

	while (at < *back) { /* one step, or two where @a went down a page */
		err = alloc_step(s, &at, *back);
		if (err)
			return err;
	}
	*back = a;
	return 0;
}

/* The view's references' lead below the records' in a pool whose references
 * start at @half, the objects' records taking @ow bytes from its start: room
 * for the CLASS reference each of @nobjs objects may add, where no record
 * lies (0 when there is none). */
static size_t inplace_lead(uint64_t nobjs, uint64_t ow, uint64_t half)
{
	uint64_t want = (nobjs + 1) * sizeof(struct dsl_href) + 4096;

	return ow + want <= half ? (size_t)(nobjs + 1) : 0;
}

/* Does the copy write its references by position? Asked, and it mapped the
 * pool (@a: its struct mt_ap_hlive; HM_REFPOS goes with HM_INPLACE). */
static bool by_position(const struct mt_snapshot *s, const struct mt_ap_hlive *a)
{
	return s->refpos_asked && a->pool;
}

/*
 * MT_AP_FREEZE_INPLACE: fill the pool ahead of the copy's records. They go
 * to two places known before they are written: the objects at the pool's
 * start, the references at its middle (mt_ap_inplace_refs()). First the
 * pages the copy writes: while it marks, as far as the records of what it
 * has marked so far; once it sized its arrays, all of them; the place with
 * more left first (the copy writes both from their starts and maps in what
 * is there), then the view's lead below the references. Pages are given
 * with fallocate (3-4 times as fast as through a mapping) and in memtrace's
 * memory cgroup. One step a call; s->fill_more: more to do now.
 * memtrace's own mapping of them waits for the copy's end (in_place(): a
 * thread maps them as the view reads them). Mapped here as well, it took the
 * CPU the copy's two threads need: 10 M objects, the walk 572-585 ms with it
 * against 513-523 ms without.
 */
static void fill(struct mt_snapshot *s, const struct mt_ap_hlive *a)
{
	struct recpool *p = s->own_pool;
	uint64_t half, ow, rw, ol, rl;
	/* references by position: half the bytes, each object's CLASS
	 * reference one of them */
	uint64_t resz = s->refpos_asked ? sizeof(struct mt_ap_hrefpos) : sizeof(struct mt_ap_href);
	int err;

	s->fill_more = false;
	if (!p)
		return;
	half = mt_ap_inplace_refs(p->bytes);
	if (s->fill_ra < half)
		s->fill_ra = half;
	if (!s->fill_lb)
		s->fill_lb = s->fill_la = half;
	/* the answer for these counts would not fit: memtrace refuses the take
	 * when the mark is done, holding no more than it may */
	if (heapmem_need(a->cap_objs && by_position(s, a) ?
				 heapmem_by_position((enum heapmem_use)s->fill_use,
						     s->noclass_asked) :
				 (enum heapmem_use)s->fill_use,
			 a->cap_objs ? a->cap_objs : a->mark_objs,
			 a->cap_objs ? snapmark_sized_refs(s, a) : a->mark_refs) > s->fill_limit)
		return;
	if (!a->cap_objs) {
		ow = a->mark_objs * sizeof(struct mt_ap_hobj);
		rw = half + (a->mark_refs + a->mark_refs / 16 +
			     (s->refpos_asked && !s->noclass_asked ? a->mark_objs : 0)) * resz;
	} else {
		if (!a->pool || a->objs != a->pool || a->refs != a->pool + half)
			return; /* not where it was asked to (not in the pool) */
		uint64_t lead;

		ow = a->cap_objs * sizeof(struct mt_ap_hobj);
		rw = half + a->cap_refs * resz;
		/* the view's references start below the records' (room for a
		 * CLASS reference an object: inplace_lead()); the copy says after
		 * its records how much of it the view needs (lead_need: a few
		 * hundred entries on FreezeWorkload and Tomcat, of millions), so
		 * only LEAD_FILL of it is given ahead, the rest where used */
		uint64_t room = s->refpos_asked ? 0 : /* none needed: they are the view's */
				inplace_lead(a->cap_objs, ow, half) * sizeof(struct dsl_href);

		lead = (half - (room < LEAD_FILL ? room : LEAD_FILL)) & ~(uint64_t)4095;
		if (s->fill_lb == half && lead < half)
			s->fill_lb = s->fill_la = lead;
	}
	if (rw > p->bytes || ow > half)
		return;
	if (a->cap_objs && !s->fill_ob) { /* sized: from both ends from here on */
		uint64_t rb = (rw + 4095) & ~4095ull;

		s->fill_ob = (ow + 4095) & ~4095ull;
		s->fill_rb = rb < p->bytes ? rb : p->bytes;
	}
	if (s->fill_ob) { /* what is left between the two ends */
		ow = s->fill_ob > s->fill_oa ? s->fill_ob : s->fill_oa;
		rw = s->fill_rb > s->fill_ra ? s->fill_rb : s->fill_ra;
	}
	ol = ow > s->fill_oa ? ow - s->fill_oa : 0;
	rl = rw > s->fill_ra ? rw - s->fill_ra : 0;
	s->fill_down = !s->fill_down;
	if (ol && ol >= rl)
		err = s->fill_ob && s->fill_down ? alloc_back(s, s->fill_oa, &s->fill_ob)
						 : alloc_step(s, &s->fill_oa, ow);
	else if (rl)
		err = s->fill_rb && s->fill_down ? alloc_back(s, s->fill_ra, &s->fill_rb)
						 : alloc_step(s, &s->fill_ra, rw);
	else if (s->fill_la < half)
		err = alloc_step(s, &s->fill_la, half);
	else
		return;
	if (err)
		return; /* no memory for it: the copy makes the rest */
	if (s->fill_ob) {
		ow = s->fill_ob;
		rw = s->fill_rb;
	}
	s->fill_more = s->fill_oa < ow || s->fill_ra < rw || s->fill_la < half;
}

uint64_t snapmark_sized_refs(const struct mt_snapshot *s, const struct mt_ap_hlive *a)
{
	/* by position: room for a CLASS reference an object among them (none
	 * where they are implied, MT_AP_FREEZE_NOCLASS) */
	uint64_t cls = by_position(s, a) && !s->noclass_asked ? a->cap_objs + a->cap_objs / 16 : 0;

	return a->cap_refs > cls ? a->cap_refs - cls : 0;
}

int snapmark_pull(struct mt_snapshot *s)
{
	struct mt_ap_hlive a;
	uint64_t g, b, no, nr;
	int err, gerr;

	if (!s->has_live)
		return 0;
	/* gen alone first (the struct's read need not go in address order);
	 * an agent without INPLACE has a shorter struct */
	memset(&a, 0, sizeof(a));
	err = snapmark_readv(s->live_pid, &g, sizeof(g), s->live_at);
	if (!err && !(g & 1))
		err = snapmark_readv(s->live_pid, &a,
				     s->inplace ? sizeof(a) : offsetof(struct mt_ap_hlive, mark_objs),
				     s->live_at);
	if (err || (g & 1) || a.gen != g || !a.objs) {
		if (!err && s->inplace && !(g & 1) && a.gen == g)
			fill(s, &a); /* the mark's progress, before any array */
		return err;
	}
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the records before their counts */
	if (s->pool) { /* where the copy mapped it: memtrace asked for a pool */
		s->pool_at = a.pool;
		s->pool_bytes = a.pool_bytes;
	}
	if (!s->live_sized_objs) { /* sized before the first record: the mark's counts */
		s->live_sized_objs = a.cap_objs;
		s->live_sized_refs = snapmark_sized_refs(s, &a);
		s->live_sized_pos = by_position(s, &a);
	}
	if (s->inplace) { /* the records stay where they are written */
		fill(s, &a);
		return 0;
	}
	if (a.nobjs <= s->live_nobjs && a.nrefs <= s->live_nrefs)
		return 0;
	no = a.nobjs > s->live_nobjs ? a.nobjs : s->live_nobjs;
	nr = a.nrefs > s->live_nrefs ? a.nrefs : s->live_nrefs;
	err = pull_array(s, s->live_pid, &s->live_objs, &s->live_nobjs, &s->live_cap_objs, a.objs,
			 no, a.cap_objs, sizeof(*s->objs));
	if (!err && a.refs)
		err = pull_array(s, s->live_pid, &s->live_refs, &s->live_nrefs, &s->live_cap_refs,
				 a.refs, nr, a.cap_refs, sizeof(*s->refs));
	gerr = snapmark_readv(s->live_pid, &b, sizeof(b), s->live_at);
	if (gerr)
		return gerr;
	if (b != g) /* the arrays moved while we read (a read of the old one */
		return 0;  /* may have failed): keep nothing of it, try again */
	if (err)
		return err;
	s->live_nobjs = (size_t)no;
	if (a.refs)
		s->live_nrefs = (size_t)nr;
	s->live_pulls++;
	return 0;
}

void snapmark_live_done(struct mt_snapshot *s)
{
	s->has_live = false;
	if (s->live_pulls && s->has_mark && !s->mark.status && !s->has_copy && !s->objs &&
	    !s->refs) {
		s->objs = s->live_objs;
		s->nobjs = s->live_read_objs = s->live_nobjs;
		s->cap_objs = s->live_cap_objs;
		s->refs = s->live_refs;
		s->nrefs = s->live_nrefs;
		s->cap_refs = s->live_cap_refs;
	} else {
		free(s->live_objs);
		free(s->live_refs);
		s->live_pulls = 0; /* snapmark_read() reads every record */
	}
	s->live_objs = NULL;
	s->live_refs = NULL;
	s->live_nobjs = s->live_cap_objs = s->live_nrefs = s->live_cap_refs = 0;
}

/* The strings: their refs, then their bytes in batches of iovecs. */
static int read_strings(int pid, struct mt_snapshot *s)
{
	const struct mt_ap_hmark *m = &s->mark;
	struct mt_ap_hstrref *refs;
	char *buf = NULL;
	int err;

	if (!m->nstrs)
		return 0;
	refs = calloc((size_t)m->nstrs, sizeof(*refs));
	if (!refs)
		return -ENOMEM;
	err = snapmark_readv(pid, refs, (size_t)m->nstrs * sizeof(*refs), m->strs);
	if (!err)
		err = snapshot_grow(&s->strings, &s->cap_strings, s->nstrings, (size_t)m->nstrs,
				    sizeof(*s->strings));
	if (!err && !(buf = malloc((size_t)STR_BATCH * (MT_AP_HSTR_MAX + 1))))
		err = -ENOMEM;
	for (uint64_t i = 0; i < m->nstrs && !err; i += STR_BATCH) {
		struct iovec l[STR_BATCH], r[STR_BATCH];
		size_t k = m->nstrs - i < STR_BATCH ? (size_t)(m->nstrs - i) : STR_BATCH, off = 0;
		ssize_t want = 0, got;

		for (size_t j = 0; j < k; j++) {
			const struct mt_ap_hstrref *sr = &refs[i + j];

			if (sr->len > MT_AP_HSTR_MAX) {
				err = -EPROTO;
				break;
			}
			l[j] = (struct iovec){ buf + off, sr->len };
			r[j] = (struct iovec){ (void *)(uintptr_t)sr->utf8, sr->len };
			off += sr->len;
			want += (ssize_t)sr->len;
		}
		if (err)
			break;
		got = process_vm_readv(pid, l, k, r, k, 0);
		if (got != want) {
			err = got < 0 ? -errno : -EIO;
			break;
		}
		off = 0;
		for (size_t j = 0; j < k; j++) {
			struct mt_snap_string *st = &s->strings[s->nstrings];

			st->obj = refs[i + j].obj;
			st->s = snapshot_strdup(s, buf + off, refs[i + j].len);
			if (!st->s) {
				err = -ENOMEM;
				break;
			}
			off += refs[i + j].len;
			s->nstrings++;
		}
	}
	free(buf);
	free(refs);
	return err;
}

/* A class record for Klass @klass under @id (no fields: its objects' values
 * and field names are not known), named as the JVM names it. */
static int add_klass_class(struct mt_snapshot *s, const struct mt_vmstructs *vs,
			   const struct mt_klass_layout *kl, uint64_t klass, uint64_t id)
{
	char name[1024], sig[1040];
	struct mt_snap_class *c;
	int len = -ENOENT;

	if (vs && klass)
		len = klassname_read(vs, kl, klass, false, name, sizeof(name) - 2);
	if (len < 0)
		snprintf(name, sizeof(name), klass ? "<class 0x%llx>" : "<primitive type>",
			 (unsigned long long)klass);
	/* a signature, as the agent's records have (an array's internal name is one) */
	snprintf(sig, sizeof(sig), len > 0 && name[0] != '[' ? "L%s;" : "%s", name);
	if (len > 0)
		snapshot_java_name(sig, name, sizeof(name));
	if (snapshot_grow(&s->classes, &s->cap_classes, s->nclasses, 1, sizeof(*s->classes)))
		return -ENOMEM;
	c = &s->classes[s->nclasses];
	memset(c, 0, sizeof(*c));
	c->id = id;
	c->by_klass = true;
	c->kind = MT_SNAP_CLASS; /* a class the agent did not list: its interfaces unknown */
	c->ifaces_unknown = true;
	c->sig = snapshot_strdup(s, sig, strlen(sig));
	c->name = snapshot_strdup(s, name, strlen(name));
	if (!c->sig || !c->name)
		return -ENOMEM;
	s->nclasses++;
	return 0;
}

/* Class records for the Klasses the mark met unnamed. */
static int name_klasses(const struct mt_vmstructs *vs, struct mt_snapshot *s)
{
	struct mt_klass_layout kl;
	int err = 0;

	if (!s->nklass_ids && !s->nhisto)
		return 0;
	if (vs && klassname_layout(vs, &kl))
		vs = NULL; /* named by address */
	for (size_t i = 0; i < s->nklass_ids && !err; i++) {
		err = add_klass_class(s, vs, &kl, s->klass_ids[i].klass, s->klass_ids[i].id);
	}
	for (size_t i = 0; i < s->nhisto && !err; i++) {
		struct mt_ap_hhisto *h = &s->histo[i];

		if (h->cls)
			continue;
		h->cls = SYNTH_ID + i;
		err = add_klass_class(s, vs, &kl, h->klass, h->cls);
	}
	return err;
}

/*
 * MT_AP_FREEZE_INPLACE: the object and reference records where the copy
 * wrote them, in memtrace's own mapping of the pool (objects, the room the
 * copy left after them, references); false when they are not all there
 * (then they are read as without a pool).
 */
static bool in_place(struct mt_snapshot *s, const struct mt_ap_hmark *m)
{
	bool pos = m->ref_format == MT_AP_REFS_POS || m->ref_format == MT_AP_REFS_POS_NOCLASS;
	uint64_t ob = m->nobjs * sizeof(*s->objs), o, r, lim;
	uint64_t rb = m->nrefs * (pos ? sizeof(*s->refpos) : sizeof(*s->refs));
	struct mt_ap_hlive a;

	s->not_inplace = NULL;
	if (!s->inplace)
		return false;
	if (!s->own_pool || !m->nobjs || !m->nrefs || s->objs || s->refs) {
		s->not_inplace = !s->own_pool ? "no pool of its own" :
				 !m->nobjs || !m->nrefs ? "no objects or no references" :
							  "records read while written";
		return false;
	}
	if (!s->pool_at && s->live_pid > 0 && /* no pull saw the arrays: where it mapped it */
	    !snapmark_readv(s->live_pid, &a, sizeof(a), s->live_at)) {
		s->pool_at = a.pool;
		s->pool_bytes = a.pool_bytes;
	}
	lim = s->pool_bytes < s->own_pool->bytes ? s->pool_bytes : s->own_pool->bytes;
	if (!s->pool_at) {
		s->not_inplace = s->live_pid > 0 ? "the copy did not say where it mapped the pool" :
				 "the copy's live record was not followed (its pid not found)";
		return false;
	}
	if (m->objs < s->pool_at || m->refs < s->pool_at || (m->objs & 7) || (m->refs & 7)) {
		s->not_inplace = "the records are not in the pool";
		return false;
	}
	o = m->objs - s->pool_at;
	r = m->refs - s->pool_at;
	if (o > lim || ob > lim - o || r < o + ob || r > lim || rb > lim - r) {
		s->not_inplace = "the records do not fit the pool";
		return false;
	}
	s->objs = (struct mt_ap_hobj *)(void *)(s->own_pool->map + o);
	s->nobjs = (size_t)m->nobjs;
	s->cap_objs = s->nobjs; /* a view's objects go over them, as large */
	s->refs_lead = pos ? 0 : inplace_lead(s->nobjs, o + ob, r);
	/* as much as the copy says the view needs (an agent from before
	 * lead_need, mark_threads 0: all of it) */
	if (m->mark_threads && s->refs_lead > (size_t)m->lead_need + LEAD_SLACK)
		s->refs_lead = (size_t)m->lead_need + LEAD_SLACK;
	if (pos) { /* the view's references as they are, but for their kind and index */
		s->refpos = (struct mt_ap_hrefpos *)(void *)(s->own_pool->map + r);
		s->nrefpos = (size_t)m->nrefs;
		s->noclass = m->ref_format == MT_AP_REFS_POS_NOCLASS;
	} else {
		s->refs = (struct mt_ap_href *)(void *)(s->own_pool->map + r);
		s->nrefs = s->cap_refs = (size_t)m->nrefs;
	}
	s->recs_pooled = true;
	/* memtrace's own mapping of them, in the order the view reads them,
	 * while it reads (no thread: its reads fault them in) */
	uint64_t lead = (uint64_t)s->refs_lead * sizeof(struct dsl_href);
	const uint64_t ranges[][2] = {
		{ r - (lead < r - o - ob ? lead : r - o - ob), r }, { r, r + rb }, { o, o + ob },
	};
	recpool_map_behind(s->own_pool, ranges, 3);
	return true;
}

int snapmark_refs_by_id(struct mt_snapshot *s, const struct mt_ap_hrefpos *in, size_t n)
{
	int err = n && snapshot_grow(&s->refs, &s->cap_refs, 0, n, sizeof(*s->refs)) ? -ENOMEM : 0;

	s->nrefs = 0;
	for (size_t o = 0, k = 0; o < s->nobjs && !err; o++) {
		uint32_t c = s->objs[o].flags & ~MT_AP_HOBJ_POS_CLASS;
		bool cref = s->objs[o].flags & MT_AP_HOBJ_POS_CLASS;

		if (c > n - k) {
			err = -EPROTO;
			break;
		}
		for (uint32_t j = 0; j < c; j++, k++) {
			if (in[k].to >= s->nobjs) {
				err = -EPROTO;
				break;
			}
			s->refs[s->nrefs++] = (struct mt_ap_href){ .from = s->objs[o].id,
				.to = s->objs[in[k].to].id, .index = in[k].index, .kind = in[k].kind };
		}
		/* an implied CLASS reference (MT_AP_REFS_POS_NOCLASS): as by id */
		s->objs[o].flags = cref && s->objs[o].cls ? MT_AP_HOBJ_CLASSREF : 0;
	}
	if (!err && s->nrefs != n)
		err = -EPROTO;
	return err;
}

/* References by position (MT_AP_REFS_POS) read out of the copy, not used where
 * they lie: @n records at @addr into s->refs (snapmark_refs_by_id()). */
static int refs_from_pos(struct mt_snapshot *s, int pid, uint64_t addr, uint64_t n)
{
	struct mt_ap_hrefpos *in = NULL;
	size_t at = 0, cap = 0;
	int err = n ? read_array(s, pid, &in, &at, &cap, addr, n, sizeof(*in)) : 0;

	if (!err)
		err = snapmark_refs_by_id(s, in, (size_t)n);
	free(in);
	return err;
}

int snapmark_read(const struct mt_proc *p, const struct mt_vmstructs *vs, struct mt_snapshot *s,
		  char *why, size_t n)
{
	const struct mt_ap_hmark *m = &s->mark;
	size_t skip_o, skip_r;
	int pid, err;

	if (m->nobjs > MAX_RECS || m->nrefs > MAX_RECS || m->nroots > MAX_RECS ||
	    m->nprims > MAX_RECS || m->nstrs > (1ull << 30) || m->nhisto > (1ull << 24) ||
	    m->nklasses > (1ull << 24) || m->nsampled > (1ull << 24)) {
		snprintf(why, n, "the frozen copy's record counts make no sense");
		return -EPROTO;
	}
	pid = heapfreeze_copy_pid(p->pid, s->freeze.child_pid);
	if (!pid) {
		snprintf(why, n, "the frozen copy (pid %u in the JVM) is not among the JVM's "
			 "children", s->freeze.child_pid);
		return -ESRCH;
	}
	/* what snapmark_pull() read while the copy wrote (the snapshot's
	 * records, snapmark_live_done()), then the rest */
	skip_o = s->live_pulls ? s->nobjs : 0;
	skip_r = s->live_pulls ? s->nrefs : 0;
	if (skip_o > m->nobjs || skip_r > m->nrefs) {
		snprintf(why, n, "the frozen copy wrote fewer records than memtrace read");
		return -EPROTO;
	}
	if (!skip_o && !skip_r && in_place(s, m)) {
		err = 0;
	} else {
		err = read_array(s, pid, &s->objs, &s->nobjs, &s->cap_objs,
				 m->objs + skip_o * sizeof(*s->objs), m->nobjs - skip_o,
				 sizeof(*s->objs));
		if (!err && m->ref_format != MT_AP_REFS_IDS) {
			/* by position (never read while written: not asked then) */
			err = (m->ref_format == MT_AP_REFS_POS ||
			       m->ref_format == MT_AP_REFS_POS_NOCLASS) && !skip_o && !skip_r ?
				      refs_from_pos(s, pid, m->refs, m->nrefs) : -EPROTO;
			if (err == -EPROTO) {
				snprintf(why, n, "the frozen copy's references by position do not "
					 "fit its objects");
				return err;
			}
		} else if (!err) {
			err = read_array(s, pid, &s->refs, &s->nrefs, &s->cap_refs,
					 m->refs + skip_r * sizeof(*s->refs), m->nrefs - skip_r,
					 sizeof(*s->refs));
		}
	}
	if (!err)
		err = read_array(s, pid, &s->roots, &s->nroots, &s->cap_roots, m->roots, m->nroots,
				 sizeof(*s->roots));
	if (!err)
		err = read_array(s, pid, &s->prims, &s->nprims, &s->cap_prims, m->prims, m->nprims,
				 sizeof(*s->prims));
	if (!err)
		err = read_array(s, pid, &s->sampled, &s->nsampled, &s->cap_sampled, m->sampled,
				 m->nsampled, sizeof(*s->sampled));
	if (!err && m->nhisto) {
		size_t cap = 0;

		err = read_array(s, pid, &s->histo, &s->nhisto, &cap, m->histo, m->nhisto,
				 sizeof(*s->histo));
	}
	if (!err && m->nklasses) {
		size_t cap = 0;

		err = read_array(s, pid, &s->klass_ids, &s->nklass_ids, &cap, m->klasses, m->nklasses,
				 sizeof(*s->klass_ids));
	}
	if (!err && m->addrs && m->nobjs) {
		s->addrs = util_big_alloc((size_t)m->nobjs, sizeof(*s->addrs));
		err = s->addrs ? snapmark_readv(pid, s->addrs, (size_t)m->nobjs * 8, m->addrs)
			       : -ENOMEM;
	}
	if (!err)
		err = read_strings(pid, s);
	if (!err)
		err = name_klasses(vs, s);
	if (err == -ENOMEM)
		snprintf(why, n, "out of memory for the frozen copy's records");
	else if (err == -EPROTO)
		snprintf(why, n, "a string in the frozen copy is longer than the agent sends");
	else if (err)
		snprintf(why, n, "cannot read the frozen copy (pid %d): %s", pid, strerror(-err));
	if (err)
		return err;
	s->info.objects = s->nobjs;
	s->info.refs = s->refpos ? s->nrefpos : s->nrefs;
	/* and those the objects carry: counted by the copy (an agent before it
	 * left emit_threads 0) - a pass over every record here otherwise */
	if (m->ref_format == MT_AP_REFS_POS) /* each a record, counted */
		;
	else if (m->ref_format == MT_AP_REFS_POS_NOCLASS && !s->refpos) /* as by id now */
		for (size_t i = 0; i < s->nobjs; i++)
			s->info.refs += (s->objs[i].flags & MT_AP_HOBJ_CLASSREF) != 0;
	else if (m->ref_format == MT_AP_REFS_POS_NOCLASS) /* implied, counted */
		s->info.refs += m->classrefs;
	else if (m->emit_threads && m->classrefs < UINT32_MAX && m->classrefs <= s->nobjs)
		s->info.refs += m->classrefs;
	else
		for (size_t i = 0; i < s->nobjs; i++)
			s->info.refs += (s->objs[i].flags & MT_AP_HOBJ_CLASSREF) != 0;
	s->info.roots = s->nroots;
	s->info.values = s->nprims;
	s->info.strings = s->nstrings;
	s->info.bytes = m->bytes;
	s->info.truncated += m->truncated;
	return 0;
}
