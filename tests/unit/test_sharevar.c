// SPDX-License-Identifier: GPL-2.0
/*
 * test_sharevar.c - sharevar_stderr(): the class shares' standard errors
 * from per-group sums, against the same variance computed draw by draw
 * (sum_i (y_ic - r x_i)^2 / Y^2), and for threads each of a known total,
 * weighed by their part of the bytes.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "analysis/sharevar.h"

/* Draws [n][2]: each draw's y for classes 0 and 1; into cells of @group. */
static void sums_of(const double (*d)[2], size_t n, uint32_t group, double scale,
		    struct sharevar_cell *cells)
{
	memset(cells, 0, 2 * sizeof(*cells));
	for (size_t c = 0; c < 2; c++) {
		cells[c].group = group;
		cells[c].cls = (uint32_t)c;
		for (size_t i = 0; i < n; i++) {
			double x = d[i][0] + d[i][1];

			cells[c].y += d[i][c];
			cells[c].sq += d[i][c] * d[i][c];
			cells[c].cross += d[i][c] * x;
		}
		cells[c].bytes = cells[c].y * scale;
	}
}

/* One group: the ratio estimator's linearised variance. Draws (y0, y1):
 * (3,1) (1,1) (2,2) (6,0): Y0 = 12, Y1 = 4, Y = 16, r0 = 3/4; residuals
 * y0 - r0 x = 0, -0.5, -1, 1.5: sum of squares 3.5, se0 = sqrt(3.5)/16;
 * class 1's residuals are their negatives, the same se. */
static void test_one_group(void **state)
{
	const double d[4][2] = { { 3, 1 }, { 1, 1 }, { 2, 2 }, { 6, 0 } };
	struct sharevar_cell cells[2];
	double se[2];

	(void)state;
	sums_of(d, 4, 0, 1000, cells);
	assert_int_equal(sharevar_stderr(cells, 2, 2, se), 0);
	assert_true(fabs(se[0] - sqrt(3.5) / 16) < 1e-12);
	assert_true(fabs(se[1] - sqrt(3.5) / 16) < 1e-12);
}

/* Two threads, each scaled to its own total: thread 1 the draws above with
 * 3000 bytes, thread 2 draws (1,3) (3,1) with 1000 bytes (Y = 8, r0 = 1/2,
 * residuals -1, 1: V = 2). var0 = (3/4)^2 3.5/256 + (1/4)^2 2/64; the
 * cells given in any order, a class split over two cells of a thread
 * counting as one. */
static void test_threads(void **state)
{
	const double d1[4][2] = { { 3, 1 }, { 1, 1 }, { 2, 2 }, { 6, 0 } };
	const double d2[2][2] = { { 1, 3 }, { 3, 1 } };
	struct sharevar_cell cells[5];
	double se[2], want = sqrt(0.5625 * 3.5 / 256 + 0.0625 * 2.0 / 64);

	(void)state;
	sums_of(d2, 2, 2, 1000.0 / 8, cells);
	sums_of(d1, 4, 1, 3000.0 / 16, cells + 2);
	/* thread 1's class 0 in two cells (two Klass* of one name) */
	cells[4] = cells[2];
	cells[2].y /= 2, cells[2].sq /= 2, cells[2].cross /= 2, cells[2].bytes /= 2;
	cells[4].y /= 2, cells[4].sq /= 2, cells[4].cross /= 2, cells[4].bytes /= 2;
	assert_int_equal(sharevar_stderr(cells, 5, 2, se), 0);
	assert_true(fabs(se[0] - want) < 1e-12);
	assert_true(fabs(se[1] - want) < 1e-12);
}

/* Draws that all split alike: no spread; no cells: 0; a class out of range. */
static void test_edges(void **state)
{
	const double d[3][2] = { { 3, 1 }, { 6, 2 }, { 30, 10 } };
	struct sharevar_cell cells[2];
	double se[2] = { 7, 7 };

	(void)state;
	sums_of(d, 3, 0, 1, cells);
	assert_int_equal(sharevar_stderr(cells, 2, 2, se), 0);
	assert_true(se[0] < 1e-9 && se[1] < 1e-9);
	se[0] = se[1] = 7;
	assert_int_equal(sharevar_stderr(NULL, 0, 2, se), 0);
	assert_true(se[0] == 0 && se[1] == 0);
	cells[1].cls = 2;
	assert_int_equal(sharevar_stderr(cells, 2, 2, se), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_group),
		cmocka_unit_test(test_threads),
		cmocka_unit_test(test_edges),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
