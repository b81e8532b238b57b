/*
 * A hybrid model's sequence mixers other than attention: the Mamba-2
 * mixer of its 'M' layers (plan/mamba.h) and the Gated DeltaNet of its
 * 'G' layers (plan/gdn.h). Both are an in_proj, a causal conv1d, a
 * chunked scan kernel, a gated norm and an out_proj; the rest of
 * plan-cli asks for a layer's mixer here, whichever it is.
 */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/compute.h"
#include "plan/error.h"
#include "plan/model.h"
#include "plan/plan.h"

/**
 * One mixer for one micro-batch on one GPU: in_proj and out_proj as the
 * plan's linear layers (compute_linear_time, 1/tp of their columns and
 * rows), the causal conv1d and the norm as memory-bound passes, the
 * scan kernels (Mamba's SSD, GDN's chunked delta rule) from their
 * FLOPs. Times in seconds, FLOPs and bytes of this GPU.
 */
struct mixer_cost {
	double fwd_s, bwd_s;           /**< forward and backward, every part below */
	double in_proj_fwd_s, out_proj_fwd_s; /**< the linears' GEMMs in the forward */
	double gemm_fwd_s;             /**< in_proj + out_proj */
	double scan_fwd_s, scan_bwd_s; /**< the scan kernels (launches included) */
	double mem_fwd_s, mem_bwd_s;   /**< conv1d, norm, layout copies (launches included) */
	double in_proj_flops, out_proj_flops; /**< forward GEMM FLOPs */
	double scan_fwd_flops, scan_bwd_flops;
	double mem_fwd_bytes, mem_bwd_bytes;  /**< conv1d, norm and copies */
	int fwd_kernels, bwd_kernels;  /**< kernels besides the GEMMs (scan, conv1d, norm, copies) */
};

/**
 * A scan's kernels (Mamba's SSD, GDN's delta rule: Triton chunked
 * kernels both): the larger of @flops at mamba_ssd_efficiency() of the
 * GPU's clocked peak and @bytes at its achieved bandwidth, and a launch
 * each of @kernels; @backward picks the efficiency.
 */
double mixer_scan_time(const struct cluster *c, double flops, double bytes, int kernels, bool backward);

/**
 * The rest of a mixer's times once its GEMMs (gemm_fwd_s), scans
 * (scan_*_s, launches included), memory-bound bytes (mem_*_bytes) and
 * kernel counts (fwd_kernels, bwd_kernels, the scan's among them) are in
 * @out: the memory-bound passes at the GPU's achieved bandwidth with a
 * launch (@launch_s) for each kernel the scan does not launch
 * (@scan_fwd_kernels, @scan_bwd_kernels), then the forward and the
 * backward (dX and dW of each linear: twice the forward GEMMs; fp8's
 * promoting backward GEMMs are the caller's casts).
 */
void mixer_total_time(const struct cluster *c, double launch_s, int scan_fwd_kernels, int scan_bwd_kernels,
		      struct mixer_cost *out);

/** Whether a layer of @m holds a mixer (MODEL_PART_MAMBA or MODEL_PART_GDN). */
bool mixer_present(const struct model *m);

/** The mixer of a layer of @m (zeros without one); @casts as mamba_mixer_cost's. */
void mixer_cost(const struct model *m, const struct plan *p, const struct cluster *c,
		struct compute_casts *casts, struct mixer_cost *out);

/** Kernels the mixer launches besides its two GEMMs (0 without one). */
void mixer_kernels(const struct model *m, const struct plan *p, int *fwd, int *bwd);

/** Bytes the mixer keeps for its backward on one GPU (0 without one). */
double mixer_activation_bytes(const struct model *m, const struct plan *p);

/** Width of the mixer's in_proj output and of out_proj's input, whole
 *  (not per TP rank); 0 without a mixer. */
double mixer_in_proj_dim(const struct model *m);
double mixer_out_proj_in_dim(const struct model *m);

/** Megatron-LM's forward model FLOPs of the mixer for @tokens tokens (MFU). */
double mixer_model_flops(const struct model *m, double tokens);

/** Whether plan @p can run every mixer of hybrid model @m (tp and cp). */
bool mixer_plan_check(const struct model *m, const struct plan *p, struct plan_error *err);
