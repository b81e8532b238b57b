#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_interp.h>

#include "plan/cluster.h"

void
cluster_release(struct cluster *c)
{
	if (c && c->gemm_interp) {
		gsl_interp_free(c->gemm_interp);
		c->gemm_interp = NULL;
	}
}

enum cluster_curve_status
cluster_init_gemm_curve(struct cluster *c)
{
	const struct curve *curve = &c->gpu.gemm_efficiency;
	gsl_interp *interp;

	cluster_release(c);
	if (curve->n == 0)
		return CLUSTER_CURVE_OK;
	for (int i = 0; i < curve->n; i++)
		c->gemm_log_x[i] = log10(curve->x[i]);
	/* Steffen's method is monotone between points: no overshoot above 1. */
	interp = gsl_interp_alloc(curve->n >= 3 ? gsl_interp_steffen : gsl_interp_linear, (size_t)curve->n);
	if (!interp)
		return CLUSTER_CURVE_NOMEM;
	if (gsl_interp_init(interp, c->gemm_log_x, curve->y, (size_t)curve->n) != GSL_SUCCESS) {
		gsl_interp_free(interp);
		return CLUSTER_CURVE_BAD_CURVE;
	}
	c->gemm_interp = interp;
	return CLUSTER_CURVE_OK;
}

enum cluster_curve_status
cluster_set_gpu(struct cluster *c, const struct gpu *g)
{
	c->gpu = *g;
	return cluster_init_gemm_curve(c);
}

int
cluster_gpus(const struct cluster *c)
{
	return c->nodes * c->gpus_per_node;
}

double
cluster_pcie_bandwidth_Bps(const struct cluster *c)
{
	if (c->pcie_bandwidth_Bps > 0)
		return c->pcie_bandwidth_Bps;
	return c->gpu.pcie_bandwidth_Bps > 0 ? c->gpu.pcie_bandwidth_Bps : GPU_DEFAULT_PCIE_BPS;
}

double
cluster_nic_share_Bps(const struct cluster *c)
{
	return c->inter.nics_per_node * c->inter.nic_bandwidth_Bps / c->gpus_per_node;
}

double
cluster_gemm_shape_factor(const struct cluster *c, double min_dim)
{
	const struct curve *k = &c->gpu.gemm_shape_efficiency;
	double x;

	if (k->n == 0 || min_dim <= 0)
		return 1.0;
	if (min_dim <= k->x[0])
		return k->y[0];
	if (min_dim >= k->x[k->n - 1])
		return k->y[k->n - 1];
	/* Linear in log(dimension) between the measured points. */
	x = log(min_dim);
	for (int i = 1; i < k->n; i++)
		if (min_dim <= k->x[i]) {
			double x0 = log(k->x[i - 1]), x1 = log(k->x[i]);

			return k->y[i - 1] + (k->y[i] - k->y[i - 1]) * (x - x0) / (x1 - x0);
		}
	return k->y[k->n - 1];
}

double
cluster_gemm_efficiency(const struct cluster *c, double flops)
{
	const struct curve *curve = &c->gpu.gemm_efficiency;
	double t_ideal;

	if (flops <= 0)
		return c->gpu.gemm_efficiency_max;
	if (c->gemm_interp) {
		double x = log10(flops);
		double y;

		/* GSL does not extrapolate (GSL_EDOM): clamp to the measured range. */
		if (x <= c->gemm_log_x[0])
			return curve->y[0];
		if (x >= c->gemm_log_x[curve->n - 1])
			return curve->y[curve->n - 1];
		if (gsl_interp_eval_e(c->gemm_interp, c->gemm_log_x, curve->y, x, NULL, &y) != GSL_SUCCESS)
			return curve->y[0];
		return y;
	}
	/*
	 * Parametric model: a kernel at eff_max of peak plus a fixed launch
	 * and tail cost, so small GEMMs lose efficiency (the shape of
	 * Calculon's measured A100 table, Isaev et al. SC'23).
	 */
	t_ideal = flops / (c->gpu.peak_flops * c->gpu.gemm_efficiency_max);
	return c->gpu.gemm_efficiency_max * t_ideal / (t_ideal + c->gpu.gemm_overhead_s);
}

/*
 * ceil() of a non-negative count without the libm call and without a
 * branch to mispredict: this runs a dozen times for every GEMM of every
 * prediction. From 2^52 on every double is an integer (and the count
 * is capped there, far beyond any GEMM's). The count is a quotient taken
 * with a reciprocal, which may land one ulp above an exact integer: 1e-12
 * of it is taken off first.
 */
static inline double
ceil_count(double x)
{
	double t;

	x *= 1.0 - 1e-12;
	x = x < 4503599627370496.0 ? x : 4503599627370496.0;
	t = (double)(long long)x;
	return t + (double)(t < x);
}

/* The reciprocals of the tile sides and the SM count. */
struct wave_tiles {
	double inv_m, inv_n, inv_sms;
	bool m_is_half; /* gemm_tile_m <= gemm_tile_n: the half tile is m x m */
};

/*
 * The waves of a GEMM's CTA tiles: they run one tile per SM, and the last
 * wave is partial (NVIDIA, Matrix Multiplication Background User's Guide,
 * DU-09799-001, Sec. 3.2 "Wave quantization"). The fill of the GPU's SM
 * slots is tiles / (waves x SMs); best_fill_sms returns tiles / waves, the
 * fill times the SM count, of the best of the tiles cuBLAS chooses among:
 * the profile's tile, transposed, and its square half.
 */
static double
best_fill_sms(const struct wave_tiles *w, double m, double n, double batch)
{
	double m_tm = ceil_count(m * w->inv_m), m_tn = ceil_count(m * w->inv_n);
	double n_tm = ceil_count(n * w->inv_m), n_tn = ceil_count(n * w->inv_n);
	double half = w->m_is_half ? m_tm * n_tm : m_tn * n_tn;
	double t[3] = { m_tm * n_tn * batch, m_tn * n_tm * batch, half * batch };
	double best_t = t[0], best_w = ceil_count(t[0] * w->inv_sms);

	/* The largest tiles / waves, compared by cross-multiplying (all
	 * positive) so that one division is taken instead of three: this
	 * runs for every GEMM of every prediction. */
	for (int i = 1; i < 3; i++) {
		double waves = ceil_count(t[i] * w->inv_sms);

		if (t[i] * best_w > best_t * waves) {
			best_t = t[i];
			best_w = waves;
		}
	}
	return best_t / best_w;
}

/*
 * best_fill_sms(w, side, side, 1) in fewer steps: with m = n the tile and
 * its transpose give the same count of tiles (a b = b a exactly, and so
 * the same waves), so the transpose never wins the comparison and is not
 * counted; the half tile is compared as there (bench-predict: this runs
 * for every GEMM whose waves are charged).
 */
static double
best_fill_sms_square(const struct wave_tiles *w, double side)
{
	double a = ceil_count(side * w->inv_m), b = ceil_count(side * w->inv_n);
	double tiles = a * b, half = w->m_is_half ? a * a : b * b;
	double waves = ceil_count(tiles * w->inv_sms), half_waves = ceil_count(half * w->inv_sms);

	if (half * waves > tiles * half_waves)
		return half / half_waves;
	return tiles / waves;
}

double
cluster_gemm_wave_factor(const struct cluster *c, double m, double n, double k, double batch)
{
	const struct gpu *g = &c->gpu;
	struct wave_tiles w;
	double fill, side;

	if (g->sm_count <= 0 || g->gemm_tile_m <= 0 || g->gemm_tile_n <= 0 || !(m >= 1 && n >= 1 && k >= 1))
		return 1.0;
	if (!(batch >= 1))
		batch = 1;
	w.inv_m = 1.0 / g->gemm_tile_m;
	w.inv_n = 1.0 / g->gemm_tile_n;
	w.inv_sms = 1.0 / g->sm_count;
	w.m_is_half = g->gemm_tile_m <= g->gemm_tile_n;
	fill = best_fill_sms(&w, m, n, batch);
	if (fill >= g->sm_count)
		return 1.0; /* full waves: nothing to charge */
	/* The efficiency curves were measured on square-ish GEMMs and hold
	 * their waves already: only a fill worse than that of the square
	 * GEMM of the same FLOPs is charged, never a better one credited. */
	side = cbrt(m * n * k * batch);
	fill /= best_fill_sms_square(&w, side);
	return fill < 1.0 ? fill : 1.0;
}
