/*
 * What an fp8 recipe costs a linear layer: its cast kernels and their
 * bytes, the speed of its GEMM against the per-tensor fp8 GEMM, and the
 * bytes it keeps (src/core/fp8_recipe.c cites each figure).
 */
#pragma once

#include <stdbool.h>

#include "plan/error.h"
#include "plan/framework.h"
#include "plan/gpu.h"
#include "plan/plan.h"

/**
 * The fp4 precision's recipe, NVFP4 (Transformer Engine's
 * NVFP4BlockScaling): not an fp8 choice (plan_fp8_recipe_names ends before
 * it), what fp8_recipe_resolve() gives for --precision fp4.
 */
#define FP8_RECIPE_NVFP4 PLAN_FP8_COUNT

/** Bytes per element of one NVFP4 copy: the E2M1 value and an E4M3 scale per 16 elements. */
#define FP8_RECIPE_NVFP4_BYTES (0.5 + 1.0 / 16.0)

/** @recipe's name: plan_fp8_recipe_names', or "nvfp4". */
const char *fp8_recipe_name(int recipe);

/** One recipe's costs on one GPU generation; bytes are per element of the tensor named. */
struct fp8_recipe_cost {
	double fwd_input_bytes;  /**< forward casts of the layer's input X (m x k) */
	int fwd_kernels;         /**< their kernels */
	double bwd_input_bytes;  /**< backward casts of X again (a scale along the other axis) */
	double bwd_grad_bytes;   /**< backward casts of the output gradient dY (m x n) */
	int bwd_kernels;         /**< the backward's cast kernels */
	double weight_bytes;     /**< casts of a weight element, once per iteration */
	double recast_fwd_bytes; /**< ... where the framework casts at each use (fp8_weight_recast): each forward */
	double recast_bwd_bytes; /**< ... and each backward */
	int recast_fwd_kernels;  /**< ... in this many kernels each forward */
	int recast_bwd_kernels;  /**< ... and each backward */
	double gemm_speed;       /**< the GEMM's throughput against the per-tensor fp8 GEMM (fp4: at peak_flops_fp4) */
	bool fp4;                /**< the GEMMs run on the fp4 tensor cores (peak_flops_fp4) */
	double bwd_gemm_speed;   /**< ... the dgrad and wgrad GEMMs' (split accumulator) */
	double bwd_rescale_bytes;/**< bytes per element of dX and dW rescaled after their GEMMs */
	double weight_copy_bytes;/**< bytes kept per weight element beside the 16-bit weight */
	double saved_input_bytes;/**< bytes per element of a linear input saved for the backward */
	double amax_tensors;     /**< fp8 tensors per linear layer with an amax history (delayed) */
	bool fwd_fast_accum;     /**< the forward GEMM accumulates without fp32 promotion (the backward's promote) */
	bool norm_fused;         /**< a linear after a norm takes its input from the norm in fp8 (TE LayerNormLinear) */
	double norm_bwd_bytes;   /**< ... and transposes that fp8 copy in the backward: bytes per element */
	int norm_bwd_kernels;    /**< ... in this many kernels */
	double tp_gather_bytes;  /**< bytes per element of a sequence-parallel all-gather of a quantised tensor */
	bool tp_amax_reduce;     /**< the amax of a tensor gathered over TP is all-reduced over TP before its cast */
};

/** The recipe @p runs: its fp8_recipe, or @fw's (NULL: the built-in one's, delayed). */
int fp8_recipe_resolve(const struct plan *p, const struct framework *fw);

/**
 * Whether @p's linears cast their weights at each use, every micro-batch
 * (framework fp8_weight_recast: torchao's Float8Linear), rather than
 * once an iteration into a kept copy; not with --fp8-gather, whose casts
 * before the all-gathers stay counted once an iteration.
 */
bool fp8_recipe_recasts(const struct plan *p, const struct framework *fw);

/** @recipe's costs on @gen into @out (a resolved recipe, never PLAN_FP8_FRAMEWORK: delayed then). */
void fp8_recipe_cost(int recipe, enum gpu_generation gen, struct fp8_recipe_cost *out);

/** Whether @g runs @recipe; false with the reason in @err (MXFP8 needs Blackwell, ...). */
bool fp8_recipe_check(int recipe, const struct gpu *g, struct plan_error *err);

/**
 * Bytes per element of a linear layer's input that @p's recipe saves for
 * the backward: the fp8 copy (1) under Transformer Engine's recipes, the
 * 16-bit input (2) under torchao's (rowwise, or @fw's fp8_weight_recast).
 */
double fp8_recipe_saved_input_bytes(const struct plan *p, const struct framework *fw);

/**
 * Bytes delayed scaling keeps for the amax histories and scales of
 * @linear_layers linear layers (@history entries per tensor); 0 for the
 * other recipes, which keep no history.
 */
double fp8_recipe_history_bytes(int recipe, double history, double linear_layers);

/**
 * Bytes the per-iteration casts of one fp8 weight move under @p's recipe
 * on @g: 0 where @fw casts the weights at each use instead
 * (fp8_weight_recast; compute_linear_time() counts those casts).
 */
double fp8_recipe_weight_bytes(const struct plan *p, const struct framework *fw, const struct gpu *g);

/**
 * Bytes per element of a sequence-parallel all-gather of a linear's
 * input (forward, and again in the backward) or of a row-parallel
 * linear's output gradient (backward) under @p: 2 in 16 bits, the
 * recipe's quantised bytes under fp8 (fp8_recipe.c).
 */
double fp8_recipe_tp_gather_bytes(const struct plan *p, const struct framework *fw);

/**
 * Whether @p casts each sequence-parallel gathered tensor with a scale
 * from its amax all-reduced over the TP group first (current scaling
 * with tp > 1 and sequence parallelism; fp8_recipe.c).
 */
bool fp8_recipe_tp_amax_reduces(const struct plan *p, const struct framework *fw);

/**
 * Bytes the per-iteration weight casts of @p move on one GPU of @g
 * holding @params parameters, @owned of them its shard: @params times
 * fp8_recipe_weight_bytes(), or, where @fw casts at each use
 * (fp8_weight_recast: torchao) and @p gathers fp8 (--fp8-gather), the
 * amax pass over the shard alone (precompute_float8_dynamic_scale_for_fsdp).
 */
double fp8_recipe_step_bytes(const struct plan *p, const struct framework *fw, const struct gpu *g, double params,
			     double owned);

/**
 * Bytes per sharded weight element of the cast before each fp8
 * all-gather (torchao's fsdp_pre_all_gather under --fp8-gather, in
 * eager); 0 where @p does not gather fp8 or @fw keeps no such cast.
 */
double fp8_recipe_gather_cast_bytes(const struct plan *p, const struct framework *fw);

/**
 * Bytes a parameter moves in a ZeRO-1/2 parameter all-gather when the
 * framework keeps its linear weights only as their low-precision copies
 * (framework fp8_params: Megatron-Core's --fp8-param-gather and
 * --fp4-param-gather): 1 with --precision fp8, 0.5 with fp4; 0 when plan
 * @p or framework @fw does not (the weights gather in gather_bytes).
 */
double fp8_recipe_param_gather_bytes(const struct plan *p, const struct framework *fw);

/** What delayed scaling's amax reductions and scale updates cost one micro-batch (fp8_recipe.c). */
struct fp8_scaling_cost {
	double kernels;          /**< kernel launches, forward and backward */
	double bytes;            /**< their device-memory traffic */
	double reductions;       /**< all-reduces (MAX) over the amax reduction group */
	double fwd_reduce_bytes; /**< the buffer of each forward all-reduce */
	double bwd_reduce_bytes; /**< ... and of each backward one */
};

/**
 * The per-micro-batch bookkeeping of @recipe for @modules fp8 linear
 * modules in @chunks fp8_autocast regions (a stage's model chunks),
 * histories of @history entries, into @out: all zero for the recipes
 * without an amax history.
 */
void fp8_recipe_scaling(int recipe, double modules, double chunks, double history, struct fp8_scaling_cost *out);
