/* Weighted linear least squares with standard errors, shared by the fits of measured logs. */
#pragma once

#include <stdbool.h>

/**
 * Minimise sum_i w[i] (y[i] - sum_j X[i*p + j] theta[j])^2 over @n rows
 * and @p <= 8 columns (GSL's gsl_multifit_wlinear). The weights need
 * only be relative: @cov (p x p, row-major) is scaled by the residual
 * variance chisq / (n - p), so its diagonal gives the squared standard
 * errors. Needs n > p; false when GSL fails, when the columns are
 * dependent (a singular value below FIT_WLINEAR_RCOND of the largest,
 * after GSL's column scaling: the points cannot tell the parameters
 * apart) or memory runs out.
 */
#define FIT_WLINEAR_RCOND 1e-9

bool fit_wlinear(const double *X, const double *y, const double *w, int n, int p,
		 double *theta, double *cov);
