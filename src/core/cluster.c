#include <math.h>
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

int
cluster_gpus(const struct cluster *c)
{
	return c->nodes * c->gpus_per_node;
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
 * The fraction of the GPU's SM slots that a grid of @tiles CTA tiles
 * keeps busy: the tiles run in waves of one tile per SM, and the last
 * wave is partial (NVIDIA, Matrix Multiplication Background User's Guide,
 * DU-09799-001, Sec. 3.2 "Wave quantization").
 */
static double
wave_fill(double tiles, double sms)
{
	double waves = ceil(tiles / sms);

	return waves > 0 ? tiles / (waves * sms) : 1.0;
}

/* The best wave fill of an m x n output (times @batch) over the tiles
 * cuBLAS chooses among: the profile's tile, transposed, and its half. */
static double
best_fill(const struct gpu *g, double m, double n, double batch)
{
	double tm = g->gemm_tile_m, tn = g->gemm_tile_n, sms = g->sm_count;
	double half = fmin(tm, tn);
	double a = wave_fill(ceil(m / tm) * ceil(n / tn) * batch, sms);
	double b = wave_fill(ceil(m / tn) * ceil(n / tm) * batch, sms);
	double h = wave_fill(ceil(m / half) * ceil(n / half) * batch, sms);

	return fmax(a, fmax(b, h));
}

double
cluster_gemm_wave_factor(const struct cluster *c, double m, double n, double k, double batch)
{
	const struct gpu *g = &c->gpu;
	double side;

	if (g->sm_count <= 0 || g->gemm_tile_m <= 0 || g->gemm_tile_n <= 0 || !(m >= 1 && n >= 1 && k >= 1))
		return 1.0;
	if (!(batch >= 1))
		batch = 1;
	/* The efficiency curves were measured on square-ish GEMMs and hold
	 * their waves already: only a fill worse than that of the square
	 * GEMM of the same FLOPs is charged, never a better one credited. */
	side = cbrt(m * n * k * batch);
	return fmin(1.0, best_fill(g, m, n, batch) / best_fill(g, side, side, 1));
}
