/*
 * A GPU's parametric GEMM model fitted to measured GEMM times: the
 * inverse of cluster_gemm_efficiency() and compute_gemm_time(), so that
 * a GPU profile holding the fitted values predicts the measured times.
 */
#pragma once

#include <stdbool.h>

#include "plan/error.h"
#include "plan/gpu.h"

/** Element types of a timed GEMM. */
enum fit_gemm_dtype { FIT_GEMM_BF16, FIT_GEMM_FP16, FIT_GEMM_FP8, FIT_GEMM_DTYPE_COUNT };

/** Names of enum fit_gemm_dtype ("bf16", "fp16", "fp8"), NULL-terminated. */
extern const char *const fit_gemm_dtype_names[];

/** One timed GEMM: (m x k) times (k x n) in @dtype, @time_s seconds a kernel. */
struct fit_gemm_point {
	double m, n, k;
	int dtype;          /**< enum fit_gemm_dtype */
	double time_s;
};

/** The fitted values; each *_se is a standard error (0 when held fixed). */
struct fit_gemm_result {
	double efficiency_max;     /**< gpu.gemm_efficiency_max */
	double efficiency_max_se;
	double overhead_s;         /**< gpu.gemm_overhead */
	double overhead_se;
	bool overhead_fitted;      /**< false: held at 0 (the fit wanted it negative) */
	double fp8_ratio;          /**< gpu.fp8_gemm_ratio: the base GPU's when no fp8 point is used */
	double fp8_ratio_se;
	int points;                /**< 16-bit points used */
	int fp8_points;            /**< fp8 points used (0: fp8_ratio not fitted) */
	int memory_bound;          /**< points left out: the roofline's memory side bounds them */
	double mape;               /**< of compute.c's times with the fitted GPU, over the points used */
	double max_abs_error;
	/* The wave model (cluster_gemm_wave_factor), searched when the base
	 * GPU models waves (sm_count > 0); see fit_gemm(). */
	bool waves_searched;
	bool waves_changed;        /**< the log chose other values than the base GPU's */
	int sm_count, tile_m, tile_n; /**< chosen: the base GPU's unless the log tells them apart */
	int sm_count_lo, sm_count_hi; /**< the SM counts that fit as well with the chosen tile */
	int tiles_alike;           /**< tile shapes (of FIT_GEMM_TILES) that fit as well at some SM count */
	int candidates;            /**< (SM count, tile) pairs tried, and sm_count 0 (no waves) */
	int partial_wave;          /**< 16-bit points used that the chosen values charge a partial wave */
	double wave_loss_mean;     /**< their mean 1 - wave factor */
	double wave_loss_max;
	double mape_no_waves;      /**< MAPE of the same fit with the wave model off; < 0: it failed */
};

/** Tile sides tried for gemm_tile_m <= gemm_tile_n (64x64 to 256x256). */
#define FIT_GEMM_TILES 6

/**
 * Fit gemm_efficiency_max and gemm_overhead to the 16-bit points, and
 * fp8_gemm_ratio to the fp8 points when @base has an fp8 peak (relative
 * least squares; the model t = F / (peak x eff_max) + overhead is
 * linear). @base gives the peaks, the memory roofline and the shape
 * factor; its measured gemm_efficiency curve, if any, is not used.
 * Needs 3 or more 16-bit points that are not memory-bound.
 * When @base models waves (sm_count > 0), the SM count (an eighth to
 * twice @base's, or 0: no waves) and the CTA tile (FIT_GEMM_TILES) are searched: they
 * replace @base's only where they fit the 16-bit points clearly better
 * (fit_gemm.c says by how much); the wave loss the chosen values charge
 * and the MAPE without waves are reported.
 */
bool fit_gemm(const struct fit_gemm_point *pts, int n, const struct gpu *base,
	      struct fit_gemm_result *out, struct plan_error *err);

/** Put @r (the wave model's values too, where searched) into @g and drop its gemm_efficiency curve
 * (which would replace the parametric model). */
void fit_gemm_apply(const struct fit_gemm_result *r, struct gpu *g);

/** compute.c's time of the GEMM @p on GPU @g: its parametric model (a gemm_efficiency curve is not read). */
double fit_gemm_model_time(const struct gpu *g, const struct fit_gemm_point *p);
