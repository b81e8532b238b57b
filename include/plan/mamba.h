/* The Mamba-2 mixer of a hybrid model's 'M' layers: its time, activations and FLOPs on one GPU. */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/compute.h"
#include "plan/error.h"
#include "plan/mixer.h"
#include "plan/model.h"
#include "plan/plan.h"

/**
 * FLOPs of the SSD chunked scan (Dao and Gu 2024, arXiv:2405.21060,
 * Sec. 6; mamba_ssm ops/triton/ssd_combined.py) over @tokens tokens on
 * @heads heads and @groups groups of model @m, forward (@backward false)
 * or backward (with the states the backward recomputes).
 */
double mamba_ssd_flops(const struct model *m, double tokens, double heads, double groups, bool backward);

/**
 * What one SSD kernel achieves of the GPU's peak: FlashAttention-2's
 * efficiency on @c (the profile's attention efficiency times its
 * fa2_attention_speed), forward or @backward, times MAMBA_SSD_FA2_RATIO.
 */
double mamba_ssd_efficiency(const struct cluster *c, bool backward);

/**
 * The mixer of a layer of @m under plan @p on @c. @casts (may be NULL):
 * the fp8 casts of the two linears are added there, as for the other
 * linear layers (compute_linear_time); its recipe says which.
 */
void mamba_mixer_cost(const struct model *m, const struct plan *p, const struct cluster *c,
		      struct compute_casts *casts, struct mixer_cost *out);

/** Kernels one mixer launches besides its two GEMMs, forward and
 *  backward: the conv1d, the SSD's, the RMSNorm's and, with more than one
 *  sequence a micro-batch, the layout copies (mamba.c counts them). */
void mamba_mixer_kernels(const struct plan *p, int *fwd, int *bwd);

/**
 * Bytes one mixer keeps for its backward on one GPU (no pre-norm, no
 * in_proj input: those are the layer's, memory.c): in_proj's output
 * zxBCdt and the scan's output (MambaSplitConv1dScanCombinedFn's saved
 * tensors), the RMSNorm's input and rstd, out_proj's input.
 */
double mamba_mixer_activation_bytes(const struct model *m, const struct plan *p);

/**
 * Megatron-LM's mamba_layer_flops (megatron/training/training.py) for
 * @tokens tokens: the forward model FLOPs of one Mamba layer, for MFU.
 */
double mamba_layer_model_flops(const struct model *m, double tokens);

/**
 * Whether plan @p can run the Mamba layers of @m: no context
 * parallelism (not priced), heads and groups divisible by tp
 * (MambaMixer asserts both).
 */
bool mamba_plan_check(const struct model *m, const struct plan *p, struct plan_error *err);
