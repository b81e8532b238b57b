/*
 * cluster_gemm_efficiency()'s parametric model is
 *   eff = eff_max * t_i / (t_i + overhead),  t_i = F / (peak * eff_max),
 * so compute_gemm_time()'s compute side t = F / (peak * eff * s) (s the
 * shape, wave and clock factor, compute_gemm_factor()) is
 *   t s = F / (peak * eff_max) + overhead,
 * linear in 1/eff_max and the overhead. An fp8 GEMM (fp8_gemm_time())
 * reads the curve at F * peak / peak8, which gives
 *   t s = (F / (peak8 * eff_max) + overhead) / fp8_gemm_ratio.
 * Points whose memory side (operands and result once through HBM at
 * memory_efficiency) is the larger are left out: nothing fitted here
 * changes their time.
 *
 * The wave model's whole numbers (cluster_gemm_wave_factor: the SM count
 * and the CTA tile) have no derivative; they are searched. For every
 * candidate the linear fit above is solved again over the same points
 * and its chi^2 (the sum of squared relative errors) kept. A candidate
 * replaces the base GPU's values only where it lowers chi^2 by more than
 * s^2 (4 + 2 ln K), s^2 = chi^2 / (m - p) the best fit's residual
 * variance and K the candidates: a 2-sigma drop (Delta chi^2 = 4 s^2 for
 * one parameter; Press et al., Numerical Recipes, 3rd ed., 15.6.5) plus
 * the 2 ln K by which the best of K chance values exceeds one (the
 * largest of K chi^2_1 variables grows as 2 ln K), so that a noisy log
 * of square GEMMs keeps the datasheet's SM count. The SM counts tried
 * run from an eighth of the base's (a MIG 1g slice: 16 of an H100's
 * 132 SMs, NVIDIA MIG User Guide) to twice it; the tiles are the CTA
 * shapes CUTLASS and cuBLAS use on Volta to Blackwell, 64 to 256 a side
 * (the model also tries each transposed and its square half); and no
 * waves at all (sm_count 0), for a library whose kernels hide them.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plan/cluster.h"
#include "plan/compute.h"
#include "plan/fit_gemm.h"
#include "plan/fit_lsq.h"

const char *const fit_gemm_dtype_names[] = { "bf16", "fp16", "fp8", NULL };

/* A one-GPU cluster around @g: compute.c's functions take a cluster. */
static void
as_cluster(const struct gpu *g, struct cluster *c)
{
	memset(c, 0, sizeof(*c));
	c->nodes = c->gpus_per_node = 1;
	c->gpu = *g;
}

static double
flops(const struct fit_gemm_point *p)
{
	return 2.0 * p->m * p->n * p->k;
}

static double
memory_time(const struct gpu *g, const struct fit_gemm_point *p)
{
	double out = 2.0 * p->m * p->n;
	double in = (p->dtype == FIT_GEMM_FP8 ? 1.0 : 2.0) * (p->m * p->k + p->k * p->n);

	return (in + out) / (g->memory_bw_Bps * g->memory_efficiency);
}

/* The compute side t * s of @p for (1/eff_max, overhead), before the fp8 ratio. */
static double
compute_side(const struct gpu *g, const struct fit_gemm_point *p, double inv_eff, double ovh)
{
	double peak = p->dtype == FIT_GEMM_FP8 ? g->peak_flops_fp8 : g->peak_flops;

	return flops(p) * inv_eff / peak + ovh;
}

static bool
check_points(const struct fit_gemm_point *pts, int n, const struct gpu *g, struct plan_error *err)
{
	for (int i = 0; i < n; i++) {
		const struct fit_gemm_point *p = &pts[i];

		if (!(p->m >= 1 && p->n >= 1 && p->k >= 1 && p->time_s > 0) || !isfinite(p->time_s) ||
		    p->dtype < 0 || p->dtype >= FIT_GEMM_DTYPE_COUNT)
			return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
					      "point %d is not a GEMM of positive sizes and time", i + 1);
		if (p->dtype == FIT_GEMM_FP8 && !(g->peak_flops_fp8 > 0))
			return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
					      "point %d is an fp8 GEMM, but GPU '%s' has no fp8 peak", i + 1,
					      g->name);
	}
	return true;
}

/* compute_gemm_factor(): shape, waves and the clock under the power limit. */
static double
shape(const struct cluster *c, const struct fit_gemm_point *p)
{
	return compute_gemm_factor(c, p->m, p->n, p->k, 1.0);
}

/*
 * Fit over the points @use marks: 16-bit ones give (1/eff_max, overhead)
 * in theta (overhead held at 0 with @np 1), fp8 ones 1/fp8_gemm_ratio
 * with the 16-bit values known (@np 1, X the compute side). Weights
 * 1/(t s)^2: relative errors.
 */
static bool
fit_marked(const struct cluster *c, const struct fit_gemm_point *pts, int n, const bool *use, bool fp8,
	   int np, const struct fit_gemm_result *known, double *theta, double *cov, int *used)
{
	double *X = malloc((size_t)n * 2 * sizeof(*X));
	double *y = malloc((size_t)n * sizeof(*y)), *w = malloc((size_t)n * sizeof(*w));
	int m = 0;
	bool ok = X && y && w;

	for (int i = 0; ok && i < n; i++) {
		double ts = pts[i].time_s * shape(c, &pts[i]);

		if (!use[i])
			continue;
		X[m * np] = fp8 ? compute_side(&c->gpu, &pts[i], 1.0 / known->efficiency_max, known->overhead_s) :
				  flops(&pts[i]) / c->gpu.peak_flops;
		if (np == 2)
			X[m * np + 1] = 1.0;
		y[m] = ts;
		w[m++] = 1.0 / (ts * ts);
	}
	*used = m;
	ok = ok && m > np && fit_wlinear(X, y, w, m, np, theta, cov);
	free(X);
	free(y);
	free(w);
	return ok;
}

/* Mark the points of the kind (@fp8 or not) whose compute side, at the values of @r, bounds them. */
static int
mark(const struct cluster *c, const struct fit_gemm_point *pts, int n, bool fp8,
     const struct fit_gemm_result *r, bool *use)
{
	int changed = 0;

	for (int i = 0; i < n; i++) {
		bool want = (pts[i].dtype == FIT_GEMM_FP8) == fp8;
		double t = compute_side(&c->gpu, &pts[i], 1.0 / r->efficiency_max, r->overhead_s) /
			   (shape(c, &pts[i]) * (fp8 ? r->fp8_ratio : 1.0));

		want = want && memory_time(&c->gpu, &pts[i]) < t;
		changed += want != use[i];
		use[i] = want;
	}
	return changed;
}

/* eff_max and overhead, refitted until the memory-bound points left out stop changing. */
static bool
fit16(const struct cluster *c, const struct fit_gemm_point *pts, int n, bool *use,
      struct fit_gemm_result *out, struct plan_error *err)
{
	double theta[2], cov[4];
	int used = 0, np;

	for (int i = 0; i < n; i++)
		use[i] = pts[i].dtype != FIT_GEMM_FP8;
	for (int pass = 0; pass < 8; pass++) {
		np = 2;
		if (fit_marked(c, pts, n, use, false, 2, NULL, theta, cov, &used) && theta[1] < 0)
			np = 1;
		if (used <= 2 || !fit_marked(c, pts, n, use, false, np, NULL, theta, cov, &used))
			return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
					      "%d 16-bit GEMMs bound by compute cannot give the GEMM efficiency "
					      "and overhead with their errors (time 3 or more different sizes)", used);
		if (!(theta[0] > 0))
			return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
					      "the GEMM times do not grow with the FLOPs: no efficiency fits them");
		out->efficiency_max = 1.0 / theta[0];
		out->efficiency_max_se = sqrt(fmax(cov[0], 0.0)) / (theta[0] * theta[0]);
		out->overhead_fitted = np == 2;
		out->overhead_s = np == 2 ? theta[1] : 0.0;
		out->overhead_se = np == 2 ? sqrt(fmax(cov[3], 0.0)) : 0.0;
		out->points = used;
		if (mark(c, pts, n, false, out, use) == 0)
			break;
	}
	if (out->efficiency_max > 1.0)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				      "the GEMMs run at %.3g of GPU '%s''s peak, above 1: is it the GPU measured?",
				      out->efficiency_max, c->gpu.name);
	return true;
}

/* fp8_gemm_ratio from the fp8 points, eff_max and overhead known. */
static bool
fit_fp8(const struct cluster *c, const struct fit_gemm_point *pts, int n, bool *use,
	struct fit_gemm_result *out, struct plan_error *err)
{
	double theta, cov;
	int used = 0;

	mark(c, pts, n, true, out, use);
	for (int pass = 0; pass < 8; pass++) {
		if (!fit_marked(c, pts, n, use, true, 1, out, &theta, &cov, &used) || !(theta > 0))
			return true; /* too few fp8 points: the base GPU's ratio stays */
		out->fp8_ratio = 1.0 / theta;
		out->fp8_ratio_se = sqrt(fmax(cov, 0.0)) / (theta * theta);
		out->fp8_points = used;
		if (mark(c, pts, n, true, out, use) == 0)
			break;
	}
	if (out->fp8_ratio > 1.0)
		return plan_error_set(err, PLAN_ERR_INPUT, NULL, 0, 0,
				      "fp8 GEMMs reach %.3g of the bf16 efficiency at GPU '%s''s fp8 peak, "
				      "above 1: is it the GPU measured?", out->fp8_ratio, c->gpu.name);
	return true;
}

static void
score(const struct fit_gemm_point *pts, int n, const struct gpu *base, const bool *use16,
      const bool *use8, struct fit_gemm_result *out)
{
	struct gpu g = *base;
	int m = 0;

	fit_gemm_apply(out, &g);
	out->mape = out->max_abs_error = 0.0;
	for (int i = 0; i < n; i++) {
		double e;

		if (!use16[i] && !use8[i])
			continue;
		e = fabs(fit_gemm_model_time(&g, &pts[i]) - pts[i].time_s) / pts[i].time_s;
		out->mape += e;
		out->max_abs_error = fmax(out->max_abs_error, e);
		m++;
	}
	out->mape /= m > 0 ? m : 1;
	out->memory_bound = n - m;
}

/*
 * chi^2 over the points @use marks of the fit at @c's wave values, @np
 * parameters: the linear fit over those of them whose compute side
 * bounds them at these values (refitted once after marking them), each
 * point's error that of the roofline time, max(compute, memory). Every
 * candidate is scored on the same points, whichever side bounds them.
 * @own is scratch for @n flags. False when the fit fails.
 */
static bool
chi2_marked(const struct cluster *c, const struct fit_gemm_point *pts, int n, const bool *use, int np,
	    bool *own, double *chi2)
{
	double theta[2], cov[4];
	int used;

	if (!fit_marked(c, pts, n, use, false, np, NULL, theta, cov, &used))
		return false;
	for (int pass = 0; pass < 2; pass++) {
		int changed = 0;

		for (int i = 0; i < n; i++) {
			bool want = use[i] && memory_time(&c->gpu, &pts[i]) <
						     compute_side(&c->gpu, &pts[i], theta[0], np == 2 ? theta[1] : 0.0) /
							     shape(c, &pts[i]);

			changed += want != (pass == 0 ? use[i] : own[i]);
			own[i] = want;
		}
		if (changed == 0)
			break;
		if (!fit_marked(c, pts, n, own, false, np, NULL, theta, cov, &used))
			return false;
	}
	*chi2 = 0.0;
	for (int i = 0; i < n; i++) {
		double t, r;

		if (!use[i])
			continue;
		t = fmax(compute_side(&c->gpu, &pts[i], theta[0], np == 2 ? theta[1] : 0.0) / shape(c, &pts[i]),
			 memory_time(&c->gpu, &pts[i]));
		r = t / pts[i].time_s - 1.0;
		*chi2 += r * r;
	}
	return true;
}

static const int tile_shapes[FIT_GEMM_TILES][2] = {
	{ 64, 64 }, { 64, 128 }, { 64, 256 }, { 128, 128 }, { 128, 256 }, { 256, 256 },
};

/* The tile of @c in the candidates' order (m <= n; the model treats a tile and its transpose alike). */
static bool
same_tile(const struct gpu *g, const int t[2])
{
	int lo = g->gemm_tile_m < g->gemm_tile_n ? g->gemm_tile_m : g->gemm_tile_n;
	int hi = g->gemm_tile_m < g->gemm_tile_n ? g->gemm_tile_n : g->gemm_tile_m;

	return lo == t[0] && hi == t[1];
}

/* chi^2 of every candidate into @chi: each tile of tile_shapes at each SM
 * count in [@lo, @hi], then no wave loss at all (sm_count 0), as where
 * the library hides its waves (stream-K kernels split the last wave's
 * work over every SM: Osama et al., PPoPP 2023). Returns the number of
 * candidates; *@best is the index of the smallest. Leaves @c's GPU
 * changed: the caller restores it. */
static int
waves_grid(struct cluster *c, const struct fit_gemm_point *pts, int n, const bool *use, int np, bool *own,
	   int lo, int hi, double *chi, int *best)
{
	struct gpu *g = &c->gpu;
	int k = 0;

	*best = -1;
	for (int t = 0; t < FIT_GEMM_TILES; t++)
		for (int sm = lo; sm <= hi; sm++, k++) {
			g->sm_count = sm;
			g->gemm_tile_m = tile_shapes[t][0];
			g->gemm_tile_n = tile_shapes[t][1];
			if (!chi2_marked(c, pts, n, use, np, own, &chi[k]))
				chi[k] = INFINITY;
			if (*best < 0 || chi[k] < chi[*best])
				*best = k;
		}
	g->sm_count = 0;
	if (!chi2_marked(c, pts, n, use, np, own, &chi[k]))
		chi[k] = INFINITY;
	if (chi[k] < chi[*best])
		*best = k;
	return k + 1;
}

/* As good: the candidates within @limit of chi^2; the range of SM counts
 * of the chosen tile (@g's) among them and how many tiles have one. */
static void
waves_alike(const struct gpu *g, const double *chi, int span, int lo, double limit, struct fit_gemm_result *out)
{
	out->sm_count_lo = out->sm_count_hi = out->sm_count;
	out->tiles_alike = 0;
	for (int t = 0; t < FIT_GEMM_TILES; t++) {
		bool alike = false;

		for (int j = 0; j < span; j++) {
			if (!(chi[t * span + j] <= limit))
				continue;
			alike = true;
			if (same_tile(g, tile_shapes[t])) {
				out->sm_count_lo = lo + j < out->sm_count_lo ? lo + j : out->sm_count_lo;
				out->sm_count_hi = lo + j > out->sm_count_hi ? lo + j : out->sm_count_hi;
			}
		}
		out->tiles_alike += alike;
	}
}

/*
 * Search the SM count and the tile over the 16-bit points @use marks
 * (the base fit's), @np parameters; leave the chosen values in @c and
 * @out. Nothing is searched when the base GPU does not model waves.
 */
static bool
search_waves(struct cluster *c, const struct fit_gemm_point *pts, int n, const bool *use, int np,
	     struct fit_gemm_result *out)
{
	struct gpu *g = &c->gpu;
	const int sm0 = g->sm_count, tm0 = g->gemm_tile_m, tn0 = g->gemm_tile_n;
	int lo = sm0 / 8 > 1 ? sm0 / 8 : 1, hi = 2 * sm0 < 4096 ? 2 * sm0 : 4096, k = 0, best = -1, m = 0;
	int span = hi - lo + 1;
	double chi_base, thresh, *chi;
	bool *own;

	out->sm_count = sm0;
	out->tile_m = tm0;
	out->tile_n = tn0;
	for (int i = 0; i < n; i++)
		m += use[i];
	if (sm0 <= 0 || tm0 <= 0 || tn0 <= 0 || m <= np)
		return true;
	own = malloc(sizeof(*own) * (size_t)n);
	chi = malloc(sizeof(*chi) * ((size_t)span * FIT_GEMM_TILES + 1));
	if (!own || !chi) {
		free(own);
		free(chi);
		return false;
	}
	if (!chi2_marked(c, pts, n, use, np, own, &chi_base)) {
		free(own);
		free(chi);
		return true;
	}
	k = waves_grid(c, pts, n, use, np, own, lo, hi, chi, &best);
	out->waves_searched = true;
	out->candidates = k;
	thresh = chi[best] / (m - np) * (4.0 + 2.0 * log((double)k));
	g->sm_count = sm0;
	g->gemm_tile_m = tm0;
	g->gemm_tile_n = tn0;
	if (chi_base - chi[best] > thresh) {
		out->waves_changed = true;
		out->sm_count = g->sm_count = best == span * FIT_GEMM_TILES ? 0 : lo + best % span;
		if (out->sm_count > 0) {
			out->tile_m = g->gemm_tile_m = tile_shapes[best / span][0];
			out->tile_n = g->gemm_tile_n = tile_shapes[best / span][1];
		}
	}
	waves_alike(g, chi, span, lo, (out->waves_changed ? chi[best] : chi_base) + thresh, out);
	free(own);
	free(chi);
	return true;
}

/* The partial waves the chosen values charge the points @use marks. */
static void
wave_loss(const struct cluster *c, const struct fit_gemm_point *pts, int n, const bool *use,
	  struct fit_gemm_result *out)
{
	double sum = 0.0;

	out->partial_wave = 0;
	out->wave_loss_max = 0.0;
	for (int i = 0; i < n; i++) {
		double loss;

		if (!use[i])
			continue;
		loss = 1.0 - cluster_gemm_wave_factor(c, pts[i].m, pts[i].n, pts[i].k, 1.0);
		if (loss <= 1e-12)
			continue;
		out->partial_wave++;
		sum += loss;
		out->wave_loss_max = fmax(out->wave_loss_max, loss);
	}
	out->wave_loss_mean = out->partial_wave > 0 ? sum / out->partial_wave : 0.0;
}

/* The fit of eff_max, overhead and fp8 ratio at @c's wave values, scored; false with @err set. */
static bool
fit_at(const struct cluster *c, const struct fit_gemm_point *pts, int n, const struct gpu *base, bool *use16,
       bool *use8, struct fit_gemm_result *out, struct plan_error *err)
{
	if (!fit16(c, pts, n, use16, out, err) || !fit_fp8(c, pts, n, use8, out, err))
		return false;
	score(pts, n, base, use16, use8, out);
	return true;
}

bool
fit_gemm(const struct fit_gemm_point *pts, int n, const struct gpu *base,
	 struct fit_gemm_result *out, struct plan_error *err)
{
	struct cluster c;
	bool *use16, *use8, ok;

	memset(out, 0, sizeof(*out));
	out->fp8_ratio = base->fp8_gemm_ratio;
	if (!check_points(pts, n, base, err))
		return false;
	as_cluster(base, &c);
	use16 = calloc((size_t)n + 1, sizeof(*use16));
	use8 = calloc((size_t)n + 1, sizeof(*use8));
	ok = use16 && use8;
	if (!ok)
		plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	ok = ok && fit16(&c, pts, n, use16, out, err);
	if (ok && !search_waves(&c, pts, n, use16, out->overhead_fitted ? 2 : 1, out))
		ok = plan_error_set(err, PLAN_ERR_NOMEM, NULL, 0, 0, "out of memory");
	if (ok && !fit_at(&c, pts, n, base, use16, use8, out, err)) {
		/* The searched values fitted the base fit's points better, but
		 * refitted over every point (the memory-bound ones marked
		 * again, fp8) they fail: keep the GPU's values and say that. */
		ok = out->waves_changed;
		if (ok) {
			c.gpu = *base;
			out->waves_changed = false;
			out->sm_count = base->sm_count;
			out->tile_m = base->gemm_tile_m;
			out->tile_n = base->gemm_tile_n;
			plan_error_clear(err);
			ok = fit_at(&c, pts, n, base, use16, use8, out, err);
		}
	}
	if (ok)
		wave_loss(&c, pts, n, use16, out);
	if (ok && out->waves_searched) {
		/* The same fit with the wave model off: what the waves explain. */
		struct fit_gemm_result off = *out;
		struct plan_error ignored;
		struct cluster c0 = c;

		c0.gpu.sm_count = off.sm_count = 0;
		plan_error_clear(&ignored);
		out->mape_no_waves = fit_at(&c0, pts, n, base, use16, use8, &off, &ignored) ? off.mape : -1.0;
	}
	free(use16);
	free(use8);
	return ok;
}

void
fit_gemm_apply(const struct fit_gemm_result *r, struct gpu *g)
{
	g->gemm_efficiency_max = r->efficiency_max;
	g->gemm_overhead_s = r->overhead_s;
	if (r->fp8_points > 0)
		g->fp8_gemm_ratio = r->fp8_ratio;
	if (r->waves_searched) {
		g->sm_count = r->sm_count;
		g->gemm_tile_m = r->tile_m;
		g->gemm_tile_n = r->tile_n;
	}
	g->gemm_efficiency.n = 0;
}

double
fit_gemm_model_time(const struct gpu *g, const struct fit_gemm_point *p)
{
	struct cluster c;
	struct plan pl;
	struct compute_casts casts = { .bytes = 0.0, .recipe = PLAN_FP8_DELAYED };

	as_cluster(g, &c);
	if (p->dtype != FIT_GEMM_FP8)
		return compute_gemm_time(&c, p->m, p->n, p->k, 1.0);
	memset(&pl, 0, sizeof(pl));
	pl.precision = PLAN_PRECISION_FP8;
	/* scripts/measure-gpu.py times torch._scaled_mm at its default,
	 * use_fast_accum False: the split-accumulator GEMM, which is the
	 * forward's fast one plus half the backward's extra. */
	return compute_linear_time(&c, &pl, p->m, p->n, p->k, 1.0, &casts) + 0.5 * casts.bwd_gemm_s;
}
