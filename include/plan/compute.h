/* Time of the computation on one GPU: GEMMs on a roofline, element-wise work on memory bandwidth. */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/framework.h"
#include "plan/model.h"
#include "plan/plan.h"

/** Times of one transformer layer for one micro-batch on one GPU. */
struct compute_layer {
	double fwd_s;        /**< forward: GEMMs + element-wise */
	double bwd_s;        /**< backward (dX and dW GEMMs, element-wise) */
	double recompute_s;  /**< forward work repeated in backward */
	double fwd_gemm_s;   /**< the GEMM part of fwd_s */
	double fwd_mem_s;    /**< the memory-bound part of fwd_s */
	double mlp_fwd_s;    /**< the GEMMs of the MLP (or the experts) in fwd_s */
	double attn_fwd_s;   /**< the attention core (flash kernel or the two batched GEMMs) in fwd_s */
	double qkv_fwd_s, proj_fwd_s, fc1_fwd_s, fc2_fwd_s; /**< the linear layers' GEMMs in fwd_s */
	double attn_bwd_s;   /**< the attention core in bwd_s */
	double moe_wgrad_mem_s; /**< MoE: the experts' wgrad GEMMs' time beyond their FLOPs (fp32 gradient traffic), in bwd_s */
	double ew_kernels;   /**< element-wise kernels of the forward (fp8 casts included): host_time.h */
	double norm_dweight_s; /**< compiled element-wise: the norms' separate dweight reductions, in bwd_s */
	double main_grad_s;  /**< plan-cli hopper: the wgrads' accumulation into fp32 main_grad beyond the GEMMs, in bwd_s */
	/* MoE layers' fixed costs inside fwd_s, for their lines of their own (issue 25). */
	double moe_router_gemm_s; /**< the router's GEMM, in fwd_gemm_s (mlp_fwd_s) */
	double moe_permute_s;     /**< the token permutations and their launches, in fwd_mem_s */
	double moe_permute_bwd_s; /**< their backward, in bwd_s: twice moe_permute_s but for the
				       allgather_mask dispatcher, which counts its own */
	/* A Mamba or GDN layer's mixer (plan/mixer.h), 0 elsewhere. */
	double mixer_fwd_s;       /**< the whole mixer's forward, in fwd_s */
	double mixer_in_proj_fwd_s, mixer_out_proj_fwd_s; /**< its linears' GEMMs, in fwd_gemm_s */
	double scan_fwd_s;         /**< its scan kernels (SSD, delta rule), in fwd_gemm_s (as the attention core) */
	double scan_bwd_s;         /**< their backward, in bwd_s */
};

/** Times of the embedding (first stage) and logit layer + loss (last stage). */
struct compute_ends {
	double embed_fwd_s, embed_bwd_s;
	double head_fwd_s, head_bwd_s;
	double head_mem_s;   /**< the loss's element-wise part of head_fwd_s + head_bwd_s */
	double metric_s;     /**< the framework's training metrics over the logits (metric_logit_bytes) */
};

/**
 * One GEMM (or a batch of @batch equal GEMMs in one kernel) of
 * m x k times k x n in 16-bit: the larger of its compute time at the
 * size-dependent efficiency and its memory time (operands and result
 * read/written once), i.e. a roofline.
 */
double compute_gemm_time(const struct cluster *c, double m, double n, double k, double batch);

/**
 * The factor on the size curve's efficiency for @batch GEMMs of
 * m x n x k: the shape factor (gemm_shape_efficiency), the wave factor
 * (cluster_gemm_wave_factor) and the clock under the power limit
 * (gpu_clock_factor).
 */
double compute_gemm_factor(const struct cluster *c, double m, double n, double k, double batch);

/**
 * Cast kernels fp8 linear layers add: bytes moved and kernels launched in
 * the forward and in the backward, under the recipe the caller sets
 * (enum plan_fp8_recipe, resolved; 0 counts as delayed).
 */
struct compute_casts {
	double bytes;
	int kernels;
	double bwd_bytes;
	int bwd_kernels;
	int recipe;
	bool recast;       /**< fp8: the weights cast at each use, every micro-batch (framework fp8_weight_recast) */
	double bwd_gemm_s; /**< fp8: the backward GEMMs' time beyond twice the forward's (split accumulator) */
};

/**
 * A linear layer's GEMM in the plan's precision: compute_gemm_time()
 * for bf16/fp16; for fp8 the GPU's fp8 peak and efficiency, with the
 * quantisation of its input and weight added to @casts.
 */
double compute_linear_time(const struct cluster *c, const struct plan *p, double m, double n, double k,
			   double batch, struct compute_casts *casts);

/** Element-wise (memory-bound) work moving @bytes through device memory. */
double compute_memory_time(const struct cluster *c, double bytes);

/**
 * Per-layer times for plan @p (TP degree, SP, recompute, attention kind);
 * @moe: an MoE layer (router, local experts, shared experts) in place of
 * the dense MLP. A layer of one part (@m's parts, a hybrid model's kind
 * model: model_kind_model) has that part, one norm and one residual add:
 * attention (its GEMMs, core, rotary), MLP (dense or @moe), or the Mamba-2
 * or Gated DeltaNet mixer (mixer_cost). @fw: the framework whose attention
 * kernel runs (NULL: the built-in one).
 */
void compute_layer_time(const struct model *m, const struct plan *p, const struct cluster *c,
			const struct framework *fw, bool moe, struct compute_layer *out);

/**
 * A fused (flash) attention's forward and backward over the local heads of
 * one micro-batch, at the GPU's attention efficiencies (causal masks halve
 * the work).
 */
void compute_flash_attention(const struct model *m, const struct plan *p, const struct cluster *c,
			     double *fwd_s, double *bwd_s);

/**
 * compute_flash_attention with kernel @kernel (a resolved PLAN_ATTN_*
 * value: compute_attention_kernel) and the call's shape against the GPU
 * profile's reference (plan/attn_shape.h): head-dim padding, the
 * exponentials' share, the causal diagonal's whole tiles.
 * compute_flash_attention is this with the kernel @p and no framework
 * name.
 */
void compute_flash_attention_kernel(const struct model *m, const struct plan *p, const struct cluster *c,
				    int kernel, double *fwd_s, double *bwd_s);

/**
 * DeepSeek Sparse Attention's lightning indexers in one micro-batch's
 * layer on one GPU, averaged over the layers (a share
 * model_dsa_indexer_layers / layers of one indexer): its projections,
 * whole on every TP rank, its scores over every causal key at the GPU's
 * attention efficiency and their fp32 round trip through top-k, and with
 * the indexer loss its target and backward (compute.c). 0 without DSA.
 */
void compute_dsa_indexer(const struct model *m, const struct plan *p, const struct cluster *c, double *fwd_s,
			 double *bwd_s);

/**
 * How fast @fw's fused-attention kernel runs on @c's GPU against the one
 * the GPU profile measured: 1 for the profile's own, the profile's
 * fa2_attention_speed where the framework runs FlashAttention-2 (fa2,
 * and sdpa before Blackwell), 0.91 for cuDNN's on Hopper (against FA3).
 */
double compute_attention_kernel_speed(const struct cluster *c, const struct plan *p, const struct framework *fw);

/** The fused-attention kernel @p runs (enum plan_attention_kernel, never FRAMEWORK): its own or @fw's. */
int compute_attention_kernel(const struct plan *p, const struct framework *fw);

/** Whether @c's GPU runs the attention kernel of @p (FlashAttention-3 needs Hopper). */
bool compute_attention_kernel_check(const struct cluster *c, const struct plan *p, const struct framework *fw,
				    struct plan_error *err);

/**
 * Scale every time of @cl by @f: the pace of the slowest GPU of a job
 * (gpu_pace_factor).
 */
void compute_layer_scale(struct compute_layer *cl, double f);

/** Embedding and logit-layer times for one micro-batch on one GPU. */
void compute_ends_time(const struct model *m, const struct plan *p, const struct cluster *c,
		       const struct framework *fw, struct compute_ends *out);

/** Scale every time of @ce by @f (as compute_layer_scale). */
void compute_ends_scale(struct compute_ends *ce, double f);

/**
 * Mixed-precision Adam step over the @params parameters a GPU owns, with
 * gradient clipping, the zeroing of its gradient buffer of
 * @grad_buffer_params elements, and the casts of its fp8 weights for the
 * next iteration, @fp8_cast_bytes moved (fp8_recipe_cost's weight_bytes
 * per fp8 weight; 0 without fp8). estimate.c adds there the bytes of the
 * ZeRO-3 step's own passes too (dp_zero3_step_bytes), bytes alike.
 */
double compute_optimizer_time(const struct cluster *c, double params, double grad_buffer_params,
			      double fp8_cast_bytes);
