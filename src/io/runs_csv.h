/* Measured training runs read from CSV (RFC 4180, through libcsv). */
#pragma once

#include <stdbool.h>

#include "plan/collective.h"
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

/** One measured run: what to predict and what was measured. */
struct run {
	char id[64];
	char model[256];
	char cluster[256];
	char framework[256];      /**< "" when not given: the built-in framework */
	struct plan plan;
	double measured_time_s;   /**< 0 when only TFLOP/s is given */
	double measured_tflops;   /**< 0 when only the time is given */
	double measured_memory_gib; /**< peak memory allocated per GPU, GiB; 0 when not given */
	int convention;           /**< enum run_convention */
	int flash_attention;      /**< the flash_attention cell, 0 or 1; -1 when empty: the GPU's default */
	int row;                  /**< 1-based record number (the header is row 1) */
};

struct run_set {
	struct run *runs;
	int n;
	int cap;
};

/**
 * Load @path. Required columns: id, model, cluster, tp, pp, dp,
 * micro_batch, global_batch, and measured_iteration_time_s or
 * measured_tflops_per_gpu (with flop_convention). Optional: vpp, seq_len
 * (0 = the model's), recompute, sequence_parallel, zero, dp_overlap,
 * flash_attention (empty: the GPU profile's default), framework (a profile name or path), precision (bf16,
 * fp16 or fp8), tp_overlap, cp, cp_method, measured_memory_gib (the peak
 * memory a GPU allocated, in GiB: compared with the predicted memory),
 * gpus (checked to be tp x cp x pp x dp). Other columns (provenance,
 * notes) are ignored. The file must be a regular file of at most
 * INFILE_MAX_CSV bytes; a UTF-8 byte-order mark is skipped.
 * Release with runs_csv_release() even on failure.
 */
bool runs_csv_load(const char *path, struct run_set *out, struct plan_error *err);

void runs_csv_release(struct run_set *set);

/**
 * The measured iteration time of @run on model @m, in seconds: its
 * measured_iteration_time_s when given, else the FLOPs of one iteration
 * under its flop_convention (Narayanan et al. SC21 Eq. 3, 3 x forward, or
 * that plus the recomputed forward) over GPUs x measured TFLOP/s.
 * @run->plan.seq_len must be set (the model's default filled in).
 */
double runs_measured_time_s(const struct run *run, const struct model *m);
