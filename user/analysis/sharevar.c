// SPDX-License-Identifier: GPL-2.0
/* sharevar.c - the class shares' standard errors; see sharevar.h. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/sharevar.h"

static int by_group(const void *a, const void *b)
{
	const struct sharevar_cell *x = *(const struct sharevar_cell *const *)a;
	const struct sharevar_cell *y = *(const struct sharevar_cell *const *)b;

	if (x->group != y->group)
		return x->group < y->group ? -1 : 1;
	return x->cls < y->cls ? -1 : x->cls > y->cls;
}

int sharevar_stderr(const struct sharevar_cell *cells, size_t n, size_t ncls, double *se)
{
	const struct sharevar_cell **p;
	double total = 0;

	for (size_t c = 0; c < ncls; c++)
		se[c] = 0;
	for (size_t i = 0; i < n; i++) {
		if (cells[i].cls >= ncls)
			return -EINVAL;
		total += cells[i].bytes;
	}
	if (!n || total <= 0)
		return 0;
	p = malloc(n * sizeof(*p));
	if (!p)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		p[i] = &cells[i];
	qsort(p, n, sizeof(*p), by_group);
	/* each group [i, j): its Y, sum of x^2 and total, then its classes' terms */
	for (size_t i = 0, j; i < n; i = j) {
		double y = 0, x2 = 0, t = 0;

		for (j = i; j < n && p[j]->group == p[i]->group; j++) {
			y += p[j]->y;
			x2 += p[j]->cross;
			t += p[j]->bytes;
		}
		if (y <= 0)
			continue;
		/* a class's cells in the group (two Klass* of one name) as one */
		for (size_t k = i, l; k < j; k = l) {
			double yc = 0, sq = 0, cross = 0, r, v;

			for (l = k; l < j && p[l]->cls == p[k]->cls; l++) {
				yc += p[l]->y;
				sq += p[l]->sq;
				cross += p[l]->cross;
			}
			r = yc / y;
			v = sq - 2 * r * cross + r * r * x2;
			if (v > 0)
				se[p[k]->cls] += (t / total) * (t / total) * v / (y * y);
		}
	}
	for (size_t c = 0; c < ncls; c++)
		se[c] = sqrt(se[c]);
	free(p);
	return 0;
}
