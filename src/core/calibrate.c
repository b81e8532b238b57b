/*
 * Bounded nonlinear least squares on relative errors.
 *
 * Method: GSL Reference Manual, "Nonlinear Least-Squares Fitting"
 * (gsl_multifit_nlinear): the trust-region driver with the
 * Levenberg-Marquardt subproblem and More's scaling (the defaults of
 * gsl_multifit_nlinear_default_parameters), the Jacobian by central
 * finite differences (GSL_MULTIFIT_NLINEAR_CTRDIFF), and the covariance
 * of the parameters (J^T J)^-1 from gsl_multifit_nlinear_covar, scaled by
 * the residual variance chi^2 / (n - p) as the manual's "Exponential
 * Fitting Example" does.
 *
 * Bounds: GSL's solver is unconstrained, so each parameter is the
 * logistic image x = lo + (hi - lo) / (1 + exp(-u)) of a free u, which
 * keeps x strictly inside (lo, hi) and is smooth; the standard error of x
 * is that of u times |dx/du| (the delta method).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_blas.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>

#include "plan/calibrate.h"

#define MAX_ITER 200
#define XTOL 1e-10
#define GTOL 1e-10
#define FTOL 1e-12
/* A start at a bound begins this fraction of the range inside it. */
#define EDGE 1e-6
/* A parameter that moves no residual by more than this is not seen. */
#define UNSEEN 1e-10
/* Below this reciprocal condition number the parameters are not determined. */
#define RCOND_MIN 1e-12

struct fit_ctx {
	const struct calib_problem *p;
	const int *sel;
	int nsel;
	struct plan_error *err;
	bool failed;
};

static double
logistic(double u)
{
	return 1.0 / (1.0 + exp(-u));
}

static void
to_x(const struct calib_problem *p, const double *u, double *x)
{
	for (int j = 0; j < p->nparams; j++)
		x[j] = p->lo[j] + (p->hi[j] - p->lo[j]) * logistic(u[j]);
}

/* Where @x lies in key @j's range, kept EDGE inside its ends. */
static double
range_fraction(const struct calib_problem *p, int j, double x)
{
	return fmin(fmax((x - p->lo[j]) / (p->hi[j] - p->lo[j]), EDGE), 1.0 - EDGE);
}

static double
to_u(const struct calib_problem *p, int j, double x)
{
	double s = range_fraction(p, j, x);

	return log(s / (1.0 - s));
}

/* The relative error of run @run at @x; false with err set. */
static bool
rel_error(const struct calib_problem *p, const double *x, int run, double *out, struct plan_error *err)
{
	double t;

	if (!p->predict(p->ctx, x, run, &t, err))
		return false;
	*out = t / p->measured_s[run] - 1.0;
	if (!isfinite(*out))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "the prediction of run %d is not a finite number", run + 1);
	return true;
}

/* gsl_multifit_nlinear_fdf.f: the relative errors of the selected runs. */
static int
residuals(const gsl_vector *u, void *data, gsl_vector *f)
{
	struct fit_ctx *c = data;
	double uu[CALIB_MAX_PARAMS], x[CALIB_MAX_PARAMS], r;

	for (int j = 0; j < c->p->nparams; j++)
		uu[j] = gsl_vector_get(u, (size_t)j);
	to_x(c->p, uu, x);
	for (int i = 0; i < c->nsel; i++) {
		if (!rel_error(c->p, x, c->sel[i], &r, c->err)) {
			c->failed = true;
			return GSL_EDOM;
		}
		gsl_vector_set(f, (size_t)i, r);
	}
	return GSL_SUCCESS;
}

static double
mape_at(const struct calib_problem *p, const int *sel, int nsel, const double *x, struct plan_error *err,
	bool *ok)
{
	double sum = 0.0, r;

	*ok = true;
	for (int i = 0; i < nsel; i++) {
		if (!rel_error(p, x, sel[i], &r, err)) {
			*ok = false;
			return 0.0;
		}
		sum += fabs(r);
	}
	return sum / nsel;
}

/* The change of every selected residual when parameter @j moves a little
 * inward from @x, into @d (nsel values). */
static bool
column(const struct calib_problem *p, const int *sel, int nsel, const double *x, int j, double *d,
       struct plan_error *err)
{
	double xp[CALIB_MAX_PARAMS], step, r0, r1;

	memcpy(xp, x, sizeof(double) * (size_t)p->nparams);
	step = fmax(1e-3 * fabs(x[j]), 1e-6 * (p->hi[j] - p->lo[j]));
	xp[j] = x[j] + step < p->hi[j] ? x[j] + step : x[j] - step;
	for (int i = 0; i < nsel; i++) {
		if (!rel_error(p, x, sel[i], &r0, err) || !rel_error(p, xp, sel[i], &r1, err))
			return false;
		d[i] = r1 - r0;
	}
	return true;
}

static double
cosine(const double *a, const double *b, int n)
{
	double ab = 0.0, aa = 0.0, bb = 0.0;

	for (int i = 0; i < n; i++) {
		ab += a[i] * b[i];
		aa += a[i] * a[i];
		bb += b[i] * b[i];
	}
	return ab / sqrt(aa * bb);
}

/* Every parameter must move some prediction, and no two the same way. */
static bool
check_seen(const struct calib_problem *p, const int *sel, int nsel, const double *x, struct plan_error *err)
{
	double *d = malloc(sizeof(double) * (size_t)nsel * (size_t)p->nparams);
	bool ok = true;

	if (!d)
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	for (int j = 0; ok && j < p->nparams; j++) {
		double most = 0.0;

		ok = column(p, sel, nsel, x, j, d + (size_t)j * (size_t)nsel, err);
		for (int i = 0; ok && i < nsel; i++)
			most = fmax(most, fabs(d[(size_t)j * (size_t)nsel + (size_t)i]));
		if (ok && most < UNSEEN)
			ok = plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
					    "'%s' changes no run's predicted time: these runs cannot determine it "
					    "(leave it out of --fit, or add runs that depend on it)", p->names[j]);
	}
	for (int j = 0; ok && j < p->nparams; j++)
		for (int k = j + 1; ok && k < p->nparams; k++)
			if (nsel > 1 && fabs(cosine(d + (size_t)j * (size_t)nsel, d + (size_t)k * (size_t)nsel, nsel)) >
			    1.0 - 1e-9)
				ok = plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
						    "'%s' and '%s' change every run's predicted time in the same "
						    "proportion: these runs cannot tell them apart (fit one of them)",
						    p->names[j], p->names[k]);
	free(d);
	return ok;
}

static const char *
stop_reason(int status, int info)
{
	if (status == GSL_EMAXITER)
		return "iteration limit";
	if (status == GSL_ENOPROG)
		return "no further progress";
	return info == 1 ? "small step" : info == 2 ? "small gradient" : "converged";
}

/* Standard errors of x from the covariance of u (delta method). */
static bool
standard_errors(const struct calib_problem *p, gsl_multifit_nlinear_workspace *w, int nsel,
		struct calib_fit *out)
{
	size_t np = (size_t)p->nparams;
	gsl_matrix *covar = gsl_matrix_alloc(np, np);
	gsl_vector *f = gsl_multifit_nlinear_residual(w), *u = gsl_multifit_nlinear_position(w);
	double chi2, s2;

	if (!covar)
		return false;
	gsl_blas_ddot(f, f, &chi2);
	out->has_se = nsel > p->nparams;
	s2 = out->has_se ? chi2 / (nsel - p->nparams) : 0.0;
	if (gsl_multifit_nlinear_covar(gsl_multifit_nlinear_jac(w), 0.0, covar) != GSL_SUCCESS)
		s2 = 0.0, out->has_se = false;
	for (size_t j = 0; j < np; j++) {
		double s = logistic(gsl_vector_get(u, j));
		double dxdu = (p->hi[j] - p->lo[j]) * s * (1.0 - s);
		double v = s2 * gsl_matrix_get(covar, j, j);

		out->se[j] = out->has_se && isfinite(v) && v >= 0 ? dxdu * sqrt(v) : 0.0;
	}
	gsl_matrix_free(covar);
	return true;
}

/* Run GSL's driver from the start values; fills x, iterations, stop, rcond. */
static bool
solve(const struct calib_problem *p, struct fit_ctx *c, struct calib_fit *out)
{
	gsl_multifit_nlinear_parameters params = gsl_multifit_nlinear_default_parameters();
	gsl_multifit_nlinear_fdf fdf = { .f = residuals, .n = (size_t)c->nsel, .p = (size_t)p->nparams,
					  .params = c };
	gsl_multifit_nlinear_workspace *w;
	gsl_vector *u0 = gsl_vector_alloc((size_t)p->nparams);
	double u[CALIB_MAX_PARAMS];
	int status, info = 0;
	bool ok = false;

	params.fdtype = GSL_MULTIFIT_NLINEAR_CTRDIFF;
	w = u0 ? gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &params, fdf.n, fdf.p) : NULL;
	if (!w) {
		gsl_vector_free(u0);
		return plan_error_set(c->err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	}
	for (int j = 0; j < p->nparams; j++)
		gsl_vector_set(u0, (size_t)j, to_u(p, j, p->start[j]));
	status = gsl_multifit_nlinear_init(u0, &fdf, w);
	if (status == GSL_SUCCESS)
		status = gsl_multifit_nlinear_driver(MAX_ITER, XTOL, GTOL, FTOL, NULL, NULL, &info, w);
	if (c->failed)
		goto done;
	if (status != GSL_SUCCESS && status != GSL_EMAXITER && status != GSL_ENOPROG) {
		plan_error_set(c->err, PLAN_ERR_PLAN, NULL, 0, 0, "the fit failed: %s", gsl_strerror(status));
		goto done;
	}
	for (int j = 0; j < p->nparams; j++)
		u[j] = gsl_vector_get(gsl_multifit_nlinear_position(w), (size_t)j);
	to_x(p, u, out->x);
	out->iterations = (int)gsl_multifit_nlinear_niter(w);
	out->converged = status != GSL_EMAXITER;
	out->stop = stop_reason(status, info);
	gsl_multifit_nlinear_rcond(&out->rcond, w);
	ok = standard_errors(p, w, c->nsel, out) ||
	     plan_error_set(c->err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
done:
	gsl_multifit_nlinear_free(w);
	gsl_vector_free(u0);
	return ok;
}

static bool
check_problem(const struct calib_problem *p, int nsel, struct plan_error *err)
{
	if (p->nparams < 1 || p->nparams > CALIB_MAX_PARAMS)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "fit 1 to %d keys, not %d",
				      CALIB_MAX_PARAMS, p->nparams);
	if (nsel < p->nparams)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "%d run%s cannot determine %d keys: give at least %d runs, or fit fewer keys",
				      nsel, nsel == 1 ? "" : "s", p->nparams, p->nparams);
	for (int j = 0; j < p->nparams; j++)
		if (!(p->lo[j] < p->hi[j]) || !isfinite(p->start[j]))
			return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "'%s' has no range to fit in",
					      p->names[j]);
	return true;
}

/* A key has run into a bound when the fit took it a thousand times
 * closer to that end of its range than it started (in the range's
 * fraction s, whose logistic map has the derivative s (1 - s), so the
 * key no longer moves a residual there). Relative to the start, so that
 * a realistic value in a wide range (a latency of 5e-5 s in 0-1 s, a
 * bandwidth in 1 kB/s-1e18 B/s) is not mistaken for one at its bound. */
#define AT_BOUND 1e-3

int
calib_key_at_bound(const struct calib_problem *p, const struct calib_fit *out, bool *upper)
{
	for (int j = 0; j < p->nparams; j++) {
		double s = (out->x[j] - p->lo[j]) / (p->hi[j] - p->lo[j]);
		double s0 = range_fraction(p, j, p->start[j]);

		if (s < AT_BOUND * s0 || 1.0 - s < AT_BOUND * (1.0 - s0)) {
			*upper = 1.0 - s < AT_BOUND * (1.0 - s0);
			return j;
		}
	}
	return -1;
}

/* Why the runs do not determine the keys: a key the fit drove to a bound
 * of its range (where it has no derivative), or collinear keys. */
static bool
undetermined(const struct calib_problem *p, const struct calib_fit *out, struct plan_error *err)
{
	bool upper = false;
	int j = calib_key_at_bound(p, out, &upper);
	char why[64] = "a singular Jacobian";

	if (j >= 0) {
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "these runs drive '%s' to its %s bound (%.6g), where they no longer "
				      "determine it: fit fewer keys or add runs that differ",
				      p->names[j], upper ? "upper" : "lower", upper ? p->hi[j] : p->lo[j]);
	}
	if (isfinite(out->rcond))
		snprintf(why, sizeof(why), "reciprocal condition number %.3g of the Jacobian", out->rcond);
	return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
			      "these runs do not determine the keys together (%s, at the fitted values): "
			      "fit fewer keys or add runs that differ", why);
}

/*
 * The fit of @sel; @determined: refuse values that the runs do not
 * determine together (a singular Jacobian), as a user's fit must. A
 * cross-validation fold only predicts its held-out runs from the values
 * it reaches, which a key pinned at its bound (no derivative there)
 * leaves well defined.
 */
static bool
fit_runs(const struct calib_problem *p, const int *sel, int nsel, bool determined, struct calib_fit *out,
	 struct plan_error *err)
{
	struct fit_ctx c = { p, sel, nsel, err, false };
	int *all = NULL;
	bool ok;

	memset(out, 0, sizeof(*out));
	if (!check_problem(p, nsel, err))
		return false;
	if (!sel) {
		if (!(all = malloc(sizeof(int) * (size_t)nsel)))
			return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
		for (int i = 0; i < nsel; i++)
			all[i] = i;
		c.sel = sel = all;
	}
	out->mape_before = mape_at(p, sel, nsel, p->start, err, &ok);
	ok = ok && check_seen(p, sel, nsel, p->start, err) && solve(p, &c, out);
	if (ok)
		out->mape_after = mape_at(p, sel, nsel, out->x, err, &ok);
	/* A key at its bound is not determined by the runs even where the
	 * Jacobian, taken a step inside the bound, still looks regular. */
	if (ok && determined && (!(out->rcond >= RCOND_MIN) || calib_key_at_bound(p, out, &(bool){ false }) >= 0))
		ok = undetermined(p, out, err);
	free(all);
	return ok;
}

bool
calib_fit(const struct calib_problem *p, const int *sel, int nsel, struct calib_fit *out,
	  struct plan_error *err)
{
	return fit_runs(p, sel, nsel, true, out, err);
}

bool
calib_errors(const struct calib_problem *p, const double *x, double *errors, struct plan_error *err)
{
	for (int i = 0; i < p->nruns; i++)
		if (!rel_error(p, x, i, &errors[i], err))
			return false;
	return true;
}

int
calib_default_folds(int nruns)
{
	return nruns <= 20 ? nruns : 10;
}

/* Fit fold @k (the runs i with i % folds != k) and predict its own runs. */
static bool
fold(const struct calib_problem *p, int folds, int k, int *train, double *errors, double *sum,
     struct plan_error *err)
{
	struct calib_fit fit;
	int n = 0;
	double r;

	for (int i = 0; i < p->nruns; i++)
		if (i % folds != k)
			train[n++] = i;
	if (!fit_runs(p, train, n, false, &fit, err))
		return false;
	for (int i = k; i < p->nruns; i += folds) {
		if (!rel_error(p, fit.x, i, &r, err))
			return false;
		if (errors)
			errors[i] = r;
		*sum += fabs(r);
	}
	return true;
}

bool
calib_cross_validate(const struct calib_problem *p, int folds, double *errors, double *cv_mape,
		     struct plan_error *err)
{
	int *train;
	double sum = 0.0;
	bool ok = true;

	*cv_mape = 0.0;
	if (folds < 2 || folds > p->nruns)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "cross-validation needs 2 to %d folds (one per run at most), not %d",
				      p->nruns, folds);
	if (!(train = malloc(sizeof(int) * (size_t)p->nruns)))
		return plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	for (int k = 0; ok && k < folds; k++) {
		ok = fold(p, folds, k, train, errors, &sum, err);
		if (!ok) {
			char why[sizeof(err->message)];

			memcpy(why, err->message, sizeof(why));
			plan_error_set(err, err->kind, NULL, 0, 0, "fold %d of %d: %s", k + 1, folds, why);
		}
	}
	free(train);
	*cv_mape = ok ? sum / p->nruns : 0.0;
	return ok;
}

/*
 * Column j of the Jacobian of ln t with respect to ln x at the start
 * (forward difference, a relative step of 1e-3 inward), into @col: for a
 * run whose time is t = m (1 + r), d ln t = d r / (1 + r). A key at 0
 * steps by 1e-3 of its range and is measured per that step instead.
 */
static bool
log_column(const struct calib_problem *p, const double *r0, int j, double *col, struct plan_error *err)
{
	double xp[CALIB_MAX_PARAMS], x = p->start[j], step, r1;

	memcpy(xp, p->start, sizeof(double) * (size_t)p->nparams);
	step = x != 0.0 ? 1e-3 * fabs(x) : 1e-3 * (p->hi[j] - p->lo[j]);
	xp[j] = x + step < p->hi[j] ? x + step : x - step;
	for (int i = 0; i < p->nruns; i++) {
		if (!rel_error(p, xp, i, &r1, err))
			return false;
		col[i] = (r1 - r0[i]) / (1.0 + r0[i]) / ((xp[j] - x) / (x != 0.0 ? fabs(x) : 1.0));
	}
	return true;
}

static double
norm2(const double *a, int n)
{
	double s = 0.0;

	for (int i = 0; i < n; i++)
		s += a[i] * a[i];
	return sqrt(s);
}

/* Each key's largest sensitivity; a key that moves no run by
 * CALIB_SEEN_MIN is unseen, and done. */
static void
choose_seen(const struct calib_problem *p, const double *S, struct calib_choice *out, bool *done)
{
	int n = p->nruns;

	for (int j = 0; j < p->nparams; j++) {
		double most = 0.0;

		for (int i = 0; i < n; i++)
			most = fmax(most, fabs(S[j * n + i]));
		out->sensitivity[j] = most;
		out->independent[j] = 1.0;
		out->with[j] = -1;
		if (most < CALIB_SEEN_MIN)
			out->why[j] = CALIB_KEY_UNSEEN, done[j] = true;
	}
}

/* The chosen key whose sensitivities are the most nearly parallel to @j's. */
static int
choose_nearest(const double *S, int n, int j, const struct calib_choice *out)
{
	double near = -1.0;
	int with = -1;

	for (int k = 0; k < out->nchosen; k++) {
		double c = fabs(cosine(S + j * n, S + out->chosen[k] * n, n));

		if (c > near)
			near = c, with = out->chosen[k];
	}
	return with;
}

/* Gram-Schmidt: take the chosen column @best's direction @q out of the
 * residuals of the keys not yet done. */
static void
choose_deflate(double *R, int n, int m, int best, double best_norm, const bool *done, double *q)
{
	for (int i = 0; i < n; i++)
		q[i] = R[best * n + i] / best_norm;
	for (int j = 0; j < m; j++) {
		double d = 0.0;

		if (done[j])
			continue;
		for (int i = 0; i < n; i++)
			d += q[i] * R[j * n + i];
		for (int i = 0; i < n; i++)
			R[j * n + i] -= d * q[i];
	}
}

/* Pivoted Gram-Schmidt over the columns @S (nparams x nruns) into @out;
 * @R: their remainders (a copy of S to start), @q: nruns of scratch. */
static void
choose_columns(const struct calib_problem *p, const double *S, double *R, double *q, int max_keys,
	       struct calib_choice *out)
{
	int n = p->nruns, m = p->nparams;
	bool done[CALIB_MAX_PARAMS] = { false };

	choose_seen(p, S, out, done);
	for (;;) {
		int best = -1;
		double best_norm = -1.0, own;

		for (int j = 0; j < m; j++)
			if (!done[j] && norm2(R + j * n, n) > best_norm)
				best = j, best_norm = norm2(R + j * n, n);
		if (best < 0)
			break;
		done[best] = true;
		out->independent[best] = fmax(best_norm, 0.0) / norm2(S + best * n, n);
		/* Collinear also when what is its own moves no run by
		 * CALIB_SEEN_MIN: the runs see it only through keys chosen. */
		own = 0.0;
		for (int i = 0; i < n; i++)
			own = fmax(own, fabs(R[best * n + i]));
		if (out->independent[best] < CALIB_COLLINEAR || own < CALIB_SEEN_MIN) {
			out->why[best] = CALIB_KEY_COLLINEAR;
			out->with[best] = choose_nearest(S, n, best, out);
			continue;
		}
		if (out->nchosen == max_keys) {
			out->why[best] = CALIB_KEY_TOO_MANY;
			continue;
		}
		out->why[best] = CALIB_KEY_FITTED;
		out->chosen[out->nchosen++] = best;
		choose_deflate(R, n, m, best, best_norm, done, q);
	}
}

bool
calib_choose(const struct calib_problem *p, int max_keys, struct calib_choice *out, struct plan_error *err)
{
	size_t cells = (size_t)p->nruns * (size_t)p->nparams;
	double *S, *R, *r0, *q;
	bool ok = true;

	memset(out, 0, sizeof(*out));
	if (p->nparams < 1 || p->nparams > CALIB_MAX_PARAMS || p->nruns < 1)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0, "choose among 1 to %d keys on at least one run",
				      CALIB_MAX_PARAMS);
	S = malloc(sizeof(double) * cells);
	R = malloc(sizeof(double) * cells);
	r0 = malloc(sizeof(double) * (size_t)p->nruns);
	q = malloc(sizeof(double) * (size_t)p->nruns);
	if (!S || !R || !r0 || !q)
		ok = plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	for (int i = 0; ok && i < p->nruns; i++)
		ok = rel_error(p, p->start, i, &r0[i], err);
	for (int j = 0; ok && j < p->nparams; j++)
		ok = log_column(p, r0, j, S + (size_t)j * (size_t)p->nruns, err);
	if (ok) {
		memcpy(R, S, sizeof(double) * cells);
		choose_columns(p, S, R, q, max_keys < 1 ? 1 : max_keys, out);
	}
	free(S);
	free(R);
	free(r0);
	free(q);
	return ok;
}
