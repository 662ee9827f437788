/*
 * sharevar.h - the standard errors of the class shares that memtrace alloc
 * estimates from sampled TLABs (probe/allocrows.c): a ratio estimator per
 * group of draws (a thread whose bytes are known from its own counter, or
 * all threads as one), linearised, with the draw - a kept TLAB or an object
 * outside one, never a single object - as the sampling unit.
 */
#ifndef MEMTRACE_SHAREVAR_H
#define MEMTRACE_SHAREVAR_H

#include <stddef.h>
#include <stdint.h>

/*
 * One class in one group: sums over the group's draws i, where draw i gives
 * the class y_i (its bytes in the draw's parsed part, times the draw's
 * weight over the part's size) and x_i is what the draw's y add up to.
 */
struct sharevar_cell {
	uint32_t group;   /* e.g. the thread; cells of one group are one ratio */
	uint32_t cls;     /* the class's index, below the caller's class count */
	double y;         /* sum of y_i */
	double sq;        /* sum of y_i^2, in y's unit squared */
	double cross;     /* sum of y_i x_i, likewise */
	double bytes;     /* the bytes the estimate gives the class in the group */
};

/*
 * sharevar_stderr - each class's standard error of its share of all the
 * cells' bytes into @se[0..ncls-1]. A group g of total T_g (its cells'
 * bytes) gives class c T_g Y_gc / Y_g; with the T_g taken as known (each
 * thread's counter) and groups independent,
 *   var(share_c) = sum_g (T_g / T)^2 V_gc / Y_g^2,
 *   V_gc = sum_i (y_igc - r_gc x_ig)^2 = sq - 2 r cross + r^2 sum_i x_ig^2,
 * r_gc = Y_gc / Y_g and sum_i x_ig^2 = sum over the group's classes of
 * cross. With one group it is the plain ratio estimator's linearised
 * variance. A class's cells in one group count as one. Holds the draws' own spread (a TLAB's window, a loop's phase)
 * and the thinning's (the weights 1 / keep); overstates the latter by
 * 1 / (1 - keep) (Poisson sampling's exact term has that factor). @cells is
 * not changed. 0, or -ENOMEM; -EINVAL for a cell's class >= @ncls.
 */
int sharevar_stderr(const struct sharevar_cell *cells, size_t n, size_t ncls, double *se);

#endif
