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
};

/**
 * Fit gemm_efficiency_max and gemm_overhead to the 16-bit points, and
 * fp8_gemm_ratio to the fp8 points when @base has an fp8 peak (relative
 * least squares; the model t = F / (peak x eff_max) + overhead is
 * linear). @base gives the peaks, the memory roofline and the shape
 * factor; its measured gemm_efficiency curve, if any, is not used.
 * Needs 3 or more 16-bit points that are not memory-bound.
 */
bool fit_gemm(const struct fit_gemm_point *pts, int n, const struct gpu *base,
	      struct fit_gemm_result *out, struct plan_error *err);

/** Put @r into @g and drop its gemm_efficiency curve (which would replace the parametric model). */
void fit_gemm_apply(const struct fit_gemm_result *r, struct gpu *g);

/** compute.c's time of the GEMM @p on GPU @g: its parametric model (a gemm_efficiency curve is not read). */
double fit_gemm_model_time(const struct gpu *g, const struct fit_gemm_point *p);
