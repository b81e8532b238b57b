/*
 * FP8 recipes: how a linear layer quantises its input X (m x k), its
 * weight W (k x n) and its output gradient dY (m x n) for the three GEMMs
 * of forward and backward (Y = X W, dX = dY W^T, dW = X^T dY), and what
 * that costs in kernels, bytes and GEMM speed.
 *
 * Every GEMM needs its operands' scales along its reduction axis, and
 * Hopper's fp8 tensor cores take only the "TN" layout (both operands
 * K-major: cuBLAS "FP8 ... requires A transposed and B non-transposed"),
 * so a tensor used in two GEMMs with different K axes is cast twice, or
 * once to two copies: X for Y (K = k) and for dW (K = m), dY for dX
 * (K = n) and for dW (K = m). Blackwell's tensor cores take either
 * layout (cuBLAS 12.8: fp8 on sm100 in every layout), so a per-tensor
 * scale there needs one copy.
 *
 * - delayed: per-tensor scales from an amax history (Micikevicius et al.
 *   2022, Sec. 4.3; Transformer Engine's DelayedScaling). The scale is
 *   known before the cast, so one kernel reads X (2 bytes) and writes the
 *   fp8 copy and, on Hopper, its transpose (1 + 1), recording the amax
 *   on the way (TE's fused cast_transpose): 4 bytes per element on
 *   Hopper, 3 on Blackwell; dY the same in the backward; the weights once
 *   an iteration (Megatron passes is_first_microbatch, so TE caches the
 *   fp8 weight and its transpose across micro-batches and keeps them:
 *   1 + 1 bytes per weight on Hopper, 1 on Blackwell). Each linear
 *   records the amax of 3 forward tensors (input, weight, output) and 2
 *   backward ones (grad output, grad input) in a history of
 *   amax_history_len fp32 entries, with an fp32 scale and inverse scale
 *   each (TE's FP8 meta: recipe.py, fp8.py). The amaxes are all-reduced
 *   over the amax group once per forward and backward pass and the
 *   scales updated (fp8_recipe_scaling() below).
 * - current: per-tensor scales from the tensor itself (TE's
 *   Float8CurrentScaling; torchao's default "tensorwise" with dynamic
 *   scaling): the amax must be known before the cast, so a reduction
 *   reads the tensor first (2 bytes, one kernel), then the cast as above:
 *   6 bytes and 2 kernels per tensor on Hopper, 5 on Blackwell.
 * - rowwise (torchao's Float8 "rowwise", Float8LinearRecipeName.ROWWISE):
 *   a scale per row of each operand along its GEMM's K, so each tensor
 *   is cast twice with different axes: along its contiguous rows, the
 *   amax fused with the cast (read 2, write 1: 3 bytes, one kernel), and
 *   across them, where the column amax is a separate reduction (read 2)
 *   before the cast (3): 5 bytes, 2 kernels. X is cast by rows in the
 *   forward, by columns in the backward; dY both ways in the backward;
 *   the weight both ways (8 bytes). torchao keeps no fp8 weight between
 *   micro-batches and saves the bf16 input for the backward
 *   (matmul_with_hp_or_float8_args saves input_hp). Its forward GEMM
 *   (fast accumulation) is PyTorch's CUTLASS row-wise kernel, not
 *   cuBLAS: "most shapes are within 90-100 % of tensor-wise efficiency,
 *   but there's a long tail going down to 50 %" on an H100 with fast
 *   accumulation (pytorch/pytorch#147971, 2025): 0.9, the band's lower
 *   end. Its dgrad and wgrad GEMMs accumulate in fp32, where "the
 *   rowwise CUTLASS-based kernel is so slow ... that we'd rather use the
 *   tensorwise cuBLAS-based kernel and do the scaling manually
 *   afterwards" (torchao float8/float8_ops.py, addmm_float8_unwrapped;
 *   pytorch/ao#1325, 2024-11): the per-tensor GEMM's speed (1), then
 *   output *= a_scale^-1 b_scale^-1 on dX (m x k) and dW (k x n), read
 *   and write 2 bytes an element in one kernel each (Inductor's fused
 *   pointwise kernel; eager would also write and read the fp32 product
 *   of the scales).
 * - fp8_weight_recast (a framework's key: torchao's Float8Linear, which
 *   casts the weight inside every forward and backward, float8_linear.py
 *   matmul_with_hp_or_float8_args): each micro-batch casts each linear
 *   weight for the forward GEMM and again for the dgrad GEMM, and
 *   nothing after the optimizer step. Tensor-wise (current): an amax
 *   pass (2) and a cast (3) each time, 2 kernels; rowwise: along the
 *   weight's rows, amax fused (3, 1 kernel), then across them (5, 2);
 *   Transformer Engine's recipes (a workspace recast when
 *   is_first_microbatch is None, module/base.py get_weight_workspace):
 *   their one cast to both copies before the forward.
 * - blockwise (DeepSeek-V3 report, arXiv:2412.19437, Sec. 3.3.2; TE's
 *   Float8BlockScaling; DeepGEMM): activations in 1x128 tiles, weights in
 *   128x128 blocks, an fp32 scale each; the tile runs along K, so X and
 *   dY need a copy tiled along each axis whatever the GPU: one kernel
 *   reads 2 bytes and writes 1 + 1 and a scale per 128 elements per copy
 *   (2 x 4 / 128): 4.0625 bytes; the weight the same once an iteration
 *   (4 + 8 / 16384) and both copies kept. Partial sums are promoted to
 *   fp32 on the CUDA cores every 128 elements of K (N_C = 128, Sec.
 *   3.3.2), overlapped with the next WGMMA by a second warp group:
 *   DeepGEMM reaches 1550 TFLOPS on an H800 (README, 2025), above the
 *   per-tensor curve's plateau, so no slowdown is taken (1).
 * - mxfp8 (OCP Microscaling spec v1.0: 32-element blocks, E8M0 scales;
 *   Blackwell's block-scaled tcgen05.mma at the fp8 rate, NVIDIA
 *   Blackwell tuning guide; TE's MXFP8BlockScaling): the block runs along
 *   K, so two copies as blockwise, with a 1-byte scale per 32 elements
 *   per copy: 2 + 2 + 2 / 32 = 4.0625 bytes; both weight copies kept
 *   (2 + 2 / 32). Blackwell only.
 * - nvfp4 (--precision fp4: Transformer Engine's NVFP4BlockScaling, TE
 *   2.7 and later, docs/features/low_precision_training/nvfp4; Megatron's
 *   --fp4-format e2m1 --fp4-recipe nvfp4; NVIDIA, "Pretraining Large
 *   Language Models with NVFP4", arXiv:2509.25149): E2M1 elements, an E4M3
 *   scale per 16 elements along K and an fp32 scale per tensor; the GEMM
 *   takes only the TN layout, so every operand is written twice, each copy
 *   0.5 byte an element and a scale byte per 16. X and dY take a random
 *   Hadamard transform (16 x 16) before their column-wise (wgrad) copy,
 *   and dY stochastic rounding (recipe/__init__.py, fp4_quant_fwd_inp and
 *   fp4_quant_bwd_grad); the global amax is that of the transformed
 *   tensor, so a first kernel reads the tensor for both amaxes
 *   (quantizer.cpp, NVFP4Quantizer::quantize_impl:
 *   nvte_hadamard_transform_amax, 2 bytes) and a second writes both copies
 *   (nvte_quantize_with_hadamard_transform: 2 + 2 x (0.5 + 1/16)): 5.125
 *   bytes, 2 kernels, for X in the forward and dY in the backward. The
 *   weight's scales are 16 x 16 blocks without the transform
 *   (fp4_quant_fwd_weight), but stored as the GEMM reads them, a byte per
 *   1 x 16 run of each copy, the block's scale repeated on its 16 rows
 *   (TE v2.18 pytorch/csrc/quantizer.cpp l. 1984, 2000 and
 *   NVFP4Quantizer::get_scale_shape l. 2744-2768: [roundup(M, 128),
 *   roundup(K / 16, 4)] whatever with_2d_quantization;
 *   tensor/storage/nvfp4_tensor_storage.py l. 465-466: "each tile's
 *   scale is repeated 16 times (once per row in the 16x16 tile)"): an
 *   amax pass and one cast to both copies, 2 + 2 + 2 x (0.5 + 1/16), once
 *   an iteration, both copies kept, 1.125 bytes (TE makes primary fp4
 *   weights with set_usage(rowwise=True, columnwise=True) under grad,
 *   module/base.py l. 1778; plan-cli nvfp4: 1/256 a copy before). The
 *   norm before a linear runs unfused (normalization.cpp: with the
 *   transform's amax "Amax is handled within NVFP4 quantizer",
 *   Impl::UNFUSED). The backward keeps the column-wise copy of X (0.5 +
 *   1/16). Blackwell only (tcgen05's block-scaled fp4 MMA; "Training: SM
 *   10.0, SM 10.3"), no fast-accumulation mode. Its GEMMs run at
 *   peak_flops_fp4 on the fp8 curve's efficiency times 0.77: on a B200,
 *   vLLM's CUTLASS NVFP4 GEMM ran at 3,904 TFLOP/s (M 16384, N 6144, K
 *   4096, quantisation excluded; vllm-project/vllm#20646, 2025-07) where
 *   its FP8 one ran at 2,545 (the same shape, #19566, 2025-06): 1.53 of
 *   the 2x peak ratio. The other figure found, a consumer Blackwell
 *   (sm_120 RTX 5060 Ti: 342 against 185 TFLOP/s; QuantumDrizzy/BLACKWALL,
 *   2026), gives 0.925; TE's cuBLASLt kernels were not timed by anyone
 *   found, nor here (scripts/measure-gpu.py does not time fp4 yet).
 * TE's recipes save the fp8 copy of a linear's input for its backward
 * (TE Linear saves the quantised input): 1 byte an element instead of 2,
 * with the column-wise scales of the block recipes (the copy the
 * backward's wgrad reads: TE v2.18 (27486e03c) module/linear.py l. 553-572,
 * grouped_linear.py l. 713-725, update_usage(rowwise_usage=False,
 * columnwise_usage=True)): mxfp8 an E8M0 byte a 32-block (1 + 1/32;
 * tensor/mxfp8_tensor.py get_scale_shape, columnwise [M/32, N] uint8,
 * padded to [4, 128] multiples, not counted), blockwise an fp32 scale a
 * 1 x 128 block of activations (1 + 4/128; float8_blockwise_tensor.py
 * get_scale_shape, block_len 128), NVFP4 an E4M3 byte a 16-block.
 * Under sequence parallelism a column-parallel input (QKV's, fc1's) is
 * saved as its local shard and gathered again in the backward; delayed
 * and current scaling then quantise it row-wise only (their quantizers'
 * supports_only_rowwise_all_gather: layernorm_linear.py l. 215-223,
 * linear.py l. 350-356) and keep that (l. 458-469, 565-569), the backward
 * transposing the gathered copy: 1 byte, no transpose saved, on Hopper as
 * on Blackwell (where the column-wise copy is the row-wise data anyway:
 * float8_tensor_storage.py update_usage, is_non_tn_fp8_gemm_supported).
 *
 * Accumulation: Hopper's fp8 tensor cores keep partial sums at reduced
 * precision, so a GEMM either promotes them to fp32 on the CUDA cores
 * every few K steps (cuBLASLt's default, the "split accumulator") or not
 * (CUBLASLT_MATMUL_DESC_FAST_ACCUM, faster: the GPU's
 * fp8_fast_accum_speedup). Transformer Engine runs the forward (fprop)
 * GEMM fast and the dgrad and wgrad GEMMs split (module/base.py
 * _2X_ACC_FPROP False, _2X_ACC_DGRAD and _2X_ACC_WGRAD True, v1.9 and
 * v2.4; v2.4 recipe/__init__.py: Float8CurrentScaling the same), torchao
 * the same (Float8LinearConfig: gemm_config_output use_fast_accum True,
 * grad_input and grad_weight False; pytorch/ao#2377), so delayed,
 * current and rowwise take it in the forward. Float8BlockScaling
 * requires the split accumulator in all three ("Split accumulator
 * required for fprop", TE v2.4; DeepSeek-V3 Sec. 3.3.2 promotes every
 * 128 elements of K); MXFP8 runs on Blackwell, which has no fast mode.
 *
 * A linear layer after a norm (QKV; a dense layer's fc1) is Transformer
 * Engine's LayerNormLinear in Megatron-Core's TE layer spec. Under
 * delayed scaling the norm kernel writes its output in fp8 itself (TE
 * v1.9 layernorm_linear.py: _apply_normalization with fp8 output; v2.4
 * normalization.cpp: "Always used fused kernel for FP8 delayed
 * scaling"), so no cast kernel runs in the forward, and the backward
 * transposes the fp8 copy for the wgrad GEMM (v1.9: tex.fp8_transpose;
 * v2.4: update_usage(columnwise_usage=True)): read 1, write 1 byte, one
 * kernel, on Hopper only. The norm's own output, 1 byte instead of 2, is
 * left to the element-wise count. Current scaling needs the amax first,
 * so TE v2.4 runs the norm unfused (bf16 out, amax, cast: as the other
 * linears); MLA's down-projections and the MoE experts take the norm's
 * output through separate modules. *
 * Sequence-parallel all-gathers (tp_gather_bytes; tensor_par.c prices
 * them): TE casts a column-parallel linear's input to fp8 before its
 * all-gather, and a row-parallel linear's output gradient before its
 * backward all-gather, and gathers the fp8 bytes. v1.8 (NeMo 24.07):
 * layernorm_linear.py forward allocates ln_out as torch.uint8 under fp8,
 * the norm writes fp8 into it and gather_along_first_dim(ln_out) moves
 * that; its backward gathers the saved fp8 ln_out again for wgrad;
 * module/base.py grad_output_preprocess ("FP8 case with gather") casts
 * grad_output to uint8 and then gathers it; userbuffers' all-gather
 * buffers are fp8 (initialize_ub: fp8_buf for every name in
 * layers_all_gather_overlap: qkv/fc1 fprop and dgrad, proj/fc2 dgrad).
 * v2.11 the same through quantizers: layernorm_linear.py gathers
 * ln_out with quantizer=input_quantizer (NCCL or
 * fill_userbuffers_buffer_for_all_gather), grad_output_preprocess with
 * the grad-output quantizer. Delayed and current scaling gather 1 byte
 * an element (distributed.py _all_gather_fp8), MXFP8 its data and E8M0
 * scales (_all_gather_mxfp8: 1 + 1/32), blockwise its 1x128-tile data
 * and fp32 scales (_all_gather_fp8_blockwise, v2.5 on: 1 + 4/128; v2.3
 * and v2.4 gathered it in 16 bits, force_hp_blockwise_ln_out_gather).
 * torchao's tensor-wise recipe gathers fp8 as well: torchtitan
 * parallelises a Float8Linear model with Float8ColwiseParallel,
 * Float8RowwiseParallel and PrepareFloat8ModuleInput when the recipe is
 * tensor-wise (torchao float8/float8_tensor_parallel.py: the input is
 * cast, then redistributed; the output gradient cast by
 * NoopFwToFloat8BwDynamic before the backward's all-gather); its rowwise
 * recipe keeps the plain ColwiseParallel and gathers 16 bits. Every
 * reduce-scatter stays 16-bit: the row-parallel GEMM's output and the
 * input gradient are bf16 (TE's fp8 reduce-scatter buffers need a
 * userbuffers config's fp8_buf, off by default; NeMo-Framework-Launcher
 * 24.07's configs for the GPT-3, Llama 2/3 and Nemotron runs leave it
 * off: only gpt3/mlperf-24n.yaml and the unreferenced
 * ub_cfg_h100_fp8_h8192_tp4_mbs1_seqlen8192.yaml set it, for proj_fprop
 * and fc2_fprop).
 *
 * Current scaling's amax all-reduce (tp_amax_reduce): a gathered tensor
 * has one scale, so each rank's amax must be the group's. TE v2.2 on
 * (Float8CurrentScaling): _customize_quantizers_float8_current_scaling
 * sets with_amax_reduction over the TP group on a column-parallel
 * linear's input quantizer and a row-parallel linear's grad-output
 * quantizer when sequence_parallel, and the quantizer runs
 * amax_reduction_group->allreduce(MAX)->wait() on the one fp32 amax
 * between the amax kernel and the cast (csrc/quantizer.cpp,
 * Float8CurrentScalingQuantizer::quantize): one latency-bound all-reduce
 * per gathered tensor, per micro-batch. torchao's tensor-wise cast of a
 * DTensor reduces its amax the same way (float8_training_tensor.py
 * _ToFloat8ConstrFunc multiplies the tensor by a scale from
 * torch.max(abs(x)), a Partial(max) made Replicate): the gathered
 * inputs and output gradients as TE's, and also the row-parallel
 * inputs, the column-parallel output gradients and the TP-sharded
 * weights (tensor_par.c counts them where the framework casts at each
 * use, fp8_weight_recast).
 * NVFP4 gathers its quantised bytes too (0.5 + 1/16 an element: TE's
 * docs/features/low_precision_training/nvfp4, "Quantized all-gather",
 * "automatically enabled for column-parallel and row-parallel linear
 * layers") and all-reduces the per-tensor amax of a gathered tensor
 * over TP before its cast ("amax reduction is performed before
 * quantization"; quantizer.cpp, NVFP4Quantizer::quantize_impl,
 * reduce_amaxes), as current scaling does.
 */
#include <math.h>
#include <stddef.h>

#include "plan/fp8_recipe.h"

/* Bytes of the transposed copy: Hopper-style GPUs (TN-only fp8 GEMMs) 1, Blackwell 0. */
static double
transpose_bytes(enum gpu_generation gen)
{
	return gen == GPU_GEN_BLACKWELL ? 0.0 : 1.0;
}

/* ... with the weights' 16 x 16 blocks, whose scale tensor keeps the
 * 1 x 16 layout (see above): a scale byte per 16, as the inputs' copies. */
#define NVFP4_WEIGHT_COPY_BYTES FP8_RECIPE_NVFP4_BYTES
/* NVFP4's GEMM efficiency against the fp8 GEMM's at the same duration (see above). */
#define NVFP4_GEMM_SPEED 0.77

const char *
fp8_recipe_name(int recipe)
{
	if (recipe == FP8_RECIPE_NVFP4)
		return "nvfp4";
	return recipe >= 0 && recipe < PLAN_FP8_COUNT ? plan_fp8_recipe_names[recipe] : "?";
}

int
fp8_recipe_resolve(const struct plan *p, const struct framework *fw)
{
	if (p->precision == PLAN_PRECISION_FP4)
		return FP8_RECIPE_NVFP4;
	if (p->fp8_recipe != PLAN_FP8_FRAMEWORK)
		return p->fp8_recipe;
	return fw ? fw->fp8_recipe + 1 : PLAN_FP8_DELAYED;
}

bool
fp8_recipe_recasts(const struct plan *p, const struct framework *fw)
{
	return plan_low_precision(p) && fw && fw->fp8_weight_recast && !p->fp8_gather;
}

/* NVFP4 (see above): an amax pass and one cast to both copies for X and
 * dY, the same for the weights once an iteration, both copies kept. */
static void
nvfp4_cost(struct fp8_recipe_cost *out)
{
	out->fwd_input_bytes = out->bwd_grad_bytes = 2.0 + 2.0 + 2.0 * FP8_RECIPE_NVFP4_BYTES;
	out->fwd_kernels = out->bwd_kernels = 2;
	out->weight_bytes = out->recast_fwd_bytes = 2.0 + 2.0 + 2.0 * NVFP4_WEIGHT_COPY_BYTES;
	out->recast_fwd_kernels = 2;
	out->weight_copy_bytes = 2.0 * NVFP4_WEIGHT_COPY_BYTES;
	out->saved_input_bytes = FP8_RECIPE_NVFP4_BYTES;
	out->gemm_speed = out->bwd_gemm_speed = NVFP4_GEMM_SPEED;
	out->fwd_fast_accum = false;
	out->fp4 = true;
	out->tp_gather_bytes = FP8_RECIPE_NVFP4_BYTES;
	out->tp_amax_reduce = true;
}

void
fp8_recipe_cost(int recipe, enum gpu_generation gen, struct fp8_recipe_cost *out)
{
	double tr = transpose_bytes(gen);

	*out = (struct fp8_recipe_cost){ .gemm_speed = 1.0, .bwd_gemm_speed = 1.0, .saved_input_bytes = 1.0,
					 .fwd_fast_accum = true, .tp_gather_bytes = 1.0 };
	switch (recipe) {
	case PLAN_FP8_CURRENT:
		out->fwd_input_bytes = out->bwd_grad_bytes = out->weight_bytes = 2.0 + 3.0 + tr;
		out->fwd_kernels = out->bwd_kernels = 2;
		out->weight_copy_bytes = 1.0 + tr;
		/* torchao's tensorwise recast: amax and cast for the
		 * forward, again for the dgrad GEMM (weight_hp_t). */
		out->recast_fwd_bytes = out->recast_bwd_bytes = 2.0 + 3.0;
		out->recast_fwd_kernels = out->recast_bwd_kernels = 2;
		out->tp_amax_reduce = true;
		break;
	case PLAN_FP8_ROWWISE:
		out->fwd_input_bytes = 3.0;
		out->fwd_kernels = 1;
		out->bwd_input_bytes = 5.0;
		out->bwd_grad_bytes = 3.0 + 5.0;
		out->bwd_kernels = 2 + 3;
		out->weight_bytes = 3.0 + 5.0;
		out->recast_fwd_bytes = 3.0;
		out->recast_bwd_bytes = 5.0;
		out->recast_fwd_kernels = 1;
		out->recast_bwd_kernels = 2;
		out->gemm_speed = 0.9;
		/* The backward's slow-accumulating GEMMs: cuBLAS's
		 * tensor-wise kernel, then dX and dW rescaled (read and
		 * write, 16 bits), one kernel each. */
		out->bwd_gemm_speed = 1.0;
		out->bwd_rescale_bytes = 4.0;
		out->bwd_kernels += 2;
		out->saved_input_bytes = 2.0;
		out->tp_gather_bytes = 2.0;
		break;
	case PLAN_FP8_BLOCKWISE:
		out->fwd_input_bytes = out->bwd_grad_bytes = 4.0 + 8.0 / 128.0;
		out->fwd_kernels = out->bwd_kernels = 1;
		out->weight_bytes = out->recast_fwd_bytes = 4.0 + 8.0 / (128.0 * 128.0);
		out->recast_fwd_kernels = 1;
		out->weight_copy_bytes = 2.0 + 8.0 / (128.0 * 128.0);
		out->fwd_fast_accum = false;
		out->tp_gather_bytes = out->saved_input_bytes = 1.0 + 4.0 / 128.0;
		break;
	case PLAN_FP8_MXFP8:
		out->fwd_input_bytes = out->bwd_grad_bytes = out->weight_bytes = 4.0 + 2.0 / 32.0;
		out->recast_fwd_bytes = out->weight_bytes;
		out->recast_fwd_kernels = 1;
		out->fwd_kernels = out->bwd_kernels = 1;
		out->weight_copy_bytes = 2.0 + 2.0 / 32.0;
		out->fwd_fast_accum = false;
		out->tp_gather_bytes = out->saved_input_bytes = 1.0 + 1.0 / 32.0;
		break;
	case FP8_RECIPE_NVFP4:
		nvfp4_cost(out);
		break;
	case PLAN_FP8_DELAYED:
	default:
		out->fwd_input_bytes = out->bwd_grad_bytes = out->weight_bytes = 3.0 + tr;
		out->recast_fwd_bytes = out->weight_bytes;
		out->recast_fwd_kernels = 1;
		out->fwd_kernels = out->bwd_kernels = 1;
		out->weight_copy_bytes = 1.0 + tr;
		out->amax_tensors = 5.0;
		out->norm_fused = true;
		out->norm_bwd_bytes = 2.0 * tr;
		out->norm_bwd_kernels = tr > 0.0 ? 1 : 0;
		break;
	}
}

/* The recipes @g runs, for a message: mxfp8 on Blackwell only, rowwise and
 * blockwise on Hopper and Blackwell. */
static const char *
recipes_valid_on(const struct gpu *g)
{
	if (g->generation == GPU_GEN_BLACKWELL)
		return "delayed, current, rowwise, blockwise or mxfp8";
	if (g->generation == GPU_GEN_HOPPER)
		return "delayed, current, rowwise or blockwise";
	return "delayed or current";
}

bool
fp8_recipe_check(int recipe, const struct gpu *g, struct plan_error *err)
{
	const char *gen = gpu_generation_names[g->generation];

	if (recipe == FP8_RECIPE_NVFP4 && (g->generation != GPU_GEN_BLACKWELL || !(g->peak_flops_fp4 > 0)))
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "precision fp4 (NVFP4) needs Blackwell's fp4 tensor cores; '%s' (%s) has %s "
				      "(valid here: bf16, fp16%s)", g->name, gen,
				      g->generation != GPU_GEN_BLACKWELL ? "none" : "peak_flops_fp4 0",
				      g->peak_flops_fp8 > 0 ? ", fp8" : "");
	if (recipe == PLAN_FP8_MXFP8 && g->generation != GPU_GEN_BLACKWELL)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "fp8 recipe mxfp8 needs Blackwell's block-scaled tensor cores; '%s' (%s) is not a "
				      "Blackwell GPU (valid here: %s)", g->name, gen, recipes_valid_on(g));
	if ((recipe == PLAN_FP8_BLOCKWISE || recipe == PLAN_FP8_ROWWISE) && g->generation != GPU_GEN_HOPPER &&
	    g->generation != GPU_GEN_BLACKWELL)
		return plan_error_set(err, PLAN_ERR_PLAN, NULL, 0, 0,
				      "fp8 recipe %s has kernels for Hopper and Blackwell only (%s); '%s' (%s) is "
				      "neither (valid here: %s)", plan_fp8_recipe_names[recipe],
				      recipe == PLAN_FP8_BLOCKWISE ? "DeepGEMM, Transformer Engine's Float8BlockScaling"
								   : "PyTorch's row-wise scaled_mm",
				      g->name, gen, recipes_valid_on(g));
	return true;
}

double
fp8_recipe_tp_gather_bytes(const struct plan *p, const struct framework *fw)
{
	struct fp8_recipe_cost rc;

	if (!plan_low_precision(p))
		return 2.0;
	fp8_recipe_cost(fp8_recipe_resolve(p, fw), GPU_GEN_HOPPER, &rc);
	return rc.tp_gather_bytes;
}

bool
fp8_recipe_tp_amax_reduces(const struct plan *p, const struct framework *fw)
{
	struct fp8_recipe_cost rc;

	if (!plan_low_precision(p) || !p->sequence_parallel || p->tp <= 1)
		return false;
	fp8_recipe_cost(fp8_recipe_resolve(p, fw), GPU_GEN_HOPPER, &rc);
	return rc.tp_amax_reduce;
}

double
fp8_recipe_saved_input_bytes(const struct plan *p, const struct framework *fw)
{
	struct fp8_recipe_cost rc;

	/* torchao's Float8Linear saves input_hp whatever its recipe
	 * (float8_linear.py, matmul_with_hp_or_float8_args.forward). */
	if (fw && fw->fp8_weight_recast)
		return 2.0;
	fp8_recipe_cost(fp8_recipe_resolve(p, fw), GPU_GEN_HOPPER, &rc);
	return rc.saved_input_bytes;
}

double
fp8_recipe_history_bytes(int recipe, double history, double linear_layers)
{
	struct fp8_recipe_cost rc;

	fp8_recipe_cost(recipe, GPU_GEN_HOPPER, &rc);
	/* Per tensor: the fp32 history, the scale and the inverse scale. */
	return linear_layers * rc.amax_tensors * 4.0 * (history + 2.0);
}

double
fp8_recipe_weight_bytes(const struct plan *p, const struct framework *fw, const struct gpu *g)
{
	struct fp8_recipe_cost rc;

	if (fp8_recipe_recasts(p, fw))
		return 0.0;
	fp8_recipe_cost(fp8_recipe_resolve(p, fw), (enum gpu_generation)g->generation, &rc);
	return rc.weight_bytes;
}

/*
 * torchao's --fp8-gather (enable_fsdp_float8_all_gather with
 * precompute_float8_dynamic_scale_for_fsdp, as torchtitan runs it after
 * each optimizer step; torchao float8/fsdp_utils.py):
 * - once an iteration, precompute_float8_dynamic_scale_for_fsdp takes
 *   torch._foreach_norm(weights, ord=inf) of the local shards (read 2
 *   bytes an owned element), stacks the amaxes and all-reduces them once
 *   (a few hundred bytes, not priced) into every weight's scale;
 * - at every all-gather (each micro-batch's forward, and its backward's
 *   where FSDP2 reshards after the forward), fsdp_pre_all_gather casts
 *   the local shard with that scale (hp_tensor_and_scale_to_float8:
 *   tensor.to(float32) * scale, then to_fp8_saturated's clamp and
 *   .to(fp8)). FSDP2 calls it in eager on its all-gather copy-in stream
 *   (torch.compile wraps the blocks inside the FSDP hooks): four kernels,
 *   read 2 write 4, read 4 write 4, read 4 write 4, read 4 write 1: 27
 *   bytes an owned element, before each gather (data_par.c adds it to
 *   the gather's time).
 * The gathered fp8 weight goes into the GEMMs without another cast
 * (float8_linear.py: tensor_already_casted_to_fp8).
 */
#define FP8_GATHER_AMAX_BYTES 2.0
#define FP8_GATHER_CAST_BYTES (2.0 + 4.0 + 4.0 + 4.0 + 4.0 + 4.0 + 4.0 + 1.0)

static bool
fp8_recipe_gathers_cast(const struct plan *p, const struct framework *fw)
{
	return p->precision == PLAN_PRECISION_FP8 && p->fp8_gather && fw && fw->fp8_weight_recast;
}

double
fp8_recipe_step_bytes(const struct plan *p, const struct framework *fw, const struct gpu *g, double params,
		      double owned)
{
	if (fp8_recipe_gathers_cast(p, fw))
		return FP8_GATHER_AMAX_BYTES * owned;
	return params * fp8_recipe_weight_bytes(p, fw, g);
}

double
fp8_recipe_gather_cast_bytes(const struct plan *p, const struct framework *fw)
{
	return fp8_recipe_gathers_cast(p, fw) ? FP8_GATHER_CAST_BYTES : 0.0;
}

/*
 * Megatron-Core's distributed optimizer with --fp8-param-gather (NeMo's
 * fp8_param_gather, which sets fp8_param; framework fp8_params): the
 * param-and-grad buffer groups parameters by dtype and takes a
 * Float8Tensor as torch.uint8 (distributed/param_and_grad_buffer.py,
 * core_r0.8 on: "Currently TE's Float8Tensor is a wrapper of
 * torch.Tensor ... its actual data is stored in the form of a torch uint8
 * tensor"; param._data points into the buffer), so the all-gather after
 * the step moves the fp8 data, 1 byte a weight, and the scales stay
 * local (the optimizer casts the fp32 master into the shard with them).
 * With --fp4-param-gather the buffer holds the packed NVFP4 bytes, two
 * values a byte: 0.5 (frameworks/nemo.yaml cites Megatron-Bridge). The
 * embedding and the output layer are not TE linears and stay in the
 * framework's gather precision (estimate.c counts them apart); the
 * layers' norms, biases and routers, in 16 bits too, are counted with
 * the linears: a 1e-4 share of a layer.
 */
double
fp8_recipe_param_gather_bytes(const struct plan *p, const struct framework *fw)
{
	if (!fw || !fw->fp8_params || !plan_low_precision(p))
		return 0.0;
	return p->precision == PLAN_PRECISION_FP4 ? 0.5 : 1.0;
}

/*
 * fp8fixed: delayed scaling's bookkeeping, as Transformer Engine v1.7 and
 * v1.8 run it (NeMo 24.07's TE; transformer_engine/pytorch/fp8.py,
 * FP8GlobalStateManager.reduce_and_update_fp8_tensors). Every fp8 module
 * adds its amax row to a global buffer (add_fp8_tensors_to_global_buffer,
 * one key for the forward and one for the backward per fp8_autocast
 * region). When the region's forward ends (fp8_autocast_exit) and when
 * the backward of its first module ends (module/linear.py,
 * reduce_and_update_bwd_fp8_tensors), once per micro-batch each:
 * - torch.cat of the modules' amax rows into one buffer: PyTorch's batched
 *   cat copies CAT_ARRAY_BATCH_SIZE = 128 inputs a launch
 *   (aten/src/ATen/native/cuda/Shape.cu, 2.x); 4 bytes an amax read and
 *   written;
 * - one all-reduce (MAX, async_op=False: the compute stream waits for it)
 *   of that buffer over the amax reduction group: Megatron-Core's
 *   TransformerBlock opens fp8_autocast with fp8_group =
 *   get_amax_reduction_group(with_context_parallel=True), the tp x cp x dp
 *   ranks of the stage (transformer_block.py, core_r0.7-r0.8). 3 amaxes a
 *   GEMM forward (input, weight, output), 2 backward (grad output, grad
 *   input);
 * - tex.fused_amax_and_scale_update_after_reduction: one bulk kernel for
 *   up to AMAX_PARAMS_LIMIT modules (common/recipe/delayed_scaling.cu:
 *   32 KB of constant memory over a 32-byte AmaxParam after the 24-byte
 *   OtherParams, 1023 on CUDA 12.1+), which reads each amax history and
 *   writes it rolled (2 x 4 bytes an entry) and reads the scale and
 *   writes the scale and its inverse (12 bytes an amax).
 * Each Megatron-Core linear (linear_qkv, linear_proj, linear_fc1,
 * linear_fc2: TELayerNormColumnParallelLinear, TERowParallelLinear) is
 * one module of one GEMM; a model chunk is one fp8_autocast region.
 */
#define FP8_CAT_BATCH 128.0
#define FP8_AMAX_PARAMS_LIMIT 1023.0

void
fp8_recipe_scaling(int recipe, double modules, double chunks, double history, struct fp8_scaling_cost *out)
{
	struct fp8_recipe_cost rc;
	double per_chunk = chunks > 0.0 ? modules / chunks : modules;

	*out = (struct fp8_scaling_cost){ .kernels = 0.0 };
	fp8_recipe_cost(recipe, GPU_GEN_HOPPER, &rc);
	if (!(rc.amax_tensors > 0.0) || !(modules > 0.0))
		return;
	/* Per region and pass: the cat's and the update's launches. */
	out->kernels = 2.0 * chunks * (ceil(per_chunk / FP8_CAT_BATCH) + ceil(per_chunk / FP8_AMAX_PARAMS_LIMIT));
	/* rc.amax_tensors (5) amaxes a module over both passes. */
	out->bytes = modules * rc.amax_tensors * (8.0 + 8.0 * history + 12.0);
	out->reductions = 2.0 * chunks;
	out->fwd_reduce_bytes = 4.0 * 3.0 * per_chunk;
	out->bwd_reduce_bytes = 4.0 * 2.0 * per_chunk;
}
