/*
 * Rank statistics for comparing predictions with measurements: a model
 * that ranks the plans of a sweep in the measured order is what optimize
 * needs, whatever its absolute error.
 */
#pragma once

#include <stdbool.h>

/**
 * The ranks of @v[0..n) into @ranks, 1 for the smallest, ties sharing the
 * mean of the ranks they span (the usual convention of Spearman's rho).
 * @work holds 2 @n ints.
 */
void stats_ranks(const double *v, int n, int *work, double *ranks);

/**
 * Spearman's rank correlation of @x and @y (the Pearson correlation of
 * their ranks) into @rho. False, with @rho 0, when it is undefined: fewer
 * than 3 points, or one of them without any spread. @work holds 2 @n
 * ints, @rx and @ry @n doubles each.
 */
bool stats_spearman(const double *x, const double *y, int n, int *work, double *rx, double *ry, double *rho);
