/*
 * The profile keys calibrate may fit, by schema path: "gpu.KEY",
 * "intra_node.KEY", "inter_node.KEY" (numbers and quantities of the
 * cluster schema) and "framework.KEY" (of the framework schema). Each
 * keeps the range its schema row declares, but gpu.power_limit, which
 * runs from a fifth of gpu.rated_power to it, and gpu.peak_flops and
 * gpu.peak_flops_fp8, each bounded by the other's profile value where
 * the GPU has an fp8 peak (calib_keys.c). gpu.pcie_bandwidth is refused
 * where the cluster overrides it (pcie_bandwidth). Whole
 * numbers (the wave model's sm_count and tiles), choices and strings are
 * not fitted; each is refused with its reason.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>

#include "plan/cluster.h"
#include "plan/error.h"
#include "plan/framework.h"

#define CALIB_KEY_LEN 96

/**
 * The most fittable keys the schemas may hold together (cluster blocks and
 * framework): 65 in issue 25's tenth session. More is an error
 * (calib_keys_check), never a list silently cut.
 */
#define CALIB_MAX_KEYS 128

/** One key to fit: where its value lives and its bounds. */
struct calib_key {
	char path[CALIB_KEY_LEN];
	double *value;     /**< in the cluster or the framework given to calib_key_resolve */
	double lo, hi;     /**< the schema's min and max (gpu.power_limit: 0.2 to 1 x rated_power;
			    *   gpu.peak_flops at most peak_flops_fp8, which is at least peak_flops) */
	bool framework;    /**< a framework key */
	bool quantity;     /**< with a unit: unit is its SI symbol */
	const char *unit;  /**< "" for a plain number */
};

/**
 * Find @path among the keys of the cluster schema (in @c) and, for
 * "framework.KEY", of the framework schema (in @fw, which may be NULL
 * when no framework key is asked for). An unknown key is a PLAN_ERR_PLAN
 * error naming the nearest valid key ("unknown key ..."), a whole
 * number or a choice one that says why it is not fitted;
 * the caller lists them all (calib_key_list), which a plan_error's
 * message is too short to hold.
 */
bool calib_key_resolve(const char *path, struct cluster *c, struct framework *fw, struct calib_key *out,
		       struct plan_error *err);

/** How many fittable keys the cluster blocks and the framework schema hold. */
int calib_key_count(void);

/**
 * Whether the fittable keys fit a table of @cap (CALIB_MAX_KEYS in use);
 * when not, a PLAN_ERR_PLAN error saying so. calib_key_resolve checks it
 * first.
 */
bool calib_keys_check(int cap, struct plan_error *err);

/** Every key calib_key_resolve accepts, ", "-separated, into @buf. */
void calib_key_list(char *buf, size_t size);

/** The size of the buffer calib_key_list needs for the whole list. */
size_t calib_key_list_size(void);

/**
 * The candidate default keys for runs on @c, among which calibrate keeps
 * those the runs determine (calib_choose): the GEMM throughput
 * (gpu.gemm_efficiency_max, or gpu.peak_flops when the GPU has a measured
 * gemm_efficiency curve, which ignores the former), gpu.memory_efficiency,
 * intra_node.efficiency and inter_node.efficiency. Writes up to 4 paths
 * into @paths; returns how many.
 */
int calib_default_keys(const struct cluster *c, char paths[][CALIB_KEY_LEN]);
