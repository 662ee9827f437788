// SPDX-License-Identifier: GPL-2.0
/* allocrows.c - the allocation tracer's rows and the factors that weigh them; see allocrows.h. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "memtrace/jstack.h"
#include "memtrace/alloc.h"
#include "alloc.skel.h"
#include "analysis/sharevar.h"
#include "jstack/jwalk.h"
#include "lib/idmap.h"
#include "lib/util.h"
#include "probe/allocnames.h"
#include "probe/allocrows.h"
#include "probe/allocwindows.h"
#include "probe/bpfutil.h"
#include "jstack/jstackstore.h"

/*
 * The factors that turn the kernel's scaled weights into bytes, now: one
 * for the whole (the duty cycle's correction, 1 without windows), and
 * under windows with per-thread keys one per thread - its counter's move
 * since the session began over its keys' weights (probe/threadctr.h) -,
 * with @f->other for the keys of threads without one (the other threads'
 * bytes over their weights) and @f->norm for the bytes of threads never
 * sampled (all keys scaled by exact / counted then). Under no lock.
 */
struct factors {
	double global, other, norm;
	bool per_thread;
	struct idmap by_tid, by_jt; /* -> double * into vals */
	double *vals;
};

static void factors_free(struct factors *f)
{
	idmap_free(&f->by_tid);
	idmap_free(&f->by_jt);
	free(f->vals);
}

/* @by_tid (tid -> double *: the weights each thread's keys hold) and
 * @total (all keys'): the denominators, when not the program's per-thread
 * sums (the class view's parsed TLABs); NULL: those sums. */
static void factors_now(const struct allocrows_src *s, struct factors *f,
			const struct idmap *by_tid, double total)
{
	struct allocwindows *win = s->win;
	struct dutycycle_measure m = { 0 };
	double exact, scaled, known_exact = 0, known_scaled = 0;
	bool counted;
	int err = 0;

	memset(f, 0, sizeof(*f));
	idmap_init(&f->by_tid);
	idmap_init(&f->by_jt);
	f->global = f->other = f->norm = 1;
	/* keys by thread (windows allowed): every thread's bytes since the
	 * session began are its counter's move, not the windows' rates nor the
	 * thinned samples' sum */
	counted = win->tl_on && (win->dc.windowed || win->skel->rodata->targ_key_tid);
	pthread_mutex_lock(&win->mu);
	/* one pass over the threads: the open window's bytes, and win->seen
	 * (with the threads' counters when counted) */
	if (counted)
		err = allocwindows_read_threads(win, &m);
	else if (win->dc.on && !win->dc.wclosed)
		allocwindows_measure(win, &m);
	f->global = dutycycle_factor(&win->dc, mono_ns(), m.raw_bytes);
	if (!counted)
		goto out;
	scaled = by_tid ? total : (double)allocwindows_cost(win).scaled_bytes;
	if (err || scaled <= 0)
		goto out;
	exact = threadctr_total(&win->tc);
	f->global = f->other = exact / scaled;
	if (!win->skel->rodata->targ_key_tid || !win->nseen ||
	    !(f->vals = calloc(win->nseen, sizeof(*f->vals))))
		goto out;
	for (size_t i = 0; i < win->nseen; i++) {
		const struct mt_alloc_tid *v = &win->seen[i].v;
		const double *d = by_tid ? idmap_get(by_tid, win->seen[i].tid) : NULL;
		double bytes, w = by_tid ? (d ? *d : 0) : (double)v->scaled;

		if (w <= 0 || !v->thread || !threadctr_thread(&win->tc, v->thread, &bytes))
			continue;
		f->vals[i] = bytes / w;
		if (idmap_put(&f->by_tid, win->seen[i].tid, &f->vals[i]) ||
		    idmap_put(&f->by_jt, v->thread, &f->vals[i]))
			continue;
		known_exact += bytes;
		known_scaled += w;
	}
	f->per_thread = true;
	if (scaled > known_scaled + 0.5)
		f->other = (exact - known_exact) / (scaled - known_scaled);
	else if (known_exact > 0) /* bytes of threads never sampled: spread */
		f->norm = exact / known_exact;
	if (f->other < 0)
		f->other = 0;
out:
	pthread_mutex_unlock(&win->mu);
}

/* The factor for the keys of thread @tid (JavaThread @jt when @tid is 0). */
static double factor_of(const struct factors *f, uint32_t tid, uint64_t jt)
{
	double *v;

	if (!f->per_thread)
		return f->global;
	v = tid ? idmap_get(&f->by_tid, tid) : idmap_get(&f->by_jt, jt);
	return (v ? *v : f->other) * f->norm;
}

/* Rows alike but for their thread, next to each other. */
static int row_cmp(const void *a, const void *b)
{
	const struct alloc_row *x = a, *y = b;

	if (x->class_name != y->class_name)
		return x->class_name < y->class_name ? -1 : 1;
	if (x->stack_id != y->stack_id)
		return x->stack_id < y->stack_id ? -1 : 1;
	if (x->gen != y->gen)
		return x->gen < y->gen ? -1 : 1;
	if (x->java_pc != y->java_pc)
		return x->java_pc < y->java_pc ? -1 : 1;
	if (x->method != y->method)
		return x->method < y->method ? -1 : 1;
	if (x->jstack != y->jstack)
		return x->jstack < y->jstack ? -1 : 1;
	return 0;
}

/* Merge the per-thread rows of one key (sorted first). */
static void rows_merge(struct alloc_row *rows, size_t *n)
{
	size_t w = 0;

	if (*n < 2)
		return;
	qsort(rows, *n, sizeof(*rows), row_cmp);
	for (size_t i = 1; i < *n; i++) {
		if (!row_cmp(&rows[w], &rows[i])) {
			rows[w].bytes += rows[i].bytes;
			rows[w].samples += rows[i].samples;
		} else {
			rows[++w] = rows[i];
		}
	}
	*n = w + 1;
}

struct alloc_row *allocrows_rows(const struct allocrows_src *s, size_t *n)
{
	int fd = bpf_map__fd(s->skel->maps.allocs);
	struct mt_alloc_key key, next, *prev = NULL;
	struct alloc_row *rows = NULL, *tmp;
	struct factors f = { .global = 1, .other = 1, .norm = 1 };
	size_t cap = 0;

	ring_buffer__consume(s->rb); /* names of the newest keys first */
	*n = 0;
	if (s->win->on)
		factors_now(s, &f, NULL, 0);
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct mt_alloc_val v;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			tmp = realloc(rows, cap * sizeof(*rows));
			if (!tmp)
				break;
			rows = tmp;
		}
		rows[*n] = (struct alloc_row){ allocnames_get(s->names, key.klass, key.gen),
					       key.stack_id,
					       key.gen, key.java_pc, key.method, key.jstack,
					       (uint64_t)((double)v.bytes * factor_of(&f, key.tid, 0) +
							  0.5), v.samples, false };
		/* the walker's keys leave the allocating frame to its stack (key is
		 * the iteration's cursor: not changed) */
		if (key.jstack && !key.java_pc && !key.method && s->store) {
			struct mt_jstack st;

			if (!jstackstore_get(s->store, key.jstack, &st))
				jwalk_leaf(s->vs, s->jw, &st, &rows[*n].java_pc, &rows[*n].method);
		}
		(*n)++;
	}
	factors_free(&f);
	if (s->skel->rodata->targ_key_tid)
		rows_merge(rows, n);
	return rows;
}

/* Add @bytes to @name's row in @c (*n rows, room for one more), and
 * @tlabs; returns the row's index. */
static size_t class_add(struct alloc_class *c, size_t *n, const char *name, uint64_t bytes,
			uint64_t tlabs)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (c[i].class_name == name || !strcmp(c[i].class_name, name))
			break;
	if (i == *n)
		c[(*n)++] = (struct alloc_class){ name, 0, 0, 0 };
	c[i].bytes += bytes;
	c[i].tlabs += tlabs;
	return i;
}

/* Room for one more class and one more cell. 0 or -ENOMEM. */
static int room(struct alloc_class **c, size_t n, size_t *cap, struct sharevar_cell **cells,
		size_t ncells, size_t *capcells)
{
	void *tmp;

	if (n + 1 >= *cap) {
		if (!(tmp = realloc(*c, (*cap ? 2 * *cap : 256) * sizeof(**c))))
			return -ENOMEM;
		*c = tmp;
		*cap = *cap ? 2 * *cap : 256;
	}
	if (ncells + 1 >= *capcells) {
		if (!(tmp = realloc(*cells, (*capcells ? 2 * *capcells : 256) * sizeof(**cells))))
			return -ENOMEM;
		*cells = tmp;
		*capcells = *capcells ? 2 * *capcells : 256;
	}
	return 0;
}

struct alloc_class *allocrows_classes(const struct allocrows_src *s, size_t *n,
				       uint64_t stats[MT_CONTENT_NSTATS])
{
	int fd = bpf_map__fd(s->skel->maps.content), sfd = bpf_map__fd(s->skel->maps.tlab_state);
	struct mt_content_key key, next, *prev = NULL;
	uint64_t tkey, tnext, *tprev = NULL;
	struct alloc_class *c = NULL;
	struct factors f = { .global = 1, .other = 1, .norm = 1 };
	struct content_ent { struct mt_content_key k; struct mt_content_val v; } *ents = NULL;
	struct sharevar_cell *cells = NULL;
	size_t cap = 0, ne = 0, capent = 0, nc = 0, capcells = 0;
	double total = 0, pending = 0, pending_y = 0, wsum, *sums = NULL, *se;
	struct idmap by_tid;
	bool known;

	*n = 0;
	wsum = (double)bpfutil_percpu_sum_at(bpf_map__fd(s->skel->maps.content_stats),
					     MT_CONTENT_WSUM);
	if (stats)
		for (uint32_t i = 0; i < MT_CONTENT_NSTATS; i++)
			stats[i] = bpfutil_percpu_sum_at(bpf_map__fd(s->skel->maps.content_stats), i);
	if (!s->content)
		return NULL;
	idmap_init(&by_tid);
	ring_buffer__consume(s->rb); /* names of the newest keys first */
	/* parsed TLABs and objects outside TLABs (keyed by thread: each
	 * thread's sum first, for its factor) */
	while (!bpf_map_get_next_key(fd, prev, &next)) {
		struct content_ent *x;

		key = next;
		prev = &key;
		if (ne == capent) {
			capent = capent ? 2 * capent : 256;
			if (!(x = realloc(ents, capent * sizeof(*ents))))
				break;
			ents = x;
		}
		if (bpf_map_lookup_elem(fd, &key, &ents[ne].v))
			continue;
		ents[ne].k = key;
		total += (double)ents[ne].v.bytes;
		ne++;
	}
	if (s->win->on && s->skel->rodata->targ_key_tid && ne &&
	    (sums = calloc(ne, sizeof(*sums)))) {
		size_t ns = 0;

		for (size_t i = 0; i < ne; i++) {
			double *d = idmap_get(&by_tid, ents[i].k.tid);

			if (!d && !idmap_put(&by_tid, ents[i].k.tid, &sums[ns]))
				d = &sums[ns++];
			if (d)
				*d += (double)ents[i].v.bytes;
		}
		factors_now(s, &f, &by_tid, total);
	} else if (s->win->on) {
		factors_now(s, &f, NULL, 0);
	}
	for (size_t i = 0; i < ne; i++) {
		double fac = factor_of(&f, ents[i].k.tid, 0);
		const struct mt_content_val *v = &ents[i].v;

		if (room(&c, *n, &cap, &cells, nc, &capcells))
			break;
		/* each thread scaled to its counter is a ratio of its own */
		cells[nc] = (struct sharevar_cell){
			f.per_thread ? ents[i].k.tid : 0,
			(uint32_t)class_add(c, n, allocnames_get(s->names, ents[i].k.klass,
								 ents[i].k.gen),
					    (uint64_t)((double)v->bytes * fac + 0.5), v->parsed),
			(double)v->bytes / 1024, (double)v->sq_kib2, (double)v->cross_kib2,
			(double)v->bytes * fac };
		nc++;
	}
	free(ents);
	free(sums);
	idmap_free(&by_tid);
	/* kept TLABs not parsed yet: all their opening class's, unless each
	 * thread is scaled to its counter (its parsed TLABs stand for it); a
	 * weight that carries over without a draw only counts in the total */
	while (!f.per_thread && !bpf_map_get_next_key(sfd, tprev, &tnext)) {
		struct mt_tlab_state st;
		double ww;

		tkey = tnext;
		tprev = &tkey;
		if (bpf_map_lookup_elem(sfd, &tkey, &st))
			continue;
		pending += (double)st.weight;
		if (!st.draw)
			continue;
		if (room(&c, *n, &cap, &cells, nc, &capcells))
			break;
		ww = (double)(st.draw >> 10) * (double)(st.draw >> 10);
		pending_y += (double)st.draw;
		cells[nc] = (struct sharevar_cell){
			0,
			(uint32_t)class_add(c, n, allocnames_get(s->names, st.klass, st.gen),
					    (uint64_t)((double)st.draw * factor_of(&f, 0, tkey) + 0.5),
					    0),
			(double)st.draw / 1024, ww, ww, (double)st.draw };
		nc++;
	}
	/* the draws' units into bytes: every draw's y over the sum of the
	 * samples' weights (each thread's own counter does it per thread) */
	if (!f.per_thread && wsum > 0 && total + pending_y > 0)
		for (size_t i = 0; i < *n; i++)
			c[i].bytes = (uint64_t)((double)c[i].bytes * (wsum + pending) /
						(total + pending_y) + 0.5);
	/* the draws' spread: known without windows, or with each thread scaled
	 * to its counter (a thread's share of each window is then its own) */
	known = !(s->win->on && s->win->dc.windowed) || f.per_thread;
	se = calloc(*n ? *n : 1, sizeof(*se));
	if (!se || sharevar_stderr(cells, nc, *n, se))
		known = false;
	for (size_t i = 0; i < *n; i++)
		c[i].share_stderr = known ? se[i] : -1;
	free(se);
	free(cells);
	factors_free(&f);
	return c;
}


/* The view's class of each row into @cls[i] (@nc: none), and each class's
 * rows' bytes into @sum[k]. */
static void rows_by_class(const struct alloc_row *rows, size_t n, const struct alloc_class *c,
			  size_t nc, size_t *cls, double *sum)
{
	for (size_t i = 0; i < n; i++) {
		size_t k;

		for (k = 0; k < nc; k++)
			if (!strcmp(rows[i].class_name, c[k].class_name))
				break;
		cls[i] = k;
		if (k < nc)
			sum[k] += (double)rows[i].bytes;
	}
}

int allocrows_match_classes(struct alloc_row **rows, size_t *n, const struct alloc_class *c,
			    size_t nc)
{
	size_t m = nc ? nc : 1, extra = 0, k, *cls = calloc(*n ? *n : 1, sizeof(*cls));
	double *sum = calloc(m, sizeof(*sum)), *carry = calloc(m, sizeof(*carry));
	uint64_t *left = calloc(m, sizeof(*left));
	struct alloc_row *r;
	int err = -ENOMEM;

	if (!cls || !sum || !carry || !left)
		goto cleanup;
	rows_by_class(*rows, *n, c, nc, cls, sum);
	for (k = 0; k < nc; k++) {
		extra += sum[k] <= 0 && c[k].bytes;
		left[k] = c[k].bytes;
	}
	r = realloc(*rows, (*n + extra ? *n + extra : 1) * sizeof(*r));
	if (!r)
		goto cleanup;
	*rows = r;
	/* scaled by the class's factor, the rounding carried along its rows */
	for (size_t i = 0; i < *n; i++) {
		double want;
		uint64_t b;

		k = cls[i];
		if (k == nc || sum[k] <= 0) {
			r[i].bytes = 0;
			continue;
		}
		want = (double)r[i].bytes * (double)c[k].bytes / sum[k] + carry[k];
		b = want <= 0 ? 0 : (uint64_t)(want + 0.5);
		b = b > left[k] ? left[k] : b;
		carry[k] = want - (double)b;
		left[k] -= b;
		r[i].bytes = b;
	}
	/* what rounding left goes to the class's last row: the sums are exact */
	for (size_t i = *n; i-- > 0;) {
		k = cls[i];
		if (k < nc && sum[k] > 0 && left[k]) {
			r[i].bytes += left[k];
			left[k] = 0;
		}
	}
	for (k = 0; k < nc; k++)
		if (sum[k] <= 0 && c[k].bytes)
			r[(*n)++] = (struct alloc_row){ .class_name = c[k].class_name,
							.stack_id = -1, .bytes = c[k].bytes,
							.content_only = true };
	err = 0;
cleanup:
	free(cls);
	free(sum);
	free(carry);
	free(left);
	return err;
}
