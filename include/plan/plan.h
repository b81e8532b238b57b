/* A parallelisation plan: how one model is split across GPUs. */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/error.h"
#include "plan/model.h"

enum plan_recompute {
	PLAN_RECOMPUTE_NONE,
	PLAN_RECOMPUTE_SELECTIVE,
	PLAN_RECOMPUTE_FULL,
};

/** Where compression applies (MCBench's hooks; the compressor comes with the estimate options). */
struct plan_compression {
	bool tp;          /**< the two forward TP collectives of a layer */
	bool pp;          /**< stage-boundary activations and gradients */
	bool dp;          /**< data-parallel gradients */
	int from_layer;   /**< TP: compress layers with 1-based index above this; -1: half the layers */
	int from_stage;   /**< PP: stages from this one on compress their sends */
	int dp_scheme;    /**< enum compress_dp_scheme */
	bool dp_on_cpu;   /**< DP compression on the host, pipelined (BytePS-Compress) */
};

/* plan-cli recomp: begin */
/**
 * Megatron-Core's --recompute-modules (megatron/core/transformer/
 * transformer_config.py, recompute_modules, core_r0.13.0 and later): the
 * submodules a layer recomputes with --recompute-granularity selective,
 * as bits of plan.recompute_modules (bit i: plan_recompute_module_names[i]).
 */
enum plan_recompute_module {
	PLAN_RM_CORE_ATTN,      /**< the attention core (normal checkpointing) */
	PLAN_RM_MLA_UP_PROJ,    /**< MLA's up-projections and RoPE (output-discarding) */
	PLAN_RM_MOE_ACT,        /**< the experts' activation function (output-discarding) */
	PLAN_RM_LAYERNORM,      /**< input_layernorm and pre_mlp_layernorm (output-discarding) */
	PLAN_RM_MLP,            /**< the dense MLP (normal checkpointing) */
	PLAN_RM_MOE,            /**< the whole MoE layer (normal checkpointing) */
	PLAN_RM_SHARED_EXPERTS, /**< the MoE layer's shared experts (normal checkpointing) */
	PLAN_RM_COUNT,
};

extern const char *const plan_recompute_module_names[];

/** Full recomputation's methods (Megatron's --recompute-method). */
enum plan_recompute_method {
	PLAN_RECOMPUTE_UNIFORM, /**< groups of N layers, each group's input kept */
	PLAN_RECOMPUTE_BLOCK,   /**< the first N layers of each (virtual) stage, the rest kept */
};

extern const char *const plan_recompute_method_names[];
/* plan-cli recomp: end */

/** Number format of the linear layers' GEMMs. */
enum plan_precision {
	PLAN_PRECISION_BF16,
	PLAN_PRECISION_FP16,
	PLAN_PRECISION_FP8,  /**< Transformer Engine / torchao Float8 linear layers */
	PLAN_PRECISION_FP4,  /**< NVFP4 linear layers (Transformer Engine's NVFP4BlockScaling; Blackwell) */
};


extern const char *const plan_precision_names[];

/**
 * How an fp8 linear layer scales its tensors (enum order = the choices of
 * plan_fp8_recipe_names; src/core/fp8_recipe.c has each one's kernels,
 * bytes and GEMM speed, with their sources). FRAMEWORK: the framework
 * profile's fp8_recipe.
 */
enum plan_fp8_recipe {
	PLAN_FP8_FRAMEWORK,  /**< the framework profile's recipe */
	PLAN_FP8_DELAYED,    /**< per-tensor, delayed scaling (Transformer Engine's DelayedScaling) */
	PLAN_FP8_CURRENT,    /**< per-tensor, current scaling (TE Float8CurrentScaling, torchao tensorwise) */
	PLAN_FP8_ROWWISE,    /**< a scale per row (torchao's Float8 rowwise) */
	PLAN_FP8_BLOCKWISE,  /**< 1x128 activation and 128x128 weight blocks (DeepSeek-V3) */
	PLAN_FP8_MXFP8,      /**< 32-element blocks with E8M0 scales (OCP MX; Blackwell) */
	PLAN_FP8_COUNT,
};

extern const char *const plan_fp8_recipe_names[];

/**
 * The fused-attention kernel a plan runs (enum order = the choices of
 * plan_attention_kernel_names). FRAMEWORK: the framework profile's
 * attention_kernel; the others name one kernel, whose speed on each GPU
 * generation compute_attention_kernel_speed() gives.
 */
enum plan_attention_kernel {
	PLAN_ATTN_FRAMEWORK, /**< the framework profile's attention_kernel */
	PLAN_ATTN_PROFILE,   /**< the kernel the GPU profile measured */
	PLAN_ATTN_FA2,       /**< FlashAttention-2 (Dao 2023) */
	PLAN_ATTN_FA3,       /**< FlashAttention-3 (Shah et al. 2024): Hopper only */
	PLAN_ATTN_CUDNN,     /**< cuDNN's fused flash attention (Transformer Engine's FusedAttention) */
	PLAN_ATTN_SDPA,      /**< PyTorch SDPA's default choice: FA2, cuDNN's on Blackwell */
	PLAN_ATTN_COUNT,
};

extern const char *const plan_attention_kernel_names[];

/** How context parallelism exchanges the sequence's keys and values. */
enum plan_cp_method {
	PLAN_CP_RING,       /**< Megatron-Core's ring attention: K/V pass around the CP ring */
	PLAN_CP_ALLTOALL,   /**< DeepSpeed-Ulysses: all-to-alls that split the heads instead */
	PLAN_CP_ALLGATHER,  /**< Megatron-Core's cp_comm_type "all_gather" (Transformer Engine's
				 AttnFuncWithCPAndKVAllGather; Llama 3, arXiv:2407.21783, Sec. 3.3.2):
				 every rank's K and V all-gathered, dK and dV reduce-scattered */
};

extern const char *const plan_cp_method_names[];

enum plan_moe_routing {
	PLAN_MOE_FLAT,    /**< one all-to-all over the EP group (Switch, GShard) */
	PLAN_MOE_BILEVEL, /**< SMILE: inter-node among equal local ranks, then intra-node */
};

enum plan_moe_overlap {
	PLAN_MOE_OVERLAP_NONE,
	PLAN_MOE_OVERLAP_LANCET, /**< Lancet: with dW in backward, pipelined with non-MoE work in forward */
	PLAN_MOE_OVERLAP_COMBINED_1F1B, /**< Megatron-Core's overlap_moe_expert_parallel_comm: one micro-batch's
					     forward beside another's backward, each all-to-all under the other's compute */
};

extern const char *const plan_moe_routing_names[];
extern const char *const plan_moe_overlap_names[];

/* plan-cli pipeline: begin (uneven layouts and schedules) */
/**
 * How the layers are split over the pp x vpp virtual stages when no list
 * is given (megatron/core/transformer/transformer_block.py,
 * get_num_layers_to_build, Megatron-Core 0.12; torchtitan's
 * generate_split_points, torchtitan/parallelisms/pipeline.py, 2024-12).
 */
enum plan_pp_split {
	PLAN_PP_SPLIT_EVEN,           /**< L / (p v) each; pp_first/last_layers set the end stages */
	PLAN_PP_SPLIT_EMBEDDING,      /**< account_for_embedding_in_pipeline_split: (L + 1) / (p v) */
	PLAN_PP_SPLIT_LOSS,           /**< account_for_loss_in_pipeline_split: (L + 1) / (p v) */
	PLAN_PP_SPLIT_EMBEDDING_LOSS, /**< both: (L + 2) / (p v), the ends one layer less */
	PLAN_PP_SPLIT_TORCHTITAN,     /**< floor(L / (p v)), the remainder on the middle stages */
};

/** Pipeline schedules (interleaved 1F1B is 1f1b with vpp > 1). */
enum plan_pp_schedule {
	PLAN_PP_1F1B,      /**< PipeDream-Flush 1F1B (Narayanan et al. SC21) */
	PLAN_PP_ZB_H1,     /**< Zero Bubble ZB-H1 (Qi et al., ICLR 2024) */
	PLAN_PP_ZB_V,      /**< Zero Bubble ZB-V: two chunks a rank in a V (Qi et al. 2024) */
	PLAN_PP_DUALPIPE,  /**< DualPipe (DeepSeek-V3 report, arXiv:2412.19437, Sec. 3.2.1) */
	PLAN_PP_DUALPIPEV, /**< DualPipeV: DualPipe cut in half, a V of two chunks a rank */
};

extern const char *const plan_pp_split_names[];
extern const char *const plan_pp_schedule_names[];
/* plan-cli pipeline: end */

/** Most pipeline stages a plan may list one by one. */
#define PLAN_MAX_STAGES 256

/**
 * One plan. Ranks are laid out Megatron-style: TP innermost (consecutive
 * ranks), then DP, then PP (plan_layout in topology.h derives the groups).
 */
struct plan {
	int tp;
	int pp;
	int dp;
	int cp;              /**< context parallelism: the sequence split cp ways (1: none) */
	int cp_method;       /**< enum plan_cp_method */
	int vpp;             /**< interleaved model chunks per GPU (1: plain 1F1B) */
	int micro_batch;     /**< sequences per micro-batch */
	int global_batch;    /**< sequences per iteration */
	int seq_len;         /**< tokens per sequence */
	int recompute;       /**< enum plan_recompute */
	/* plan-cli recomp: begin */
	/** Selective stages recompute these submodules (bits of enum
	 *  plan_recompute_module); 0: the framework profile's selective
	 *  recomputation (selective_recompute: Korthikanti's attention core
	 *  or torchtitan's per-op policy). */
	int recompute_modules;
	int recompute_method;     /**< enum plan_recompute_method: full stages */
	/** Full stages: uniform groups of N layers, or block: the first N
	 *  layers of each virtual stage (0: uniform 1, every layer). */
	int recompute_num_layers;
	/* plan-cli recomp: end */
	/** Activation offloading (Megatron-Core's --cpu-offloading-num-layers,
	 *  Transformer Engine's get_cpu_offload_context): the first N layers'
	 *  activations go to host memory in the forward and come back for the
	 *  backward; 0: none. pp 1 and no recomputation only. */
	int activation_offload_layers;
	bool sequence_parallel;
	bool flash_attention;/**< fused attention: no s^2 tensors in memory */
	int zero;            /**< ZeRO stage 0..3 over the DP group */
	/** Overlap the DP gradient reduction with the backward: -1 as the
	 *  framework profile's grad_reduce_overlap says, 0 never (nor ZeRO-3's
	 *  prefetch), 1 always (Megatron's --overlap-grad-reduce on a
	 *  framework whose default is off); see dp_grad_reduce_overlapped(). */
	int dp_overlap;
	int precision;       /**< enum plan_precision: the linear layers' GEMMs */
	bool tp_overlap;     /**< SP collectives overlapped with the GEMMs they feed (needs SP) */
	bool fp8_gather;     /**< ZeRO-3/FSDP gathers the fp8 linear weights in 1 byte (needs fp8, ZeRO-3) */
	int fp8_recipe;      /**< enum plan_fp8_recipe: how fp8 scales (with precision fp8) */
	/** Megatron-Core's --first-last-layers-bf16 with
	 *  --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16: the
	 *  model's first and last N transformer layers (global indices) run
	 *  in bf16 under precision fp8 or fp4 (0: none). */
	int bf16_first_layers;
	int bf16_last_layers;
	int attention_kernel;/**< enum plan_attention_kernel: the fused-attention kernel */
	struct plan_compression compress;
	/* plan-cli pipeline: begin */
	int pp_split;        /**< enum plan_pp_split: the layout without a list */
	int pp_first_layers; /**< Megatron's --decoder-first-pipeline-num-layers (0: even) */
	int pp_last_layers;  /**< Megatron's --decoder-last-pipeline-num-layers (0: even) */
	int pp_schedule;     /**< enum plan_pp_schedule */
	/* plan-cli pipeline: end */
	int ep;              /**< expert parallelism, over the tp x cp x dp ranks (MoE parallel folding) */
	int etp;             /**< expert tensor parallelism (0: tp, Megatron-Core's default) */
	int moe_routing;     /**< enum plan_moe_routing */
	int moe_overlap;     /**< enum plan_moe_overlap */
	int mics_group;      /**< MiCS partition group size (0: off); ZeRO-3 is mics_group = dp */
	bool mics_hierarchical; /**< MiCS 2-hop all-gather when a group spans nodes */
	/* An uneven pipeline (Megatron's first/last-stage layer counts), or
	 * recomputation per stage: set by optimize or --stage-layers and
	 * --stage-recompute. Zero/unset means L/p layers and `recompute`. */
	bool custom_layers;
	bool custom_recompute;
	short stage_layers[PLAN_MAX_STAGES]; /**< per virtual stage (pp x vpp of them), in model order */
	int stage_layers_count;      /**< entries given (plan_complete checks it is pp x vpp) */
	int stage_recompute_count;
	signed char stage_recompute[PLAN_MAX_STAGES];
	/* Slapo's activation-checkpoint ratio as a plan decision (Chen et
	 * al., ASPLOS 2024): the first stage_recompute_layers[s] layers of
	 * stage s recompute in full, its other layers follow the stage's
	 * mode, where full then means none. Set by --recompute-layers or by
	 * optimize; unset: every layer follows the stage's mode. */
	bool custom_recompute_layers;
	int stage_recompute_layers_count; /**< entries given (the CLI checks it is pp) */
	short stage_recompute_layers[PLAN_MAX_STAGES];
};

/** plan-cli recomp: whether an MoE layer of a stage in mode @p->recompute
 *  runs its all-to-alls and router again (full, or selective with the moe
 *  module). */
bool plan_recomputes_moe_layer(const struct plan *p);

/**
 * Whether @p's linear layers run quantised, fp8 or fp4, with a recipe's
 * casts, scales and kept copies (fp8_recipe.c).
 */
bool plan_low_precision(const struct plan *p);

/** Whether some of an fp8 or fp4 plan's layers run in bf16
 *  (bf16_first_layers, bf16_last_layers). */
bool plan_has_bf16_layers(const struct plan *p);

/** The plan those layers run as: @p in bf16, without an fp8 recipe or
 *  fp8 gathers, every layer in bf16. */
struct plan plan_bf16_layers_plan(const struct plan *p);

/** plan-cli recomp: the share of a layer's forward TP collectives that a
 *  stage in mode @p->recompute runs again: 1 full; selective with mlp or
 *  moe, the MLP's half of them on those layers (its all-gather and
 *  reduce-scatter, or its all-reduce); else 0. */
double plan_tp_recompute_share(const struct plan *p, const struct model *m);

/** plan-cli recomp: whether full stages recompute only a block of layers
 *  (--recompute-method block with --recompute-num-layers N > 0). */
bool plan_recompute_block(const struct plan *p);

/** plan-cli recomp: layers of stage @s that the block method recomputes:
 *  min(N, the chunk's layers) for each of its vpp chunks. */
int plan_block_layers(const struct plan *p, const struct model *m, int s);

/** plan-cli recomp: layers per checkpointed group of a full stage: N of
 *  --recompute-method uniform --recompute-num-layers N, else 1. */
int plan_uniform_group(const struct plan *p);

/** Recompute names, indexed by enum plan_recompute, NULL-terminated. */
extern const char *const plan_recompute_names[];

/** A plan with every option at its default and the degrees unset (0). */
void plan_init(struct plan *p);

/**
 * Check that @p can run @m on @c: divisibility of heads, kv_heads, MLP,
 * layers and batch, GPU count, node alignment of TP, interleaving. The message names the numbers.
 */
bool plan_validate(const struct plan *p, const struct model *m,
		   const struct cluster *c, struct plan_error *err);

/** plan-cli pipeline: the layer layout alone (plan_validate's rules for
 *  --stage-layers, --pp-split and --pp-first/last-layers). */
bool plan_validate_layout(const struct plan *p, const struct model *m, struct plan_error *err);

/**
 * The plan as one context-parallel rank sees it: seq_len / cp tokens per
 * sequence (the attention core still meets all seq_len keys: compute
 * multiplies its FLOPs by cp).
 */
struct plan plan_cp_local(const struct plan *p);

/** plan_cp_local() in place: @p becomes the CP rank's view of itself
 *  (one copy of the plan fewer on the hot path: bench-predict). */
void plan_make_cp_local(struct plan *p);

/**
 * The error for a figure (@what, "iteration_time_s") of plan @p that
 * came out infinite or NaN: PLAN_ERR_PLAN, naming the plan. Returns false.
 */
bool plan_error_nonfinite(const struct plan *p, const char *what, struct plan_error *err);

/**
 * The expert tensor-parallel degree: etp, or tp where it is unset (0), as
 * Megatron-Core's expert_tensor_parallel_size defaults to the TP size
 * (megatron/core/parallel_state.py, initialize_model_parallel, core_r0.12).
 */
int plan_etp(const struct plan *p);

/**
 * Expert data parallelism: the ranks that hold the same experts, tp x cp
 * x dp / (ep x etp) (MoE parallel folding, Liu et al. arXiv:2504.14960,
 * Sec. 3; parallel_state.py's expert_data_parallel_size). They reduce the
 * experts' gradients and the distributed optimizer shards the experts'
 * states over them. For a plan plan_validate accepted.
 */
int plan_edp(const struct plan *p);

/** GPUs the plan uses (tp * cp * pp * dp), for a plan plan_validate accepted. */
int plan_gpus(const struct plan *p);

/** Most GPUs a plan may use: products of degrees are checked against it. */
#define PLAN_MAX_GPUS 2147483647LL

/**
 * tp * cp * pp * dp multiplied with checks: -1 when a degree is below 1
 * or the product passes PLAN_MAX_GPUS (each degree is in its range, their
 * product need not be: 65536 x 65536 x 256 x 2^24 wraps a 64-bit integer).
 */
long long plan_degrees_product(const struct plan *p);

/** Micro-batches per pipeline per iteration: global / (dp * micro). */
int plan_microbatches(const struct plan *p);

/** Layers held by pipeline stage @s (all its chunks). */
int plan_stage_layers(const struct plan *p, const struct model *m, int s);

/** 1-based index of the first layer of stage @s (vpp = 1 layouts). */
int plan_stage_first_layer(const struct plan *p, const struct model *m, int s);

/** Recomputation of stage @s (enum plan_recompute) as the plan gives it. */
int plan_stage_recompute(const struct plan *p, int s);

/**
 * The mode of stage @s's layers past those that recompute in full
 * (plan_stage_recompute_layers): plan_stage_recompute(), where with
 * custom_recompute_layers full counts as none; full when every layer of
 * the stage recomputes in full.
 */
int plan_stage_mode(const struct plan *p, const struct model *m, int s);

/**
 * Layers of stage @s that recompute in full: all of a full stage's, the
 * first stage_recompute_layers[s] (at most the stage's layers) with
 * custom_recompute_layers, else none.
 */
int plan_stage_recompute_layers(const struct plan *p, const struct model *m, int s);

/**
 * @p as the cost model prices it: every stage whose layers all recompute
 * in full becomes a full stage, one with none a stage of its mode, so
 * that custom_recompute_layers remains only where a stage recomputes some
 * of its layers (0 < N < its layers); uniform modes become plain
 * `recompute` again. Plans without --recompute-layers come back as they are.
 */
struct plan plan_resolve_recompute(const struct plan *p, const struct model *m);

/** Whether plan_resolve_recompute() may change @p: false where it gives
 *  back a copy of @p (so a caller need not make one: bench-predict). */
bool plan_recompute_resolvable(const struct plan *p);

/**
 * The TP compression threshold of @p on @m: layers whose 1-based index is
 * above it are compressed. @p->compress.from_layer when given, else
 * L/2 rounded down, so that the upper half of the layers is compressed
 * (Bian et al., "Does compressing activations help model parallel
 * training?", MLSys 2024 (MCBench): compressing the early layers hurts
 * accuracy).
 */
int plan_compress_from_layer(const struct plan *p, const struct model *m);

/**
 * What a compressor compresses, written as predict's --compress: "tp",
 * "pp", "dp" or several of them joined by ',' or '+' ("tp,pp", "tp+dp").
 * Sets @pc's tp, pp and dp flags; false (flags untouched) when @text is
 * empty or names anything else.
 */
bool plan_compress_parse(const char *text, struct plan_compression *pc);
