/* Memory per GPU: model states (ZeRO) and activations (Korthikanti et al.). */
#pragma once

#include "plan/cluster.h"
#include "plan/framework.h"
#include "plan/model.h"
#include "plan/plan.h"

/** Bytes on one GPU at its peak. */
struct memory_use {
	double weights;
	double gradients;
	double optimizer;
	double activations;
	double other;        /**< reserved memory and ZeRO-3 gather buffers */
	double compression;  /**< error-feedback buffers of the compressor */
	double userbuffers;  /**< Transformer Engine's TP-overlap buffers (memory_userbuffers_bytes) */
	double total;
};

/**
 * plan-cli ubuf: the bytes of Transformer Engine's Userbuffers on each
 * GPU of a plan whose TP communication overlaps its GEMMs (tp > 1,
 * sequence parallelism, --tp-overlap): @fw's userbuffers_allgather and
 * userbuffers_reduce_scatter buffers of seq_len x micro_batch x hidden
 * elements (@p CP-local: seq_len already over cp), once a process, those
 * of the userbuffers_reduce_scatter_ring_exchange reduce-scatters
 * (2 tp - 1) / tp of that. 0
 * without TP overlap or without such a framework.
 */
double memory_userbuffers_bytes(const struct model *m, const struct plan *p, const struct framework *fw);

/**
 * Activation bytes of one layer for one micro-batch, stored for the
 * backward. Korthikanti et al. 2022 Table 2, generalised to GQA and other
 * MLP widths: 10*s*b*h replicated across TP (norm inputs, the inputs of
 * attention and MLP, two dropout masks; split by t with sequence
 * parallelism), plus per TP rank the Q/K/V, the projection input, the MLP
 * intermediate tensors and, for standard attention, 5*a*s^2*b of scores.
 * With recomputation: selective drops the scores, full keeps only the
 * 2*s*b*h layer input; selective as @fw runs it (NULL: Korthikanti's).
 * An MoE layer under @fw's moe_dispatcher allgather_mask also keeps what
 * that dispatcher's torch.gather, masked_select and product save.
 */
double memory_layer_activations(const struct model *m, const struct plan *p, const struct framework *fw);

/* plan-cli recomp: begin */
/**
 * Bytes of one layer's activations (one micro-batch, one GPU, averaged
 * over dense and MoE layers as memory_layer_activations is) that
 * Megatron-Core's selective recomputation of submodule @module (enum
 * plan_recompute_module) does not keep: core_attn the s^2 scores of an
 * unfused attention (a fused one keeps nothing more: its Q, K, V are the
 * checkpoint's inputs and its output the projection's), layernorm the
 * outputs of the norms memory_recompute_norms() counts, mlp a dense MLP's intermediates, moe an MoE layer's
 * routed copies and expert intermediates, moe_act the experts' activation
 * outputs, shared_experts their intermediates, mla_up_proj MLA's
 * decompressed Q, K and V. 0 for a module the model lacks.
 */
double memory_recompute_module_bytes(const struct model *m, const struct plan *p, const struct framework *fw,
				     int module);

/**
 * The norms --recompute-modules layernorm reruns in a layer of a model
 * without parts under @fw (may be NULL), @moe_share of the layers being
 * MoE layers (1 or 0 for one layer, the model's share for an average):
 * Megatron-Core's TE spec (a profile with selective_recompute core_attn)
 * recomputes only the norms that are modules of their own, MLA's
 * input_layernorm and an MoE layer's pre_mlp_layernorm; other
 * frameworks two.
 */
double memory_recompute_norms(const struct model *m, const struct framework *fw, double moe_share);

/**
 * Whether --recompute-modules mlp's checkpoint holds fc1's fused norm
 * (Megatron-Core's TE spec, or a hybrid model's MLP layer): its output is
 * dropped and the norm rerun with the MLP.
 */
bool memory_recompute_mlp_holds_norm(const struct model *m, const struct framework *fw);
/* plan-cli recomp: end */

/**
 * What the activations of pipeline stage @stage of @p (its mode in
 * p->recompute) change by when its first @n layers recompute in full
 * instead (Slapo's checkpoint ratio, Chen et al. ASPLOS 2024): for each
 * micro-batch in flight, n layers keep only their input; plus one layer
 * re-materialised in the backward. Negative when it saves; 0 for n = 0.
 */
double memory_partial_recompute_bytes(const struct model *m, const struct plan *p, const struct framework *fw,
				      int stage, int n);

/**
 * The embedding and output-layer parameters (the model's ends) that
 * pipeline stage @stage holds, whole (before the TP split), MTP's copy of
 * an untied embedding included: estimate.c's stage_params places them so.
 */
double memory_stage_ends_params(const struct model *m, const struct plan *p, int stage);

/** plan-cli bf16ends: the parameters on @stage's GPU of its layers that
 *  run in bf16 in an fp8 or fp4 plan (bf16_first_layers,
 *  bf16_last_layers): the dense part over tp, returned, and the routed
 *  experts' over ep x etp in @expert; 0 without such layers. */
double memory_stage_bf16_params(const struct model *m, const struct plan *p, int stage, double *expert);

/**
 * Peak memory of the GPU of pipeline stage @stage (0 .. pp-1) holding
 * @params parameters, of which @expert_params are expert weights (sharded
 * by ZeRO over the dp/ep ranks that hold the same experts; the others over
 * the DP group, or the MiCS partition group).
 */
void memory_stage(const struct model *m, const struct plan *p,
		  const struct cluster *c, const struct framework *fw, int stage, double params,
		  double expert_params, struct memory_use *out);

/**
 * What memory_stage() finds the same on every stage of a plan in one
 * recompute mode (p->recompute): a caller that prices many stages works
 * it out once a mode (bench-predict), with the same results.
 */
struct memory_mode {
	int recompute;            /**< the mode it was worked out in */
	int recipe;               /**< fp8_recipe_resolve() */
	double weight_copy_bytes; /**< the recipe's fp8 weight copies (fp8_recipe_cost()) */
	double layer_activations; /**< memory_layer_activations() (a hybrid model: its mean layer's) */
	/** plan-cli hybrid: a hybrid model's layer of each kind
	 *  (model_kind_model): what it keeps in this mode, and what it
	 *  re-materialises at once under full recomputation (0: no such layer). */
	double kind_activations[MODEL_KIND_COUNT];
	double kind_full[MODEL_KIND_COUNT];
};

/**
 * ZeRO-3's gathered 16-bit weights (and, where PyTorch's FSDP holds them
 * beside, unsharded gradients) on rank @stage beyond the shards: two
 * layers', one tensor's where the framework gathers tensor by tensor; a
 * hybrid model's largest run of layers gathered together, kind by kind.
 * 0 below ZeRO-3.
 */
double memory_zero3_transient(const struct model *m, const struct plan *p, const struct framework *fw, int stage);

/**
 * Bytes Transformer Engine's all-gather context parallelism (plan
 * cp_method all-gather) holds through one layer's attention backward: the
 * gathered K and V and the full-sequence dK and dV, 16-bit, on the CP and
 * TP rank of @p (seq_len the rank's s / cp). 0 for other CP methods, cp 1
 * or a DSA model (whose gathered K and V are saved activations).
 */
double memory_cp_allgather_transient(const struct model *m, const struct plan *p);

/** @out for @p in its mode p->recompute. */
void memory_mode_init(const struct model *m, const struct plan *p, const struct cluster *c,
		      const struct framework *fw, struct memory_mode *out);

/** memory_stage() with @k, which memory_mode_init() worked out for @p. */
void memory_stage_in_mode(const struct model *m, const struct plan *p, const struct cluster *c,
			  const struct framework *fw, const struct memory_mode *k, int stage, double params,
			  double expert_params, struct memory_use *out);
