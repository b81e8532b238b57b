/*
 * Link parameters fitted to measured collectives (nccl-tests): the
 * inverse of collective.c's alpha-beta model, so that a profile holding
 * the fitted values predicts the measured times again.
 */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/error.h"

/** The collectives nccl-tests times (all_reduce_perf, ..., sendrecv_perf). */
enum fit_coll {
	FIT_COLL_ALLREDUCE,
	FIT_COLL_ALLGATHER,
	FIT_COLL_REDUCESCATTER,
	FIT_COLL_ALLTOALL,
	FIT_COLL_SENDRECV,
	FIT_COLL_COUNT,
};

/** Names of enum fit_coll as nccl-tests' binaries spell them ("all_reduce"), NULL-terminated. */
extern const char *const fit_coll_names[];

/** One measured collective: @bytes as nccl-tests' size column, on @ranks GPUs over @nodes nodes. */
struct fit_link_point {
	int coll;       /**< enum fit_coll */
	int ranks;
	int nodes;
	double bytes;
	double time_s;
};

/** Which link a fit describes. */
enum fit_link_level { FIT_LINK_INTRA, FIT_LINK_INTER };

/** Names of enum fit_link_level ("intra", "inter"), NULL-terminated. */
extern const char *const fit_link_level_names[];

/** A fitted link; each *_se is the value's standard error (0 when held fixed). */
struct fit_link_result {
	int level;                 /**< enum fit_link_level */
	double bandwidth_Bps;      /**< intra: bandwidth x efficiency; inter: the NIC share per GPU x efficiency */
	double bandwidth_se;
	double latency_s;          /**< per step (alpha) */
	double latency_se;
	double half_size_bytes;    /**< inter: message_half_size */
	double half_size_se;
	double collective_latency_s; /**< intra: the fixed cost of a collective; inter: the base's */
	double collective_latency_se;
	bool collective_latency_fitted;  /**< false: held (one step count, an inter fit, or negative) */
	bool collective_latency_negative; /**< held at 0: the fit wanted it negative */
	bool latency_fitted;       /**< false: held at 0 (the fit wanted it negative) */
	bool half_size_fitted;     /**< false: held at the base cluster's (not identifiable), or at 0 */
	bool half_size_negative;   /**< held at 0: the fit wanted it negative */
	bool bandwidth_fitted;     /**< false: all-to-all points only, which do not measure the link's
				    *   efficiency (bandwidth_Bps 0; fit_link_apply() keeps the base's) */
	int a2a_points;            /**< all-to-all points (alltoall_perf) among the points */
	double a2a_bandwidth_Bps;  /**< all-to-all: the line rate x all_to_all_efficiency; 0: no points */
	double a2a_bandwidth_se;
	double a2a_mape;           /**< of the all-to-all points alone */
	int points;
	int params;                /**< parameters fitted, the all-to-all bandwidth included */
	double mape;               /**< of collective.c's times with the fitted links, over the points */
	double max_abs_error;      /**< the largest relative error among the points */
};

/**
 * Fit the @level link of @base to @n points (relative least squares,
 * GSL's gsl_multifit_wlinear on the linear form of collective.c's model).
 * @base gives what is not fitted: an inter-node fit keeps its intra-node
 * link, and its message_half_size when the points cannot tell it from
 * the latency (one node count). Intra points must be on one node, inter
 * points on two or more, with more points than parameters.
 * All-to-all points (alltoall_perf) have their own bandwidth,
 * all_to_all_efficiency's (collective.c): with other collectives among the
 * points the link is fitted to those and the all-to-all bandwidth alone to
 * the all-to-all points, the link's latencies held; with all-to-all
 * points only, the link's latencies and the all-to-all bandwidth are
 * fitted to them and the link's efficiency is not (bandwidth_fitted).
 */
bool fit_link(const struct fit_link_point *pts, int n, enum fit_link_level level,
	      const struct cluster *base, struct fit_link_result *out, struct plan_error *err);

/**
 * Put @r into @c: the fitted bandwidths become efficiency and
 * all_to_all_efficiency of @c's line rate, which is raised to the fastest
 * of them when one is above it (a bandwidth not fitted keeps its value;
 * with no line rate at all, efficiency 1).
 */
void fit_link_apply(const struct fit_link_result *r, struct cluster *c);

/** collective.c's time of @p on the links of @c (ring algorithm; sendrecv: one p2p send). */
double fit_link_model_time(const struct cluster *c, const struct fit_link_point *p);
