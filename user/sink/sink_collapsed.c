// SPDX-License-Identifier: GPL-2.0
/* sink_collapsed.c - a profile as collapsed stacks (flamegraph.pl input). */
#include <errno.h>
#include <stdlib.h>

#include "sink/sinks.h"
#include "lib/util.h"

/* write_frame - @s with ';' and control characters replaced. */
static void write_frame(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == ';')
			c = ':';
		else if (c < 0x20 || c == 0x7f)
			c = '?';
		putc(c, f);
	}
}

int sink_collapsed_write(const struct profile *p, FILE *f)
{
	struct profile *byl = profile_new(); /* the stacks by label: lines merged */
	const char **names = NULL;
	size_t n, *order = NULL;
	int err = -ENOMEM;

	if (!byl)
		return -ENOMEM;
	names = malloc(MT_PROFILE_MAX_DEPTH * sizeof(*names));
	if (!names)
		goto out;
	for (size_t i = 0; i < profile_nstacks(p); i++) {
		const struct profile_stack *s = profile_stack_at(p, i);

		for (int k = 0; k < s->n; k++)
			names[k] = profile_label(p, profile_label_id(p, s->frames[k]));
		err = profile_add(byl, names, s->n, s->bytes, s->count);
		if (err)
			goto out;
	}
	err = -ENOMEM;
	n = profile_nstacks(byl);
	order = profile_order_by_bytes(byl);
	if (!order)
		goto out;
	for (size_t i = 0; i < n; i++) {
		const struct profile_stack *s = profile_stack_at(byl, order[i]);

		/* a stack whose samples weigh nothing (a thread's first sample
		 * stands for no bytes: memtrace does not know what it used
		 * before) is no part of the graph: no "stack 0" line */
		if (!s->bytes)
			continue;
		for (int k = 0; k < s->n; k++) {
			if (k)
				putc(';', f);
			write_frame(f, profile_name(byl, s->frames[k]));
		}
		fprintf(f, " %llu\n", (unsigned long long)s->bytes);
	}
	err = fflush(f) || ferror(f) ? -EIO : 0;
out:
	free(order);
	free(names);
	profile_free(byl);
	return err;
}
