#include <stddef.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit.h>

#include "plan/fit_lsq.h"

bool
fit_wlinear(const double *X, const double *y, const double *w, int n, int p, double *theta, double *cov)
{
	gsl_matrix *A = NULL, *C = NULL;
	gsl_vector *b = NULL, *wv = NULL, *c = NULL;
	gsl_multifit_linear_workspace *work = NULL;
	double chisq;
	size_t rank = 0;
	int status = GSL_ENOMEM;

	if (n <= p || p < 1 || p > 8)
		return false;
	A = gsl_matrix_alloc((size_t)n, (size_t)p);
	C = gsl_matrix_alloc((size_t)p, (size_t)p);
	b = gsl_vector_alloc((size_t)n);
	wv = gsl_vector_alloc((size_t)n);
	c = gsl_vector_alloc((size_t)p);
	work = gsl_multifit_linear_alloc((size_t)n, (size_t)p);
	if (A && C && b && wv && c && work) {
		for (int i = 0; i < n; i++) {
			gsl_vector_set(b, (size_t)i, y[i]);
			gsl_vector_set(wv, (size_t)i, w[i]);
			for (int j = 0; j < p; j++)
				gsl_matrix_set(A, (size_t)i, (size_t)j, X[i * p + j]);
		}
		/* The truncated SVD reports the rank: gsl_multifit_wlinear
		 * returns success with a minimum-norm answer when the columns
		 * are dependent (every point the same size), a fit with tiny
		 * "errors" that means nothing. Dependent columns are a failure. */
		status = gsl_multifit_wlinear_tsvd(A, wv, b, FIT_WLINEAR_RCOND, c, C, &chisq, &rank, work);
		if (status == GSL_SUCCESS && rank < (size_t)p)
			status = GSL_ESING;
	}
	/* GSL's cov reads the weights as 1/sigma^2; ours are relative. */
	for (int j = 0; j < p && status == GSL_SUCCESS; j++) {
		theta[j] = gsl_vector_get(c, (size_t)j);
		for (int l = 0; l < p; l++)
			cov[j * p + l] = gsl_matrix_get(C, (size_t)j, (size_t)l) * chisq / (n - p);
	}
	gsl_multifit_linear_free(work);
	gsl_vector_free(c);
	gsl_vector_free(wv);
	gsl_vector_free(b);
	gsl_matrix_free(C);
	gsl_matrix_free(A);
	return status == GSL_SUCCESS;
}
