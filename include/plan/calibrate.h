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

/** Why calib_choose kept a candidate key in the fit or left it out. */
enum calib_choice_why {
	CALIB_KEY_FITTED,    /**< the runs determine it: fit it */
	CALIB_KEY_UNSEEN,    /**< it moves no run's time by CALIB_SEEN_MIN of a relative change */
	CALIB_KEY_COLLINEAR, /**< the runs move it as they move a key already chosen (@with) */
	CALIB_KEY_TOO_MANY,  /**< determined, but the runs leave no residual for another key */
};

/**
 * A key is seen by the runs when some run's time changes by at least
 * this fraction of a relative change of the key: d ln t / d ln x >= 2 %.
 * For an efficiency that is the share of the iteration its time takes
 * (t = rest + work / efficiency gives d ln t / d ln eff = -work / eff / t),
 * so "network time under 2 % of the iteration" leaves the network unseen.
 */
#define CALIB_SEEN_MIN 0.02
/**
 * A key is collinear with those chosen before it when the part of its
 * Jacobian column they do not explain is under this fraction of the
 * column's norm (an angle under 5.7 degrees): the reciprocal condition
 * number of the pair is then about this small, and noise of a percent in
 * the runs moves the pair by ten times as much along their common
 * direction (Golub and Van Loan, Matrix Computations, 4th ed., 5.4.2 and
 * 5.5.7, subset selection by QR with column pivoting).
 */
#define CALIB_COLLINEAR 0.1

/** calib_choose's verdict on each candidate key of a problem. */
struct calib_choice {
	int nchosen;
	int chosen[CALIB_MAX_PARAMS];              /**< candidates fitted, in the order chosen */
	enum calib_choice_why why[CALIB_MAX_PARAMS];
	int with[CALIB_MAX_PARAMS];                /**< COLLINEAR: the chosen key it follows */
	double sensitivity[CALIB_MAX_PARAMS];      /**< max over runs of |d ln t / d ln x| */
	double independent[CALIB_MAX_PARAMS];      /**< the share of the column not explained by keys chosen before */
};

/**
 * Which of the candidate keys of @p (its nparams keys at their start
 * values) the runs determine. The Jacobian of the log predicted times
 * with respect to the log keys is taken by finite differences at the
 * start; columns are chosen by Gram-Schmidt with column pivoting (the
 * largest remaining column first: Golub and Van Loan 5.4.2): a column
 * under CALIB_SEEN_MIN is UNSEEN, one whose remainder is under
 * CALIB_COLLINEAR of its norm, or moves no run by CALIB_SEEN_MIN, is
 * COLLINEAR with the chosen key nearest it,
 * and at most @max_keys are chosen (the rest TOO_MANY).
 */
bool calib_choose(const struct calib_problem *p, int max_keys, struct calib_choice *out, struct plan_error *err);

/** The default number of folds for @nruns runs: leave-one-out up to 20 runs, else 10. */
int calib_default_folds(int nruns);
