/* Measured training runs read from CSV (RFC 4180, through libcsv). */
#pragma once

#include <stdbool.h>

#include "plan/collective.h"
#include "plan/compressor.h"
#include "plan/error.h"
#include "plan/model.h"
#include "plan/plan.h"

/** How a published TFLOP/s figure counts FLOPs. */
enum run_convention {
	RUN_CONV_MEGATRON_EQ3, /**< Narayanan et al. SC21 Eq. 3 (recompute counted) */
	RUN_CONV_MODEL,        /**< 3 x forward (MFU convention) */
	RUN_CONV_HARDWARE,     /**< model FLOPs plus the recomputed forward */
};

extern const char *const run_convention_names[];

/** Where a cell of a run's record starts in its file (column 0: the
 *  file has no such column; the record's line). */
struct run_cell {
	int line, column;
};

/** One measured run: what to predict and what was measured. */
struct run {
	char id[64];
	char model[256];
	char cluster[256];
	char framework[256];      /**< "" when not given: the built-in framework */
	char compressor[256];     /**< "" when not given (or "none"): no compression */
	char source[512];         /**< where the run was published (its first 511 bytes): validate's groups */
	int dp_algo;              /**< enum coll_algo: the dp_allreduce column, default ring */
	struct plan plan;
	double measured_time_s;   /**< 0 when only TFLOP/s is given */
	double measured_tflops;   /**< 0 when only the time is given */
	double measured_tokens_per_gpu; /**< tokens/s per GPU; 0 when not given */
	double measured_memory_gib; /**< peak memory allocated per GPU, GiB; 0 when not given */
	int convention;           /**< enum run_convention */
	int flash_attention;      /**< the flash_attention cell, 0 or 1; -1 when empty: the GPU's default */
	int gpus;                 /**< the gpus column; 0 when empty: the cluster's (runs_complete) */
	int row;                  /**< 1-based record number (the header is row 1) */
	int line;                 /**< the file line its record starts on (a quoted field may span lines) */
	/** Where the profile cells start: errors loading a profile point at its cell. */
	struct run_cell at_model, at_cluster, at_framework, at_compressor;
};

struct run_set {
	struct run *runs;
	int n;
	int cap;
};

/**
 * Load @path. Required columns: id, model, cluster, global_batch, and
 * measured_iteration_time_s, measured_tflops_per_gpu (with
 * flop_convention) or measured_tokens_per_s_per_gpu. Every plan
 * attribute (plan/plan_attr.h: tp, pp, dp, vpp, micro_batch, seq_len,
 * recompute, stage_layers, zero, mics_group, dp_compress_scheme, ...) is
 * an optional column of its name, with predict's default where the column
 * or the cell is empty: flash_attention the GPU profile's, dp the GPUs
 * left after tp x cp x pp (runs_complete), seq_len the model's. gpus is
 * the GPUs the run used (checked against tp x cp x pp x dp when dp is
 * given; default the cluster's); framework and compressor name profiles
 * (compress and the other compression columns need a compressor);
 * measured_memory_gib is the peak memory a GPU allocated, in GiB
 * (compared with the predicted memory). Provenance goes in 'source', the
 * paper, table or sweep a run comes from (validate summarises the rows of
 * each source; its first 511 bytes are kept), and 'notes', which is not
 * read; any other column is an error that names the nearest known one or
 * lists them. The file must be a regular file of at most INFILE_MAX_CSV
 * bytes; a UTF-8 byte-order mark is skipped.
 * Release with runs_csv_release() even on failure.
 */
bool runs_csv_load(const char *path, struct run_set *out, struct plan_error *err);

void runs_csv_release(struct run_set *set);

struct framework;

/**
 * Complete @run's plan for model @m on cluster @c with framework @fw
 * (NULL: the built-in one) as predict completes its own (plan_complete):
 * seq_len, dp from the gpus column or the cluster, MiCS's ZeRO-3, flash
 * attention from the GPU, and layers that pp x vpp do not divide split
 * by the framework's pipeline_split. Before runs_measured_time_s and
 * runs_predict. False with @err.
 */
bool runs_complete(struct run *run, const struct model *m, const struct cluster *c, const struct framework *fw,
		   struct plan_error *err);

/**
 * The measured iteration time of @run on model @m, in seconds: its
 * measured_iteration_time_s when given, else (with TFLOP/s) the FLOPs of one iteration
 * under its flop_convention (Narayanan et al. SC21 Eq. 3, 3 x forward, or
 * that plus the recomputed forward) over GPUs x measured TFLOP/s, else
 * global_batch x seq_len over GPUs x measured tokens/s per GPU.
 * @run->plan.seq_len must be set (the model's default filled in).
 */
double runs_measured_time_s(const struct run *run, const struct model *m);

struct cluster;

/** One run as plan-cli predicts it, against its measurement. */
struct run_prediction {
	double predicted_s;
	double measured_s;
	double error;                  /**< (predicted - measured) / measured */
	double predicted_tflops;
	double predicted_memory_bytes;
	double memory_error;           /**< against measured_memory_gib; 0 without one */
	bool fits;
};

/**
 * Predict @run on model @m, cluster @c, framework @fw (NULL: the
 * built-in one) and compressor @cmp (NULL: none; the row's compressor
 * column names it) through estimate_plan with the row's DP all-reduce,
 * and compare with its measurement: what validate prints per row and
 * what calibrate fits. The plan's seq_len must be set. False with @err
 * set when the plan cannot run.
 */
bool runs_predict(const struct run *run, const struct model *m, const struct cluster *c,
		  const struct framework *fw, const struct compressor *cmp, struct run_prediction *out,
		  struct plan_error *err);
