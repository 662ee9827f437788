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
	elfsym_free(e);
	if (err)
		return err;
	t->begin = addr[0] + bias;
	t->end = addr[1] + bias;
	t->counter = addr[2] + bias;
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

int sptrace_last(const struct sptrace *t, int64_t *begin, int64_t *end, uint64_t *counter)
{
	uint64_t c, c2;

	if (!t || !t->ok)
		return -ENOENT;
	if (read_counter(t, &c) || t->read(t->ctx, t->begin, begin, sizeof(*begin)) ||
	    t->read(t->ctx, t->end, end, sizeof(*end)) || read_counter(t, &c2))
		return -EIO;
	if ((c & 1) || c2 != c || *end <= *begin)
		return -EAGAIN;
	*counter = c;
	return 0;
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
