/*
 * A training framework's behaviour, apart from the hardware: how sharded
 * data parallelism gathers and reduces (ZeRO-3, FSDP), which overlaps it
 * achieves, and its fixed costs. Bundled profiles live in frameworks/
 * (megatron-lm, deepspeed, pytorch-fsdp, ...); docs/research/
 * framework-data.md holds the documented behaviour they are read from.
 */
#pragma once

#include <stdbool.h>

/** What one sharded-DP all-gather moves. */
enum framework_gather {
	FRAMEWORK_GATHER_LAYER,  /**< one flat group per transformer block (FSDP, coalesced ZeRO-3) */
	FRAMEWORK_GATHER_TENSOR, /**< each parameter tensor on its own (DeepSpeed ZeRO-3, early 2021) */
};

/** When the backward issues the next block's all-gather. */
enum framework_prefetch {
	FRAMEWORK_PREFETCH_PRE,  /**< before this block's backward (FSDP BACKWARD_PRE, FSDP2, DeepSpeed) */
	FRAMEWORK_PREFETCH_POST, /**< after it (FSDP1 BACKWARD_POST): the gather is exposed */
	FRAMEWORK_PREFETCH_NONE, /**< on demand, forward and backward: every gather is exposed */
};

/** Which fused-attention kernel it runs. */
enum framework_attention {
	FRAMEWORK_ATTN_PROFILE, /**< the GPU profile's own (best) kernel: Megatron-Core with Transformer Engine */
	FRAMEWORK_ATTN_FA2,     /**< FlashAttention-2 on every GPU (flash-attn, PyTorch SDPA's default) */
	FRAMEWORK_ATTN_SDPA,    /**< PyTorch SDPA as torchtitan sets it: FA2, cuDNN's on Blackwell */
};

/** How its element-wise operators run. */
enum framework_elementwise {
	FRAMEWORK_EW_FUSED, /**< one kernel an operator (Transformer Engine, Megatron's fusions, Composer's) */
	FRAMEWORK_EW_EAGER, /**< eager PyTorch modules, RMSNorm and rotary decomposed (torchtitan, Hugging Face) */
};

/** What --recompute selective recomputes. */
enum framework_sac {
	FRAMEWORK_SAC_ATTENTION, /**< the attention core (Korthikanti et al. 2022: Megatron, DeepSpeed) */
	FRAMEWORK_SAC_OP,        /**< torchtitan's per-op policy: every second matmul and the element-wise ops */
};

extern const char *const framework_gather_names[];
extern const char *const framework_sac_names[];
extern const char *const framework_elementwise_names[];
extern const char *const framework_attention_names[];
extern const char *const framework_prefetch_names[];

struct framework {
	char name[64];
	char description[256];
	int gather_unit;          /**< enum framework_gather */
	int prefetch;             /**< enum framework_prefetch */
	bool backward_regather;   /**< parameters freed after forward are gathered again for backward */
	bool recompute_regather;  /**< a recomputed forward gathers them once more */
	bool grad_reduce_overlap; /**< ZeRO 0-2: the gradient reduction overlaps the last backward */
	double gather_bytes;      /**< bytes per parameter element all-gathered (bf16: 2) */
	double reduce_bytes;      /**< bytes per gradient element reduced (fp32 reduce-scatter: 4) */
	double overlap_slowdown;  /**< compute runs this much slower while a collective overlaps it */
	double gather_overhead_s; /**< fixed cost of each sharded-DP gather (hooks, host syncs) */
	double gather_rank_overhead_s; /**< host cost of each gather per rank of its group (per-rank loops) */
	double gather_copy_passes; /**< HBM passes over each gathered tensor by copies around the gather */
	double reduce_copy_passes; /**< HBM passes over each reduce-scattered gradient by copies around it */
	double persistence_threshold; /**< per-tensor gathers: tensors of fewer elements stay whole */
	double layer_overhead_s;  /**< fixed cost per layer per micro-batch (hooks, launch gaps) */
	double microbatch_overhead_s; /**< fixed cost per micro-batch (schedule step, loss, syncs) */
	double iteration_overhead_s; /**< fixed cost per iteration (data loading, logging, step launch) */
	int attention_kernel;     /**< enum framework_attention */
	int elementwise;          /**< enum framework_elementwise */
	int selective_recompute;  /**< enum framework_sac */
	double attention_speed;   /**< its fused-attention kernel's throughput, as a fraction of the
				       attention_kernel's; 1: that kernel */
	int pipeline_split;       /**< plan-cli pipeline: enum plan_pp_split where the even split fails */
};

/**
 * The built-in framework, used when none is given: Megatron-LM's
 * behaviour (no per-layer costs, bf16 gathers and reductions, FSDP-like
 * ZeRO-3 with one-block prefetch, no compute slowdown).
 */
void framework_init_default(struct framework *fw);
