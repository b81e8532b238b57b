/* The Gated DeltaNet mixer of a hybrid model's 'G' layers: its time, activations and FLOPs on one GPU. */
#pragma once

#include <stdbool.h>

#include "plan/cluster.h"
#include "plan/compute.h"
#include "plan/error.h"
#include "plan/mixer.h"
#include "plan/model.h"
#include "plan/plan.h"

/** The chunk of FLA's chunk_gated_delta_rule (GatedDeltaNet.chunk_size, 64). */
#define GDN_CHUNK 64

/**
 * FLOPs of the chunked gated delta rule (Yang, Kautz and Hatamizadeh
 * 2025, arXiv:2412.06464, Sec. 3.3; FLA ops/gated_delta_rule/chunk.py)
 * over @tokens tokens on @heads value heads of model @m, forward
 * (@backward false) or backward (with the w, u and states it recomputes).
 */
double gdn_rule_flops(const struct model *m, double tokens, double heads, bool backward);

/** The mixer of a 'G' layer of @m under plan @p on @c; @casts as
 *  mamba_mixer_cost's. */
void gdn_mixer_cost(const struct model *m, const struct plan *p, const struct cluster *c,
		    struct compute_casts *casts, struct mixer_cost *out);

/** Kernels one mixer launches besides its two GEMMs, forward and backward. */
void gdn_mixer_kernels(const struct model *m, const struct plan *p, int *fwd, int *bwd);

/** Bytes one mixer keeps for its backward on one GPU (no pre-norm, no
 *  in_proj input: those are the layer's, memory.c). */
double gdn_mixer_activation_bytes(const struct model *m, const struct plan *p);

/** Megatron-LM's gdn_layer_flops (megatron/training/training.py) for
 *  @tokens tokens: the forward model FLOPs of one GDN layer, for MFU. */
double gdn_layer_model_flops(const struct model *m, double tokens);

/** Whether plan @p can run the GDN layers of @m: no context parallelism
 *  (not priced), key and value heads divisible by tp (TransformerConfig
 *  asserts both). */
bool gdn_plan_check(const struct model *m, const struct plan *p, struct plan_error *err);
