/* Context parallelism: the sequence split across cp GPUs. */
#pragma once

#include "plan/cluster.h"
#include "plan/compute.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/framework.h"
#include "plan/topology.h"

/** The CP communication of one layer for one micro-batch, as exposed. */
struct cp_layer_comm {
	double fwd_s, bwd_s, recompute_s;
	double step_s;   /**< ring: one K/V chunk to the next rank; all-to-all: one all-to-all */
	double bytes;    /**< bytes one GPU sends per layer and micro-batch, forward and backward */
};

/**
 * Ring attention (Megatron-Core's context parallelism; Liu et al. 2023,
 * "Ring Attention with Blockwise Transformers"): each rank holds s/cp
 * tokens; in cp - 1 steps it passes its K and V chunk to the next rank
 * while computing attention on the chunk it has, so a step shows only what
 * the transfer exceeds one block's attention; the backward passes K, V and
 * their gradients. All-to-all (DeepSpeed-Ulysses, Jacobs et al. 2023):
 * before the attention an all-to-all turns the sequence split into a head
 * split for Q, K and V, after it one turns O back, and the backward does
 * both for the gradients; not overlapped. @pl is the plan as one CP rank
 * sees it (seq_len already s/cp), @cl its layer's compute. @fw says how
 * its ring passes K and V (cp_ring; NULL: Megatron-Core's p2p ring).
 */
void cp_layer_comm(const struct model *m, const struct plan *pl, const struct cluster *c,
		   const struct framework *fw, const struct plan_layout *lay, const struct compute_layer *cl,
		   struct cp_layer_comm *out);
