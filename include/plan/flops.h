/* FLOP counts of a training iteration (Narayanan et al. SC21 convention). */
#pragma once

#include "plan/framework.h"
#include "plan/model.h"
#include "plan/plan.h"

/**
 * Forward FLOPs per token of the whole model: 2 per matrix parameter in
 * the layers and the logit layer, plus 4*s*h per layer for the attention
 * scores and their product with V (no causal discount, as in SC21 Eq. 3).
 */
double flops_forward_per_token(const struct model *m, int seq_len);

/**
 * Forward FLOPs per token of one layer of @m (an MoE layer with @moe), as
 * flops_forward_per_token counts them; a layer of one part (model parts)
 * that part's: the attention's projections and scores, the MLP's (or the
 * router's and the experts' a token meets) or the Mamba mixer's
 * (mamba_layer_model_flops, Megatron-LM's mamba_layer_flops).
 */
double flops_layer_forward_per_token(const struct model *m, int seq_len, bool moe);

/** Model FLOPs of one iteration: 3 x forward (MFU convention, no recompute). */
double flops_model_per_iteration(const struct model *m, const struct plan *p);

/**
 * Hardware FLOPs: model FLOPs plus the recomputed forward work, selective
 * recomputation as @fw runs it (NULL: the attention core, Korthikanti).
 */
double flops_hardware_per_iteration(const struct model *m, const struct plan *p, const struct framework *fw);

/**
 * Narayanan et al. SC21 Eq. 3, literally:
 * 96 B s L h^2 (1 + s/(6h) + V/(16 L h)), for GPT with full recompute.
 * Used to turn published TFLOP/s into iteration times.
 */
double flops_narayanan_eq3(const struct model *m, double global_batch, double seq_len);
