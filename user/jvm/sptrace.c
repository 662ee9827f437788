// SPDX-License-Identifier: GPL-2.0
/* sptrace.c - the JVM's record of its last safepoint (see sptrace.h). */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "jvm/sptrace.h"
#include "jvm/elfsym.h"
#include "jvm/proc.h"

static int read_proc(void *ctx, uint64_t addr, void *buf, size_t n)
{
	return proc_read_mem((int)(intptr_t)ctx, addr, buf, n);
}

int sptrace_open(const struct mt_proc *p, struct sptrace *t)
{
	static const char *const names[] = { SPTRACE_SYM_BEGIN, SPTRACE_SYM_END,
					     SPTRACE_SYM_COUNTER };
	uint64_t addr[3], size, bias;
	struct mt_elf *e;
	int err = 0;

	memset(t, 0, sizeof(*t));
	if (!p->libjvm_host[0] || !p->libjvm_base)
		return -ENOENT;
	e = elfsym_open(p->libjvm_host);
	if (!e)
		return -errno;
	bias = elfsym_load_bias(e, p->libjvm_base);
	for (int i = 0; i < 3 && !err; i++)
		if (elfsym_lookup(e, names[i], &addr[i], &size) || size < 8)
			err = -ENOENT;
	if (err) {
		elfsym_free(e);
		return err;
	}
	t->begin = addr[0] + bias;
	t->end = addr[1] + bias;
	t->counter = addr[2] + bias;
	if (!elfsym_lookup(e, SPTRACE_SYM_APP, &addr[0], &size) && size >= 8)
		t->app = addr[0] + bias;
	elfsym_free(e);
	t->read = read_proc;
	t->ctx = (void *)(intptr_t)p->pid;
	t->ok = true;
	return 0;
}

/* The counter: 0 or -errno. HotSpot's is 64 bits on 64-bit platforms
 * (uint64_t since JDK 13); the symbol's size said 8. */
static int read_counter(const struct sptrace *t, uint64_t *c)
{
	return t->read(t->ctx, t->counter, c, sizeof(*c));
}

void sptrace_window_begin(const struct sptrace *t, struct sptrace_window *w)
{
	w->ok = t && t->ok && !read_counter(t, &w->counter) && !(w->counter & 1);
}

int sptrace_look(const struct sptrace *t, struct sptrace_look *l)
{
	int64_t app = 0, b, e;
	uint64_t c, c2;

	if (!t || !t->ok)
		return -ENOENT;
	/* SafepointTracing::begin() writes the begin, the time between, then
	 * the end's 0, and bumps the counter after: so the time between is
	 * read first, the end last - a begin newer than the end read after it
	 * is refused below, and one that is not is as new as the time between */
	if (read_counter(t, &c) || (t->app && t->read(t->ctx, t->app, &app, sizeof(app))) ||
	    t->read(t->ctx, t->begin, &b, sizeof(b)) || t->read(t->ctx, t->end, &e, sizeof(e)) ||
	    read_counter(t, &c2))
		return -EIO;
	if (c2 != c || !c || b <= 0)
		return -EAGAIN;
	if (c & 1) { /* in progress: its begin and the time before it written */
		l->k = (c + 1) / 2;
		l->end = 0;
	} else if (e > b) { /* ended, its end written last */
		l->k = c / 2;
		l->end = e;
	} else { /* its end not written yet, or the next one beginning */
		return -EAGAIN;
	}
	l->begin = b;
	l->prev_end = app > 0 && app < b ? b - app : 0;
	return 0;
}

/* The entry for safepoint @k in @s (the looks come in order: the last two
 * are searched), a new one when there is room, else NULL. */
static struct sptrace_seen_sp *seen_at(struct sptrace_seen *s, uint64_t k)
{
	for (uint32_t i = s->n; i > 0 && i + 2 > s->n; i--)
		if (s->sp[i - 1].k == k)
			return &s->sp[i - 1];
	if (s->n == SPTRACE_SEEN)
		return NULL;
	s->sp[s->n] = (struct sptrace_seen_sp){ .k = k };
	return &s->sp[s->n++];
}

void sptrace_seen_add(struct sptrace_seen *s, const struct sptrace_look *l)
{
	struct sptrace_seen_sp *sp;

	if (l->prev_end && l->k > 1 && (sp = seen_at(s, l->k - 1)) != NULL)
		sp->end = l->prev_end;
	if ((sp = seen_at(s, l->k)) == NULL)
		return;
	sp->begin = l->begin;
	if (l->end)
		sp->end = l->end;
}

int sptrace_seen_find(const struct sptrace_seen *s, int64_t at_ns, uint64_t *ns)
{
	for (uint32_t i = 0; i < s->n; i++) {
		const struct sptrace_seen_sp *sp = &s->sp[i];

		if (sp->begin && sp->end > sp->begin && sp->begin <= at_ns && at_ns <= sp->end) {
			*ns = (uint64_t)(sp->end - sp->begin);
			return 0;
		}
	}
	return -ENOENT;
}

int sptrace_window_end(const struct sptrace *t, const struct sptrace_window *w, uint64_t *ns)
{
	for (int waited = 0;; waited++) {
		uint64_t c, c2;
		int64_t b, e;

		if (!w->ok || read_counter(t, &c) || c < w->counter)
			return -1;
		if (c == w->counter)
			return 0;
		if (!(c & 1)) {
			if (c - w->counter > 2) /* more than one: their times are not kept */
				return (c - w->counter) / 2 > 1000000 ? -1 : (int)((c - w->counter) / 2);
			if (t->read(t->ctx, t->begin, &b, sizeof(b)) ||
			    t->read(t->ctx, t->end, &e, sizeof(e)) || read_counter(t, &c2))
				return -1;
			/* the end time is written last: until then it is the
			 * previous safepoint's, before this one's begin */
			if (c2 == c && e > b) {
				*ns = (uint64_t)(e - b);
				return 1;
			}
		}
		if (waited == SPTRACE_SETTLE_MS)
			return -1;
		usleep(1000);
	}
}
