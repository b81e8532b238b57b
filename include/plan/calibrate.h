/*
 * Calibration: the bounded parameters of a cost model fitted to measured
 * iteration times by nonlinear least squares on the relative errors
 * (GSL's gsl_multifit_nlinear, trust region), with standard errors from
 * the Jacobian and k-fold cross-validation. The core knows nothing of
 * profiles: the caller maps the parameter vector onto its structs and
 * predicts a run through @predict.
 */
#pragma once

#include <stdbool.h>

#include "plan/error.h"

/** At most this many parameters are fitted at once. */
#define CALIB_MAX_PARAMS 16

/** Prediction of run @run with the parameters @x; false with @err set when it fails. */
typedef bool calib_predict_fn(void *ctx, const double *x, int run, double *predicted_s,
			      struct plan_error *err);

/** What to fit: @nparams values within (lo, hi), to @nruns measured times. */
struct calib_problem {
	int nruns;
	int nparams;
	const char *const *names;  /**< the parameters' names, for messages */
	const double *start;       /**< where the fit starts: the profiles' values */
	const double *lo, *hi;     /**< bounds (lo < hi); the fit stays strictly inside */
	const double *measured_s;  /**< @nruns measured iteration times, > 0 */
	calib_predict_fn *predict;
	void *ctx;
};

/** The outcome of one fit. */
struct calib_fit {
	double x[CALIB_MAX_PARAMS];  /**< fitted values */
	double se[CALIB_MAX_PARAMS]; /**< standard errors; 0 when !has_se */
	bool has_se;                 /**< more runs than parameters: residual variance known */
	double mape_before;          /**< mean |relative error| over the runs fitted, at start */
	double mape_after;           /**< the same at the fitted values */
	double rcond;                /**< reciprocal condition number of the Jacobian at the end */
	int iterations;
	bool converged;              /**< false: the iteration limit was reached */
	const char *stop;            /**< why the iteration stopped (static text) */
};

/**
 * The key of @out that the fit drove to a bound of its range, or -1
 * (@upper: which bound): one taken a thousand times closer to that end
 * of its range than it started, where the logistic map of the fit has
 * no derivative left. Relative to the start, so a realistic small value
 * in a wide range is not one at its bound.
 */
int calib_key_at_bound(const struct calib_problem *p, const struct calib_fit *out, bool *upper);

/**
 * Fit the runs @sel[0..nsel-1] (all runs when @sel is NULL and @nsel is
 * nruns). Errors (PLAN_ERR_PLAN): fewer runs than parameters, a
 * parameter no run's prediction depends on, two parameters the runs
 * cannot tell apart, a prediction that fails or is not finite.
 */
bool calib_fit(const struct calib_problem *p, const int *sel, int nsel, struct calib_fit *out,
	       struct plan_error *err);

/**
 * Relative errors (predicted - measured) / measured of every run at @x,
 * into @errors (nruns values).
 */
bool calib_errors(const struct calib_problem *p, const double *x, double *errors, struct plan_error *err);

/**
 * K-fold cross-validation: run i is held out in fold i mod @folds; each
 * fold is fitted on the other runs from the start values and predicts
 * its own. @errors (nruns values, may be NULL) gets each run's held-out
 * relative error, @cv_mape their mean absolute value. An error names the
 * fold that cannot be fitted.
 */
bool calib_cross_validate(const struct calib_problem *p, int folds, double *errors, double *cv_mape,
			  struct plan_error *err);

/** The default number of folds for @nruns runs: leave-one-out up to 20 runs, else 10. */
int calib_default_folds(int nruns);
