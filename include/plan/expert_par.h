/* Expert parallelism: the all-to-all of MoE layers, flat or bi-level (SMILE). */
#pragma once

#include "plan/cluster.h"
#include "plan/compute.h"
#include "plan/framework.h"
#include "plan/model.h"
#include "plan/plan.h"
#include "plan/topology.h"

/** EP communication of one MoE layer for one micro-batch on one GPU. */
struct ep_layer_comm {
	double bytes;        /**< what one rank sends in one all-to-all */
	double a2a_s;        /**< one all-to-all (dispatch or combine) */
	double inter_s;      /**< bi-level: its inter-node part */
	double intra_s;      /**< bi-level: its intra-node part */
	double fwd_s;        /**< dispatch + combine in forward, exposed */
	double bwd_s;        /**< the same in backward, exposed */
	double recompute_s;  /**< repeated by full recomputation, exposed */
	double total_s;      /**< all of it before overlap */
	double etp_s;        /**< etp > 1: the routed tokens' all-gather and reduce-scatter, one pass */
	/** Bytes one rank sends over the links in the layer's EP collectives
	 *  (the dispatcher's all-to-alls or all-gathers and reduce-scatters,
	 *  expert TP's pair), forward and backward; recomputation repeats
	 *  the forward's. A ring collective over n ranks carrying B bytes
	 *  sends (n - 1) / n B from each. */
	double fwd_bytes, bwd_bytes;
};

/**
 * Bytes of the flex dispatcher's communication buffers on one GPU whose
 * pipeline stage holds an MoE layer (@fw's moe_dispatcher deepep or
 * hybridep; 0 otherwise, or when the tp x ep group is one rank): buffers
 * allocated once at the first dispatch and kept for the run, sized for
 * the tp x ep group (expert TP x EP, the dispatcher's group) and, for
 * HybridEP, for the worst case of every token of the group routed to one
 * rank. Expert_par.c cites the code each term comes from.
 */
double ep_dispatcher_buffer_bytes(const struct model *m, const struct plan *p, const struct cluster *c,
				  const struct framework *fw);

/** The router's kernels after its GEMM, forward and backward (counted in
 * expert_par.c from Megatron-Core's router.py and moe_utils.py); the host
 * launches them too (host_time.c). */
#define EP_ROUTER_FWD_KERNELS 20.0
#define EP_ROUTER_BWD_KERNELS 8.0

/**
 * Fixed costs of one MoE layer for one micro-batch on one GPU that do
 * not scale with the experts' FLOPs (ep_layer_fixed).
 */
struct ep_layer_fixed {
	double router_fwd_s; /**< score function, top-k, routing map and auxiliary loss, forward */
	double router_bwd_s; /**< their backward */
	double sync_s;       /**< dropless: the host synchronisation's stall and the split sizes' all-gather */
	double fwd_s;        /**< forward: router_fwd_s + sync_s */
	double bwd_s;        /**< backward: router_bwd_s */
	double recompute_s;  /**< repeated by full recomputation: fwd_s */
};

/**
 * The router's element-wise work after its GEMM and, for a dropless
 * model, the dispatcher's device-to-host synchronisation (Megatron-Core
 * router.py / moe_utils.py / token_dispatcher.py); compute.c counts the
 * router GEMM and the permutations, ep_layer_comm the all-to-alls.
 * With @fw's moe_dispatcher allgather_mask (Megatron-Core core_v0.5-v0.6,
 * dropless by construction) four synchronisations a layer's forward
 * (one without the gathering path), whatever the model's dropless says.
 * @fw: the framework, NULL for the built-in one (alltoall).
 */
void ep_layer_fixed(const struct model *m, const struct plan *p, const struct cluster *c,
		    const struct framework *fw, const struct plan_layout *lay, struct ep_layer_fixed *out);

/**
 * Whether Megatron-Core core_v0.5-v0.6's MoEAllGatherTokenDispatcher
 * (framework moe_dispatcher allgather_mask) takes its gathering path:
 * sequence parallelism with TP, EP, or top-k above 1 (the masked_select
 * and torch.gather path without a collective); else it hands the tokens
 * to the experts as they are.
 */
bool ep_allgather_gathers(const struct model *m, const struct plan *p);

/**
 * Whether an MoE layer's MLP has no tensor-parallel collectives of its
 * own because @fw's dispatcher runs them, with sequence parallelism and
 * TP on a model with no shared expert and no parallel block:
 * moe_dispatcher allgather_mask, whose all-gather and reduce-scatter over
 * TP x EP (ep_layer_comm) are the layer's sequence-parallel gather and
 * reduction, or alltoall with moe_tp_in_dispatcher, whose gather and
 * reduce-scatter over expert TP (ep_layer_comm's etp) are. @fw NULL: the
 * built-in framework (alltoall, moe_tp_in_dispatcher true).
 */
bool ep_dispatcher_carries_tp(const struct model *m, const struct plan *p, const struct framework *fw);

/**
 * Each MoE layer runs a dispatch and a combine all-to-all in forward and
 * again in backward (GShard, Lepikhin et al. 2020; Switch, Fedus et al.
 * 2021), each rank sending cf * k * tokens * h 16-bit values (split by t
 * with sequence parallelism). Flat: one all-to-all over the EP group.
 * Bi-level (SMILE, He et al. 2022): an all-to-all among the GPUs of equal
 * local rank across the nodes, then one inside the node over NVLink:
 * fewer, larger messages on the slow links. With Lancet (Jiang et al.
 * MLSys 2024) the backward all-to-all hides behind the weight-gradient
 * GEMMs and the forward one is pipelined in chunks with the non-MoE work.
 * With @fw's moe_dispatcher allgather_mask (Megatron-Core core_v0.5-v0.6)
 * no all-to-all: the tokens' all-gather and the output's reduce-scatter
 * over TP x EP instead (expert_par.c, ep_allgather_comm).
 * @fw: the framework, NULL for the built-in one (alltoall).
 * @layer: the MoE layer's compute times (for the overlap).
 */
void ep_layer_comm(const struct model *m, const struct plan *p, const struct cluster *c,
		   const struct framework *fw, const struct plan_layout *lay, const struct compute_layer *layer,
		   struct ep_layer_comm *out);
