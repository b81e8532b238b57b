/* Evaluating many cells (plans or planner runs) in parallel, in a fixed order. */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/compressor.h"
#include "plan/error.h"
#include "plan/framework.h"
#include "plan/model.h"
#include "plan/plan.h"

enum sweep_mode { SWEEP_PREDICT, SWEEP_OPTIMIZE };

/** One cell: what to predict (or what to optimize). */
struct sweep_cell {
	const struct model *model;
	struct cluster cluster;                /**< a copy (link overrides applied); never released */
	const struct compressor *compressor;   /**< NULL: none */
	const struct framework *framework;     /**< NULL: the built-in one */
	struct plan plan;                      /**< predict: the plan; optimize: gpus, batch, options */
	int mode;                              /**< enum sweep_mode */
	int dp_algo;                           /**< predict: enum coll_algo of the DP collectives (ring) */
	int gpus;                              /**< optimize: GPUs to plan for */
	long baseline;                         /**< cell the speedup is against; -1: none */
	long group_ref;                        /**< first cell of its scaling group (itself if first) */
	bool wave_loss;                        /**< also the plan's GEMM wave loss (a second estimate) */
};

/** The figures of one cell. */
struct sweep_result {
	bool ok;
	char error[768];
	double time_s, tflops_per_gpu, mfu, tokens_per_s, memory_bytes;
	double speedup, weak_efficiency, strong_efficiency;
	bool fits;
	int gpus;
	double wave_loss_s;    /**< what the GEMMs' partial last waves add (plan/wave_loss.h) */
	bool wave_loss_known;  /**< wave_loss_s was priced (the cell's wave_loss) */
	char plan[200];  /**< the plan found (optimize) or given (predict), in words */
};

/**
 * Evaluate the cells whose index i has i % shard_n == shard_i, on
 * @threads threads (results land at their cell's index: the order never
 * depends on the threads). @progress, if not NULL, is called now and then
 * from the calling thread with the cells done. Failed cells have ok =
 * false and an error. Returns false only when threads cannot start.
 */
bool sweep_run(const struct sweep_cell *cells, long n, int threads, long shard_i, long shard_n,
	       void (*progress)(long done, long total, void *arg), void *arg,
	       struct sweep_result *out, struct plan_error *err);

/**
 * Fill speedup (time of the baseline cell over this one), weak-scaling
 * efficiency (TFLOP/s per GPU over the group's reference's) and strong-
 * scaling efficiency (the reference's time x GPUs over this one's). A
 * group's reference is its first cell, in cell order, that ran and fits;
 * a group with none has no efficiencies.
 */
void sweep_derive(const struct sweep_cell *cells, long n, struct sweep_result *res);
